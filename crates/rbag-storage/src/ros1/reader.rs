//! Reading ROS 1 bags through their index: chunk infos → the chunks a query needs → the
//! message offsets in their index-data records. Bags without an index are scanned once at open.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::chunk::{self, ChunkMeta, Entry};
use super::compression;
use super::merge::Merge;
use super::record::{self, op, Limits, Records};
use super::scan;
use crate::mmap::{self, Mapped};
use crate::readahead::{self, Ahead, Pending, ReadAhead};
use crate::source::RangeSource;
use crate::{
    Compression, Connection, ConnectionStats, Error, Filter, Message, MessageIter, Place, ReadOptions, ReadStats,
    Result, StorageInfo, StorageReader,
};

/// A ROS 1 bag v2.0 opened for reading.
pub struct Ros1Reader {
    /// Bytes and messages of a torn tail found by scanning an unindexed bag.
    torn: (u64, u64),
    path: PathBuf,
    io: Io,
    /// The whole file, mapped; `None` where mapping failed (or the bag is remote) and reads use
    /// `pread` (or range requests).
    map: Option<Mapped>,
    file_len: u64,
    limits: Limits,
    connections: Vec<Connection>,
    /// In file order.
    pub(super) chunks: Vec<ChunkMeta>,
    /// Where the index section starts (end of the last chunk's index records).
    index_pos: u64,
    indexed: bool,
    options: ReadOptions,
    /// Messages per connection id that the index lists but no connection record declares
    /// (lenient readers also hold a stand-in connection for each).
    undeclared: BTreeMap<u32, u64>,
    chunks_read: AtomicU64,
    chunks_decompressed: AtomicU64,
    bytes_read: AtomicU64,
    /// A remote bag's last chunk regions (chunk and the index data after it), each fetched in
    /// one request: by start offset.
    regions: Mutex<Vec<(u64, Bytes)>>,
    /// The summary, once made.
    summary: std::sync::OnceLock<StorageInfo>,
    /// Where the header puts the index and the file's length, for a bag cut short.
    cut_short: Option<(u64, u64)>,
    /// Compressed chunks decompressed ahead of the read on worker threads
    /// ([`ReadOptions::threads`]); within the memory budget.
    ahead: Mutex<ReadAhead>,
}

/// Bytes read at a chunk's start for its header (it is longer only with unusual fields).
const CHUNK_HEAD: u64 = 4096;

/// How many chunk regions of a remote bag are kept.
const KEPT_RANGES: usize = 4;

/// Where a bag's bytes come from: a local file (mapped where possible), or a remote object
/// read by byte range.
enum Io {
    File(File),
    Remote(Arc<dyn RangeSource>),
}

impl Io {
    /// Fills `buf` from `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64, path: &Path) -> Result<()> {
        match self {
            Io::File(f) => f.read_exact_at(buf, offset).map_err(|e| Error::io(path, e)),
            Io::Remote(s) => {
                let got = s.read(offset, buf.len() as u64)?;
                buf.copy_from_slice(&got);
                Ok(())
            }
        }
    }
}

/// `Read` from an offset on, up to `end`: the index section, record by record.
struct PosReader<'a> {
    io: &'a Io,
    pos: u64,
    end: u64,
}

impl std::io::Read for PosReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.end.saturating_sub(self.pos)) as usize;
        if n == 0 {
            return Ok(0);
        }
        let k = match self.io {
            Io::File(f) => f.read_at(&mut buf[..n], self.pos)?,
            Io::Remote(s) => {
                let got = s.read(self.pos, n as u64).map_err(|e| match e {
                    Error::Remote { reason, .. } => std::io::Error::other(reason),
                    other => std::io::Error::other(other.to_string()),
                })?;
                buf[..n].copy_from_slice(&got);
                n
            }
        };
        self.pos += k as u64;
        Ok(k)
    }
}

/// A chunk's header fields.
/// Over this many chunks, an uncompressed bag's chunk sizes are worked out, not read (see
/// `Ros1Reader::plain_chunk_lengths`).
const PLAIN_OVER: usize = 512;
/// The most chunk infos room is made for ahead of reading them.
const RESERVE_MOST: u64 = 1 << 20;
/// How many chunk headers check that working-out.
const PLAIN_SAMPLE: usize = 64;

struct ChunkHeader {
    compression: Compression,
    size: u64,
    data_offset: u64,
    data_len: u64,
}

/// A chunk's decompressed data: held whole (a slice of the map, or a buffer paid for from the
/// memory budget), or streamed when the budget has no room for all of it.
pub(super) enum ChunkData {
    Held(Bytes),
    Streamed(compression::Stream),
}

