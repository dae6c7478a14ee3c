//! Walking a bag record by record, for bags whose index was never written. The reader uses it
//! to serve an unindexed bag; `reindex` uses it to rebuild the index.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::chunk::{self, ChunkMeta, Entry, Located};
use super::compression;
use super::record::{self, op, Limits, Records};
use crate::{Compression, Connection, Error, Result};

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
        let mut buf = vec![0u8; len as usize];
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
                let raw = src.read(data_offset, take)?;
                out.torn_bytes += data_avail - take;
                salvage_chunk(pos, compression, data_offset, &raw, limits, out)?;
                return Ok(src.len);
            }
            record::check_data_len(size, pos, limits)?;
            record::check_data_len(data_len, pos, limits)?;
            let raw = src.read(data_offset, data_len)?;
            match compression::decompress(compression, &raw, size, pos, limits) {
                Ok(data) => {
                    let (entries, used) = index_chunk(&data, limits, out);
                    let complete = used == data.len();
                    let salvaged = compression != Compression::None && !complete;
                    if !complete {
                        out.torn_bytes += (data.len() - used) as u64;
                    }
                    push_chunk(out, pos, compression, data_offset, data_len, used as u64, salvaged, entries);
                }
                Err(_) => salvage_chunk(pos, compression, data_offset, &raw, limits, out)?,
            }
            Ok(data_offset + data_len)
        }
        op::CONNECTION => {
            if data_len > data_avail {
                return Err(Error::Truncated { offset: pos, what: "connection record", needed: data_len, available: data_avail });
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
                return Err(Error::Truncated { offset: pos, what: "index record", needed: data_len, available: data_avail });
            }
            Ok(data_offset + data_len)
        }
        other => Err(Error::UnknownOp { offset: pos, op: other }),
    }
}

/// Keeps what decodes of a torn or damaged chunk.
fn salvage_chunk(pos: u64, compression: Compression, data_offset: u64, raw: &[u8], limits: &Limits, out: &mut Scan) -> Result<()> {
    let data = compression::salvage(compression, raw, limits.salvage_limit(raw.len()));
    let (entries, used) = index_chunk(&data, limits, out);
    if compression == Compression::None {
        out.torn_bytes += (raw.len() - used) as u64;
        push_chunk(out, pos, compression, data_offset, used as u64, used as u64, false, entries);
    } else {
        // The compressed bytes of the torn tail cannot be told apart; count what decoded but
        // did not form a record, plus anything that did not decode at all.
        out.torn_bytes += (data.len() - used) as u64 + if data.is_empty() { raw.len() as u64 } else { 0 };
        push_chunk(out, pos, compression, data_offset, raw.len() as u64, used as u64, true, entries);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn push_chunk(out: &mut Scan, pos: u64, compression: Compression, data_offset: u64, data_len: u64, size: u64, salvaged: bool, mut entries: Vec<Entry>) {
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
        located: Some(Located { compression, data_offset, data_len, size, salvaged, entries }),
    });
}

/// Indexes the records in uncompressed chunk data. Returns the entries and how many bytes hold
/// complete records; a torn record at the end is counted in `out`.
fn index_chunk(data: &[u8], limits: &Limits, out: &mut Scan) -> (Vec<Entry>, usize) {
    let mut entries = Vec::new();
    let mut records = Records::new(data, 0, *limits);
    let mut used = 0;
    while let Some(rec) = records.next() {
        let Ok(rec) = rec else {
            // A torn record inside a chunk is a message unless its header says otherwise
            // (chunks hold only messages and the occasional connection record).
            if torn_header(&data[used..]).map_or(true, |op| op == op::MSG_DATA) {
                out.torn_messages += 1;
            }
            break;
        };
        match rec.op() {
            Ok(op::MSG_DATA) => match (rec.header.u32("conn"), rec.header.time("time")) {
                (Ok(conn), Ok(time)) => entries.push(Entry { time, offset: rec.offset as u32, conn }),
                _ => break,
            },
            Ok(op::CONNECTION) => match chunk::parse_connection(&rec) {
                Ok(c) => {
                    out.connections.entry(c.id).or_insert(c);
                }
                Err(_) => break,
            },
            _ => break,
        }
        used = records.position();
    }
    (entries, used)
}

/// The op of a record whose header is complete even though its data is not.
fn torn_header(buf: &[u8]) -> Result<u8> {
    let hl = record::read_u32(buf, 0, "record header length")? as usize;
    let h = buf.get(4..4 + hl).ok_or(Error::Invalid("torn header".into()))?;
    record::Header::parse(h, 0)?.op()
}
