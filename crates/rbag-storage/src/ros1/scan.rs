//! Walking a bag record by record, for bags whose index was never written. The reader uses it
//! to serve an unindexed bag; `reindex` uses it to rebuild the index.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::chunk::{self, ChunkMeta, Entry, Located};
use super::compression;
use super::record::{self, op, Limits};
use crate::{budget, Compression, Connection, Error, Result};

/// What a scan found.
#[derive(Debug, Default)]
pub struct Scan {
    pub connections: BTreeMap<u32, Connection>,
    pub chunks: Vec<ChunkMeta>,
    /// Bytes at the end that held no complete record.
    pub torn_bytes: u64,
    /// Message records that were started but not complete.
    pub torn_messages: u64,
    /// Why the scan stopped before the end of the file, if it did.
    pub stopped: Option<Error>,
    pub bytes_read: u64,
}

struct Source<'a> {
    file: &'a File,
    path: &'a Path,
    len: u64,
    read: u64,
}

impl Source<'_> {
    fn read(&mut self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let len = len.min(self.len.saturating_sub(offset));
        let mut buf = budget::vec_with_capacity(len, offset, "record")?;
        buf.resize(len as usize, 0);
        self.file.read_exact_at(&mut buf, offset).map_err(|e| Error::io(self.path, e))?;
        self.read += len;
        Ok(buf)
    }
}

/// Scans every record after the bag header. Fails only on I/O errors and on a file that is not a
/// bag; damage is reported in [`Scan::stopped`] and the torn counts.
pub fn scan(file: &File, path: &Path, len: u64, limits: &Limits) -> Result<Scan> {
    let mut src = Source { file, path, len, read: 0 };
    let mut out = Scan::default();
    let head = src.read(0, super::FIRST_RECORD)?;
    if !head.starts_with(record::MAGIC) {
        return Err(Error::Malformed { offset: 0, what: "bag", reason: "not a ROS bag v2.0 (bad magic line)".into() });
    }
    let first = record::parse_record(&head[record::MAGIC.len()..], record::MAGIC.len() as u64, limits)?;
    let mut pos = record::MAGIC.len() as u64 + first.len as u64;
    while pos < len {
        match scan_record(&mut src, pos, limits, &mut out) {
            Ok(next) => pos = next,
            Err(e) => {
                let torn = matches!(e, Error::Truncated { .. });
                out.torn_bytes += len - pos;
                if !torn {
                    out.stopped = Some(e);
                }
                break;
            }
        }
    }
    out.bytes_read = src.read;
    Ok(out)
}

/// Handles the record at `pos`; returns where the next one starts.
fn scan_record(src: &mut Source<'_>, pos: u64, limits: &Limits, out: &mut Scan) -> Result<u64> {
    let avail = src.len - pos;
    let prefix = src.read(pos, 4)?;
    let hl = record::read_u32(&prefix, pos, "record header length")?;
    record::check_header_len(hl, pos, limits)?;
    if hl as u64 + 8 > avail {
        return Err(Error::Truncated { offset: pos, what: "record header", needed: hl as u64 + 8, available: avail });
    }
    let hbuf = src.read(pos + 4, hl as u64 + 4)?;
    let header = record::Header::parse(&hbuf[..hl as usize], pos + 4)?;
    let data_len = record::read_u32(&hbuf[hl as usize..], pos, "record data length")? as u64;
    let data_offset = pos + 8 + hl as u64;
    let data_avail = src.len - data_offset;
    match header.op()? {
        op::CHUNK => {
            let (compression, size) = chunk::chunk_fields(&header, pos)?;
            // An open chunk: the recorder wrote a placeholder header and was killed before
            // patching it, so the chunk runs to the end of the file.
            let open = data_len == 0 && size == 0 && data_avail > 0;
            if open || data_len > data_avail {
                // Never more than one chunk's worth: the rest of a huge file is not a chunk.
                let take = data_avail.min(limits.max_data_len);
                out.torn_bytes += data_avail - take;
                index_chunk(src, pos, compression, data_offset, take, None, limits, out);
                return Ok(src.len);
            }
            record::check_data_len(size, pos, limits)?;
            record::check_data_len(data_len, pos, limits)?;
            index_chunk(src, pos, compression, data_offset, data_len, Some(size), limits, out);
            Ok(data_offset + data_len)
        }
        op::CONNECTION => {
            if data_len > data_avail {
                return Err(Error::Truncated {
                    offset: pos,
                    what: "connection record",
                    needed: data_len,
                    available: data_avail,
                });
            }
            let mut buf = src.read(pos, 8 + hl as u64 + data_len)?;
            let rec = record::parse_record(&buf, pos, limits)?;
            let conn = chunk::parse_connection(&rec)?;
            out.connections.entry(conn.id).or_insert(conn);
            buf.clear();
            Ok(data_offset + data_len)
        }
        op::INDEX_DATA | op::CHUNK_INFO => {
            if data_len > data_avail {
                return Err(Error::Truncated {
                    offset: pos,
                    what: "index record",
                    needed: data_len,
                    available: data_avail,
                });
            }
            Ok(data_offset + data_len)
        }
        other => Err(Error::UnknownOp { offset: pos, op: other }),
    }
}

