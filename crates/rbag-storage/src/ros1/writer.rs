//! Writing ROS 1 bags: chunked, indexed, append-only, with the bag header patched at close.
//!
//! Chunks are compressed on worker threads when more than one is asked for
//! ([`WriteOptions::threads`]) and written in the order they were closed, so the file does not
//! depend on the thread count. With direct I/O each closed chunk is padded to a block boundary
//! through a `_` field in its header (rosbag_direct_write pads its last message record's header
//! instead), so that it reaches the disk whole without seeking back.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::chunk::{self, ChunkMeta, Entry};
use super::compression;
use super::record::{self, op};
use crate::direct::Sink;
use crate::pool::{self, Ordered};
use crate::{Compression, Connection, Error, Result, StorageWriter, WriteOptions};

/// The smallest header field (`len | "_="`): padding shorter than this takes another block.
const MIN_PAD: u64 = 6;

/// Writes a ROS 1 bag v2.0 to any seekable sink. Offsets are 64-bit throughout.
///
/// A chunk is flushed when its uncompressed data reaches `chunk_size`, or when the log times
/// it holds would span more than `chunk_interval_ns`. After the first I/O error every call
/// fails ("poisoned"); [`Ros1Writer::finish`] must be called to write the index.
pub struct Ros1Writer<W: Write + Seek = Sink> {
    out: W,
    name: PathBuf,
    pos: u64,
    options: WriteOptions,
    poisoned: Option<String>,
    conns: BTreeMap<u32, Conn>,
    chunk: Vec<u8>,
    entries: Vec<Entry>,
    chunk_start: u64,
    chunk_end: u64,
    chunks: Vec<ChunkMeta>,
    finished: bool,
    /// Compression workers, when chunks are compressed and more than one thread is asked for.
    pool: Option<Ordered<Result<Packed>>>,
    /// Closed chunks are padded to end at a multiple of this (direct I/O); 1 otherwise.
    align: u64,
    /// Ends the file once the header is patched (direct I/O writes its last block and trims).
    closer: Option<fn(&mut W) -> std::io::Result<()>>,
    /// Chunk buffers back from the workers, for reuse.
    spare: Vec<Vec<u8>>,
}

/// A chunk compressed on a worker, waiting for its turn to be written.
struct Packed {
    size: u64,
    packed: Vec<u8>,
    entries: Vec<Entry>,
    /// The uncompressed buffer, handed back for the next chunks: a fresh one per chunk costs a
    /// page fault per 4 KiB.
    data: Vec<u8>,
}

struct Conn {
    info: Connection,
    /// Whether its connection record is already in a chunk.
    written: bool,
}

impl Ros1Writer {
    /// Creates `path`, which must not exist, and writes the bag header; with direct I/O as
    /// `options.direct_io` asks.
    pub fn create(path: &Path, options: WriteOptions) -> Result<Self> {
        let sink = Sink::create_new(path, options.direct_io)?;
        let align = sink.align();
        let mut w = Ros1Writer::new(sink, path, options)?;
        w.align = align;
        w.closer = Some(Sink::close);
        Ok(w)
    }
}

impl<W: Write + Seek> Ros1Writer<W> {
    /// Starts a bag on `out`; `name` is used in error messages.
    pub fn new(out: W, name: &Path, options: WriteOptions) -> Result<Self> {
        if options.compression == Compression::Zstd {
            return Err(Error::Invalid("ROS 1 bags have no zstd chunk compression (use lz4 or bz2)".into()));
        }
        let threads = pool::resolve(options.threads);
        let pool = match options.compression {
            Compression::None => None,
            _ if threads < 2 => None,
            _ => Some(Ordered::new("rbag-ros1-compress", threads, 2 * threads).map_err(|e| Error::io(name, e))?),
        };
        let mut w = Ros1Writer {
            out,
            name: name.into(),
            pos: 0,
            options,
            poisoned: None,
            conns: BTreeMap::new(),
            chunk: Vec::new(),
            entries: Vec::new(),
            chunk_start: u64::MAX,
            chunk_end: 0,
            chunks: Vec::new(),
            finished: false,
            pool,
            align: 1,
            closer: None,
            spare: Vec::new(),
        };
        let mut head = record::MAGIC.to_vec();
        head.extend_from_slice(&bag_header(0, 0, 0));
        w.emit(&head)?;
        w.flush_out()?;
        Ok(w)
    }

