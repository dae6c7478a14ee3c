//! Writing MCAP the way rosbag2's MCAP plugin does: profile `ros2` (or `ros1` for ROS 1 data),
//! one schema per type with the full definition text, channel metadata with the QoS profiles
//! and type hash, and the bag's metadata.yaml in a `rosbag2` Metadata record.
//!
//! The records are written here (layouts in `encode`), with the `mcap` crate's layout choices:
//! schemas and channels go into the open chunk, a chunk is closed before a message once it
//! holds more than the chunk size, its message indexes follow it in channel order, and the
//! summary repeats schemas and channels, then statistics, chunk, attachment and metadata
//! indexes and the summary offsets.
//!
//! Chunks are compressed on worker threads when more than one is asked for
//! ([`WriteOptions::threads`]) and written in the order they were closed, so the file does not
//! depend on the thread count. With direct I/O each chunk (with its message indexes) is padded
//! to a block boundary by a private record (opcode 0x80, `PADDING_OP`) of zeros, which readers
//! skip, so that it reaches the disk whole without seeking back. Without direct I/O nothing is
//! padded.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use mcap::records::{AttachmentIndex, ChunkIndex, MetadataIndex, Statistics};

use super::encode::{self, op, ChunkHead};
use super::reader::MCAP_TYPE_HASH_KEY;
use super::records::MAGIC;
use crate::direct::Sink;
use crate::pool::{self, Ordered};
use crate::rosbag2::{FileWriter, TYPE_HASH_KEY};
use crate::{
    Attachment, Compression, Connection, Error, McapPreset, MetadataRecord, Result, StorageWriter, WriteOptions,
};

/// The private record opcode of direct I/O's padding (MCAP reserves 0x80 and up for private
/// records; readers skip what they do not know).
pub const PADDING_OP: u8 = 0x80;
/// A record's opcode and length: the smallest padding record.
const RECORD_HEAD: u64 = encode::RECORD_HEAD as u64;
const LIBRARY: &str = concat!("rbag ", env!("CARGO_PKG_VERSION"));

/// What the preset and `--storage-config-file` settle on: the `mcap` crate's write options, as
/// rbag sets them.
#[derive(Debug, Clone)]
struct Settings {
    /// Zstd, Lz4, or `None`.
    compression: Option<Compression>,
    /// The compressor's level; 0 is its default.
    level: u32,
    use_chunks: bool,
    /// A chunk is closed before a message once it holds more than this.
    chunk_size: u64,
    chunk_crc: bool,
    attachment_crc: bool,
    data_crc: bool,
    summary_crc: bool,
    message_index: bool,
    repeat_schemas: bool,
    repeat_channels: bool,
    attachment_index: bool,
    metadata_index: bool,
    chunk_index: bool,
    statistics: bool,
    summary_offsets: bool,
}

