//! Reading MCAP through its summary: chunk indexes pick the chunks a query needs (by time and
//! channel), statistics give the counts. A file without a summary (a recorder that crashed) is
//! scanned once at open, with a warning.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use super::parse;
use super::records::{self, op, Raw, Walk, MAGIC};
use crate::mmap::{self, Mapped};
use crate::ros1::record::Limits;
use crate::rosbag2::TYPE_HASH_KEY;
use crate::{
    Compression, Connection, ConnectionStats, Error, Filter, Message, MessageIter, Place,
    ReadOptions, ReadStats, Result, StorageInfo, StorageReader,
};

/// MCAP's name for the channel metadata key rbag calls [`TYPE_HASH_KEY`].
pub const MCAP_TYPE_HASH_KEY: &str = "topic_type_hash";

/// An MCAP file opened for reading.
pub struct McapReader {
    path: PathBuf,
    map: Mapped,
    profile: String,
    library: String,
    connections: Vec<Connection>,
    /// Sorted by (start time, file offset).
    chunks: Vec<ChunkMeta>,
    counts: BTreeMap<u16, u64>,
    metadata: BTreeMap<String, BTreeMap<String, String>>,
    indexed: bool,
    warnings: Vec<String>,
    options: ReadOptions,
    /// Messages per channel id that the statistics (or a scan) count but no Channel record
    /// declares (lenient readers also hold a stand-in connection for each).
    undeclared: BTreeMap<u32, u64>,
    limits: Limits,
    chunks_read: AtomicU64,
    chunks_decompressed: AtomicU64,
    bytes_read: AtomicU64,
}

/// A run of records that holds messages: a Chunk record, or (in files written without chunks)
/// a stretch of top-level records.
#[derive(Debug, Clone)]
struct ChunkMeta {
    offset: u64,
    /// The whole record (chunk) or the stretch of records (loose), in the file.
    range: Range<usize>,
    loose: bool,
    start: u64,
    end: u64,
    /// Channels with messages here; `None` when the file does not say.
    channels: Option<BTreeSet<u16>>,
    /// MessageIndex records (file offsets) by channel.
    message_indexes: Vec<u64>,
    compression: String,
    compressed: u64,
    uncompressed: u64,
    /// The complete records recovered from a chunk the file ends inside.
    salvaged: Option<Bytes>,
}

impl ChunkMeta {
    /// A run found by scanning: its channels, times and counts are filled in as it is read.
    fn scanned(offset: u64, range: Range<usize>, loose: bool, compression: &str) -> Self {
        ChunkMeta {
            offset,
            range,
            loose,
            start: u64::MAX,
            end: 0,
            channels: Some(BTreeSet::new()),
            message_indexes: Vec::new(),
            compression: compression.to_string(),
            compressed: 0,
            uncompressed: 0,
            salvaged: None,
        }
    }
}

/// The compression of a chunk, by its MCAP name (`""` is none).
fn chunk_compression(name: &str) -> Option<Compression> {
    match name {
        "" => Some(Compression::None),
        "zstd" => Some(Compression::Zstd),
        "lz4" => Some(Compression::Lz4),
        _ => None,
    }
}

/// A chunk's messages that a query wants, in log-time order.
struct Loaded {
    data: Bytes,
    entries: Vec<(u64, u64, u16, Range<usize>)>,
}

impl McapReader {
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Opens `path` with `options` (see [`ReadOptions`]).
    pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Self> {
        Self::open_inner(path, *options).map_err(|e| e.in_file(path))
    }

