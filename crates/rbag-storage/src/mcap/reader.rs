//! Reading MCAP through its summary: chunk indexes pick the chunks a query needs (by time and
//! channel), statistics give the counts. A file without a summary (a recorder that crashed) is
//! scanned once at open, with a warning.
//!
//! A remote file (a [`RangeSource`]) is read the same way: its head, then its tail (the footer
//! and, in most files, the whole summary) in one request, then each chunk a read needs together
//! with the message indexes after it. A remote file without a summary is refused, or downloaded
//! whole with [`ReadOptions::allow_remote_scan`].

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::chunks;
use super::parse;
use super::records::{self, op, Raw, Walk, MAGIC};
use crate::mmap::{self, Mapped};
use crate::readahead::{self, Ahead, Pending, ReadAhead};
use crate::ros1::record::Limits;
use crate::rosbag2::TYPE_HASH_KEY;
use crate::source::{self, Backing, RangeSource, Regions};
use crate::{
    Attachment, ChunkInfo, Compression, Connection, ConnectionStats, Error, Filter, IndexedSizes, Message, MessageIter,
    MetadataRecord, Place, ReadOptions, ReadStats, Result, SchemaInfo, StorageInfo, StorageReader,
};

/// MCAP's name for the channel metadata key rbag calls [`TYPE_HASH_KEY`].
pub const MCAP_TYPE_HASH_KEY: &str = "topic_type_hash";

/// An MCAP file opened for reading.
pub struct McapReader {
    path: PathBuf,
    backing: Backing,
    profile: String,
    library: String,
    connections: Vec<Connection>,
    /// Sorted by (start time, file offset).
    chunks: Vec<ChunkMeta>,
    /// Every chunk index's (channel, MessageIndex offset) pairs, by chunk
    /// ([`Channels::Indexed`] ranges), each chunk's by channel: one list, not a map and a
    /// `Vec` per chunk.
    indexes: Vec<(u16, u64)>,
    counts: BTreeMap<u16, u64>,
    metadata: BTreeMap<String, BTreeMap<String, String>>,
    /// Every Metadata record, in file order (names repeat; `metadata` keeps the last of each).
    metadata_records: Vec<MetadataRecord>,
    /// (offset, length) of every Attachment record: read only when asked for.
    attachment_at: Vec<(u64, u64)>,
    /// The summary counts more attachments or metadata records than it indexes: they are
    /// found by a scan of the data section when asked for.
    extras_unindexed: bool,
    schemas: Vec<SchemaInfo>,
    /// Each channel's schema id and the length of its Channel record, and each schema's
    /// Schema record length: the records writers put in a chunk before a channel's first
    /// message, which size estimates take off.
    record_lengths: (BTreeMap<u16, (u16, u64)>, BTreeMap<u16, u64>),
    indexed: bool,
    /// The subset of `warnings` that says data could not be read (a torn record, a damaged
    /// chunk skipped).
    lost: Vec<String>,
    warnings: Vec<String>,
    options: ReadOptions,
    /// Messages per channel id that the statistics (or a scan) count but no Channel record
    /// declares (lenient readers also hold a stand-in connection for each).
    undeclared: BTreeMap<u32, u64>,
    limits: Limits,
    chunks_read: AtomicU64,
    chunks_decompressed: AtomicU64,
    bytes_read: AtomicU64,
    /// Compressed chunks decompressed ahead of the read on worker threads
    /// ([`ReadOptions::threads`]); within the memory budget.
    ahead: Mutex<ReadAhead>,
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
    /// Channels with messages here, and their MessageIndex records.
    channels: Channels,
    /// Where the message indexes after the chunk end (the chunk's own end when it has none):
    /// a remote read fetches the chunk up to here in one request.
    index_end: u64,
    /// Its MCAP name (`""` is none), shared by every chunk with the same one.
    compression: Arc<str>,
    compressed: u64,
    uncompressed: u64,
    /// A chunk the file ends inside: its records decode as far as they go, and `uncompressed`
    /// bytes of them are complete.
    salvaged: bool,
}

/// A chunk's channels with messages.
#[derive(Debug, Clone)]
enum Channels {
    /// The file does not say.
    Unknown,
    /// From the chunk index, which names one or more: `McapReader::indexes[range]`.
    Indexed(Range<usize>),
    /// Found by reading the chunk's records (no message indexes).
    Scanned(BTreeSet<u16>),
}

impl Channels {
    /// Adds a channel found by reading records.
    fn insert(&mut self, ch: u16) {
        match self {
            Channels::Scanned(set) => {
                set.insert(ch);
            }
            _ => *self = Channels::Scanned(BTreeSet::from([ch])),
        }
    }
}

impl ChunkMeta {
    /// The chunk and the message indexes after it.
    fn region(&self) -> Range<u64> {
        self.offset..self.index_end.max(self.range.end as u64)
    }