impl Settings {
    fn new(options: &WriteOptions) -> Settings {
        let preset = options.rosbag2.mcap_preset;
        let c = &options.rosbag2.storage_config.mcap;
        let mut s = Settings {
            compression: mcap_compression(Some(options.compression)),
            level: 0,
            use_chunks: true,
            chunk_size: options.chunk_size.max(1),
            chunk_crc: true,
            attachment_crc: true,
            // Chunk CRCs (checked on read) cover every message; a second pass over the whole
            // data section costs a sixth of a large write and no reader rbag knows uses it.
            data_crc: false,
            summary_crc: true,
            message_index: true,
            repeat_schemas: true,
            repeat_channels: true,
            attachment_index: true,
            metadata_index: true,
            chunk_index: true,
            statistics: true,
            summary_offsets: true,
        };
        match preset {
            McapPreset::Default => {}
            McapPreset::Fastwrite => {
                s.use_chunks = false;
                s.compression = None;
                s.message_index = false;
                s.summary_crc = false;
            }
            McapPreset::ZstdFast => {
                s.compression = Some(Compression::Zstd);
                s.level = 1;
                s.chunk_crc = false;
            }
            McapPreset::ZstdSmall => {
                s.compression = Some(Compression::Zstd);
                s.level = 19;
                s.chunk_size = 4 << 20;
            }
        }
        // `--storage-config-file`'s McapWriterOptions keys, over the preset.
        if let Some(v) = c.no_summary {
            s.statistics = !v;
            s.chunk_index = !v;
            s.attachment_index = !v;
            s.metadata_index = !v;
            s.repeat_channels = !v;
            s.repeat_schemas = !v;
        }
        let not = |flag: &mut bool, v: Option<bool>| {
            if let Some(v) = v {
                *flag = !v;
            }
        };
        not(&mut s.chunk_crc, c.no_chunk_crc);
        not(&mut s.attachment_crc, c.no_attachment_crc);
        if let Some(v) = c.enable_data_crc {
            s.data_crc = v;
        }
        not(&mut s.summary_crc, c.no_summary_crc);
        not(&mut s.use_chunks, c.no_chunking);
        not(&mut s.message_index, c.no_message_index);
        not(&mut s.repeat_schemas, c.no_repeated_schemas);
        not(&mut s.repeat_channels, c.no_repeated_channels);
        not(&mut s.attachment_index, c.no_attachment_index);
        not(&mut s.metadata_index, c.no_metadata_index);
        not(&mut s.chunk_index, c.no_chunk_index);
        not(&mut s.statistics, c.no_statistics);
        not(&mut s.summary_offsets, c.no_summary_offsets);
        if let Some(size) = c.chunk_size {
            s.chunk_size = size.max(1);
        }
        if let Some(comp) = c.compression {
            s.compression = mcap_compression(comp);
        }
        if let Some(level) = c.compression_level {
            let chosen = match c.compression {
                Some(chosen) => chosen,
                None => match preset {
                    McapPreset::Default => Some(options.compression),
                    McapPreset::Fastwrite => None,
                    McapPreset::ZstdFast | McapPreset::ZstdSmall => Some(Compression::Zstd),
                },
            };
            s.level = level.level(chosen);
        }
        s
    }

    /// The chunk record's compression name.
    fn compression_name(&self) -> &'static str {
        match self.compression {
            Some(c) => c.name(),
            None => "",
        }
    }
}

/// The compressions MCAP chunks have.
fn mcap_compression(c: Option<Compression>) -> Option<Compression> {
    match c {
        Some(Compression::Zstd) => Some(Compression::Zstd),
        Some(Compression::Lz4) => Some(Compression::Lz4),
        _ => None,
    }
}

/// The chunk being filled: its records, uncompressed, and its messages' index entries.
#[derive(Default)]
struct Open {
    buf: Vec<u8>,
    /// Channel → (log time, offset in `buf`) of each message.
    index: BTreeMap<u16, Vec<(u64, u64)>>,
    /// Earliest and latest log time.
    bounds: Option<(u64, u64)>,
}

/// A closed chunk, compressed, waiting for its turn to be written.
struct Packed {
    /// The chunk's records as stored: compressed, or the uncompressed buffer itself.
    data: Vec<u8>,
    /// The uncompressed buffer when `data` is a compressed copy (kept for the next chunk).
    raw: Option<Vec<u8>>,
    uncompressed_size: u64,
    crc: u32,
    bounds: (u64, u64),
    index: BTreeMap<u16, Vec<(u64, u64)>>,
}

thread_local! {
    /// A compression worker's zstd context, reused from chunk to chunk (a worker serves one
    /// writer, so one level).
    static WORKER_ZSTD: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
}

/// Compresses a closed chunk (with `mcap::Writer`'s default, zstd takes level 0: the library's
/// default level). The CRC is of the uncompressed records, as the spec asks.
fn pack(
    open: Open,
    compression: Option<Compression>,
    level: u32,
    chunk_crc: bool,
    zstd: &mut Option<zstd::bulk::Compressor<'static>>,
) -> std::result::Result<Packed, String> {
    let crc = if chunk_crc { crc32fast::hash(&open.buf) } else { 0 };
    let uncompressed_size = open.buf.len() as u64;
    let (data, raw) = match compression {
        None => (open.buf, None),
        Some(Compression::Zstd) => {
            let zstd_error = |e: std::io::Error| format!("zstd compression failed: {e}");
            let z = match zstd {
                Some(z) => z,
                None => zstd.insert(zstd::bulk::Compressor::new(level as i32).map_err(zstd_error)?),
            };
            (z.compress(&open.buf).map_err(zstd_error)?, Some(open.buf))
        }
        Some(Compression::Lz4) => (lz4(&open.buf)?, Some(open.buf)),
        Some(other) => return Err(format!("MCAP chunks are not compressed with {}", other.name())),
    };
    Ok(Packed { data, raw, uncompressed_size, crc, bounds: open.bounds.unwrap_or((0, 0)), index: open.index })
}

