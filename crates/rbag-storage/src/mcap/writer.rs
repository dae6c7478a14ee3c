//! Writing MCAP the way rosbag2's MCAP plugin does: profile `ros2` (or `ros1` for ROS 1 data),
//! one schema per type with the full definition text, channel metadata with the QoS profiles
//! and type hash, and the bag's metadata.yaml in a `rosbag2` Metadata record.
//!
//! The writer closes chunks itself (by the `mcap` crate's own rule: before a message, once the
//! open chunk holds more than the chunk size) so that with direct I/O it can pad each closed
//! chunk to a block boundary: a private record (opcode [`PADDING_OP`]) of zeros, which readers
//! skip, lets the chunk reach the disk whole without seeking back. Without direct I/O nothing is
//! padded.

use std::collections::{BTreeMap, HashMap};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::reader::MCAP_TYPE_HASH_KEY;
use crate::rosbag2::{FileWriter, TYPE_HASH_KEY};
use crate::direct::Sink;
use crate::{
    Attachment, Compression, Connection, Error, McapPreset, MetadataRecord, Result, StorageWriter, WriteOptions,
};

/// The private record opcode of direct I/O's padding (MCAP reserves 0x80 and up for private
/// records; readers skip what they do not know).
pub const PADDING_OP: u8 = 0x80;
/// A record's opcode and length: the smallest padding record.
const RECORD_HEAD: u64 = 9;

/// The output, counting where it is (the `mcap` writer does not say).
struct Tracked {
    sink: Sink,
    pos: Arc<AtomicU64>,
}

impl Write for Tracked {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.sink.write(buf)?;
        self.pos.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.sink.flush()
    }
}

impl Seek for Tracked {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let at = self.sink.seek(to)?;
        self.pos.store(at, Ordering::Relaxed);
        Ok(at)
    }
}