    /// A run found by scanning: its channels, times and counts are filled in as it is read.
    fn scanned(offset: u64, range: Range<usize>, loose: bool, compression: &str) -> Self {
        ChunkMeta {
            offset,
            index_end: range.end as u64,
            range,
            loose,
            start: u64::MAX,
            end: 0,
            channels: Channels::Scanned(BTreeSet::new()),
            compression: Arc::from(compression),
            compressed: 0,
            uncompressed: 0,
            salvaged: false,
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

/// A message a query wants: its log time, where its record starts (in its chunk's records, or
/// in the file for messages outside chunks) and its channel.
#[derive(Debug, Clone, Copy)]
struct Entry {
    log_time: u64,
    at: u64,
    channel: u16,
}

/// Chunks up to this many decompressed bytes (and within the memory budget) are read whole as
/// soon as a query reaches them; larger ones only when one of their messages is next, with
/// their entries taken from their message indexes (or a streamed pass).
/// The last bytes of a remote MCAP file, fetched in one request at open: the footer and, in
/// most files, the whole summary section and the Metadata records before it (a summary beyond
/// them costs one more request). A 4,096th of the file, within 64 KiB..1 MiB: a summary grows
/// with the chunk count, so with the file.
fn remote_tail(len: u64) -> u64 {
    (len / 4096).clamp(64 << 10, 1 << 20)
}

fn eager_max() -> u64 {
    (crate::budget::limit() / 16).min(32 << 20)
}

impl McapReader {
    /// Opens an MCAP file with the default [`ReadOptions`].
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Opens `path` with `options` (see [`ReadOptions`]).
    pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Self> {
        Self::open_inner(path, options.clone()).map_err(|e| e.in_file(path))
    }

    fn open_inner(path: &Path, options: ReadOptions) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let map =
            Mapped::new(&file, path).ok_or_else(|| Error::Invalid("empty file, or it cannot be mapped".into()))?;
        // Checked with the map still in hand, so that a file shrinking during open is named
        // as such, not as the damage its lost pages (read as zeros) look like.
        let watch = map.clone();
        mmap::checked(Some(&watch), Self::open_mapped(path.into(), map, options))
    }

    /// Opens a remote MCAP file through its summary: the head (in `head`, the object's first
    /// bytes, already fetched), then the footer and summary. A file without a usable summary is
    /// an [`Error::Remote`], or downloaded whole and scanned with
    /// [`ReadOptions::allow_remote_scan`].
    pub fn from_source(source: Arc<dyn RangeSource>, head: Bytes, options: &ReadOptions) -> Result<Self> {
        let path = PathBuf::from(source.url());
        let regions = Regions::new(source.clone());
        let (len, whole) = (source.len(), head.len() as u64 == source.len());
        regions.pin(0, head);
        if !whole {
            // The footer and, in most files, the whole summary: one request, kept.
            regions.get(len.saturating_sub(remote_tail(len))..len, true)?;
        }
        let mut reader = Self::blank(path.clone(), Backing::Remote(regions), options.clone());
        let unsummarised = reader.read_header().and_then(|()| reader.try_summary()).map_err(|e| e.in_file(&path))?;
        let Some(why) = unsummarised else {
            reader.finish_open();
            return Ok(reader);
        };
        if !options.allow_remote_scan {
            return Err(Error::RemoteScan { url: source.url().to_string(), why, size: len });
        }
        let temp = std::env::temp_dir();
        let mut file = tempfile::tempfile().map_err(|e| Error::io(&temp, e))?;
        source::download(&*source, &mut file, &temp)?;
        let map =
            Mapped::new(&file, &path).ok_or_else(|| Error::Invalid("the downloaded copy cannot be mapped".into()))?;
        let watch = map.clone();
        let mut reader = mmap::checked(Some(&watch), Self::open_mapped(path.clone(), map, options.clone()))?;
        reader.warnings.push(format!("{} was downloaded whole ({} bytes) to be scanned", source.url(), source.len()));
        Ok(reader)
    }

    fn blank(path: PathBuf, backing: Backing, options: ReadOptions) -> Self {
        McapReader {
            lost: Vec::new(),
            path,
            backing,
            profile: String::new(),
            library: String::new(),
            connections: Vec::new(),
            chunks: Vec::new(),
            indexes: Vec::new(),
            counts: BTreeMap::new(),
            metadata: BTreeMap::new(),
            metadata_records: Vec::new(),
            attachment_at: Vec::new(),
            extras_unindexed: false,
            schemas: Vec::new(),
            record_lengths: Default::default(),
            indexed: false,
            warnings: Vec::new(),
            ahead: Mutex::new(ReadAhead::new(crate::pool::resolve(options.threads))),
            options,
            undeclared: BTreeMap::new(),
            limits: Limits::default(),
            chunks_read: AtomicU64::new(0),
            chunks_decompressed: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
        }
    }

    fn open_mapped(path: PathBuf, map: Mapped, options: ReadOptions) -> Result<Self> {
        let buf = map.slice(0..map.len());
        let mut reader = Self::blank(path, Backing::Local(map), options);
        reader.read_header()?;
        if let Some(why) = reader.try_summary()? {
            reader.warnings.push(format!("{why}; the file was scanned instead"));
            reader.chunks.clear();
            reader.indexes = Vec::new();
            reader.counts.clear();
            reader.metadata.clear();
            reader.metadata_records.clear();
            reader.attachment_at.clear();
            reader.scan(&buf)?;
        }
        reader.finish_open();
        Ok(reader)
    }

    /// Reads the summary when the file has a usable one; otherwise says why not.
    fn try_summary(&mut self) -> Result<Option<String>> {
        let len = self.backing.len();
        let (tail, base) = self.backing.around(len.saturating_sub(MAGIC.len() as u64)..len, true)?;
        if !(tail.ends_with(MAGIC) && base + tail.len() as u64 == len && len >= 2 * MAGIC.len() as u64 + 29) {
            return Ok(Some("no summary section (the file was not closed: a recorder crash?)".into()));
        }
        match self.read_summary() {
            Ok(true) => Ok(None),
            Ok(false) => Ok(Some("the file has no summary with statistics and chunk indexes".into())),
            // A remote read that failed is not damage: it is the error.
            Err(e @ Error::Remote { .. }) => Err(e),
            Err(e) => Ok(Some(format!("the summary section is damaged ({e})"))),
        }
    }

    fn finish_open(&mut self) {
        // Summaries list chunks in order: checked first, the sort's buffer is then not needed.
        if !self.chunks.is_sorted_by_key(|c| (c.start, c.offset)) {
            self.chunks.sort_by_key(|c| (c.start, c.offset));
        }
        self.find_undeclared();
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
        for c in &self.chunks {
            self.each_channel(c, |ch| {
                if !declared.contains(&u32::from(ch)) {
                    found.entry(u32::from(ch)).or_default();
                }
            });
        }
        if self.options.lenient && !found.is_empty() {
            let encoding = if self.profile == "ros1" { "ros1" } else { "" };
            self.connections.extend(found.keys().map(|&id| Connection::undeclared(id, encoding)));
            self.connections.sort_by_key(|c| c.id);
            self.warnings.extend(crate::reading::undeclared_warnings("channel", &found));
        }
        self.undeclared = found;
    }

    /// Chunk `c`'s (channel, MessageIndex offset) pairs, by channel; empty when it has none.
    fn index_of(&self, c: &ChunkMeta) -> &[(u16, u64)] {
        match &c.channels {
            Channels::Indexed(r) => self.indexes.get(r.clone()).unwrap_or_default(),
            _ => &[],
        }
    }

    /// Calls `f` with each channel chunk `c` has messages of, in order; `false` when the file
    /// does not say which.
    fn each_channel(&self, c: &ChunkMeta, mut f: impl FnMut(u16)) -> bool {
        match &c.channels {
            Channels::Unknown => return false,
            Channels::Indexed(_) => self.index_of(c).iter().for_each(|e| f(e.0)),
            Channels::Scanned(set) => set.iter().for_each(|&ch| f(ch)),
        }
        true
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
            || (!self.undeclared.contains_key(&u32::from(ch))
                && self.connection(u32::from(ch)).is_none()
                && filter.accepts_undeclared(u32::from(ch)))
    }

    fn read_header(&mut self) -> Result<()> {
        let prefix = MAGIC.len() as u64 + 9;
        let (buf, _) = self.backing.around(0..prefix.min(self.backing.len()), true)?;
        if !buf.starts_with(MAGIC) {
            return Err(Error::Malformed {
                offset: 0,
                what: "MCAP magic",
                reason: "the file does not start with \\x89MCAP0\\r\\n".into(),
            });
        }
        let not_header = || Error::Malformed {
            offset: MAGIC.len() as u64,
            what: "MCAP header",
            reason: "the first record is not a Header".into(),
        };
        let head = buf.get(MAGIC.len()..prefix as usize).ok_or_else(not_header)?;
        let body_len = parse::Cursor::new(&head[1..], MAGIC.len() as u64 + 1, "MCAP header").u64()?;
        if head[0] != op::HEADER || body_len > self.limits.max_data_len {
            return Err(not_header());
        }
        let (buf, base) = self.backing.around(0..(prefix + body_len).min(self.backing.len()), true)?;
        match Walk::new(&buf, MAGIC.len() - base as usize, base, false).next() {
            Some(Ok(r)) if r.op == op::HEADER => {
                let h = parse::header(&buf[r.body.clone()], r.offset)?;
                self.profile = h.profile;
                self.library = h.library;
                Ok(())
            }
            Some(Err(e)) => Err(e),
            _ => Err(not_header()),
        }
    }

    /// Reads the summary section; `false` when it lacks what reading needs (statistics, and
    /// chunk indexes for the messages).
    fn read_summary(&mut self) -> Result<bool> {
        let len = self.backing.len();
        let end = len - MAGIC.len() as u64 - 29;
        let (tail, base) = self.backing.around(end..len, true)?;
        let Some(start) = parse::footer(&tail[(end - base) as usize..], end)? else { return Ok(false) };
        let (buf, base) = self.backing.around(start..end, true)?;
        let mut schemas = HashMap::new();
        let mut channels = BTreeMap::new();
        let mut stats = None;
        // Room for as many chunks (and 3 channels each) as the summary can hold chunk indexes
        // (over 73 bytes each): one allocation, whose untouched part costs nothing, not a
        // doubling series of copies of ~13 000 entries.
        // Only a hint, up to a million chunks: a failed one is not an error.
        let most = ((end - start) / 73).min(1 << 20) as usize;
        let _ = self.chunks.try_reserve(most);
        let _ = self.indexes.try_reserve(most * 3);
        // Compression names, one shared copy of each.
        let mut names: Vec<Arc<str>> = Vec::new();
        for rec in Walk::new(&buf[..(end - base) as usize], (start - base) as usize, base, false) {
            let rec = rec?;
            let body = &buf[rec.body.clone()];
            match rec.op {
                op::SCHEMA | op::CHANNEL => schema_or_channel(&rec, &buf, &mut schemas, &mut channels)?,
                op::STATISTICS => stats = Some(parse::statistics(body, rec.offset)?),
                op::CHUNK_INDEX => {
                    let from = self.indexes.len();
                    let ci = parse::chunk_index_into(body, rec.offset, &mut self.indexes)?;
                    let end = ci
                        .chunk_start_offset
                        .checked_add(ci.chunk_length)
                        .filter(|&e| e <= len && ci.chunk_start_offset >= MAGIC.len() as u64);
                    let Some(end) = end else {
                        return Err(Error::Malformed {
                            offset: rec.offset,
                            what: "MCAP chunk index",
                            reason: format!(
                                "chunk at {} of {} bytes is outside the file",
                                ci.chunk_start_offset, ci.chunk_length
                            ),
                        });
                    };
                    // The message indexes follow the chunk; a length that runs past the file
                    // is not trusted.
                    let index_end = end.checked_add(ci.message_index_length).filter(|&e| e <= len).unwrap_or(end);
                    let compression = match names.iter().find(|n| &***n == ci.compression) {
                        Some(n) => n.clone(),
                        None => {
                            names.push(Arc::from(ci.compression));
                            names[names.len() - 1].clone()
                        }
                    };
                    let to = self.indexes.len();
                    self.chunks.push(ChunkMeta {
                        offset: ci.chunk_start_offset,
                        index_end,
                        range: ci.chunk_start_offset as usize..end as usize,
                        loose: false,
                        start: ci.message_start_time,
                        end: ci.message_end_time,
                        channels: if to > from { Channels::Indexed(from..to) } else { Channels::Unknown },
                        compression,
                        compressed: ci.compressed_size,
                        uncompressed: ci.uncompressed_size,
                        salvaged: false,
                    });
                }
                op::METADATA_INDEX => {
                    let mi = parse::metadata_index(body, rec.offset)?;
                    let at =
                        mi.offset.checked_add(mi.length).filter(|&e| e <= len && mi.length <= self.limits.max_data_len);
                    let found = match at {
                        Some(e) => {
                            let (m, b) = self.backing.around(mi.offset..e, false)?;
                            let rec = Walk::new(&m, (mi.offset - b) as usize, b, false).next();
                            rec.map(|r| r.map(|r| (r, m)))
                        }
                        None => None,
                    };
                    match found {
                        Some(Ok((m, mb))) if m.op == op::METADATA => {
                            let (name, map) = parse::metadata(&mb[m.body.clone()], m.offset)?;
                            self.add_metadata_record(name, map, m.offset, mi.length);
                        }
                        _ => {
                            return Err(Error::Malformed {
                                offset: rec.offset,
                                what: "MCAP metadata index",
                                reason: format!("offset {} does not hold a Metadata record", mi.offset),
                            })
                        }
                    }
                }
                op::ATTACHMENT_INDEX => {
                    let ai = parse::attachment_index(body, rec.offset)?;
                    self.attachment_at.push((ai.offset, ai.length));
                }
                _ => {}
            }
        }
        let Some(stats) = stats else { return Ok(false) };
        if self.chunks.is_empty() && stats.message_count > 0 {
            return Ok(false);
        }
        self.extras_unindexed = stats.attachment_count as usize > self.attachment_at.len()
            || stats.metadata_count as usize > self.metadata_records.len();
        self.indexed = true;
        self.counts = stats.channel_message_counts;
        self.connections = connections(&schemas, &channels);
        self.schemas = schema_list(&schemas, &channels);
        self.record_lengths = record_lengths(&schemas, &channels);
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
                    let lost = format!("the file ends inside a record ({e}); {salvaged} messages of it were recovered and everything before it was kept");
                    self.warnings.push(lost.clone());
                    self.lost.push(lost);
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
                    let l = loose.get_or_insert_with(|| {
                        ChunkMeta::scanned(rec.offset, rec.offset as usize..rec.offset as usize, true, "")
                    });
                    l.range.end = rec.body.end;
                    l.start = l.start.min(m.log_time);
                    l.end = l.end.max(m.log_time);
                    l.channels.insert(m.channel);
                }
                op::CHUNK => match self.scan_chunk(&rec, buf, &mut schemas, &mut channels) {
                    Ok(meta) => self.chunks.push(meta),
                    Err(e) => {
                        let lost = format!("chunk at offset {} is damaged and was skipped ({e})", rec.offset);
                        self.warnings.push(lost.clone());
                        self.lost.push(lost);
                    }
                },
                op::METADATA => {
                    let (name, map) = parse::metadata(&buf[rec.body.clone()], rec.offset)?;
                    self.add_metadata_record(name, map, rec.offset, rec.body.end as u64 - rec.offset);
                }
                op::ATTACHMENT => self.attachment_at.push((rec.offset, rec.body.end as u64 - rec.offset)),
                op::DATA_END | op::FOOTER => break,
                _ => {}
            }
        }
        self.chunks.extend(loose.take());
        self.connections = connections(&schemas, &channels);
        self.schemas = schema_list(&schemas, &channels);
        self.record_lengths = record_lengths(&schemas, &channels);
        Ok(())
    }

    fn scan_chunk(
        &mut self,
        rec: &Raw,
        buf: &Bytes,
        schemas: &mut HashMap<u16, parse::Schema>,
        channels: &mut BTreeMap<u16, parse::Channel>,
    ) -> Result<ChunkMeta> {
        let head = records::chunk(&buf[rec.body.clone()], rec.offset)?;
        let source = source_of(buf, rec, &head, false)?;
        let mut meta = ChunkMeta {
            start: head.start,
            end: head.end,
            compressed: head.records.len() as u64,
            uncompressed: head.uncompressed_size,
            ..ChunkMeta::scanned(rec.offset, rec.offset as usize..rec.body.end, false, &head.compression)
        };
        if source.compression != Compression::None {
            self.chunks_decompressed.fetch_add(1, Ordering::Relaxed);
        }
        // Held when the budget has room for it, else streamed: either way every record is read.
        let mut data = source.data(true)?;
        let mut counts = BTreeMap::new();
        chunks::walk(&mut data, rec.offset, false, u64::MAX, &mut |item| {
            match item {
                chunks::Item::Meta { op, body } => schema_or_channel_body(op, body, rec.offset, schemas, channels)?,
                chunks::Item::Message { channel, .. } => {
                    *counts.entry(channel).or_insert(0u64) += 1;
                    meta.channels.insert(channel);
                }
            }
            Ok(())
        })?;
        for (c, n) in counts {
            *self.counts.entry(c).or_default() += n;
        }
        Ok(meta)
    }

    /// Recovers the complete messages of a chunk the file ends inside (a recorder killed
    /// mid-write); returns how many. Its records are streamed, up to
    /// [`Limits::salvage_limit`] bytes.
    fn salvage_chunk(
        &mut self,
        buf: &Bytes,
        at: usize,
        schemas: &mut HashMap<u16, parse::Schema>,
        channels: &mut BTreeMap<u16, parse::Channel>,
    ) -> usize {
        let Some(rest) = buf.get(at..) else { return 0 };
        if rest.len() < 9 || rest[0] != op::CHUNK {
            return 0;
        }
        let Ok(head) = records::torn_chunk(&rest[9..], at as u64) else { return 0 };
        let raw = Raw { op: op::CHUNK, body: at + 9..buf.len(), offset: at as u64 };
        let Ok(source) = source_of(buf, &raw, &head, true) else { return 0 };
        let Ok(mut data) = source.data(false) else { return 0 };
        let limit = self.limits.salvage_limit(source.compressed.len());
        let mut meta = ChunkMeta {
            compressed: source.compressed.len() as u64,
            ..ChunkMeta::scanned(at as u64, at..buf.len(), false, &head.compression)
        };
        let mut n = 0;
        let mut counts: BTreeMap<u16, u64> = BTreeMap::new();
        let complete = chunks::walk(&mut data, at as u64, true, limit, &mut |item| {
            match item {
                chunks::Item::Meta { op, body } => schema_or_channel_body(op, body, at as u64, schemas, channels)?,
                chunks::Item::Message { channel, log_time, .. } => {
                    *counts.entry(channel).or_default() += 1;
                    meta.channels.insert(channel);
                    meta.start = meta.start.min(log_time);
                    meta.end = meta.end.max(log_time);
                    n += 1;
                }
            }
            Ok(())
        });
        let Ok(complete) = complete else { return 0 };
        if n > 0 {
            for (c, k) in counts {
                *self.counts.entry(c).or_default() += k;
            }
            meta.uncompressed = complete;
            meta.salvaged = true;
            self.chunks.push(meta);
        }
        n
    }

    /// Where chunk `i`'s records are and how they decode.
    fn source(&self, i: usize) -> Result<chunks::Source> {
        let meta = &self.chunks[i];
        let (buf, base) = self.region(meta)?;
        let start = (meta.offset - base) as usize;
        let rec = match Walk::new(&buf, start, base, false).next() {
            Some(Ok(r)) if r.op == op::CHUNK => r,
            // A torn chunk runs to the end of the file.
            Some(Err(_)) | None if meta.salvaged => {
                Raw { op: op::CHUNK, body: start + 9..buf.len(), offset: meta.offset }
            }
            Some(Err(e)) => return Err(e),
            _ => {
                return Err(Error::Malformed {
                    offset: meta.offset,
                    what: "MCAP chunk index",
                    reason: "it does not point at a Chunk record".into(),
                })
            }
        };
        let body = buf.get(rec.body.clone()).unwrap_or_default();
        let head =
            if meta.salvaged { records::torn_chunk(body, rec.offset)? } else { records::chunk(body, rec.offset)? };
        let mut source = source_of(&buf, &rec, &head, meta.salvaged)?;
        if meta.salvaged {
            source.size = meta.uncompressed;
        }
        Ok(source)
    }

    /// The messages of chunk `i` that `want` accepts, sorted by log time (file order for ties),
    /// with the chunk's records when they were read to find them. A large chunk with message
    /// indexes is not read here at all.
    fn entries(&self, i: usize, want: &dyn Fn(u16, u64) -> bool) -> Result<(Vec<Entry>, Option<chunks::Data>)> {
        let meta = &self.chunks[i];
        self.bytes_read.fetch_add(meta.range.len() as u64, Ordering::Relaxed);
        let mut entries = Vec::new();
        if meta.loose {
            // Only scanned (local) files have loose runs: `buf` is the whole file.
            let (buf, _) = self.region(meta)?;
            for rec in Walk::new(&buf[..meta.range.end], meta.range.start, 0, false) {
                let rec = rec?;
                if rec.op == op::MESSAGE {
                    let m = records::message(&buf[rec.body.clone()], rec.offset)?;
                    if want(m.channel, m.log_time) {
                        entries.push(Entry { log_time: m.log_time, at: rec.offset, channel: m.channel });
                    }
                }
            }
            entries.sort_by_key(|e| (e.log_time, e.at));
            return Ok((entries, Some(chunks::Data::Held(buf))));
        }
        let large = meta.uncompressed > eager_max();
        if large && !meta.salvaged && !self.index_of(meta).is_empty() {
            let (buf, base) = self.region(meta)?;
            for &(_, off) in self.index_of(meta) {
                message_index_at(&buf, base, off, &mut |ch, t, at| {
                    if want(ch, t) {
                        entries.push(Entry { log_time: t, at, channel: ch });
                    }
                })?;
            }
            entries.sort_by_key(|e| (e.log_time, e.at));
            return Ok((entries, None));
        }
        let mut data = self.chunk_data(i, !large)?;
        chunks::walk(&mut data, meta.offset, false, u64::MAX, &mut |item| {
            if let chunks::Item::Message { at, channel, log_time, .. } = item {
                if want(channel, log_time) {
                    entries.push(Entry { log_time, at, channel });
                }
            }
            Ok(())
        })?;
        entries.sort_by_key(|e| (e.log_time, e.at));
        Ok((entries, Some(data)))
    }

    /// The bytes around chunk `meta` and its message indexes, and the file offset of the first:
    /// the whole map for a local file, one kept region (one request) for a remote one.
    fn region(&self, meta: &ChunkMeta) -> Result<(Bytes, u64)> {
        self.backing.around(meta.region(), false)
    }

    /// Prepares chunk `current` (being opened) and the chunks `next` (in reading order) ahead
    /// of their reading: a local file with threads decompresses them on worker threads (see
    /// `crate::readahead`); a remote file is asked for the regions of `next`.
    fn read_ahead(&self, current: usize, mut next: impl Iterator<Item = usize>) {
        match &self.backing {
            Backing::Remote(r) => r.ahead(next.map(|j| self.chunks[j].region())),
            Backing::Local(_) => {
                let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
                if ahead.enabled() {
                    ahead.plan(Some(current), &mut next, &mut |j| self.ahead_job(j));
                }
            }
        }
    }

    /// The decompression of chunk `i` on a read-ahead thread: what [`McapReader::chunk_data`]
    /// holds, paid for before it is queued. Chunks too large to hold, and anything that does
    /// not check out, are left to the reading thread.
    fn ahead_job(&self, i: usize) -> Ahead {
        let meta = &self.chunks[i];
        if meta.loose || meta.uncompressed > eager_max() {
            return Ahead::Skip;
        }
        let Ok(source) = self.source(i) else { return Ahead::Skip };
        if source.compression == Compression::None || source.size > eager_max() {
            return Ahead::Skip;
        }
        let Some(paid) = readahead::reserve(source.size) else { return Ahead::Stop };
        Ahead::Job(Pending {
            offset: source.offset,
            what: "MCAP chunk",
            bytes: source.size,
            job: Box::new(move || source.decompress(paid)),
        })
    }

    /// Chunk `i` from the read-ahead, where it holds it (see `ReadAhead::take_as_reader`).
    fn ahead_take(&self, i: usize, hold: bool, size: u64) -> Option<Result<Bytes>> {
        self.ahead.lock().unwrap_or_else(|e| e.into_inner()).take_as_reader(i, hold, size)
    }

    /// Gives the read-ahead's buffers back to the budget (the reading thread comes first);
    /// whether anything was given back.
    fn clear_ahead(&self) -> bool {
        self.ahead.lock().unwrap_or_else(|e| e.into_inner()).clear()
    }

    /// Chunk `i`'s records, held whole when `hold` and the memory budget has room, else
    /// streamed.
    fn chunk_data(&self, i: usize, hold: bool) -> Result<chunks::Data> {
        self.chunks_read.fetch_add(1, Ordering::Relaxed);
        let source = self.source(i)?;
        if source.compression != Compression::None {
            self.chunks_decompressed.fetch_add(1, Ordering::Relaxed);
            if let Some(done) = self.ahead_take(i, hold, source.size) {
                return Ok(chunks::Data::Held(done?));
            }
            if hold && source.size > crate::budget::limit().saturating_sub(crate::budget::used()) {
                self.clear_ahead();
            }
        }
        source.data(hold)
    }

    fn add_metadata_record(&mut self, name: String, map: BTreeMap<String, String>, offset: u64, length: u64) {
        self.metadata.insert(name.clone(), map.clone());
        self.metadata_records.push(MetadataRecord { name, metadata: map, file: self.path.clone(), offset, length });
    }

    /// (offset, length) of every Attachment record and every Metadata record, found by walking
    /// the data section's top-level records: for files whose summary does not index them all.
    /// A remote file is not scanned (that would download it): its indexes are all there is.
    #[allow(clippy::type_complexity)]
    fn scan_extras(&self) -> Result<(Vec<(u64, u64)>, Vec<MetadataRecord>)> {
        let Some(map) = self.backing.map() else {
            let metadata = self.metadata_records.clone();
            return Ok((self.attachment_at.clone(), metadata));
        };
        let buf = map.slice(0..map.len());
        let (mut attachments, mut metadata) = (Vec::new(), Vec::new());
        for rec in Walk::new(&buf, MAGIC.len(), 0, false) {
            let Ok(rec) = rec else { break };
            let length = rec.body.end as u64 - rec.offset;
            match rec.op {
                op::ATTACHMENT => attachments.push((rec.offset, length)),
                op::METADATA => {
                    let (name, map) = parse::metadata(&buf[rec.body.clone()], rec.offset)?;
                    let file = self.path.clone();
                    metadata.push(MetadataRecord { name, metadata: map, file, offset: rec.offset, length });
                }
                op::DATA_END | op::FOOTER => break,
                _ => {}
            }
        }
        Ok((attachments, metadata))
    }

    /// The Attachment record at `offset` (`length` bytes), its data a slice of the file.
    fn attachment_at(&self, offset: u64, length: u64) -> Result<Attachment> {
        let not_there = || Error::Malformed {
            offset,
            what: "MCAP attachment index",
            reason: format!("offset {offset} does not hold an Attachment record"),
        };
        let end = offset.checked_add(length).filter(|&e| e <= self.backing.len()).ok_or_else(not_there)?;
        let (buf, base) = self.backing.around(offset..end, false)?;
        let rec = match Walk::new(&buf, (offset - base) as usize, base, false).next() {
            Some(Ok(r)) if r.op == op::ATTACHMENT => r,
            Some(Err(e)) => return Err(e),
            _ => return Err(not_there()),
        };
        let a = parse::attachment(&buf[rec.body.clone()], offset)?;
        let start = rec.body.start;
        Ok(Attachment {
            name: a.name,
            media_type: a.media_type,
            log_time: a.log_time,
            create_time: a.create_time,
            data: buf.slice(start + a.data.start..start + a.data.end),
            crc: a.crc,
            file: self.path.clone(),
            offset,
            length: base + rec.body.end as u64 - offset,
        })
    }

    /// Payload bytes per channel from the message indexes: each message's record runs to the
    /// next record's offset in its chunk, less its 31 bytes of op, length and fixed fields.
    /// The Schema and Channel records a writer puts in the chunk of a channel's first message
    /// are taken off: those that fill the gap before the chunk's first message were written
    /// there (rosbag2 registers topics up front), the others just before that first message
    /// (the mcap writers' default), so they come off the message before it.
    fn sizes_from_indexes(&self) -> Result<Option<IndexedSizes>> {
        if self.chunks.iter().any(|c| c.loose || c.salvaged || self.index_of(c).is_empty()) {
            return Ok(None);
        }
        let mut bytes: BTreeMap<u32, u64> = self.connections.iter().map(|c| (c.id, 0)).collect();
        let mut seen = Introduced::default();
        let mut in_file_order: Vec<&ChunkMeta> = self.chunks.iter().collect();
        in_file_order.sort_by_key(|c| c.offset);
        for c in in_file_order {
            for (ch, (b, _)) in self.chunk_sizes(c, &mut seen)? {
                *bytes.entry(u32::from(ch)).or_default() += b;
            }
        }
        Ok(Some(IndexedSizes { bytes, exact: false }))
    }

    /// Chunk `c`'s payload bytes and messages by channel, from its message indexes; `seen`
    /// holds the channels and schemas met in earlier chunks, and is updated only once the
    /// indexes were read.
    fn chunk_sizes(&self, c: &ChunkMeta, seen: &mut Introduced) -> Result<BTreeMap<u16, (u64, u64)>> {
        let (channel_len, schema_len) = &self.record_lengths;
        let (buf, base) = self.region(c)?;
        let mut at: Vec<(u64, u16)> = Vec::new();
        for &(_, off) in self.index_of(c) {
            message_index_at(&buf, base, off, &mut |ch, _, pos| at.push((pos, ch)))?;
        }
        at.sort_unstable();
        let mut extents: Vec<u64> =
            (0..at.len()).map(|k| at.get(k + 1).map_or(c.uncompressed, |n| n.0).saturating_sub(at[k].0)).collect();
        // (entry, bytes of the records introducing its channel) for channels new here.
        let mut intro: Vec<(usize, u64)> = Vec::new();
        for (k, &(_, ch)) in at.iter().enumerate() {
            if seen.channels.insert(ch) {
                let (schema, len) = channel_len.get(&ch).copied().unwrap_or((0, 0));
                let schema = if schema != 0 && seen.schemas.insert(schema) { schema_len.get(&schema) } else { None };
                intro.push((k, len + schema.copied().unwrap_or(0)));
            }
        }
        let mut gap = at.first().map_or(0, |a| a.0);
        for (k, len) in intro {
            if len <= gap {
                gap -= len;
            } else if k > 0 {
                gap = 0;
                extents[k - 1] = extents[k - 1].saturating_sub(len);
            }
        }
        let mut out: BTreeMap<u16, (u64, u64)> = BTreeMap::new();
        for (&(_, ch), x) in at.iter().zip(extents) {
            let s = out.entry(ch).or_default();
            s.0 += x.saturating_sub(31);
            s.1 += 1;
        }
        Ok(out)
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
            size_bytes: self.backing.len(),
            indexed: self.indexed,
            chunk_count: self.chunks.iter().filter(|c| !c.loose).count() as u64,
            ..StorageInfo::default()
        };
        info.properties.insert("profile".into(), self.profile.clone());
        info.properties.insert("library".into(), self.library.clone());
        for c in &self.connections {
            let n = self.counts.get(&(c.id as u16)).copied().unwrap_or(0);
            info.connections.insert(c.id, ConnectionStats { message_count: n, ..Default::default() });
            // Counts a file claims are summed saturating: they are not bounded by its size.
            if !self.undeclared.contains_key(&c.id) {
                info.message_count = info.message_count.saturating_add(n);
            }
        }
        info.message_count = self.undeclared.values().fold(info.message_count, |a, &n| a.saturating_add(n));
        info.undeclared = self.undeclared.clone();
        // Figures by compression, named once at the end (not a `String` per chunk).
        let mut kinds: Vec<(&str, crate::CompressionStats)> = Vec::new();
        for c in self.chunks.iter().filter(|c| !c.loose) {
            let k = match kinds.iter().position(|k| *k.0 == *c.compression) {
                Some(k) => k,
                None => {
                    kinds.push((&c.compression, Default::default()));
                    kinds.len() - 1
                }
            };
            let s = &mut kinds[k].1;
            s.chunks += 1;
            s.compressed_bytes = s.compressed_bytes.saturating_add(c.compressed);
            s.uncompressed_bytes = s.uncompressed_bytes.saturating_add(c.uncompressed);
        }
        for (name, stats) in kinds {
            let name = if name.is_empty() { "none" } else { name };
            let s = info.compression.entry(name.to_string()).or_default();
            s.chunks += stats.chunks;
            s.compressed_bytes += stats.compressed_bytes;
            s.uncompressed_bytes += stats.uncompressed_bytes;
        }
        if info.message_count > 0 {
            info.start_ns = self.chunks.iter().map(|c| c.start).min();
            info.end_ns = self.chunks.iter().map(|c| c.end).max();
        }
        if let Some(blocks) = self.chunk_blocks() {
            crate::size_estimate::fill(&mut info, blocks);
        }
        info
    }

    /// Every chunk's payload bytes and per-channel counts, from the summary alone: a channel's
    /// MessageIndex record runs to the next one (or to the end of the chunk's indexes) and
    /// holds 16 bytes a message after 15 of op, length, channel and array length. The payload
    /// is the uncompressed size less 31 bytes a message (op, length, channel, sequence, two
    /// times) and the Channel and Schema records of channels first seen in the chunk. `None`
    /// for a file with messages outside chunks or chunks without message indexes.
    /// See [`crate::size_estimate`].
    fn chunk_blocks(&self) -> Option<crate::size_estimate::Blocks> {
        let mut chunks: Vec<&ChunkMeta> = self.chunks.iter().collect();
        // Time order is file order in most files: no sort (and no sort buffer) then.
        if !chunks.is_sorted_by_key(|c| c.offset) {
            chunks.sort_by_key(|c| c.offset);
        }
        let (channel_len, schema_len) = &self.record_lengths;
        let mut seen = Introduced::default();
        let mut blocks = crate::size_estimate::Blocks::with_capacity(chunks.len(), self.indexes.len());
        // One chunk's (offset, channel) pairs and (channel, count) pairs, reused.
        let mut at: Vec<(u64, u16)> = Vec::new();
        let mut counts: Vec<(u16, u64)> = Vec::new();
        let local = matches!(self.backing, Backing::Local(_));
        for c in chunks {
            if matches!(c.channels, Channels::Unknown) || c.loose || c.salvaged {
                return None;
            }
            at.clear();
            at.extend(self.index_of(c).iter().map(|&(ch, off)| (off, ch)));
            // Message indexes are normally written in channel order, which is file order.
            if !at.is_sorted() {
                at.sort_unstable();
            }
            counts.clear();
            for (k, &(off, ch)) in at.iter().enumerate() {
                let end = at.get(k + 1).map_or(c.index_end, |n| n.0);
                counts.push((ch, end.checked_sub(off)?.checked_sub(15)? / 16));
            }
            // A channel's first chunk is read from its message indexes: a sample of its sizes
            // (not for a remote file, whose summary is all that is fetched for it).
            if local && counts.iter().any(|&(ch, n)| n > 0 && !seen.channels.contains(&ch)) {
                if let Ok(sizes) = self.chunk_sizes(c, &mut seen) {
                    for (ch, (payload, n)) in sizes {
                        blocks.push(payload, [(u32::from(ch), n)]);
                    }
                    continue;
                }
            }
            let mut overhead = 0u64;
            for &(ch, n) in &counts {
                overhead += 31 * n;
                if n > 0 && seen.channels.insert(ch) {
                    let (schema, len) = channel_len.get(&ch).copied().unwrap_or((0, 0));
                    overhead += len;
                    if schema != 0 && seen.schemas.insert(schema) {
                        overhead += schema_len.get(&schema).copied().unwrap_or(0);
                    }
                }
            }
            blocks.push(c.uncompressed.saturating_sub(overhead), counts.iter().map(|&(ch, n)| (u32::from(ch), n)));
        }
        Some(blocks)
    }

    fn iter(&self, filter: &Filter) -> MessageIter<'_> {
        let mut wanted: BTreeSet<u16> =
            self.connections.iter().filter(|c| filter.accepts_topic(&c.topic)).map(|c| c.id as u16).collect();
        wanted.extend(self.undeclared.keys().filter(|&&id| filter.accepts_undeclared(id)).map(|&id| id as u16));
        let pending: VecDeque<usize> = (0..self.chunks.len())
            .filter(|&i| {
                let c = &self.chunks[i];
                filter.overlaps(c.start, c.end) && {
                    let mut any = false;
                    !self.each_channel(c, |ch| any = any || self.selects(&wanted, filter, ch)) || any
                }
            })
            .collect();
        let filter = filter.clone();
        let merge = Merge {
            reader: self,
            pending,
            heap: BinaryHeap::new(),
            open: HashMap::new(),
            wanted,
            filter,
            failed: false,
        };
        mmap::checked_iter(self.backing.map(), Box::new(merge))
    }
}