    fn open_inner(path: &Path, options: ReadOptions) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let map = Mapped::new(&file, path).ok_or_else(|| Error::Invalid("empty file, or it cannot be mapped".into()))?;
        // Checked with the map still in hand, so that a file shrinking during open is named
        // as such, not as the damage its lost pages (read as zeros) look like.
        let watch = map.clone();
        mmap::checked(Some(&watch), Self::open_mapped(path, map, options))
    }

    fn open_mapped(path: &Path, map: Mapped, options: ReadOptions) -> Result<Self> {
        let buf = map.slice(0..map.len());
        if !buf.starts_with(MAGIC) {
            return Err(Error::Malformed { offset: 0, what: "MCAP magic", reason: "the file does not start with \\x89MCAP0\\r\\n".into() });
        }
        let mut reader = McapReader {
            path: path.into(),
            map,
            profile: String::new(),
            library: String::new(),
            connections: Vec::new(),
            chunks: Vec::new(),
            counts: BTreeMap::new(),
            metadata: BTreeMap::new(),
            indexed: false,
            warnings: Vec::new(),
            options,
            undeclared: BTreeMap::new(),
            limits: Limits::default(),
            chunks_read: AtomicU64::new(0),
            chunks_decompressed: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
        };
        reader.read_header(&buf)?;
        let summarised = if buf.ends_with(MAGIC) && buf.len() >= 2 * MAGIC.len() + 29 {
            match reader.read_summary(&buf) {
                Ok(true) => true,
                Ok(false) => {
                    reader.warnings.push("the file has no summary with statistics and chunk indexes; it was scanned".into());
                    false
                }
                Err(e) => {
                    reader.warnings.push(format!("the summary section is damaged ({e}); the file was scanned instead"));
                    false
                }
            }
        } else {
            reader.warnings.push("no summary section (the file was not closed: a recorder crash?); the file was scanned instead".into());
            false
        };
        if !summarised {
            reader.chunks.clear();
            reader.counts.clear();
            reader.metadata.clear();
            reader.scan(&buf)?;
        }
        reader.chunks.sort_by_key(|c| (c.start, c.offset));
        reader.find_undeclared();
        Ok(reader)
    }

    /// Finds the channels that messages use (by the statistics or the scan's counts, and the
    /// chunk indexes) but no Channel record declares; a lenient reader adds a stand-in
    /// connection for each.
    fn find_undeclared(&mut self) {
        let declared: BTreeSet<u32> = self.connections.iter().map(|c| c.id).collect();
        let mut found: BTreeMap<u32, u64> = BTreeMap::new();
        for (&ch, &n) in self.counts.iter().filter(|(ch, n)| **n > 0 && !declared.contains(&u32::from(**ch))) {
            found.insert(u32::from(ch), n);
        }
        for set in self.chunks.iter().filter_map(|c| c.channels.as_ref()) {
            for &ch in set.iter().filter(|ch| !declared.contains(&u32::from(**ch))) {
                found.entry(u32::from(ch)).or_default();
            }
        }
        if self.options.lenient && !found.is_empty() {
            let encoding = if self.profile == "ros1" { "ros1" } else { "" };
            self.connections.extend(found.keys().map(|&id| Connection::undeclared(id, encoding)));
            self.connections.sort_by_key(|c| c.id);
            self.warnings.extend(crate::reading::undeclared_warnings("channel", &found));
        }
        self.undeclared = found;
    }

    /// Whether a Channel record declares `ch`.
    fn declared(&self, ch: u16) -> bool {
        !self.undeclared.contains_key(&u32::from(ch)) && self.connection(u32::from(ch)).is_some()
    }

    /// Whether a read with `filter` takes messages of channel `ch`: a wanted one, or one the
    /// file does not know at all, which `filter` would select (it is then an error, not a
    /// message dropped in silence).
    fn selects(&self, wanted: &BTreeSet<u16>, filter: &Filter, ch: u16) -> bool {
        wanted.contains(&ch)
            || (!self.undeclared.contains_key(&u32::from(ch)) && self.connection(u32::from(ch)).is_none() && filter.accepts_undeclared(u32::from(ch)))
    }

    fn read_header(&mut self, buf: &[u8]) -> Result<()> {
        let mut walk = Walk::new(buf, MAGIC.len(), 0, false);
        match walk.next() {
            Some(Ok(r)) if r.op == op::HEADER => {
                let h = parse::header(&buf[r.body.clone()], r.offset)?;
                self.profile = h.profile;
                self.library = h.library;
                Ok(())
            }
            Some(Err(e)) => Err(e),
            _ => Err(Error::Malformed { offset: MAGIC.len() as u64, what: "MCAP header", reason: "the first record is not a Header".into() }),
        }
    }

    /// Reads the summary section; `false` when it lacks what reading needs (statistics, and
    /// chunk indexes for the messages).
    fn read_summary(&mut self, buf: &Bytes) -> Result<bool> {
        let Some(start) = parse::footer(buf)? else { return Ok(false) };
        let end = buf.len() - MAGIC.len() - 29;
        let mut schemas = HashMap::new();
        let mut channels = BTreeMap::new();
        let mut stats = None;
        for rec in Walk::new(&buf[..end], start as usize, 0, false) {
            let rec = rec?;
            let body = &buf[rec.body.clone()];
            match rec.op {
                op::SCHEMA | op::CHANNEL => schema_or_channel(&rec, buf, &mut schemas, &mut channels)?,
                op::STATISTICS => stats = Some(parse::statistics(body, rec.offset)?),
                op::CHUNK_INDEX => {
                    let ci = parse::chunk_index(body, rec.offset)?;
                    let end = ci.chunk_start_offset.checked_add(ci.chunk_length).filter(|&e| e <= buf.len() as u64 && ci.chunk_start_offset >= MAGIC.len() as u64);
                    let Some(end) = end else {
                        return Err(Error::Malformed { offset: rec.offset, what: "MCAP chunk index", reason: format!("chunk at {} of {} bytes is outside the file", ci.chunk_start_offset, ci.chunk_length) });
                    };
                    self.chunks.push(ChunkMeta {
                        offset: ci.chunk_start_offset,
                        range: ci.chunk_start_offset as usize..end as usize,
                        loose: false,
                        start: ci.message_start_time,
                        end: ci.message_end_time,
                        channels: (!ci.message_index_offsets.is_empty()).then(|| ci.message_index_offsets.keys().copied().collect()),
                        message_indexes: ci.message_index_offsets.values().copied().collect(),
                        compression: ci.compression,
                        compressed: ci.compressed_size,
                        uncompressed: ci.uncompressed_size,
                        salvaged: None,
                    });
                }
                op::METADATA_INDEX => {
                    let mi = parse::metadata_index(body, rec.offset)?;
                    let at = usize::try_from(mi.offset).ok().filter(|&a| a < buf.len());
                    match at.and_then(|a| Walk::new(buf, a, 0, false).next()) {
                        Some(Ok(m)) if m.op == op::METADATA => {
                            let (name, map) = parse::metadata(&buf[m.body.clone()], m.offset)?;
                            self.metadata.insert(name, map);
                        }
                        _ => return Err(Error::Malformed { offset: rec.offset, what: "MCAP metadata index", reason: format!("offset {} does not hold a Metadata record", mi.offset) }),
                    }
                }
                _ => {}
            }
        }
        let Some(stats) = stats else { return Ok(false) };
        if self.chunks.is_empty() && stats.message_count > 0 {
            return Ok(false);
        }
        self.indexed = true;
        self.counts = stats.channel_message_counts;
        self.connections = connections(&schemas, &channels);
        Ok(true)
    }

    /// Reads every record once, for files without a usable summary. A torn record at the end
    /// ends the scan with a warning; everything before it is kept.
    fn scan(&mut self, buf: &Bytes) -> Result<()> {
        let mut schemas: HashMap<u16, parse::Schema> = HashMap::new();
        let mut channels: BTreeMap<u16, parse::Channel> = BTreeMap::new();
        let mut loose: Option<ChunkMeta> = None;
        let walk = Walk::new(buf, MAGIC.len(), 0, false);
        for rec in walk {
            let rec = match rec {
                Ok(r) => r,
                Err(e) => {
                    let at = match &e {
                        Error::Truncated { offset, .. } => *offset as usize,
                        _ => buf.len(),
                    };
                    let salvaged = self.salvage_chunk(buf, at, &mut schemas, &mut channels);
                    self.warnings.push(format!("the file ends inside a record ({e}); {salvaged} messages of it were recovered and everything before it was kept"));
                    break;
                }
            };
            if rec.op != op::MESSAGE {
                self.chunks.extend(loose.take());
            }
            match rec.op {
                op::SCHEMA | op::CHANNEL => schema_or_channel(&rec, buf, &mut schemas, &mut channels)?,
                op::MESSAGE => {
                    let m = records::message(&buf[rec.body.clone()], rec.offset)?;
                    *self.counts.entry(m.channel).or_default() += 1;
                    let l = loose.get_or_insert_with(|| ChunkMeta::scanned(rec.offset, rec.offset as usize..rec.offset as usize, true, ""));
                    l.range.end = rec.body.end;
                    l.start = l.start.min(m.log_time);
                    l.end = l.end.max(m.log_time);
                    l.channels.get_or_insert_default().insert(m.channel);
                }
                op::CHUNK => match self.scan_chunk(&rec, buf, &mut schemas, &mut channels) {
                    Ok(meta) => self.chunks.push(meta),
                    Err(e) => {
                        self.warnings.push(format!("chunk at offset {} is damaged and was skipped ({e})", rec.offset));
                    }
                },
                op::METADATA => {
                    let (name, map) = parse::metadata(&buf[rec.body.clone()], rec.offset)?;
                    self.metadata.insert(name, map);
                }
                op::DATA_END | op::FOOTER => break,
                _ => {}
            }
        }
        self.chunks.extend(loose.take());
        self.connections = connections(&schemas, &channels);
        Ok(())
    }

    fn scan_chunk(&mut self, rec: &Raw, buf: &Bytes, schemas: &mut HashMap<u16, parse::Schema>, channels: &mut BTreeMap<u16, parse::Channel>) -> Result<ChunkMeta> {
        let head = records::chunk(&buf[rec.body.clone()], rec.offset)?;
        let data = self.decompress(buf, rec.body.start, &head, rec.offset)?;
        let mut meta = ChunkMeta {
            start: head.start,
            end: head.end,
            compressed: head.records.len() as u64,
            uncompressed: head.uncompressed_size,
            ..ChunkMeta::scanned(rec.offset, rec.offset as usize..rec.body.end, false, &head.compression)
        };
        let mut counts = BTreeMap::new();
        for inner in Walk::new(&data, 0, rec.offset, true) {
            let inner = inner?;
            match inner.op {
                op::SCHEMA | op::CHANNEL => schema_or_channel(&inner, &data, schemas, channels)?,
                op::MESSAGE => {
                    let m = records::message(&data[inner.body.clone()], rec.offset)?;
                    *counts.entry(m.channel).or_insert(0u64) += 1;
                    meta.channels.get_or_insert_default().insert(m.channel);
                }
                _ => {}
            }
        }
        for (c, n) in counts {
            *self.counts.entry(c).or_default() += n;
        }
        Ok(meta)
    }

    /// Recovers the complete messages of a chunk the file ends inside (a recorder killed
    /// mid-write); returns how many.
    fn salvage_chunk(&mut self, buf: &Bytes, at: usize, schemas: &mut HashMap<u16, parse::Schema>, channels: &mut BTreeMap<u16, parse::Channel>) -> usize {
        let Some(rest) = buf.get(at..) else { return 0 };
        if rest.len() < 9 || rest[0] != op::CHUNK {
            return 0;
        }
        let Ok(head) = records::torn_chunk(&rest[9..], at as u64) else { return 0 };
        let body = &rest[9..];
        let Some(compressed) = body.get(head.records.clone()) else { return 0 };
        let data = match chunk_compression(&head.compression) {
            Some(Compression::None) => compressed.to_vec(),
            Some(c) => crate::ros1::compression::salvage(c, compressed, self.limits.salvage_limit(compressed.len())),
            None => return 0,
        };
        let mut meta = ChunkMeta { compressed: compressed.len() as u64, ..ChunkMeta::scanned(at as u64, at..buf.len(), false, &head.compression) };
        let mut complete = 0;
        let mut n = 0;
        for rec in Walk::new(&data, 0, at as u64, true) {
            let Ok(rec) = rec else { break };
            match rec.op {
                op::SCHEMA | op::CHANNEL if schema_or_channel(&rec, &data, schemas, channels).is_err() => break,
                op::MESSAGE => {
                    let Ok(m) = records::message(&data[rec.body.clone()], at as u64) else { break };
                    *self.counts.entry(m.channel).or_default() += 1;
                    meta.channels.get_or_insert_default().insert(m.channel);
                    meta.start = meta.start.min(m.log_time);
                    meta.end = meta.end.max(m.log_time);
                    n += 1;
                }
                _ => {}
            }
            complete = rec.body.end;
        }
        if n > 0 {
            meta.uncompressed = complete as u64;
            meta.salvaged = Some(Bytes::from(data).slice(0..complete));
            self.chunks.push(meta);
        }
        n
    }

    /// The records of a chunk, decompressed and CRC-checked; uncompressed chunks are a slice of
    /// the map.
    fn decompress(&self, buf: &Bytes, body_start: usize, head: &records::ChunkHead, offset: u64) -> Result<Bytes> {
        let compressed = buf.slice(body_start + head.records.start..body_start + head.records.end);
        let data = match chunk_compression(&head.compression) {
            Some(Compression::None) => {
                if head.uncompressed_size != compressed.len() as u64 {
                    return Err(Error::Malformed { offset, what: "MCAP chunk", reason: format!("uncompressed chunk says {} bytes but holds {}", head.uncompressed_size, compressed.len()) });
                }
                compressed
            }
            Some(c) => {
                self.chunks_decompressed.fetch_add(1, Ordering::Relaxed);
                Bytes::from(crate::ros1::compression::decompress(c, &compressed, head.uncompressed_size, offset, &self.limits)?)
            }
            None => return Err(Error::UnsupportedCompression { offset, name: head.compression.clone() }),
        };
        if head.crc != 0 {
            let crc = crc32fast::hash(&data);
            if crc != head.crc {
                return Err(Error::Malformed { offset, what: "MCAP chunk", reason: format!("CRC mismatch: the chunk says {:08x}, its data hashes to {crc:08x}", head.crc) });
            }
        }
        Ok(data)
    }

    /// Decompresses chunk `i` and picks the messages `want` accepts, sorted by log time (file
    /// order for ties).
    fn load(&self, i: usize, want: &dyn Fn(u16, u64) -> bool) -> Result<Loaded> {
        let meta = &self.chunks[i];
        let buf = self.map.slice(0..self.map.len());
        self.chunks_read.fetch_add(1, Ordering::Relaxed);
        self.bytes_read.fetch_add(meta.range.len() as u64, Ordering::Relaxed);
        let (data, base, start) = if let Some(s) = &meta.salvaged {
            (s.clone(), meta.offset, 0)
        } else if meta.loose {
            (buf.clone(), 0, meta.range.start)
        } else {
            let walk = Walk::new(&buf, meta.range.start, 0, false).next();
            let rec = match walk {
                Some(Ok(r)) if r.op == op::CHUNK => r,
                Some(Err(e)) => return Err(e),
                _ => return Err(Error::Malformed { offset: meta.offset, what: "MCAP chunk index", reason: "it does not point at a Chunk record".into() }),
            };
            let head = records::chunk(&buf[rec.body.clone()], rec.offset)?;
            (self.decompress(&buf, rec.body.start, &head, rec.offset)?, meta.offset, 0)
        };
        let end = if meta.loose { meta.range.end } else { data.len() };
        let mut entries = Vec::new();
        for rec in Walk::new(&data[..end], start, base, !meta.loose) {
            let rec = rec?;
            if rec.op != op::MESSAGE {
                continue;
            }
            let m = records::message(&data[rec.body.clone()], rec.offset)?;
            if want(m.channel, m.log_time) {
                let s = rec.body.start;
                entries.push((m.log_time, m.publish_time, m.channel, s + m.data.start..s + m.data.end));
            }
        }
        entries.sort_by_key(|e| e.0);
        Ok(Loaded { data, entries })
    }

    /// The bag's metadata.yaml text, as rosbag2 (Jazzy on) stores it in the file.
    pub fn bag_metadata(&self) -> Option<String> {
        self.metadata.get("rosbag2")?.get("serialized_metadata").cloned()
    }

    fn summary(&self) -> StorageInfo {
        let mut info = StorageInfo {
            format: "mcap",
            version: "0".into(),
            files: vec![self.path.clone()],
            size_bytes: self.map.len() as u64,
            indexed: self.indexed,
            chunk_count: self.chunks.iter().filter(|c| !c.loose).count() as u64,
            ..StorageInfo::default()
        };
        info.properties.insert("profile".into(), self.profile.clone());
        info.properties.insert("library".into(), self.library.clone());
        for c in &self.connections {
            let n = self.counts.get(&(c.id as u16)).copied().unwrap_or(0);
            info.connections.insert(c.id, ConnectionStats { message_count: n, data_bytes: None });
            if !self.undeclared.contains_key(&c.id) {
                info.message_count += n;
            }
        }
        info.message_count += self.undeclared.values().sum::<u64>();
        info.undeclared = self.undeclared.clone();
        for c in self.chunks.iter().filter(|c| !c.loose) {
            let name = if c.compression.is_empty() { "none" } else { c.compression.as_str() };
            let s = info.compression.entry(name.to_string()).or_default();
            s.chunks += 1;
            s.compressed_bytes += c.compressed;
            s.uncompressed_bytes += c.uncompressed;
        }
        if info.message_count > 0 {
            info.start_ns = self.chunks.iter().map(|c| c.start).min();
            info.end_ns = self.chunks.iter().map(|c| c.end).max();
        }
        info
    }

    fn iter(&self, filter: &Filter) -> MessageIter<'_> {
        let mut wanted: BTreeSet<u16> = self.connections.iter().filter(|c| filter.accepts_topic(&c.topic)).map(|c| c.id as u16).collect();
        wanted.extend(self.undeclared.keys().filter(|&&id| filter.accepts_undeclared(id)).map(|&id| id as u16));
        let pending: VecDeque<usize> = (0..self.chunks.len())
            .filter(|&i| {
                let c = &self.chunks[i];
                filter.overlaps(c.start, c.end) && c.channels.as_ref().is_none_or(|set| set.iter().any(|&ch| self.selects(&wanted, filter, ch)))
            })
            .collect();
        let filter = filter.clone();
        let merge = Merge { reader: self, pending, heap: BinaryHeap::new(), loaded: HashMap::new(), wanted, filter, failed: false };
        mmap::checked_iter(Some(&self.map), Box::new(merge))
    }
}