/// An MCAP file being written.
pub struct McapWriter {
    path: PathBuf,
    /// Opened at create; handed to the `mcap` writer with the first connection, which decides
    /// the profile.
    file: Option<Sink>,
    inner: Option<mcap::Writer<Tracked>>,
    /// Where the output is.
    pos: Arc<AtomicU64>,
    /// Closed chunks are padded to end at a multiple of this (direct I/O); 1 otherwise.
    align: u64,
    /// Uncompressed bytes of records in the open chunk, as the `mcap` crate counts them.
    chunk_bytes: u64,
    /// The chunk size in force (preset and storage configuration applied); `None`: no chunks.
    chunk_target: Option<u64>,
    options: WriteOptions,
    /// Our connection id - 1 → MCAP channel id.
    channels: Vec<u16>,
    schemas: HashMap<(String, String, String), u16>,
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
        let file = Sink::create_new(path, options.direct_io)?;
        Ok(McapWriter {
            path: path.into(),
            align: file.align(),
            file: Some(file),
            inner: None,
            pos: Arc::new(AtomicU64::new(0)),
            chunk_bytes: 0,
            chunk_target: None,
            options: options.clone(),
            channels: Vec::new(),
            schemas: HashMap::new(),
            bag_metadata: None,
            attachments: Vec::new(),
            metadata: Vec::new(),
            bytes: 0,
            chunk_start: None,
            poisoned: None,
        })
    }

    fn mcap_options(&self, profile: &str) -> mcap::WriteOptions {
        let base = mcap::WriteOptions::new()
            .profile(profile)
            .library(concat!("rbag ", env!("CARGO_PKG_VERSION")))
            .compression_threads(0)
            // Chunk CRCs (checked on read) cover every message; a second pass over the whole
            // data section costs a sixth of a large write and no reader rbag knows uses it.
            .calculate_data_section_crc(false)
            // A direct-I/O file cannot seek back to patch a chunk's header: chunks are built
            // in memory and written whole (the bytes are the same).
            .disable_seeking(self.align > 1)
            .chunk_size(Some(self.options.chunk_size.max(1)));
        let preset = match self.options.rosbag2.mcap_preset {
            McapPreset::Default => base.compression(match self.options.compression {
                Compression::Zstd => Some(mcap::Compression::Zstd),
                Compression::Lz4 => Some(mcap::Compression::Lz4),
                Compression::None | Compression::Bz2 => None,
            }),
            McapPreset::Fastwrite => base
                .use_chunks(false)
                .compression(None)
                .emit_message_indexes(false)
                .calculate_summary_section_crc(false),
            McapPreset::ZstdFast => {
                base.compression(Some(mcap::Compression::Zstd)).compression_level(1).calculate_chunk_crcs(false)
            }
            McapPreset::ZstdSmall => {
                base.compression(Some(mcap::Compression::Zstd)).compression_level(19).chunk_size(Some(4 << 20))
            }
        };
        self.overlay_config(preset)
    }

    /// The chunk size the preset and the storage configuration settle on; `None` without
    /// chunks.
    fn chunk_target(&self) -> Option<u64> {
        let c = &self.options.rosbag2.storage_config.mcap;
        let preset = self.options.rosbag2.mcap_preset;
        if c.no_chunking.unwrap_or(preset == McapPreset::Fastwrite) {
            return None;
        }
        Some(match (c.chunk_size, preset) {
            (Some(size), _) => size.max(1),
            (None, McapPreset::ZstdSmall) => 4 << 20,
            (None, _) => self.options.chunk_size.max(1),
        })
    }

    /// Closes the open chunk (the `mcap` crate writes it and its message indexes) and, with
    /// direct I/O, pads the file to a block boundary so that all of it reaches the disk.
    fn close_chunk(&mut self) -> Result<()> {
        self.chunk_bytes = 0;
        let Some(w) = self.inner.as_mut() else { return Ok(()) };
        if let Err(e) = w.flush() {
            return Err(self.fail(e));
        }
        if self.align > 1 {
            let pos = self.pos.load(Ordering::Relaxed);
            let mut pad = (self.align - pos % self.align) % self.align;
            if pad > 0 && pad < RECORD_HEAD {
                pad += self.align;
            }
            if pad > 0 {
                let zeros = vec![0u8; (pad - RECORD_HEAD) as usize];
                let w = self.inner.as_mut().ok_or_else(|| Error::Poisoned("the file is closed".into()))?;
                let written = w.write_private_record(PADDING_OP, &zeros, Default::default()).and_then(|()| w.flush());
                if let Err(e) = written {
                    return Err(self.fail(e));
                }
            }
        }
        Ok(())
    }

    /// `--storage-config-file`'s McapWriterOptions keys, over the preset.
    fn overlay_config(&self, mut o: mcap::WriteOptions) -> mcap::WriteOptions {
        let c = &self.options.rosbag2.storage_config.mcap;
        if let Some(v) = c.no_summary {
            o = o.emit_summary_records(!v);
        }
        let set =
            |o: mcap::WriteOptions, v: Option<bool>, f: fn(mcap::WriteOptions, bool) -> mcap::WriteOptions| match v {
                Some(v) => f(o, v),
                None => o,
            };
        o = set(o, c.no_chunk_crc, |o, v| o.calculate_chunk_crcs(!v));
        o = set(o, c.no_attachment_crc, |o, v| o.calculate_attachment_crcs(!v));
        o = set(o, c.enable_data_crc, |o, v| o.calculate_data_section_crc(v));
        o = set(o, c.no_summary_crc, |o, v| o.calculate_summary_section_crc(!v));
        o = set(o, c.no_chunking, |o, v| o.use_chunks(!v));
        o = set(o, c.no_message_index, |o, v| o.emit_message_indexes(!v));
        o = set(o, c.no_repeated_schemas, |o, v| o.repeat_schemas(!v));
        o = set(o, c.no_repeated_channels, |o, v| o.repeat_channels(!v));
        o = set(o, c.no_attachment_index, |o, v| o.emit_attachment_indexes(!v));
        o = set(o, c.no_metadata_index, |o, v| o.emit_metadata_indexes(!v));
        o = set(o, c.no_chunk_index, |o, v| o.emit_chunk_indexes(!v));
        o = set(o, c.no_statistics, |o, v| o.emit_statistics(!v));
        o = set(o, c.no_summary_offsets, |o, v| o.emit_summary_offsets(!v));
        if let Some(size) = c.chunk_size {
            o = o.chunk_size(Some(size.max(1)));
        }
        let compression = c.compression.map(|c| match c {
            Some(Compression::Zstd) => Some(mcap::Compression::Zstd),
            Some(Compression::Lz4) => Some(mcap::Compression::Lz4),
            _ => None,
        });
        if let Some(comp) = compression {
            o = o.compression(comp);
        }
        if let Some(level) = c.compression_level {
            let chosen = match c.compression {
                Some(chosen) => chosen,
                None => match self.options.rosbag2.mcap_preset {
                    McapPreset::Default => Some(self.options.compression),
                    McapPreset::Fastwrite => None,
                    McapPreset::ZstdFast | McapPreset::ZstdSmall => Some(Compression::Zstd),
                },
            };
            o = o.compression_level(level.level(chosen));
        }
        // This writer closes chunks itself.
        o.chunk_size(None)
    }

    fn writer(&mut self, profile: &str) -> Result<&mut mcap::Writer<Tracked>> {
        if self.inner.is_none() {
            let sink = self.file.take().ok_or_else(|| Error::Poisoned("the file is closed".into()))?;
            let options = self.mcap_options(profile);
            // The crate's own rule, applied here (see the module doc).
            self.chunk_target = self.chunk_target();
            let w = options.create(Tracked { sink, pos: Arc::clone(&self.pos) }).map_err(|e| self.fail(e))?;
            self.inner = Some(w);
        }
        self.inner.as_mut().ok_or_else(|| Error::Poisoned("the file is closed".into()))
    }

    fn fail(&mut self, e: mcap::McapError) -> Error {
        let err = match e {
            mcap::McapError::Io(io) => Error::io(&self.path, io),
            other => Error::Invalid(format!("{}: {other}", self.path.display())),
        };
        self.poisoned = Some(err.to_string());
        err
    }

    fn check(&self) -> Result<()> {
        match &self.poisoned {
            Some(p) => Err(Error::Poisoned(p.clone())),
            None => Ok(()),
        }
    }
}