/// A chunk being drained by the merge.
struct Open {
    entries: Vec<Entry>,
    /// Read when one of its messages is first wanted (if finding its entries did not).
    data: Option<chunks::Data>,
    /// Its held records were given back to the memory budget: stream them.
    stream_only: bool,
}

/// Lazy k-way merge over the chunks a query needs: a chunk is opened only once the merge
/// reaches its start time, so memory holds just the chunks that overlap in time; a large one
/// is read only when one of its messages is next. Records are held whole while the memory
/// budget has room and streamed beyond it; when a message (or a decoder) does not fit, the
/// other chunks' records are given back and streamed again when their turn comes.
struct Merge<'a> {
    reader: &'a McapReader,
    pending: VecDeque<usize>,
    /// (log time, chunk offset, chunk, entry) of each open chunk's next message.
    heap: BinaryHeap<Reverse<(u64, u64, usize, usize)>>,
    open: HashMap<usize, Open>,
    wanted: BTreeSet<u16>,
    filter: Filter,
    failed: bool,
}

impl Merge<'_> {
    fn load_next(&mut self) -> Result<()> {
        let Some(i) = self.pending.pop_front() else { return Ok(()) };
        self.reader.read_ahead(i, self.pending.iter().copied());
        let (wanted, filter, reader) = (&self.wanted, &self.filter, self.reader);
        let (entries, data) =
            self.reader.entries(i, &|ch, t| filter.accepts_time(t) && reader.selects(wanted, filter, ch))?;
        if let Some(first) = entries.first() {
            self.heap.push(Reverse((first.log_time, self.reader.chunks[i].offset, i, 0)));
            self.open.insert(i, Open { entries, data, stream_only: false });
        }
        Ok(())
    }

    /// Gives the records (or streaming decoder) of every open chunk but `keep` back to the
    /// memory budget; they are streamed, from their start, when their turn comes. Whether any
    /// were held.
    fn give_back(&mut self, keep: usize) -> bool {
        let mut any = false;
        for (&k, o) in self.open.iter_mut() {
            if k != keep
                && !self.reader.chunks[k].loose
                && o.data.is_some()
                && !self.reader.chunks[k].compression.is_empty()
            {
                o.data = None;
                o.stream_only = true;
                any = true;
            }
        }
        any
    }

    /// Entry `e` of chunk `chunk` as a message, reading the chunk first if need be; a budget
    /// shortfall gives the other chunks' held records (and the read-ahead's) back and tries
    /// once more.
    fn message(&mut self, chunk: usize, e: Entry) -> Result<Message> {
        let mut retried = false;
        loop {
            match self.try_message(chunk, e) {
                Err(Error::OverBudget { .. }) if !retried && (self.give_back(chunk) | self.reader.clear_ahead()) => {
                    retried = true
                }
                other => return other,
            }
        }
    }

    fn try_message(&mut self, chunk: usize, e: Entry) -> Result<Message> {
        let reader = self.reader;
        let open = self.open.get_mut(&chunk).ok_or_else(|| Error::Invalid("merge chunk is not open".into()))?;
        if open.data.is_none() {
            open.data = Some(reader.chunk_data(chunk, !open.stream_only)?);
        }
        let data = open.data.as_mut().ok_or_else(|| Error::Invalid("chunk data is missing".into()))?;
        let offset = reader.chunks[chunk].offset;
        let (m, payload) = chunks::message_at(data, e.at, offset)?;
        if m.channel != e.channel || m.log_time != e.log_time {
            return Err(Error::Malformed {
                offset,
                what: "MCAP message index",
                reason: format!(
                    "it puts a message of channel {} at {} ns at byte {}, where the record says channel {} at {} ns",
                    e.channel, e.log_time, e.at, m.channel, m.log_time
                ),
            });
        }
        Ok(Message {
            connection: u32::from(m.channel),
            log_time: m.log_time,
            publish_time: m.publish_time,
            data: payload,
        })
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
        let e = self.open.get(&chunk)?.entries[k];
        let channel = e.channel;
        let stand_in = self.reader.options.lenient && self.reader.connection(u32::from(channel)).is_some();
        if !(self.reader.declared(channel) || stand_in) {
            let meta = &self.reader.chunks[chunk];
            let at = if meta.loose { Place::Offset(e.at) } else { Place::InChunk { chunk: meta.offset, at: e.at } };
            self.failed = true;
            return Some(Err(
                Error::UndeclaredConnection { at, kind: "channel", id: u32::from(channel) }.in_file(&self.reader.path)
            ));
        }
        let msg = self.message(chunk, e);
        let open = self.open.get(&chunk)?;
        if let Some(next) = open.entries.get(k + 1) {
            self.heap.push(Reverse((next.log_time, offset, chunk, k + 1)));
        } else if self.open.remove(&chunk).is_some() {
            let meta = &self.reader.chunks[chunk];
            if meta.compression.is_empty() {
                if let Some(map) = self.reader.backing.map() {
                    map.release(meta.range.clone());
                }
            }
        }
        if msg.is_err() {
            self.failed = true;
        }
        Some(msg.map_err(|e| e.in_file(&self.reader.path)))
    }
}