    /// Registers a connection under a given id (reindex keeps the ids the chunks refer to).
    pub fn add_connection_with_id(&mut self, conn: &Connection) -> Result<()> {
        if self.conns.contains_key(&conn.id) {
            return Err(Error::Invalid(format!("connection id {} is used twice", conn.id)));
        }
        self.conns.insert(conn.id, Conn { info: conn.clone(), written: false });
        Ok(())
    }

    fn check(&self) -> Result<()> {
        match &self.poisoned {
            Some(e) => Err(Error::Poisoned(e.clone())),
            None => Ok(()),
        }
    }

    /// Writes bytes at the end, poisoning the writer on failure.
    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.check()?;
        if let Err(e) = self.out.write_all(bytes) {
            self.poisoned = Some(format!("{}: {e}", self.name.display()));
            return Err(Error::io(&self.name, e));
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }

    fn write_message(&mut self, conn: u32, time: u64, data: &[u8]) -> Result<()> {
        self.check()?;
        let time_bytes = record::time_to_bytes(time)?;
        let c = self.conns.get_mut(&conn).ok_or(Error::UnknownConnection { id: conn })?;
        if data.len() as u64 > u32::MAX as u64 {
            return Err(Error::Invalid(format!(
                "message on {} has {} bytes, over the 4 GiB record limit",
                c.info.topic,
                data.len()
            )));
        }
        if let Some(interval) = self.options.chunk_interval_ns {
            let (start, end) = (self.chunk_start.min(time), self.chunk_end.max(time));
            if !self.entries.is_empty() && end - start > interval {
                self.flush_chunk()?;
            }
        }
        let c = self.conns.get_mut(&conn).ok_or(Error::UnknownConnection { id: conn })?;
        if !c.written {
            chunk::write_connection(&mut self.chunk, &c.info);
            c.written = true;
        }
        let offset = u32::try_from(self.chunk.len())
            .map_err(|_| Error::Invalid("chunk data passed 4 GiB; lower the chunk size".into()))?;
        record::write_record(
            &mut self.chunk,
            &[("op", &[op::MSG_DATA]), ("conn", &conn.to_le_bytes()), ("time", &time_bytes)],
            data,
        );
        self.entries.push(Entry { time, offset, conn });
        self.chunk_start = self.chunk_start.min(time);
        self.chunk_end = self.chunk_end.max(time);
        if self.chunk.len() as u64 >= self.options.chunk_size {
            self.flush_chunk()?;
        }
        Ok(())
    }

    /// Compresses and writes the open chunk and its index records; with workers, hands it to
    /// them and writes whichever earlier chunks are done.
    fn flush_chunk(&mut self) -> Result<()> {
        if self.entries.is_empty() && self.chunk.is_empty() {
            return Ok(());
        }
        self.check()?;
        self.chunk_start = u64::MAX;
        self.chunk_end = 0;
        let compression = self.options.compression;
        let entries = std::mem::take(&mut self.entries);
        if self.pool.is_some() {
            while self.pool.as_ref().is_some_and(|p| !p.has_room()) {
                self.write_packed(true)?;
            }
            let data = std::mem::replace(&mut self.chunk, self.spare.pop().unwrap_or_default());
            let job = move || {
                let packed = compression::compress(compression, &data)?.into_owned();
                Ok(Packed { size: data.len() as u64, packed, entries, data })
            };
            if let Some(pool) = self.pool.as_mut() {
                if pool.submit(job).is_err() {
                    return Err(self.poison(std::io::Error::other("the compression workers stopped")));
                }
            }
            while self.write_packed(false)? {}
            return Ok(());
        }
        let data = std::mem::take(&mut self.chunk);
        let packed = compression::compress(compression, &data)?;
        let result =
            self.write_chunk(compression, data.len() as u64, &packed, &entries).and_then(|()| self.flush_out());
        drop(packed);
        self.chunk = data;
        self.chunk.clear();
        result
    }