/// An LZ4 frame of independent blocks (as MCAP readers take them), the blocks no larger than
/// the data needs.
fn lz4(data: &[u8]) -> std::result::Result<Vec<u8>, String> {
    use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
    let size = match data.len() {
        n if n <= 64 << 10 => BlockSize::Max64KB,
        n if n <= 256 << 10 => BlockSize::Max256KB,
        n if n <= 1 << 20 => BlockSize::Max1MB,
        _ => BlockSize::Max4MB,
    };
    let info = FrameInfo::new().block_size(size).block_mode(BlockMode::Independent);
    let mut enc = FrameEncoder::with_frame_info(info, Vec::with_capacity(data.len() / 2 + 64));
    enc.write_all(data).map_err(|e| format!("lz4 compression failed: {e}"))?;
    enc.finish().map_err(|e| format!("lz4 compression failed: {e}"))
}

/// An MCAP file being written.
pub struct McapWriter {
    path: PathBuf,
    /// The output; taken at `finish`.
    sink: Option<Sink>,
    /// Bytes written so far.
    pos: u64,
    /// Closed chunks are padded to end at a multiple of this (direct I/O); 1 otherwise.
    align: u64,
    settings: Settings,
    options: WriteOptions,
    /// Whether the magic and header are written (by the first connection, which decides the
    /// profile, or at `finish`).
    started: bool,
    /// The CRC of the data section so far, when it is computed.
    data_crc: Option<crc32fast::Hasher>,
    open: Open,
    /// A buffer for the next chunk, kept from a written one.
    spare: Option<Vec<u8>>,
    /// Compression workers, when chunks are compressed and more than one thread is asked for.
    pool: Option<Ordered<std::result::Result<Packed, String>>>,
    /// The zstd context of chunks compressed on this thread.
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// Schema and Channel records as written (ids 1..), for the summary.
    schemas: Vec<Vec<u8>>,
    channels: Vec<Vec<u8>>,
    schema_ids: HashMap<(String, String, String), u16>,
    message_counts: BTreeMap<u16, u64>,
    message_bounds: Option<(u64, u64)>,
    chunk_count: u32,
    chunk_indexes: Vec<ChunkIndex>,
    attachment_count: u32,
    attachment_indexes: Vec<AttachmentIndex>,
    metadata_count: u32,
    metadata_indexes: Vec<MetadataIndex>,
    bag_metadata: Option<String>,
    /// Attachments and metadata records to write, kept until `finish` (they are top-level
    /// records; writing them early would open the file before the first connection picks
    /// the profile). Attachment data is usually a slice of a mapped input, not a copy.
    attachments: Vec<Attachment>,
    metadata: Vec<MetadataRecord>,
    bytes: u64,
    /// Log time of the first message in the open chunk, for `chunk_interval_ns`.
    chunk_start: Option<u64>,
    poisoned: Option<String>,
}

impl McapWriter {
    /// Creates `path`, which must not exist.
    pub fn create(path: &Path, options: &WriteOptions) -> Result<Self> {
        if matches!(options.compression, Compression::Bz2) {
            return Err(Error::Invalid("MCAP chunks are compressed with zstd or lz4, not bz2".into()));
        }
        let settings = Settings::new(options);
        let threads = pool::resolve(options.threads);
        let pool = match settings.compression {
            Some(_) if settings.use_chunks && threads > 1 => {
                Some(Ordered::new("rbag-mcap-compress", threads, 2 * threads).map_err(|e| Error::io(path, e))?)
            }
            _ => None,
        };
        let file = Sink::create_new(path, options.direct_io)?;
        Ok(McapWriter {
            path: path.into(),
            align: file.align(),
            sink: Some(file),
            pos: 0,
            data_crc: settings.data_crc.then(crc32fast::Hasher::new),
            settings,
            options: options.clone(),
            started: false,
            open: Open::default(),
            spare: None,
            pool,
            zstd: None,
            schemas: Vec::new(),
            channels: Vec::new(),
            schema_ids: HashMap::new(),
            message_counts: BTreeMap::new(),
            message_bounds: None,
            chunk_count: 0,
            chunk_indexes: Vec::new(),
            attachment_count: 0,
            attachment_indexes: Vec::new(),
            metadata_count: 0,
            metadata_indexes: Vec::new(),
            bag_metadata: None,
            attachments: Vec::new(),
            metadata: Vec::new(),
            bytes: 0,
            chunk_start: None,
            poisoned: None,
        })
    }

