//! Writing a JSON Lines bag.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rbag_storage::{Connection, StorageWriter};

use crate::line::{ConnectionLine, Header, Line, MessageLine};
use crate::{JsonlError, Payload, MAX_LINE, VERSION};

/// A JSON Lines bag being written. Lines go out through a buffer; [`StorageWriter::finish`]
/// flushes and syncs the file. Created through `rbag_storage::create_named(.., "jsonl", ..)`
/// the file is staged under a temporary name and renamed into place at finish.
pub struct JsonlWriter {
    path: PathBuf,
    out: BufWriter<File>,
    payload: Payload,
    connections: u32,
    /// Reused for each encoded payload.
    scratch: String,
    poisoned: Option<String>,
}

impl JsonlWriter {
    /// Creates `path`, which must not exist, and writes the header line.
    pub fn create(path: &Path, payload: Payload) -> Result<Self, JsonlError> {
        let io = |source| JsonlError::Io { path: path.into(), source };
        let file = File::options().write(true).create_new(true).open(path).map_err(io)?;
        let mut w = JsonlWriter {
            path: path.into(),
            out: BufWriter::with_capacity(1 << 20, file),
            payload,
            connections: 0,
            scratch: String::new(),
            poisoned: None,
        };
        let header = Header { rbag_jsonl: VERSION, payload: payload.name().into() };
        serde_json::to_writer(&mut w.out, &header).map_err(|e| io(e.into()))?;
        w.out.write_all(b"\n").map_err(io)?;
        Ok(w)
    }

    fn check(&self) -> rbag_storage::Result<()> {
        match &self.poisoned {
            Some(e) => Err(rbag_storage::Error::Poisoned(e.clone())),
            None => Ok(()),
        }
    }

    /// Runs `f`, poisoning the writer if it fails.
    fn guarded(&mut self, f: impl FnOnce(&mut Self) -> Result<(), JsonlError>) -> rbag_storage::Result<()> {
        self.check()?;
        f(self).map_err(|e| {
            self.poisoned = Some(e.to_string());
            e.into()
        })
    }

    fn line(&mut self, line: &Line) -> Result<(), JsonlError> {
        let io = |source| JsonlError::Io { path: self.path.clone(), source };
        serde_json::to_writer(&mut self.out, line).map_err(|e| io(e.into()))?;
        self.out.write_all(b"\n").map_err(io)
    }
}

impl StorageWriter for JsonlWriter {
    fn add_connection(&mut self, conn: &Connection) -> rbag_storage::Result<u32> {
        let id = self.connections + 1;
        let line = Line::Connection(ConnectionLine {
            id,
            topic: conn.topic.clone(),
            message_type: conn.message_type.clone(),
            encoding: conn.encoding.clone(),
            definition: conn.definition.clone(),
            definition_encoding: conn.definition_encoding.clone(),
            metadata: conn.metadata.clone(),
        });
        let text_len = serde_json::to_string(&line).map_or(usize::MAX, |t| t.len());
        if text_len >= MAX_LINE {
            return Err(rbag_storage::Error::Invalid(format!(
                "{}: connection {} ({}) does not fit in one line ({MAX_LINE} bytes at most)",
                self.path.display(),
                id,
                conn.topic
            )));
        }
        self.guarded(|w| w.line(&line))?;
        self.connections = id;
        Ok(id)
    }

    fn write(&mut self, conn: u32, log_time: u64, publish_time: u64, data: &[u8]) -> rbag_storage::Result<()> {
        self.check()?;
        if conn == 0 || conn > self.connections {
            return Err(rbag_storage::Error::UnknownConnection { id: conn });
        }
        // The line holds the encoded payload and at most ~120 bytes of keys and numbers.
        let encoded = match self.payload {
            Payload::Base64 => data.len().div_ceil(3) * 4,
            Payload::Hex => data.len() * 2,
        };
        if encoded.saturating_add(128) > MAX_LINE {
            return Err(JsonlError::MessageTooLarge {
                path: self.path.clone(),
                connection: conn,
                len: data.len(),
                limit: MAX_LINE,
            }
            .into());
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        self.payload.encode(data, &mut scratch);
        let result = self.guarded(|w| {
            w.line(&Line::Message(MessageLine {
                connection: conn,
                log_time,
                publish_time,
                data: Cow::Borrowed(&scratch),
            }))
        });
        self.scratch = scratch;
        result
    }

    fn checkpoint(&mut self) -> rbag_storage::Result<()> {
        self.guarded(|w| w.out.flush().map_err(|source| JsonlError::Io { path: w.path.clone(), source }))
    }

    fn finish(mut self: Box<Self>) -> rbag_storage::Result<()> {
        self.guarded(|w| {
            let io = |source| JsonlError::Io { path: w.path.clone(), source };
            w.out.flush().map_err(io)?;
            w.out.get_ref().sync_all().map_err(io)
        })
    }
}