impl StorageWriter for McapWriter {
    fn add_connection(&mut self, conn: &Connection) -> Result<u32> {
        self.check()?;
        let profile = if conn.encoding == "ros1" { "ros1" } else { "ros2" };
        self.writer(profile)?;
        let key = (conn.message_type.clone(), conn.definition_encoding.clone(), conn.definition.clone());
        let schema = match self.schemas.get(&key) {
            Some(&id) => id,
            None if conn.message_type.is_empty() => 0,
            None => {
                let w = self.inner.as_mut().ok_or_else(|| Error::Poisoned("the file is closed".into()))?;
                let id = w.add_schema(&conn.message_type, &conn.definition_encoding, conn.definition.as_bytes());
                let id = id.map_err(|e| self.fail(e))?;
                self.chunk_bytes +=
                    23 + (conn.message_type.len() + conn.definition_encoding.len() + conn.definition.len()) as u64;
                self.schemas.insert(key, id);
                id
            }
        };
        let mut metadata: BTreeMap<String, String> = conn.metadata.clone();
        if let Some(h) = metadata.remove(TYPE_HASH_KEY) {
            metadata.insert(MCAP_TYPE_HASH_KEY.into(), h);
        }
        let w = self.inner.as_mut().ok_or_else(|| Error::Poisoned("the file is closed".into()))?;
        let channel =
            w.add_channel_with_id(self.channels.len() as u16 + 1, schema, &conn.topic, &conn.encoding, &metadata);
        let channel = channel.map_err(|e| self.fail(e))?;
        let map: usize = metadata.iter().map(|(k, v)| 8 + k.len() + v.len()).sum();
        self.chunk_bytes += 25 + (conn.topic.len() + conn.encoding.len() + map) as u64;
        self.channels.push(channel);
        Ok(self.channels.len() as u32)
    }

    fn write(&mut self, conn: u32, log_time: u64, publish_time: u64, data: &[u8]) -> Result<()> {
        self.check()?;
        let channel_id =
            *self.channels.get((conn as usize).wrapping_sub(1)).ok_or(Error::UnknownConnection { id: conn })?;
        let header = mcap::records::MessageHeader { channel_id, sequence: 0, log_time, publish_time };
        if self.chunk_target.is_some_and(|target| self.chunk_bytes > target) {
            self.close_chunk()?;
        }
        let w = self.inner.as_mut().ok_or_else(|| Error::Poisoned("the file is closed".into()))?;
        if let Err(e) = w.write_to_known_channel(&header, data) {
            return Err(self.fail(e));
        }
        self.bytes += data.len() as u64 + 31;
        self.chunk_bytes += data.len() as u64 + 31;
        // A recorder's open chunk is what a crash loses: bound it in time too, and hand the
        // closed chunk to the OS at once.
        if let Some(interval) = self.options.chunk_interval_ns {
            let start = *self.chunk_start.get_or_insert(log_time);
            if log_time.saturating_sub(start) >= interval {
                self.chunk_start = None;
                self.close_chunk()?;
            }
        }
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<()> {
        self.check()?;
        if self.inner.is_none() {
            return Ok(());
        }
        self.chunk_start = None;
        self.close_chunk()
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
        self.writer("ros2")?;
        let meta = self.bag_metadata.take();
        let attachments = std::mem::take(&mut self.attachments);
        let mut records = std::mem::take(&mut self.metadata);
        // A rosbag2 file describes its own bag: a `rosbag2` record given by the caller (copied
        // from an input) would be a second, stale description.
        if meta.is_some() {
            records.retain(|r| r.name != "rosbag2");
        }
        let mut w = self.inner.take().ok_or_else(|| Error::Poisoned("the file is closed".into()))?;
        let result = (|| {
            for a in &attachments {
                w.attach(&mcap::Attachment {
                    log_time: a.log_time,
                    create_time: a.create_time,
                    name: a.name.clone(),
                    media_type: a.media_type.clone(),
                    data: std::borrow::Cow::Borrowed(&a.data[..]),
                })?;
            }
            for r in records {
                w.write_metadata(&mcap::records::Metadata { name: r.name, metadata: r.metadata })?;
            }
            if let Some(yaml) = meta {
                let record = mcap::records::Metadata {
                    name: "rosbag2".into(),
                    metadata: BTreeMap::from([("serialized_metadata".into(), yaml)]),
                };
                w.write_metadata(&record)?;
            }
            w.finish()?;
            w.into_inner().sink.finish()?;
            Ok(())
        })();
        result.map_err(|e| self.fail(e))
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