    /// Writes the oldest chunk the workers compressed: waiting for it when `wait`, else only if
    /// it is done. Returns whether one was written.
    fn write_packed(&mut self, wait: bool) -> Result<bool> {
        let Some(pool) = self.pool.as_mut() else { return Ok(false) };
        let done = pool.take(wait);
        match done {
            None => Ok(false),
            Some(None) => Err(self.poison(std::io::Error::other("a compression worker failed"))),
            Some(Some(Err(e))) => {
                self.poisoned = Some(format!("{}: {e}", self.name.display()));
                Err(e)
            }
            Some(Some(Ok(p))) => {
                self.write_chunk(self.options.compression, p.size, &p.packed, &p.entries)?;
                self.flush_out()?;
                let mut data = p.data;
                data.clear();
                self.spare.push(data);
                Ok(true)
            }
        }
    }

    /// Writes every chunk the workers hold, in order.
    fn drain(&mut self) -> Result<()> {
        while self.write_packed(true)? {}
        Ok(())
    }

    fn poison(&mut self, e: std::io::Error) -> Error {
        self.poisoned = Some(format!("{}: {e}", self.name.display()));
        Error::io(&self.name, e)
    }

    /// Hands buffered bytes to the OS: a closed chunk must survive the process being killed
    /// (a recorder's SIGKILL loses at most the open chunk).
    fn flush_out(&mut self) -> Result<()> {
        if let Err(e) = self.out.flush() {
            self.poisoned = Some(format!("{}: {e}", self.name.display()));
            return Err(Error::io(&self.name, e));
        }
        Ok(())
    }

    /// Appends a chunk whose data is already compressed, with its index. Used by `reindex` to
    /// copy intact chunks without recompressing them.
    pub(crate) fn write_chunk(
        &mut self,
        compression: Compression,
        size: u64,
        packed: &[u8],
        entries: &[Entry],
    ) -> Result<()> {
        let size32 = u32::try_from(size)
            .map_err(|_| Error::Invalid(format!("chunk of {size} bytes is over the 4 GiB format limit")))?;
        let packed_len = u32::try_from(packed.len()).map_err(|_| {
            Error::Invalid(format!("compressed chunk of {} bytes is over the 4 GiB format limit", packed.len()))
        })?;
        let pos = self.pos;
        let mut index = Vec::new();
        let counts = chunk::write_index_data(&mut index, entries)?;
        // The chunk header record with empty data, then its real data length: the data itself
        // is written straight from `packed`, without copying it into the header buffer.
        let fields: [(&str, &[u8]); 3] =
            [("op", &[op::CHUNK]), ("compression", compression.name().as_bytes()), ("size", &size32.to_le_bytes())];
        let mut head = Vec::with_capacity(64);
        record::write_record(&mut head, &fields, &[]);
        if self.align > 1 {
            let end = pos + head.len() as u64 + packed.len() as u64 + index.len() as u64;
            let pad = crate::direct::padding(end, self.align, MIN_PAD);
            if pad > 0 {
                let spaces = vec![b' '; (pad - MIN_PAD) as usize];
                let [a, b, c] = fields;
                head.clear();
                record::write_record(&mut head, &[a, b, c, ("_", &spaces)], &[]);
            }
        }
        head.truncate(head.len() - 4);
        head.extend_from_slice(&packed_len.to_le_bytes());
        self.emit(&head)?;
        self.emit(packed)?;
        self.emit(&index)?;
        let start = entries.iter().map(|e| e.time).min().unwrap_or(0);
        let end = entries.iter().map(|e| e.time).max().unwrap_or(0);
        self.chunks.push(ChunkMeta { pos, start, end, counts: counts.into(), located: None });
        Ok(())
    }