/// `len` bytes of the file from `pos`, read as they are consumed.
struct Region<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for Region<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.end - self.pos) as usize;
        if n == 0 {
            return Ok(0);
        }
        let got = self.file.read_at(&mut buf[..n], self.pos)?;
        self.pos += got as u64;
        Ok(got)
    }
}

/// A reader that notes whether its inner reader failed, and ends there.
struct Lenient<R> {
    inner: R,
    failed: bool,
}

impl<R: Read> Read for Lenient<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.inner.read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.failed = true;
                    return Ok(0);
                }
            }
        }
    }
}

/// Indexes the chunk whose `data_len` bytes of (compressed) data start at `data_offset`,
/// decoding it as a stream: its records are walked as they decode, so a chunk of any size costs
/// a decoder's buffers, not its size. A chunk that does not decode to exactly its `declared`
/// size of complete records (a torn or damaged one; `None`: a chunk its recorder never closed)
/// keeps what decodes, up to [`Limits::salvage_limit`].
#[allow(clippy::too_many_arguments)]
fn index_chunk(
    src: &mut Source<'_>,
    pos: u64,
    compression: Compression,
    data_offset: u64,
    data_len: u64,
    declared: Option<u64>,
    limits: &Limits,
    out: &mut Scan,
) {
    let region = Region { file: src.file, pos: data_offset, end: data_offset + data_len };
    let cap = declared.unwrap_or(0).max(limits.salvage_limit(data_len as usize));
    let mut decoded = Lenient {
        inner: compression::decoder(compression, std::io::BufReader::with_capacity(64 << 10, region)),
        failed: false,
    };
    let walk = walk_records(&mut (&mut decoded).take(cap), limits, out);
    src.read += if compression == Compression::None { walk.consumed } else { data_len };
    let complete = walk.clean_end && !decoded.failed && declared == Some(walk.consumed) && walk.used == walk.consumed;
    if complete {
        push_chunk(out, pos, compression, data_offset, data_len, walk.used, false, walk.entries);
    } else if compression == Compression::None {
        out.torn_bytes += data_len.saturating_sub(walk.used);
        push_chunk(out, pos, compression, data_offset, walk.used, walk.used, false, walk.entries);
    } else {
        // The compressed bytes of the torn tail cannot be told apart: count what decoded (or
        // was declared) but did not form a record, or all of it when nothing decoded.
        let total = if walk.clean_end { walk.consumed } else { declared.unwrap_or(walk.consumed).max(walk.consumed) };
        out.torn_bytes += total - walk.used + if walk.consumed == 0 { data_len } else { 0 };
        push_chunk(out, pos, compression, data_offset, data_len, walk.used, true, walk.entries);
    }
}

/// What walking a chunk's records found.
struct Walked {
    entries: Vec<Entry>,
    /// Bytes that hold complete records.
    used: u64,
    /// Bytes read from the decoder.
    consumed: u64,
    /// The data ended between two records (not inside one, nor at a record that is not a
    /// message or connection).
    clean_end: bool,
}