/// Calls `out` with each (channel, log time, offset in the chunk) of the MessageIndex record at
/// file offset `off`, read from `buf` (the file's bytes from offset `base`).
fn message_index_at(buf: &[u8], base: u64, off: u64, out: &mut impl FnMut(u16, u64, u64)) -> Result<()> {
    let rec = off.checked_sub(base).and_then(|at| Walk::new(buf, at as usize, base, false).next());
    match rec {
        Some(Ok(r)) if r.op == op::MESSAGE_INDEX => records::message_index(&buf[r.body.clone()], r.offset, out),
        Some(Err(e)) => Err(e),
        _ => Err(Error::Malformed {
            offset: off,
            what: "MCAP chunk index",
            reason: "message index offset does not point at a MessageIndex".into(),
        }),
    }
}

/// Collects a Schema or Channel record (top level, in a chunk, or in the summary).
fn schema_or_channel(
    rec: &Raw,
    buf: &[u8],
    schemas: &mut HashMap<u16, parse::Schema>,
    channels: &mut BTreeMap<u16, parse::Channel>,
) -> Result<()> {
    schema_or_channel_body(rec.op, &buf[rec.body.clone()], rec.offset, schemas, channels)
}

/// [`schema_or_channel`] from a record's op and body.
fn schema_or_channel_body(
    op: u8,
    body: &[u8],
    offset: u64,
    schemas: &mut HashMap<u16, parse::Schema>,
    channels: &mut BTreeMap<u16, parse::Channel>,
) -> Result<()> {
    if op == op::SCHEMA {
        let s = parse::schema(body, offset)?;
        schemas.insert(s.id, s);
    } else {
        let c = parse::channel(body, offset)?;
        channels.insert(c.id, c);
    }
    Ok(())
}