impl Ros1Reader {
    /// Opens `path`, reading the bag header, connections and chunk infos. A bag whose index was
    /// never written (a killed recorder) is scanned instead; [`StorageInfo::indexed`] then says so.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with_limits(path, Limits::default())
    }

    /// Opens a ROS 1 bag with explicit bounds on what its records may make it allocate.
    pub fn open_with_limits(path: &Path, limits: Limits) -> Result<Self> {
        Self::open_inner(path, limits, ReadOptions::default()).map_err(|e| e.in_file(path))
    }

    /// Opens `path` with `options` (see [`ReadOptions`]).
    pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Self> {
        Self::open_inner(path, Limits::default(), options.clone()).map_err(|e| e.in_file(path))
    }

    fn open_inner(path: &Path, limits: Limits, options: ReadOptions) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let map = Mapped::new(&file, path).filter(|m| m.len() as u64 == file_len);
        Self::load(path.into(), Io::File(file), map, file_len, limits, options, Bytes::new())
    }

    /// Opens a remote bag through its index: the bag header (in `head`, the object's first
    /// bytes, already fetched), then the index section. A chunk is fetched, together with the
    /// index data after it, when a read needs it.
    pub fn from_source(source: Arc<dyn RangeSource>, head: Bytes, options: &ReadOptions) -> Result<Self> {
        let path = PathBuf::from(source.url());
        let file_len = source.len();
        Self::load(path.clone(), Io::Remote(source), None, file_len, Limits::default(), options.clone(), head)
            .map_err(|e| e.in_file(&path))
    }

    fn load(
        path: PathBuf,
        io: Io,
        map: Option<Mapped>,
        file_len: u64,
        limits: Limits,
        options: ReadOptions,
        head: Bytes,
    ) -> Result<Self> {
        let mut reader = Ros1Reader {
            torn: (0, 0),
            path,
            io,
            map,
            file_len,
            limits,
            connections: Vec::new(),
            chunks: Vec::new(),
            index_pos: 0,
            indexed: true,
            ahead: Mutex::new(ReadAhead::new(crate::pool::resolve(options.threads))),
            options,
            undeclared: BTreeMap::new(),
            chunks_read: AtomicU64::new(0),
            chunks_decompressed: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            regions: Mutex::new(if head.is_empty() { Vec::new() } else { vec![(0, head)] }),
            summary: std::sync::OnceLock::new(),
            cut_short: None,
        };
        let header = reader.read_bag_header()?;
        if header.index_pos == 0 {
            reader.load_by_scan()?;
        } else if header.index_pos > file_len || header.index_pos == file_len && header.chunk_count > 0 {
            // Cut short (an interrupted copy, a full disk): what is there is read by scanning,
            // as an unindexed bag is, and said in the warnings.
            reader.cut_short = Some((header.index_pos, file_len));
            reader.load_by_scan()?;
        } else {
            // The index is read from the map where there is one: a file that shrank under it
            // is said as such, not as a bad index.
            let read = reader.load_index(header).map_err(|e| match e {
                Error::Io { .. } => e,
                other => Error::BadIndex { inner: Box::new(other) },
            });
            match reader.map.as_ref().and_then(Mapped::fault) {
                Some(shrank) => return Err(shrank),
                None => read?,
            }
        }
        reader.find_undeclared();
        Ok(reader)
    }

    /// Counts the messages the index puts on connections no connection record declares. The
    /// chunk infos say so for free; a lenient reader also reads every chunk's index data (where
    /// reads take connection ids from; its counts replace the chunk info's where they differ)
    /// and adds a stand-in connection for each id it finds.
    fn find_undeclared(&mut self) {
        let declared = |conns: &[Connection], id: u32| conns.binary_search_by_key(&id, |c| c.id).is_ok();
        let mut found: BTreeMap<u32, u64> = BTreeMap::new();
        for i in 0..self.chunks.len() {
            if self.options.lenient {
                let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
                if self.index_times(i, &mut |conn, _| *counts.entry(conn).or_default() += 1).is_ok() {
                    let counts: Vec<(u32, u32)> = counts.into_iter().collect();
                    if counts.iter().filter(|c| c.1 > 0).ne(self.chunks[i].counts.iter().filter(|c| c.1 > 0)) {
                        self.chunks[i].counts = counts.into();
                    }
                }
            }
            for &(conn, n) in self.chunks[i].counts.iter().filter(|(c, n)| *n > 0 && !declared(&self.connections, *c)) {
                *found.entry(conn).or_default() += n as u64;
            }
        }
        if self.options.lenient && !found.is_empty() {
            let mut conns = std::mem::take(&mut self.connections);
            conns.extend(found.keys().map(|&id| Connection::undeclared(id, "ros1")));
            self.set_connections(conns);
        }
        self.undeclared = found;
    }

    /// Whether a connection record declares `id`.
    fn declared(&self, id: u32) -> bool {
        !self.undeclared.contains_key(&id) && self.connection(id).is_some()
    }

    /// `len` bytes at `offset`, checked against the file size first: a slice of the map, or a
    /// fresh buffer read with `pread`.
    fn read_at(&self, offset: u64, len: u64, what: &'static str) -> Result<Bytes> {
        let available = self.file_len.saturating_sub(offset);
        if offset > self.file_len || len > available {
            return Err(Error::Truncated { offset, what, needed: len, available });
        }
        self.bytes_read.fetch_add(len, Ordering::Relaxed);
        if let Some(map) = &self.map {
            return Ok(map.slice(offset as usize..(offset + len) as usize));
        }
        if let Some(held) = self.fetched(offset, len) {
            return Ok(held);
        }
        // Without a map, what is read is held in memory: paid for from the budget.
        let (mut buf, paid) = crate::budget::buffer(len, offset, what)?;
        buf.resize(len as usize, 0);
        self.io.read_exact_at(&mut buf, offset, &self.path)?;
        Ok(crate::budget::Budgeted::bytes(buf, paid))
    }

    /// Keeps a fetched region of a remote bag, dropping the oldest beyond [`KEPT_RANGES`].
    fn keep_range(&self, start: u64, bytes: Bytes) {
        let mut regions = self.regions.lock().unwrap_or_else(|e| e.into_inner());
        if regions.len() >= KEPT_RANGES {
            regions.remove(0);
        }
        regions.push((start, bytes));
    }

    /// `len` bytes at `offset` from a chunk region already fetched (remote bags).
    fn fetched(&self, offset: u64, len: u64) -> Option<Bytes> {
        let regions = self.regions.lock().unwrap_or_else(|e| e.into_inner());
        regions.iter().find_map(|(start, b)| {
            let at = offset.checked_sub(*start)?;
            (at + len <= b.len() as u64).then(|| b.slice(at as usize..(at + len) as usize))
        })
    }

    /// Prepares the chunks `next` (in reading order) ahead of their reading: for a local bag
    /// with threads, their decompression on worker threads (see `crate::readahead`); for a
    /// remote bag, fetching their regions (chunk and index data) in the background.
    pub(super) fn read_ahead(&self, mut next: impl Iterator<Item = usize>) {
        let source = match &self.io {
            Io::File(_) => {
                let Some(map) = &self.map else { return };
                let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
                ahead.plan(None, &mut next, &mut |i| self.ahead_job(map, i));
                return;
            }
            Io::Remote(source) => source,
        };
        let ranges: Vec<std::ops::Range<u64>> = next
            .filter(|&i| self.chunks[i].located.is_none())
            .take(crate::source::READ_AHEAD)
            .map(|i| {
                let (pos, end) = (self.chunks[i].pos, self.region_end(i));
                pos..end
            })
            .filter(|r| !r.is_empty() && r.end - r.start <= self.limits.max_data_len)
            .filter(|r| self.fetched(r.start, r.end - r.start).is_none())
            .collect();
        source.prefetch(&ranges);
    }

    /// The decompression of chunk `i` on a read-ahead thread: the same as [`Ros1Reader::chunk_data`]
    /// does on the reading thread, over a slice of the map, paid for before it is queued.
    /// Anything that does not check out is left to the reading thread, which reports it.
    fn ahead_job(&self, map: &Mapped, i: usize) -> Ahead {
        let meta = &self.chunks[i];
        let (compression, data_offset, data_len, size, salvaged) = match &meta.located {
            Some(loc) => (loc.compression, loc.data_offset, loc.data_len, loc.size, loc.salvaged),
            None => match self.mapped_chunk_header(map, i) {
                Ok(h) if h.data_offset + h.data_len <= self.region_end(i) => {
                    (h.compression, h.data_offset, h.data_len, h.size, false)
                }
                _ => return Ahead::Skip,
            },
        };
        let end = data_offset.saturating_add(data_len);
        if compression == Compression::None || end > self.file_len || end > map.len() as u64 {
            return Ahead::Skip;
        }
        let Some(paid) = readahead::reserve(size) else { return Ahead::Stop };
        let raw = map.slice(data_offset as usize..end as usize);
        let pos = meta.pos;
        Ahead::Job(Pending {
            offset: pos,
            what: "chunk",
            bytes: size,
            job: Box::new(move || compression::decompress(compression, &raw, size, pos, paid, salvaged)),
        })
    }

    /// Chunk `i`'s header read from the map, without counting it as read (a read-ahead looks).
    fn mapped_chunk_header(&self, map: &Mapped, i: usize) -> Result<ChunkHeader> {
        let pos = self.chunks[i].pos;
        let end = self.region_end(i).min(map.len() as u64);
        let head = map.slice(pos.min(end) as usize..end as usize);
        let hl = record::read_u32(&head, pos, "chunk header length")?;
        record::check_header_len(hl, pos, &self.limits)?;
        self.chunk_header(&head[..(hl as usize + 8).min(head.len())], pos)
    }

    /// Chunk `i` from the read-ahead, where it holds it (see `ReadAhead::take_as_reader`).
    fn ahead_take(&self, i: usize, hold: bool, size: u64) -> Option<Result<Bytes>> {
        self.ahead.lock().unwrap_or_else(|e| e.into_inner()).take_as_reader(i, hold, size)
    }

    /// Gives the read-ahead's buffers back to the budget when `size` more bytes would not fit:
    /// the reading thread comes first. Whether anything was given back.
    fn make_room(&self, size: u64) -> bool {
        let free = crate::budget::limit().saturating_sub(crate::budget::used());
        size > free && self.ahead.lock().unwrap_or_else(|e| e.into_inner()).clear()
    }

    /// For a remote bag: fetches chunk `i` and the index data after it in one request, so that
    /// the reads of its header, index and data that follow are served from memory.
    fn fetch_region(&self, i: usize) -> Result<()> {
        if !matches!(self.io, Io::Remote(_)) || self.chunks[i].located.is_some() {
            return Ok(());
        }
        let start = self.chunks[i].pos;
        let len = self.region_end(i).saturating_sub(start);
        if len == 0 || len > self.limits.max_data_len || self.fetched(start, len).is_some() {
            return Ok(());
        }
        let (mut buf, paid) = crate::budget::buffer(len, start, "chunk")?;
        buf.resize(len as usize, 0);
        self.io.read_exact_at(&mut buf, start, &self.path)?;
        self.keep_range(start, crate::budget::Budgeted::bytes(buf, paid));
        Ok(())
    }

    fn read_bag_header(&self) -> Result<BagHeader> {
        let head = self.read_at(0, super::FIRST_RECORD.min(self.file_len), "bag header")?;
        if !head.starts_with(record::MAGIC) {
            return Err(Error::Malformed {
                offset: 0,
                what: "bag",
                reason: "not a ROS bag v2.0 (bad magic line)".into(),
            });
        }
        let off = record::MAGIC.len() as u64;
        let rec = record::parse_record(&head[off as usize..], off, &self.limits)?;
        let op = rec.op()?;
        if op != op::BAG_HEADER {
            return Err(Error::Malformed {
                offset: off,
                what: "bag header",
                reason: format!("op 0x{op:02x}, expected 0x03"),
            });
        }
        Ok(BagHeader {
            index_pos: rec.header.u64("index_pos")?,
            conn_count: rec.header.u32("conn_count")?,
            chunk_count: rec.header.u32("chunk_count")?,
            first_record: off + rec.len as u64,
        })
    }

    fn load_index(&mut self, header: BagHeader) -> Result<()> {
        // Streamed record by record: a lying index position costs one bad record, not a read of
        // the rest of the file into memory.
        // A mapped file's index records are parsed where they lie, not copied into a buffer
        // first (1 MB of ~13 000 chunk infos in a 10 GB bag); the same checks and errors.
        let mapped = self.map.as_ref().filter(|m| m.len() as u64 == self.file_len).map(|m| m.slice(0..m.len()));
        let section = PosReader { io: &self.io, pos: header.index_pos, end: self.file_len };
        let mut file = std::io::BufReader::with_capacity(if mapped.is_some() { 0 } else { 1 << 20 }, section);
        let mut conns = Vec::new();
        let mut pos = header.index_pos;
        let mut buf = Vec::new();
        // Room for the chunk infos the header promises, as far as the index section can hold
        // them (a chunk info takes over 80 bytes) and up to [`RESERVE_MOST`]: one allocation,
        // not a doubling series of copies of ~13 000 entries. Only a hint: a failed one is not
        // an error.
        let fit = (self.file_len - header.index_pos) / 80;
        let _ = self.chunks.try_reserve(u64::from(header.chunk_count).min(fit).min(RESERVE_MOST) as usize);
        while pos < self.file_len {
            let bytes: &[u8] = match &mapped {
                Some(all) => {
                    let rest = &all[pos as usize..];
                    &rest[..record::record_len(rest, pos, &self.limits)?]
                }
                None => {
                    record::read_record_into(&mut file, pos, self.file_len - pos, &self.limits, &mut buf).map_err(
                        |e| match e {
                            Error::Io { source, .. } => Error::io(&self.path, source),
                            other => other,
                        },
                    )?;
                    &buf
                }
            };
            self.bytes_read.fetch_add(bytes.len() as u64, Ordering::Relaxed);
            let rec = record::parse_record(bytes, pos, &self.limits)?;
            match rec.op()? {
                op::CONNECTION => conns.push(chunk::parse_connection(&rec)?),
                op::CHUNK_INFO => self.chunks.push(chunk::parse_chunk_info(&rec)?),
                other => return Err(Error::UnknownOp { offset: rec.offset, op: other }),
            }
            pos += bytes.len() as u64;
        }
        if conns.len() != header.conn_count as usize || self.chunks.len() != header.chunk_count as usize {
            return Err(Error::Malformed {
                offset: header.index_pos,
                what: "index section",
                reason: format!(
                    "bag header promises {} connections and {} chunks, index holds {} and {}",
                    header.conn_count,
                    header.chunk_count,
                    conns.len(),
                    self.chunks.len()
                ),
            });
        }
        for c in &self.chunks {
            if c.pos < header.first_record || c.pos >= header.index_pos {
                return Err(Error::Malformed {
                    offset: header.index_pos,
                    what: "chunk info",
                    reason: format!("chunk position {} is outside the chunk area", c.pos),
                });
            }
        }
        self.chunks.sort_by_key(|c| c.pos);
        self.set_connections(conns);
        self.index_pos = header.index_pos;
        Ok(())
    }

    fn load_by_scan(&mut self) -> Result<()> {
        let file = match &self.io {
            Io::File(f) => f,
            Io::Remote(s) => {
                return Err(Error::Remote {
                    url: s.url().to_string(),
                    reason: "the bag has no index (was its recorder killed?), and a remote bag is read only \
                             through its index: download it and reindex it"
                        .into(),
                })
            }
        };
        let scan = scan::scan(file, &self.path, self.file_len, &self.limits)?;
        self.bytes_read.fetch_add(scan.bytes_read, Ordering::Relaxed);
        self.torn = (scan.torn_bytes, scan.torn_messages);
        self.chunks = scan.chunks;
        self.set_connections(scan.connections.into_values().collect());
        self.index_pos = self.file_len;
        self.indexed = false;
        Ok(())
    }

    fn set_connections(&mut self, mut conns: Vec<Connection>) {
        conns.sort_by_key(|c| c.id);
        conns.dedup_by_key(|c| c.id);
        self.connections = conns;
    }

    /// Whether the bag had an index (false: it was scanned and should be reindexed).
    pub fn is_indexed(&self) -> bool {
        self.indexed
    }

    /// Each chunk's (file offset, first log time, last log time, message count), in file order.
    pub fn chunk_spans(&self) -> Vec<(u64, u64, u64, u64)> {
        self.chunks.iter().map(|c| (c.pos, c.start, c.end, c.message_count())).collect()
    }

    /// Lets go of the pages of chunk `i` once the merge is done with it.
    pub(super) fn release(&self, i: usize) {
        if let Some(map) = &self.map {
            map.release(self.chunks[i].pos as usize..self.region_end(i) as usize);
        }
    }

    /// End of the region that belongs to chunk `i` (its data and index records).
    fn region_end(&self, i: usize) -> u64 {
        self.chunks.get(i + 1).map_or(self.index_pos, |c| c.pos)
    }

    fn chunk_header(&self, buf: &[u8], pos: u64) -> Result<ChunkHeader> {
        let hl = record::read_u32(buf, pos, "chunk header length")?;
        let body = buf.get(4..4 + hl as usize + 4).ok_or(Error::Truncated {
            offset: pos,
            what: "chunk header",
            needed: hl as u64 + 4,
            available: buf.len().saturating_sub(4) as u64,
        })?;
        let header = record::Header::parse(&body[..hl as usize], pos + 4)?;
        let op = header.op()?;
        if op != op::CHUNK {
            return Err(Error::Malformed {
                offset: pos,
                what: "chunk",
                reason: format!("chunk info points at op 0x{op:02x}"),
            });
        }
        let (compression, size) = chunk::chunk_fields(&header, pos)?;
        record::check_data_len(size, pos, &self.limits)?;
        let data_len = record::read_u32(&body[hl as usize..], pos, "chunk data length")? as u64;
        Ok(ChunkHeader { compression, size, data_offset: pos + 8 + hl as u64, data_len })
    }

    /// Reads just a chunk's header, without its data.
    fn read_chunk_header(&self, i: usize) -> Result<ChunkHeader> {
        let pos = self.chunks[i].pos;
        let avail = self.region_end(i).saturating_sub(pos);
        let buf = self.read_at(pos, avail.min(CHUNK_HEAD), "chunk header")?;
        let hl = record::read_u32(&buf, pos, "chunk header length")?;
        record::check_header_len(hl, pos, &self.limits)?;
        if (hl as u64 + 8) as usize > buf.len() {
            let buf = self.read_at(pos, hl as u64 + 8, "chunk header")?;
            return self.chunk_header(&buf, pos);
        }
        self.chunk_header(&buf, pos)
    }

    /// Calls `f(connection, time)` for every index entry of chunk `i`, in file order.
    fn index_times(&self, i: usize, f: &mut dyn FnMut(u32, u64)) -> Result<()> {
        if let Some(loc) = &self.chunks[i].located {
            loc.entries.iter().for_each(|e| f(e.conn, e.time));
            return Ok(());
        }
        let h = self.read_chunk_header(i)?;
        let (buf, start) = self.index_region(i, &h)?;
        parse_index_region(&buf, start, &self.limits, &mut |e| f(e.conn, e.time))
    }

    /// The index-data records that follow chunk `i` (whose header is `h`), and their offset.
    fn index_region(&self, i: usize, h: &ChunkHeader) -> Result<(Bytes, u64)> {
        let start = h.data_offset + h.data_len;
        let end = self.region_end(i);
        if start > end {
            return Err(Error::Malformed {
                offset: self.chunks[i].pos,
                what: "chunk",
                reason: format!("its {} bytes of data run past the next chunk at offset {end}", h.data_len),
            });
        }
        let len = end - start;
        if len > self.limits.max_data_len {
            return Err(Error::TooLarge {
                offset: start,
                what: "index data after a chunk",
                len,
                limit: self.limits.max_data_len,
            });
        }
        Ok((self.read_at(start, len, "index data")?, start))
    }

    /// The index entries of chunk `i` that `keep` accepts, in read order (time, then position).
    /// Reads the index only: the chunk's data is read when a message of it is wanted
    /// ([`Ros1Reader::chunk_data`]), so chunks that merely overlap in time are not all held.
    pub(super) fn entries(&self, i: usize, keep: &dyn Fn(u32, u64) -> bool) -> Result<Vec<Entry>> {
        if let Some(loc) = &self.chunks[i].located {
            return Ok(loc.entries.iter().copied().filter(|e| keep(e.conn, e.time)).collect());
        }
        self.fetch_region(i)?;
        let h = self.read_chunk_header(i)?;
        let (buf, start) = self.index_region(i, &h)?;
        let mut entries = Vec::new();
        parse_index_region(&buf, start, &self.limits, &mut |e| {
            if keep(e.conn, e.time) {
                entries.push(e);
            }
        })?;
        // One sorted run per connection: the stable sort merges runs in near-linear time.
        entries.sort();
        Ok(entries)
    }

    /// Reads chunk `i`'s data: held whole when the memory budget has room for it (and `hold`
    /// allows), else streamed. Fails only when not even a streaming decoder fits the budget.
    pub(super) fn chunk_data(&self, i: usize, hold: bool) -> Result<ChunkData> {
        let meta = &self.chunks[i];
        self.chunks_read.fetch_add(1, Ordering::Relaxed);
        self.fetch_region(i)?;
        let (compression, data_offset, data_len, size, salvaged) = match &meta.located {
            Some(loc) => (loc.compression, loc.data_offset, loc.data_len, loc.size, loc.salvaged),
            None => {
                let h = self.read_chunk_header(i)?;
                if h.data_offset + h.data_len > self.region_end(i) {
                    return Err(Error::Truncated {
                        offset: meta.pos,
                        what: "chunk data",
                        needed: h.data_len,
                        available: self.region_end(i).saturating_sub(h.data_offset),
                    });
                }
                if h.compression == Compression::None && h.size != h.data_len {
                    return Err(Error::Malformed {
                        offset: meta.pos,
                        what: "chunk",
                        reason: format!("uncompressed chunk of {} bytes says size {}", h.data_len, h.size),
                    });
                }
                (h.compression, h.data_offset, h.data_len, h.size, false)
            }
        };
        let raw = self.read_at(data_offset, data_len, "chunk data")?;
        if compression == Compression::None {
            return Ok(ChunkData::Held(raw));
        }
        self.chunks_decompressed.fetch_add(1, Ordering::Relaxed);
        if let Some(done) = self.ahead_take(i, hold, size) {
            return Ok(ChunkData::Held(done?));
        }
        if hold {
            self.make_room(size);
        }
        if let Some(reservation) = hold.then(|| crate::budget::try_reserve(size)).flatten() {
            return Ok(ChunkData::Held(compression::decompress(
                compression,
                &raw,
                size,
                meta.pos,
                reservation,
                salvaged,
            )?));
        }
        Ok(ChunkData::Streamed(compression::Stream::new(compression, raw, salvaged, meta.pos)?))
    }

    /// The message of entry `e` of the chunk at `chunk_pos`, from its data.
    /// A streamed message that does not fit the budget gives the read-ahead's buffers back and
    /// is read once more (a streamed read starts at the message's offset).
    pub(super) fn message_of(&self, data: &mut ChunkData, e: Entry, chunk_pos: u64) -> Result<Message> {
        match data {
            ChunkData::Held(bytes) => self.message(bytes, e, chunk_pos),
            ChunkData::Streamed(stream) => match self.streamed_message(stream, e, chunk_pos) {
                Err(Error::OverBudget { .. }) if self.ahead.lock().unwrap_or_else(|e| e.into_inner()).clear() => {
                    self.streamed_message(stream, e, chunk_pos)
                }
                other => other,
            },
        }
    }

    /// The message of entry `e`, read from a streamed chunk into a buffer of its own.
    fn streamed_message(&self, s: &mut compression::Stream, e: Entry, chunk_pos: u64) -> Result<Message> {
        s.seek(e.offset as u64)?;
        let at = chunk_pos + e.offset as u64;
        let mut len = [0u8; 4];
        s.read_exact(&mut len, "a message record")?;
        let hl = u32::from_le_bytes(len);
        record::check_header_len(hl, at, &self.limits)?;
        let mut header = crate::budget::vec_with_capacity(hl as u64, at, "record header")?;
        header.resize(hl as usize, 0);
        s.read_exact(&mut header, "a message record")?;
        s.read_exact(&mut len, "a message record")?;
        let dl = u32::from_le_bytes(len) as u64;
        record::check_data_len(dl, at, &self.limits)?;
        let (op, conn, time) = match record::message_fields(&header, at + 4) {
            Ok(f) => f,
            Err(err) => (record::Header::parse(&header, at + 4)?.op().map_err(|_| err)?, 0, 0),
        };
        if op != op::MSG_DATA {
            return Err(Error::Malformed {
                offset: chunk_pos,
                what: "index data",
                reason: format!("offset {} in the chunk holds op 0x{op:02x}, not a message", e.offset),
            });
        }
        let data = s.read_budgeted(dl, "message")?;
        self.checked_message(e, conn, time, data, chunk_pos)
    }

    /// Ids of the connections `filter` selects, sorted (connections are few: a binary search
    /// beats hashing per index entry).
    fn wanted_connections(&self, filter: &Filter) -> Vec<u32> {
        let mut want: Vec<u32> =
            self.connections.iter().filter(|c| filter.accepts_topic(&c.topic)).map(|c| c.id).collect();
        want.extend(self.undeclared.keys().copied().filter(|&id| filter.accepts_undeclared(id)));
        want.sort_unstable();
        want.dedup();
        want
    }

    /// Whether the merge keeps an index entry: a wanted connection in the time window, or one
    /// the bag does not know at all, which `filter` would select (it is then an error, not a
    /// message dropped in silence).
    pub(super) fn keep(&self, want: &[u32], filter: &Filter, conn: u32, time: u64) -> bool {
        filter.accepts_time(time)
            && (want.binary_search(&conn).is_ok()
                || (!self.undeclared.contains_key(&conn)
                    && self.connection(conn).is_none()
                    && filter.accepts_undeclared(conn)))
    }

    pub(super) fn message(&self, data: &Bytes, e: Entry, chunk_pos: u64) -> Result<Message> {
        let (conn, time, payload) = chunk::message_at(data, e.offset, chunk_pos, &self.limits)?;
        self.checked_message(e, conn, time, data.slice_ref(payload), chunk_pos)
    }

    /// The message at entry `e`, whose record says `conn` and `time`, once its connection checks.
    fn checked_message(&self, e: Entry, conn: u32, time: u64, data: Bytes, chunk_pos: u64) -> Result<Message> {
        if !self.declared(e.conn) {
            // Lenient: on the stand-in of the connection the index names.
            if self.options.lenient && self.connection(e.conn).is_some() {
                return Ok(Message { connection: e.conn, log_time: time, publish_time: time, data });
            }
            return Err(Error::UndeclaredConnection {
                at: Place::InChunk { chunk: chunk_pos, at: e.offset as u64 },
                kind: "connection",
                id: e.conn,
            });
        }
        if conn != e.conn {
            return Err(Error::Malformed {
                offset: chunk_pos,
                what: "index data",
                reason: format!("entry for connection {} points at a message of connection {conn}", e.conn),
            });
        }
        Ok(Message { connection: conn, log_time: time, publish_time: time, data })
    }
}