/// Lazy k-way merge over the chunks a query needs: a chunk is decompressed only once the merge
/// reaches its start time, so memory holds just the chunks that overlap in time.
struct Merge<'a> {
    reader: &'a McapReader,
    pending: VecDeque<usize>,
    /// (log time, chunk offset, entry) of each loaded chunk's next message.
    heap: BinaryHeap<Reverse<(u64, u64, usize, usize)>>,
    loaded: HashMap<usize, Loaded>,
    wanted: BTreeSet<u16>,
    filter: Filter,
    failed: bool,
}

impl Merge<'_> {
    fn load_next(&mut self) -> Result<()> {
        let Some(i) = self.pending.pop_front() else { return Ok(()) };
        let (wanted, filter, reader) = (&self.wanted, &self.filter, self.reader);
        let loaded = self.reader.load(i, &|ch, t| filter.accepts_time(t) && reader.selects(wanted, filter, ch))?;
        if let Some(first) = loaded.entries.first() {
            self.heap.push(Reverse((first.0, self.reader.chunks[i].offset, i, 0)));
            self.loaded.insert(i, loaded);
        }
        Ok(())
    }
}

impl Iterator for Merge<'_> {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        if self.failed {
            return None;
        }
        loop {
            let next_start = self.pending.front().map(|&i| self.reader.chunks[i].start);
            let top = self.heap.peek().map(|r| r.0 .0);
            match (next_start, top) {
                (Some(s), t) if t.is_none_or(|t| s <= t) => {
                    if let Err(e) = self.load_next() {
                        self.failed = true;
                        return Some(Err(e.in_file(&self.reader.path)));
                    }
                }
                (_, None) => return None,
                _ => break,
            }
        }
        let Reverse((_, offset, chunk, k)) = self.heap.pop()?;
        let loaded = self.loaded.get(&chunk)?;
        let (log_time, publish_time, channel, range) = loaded.entries[k].clone();
        if !self.reader.declared(channel) && !(self.reader.options.lenient && self.reader.connection(u32::from(channel)).is_some()) {
            // The record starts 31 bytes (op, length, fixed fields) before its payload.
            let meta = &self.reader.chunks[chunk];
            let at = range.start.saturating_sub(31) as u64;
            let at = if meta.loose { Place::Offset(at) } else { Place::InChunk { chunk: meta.offset, at } };
            self.failed = true;
            return Some(Err(Error::UndeclaredConnection { at, kind: "channel", id: u32::from(channel) }.in_file(&self.reader.path)));
        }
        let msg = Message { connection: channel as u32, log_time, publish_time, data: loaded.data.slice(range) };
        if let Some(e) = loaded.entries.get(k + 1) {
            self.heap.push(Reverse((e.0, offset, chunk, k + 1)));
        } else if self.loaded.remove(&chunk).is_some() {
            let meta = &self.reader.chunks[chunk];
            if meta.compression.is_empty() {
                self.reader.map.release(meta.range.clone());
            }
        }
        Some(Ok(msg))
    }
}