    fn check(&self) -> Result<()> {
        match &self.poisoned {
            Some(p) => Err(Error::Poisoned(p.clone())),
            None => Ok(()),
        }
    }

    /// Poisons the writer with `err`, which is returned.
    fn fail(&mut self, err: Error) -> Error {
        self.poisoned = Some(err.to_string());
        err
    }

    fn io_fail(&mut self, e: std::io::Error) -> Error {
        let err = Error::io(&self.path, e);
        self.fail(err)
    }

    /// Appends bytes to the file.
    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.check()?;
        let Some(sink) = self.sink.as_mut() else { return Err(Error::Poisoned("the file is closed".into())) };
        if let Err(e) = sink.write_all(bytes) {
            return Err(self.io_fail(e));
        }
        self.pos += bytes.len() as u64;
        if let Some(h) = self.data_crc.as_mut() {
            h.update(bytes);
        }
        Ok(())
    }

    /// Hands buffered bytes to the OS (with direct I/O: the whole blocks).
    fn flush_out(&mut self) -> Result<()> {
        let Some(sink) = self.sink.as_mut() else { return Err(Error::Poisoned("the file is closed".into())) };
        if let Err(e) = sink.flush() {
            return Err(self.io_fail(e));
        }
        Ok(())
    }

    /// Writes the magic and the Header record, once.
    fn start(&mut self, profile: &str) -> Result<()> {
        if self.started {
            return Ok(());
        }
        let mut head = MAGIC.to_vec();
        encode::header(&mut head, profile, LIBRARY);
        self.emit(&head)?;
        self.started = true;
        Ok(())
    }

    /// A Schema or Channel record: into the open chunk, or the file without chunks.
    fn put_record(&mut self, record: &[u8]) -> Result<()> {
        if self.settings.use_chunks {
            self.open.buf.extend_from_slice(record);
            Ok(())
        } else {
            self.emit(record)
        }
    }

    /// With direct I/O, pads the file to a block boundary with a private record, so that all
    /// of it can reach the disk.
    fn pad(&mut self) -> Result<()> {
        if self.align <= 1 {
            return Ok(());
        }
        let pad = crate::direct::padding(self.pos, self.align, RECORD_HEAD);
        if pad == 0 {
            return Ok(());
        }
        let mut record = Vec::with_capacity(pad as usize);
        encode::zeros(&mut record, PADDING_OP, (pad - RECORD_HEAD) as usize);
        self.emit(&record)
    }

    /// Closes the open chunk: compresses and writes it, or hands it to the workers and writes
    /// whichever earlier chunks they are done with.
    fn close_chunk(&mut self) -> Result<()> {
        if self.open.buf.is_empty() {
            return Ok(());
        }
        self.check()?;
        let buf = self.spare.take().unwrap_or_default();
        let open = std::mem::replace(&mut self.open, Open { buf, ..Open::default() });
        let s = &self.settings;
        let (compression, level, chunk_crc) = (s.compression, s.level, s.chunk_crc);
        if self.pool.is_some() {
            while self.pool.as_ref().is_some_and(|p| !p.has_room()) {
                self.write_next(true)?;
            }
            let job = move || WORKER_ZSTD.with(|z| pack(open, compression, level, chunk_crc, &mut z.borrow_mut()));
            if let Some(pool) = self.pool.as_mut() {
                if pool.submit(job).is_err() {
                    return Err(self.io_fail(std::io::Error::other("the compression workers stopped")));
                }
            }
            while self.write_next(false)? {}
            return Ok(());
        }
        let packed = pack(open, compression, level, chunk_crc, &mut self.zstd);
        match packed {
            Ok(p) => self.write_chunk(p),
            Err(e) => Err(self.compression_failed(e)),
        }
    }

    fn compression_failed(&mut self, e: String) -> Error {
        let err = Error::Invalid(format!("{}: {e}", self.path.display()));
        self.fail(err)
    }

    /// Writes the oldest chunk the workers compressed: waiting for it when `wait`, else only if
    /// it is done. Returns whether one was written.
    fn write_next(&mut self, wait: bool) -> Result<bool> {
        let Some(pool) = self.pool.as_mut() else { return Ok(false) };
        let done = pool.take(wait);
        match done {
            None => Ok(false),
            Some(None) => Err(self.io_fail(std::io::Error::other("a compression worker failed"))),
            Some(Some(Err(e))) => Err(self.compression_failed(e)),
            Some(Some(Ok(p))) => {
                self.write_chunk(p)?;
                Ok(true)
            }
        }
    }

    /// Writes every chunk the workers hold, in order.
    fn drain(&mut self) -> Result<()> {
        while self.write_next(true)? {}
        Ok(())
    }

    /// Writes a compressed chunk and its message indexes, pads them to a block boundary (direct
    /// I/O) and hands them to the OS.
    fn write_chunk(&mut self, p: Packed) -> Result<()> {
        let start = self.pos;
        let compression = self.settings.compression_name();
        let mut head = Vec::with_capacity(64);
        let chunk = ChunkHead {
            message_start_time: p.bounds.0,
            message_end_time: p.bounds.1,
            uncompressed_size: p.uncompressed_size,
            uncompressed_crc: p.crc,
            compression,
            compressed_size: p.data.len() as u64,
        };
        encode::chunk_head(&mut head, &chunk);
        self.emit(&head)?;
        self.emit(&p.data)?;
        let chunk_length = self.pos - start;
        let indexes_start = self.pos;
        let mut indexes = Vec::new();
        let mut message_index_offsets = BTreeMap::new();
        for (&channel, entries) in &p.index {
            message_index_offsets.insert(channel, indexes_start + indexes.len() as u64);
            encode::message_index(&mut indexes, channel, entries);
        }
        self.emit(&indexes)?;
        self.chunk_count += 1;
        if self.settings.chunk_index {
            self.chunk_indexes.push(ChunkIndex {
                message_start_time: p.bounds.0,
                message_end_time: p.bounds.1,
                chunk_start_offset: start,
                chunk_length,
                message_index_offsets,
                message_index_length: indexes.len() as u64,
                compression: compression.into(),
                compressed_size: p.data.len() as u64,
                uncompressed_size: p.uncompressed_size,
            });
        }
        self.pad()?;
        self.flush_out()?;
        // The buffer goes to the next chunk, unless one oversized message grew it.
        let mut buf = p.raw.unwrap_or(p.data);
        if self.spare.is_none() && buf.capacity() as u64 <= (2 * self.settings.chunk_size).max(8 << 20) {
            buf.clear();
            self.spare = Some(buf);
        }
        Ok(())
    }

    /// Writes the attachments, metadata records and the rosbag2 record, the summary and the
    /// footer.
    fn write_end(&mut self) -> Result<()> {
        let meta = self.bag_metadata.take();
        let attachments = std::mem::take(&mut self.attachments);
        let mut records = std::mem::take(&mut self.metadata);
        // A rosbag2 file describes its own bag: a `rosbag2` record given by the caller (copied
        // from an input) would be a second, stale description.
        if let Some(yaml) = meta {
            records.retain(|r| r.name != "rosbag2");
            records.push(MetadataRecord {
                name: "rosbag2".into(),
                metadata: BTreeMap::from([("serialized_metadata".into(), yaml)]),
                ..MetadataRecord::default()
            });
        }
        for a in &attachments {
            let offset = self.pos;
            let mut head = Vec::with_capacity(64 + a.name.len() + a.media_type.len());
            let length = encode::attachment_head(
                &mut head,
                a.log_time,
                a.create_time,
                &a.name,
                &a.media_type,
                a.data.len() as u64,
            );
            let crc = if self.settings.attachment_crc {
                let mut h = crc32fast::Hasher::new();
                h.update(&head[encode::RECORD_HEAD..]);
                h.update(&a.data);
                h.finalize()
            } else {
                0
            };
            self.emit(&head)?;
            self.emit(&a.data)?;
            self.emit(&crc.to_le_bytes())?;
            self.attachment_count += 1;
            if self.settings.attachment_index {
                self.attachment_indexes.push(AttachmentIndex {
                    offset,
                    length,
                    log_time: a.log_time,
                    create_time: a.create_time,
                    data_size: a.data.len() as u64,
                    name: a.name.clone(),
                    media_type: a.media_type.clone(),
                });
            }
        }
        for r in records {
            let offset = self.pos;
            let mut record = Vec::new();
            encode::metadata(&mut record, &r.name, &r.metadata);
            self.emit(&record)?;
            self.metadata_count += 1;
            if self.settings.metadata_index {
                self.metadata_indexes.push(MetadataIndex { offset, length: record.len() as u64, name: r.name });
            }
        }
        let crc = self.data_crc.take().map_or(0, |h| h.finalize());
        let mut end = Vec::new();
        encode::data_end(&mut end, crc);
        self.emit(&end)?;
        let summary = self.summary();
        self.emit(&summary)
    }

    /// The summary section, the footer and the closing magic.
    fn summary(&self) -> Vec<u8> {
        let s = &self.settings;
        let start = self.pos;
        let mut out = Vec::new();
        let mut groups = Vec::new();
        let mut group = |out: &mut Vec<u8>, op: u8, write: &dyn Fn(&mut Vec<u8>)| {
            let at = out.len();
            write(out);
            if out.len() > at {
                groups.push((op, start + at as u64, (out.len() - at) as u64));
            }
        };
        if s.repeat_schemas {
            group(&mut out, op::SCHEMA, &|out| self.schemas.iter().for_each(|r| out.extend_from_slice(r)));
        }
        if s.repeat_channels {
            group(&mut out, op::CHANNEL, &|out| self.channels.iter().for_each(|r| out.extend_from_slice(r)));
        }
        if s.statistics {
            let (message_start_time, message_end_time) = self.message_bounds.unwrap_or((0, 0));
            let stats = Statistics {
                message_count: self.message_counts.values().sum(),
                schema_count: self.schemas.len() as u16,
                channel_count: self.channels.len() as u32,
                attachment_count: self.attachment_count,
                metadata_count: self.metadata_count,
                chunk_count: self.chunk_count,
                message_start_time,
                message_end_time,
                channel_message_counts: self.message_counts.clone(),
            };
            group(&mut out, op::STATISTICS, &|out| encode::statistics(out, &stats));
        }
        group(&mut out, op::CHUNK_INDEX, &|out| self.chunk_indexes.iter().for_each(|c| encode::chunk_index(out, c)));
        group(&mut out, op::ATTACHMENT_INDEX, &|out| {
            self.attachment_indexes.iter().for_each(|a| encode::attachment_index(out, a))
        });
        group(&mut out, op::METADATA_INDEX, &|out| {
            self.metadata_indexes.iter().for_each(|m| encode::metadata_index(out, m))
        });
        let summary_start = if out.is_empty() { 0 } else { start };
        let mut offsets_start = 0;
        if s.summary_offsets && !groups.is_empty() {
            offsets_start = start + out.len() as u64;
            for (op, at, len) in groups {
                encode::summary_offset(&mut out, op, at, len);
            }
        }
        encode::footer_head(&mut out, summary_start, offsets_start);
        let crc = if s.summary_crc { crc32fast::hash(&out) } else { 0 };
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(MAGIC);
        out
    }
}