/// The length of the connection record a writer stores for `c`: header (op, conn, topic) and
/// data (topic, type, message_definition and the other fields kept as metadata).
fn connection_record_len(c: &Connection) -> u64 {
    let field = |name: &str, len: usize| (4 + name.len() + 1 + len) as u64;
    let header = field("op", 1) + field("conn", 4) + field("topic", c.topic.len());
    let data = field("topic", c.topic.len())
        + field("type", c.message_type.len())
        + field("message_definition", c.definition.len())
        + c.metadata.iter().map(|(k, v)| field(k, v.len())).sum::<u64>();
    8 + header + data
}

struct BagHeader {
    index_pos: u64,
    conn_count: u32,
    chunk_count: u32,
    first_record: u64,
}

/// Parses the index-data records that follow a chunk. Other records there end the region.
fn parse_index_region(buf: &[u8], base: u64, limits: &Limits, f: &mut dyn FnMut(Entry)) -> Result<()> {
    for rec in Records::new(buf, base, *limits) {
        let rec = rec?;
        match rec.op()? {
            op::INDEX_DATA => chunk::for_each_entry(&rec, &mut *f)?,
            // Some writers put connection records between chunks; they were read from the index.
            op::CONNECTION => {}
            _ => break,
        }
    }
    Ok(())
}

