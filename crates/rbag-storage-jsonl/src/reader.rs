//! Reading a JSON Lines bag: one pass at open builds the connections and a small index (time,
//! offset and length of each message line); messages are then read line by line through it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rbag_storage::{
    Connection, ConnectionStats, Error, Filter, Message, MessageIter, Place, ReadOptions, StorageInfo, StorageReader,
};

use crate::line::{Header, Line};
use crate::{JsonlError, Payload, MAGIC, MAX_LINE, NAME, VERSION};

/// Where one message line is.
#[derive(Debug, Clone, Copy)]
struct Entry {
    log_time: u64,
    offset: u64,
    /// Bytes of the line, without its newline.
    len: u32,
    /// 1-based line number, for errors.
    line: u64,
    connection: u32,
    /// The bag never declares its connection.
    undeclared: bool,
}

/// A JSON Lines bag opened for reading.
pub struct JsonlReader {
    path: PathBuf,
    file: File,
    payload: Payload,
    connections: Vec<Connection>,
    /// Message lines in log-time order (ties in file order).
    index: Vec<Entry>,
    stats: BTreeMap<u32, ConnectionStats>,
    undeclared: BTreeMap<u32, u64>,
    size: u64,
    lenient: bool,
    lost: Vec<String>,
}

impl JsonlReader {
    /// Opens `path` with the default [`ReadOptions`].
    pub fn open(path: &Path) -> Result<Self, Error> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Opens `path`, reading every line once to check it and index the messages.
    pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Self, Error> {
        let io = |source| Error::from(JsonlError::Io { path: path.into(), source });
        let file = File::open(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let bad = |line: u64, reason: String| Error::from(JsonlError::BadLine { path: path.into(), line, reason });
        let mut input = BufReader::with_capacity(1 << 20, file.try_clone().map_err(io)?);
        let mut buf = Vec::new();
        let mut offset = 0u64;
        let mut line_no = 0u64;
        let mut payload = None;
        let mut connections: Vec<Connection> = Vec::new();
        let mut index = Vec::new();
        let mut stats: BTreeMap<u32, ConnectionStats> = BTreeMap::new();
        let mut undeclared: BTreeMap<u32, u64> = BTreeMap::new();
        let mut lost = Vec::new();
        loop {
            buf.clear();
            let n = (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let terminated = buf.last() == Some(&b'\n');
            if !terminated && n > MAX_LINE {
                return Err(JsonlError::LineTooLong { path: path.into(), line: line_no, limit: MAX_LINE }.into());
            }
            let text = if terminated { &buf[..n - 1] } else { &buf[..] };
            let start = offset;
            offset += n as u64;
            let Some(payload) = payload else {
                if !text.starts_with(MAGIC) {
                    return Err(bad(line_no, "the file does not start with the rbag_jsonl header".into()));
                }
                let header: Header =
                    serde_json::from_slice(text).map_err(|e| bad(line_no, format!("bad header: {e}")))?;
                if header.rbag_jsonl != VERSION {
                    return Err(bad(
                        line_no,
                        format!("format version {} (this build reads {VERSION})", header.rbag_jsonl),
                    ));
                }
                payload = Some(header.payload.parse::<Payload>().map_err(|e| bad(line_no, e))?);
                continue;
            };
            let line: Line = match serde_json::from_slice(text) {
                Ok(l) => l,
                // A writer killed mid-line leaves an unterminated last line: what it held is lost.
                Err(_) if !terminated => {
                    lost.push(format!(
                        "{}: line {line_no}: the last {n} bytes hold no complete line (torn tail)",
                        path.display()
                    ));
                    break;
                }
                Err(e) => return Err(bad(line_no, e.to_string())),
            };
            match line {
                Line::Connection(c) => {
                    if connections.iter().any(|k| k.id == c.id) {
                        return Err(bad(line_no, format!("connection {} is declared twice", c.id)));
                    }
                    if undeclared.contains_key(&c.id) {
                        return Err(bad(line_no, format!("connection {} is declared after messages on it", c.id)));
                    }
                    stats
                        .insert(c.id, ConnectionStats { message_count: 0, data_bytes: Some(0), estimated_bytes: None });
                    connections.push(Connection {
                        id: c.id,
                        topic: c.topic,
                        message_type: c.message_type,
                        encoding: c.encoding,
                        definition: c.definition,
                        definition_encoding: c.definition_encoding,
                        metadata: c.metadata,
                    });
                }
                Line::Message(m) => {
                    let declared = stats.contains_key(&m.connection);
                    let bytes = payload.decoded_len(&m.data);
                    if declared {
                        let s = stats.entry(m.connection).or_default();
                        s.message_count += 1;
                        s.data_bytes = s.data_bytes.map(|b| b + bytes);
                    } else {
                        *undeclared.entry(m.connection).or_default() += 1;
                    }
                    index.push(Entry {
                        log_time: m.log_time,
                        offset: start,
                        len: text.len() as u32,
                        line: line_no,
                        connection: m.connection,
                        undeclared: !declared,
                    });
                }
            }
        }
        let Some(payload) = payload else {
            return Err(bad(1, "empty file: no rbag_jsonl header".into()));
        };
        connections.sort_by_key(|c| c.id);
        if options.lenient {
            for (&id, &n) in &undeclared {
                let encoding = connections.first().map_or("", |c| c.encoding.as_str()).to_string();
                connections.push(Connection::undeclared(id, &encoding));
                stats.insert(id, ConnectionStats { message_count: n, ..Default::default() });
            }
            connections.sort_by_key(|c| c.id);
        }
        index.sort_by_key(|e| (e.log_time, e.offset));
        Ok(JsonlReader {
            path: path.into(),
            file,
            payload,
            connections,
            index,
            stats,
            undeclared,
            size,
            lenient: options.lenient,
            lost,
        })
    }

    /// The message of one index entry, read and checked again.
    fn read(&self, e: &Entry) -> Result<Message, Error> {
        let bad = |reason: String| Error::from(JsonlError::BadLine { path: self.path.clone(), line: e.line, reason });
        let mut buf = vec![0u8; e.len as usize];
        self.file
            .read_exact_at(&mut buf, e.offset)
            .map_err(|source| Error::from(JsonlError::Io { path: self.path.clone(), source }))?;
        let Ok(Line::Message(m)) = serde_json::from_slice::<Line>(&buf) else {
            return Err(bad("no longer the message line it was at open (the file changed)".into()));
        };
        if m.connection != e.connection || m.log_time != e.log_time {
            return Err(bad("no longer the message line it was at open (the file changed)".into()));
        }
        let data = self.payload.decode(&m.data).map_err(bad)?;
        Ok(Message { connection: m.connection, log_time: m.log_time, publish_time: m.publish_time, data: data.into() })
    }

    fn accepts(&self, e: &Entry, filter: &Filter) -> bool {
        if !filter.accepts_time(e.log_time) {
            return false;
        }
        if e.undeclared {
            return filter.accepts_undeclared(e.connection);
        }
        self.connection(e.connection).is_some_and(|c| filter.accepts_topic(&c.topic))
    }
}

impl StorageReader for JsonlReader {
    fn connections(&self) -> &[Connection] {
        &self.connections
    }

    fn info(&self) -> rbag_storage::Result<StorageInfo> {
        let mut info = StorageInfo {
            format: NAME,
            version: VERSION.to_string(),
            files: vec![self.path.clone()],
            size_bytes: self.size,
            indexed: true,
            message_count: self.index.len() as u64,
            start_ns: self.index.first().map(|e| e.log_time),
            end_ns: self.index.last().map(|e| e.log_time),
            connections: self.stats.clone(),
            undeclared: self.undeclared.clone(),
            ..StorageInfo::default()
        };
        info.properties.insert("payload".into(), self.payload.name().into());
        Ok(info)
    }

    fn messages<'a>(&'a self, filter: &Filter) -> rbag_storage::Result<MessageIter<'a>> {
        let filter = filter.clone();
        let lenient = self.lenient;
        Ok(Box::new(self.index.iter().filter(move |e| self.accepts(e, &filter)).map(move |e| {
            if e.undeclared && !lenient {
                return Err(Error::UndeclaredConnection {
                    at: Place::Offset(e.offset),
                    kind: "connection",
                    id: e.connection,
                }
                .in_file(&self.path));
            }
            self.read(e)
        })))
    }

    fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .undeclared
            .iter()
            .filter(|_| self.lenient)
            .map(|(id, n)| format!("{n} message(s) on connection {id}, which the bag never declares"))
            .collect();
        out.extend(self.lost.iter().cloned());
        out
    }

    fn lost(&self) -> Vec<String> {
        self.lost.clone()
    }
}