impl StorageWriter for McapWriter {
    fn add_connection(&mut self, conn: &Connection) -> Result<u32> {
        self.check()?;
        let profile = if conn.encoding == "ros1" { "ros1" } else { "ros2" };
        self.start(profile)?;
        let key = (conn.message_type.clone(), conn.definition_encoding.clone(), conn.definition.clone());
        let schema = match self.schema_ids.get(&key) {
            Some(&id) => id,
            None if conn.message_type.is_empty() => 0,
            None => {
                let id = u16::try_from(self.schemas.len() + 1)
                    .map_err(|_| Error::Invalid(format!("{}: too many MCAP schemas", self.path.display())))?;
                let mut record = Vec::new();
                encode::schema(&mut record, id, &key.0, &key.1, key.2.as_bytes());
                self.put_record(&record)?;
                self.schemas.push(record);
                self.schema_ids.insert(key, id);
                id
            }
        };
        let mut metadata: BTreeMap<String, String> = conn.metadata.clone();
        if let Some(h) = metadata.remove(TYPE_HASH_KEY) {
            metadata.insert(MCAP_TYPE_HASH_KEY.into(), h);
        }
        let id = u16::try_from(self.channels.len() + 1)
            .map_err(|_| Error::Invalid(format!("{}: too many MCAP channels", self.path.display())))?;
        let mut record = Vec::new();
        encode::channel(&mut record, id, schema, &conn.topic, &conn.encoding, &metadata);
        self.put_record(&record)?;
        self.channels.push(record);
        Ok(id as u32)
    }