impl StorageReader for Ros1Reader {
    fn connections(&self) -> &[Connection] {
        &self.connections
    }

    fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.cut_short {
            Some((index_pos, file_len)) => out.push(format!(
                "cut short (the bag header puts the index at offset {index_pos}, but the file has {file_len} bytes: \
                 an interrupted copy or a full disk); read by scanning"
            )),
            None if !self.indexed => {
                out.push("unindexed (its recorder did not close it); read by scanning".to_string());
            }
            None => {}
        }
        if self.options.lenient {
            out.extend(crate::reading::undeclared_warnings("connection", &self.undeclared));
        }
        out.extend(self.lost());
        out
    }

    fn lost(&self) -> Vec<String> {
        let (bytes, messages) = self.torn;
        if bytes == 0 && messages == 0 {
            return Vec::new();
        }
        vec![format!("the file ends inside its last chunk or record: {bytes} bytes of torn tail ({messages} incomplete message(s)) cannot be read")]
    }

    fn info(&self) -> Result<StorageInfo> {
        // Made once: it reads every chunk's header, which for a remote bag is a request each.
        if let Some(info) = self.summary.get() {
            return Ok(info.clone());
        }
        let info = mmap::checked(self.map.as_ref(), self.summary().map_err(|e| e.in_file(&self.path)))?;
        Ok(self.summary.get_or_init(|| info).clone())
    }

    fn messages<'a>(&'a self, filter: &Filter) -> Result<MessageIter<'a>> {
        let path = &self.path;
        Ok(mmap::checked_iter(
            self.map.as_ref(),
            Box::new(self.merge(filter).map(move |m| m.map_err(|e| e.in_file(path)))),
        ))
    }

    fn nth(&self, topic: &str, n: u64) -> Result<Option<Message>> {
        mmap::checked(self.map.as_ref(), self.find_nth(topic, n).map_err(|e| e.in_file(&self.path)))
    }

    fn median_periods(&self) -> Result<BTreeMap<String, u64>> {
        // Frequencies need every chunk's index data: a remote bag's summary is read from its
        // index section alone, so they are not available remotely.
        if matches!(self.io, Io::Remote(_)) {
            return Ok(BTreeMap::new());
        }
        mmap::checked(self.map.as_ref(), self.periods().map_err(|e| e.in_file(&self.path)))
    }

    fn chunks(&self) -> Result<Vec<crate::ChunkInfo>> {
        mmap::checked(self.map.as_ref(), self.chunk_infos().map_err(|e| e.in_file(&self.path)))
    }

    fn indexed_sizes(&self) -> Result<Option<crate::IndexedSizes>> {
        mmap::checked(self.map.as_ref(), self.sizes_from_index().map_err(|e| e.in_file(&self.path)).map(Some))
    }

    fn stats(&self) -> ReadStats {
        let fetched = if let Io::Remote(s) = &self.io { s.stats().into() } else { ReadStats::default() };
        ReadStats {
            chunks_read: self.chunks_read.load(Ordering::Relaxed),
            chunks_decompressed: self.chunks_decompressed.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            ..fetched
        }
    }
}