/// Where the records of the chunk record `rec` (with header `head`) are, and how they decode.
fn source_of(buf: &Bytes, rec: &Raw, head: &records::ChunkHead, torn: bool) -> Result<chunks::Source> {
    let compression = chunk_compression(&head.compression)
        .ok_or_else(|| Error::UnsupportedCompression { offset: rec.offset, name: head.compression.clone() })?;
    let start = rec.body.start + head.records.start;
    let end = (rec.body.start + head.records.end).min(buf.len());
    Ok(chunks::Source {
        compression,
        compressed: buf.slice(start.min(end)..end),
        size: head.uncompressed_size,
        crc: if torn { 0 } else { head.crc },
        lenient: torn,
        offset: rec.offset,
    })
}

/// The Schema records, with the channels that use each.
fn schema_list(schemas: &HashMap<u16, parse::Schema>, channels: &BTreeMap<u16, parse::Channel>) -> Vec<SchemaInfo> {
    let mut out: Vec<SchemaInfo> = schemas
        .values()
        .map(|s| SchemaInfo {
            id: u32::from(s.id),
            name: s.name.clone(),
            encoding: s.encoding.clone(),
            data: Bytes::from(s.data.clone()),
            connections: channels.values().filter(|c| c.schema_id == s.id).map(|c| u32::from(c.id)).collect(),
        })
        .collect();
    out.sort_by_key(|s| s.id);
    out
}