/// Walks the records of decompressed chunk data, reading only record headers and connection
/// records: message data is skipped as it decodes. A torn message at the end is counted in `out`.
fn walk_records(r: &mut dyn Read, limits: &Limits, out: &mut Scan) -> Walked {
    let mut w = Walked { entries: Vec::new(), used: 0, consumed: 0, clean_end: false };
    let take = |r: &mut dyn Read, buf: &mut [u8], w: &mut Walked| -> usize {
        let mut got = 0;
        while got < buf.len() {
            match r.read(&mut buf[got..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        w.consumed += got as u64;
        got
    };
    // A record that stops short is a torn message unless its header says otherwise (chunks
    // hold only messages and the occasional connection record).
    let torn = |header: Option<&[u8]>, out: &mut Scan| {
        let kind = header.map(|h| record::Header::parse(h, 0).and_then(|h| h.op()));
        if !matches!(kind, Some(Ok(o)) if o != op::MSG_DATA) {
            out.torn_messages += 1;
        }
    };
    let mut len = [0u8; 4];
    let mut scratch = vec![0u8; 64 << 10];
    loop {
        let at = w.used;
        match take(r, &mut len, &mut w) {
            0 => {
                w.clean_end = true;
                return w;
            }
            4 => {}
            _ => {
                torn(None, out);
                return w;
            }
        }
        let hl = u32::from_le_bytes(len);
        if record::check_header_len(hl, at, limits).is_err() {
            torn(None, out);
            return w;
        }
        let mut header = Vec::new();
        if header.try_reserve_exact(hl as usize).is_err() {
            return w;
        }
        header.resize(hl as usize, 0);
        if take(r, &mut header, &mut w) < header.len() || take(r, &mut len, &mut w) < 4 {
            torn(Some(&header), out);
            return w;
        }
        let dl = u32::from_le_bytes(len) as u64;
        let Ok(h) = record::Header::parse(&header, at + 4) else {
            torn(None, out);
            return w;
        };
        if record::check_data_len(dl, at, limits).is_err() {
            torn(Some(&header), out);
            return w;
        }
        match h.op() {
            Ok(op::MSG_DATA) => {
                let (Ok(conn), Ok(time)) = (h.u32("conn"), h.time("time")) else { return w };
                let mut left = dl;
                while left > 0 {
                    let n = left.min(scratch.len() as u64) as usize;
                    if take(r, &mut scratch[..n], &mut w) < n {
                        out.torn_messages += 1;
                        return w;
                    }
                    left -= n as u64;
                }
                w.entries.push(Entry { time, offset: at as u32, conn });
            }
            Ok(op::CONNECTION) => {
                let Ok((mut data, _paid)) = budget::buffer(dl, at, "connection record") else { return w };
                data.resize(dl as usize, 0);
                if take(r, &mut data, &mut w) < data.len() {
                    return w;
                }
                let rec = record::Record { header: h, data: &data, offset: at, len: (8 + hl as u64 + dl) as usize };
                match chunk::parse_connection(&rec) {
                    Ok(c) => {
                        out.connections.entry(c.id).or_insert(c);
                    }
                    Err(_) => return w,
                }
            }
            _ => return w,
        }
        w.used = at + 8 + hl as u64 + dl;
    }
}

#[allow(clippy::too_many_arguments)]
fn push_chunk(
    out: &mut Scan,
    pos: u64,
    compression: Compression,
    data_offset: u64,
    data_len: u64,
    size: u64,
    salvaged: bool,
    mut entries: Vec<Entry>,
) {
    if entries.is_empty() {
        return;
    }
    entries.sort_unstable();
    let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
    for e in &entries {
        *counts.entry(e.conn).or_default() += 1;
    }
    let start = entries.iter().map(|e| e.time).min().unwrap_or(0);
    let end = entries.iter().map(|e| e.time).max().unwrap_or(0);
    out.chunks.push(ChunkMeta {
        pos,
        start,
        end,
        counts: counts.into_iter().collect(),
        located: Some(Box::new(Located { compression, data_offset, data_len, size, salvaged, entries })),
    });
}