impl Ros1Reader {
    /// Chunk `i`'s compression, uncompressed size, (compressed) data length and record
    /// length, from its header (or what the scan found).
    fn chunk_shape(&self, i: usize) -> Result<(Compression, u64, u64, u64)> {
        let pos = self.chunks[i].pos;
        Ok(match &self.chunks[i].located {
            Some(l) => (l.compression, l.size, l.data_len, l.data_offset + l.data_len - pos),
            None => {
                let h = self.read_chunk_header(i)?;
                (h.compression, h.size, h.data_len, h.data_offset + h.data_len - pos)
            }
        })
    }

    fn chunk_infos(&self) -> Result<Vec<crate::ChunkInfo>> {
        (0..self.chunks.len())
            .map(|i| {
                let c = &self.chunks[i];
                let (compression, size, data_len, length) = self.chunk_shape(i)?;
                Ok(crate::ChunkInfo {
                    file: self.path.clone(),
                    offset: c.pos,
                    length,
                    start_ns: c.start,
                    end_ns: c.end,
                    compression: compression.name().into(),
                    compressed_size: data_len,
                    uncompressed_size: size,
                    message_count: Some(c.message_count()),
                    message_index_length: None,
                })
            })
            .collect()
    }

    /// Payload bytes per connection from the index data after each chunk: a message's record
    /// runs to the next record's offset in the chunk, less its 46 bytes of lengths and header
    /// (op, conn, time). The connection record a writer puts before a connection's first
    /// message is taken off the message before it (its size computed from the connection).
    fn sizes_from_index(&self) -> Result<crate::IndexedSizes> {
        let mut bytes: BTreeMap<u32, u64> = self.connections.iter().map(|c| (c.id, 0)).collect();
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..self.chunks.len() {
            let (_, size, _, _) = self.chunk_shape(i)?;
            for (conn, (b, _)) in self.chunk_sizes(i, size, &mut seen)? {
                *bytes.entry(conn).or_default() += b;
            }
        }
        Ok(crate::IndexedSizes { bytes, exact: false })
    }