/// The channels and schemas whose records earlier chunks hold.
#[derive(Debug, Default)]
struct Introduced {
    channels: BTreeSet<u16>,
    schemas: BTreeSet<u16>,
}

/// Each channel's schema id and Channel record length, and each Schema record's length (op
/// and length prefix included).
#[allow(clippy::type_complexity)]
fn record_lengths(
    schemas: &HashMap<u16, parse::Schema>,
    channels: &BTreeMap<u16, parse::Channel>,
) -> (BTreeMap<u16, (u16, u64)>, BTreeMap<u16, u64>) {
    let s = |t: &str| 4 + t.len() as u64;
    let chans = channels
        .values()
        .map(|c| {
            let map: u64 = c.metadata.iter().map(|(k, v)| s(k) + s(v)).sum();
            (c.id, (c.schema_id, 9 + 4 + s(&c.topic) + s(&c.message_encoding) + 4 + map))
        })
        .collect();
    let schemas =
        schemas.values().map(|x| (x.id, 9 + 2 + s(&x.name) + s(&x.encoding) + 4 + x.data.len() as u64)).collect();
    (chans, schemas)
}

/// Connections from channels and the schemas they name.
pub(crate) fn connections(
    schemas: &HashMap<u16, parse::Schema>,
    channels: &BTreeMap<u16, parse::Channel>,
) -> Vec<Connection> {
    channels.values().map(|c| connection(schemas, c)).collect()
}