/// Collects a Schema or Channel record (top level, in a chunk, or in the summary).
fn schema_or_channel(rec: &Raw, buf: &[u8], schemas: &mut HashMap<u16, parse::Schema>, channels: &mut BTreeMap<u16, parse::Channel>) -> Result<()> {
    let body = &buf[rec.body.clone()];
    if rec.op == op::SCHEMA {
        let s = parse::schema(body, rec.offset)?;
        schemas.insert(s.id, s);
    } else {
        let c = parse::channel(body, rec.offset)?;
        channels.insert(c.id, c);
    }
    Ok(())
}

/// Connections from channels and the schemas they name.
fn connections(schemas: &HashMap<u16, parse::Schema>, channels: &BTreeMap<u16, parse::Channel>) -> Vec<Connection> {
    channels
        .values()
        .map(|c| {
            let schema = schemas.get(&c.schema_id);
            let mut metadata = c.metadata.clone();
            if let Some(h) = metadata.remove(MCAP_TYPE_HASH_KEY) {
                metadata.insert(TYPE_HASH_KEY.into(), h);
            }
            Connection {
                id: c.id as u32,
                topic: c.topic.clone(),
                message_type: schema.map(|s| s.name.clone()).unwrap_or_default(),
                encoding: c.message_encoding.clone(),
                definition: schema.map(|s| String::from_utf8_lossy(&s.data).into_owned()).unwrap_or_default(),
                definition_encoding: schema.map(|s| s.encoding.clone()).unwrap_or_default(),
                metadata,
            }
        })
        .collect()
}