    /// Chunk `i`'s payload bytes and messages by connection, from its index data (`size` is
    /// its uncompressed size); `seen` holds the connections met in earlier chunks, and is
    /// updated only once the index data was read.
    fn chunk_sizes(
        &self,
        i: usize,
        size: u64,
        seen: &mut std::collections::BTreeSet<u32>,
    ) -> Result<BTreeMap<u32, (u64, u64)>> {
        let mut entries = self.entries(i, &|_, _| true)?;
        entries.sort_by_key(|e| e.offset);
        let mut extents: Vec<u64> = entries
            .iter()
            .enumerate()
            .map(|(k, e)| entries.get(k + 1).map_or(size, |n| n.offset as u64).saturating_sub(e.offset as u64))
            .collect();
        for k in 0..entries.len() {
            let conn = entries[k].conn;
            if seen.insert(conn) && k > 0 {
                let record = self.connection(conn).map_or(0, connection_record_len);
                extents[k - 1] = extents[k - 1].saturating_sub(record);
            }
        }
        let mut out: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        for (e, x) in entries.iter().zip(extents) {
            let s = out.entry(e.conn).or_default();
            s.0 += x.saturating_sub(46);
            s.1 += 1;
        }
        Ok(out)
    }

    /// The data lengths of an uncompressed bag's chunks, worked out from where each chunk
    /// starts and ends instead of read from each chunk's header, when there are over
    /// [`PLAIN_OVER`] chunks: a header read is a page fault or a request per chunk, and a
    /// 10 GB bag has ~13 000 of them. Between one chunk's start and the next is its record
    /// (header and data) and its index data (per connection a record of 55 bytes and 12 per
    /// message); [`PLAIN_SAMPLE`] headers spread over the bag must all be uncompressed and
    /// agree on the rest, else `None` (every header is read). A bag mixing compressions in
    /// chunks the sample misses would be misreported; no writer does that.
    fn plain_chunk_lengths(&self) -> Result<Option<Vec<u64>>> {
        let n = self.chunks.len();
        if n <= PLAIN_OVER || self.chunks.iter().any(|c| c.located.is_some()) {
            return Ok(None);
        }
        let index_len = |i: usize| self.chunks[i].counts.iter().map(|&(_, k)| 55 + 12 * k as u64).sum::<u64>();
        let rest = |i: usize, data_len: u64| {
            self.region_end(i).checked_sub(self.chunks[i].pos)?.checked_sub(data_len.checked_add(index_len(i))?)
        };
        let mut header_len = None;
        for k in 0..PLAIN_SAMPLE {
            let i = k * (n - 1) / (PLAIN_SAMPLE - 1);
            let h = self.read_chunk_header(i)?;
            let r = rest(i, h.data_len);
            if h.compression != Compression::None
                || h.size != h.data_len
                || r.is_none()
                || header_len.is_some_and(|l| Some(l) != r)
            {
                return Ok(None);
            }
            header_len = r;
        }
        let Some(header_len) = header_len else { return Ok(None) };
        let span =
            |i: usize| self.region_end(i).checked_sub(self.chunks[i].pos)?.checked_sub(header_len + index_len(i));
        Ok((0..n).map(span).collect())
    }