    /// Marks a connection's record as already present in copied chunk data.
    pub(crate) fn mark_written(&mut self, conn: u32) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.written = true;
        }
    }

    /// Flushes the last chunk, writes connections and chunk infos, patches the bag header.
    pub fn close(&mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.flush_chunk()?;
        self.drain()?;
        let index_pos = self.pos;
        let mut index = Vec::new();
        for c in self.conns.values() {
            chunk::write_connection(&mut index, &c.info);
        }
        for meta in &self.chunks {
            chunk::write_chunk_info(&mut index, meta)?;
        }
        self.emit(&index)?;
        let header = bag_header(index_pos, self.conns.len() as u32, self.chunks.len() as u32);
        let patch = (|| {
            self.out.seek(SeekFrom::Start(record::MAGIC.len() as u64))?;
            self.out.write_all(&header)?;
            self.out.seek(SeekFrom::Start(self.pos))?;
            self.out.flush()?;
            match self.closer {
                Some(close) => close(&mut self.out),
                None => Ok(()),
            }
        })();
        if let Err(e) = patch {
            self.poisoned = Some(format!("{}: {e}", self.name.display()));
            return Err(Error::io(&self.name, e));
        }
        self.finished = true;
        Ok(())
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.pos
    }
}

/// The bag header record, padded so header and data fill 4096 bytes as rosbag writes it.
fn bag_header(index_pos: u64, conn_count: u32, chunk_count: u32) -> Vec<u8> {
    let fields: [(&str, &[u8]); 4] = [
        ("chunk_count", &chunk_count.to_le_bytes()),
        ("conn_count", &conn_count.to_le_bytes()),
        ("index_pos", &index_pos.to_le_bytes()),
        ("op", &[op::BAG_HEADER]),
    ];
    let header_len: usize = fields.iter().map(|(k, v)| 4 + k.len() + 1 + v.len()).sum();
    let mut out = Vec::with_capacity(4104);
    record::write_record(&mut out, &fields, &vec![b' '; 4096 - header_len]);
    out
}

impl<W: Write + Seek + Send> StorageWriter for Ros1Writer<W> {
    fn add_connection(&mut self, conn: &Connection) -> Result<u32> {
        let id = self.conns.keys().next_back().map_or(0, |k| k + 1);
        let mut conn = conn.clone();
        conn.id = id;
        if conn.encoding != "ros1" && !conn.encoding.is_empty() {
            return Err(Error::Invalid(format!(
                "topic {}: ROS 1 bags store ros1-encoded messages, not {}",
                conn.topic, conn.encoding
            )));
        }
        conn.encoding = "ros1".into();
        if let Some(other) =
            self.conns.values().find(|c| c.info.topic == conn.topic && c.info.message_type != conn.message_type)
        {
            return Err(Error::Invalid(format!(
                "topic {}: type {} conflicts with {} already on it",
                conn.topic, conn.message_type, other.info.message_type
            )));
        }
        self.add_connection_with_id(&conn)?;
        Ok(id)
    }

    fn write(&mut self, conn: u32, log_time: u64, _publish_time: u64, data: &[u8]) -> Result<()> {
        self.write_message(conn, log_time, data)
    }

    fn checkpoint(&mut self) -> Result<()> {
        self.flush_chunk()?;
        self.drain()
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.close()
    }
}

impl<W: Write + Seek> Drop for Ros1Writer<W> {
    fn drop(&mut self) {
        // Best effort: leave complete chunks on disk so `reindex` can recover them.
        if !self.finished && self.poisoned.is_none() {
            let _ = self.flush_chunk();
            let _ = self.drain();
            let _ = self.out.flush();
        }
    }
}