/// The connection a channel stands for, with the schema it names.
pub(crate) fn connection(schemas: &HashMap<u16, parse::Schema>, c: &parse::Channel) -> Connection {
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
        // Frequencies need every chunk's message indexes, which a remote file's summary does
        // not hold: they are not available remotely.
        if matches!(self.backing, Backing::Remote(_)) {
            return Ok(BTreeMap::new());
        }
        let topic = |ch: u16| self.connection(ch as u32).map(|c| c.topic.as_str()).unwrap_or("");
        let indexed = self.chunks.iter().all(|c| !c.loose && !self.index_of(c).is_empty());
        if indexed {
            // A bounded sample of the chunks' message indexes is read (`periods::sampled`):
            // the chunk indexes say which channels each chunk holds.
            // `chunks` is in (start time, offset) order already (`finish_open`).
            let order: Vec<usize> = (0..self.chunks.len()).collect();
            let keys = |i: usize, visit: &mut dyn FnMut(u16)| {
                self.each_channel(&self.chunks[i], visit);
            };
            let periods = crate::periods::sampled(&order, keys, topic, |i, out| {
                let c = &self.chunks[i];
                let (buf, base) = self.region(c)?;
                for &(_, off) in self.index_of(c) {
                    message_index_at(&buf, base, off, &mut |ch, t, _| out(ch, t))?;
                }
                Ok(())
            })
            .map_err(|e: Error| e.in_file(&self.path));
            return mmap::checked(self.backing.map(), periods);
        }
        let mut times: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
        // Times only: each chunk's records are walked (streamed when the budget has no room for
        // them), payloads are not copied.
        for i in 0..self.chunks.len() {
            let (entries, _) = self.entries(i, &|_, _| true).map_err(|e| e.in_file(&self.path))?;
            for e in entries {
                times.entry(e.channel).or_default().push(e.log_time);
            }
        }
        mmap::checked(self.backing.map(), Ok(crate::periods::by_topic(times.into_iter().map(|(ch, t)| (topic(ch), t)))))
    }

    fn stats(&self) -> ReadStats {
        ReadStats {
            chunks_read: self.chunks_read.load(Ordering::Relaxed),
            chunks_decompressed: self.chunks_decompressed.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            ..self.backing.fetched()
        }
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn lost(&self) -> Vec<String> {
        self.lost.clone()
    }

    fn attachments(&self) -> Result<Vec<Attachment>> {
        let run = || {
            let mut at = if self.extras_unindexed { self.scan_extras()?.0 } else { self.attachment_at.clone() };
            at.sort_unstable();
            at.into_iter().map(|(off, len)| self.attachment_at(off, len)).collect::<Result<Vec<_>>>()
        };
        mmap::checked(self.backing.map(), run()).map_err(|e| e.in_file(&self.path))
    }

    fn metadata(&self) -> Result<Vec<MetadataRecord>> {
        let mut out = if self.extras_unindexed {
            mmap::checked(self.backing.map(), self.scan_extras()).map_err(|e| e.in_file(&self.path))?.1
        } else {
            self.metadata_records.clone()
        };
        out.sort_by_key(|m| m.offset);
        Ok(out)
    }

    fn chunks(&self) -> Result<Vec<ChunkInfo>> {
        let mut out: Vec<ChunkInfo> = self
            .chunks
            .iter()
            .filter(|c| !c.loose)
            .map(|c| ChunkInfo {
                file: self.path.clone(),
                offset: c.offset,
                length: c.range.len() as u64,
                start_ns: c.start,
                end_ns: c.end,
                compression: if c.compression.is_empty() { "none".into() } else { c.compression.to_string() },
                compressed_size: c.compressed,
                uncompressed_size: c.uncompressed,
                message_count: None,
                message_index_length: Some(c.index_end.saturating_sub(c.range.end as u64)),
            })
            .collect();
        out.sort_by_key(|c| c.offset);
        Ok(out)
    }

    fn schemas(&self) -> Result<Vec<SchemaInfo>> {
        Ok(self.schemas.clone())
    }

    fn indexed_sizes(&self) -> Result<Option<IndexedSizes>> {
        mmap::checked(self.backing.map(), self.sizes_from_indexes()).map_err(|e| e.in_file(&self.path))
    }
}