    fn summary(&self) -> Result<StorageInfo> {
        let remote = matches!(self.io, Io::Remote(_));
        let mut info = StorageInfo {
            format: "ros1",
            version: "2.0".into(),
            files: vec![self.path.clone()],
            size_bytes: self.file_len,
            indexed: self.indexed,
            chunk_count: self.chunks.len() as u64,
            ..StorageInfo::default()
        };
        for c in &self.connections {
            info.connections.insert(c.id, ConnectionStats::default());
        }
        // Per-connection sizes are estimated from every chunk's size (see `size_estimate`).
        let pairs = self.chunks.iter().map(|c| c.counts.len()).sum();
        let mut blocks = Some(crate::size_estimate::Blocks::with_capacity(self.chunks.len(), pairs));
        let mut introduced = std::collections::BTreeSet::new();
        let plain = if remote { None } else { self.plain_chunk_lengths()? };
        // Compression figures by kind, gathered here and named once at the end (not a
        // `String` per chunk).
        let mut kinds: Vec<(Compression, crate::CompressionStats)> = Vec::new();
        for (i, c) in self.chunks.iter().enumerate() {
            for &(conn, n) in c.counts.iter().filter(|(conn, _)| self.declared(*conn)) {
                info.connections.entry(conn).or_default().message_count += n as u64;
            }
            if c.message_count() > 0 {
                info.start_ns = Some(info.start_ns.map_or(c.start, |s| s.min(c.start)));
                info.end_ns = Some(info.end_ns.map_or(c.end, |e| e.max(c.end)));
            }
            // A remote bag's info reads its index section only: the compression figures are in
            // each chunk's header, a request per chunk, so they are not available remotely.
            if remote && c.located.is_none() {
                blocks = None;
                continue;
            }
            let (compression, stats) = match (&c.located, &plain) {
                (Some(loc), _) => (loc.compression, (loc.data_len, loc.size)),
                (None, Some(lengths)) => (Compression::None, (lengths[i], lengths[i])),
                (None, None) => {
                    let h = self.read_chunk_header(i)?;
                    (h.compression, (h.data_len, h.size))
                }
            };
            let k = match kinds.iter().position(|k| k.0 == compression) {
                Some(k) => k,
                None => {
                    kinds.push((compression, Default::default()));
                    kinds.len() - 1
                }
            };
            let s = &mut kinds[k].1;
            s.chunks += 1;
            s.compressed_bytes += stats.0;
            s.uncompressed_bytes += stats.1;
            if let Some(blocks) = &mut blocks {
                self.chunk_blocks(i, stats.1, &mut introduced, blocks);
            }
        }
        for (compression, stats) in kinds {
            let s = info.compression.entry(compression.name().to_string()).or_default();
            s.chunks += stats.chunks;
            s.compressed_bytes += stats.compressed_bytes;
            s.uncompressed_bytes += stats.uncompressed_bytes;
        }
        if let Some(blocks) = blocks {
            crate::size_estimate::fill(&mut info, blocks);
        }
        for (&id, &n) in &self.undeclared {
            if let Some(c) = info.connections.get_mut(&id) {
                c.message_count = n;
            }
        }
        info.undeclared = self.undeclared.clone();
        info.count_messages();
        Ok(info)
    }