impl StorageReader for McapReader {
    fn connections(&self) -> &[Connection] {
        &self.connections
    }

    fn info(&self) -> Result<StorageInfo> {
        Ok(self.summary())
    }

    fn messages<'a>(&'a self, filter: &Filter) -> Result<MessageIter<'a>> {
        Ok(self.iter(filter))
    }

    fn nth(&self, topic: &str, n: u64) -> Result<Option<Message>> {
        let filter = Filter { topics: vec![topic.into()], ..Filter::default() };
        self.iter(&filter).nth(n as usize).transpose()
    }

    fn median_periods(&self) -> Result<BTreeMap<String, u64>> {
        let mut times: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
        let indexed = self.chunks.iter().all(|c| !c.loose && !c.message_indexes.is_empty());
        if indexed {
            for c in &self.chunks {
                for &off in &c.message_indexes {
                    let rec = Walk::new(&self.map.slice(0..self.map.len()), off as usize, 0, false).next();
                    match rec {
                        Some(Ok(r)) if r.op == op::MESSAGE_INDEX => {
                            let body = self.map.slice(r.body.clone());
                            records::message_index(&body, r.offset, &mut |ch, t| times.entry(ch).or_default().push(t))
                                .map_err(|e| e.in_file(&self.path))?;
                        }
                        Some(Err(e)) => return Err(e.in_file(&self.path)),
                        _ => return Err(Error::Malformed { offset: off, what: "MCAP chunk index", reason: "message index offset does not point at a MessageIndex".into() }.in_file(&self.path)),
                    }
                }
            }
        } else {
            for m in self.iter(&Filter::default()) {
                let m = m?;
                times.entry(m.connection as u16).or_default().push(m.log_time);
            }
        }
        let topic = |ch: u16| self.connection(ch as u32).map(|c| c.topic.as_str()).unwrap_or("");
        mmap::checked(Some(&self.map), Ok(crate::periods::by_topic(times.into_iter().map(|(ch, t)| (topic(ch), t)))))
    }

    fn stats(&self) -> ReadStats {
        ReadStats {
            chunks_read: self.chunks_read.load(Ordering::Relaxed),
            chunks_decompressed: self.chunks_decompressed.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
        }
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}