    fn write(&mut self, conn: u32, log_time: u64, publish_time: u64, data: &[u8]) -> Result<()> {
        self.check()?;
        if conn == 0 || conn as usize > self.channels.len() {
            return Err(Error::UnknownConnection { id: conn });
        }
        let channel = conn as u16;
        let head = encode::message_head(channel, 0, log_time, publish_time, data.len());
        if self.settings.use_chunks {
            if self.open.buf.len() as u64 > self.settings.chunk_size {
                self.close_chunk()?;
            } else if self.pool.as_ref().is_some_and(|p| p.in_flight() > 0) {
                // Chunks the workers finished go to the OS now, not at the next close.
                while self.write_next(false)? {}
            }
            let open = &mut self.open;
            if self.settings.message_index {
                open.index.entry(channel).or_default().push((log_time, open.buf.len() as u64));
            }
            open.buf.extend_from_slice(&head);
            open.buf.extend_from_slice(data);
            open.bounds = Some(open.bounds.map_or((log_time, log_time), |(a, b)| (a.min(log_time), b.max(log_time))));
        } else {
            self.emit(&head)?;
            self.emit(data)?;
        }
        *self.message_counts.entry(channel).or_insert(0) += 1;
        self.message_bounds =
            Some(self.message_bounds.map_or((log_time, log_time), |(a, b)| (a.min(log_time), b.max(log_time))));
        self.bytes += (head.len() + data.len()) as u64;
        // A recorder's open chunk is what a crash loses: bound it in time too, and hand the
        // closed chunk to the OS at once.
        if let Some(interval) = self.options.chunk_interval_ns {
            let start = *self.chunk_start.get_or_insert(log_time);
            if log_time.saturating_sub(start) >= interval {
                self.chunk_start = None;
                if self.settings.use_chunks {
                    self.close_chunk()?;
                } else {
                    self.pad()?;
                    self.flush_out()?;
                }
            }
        }
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<()> {
        self.check()?;
        if !self.started {
            return Ok(());
        }
        self.chunk_start = None;
        self.close_chunk()?;
        self.drain()?;
        self.pad()?;
        self.flush_out()
    }

    fn add_attachment(&mut self, attachment: &Attachment) -> Result<bool> {
        self.check()?;
        self.bytes += attachment.data.len() as u64;
        self.attachments.push(attachment.clone());
        Ok(true)
    }

    fn add_metadata(&mut self, record: &MetadataRecord) -> Result<bool> {
        self.check()?;
        self.metadata.push(record.clone());
        Ok(true)
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.check()?;
        self.start("ros2")?;
        self.close_chunk()?;
        self.drain()?;
        // The workers are done: end their threads before the summary is written.
        self.pool = None;
        self.write_end()?;
        let Some(sink) = self.sink.take() else { return Err(Error::Poisoned("the file is closed".into())) };
        sink.finish().map_err(|e| self.io_fail(e))
    }
}

impl Drop for McapWriter {
    fn drop(&mut self) {
        // Best effort: leave complete chunks on disk so `reindex` can recover them.
        if self.sink.is_some() && self.started && self.poisoned.is_none() {
            let _ = self.close_chunk();
            let _ = self.drain();
            let _ = self.flush_out();
        }
    }
}

impl FileWriter for McapWriter {
    fn bytes_written(&self) -> u64 {
        self.bytes
    }

    fn set_bag_metadata(&mut self, yaml: &str) {
        self.bag_metadata = Some(yaml.into());
    }
}