    /// Chunk `i`'s share of the size estimate: where a connection first appears its index
    /// data is read and gives a block per connection (a sample of each connection's sizes);
    /// elsewhere one block of the chunk's payload (its `size` less 46 bytes of lengths, op,
    /// conn and time per message) and its counts.
    fn chunk_blocks(
        &self,
        i: usize,
        size: u64,
        seen: &mut std::collections::BTreeSet<u32>,
        blocks: &mut crate::size_estimate::Blocks,
    ) {
        let c = &self.chunks[i];
        if c.counts.iter().any(|(conn, _)| !seen.contains(conn)) {
            if let Ok(sizes) = self.chunk_sizes(i, size, seen) {
                for (conn, (payload, n)) in sizes {
                    blocks.push(payload, [(conn, n)]);
                }
                return;
            }
        }
        let mut overhead = 46 * c.message_count();
        for &(conn, _) in &c.counts {
            if seen.insert(conn) {
                overhead += self.connection(conn).map_or(0, connection_record_len);
            }
        }
        blocks.push(size.saturating_sub(overhead), c.counts.iter().map(|&(conn, n)| (conn, n as u64)));
    }

    fn merge(&self, filter: &Filter) -> Merge<'_> {
        let want = self.wanted_connections(filter);
        let mut order: Vec<usize> = (0..self.chunks.len())
            .filter(|&i| {
                let c = &self.chunks[i];
                filter.overlaps(c.start, c.end)
                    && c.counts.iter().any(|(conn, n)| *n > 0 && want.binary_search(conn).is_ok())
            })
            .collect();
        order.sort_by_key(|&i| (self.chunks[i].start, self.chunks[i].pos));
        Merge::new(self, order, want, filter.clone())
    }

    fn periods(&self) -> Result<BTreeMap<String, u64>> {
        // Times are gathered per connection (ids are looked up once per index record), then
        // merged per topic: rosbag's frequency is over all of a topic's connections.
        // A bounded sample of the chunks' index data is read (`periods::sampled`): the
        // ChunkInfo records say which connections each chunk holds.
        // Connections are sorted by id: a lookup is a binary search, not a hash per chunk.
        let topic = |id: u32| self.connections.binary_search_by_key(&id, |c| c.id).ok().map(|k| &self.connections[k]);
        let mut order: Vec<usize> = (0..self.chunks.len()).collect();
        // Chunks are in file order, which is mostly time order too: no sort then.
        if !order.is_sorted_by_key(|&i| (self.chunks[i].start, self.chunks[i].pos)) {
            order.sort_by_key(|&i| (self.chunks[i].start, self.chunks[i].pos));
        }
        crate::periods::sampled(
            &order,
            |i, visit| {
                for &(c, n) in &self.chunks[i].counts {
                    if n > 0 && topic(c).is_some() {
                        visit(c);
                    }
                }
            },
            |c| topic(c).map_or("", |c| c.topic.as_str()),
            |i, out| self.index_times(i, &mut |conn, t| out(conn, t)),
        )
    }

    fn find_nth(&self, topic: &str, n: u64) -> Result<Option<Message>> {
        let conns: Vec<u32> = self.connections.iter().filter(|c| c.topic == topic).map(|c| c.id).collect();
        let mut relevant: Vec<(usize, u64)> = self
            .chunks
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c.counts.iter().filter(|(k, _)| conns.contains(k)).map(|&(_, n)| n as u64).sum()))
            .filter(|&(_, count)| count > 0)
            .collect();
        relevant.sort_by_key(|&(i, _)| (self.chunks[i].start, self.chunks[i].pos));
        // Counting through chunk infos is exact only when the topic's chunks do not interleave in time.
        let disjoint = relevant.windows(2).all(|w| {
            let (a, b) = (&self.chunks[w[0].0], &self.chunks[w[1].0]);
            a.end < b.start || (a.end == b.start && a.pos < b.pos)
        });
        if !disjoint {
            let filter = Filter { topics: vec![topic.to_string()], ..Filter::default() };
            return self.merge(&filter).nth(n as usize).transpose();
        }
        let mut skipped = 0u64;
        for (i, count) in relevant {
            if n < skipped + count {
                let keep = |c: u32, _| conns.contains(&c);
                let entries = self.entries(i, &keep)?;
                let e = *entries.get((n - skipped) as usize).ok_or_else(|| Error::Malformed {
                    offset: self.chunks[i].pos,
                    what: "chunk info",
                    reason: format!("chunk info counts {count} messages on {topic}, index data has {}", entries.len()),
                })?;
                let mut data = self.chunk_data(i, true)?;
                return self.message_of(&mut data, e, self.chunks[i].pos).map(Some);
            }
            skipped += count;
        }
        Ok(None)
    }
}
