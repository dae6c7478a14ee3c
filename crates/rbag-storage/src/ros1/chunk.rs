//! What the index says about chunks, and the records that describe them: connection, index
//! data and chunk info. Shared by the reader, the writer and the reindexer.

use std::collections::BTreeMap;

use super::keys;
use super::record::{self, op, Header, Record};
use crate::{Compression, Connection, Error, Result};

/// One message's place: its log time and its offset inside the uncompressed chunk data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub time: u64,
    pub offset: u32,
    pub conn: u32,
}

/// Where a chunk's data is when the bag index did not say (found by scanning).
#[derive(Debug, Clone)]
pub struct Located {
    pub compression: Compression,
    pub data_offset: u64,
    /// Bytes of (compressed) data in the file that belong to the chunk.
    pub data_len: u64,
    /// Uncompressed bytes that hold complete records.
    pub size: u64,
    /// Whether the compressed stream is torn and must be decoded leniently.
    pub salvaged: bool,
    pub entries: Vec<Entry>,
}

/// A chunk as the chunk-info records (or a scan) describe it.
#[derive(Debug, Clone)]
pub struct ChunkMeta {
    /// Offset of the chunk record.
    pub pos: u64,
    pub start: u64,
    pub end: u64,
    /// Messages per connection id.
    pub counts: Counts,
    /// Set for chunks found by scanning an unindexed bag; boxed, so the ~13 000 chunks of an
    /// indexed 10 GB bag take 8 bytes each for it, not the size of a `Located`.
    pub located: Option<Box<Located>>,
}

/// How many connections a chunk's [`Counts`] holds without a heap allocation.
const INLINE: usize = 4;

/// Messages per connection id of one chunk, as (connection, messages): up to [`INLINE`]
/// connections (most chunks) held inline, more on the heap. An indexed 10 GB bag has ~13 000
/// chunks, all read at open: a `Vec` each was an allocation (and a free) per chunk.
#[derive(Debug, Clone)]
pub enum Counts {
    Inline(u8, [(u32, u32); INLINE]),
    Heap(Vec<(u32, u32)>),
}

impl Default for Counts {
    fn default() -> Self {
        Counts::Inline(0, [(0, 0); INLINE])
    }
}

impl std::ops::Deref for Counts {
    type Target = [(u32, u32)];

    fn deref(&self) -> &[(u32, u32)] {
        match self {
            Counts::Inline(n, a) => &a[..*n as usize],
            Counts::Heap(v) => v,
        }
    }
}

impl FromIterator<(u32, u32)> for Counts {
    fn from_iter<I: IntoIterator<Item = (u32, u32)>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let mut a = [(0, 0); INLINE];
        for n in 0..INLINE {
            match iter.next() {
                Some(x) => a[n] = x,
                None => return Counts::Inline(n as u8, a),
            }
        }
        match iter.next() {
            None => Counts::Inline(INLINE as u8, a),
            Some(x) => Counts::Heap(a.into_iter().chain(std::iter::once(x)).chain(iter).collect()),
        }
    }
}

impl From<Vec<(u32, u32)>> for Counts {
    fn from(v: Vec<(u32, u32)>) -> Self {
        if v.len() <= INLINE {
            v.into_iter().collect()
        } else {
            Counts::Heap(v)
        }
    }
}

impl<'a> IntoIterator for &'a Counts {
    type Item = &'a (u32, u32);
    type IntoIter = std::slice::Iter<'a, (u32, u32)>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl ChunkMeta {
    pub fn message_count(&self) -> u64 {
        self.counts.iter().map(|&(_, n)| n as u64).sum()
    }
}

/// A chunk header's compression and uncompressed size (a missing `compression` means none).
pub fn chunk_fields(header: &Header<'_>, pos: u64) -> Result<(Compression, u64)> {
    let compression = super::compression::parse(header.get("compression").unwrap_or(b"none"), pos)?;
    Ok((compression, header.u32("size")? as u64))
}

/// Builds a [`Connection`] from a connection record.
pub fn parse_connection(rec: &Record<'_>) -> Result<Connection> {
    let id = rec.header.u32("conn")?;
    let topic = rec.header.string("topic")?;
    let fields = Header::parse(rec.data, rec.offset)?;
    let mut conn = Connection {
        id,
        topic,
        encoding: "ros1".into(),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    };
    for (k, v) in fields.fields() {
        let v = String::from_utf8_lossy(v).into_owned();
        match k {
            b"type" => conn.message_type = v,
            b"message_definition" => conn.definition = v,
            // The record header's topic wins; a differing data topic is kept as metadata.
            b"topic" if v == conn.topic => {}
            k => {
                conn.metadata.insert(String::from_utf8_lossy(k).into_owned(), v);
            }
        }
    }
    if conn.message_type.is_empty() {
        return Err(Error::Malformed {
            offset: rec.offset,
            what: "connection record",
            reason: format!("connection {id} on {:?} has no type", conn.topic),
        });
    }
    Ok(conn)
}

/// Encodes a connection record.
pub fn write_connection(out: &mut Vec<u8>, conn: &Connection) {
    let md5 = conn.metadata.get(keys::MD5SUM).map(String::as_str).unwrap_or("*");
    let mut data: Vec<(&str, &[u8])> = vec![
        (keys::TOPIC, conn.topic.as_bytes()),
        (keys::TYPE, conn.message_type.as_bytes()),
        (keys::MD5SUM, md5.as_bytes()),
        (keys::MESSAGE_DEFINITION, conn.definition.as_bytes()),
    ];
    for (k, v) in &conn.metadata {
        if ![keys::MD5SUM, keys::TYPE, keys::MESSAGE_DEFINITION].contains(&k.as_str()) {
            data.push((k, v.as_bytes()));
        }
    }
    let mut body = Vec::new();
    for (k, v) in &data {
        body.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
        body.extend_from_slice(k.as_bytes());
        body.push(b'=');
        body.extend_from_slice(v);
    }
    let id = conn.id.to_le_bytes();
    record::write_record(out, &[("op", &[op::CONNECTION]), ("conn", &id), ("topic", conn.topic.as_bytes())], &body);
}

/// Checks an index record (chunk info or index data): `ver=1`, and data that holds exactly
/// `count` entries of `size` bytes.
fn check_index_record(rec: &Record<'_>, what: &'static str, size: usize) -> Result<()> {
    let [ver, count] = rec.header.get_all(["ver", "count"]);
    check_index_fields(rec, what, size, ver, count)
}

/// [`check_index_record`] on the `ver` and `count` values already looked up.
fn check_index_fields(
    rec: &Record<'_>,
    what: &'static str,
    size: usize,
    ver: Option<&[u8]>,
    count: Option<&[u8]>,
) -> Result<()> {
    let ver = rec.header.u32_of("ver", ver)?;
    if ver != 1 {
        return Err(Error::Malformed { offset: rec.offset, what, reason: format!("version {ver}, expected 1") });
    }
    let count = rec.header.u32_of("count", count)? as usize;
    if rec.data.len() != count * size {
        return Err(Error::Malformed {
            offset: rec.offset,
            what,
            reason: format!(
                "{count} entries of {size} bytes need {} bytes, record has {}",
                count * size,
                rec.data.len()
            ),
        });
    }
    Ok(())
}

/// Parses a chunk-info record. Its five fields are found in one pass over the header (a
/// 10 GB bag has ~13 000 of these records, all read at open).
pub fn parse_chunk_info(rec: &Record<'_>) -> Result<ChunkMeta> {
    let [ver, count, pos, start, end] = rec.header.get_all(["ver", "count", "chunk_pos", "start_time", "end_time"]);
    check_index_fields(rec, "chunk info", 8, ver, count)?;
    let counts = rec
        .data
        .chunks_exact(8)
        .map(|c| (u32::from_le_bytes([c[0], c[1], c[2], c[3]]), u32::from_le_bytes([c[4], c[5], c[6], c[7]])))
        .collect();
    Ok(ChunkMeta {
        pos: rec.header.u64_of("chunk_pos", pos)?,
        start: rec.header.time_of("start_time", start)?,
        end: rec.header.time_of("end_time", end)?,
        counts,
        located: None,
    })
}

/// Encodes a chunk-info record.
pub fn write_chunk_info(out: &mut Vec<u8>, meta: &ChunkMeta) -> Result<()> {
    let mut data = Vec::with_capacity(meta.counts.len() * 8);
    for &(conn, n) in &meta.counts {
        data.extend_from_slice(&conn.to_le_bytes());
        data.extend_from_slice(&n.to_le_bytes());
    }
    record::write_record(
        out,
        &[
            ("op", &[op::CHUNK_INFO]),
            ("ver", &1u32.to_le_bytes()),
            ("chunk_pos", &meta.pos.to_le_bytes()),
            ("start_time", &record::time_to_bytes(meta.start)?),
            ("end_time", &record::time_to_bytes(meta.end)?),
            ("count", &(meta.counts.len() as u32).to_le_bytes()),
        ],
        &data,
    );
    Ok(())
}

/// Calls `f` for each entry of an index-data record, in record order.
pub fn for_each_entry(rec: &Record<'_>, mut f: impl FnMut(Entry)) -> Result<()> {
    check_index_record(rec, "index data", 12)?;
    let conn = rec.header.u32("conn")?;
    for e in rec.data.chunks_exact(12) {
        f(Entry {
            time: record::time_from_bytes(&e[..8]),
            offset: u32::from_le_bytes([e[8], e[9], e[10], e[11]]),
            conn,
        });
    }
    Ok(())
}

/// Encodes the index-data records of one chunk, one per connection, ordered by connection.
pub fn write_index_data(out: &mut Vec<u8>, entries: &[Entry]) -> Result<Vec<(u32, u32)>> {
    let mut by_conn: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    for e in entries {
        let d = by_conn.entry(e.conn).or_default();
        d.extend_from_slice(&record::time_to_bytes(e.time)?);
        d.extend_from_slice(&e.offset.to_le_bytes());
    }
    let mut counts = Vec::with_capacity(by_conn.len());
    for (conn, data) in by_conn {
        let n = (data.len() / 12) as u32;
        record::write_record(
            out,
            &[
                ("op", &[op::INDEX_DATA]),
                ("ver", &1u32.to_le_bytes()),
                ("conn", &conn.to_le_bytes()),
                ("count", &n.to_le_bytes()),
            ],
            &data,
        );
        counts.push((conn, n));
    }
    Ok(counts)
}

/// Reads a message-data record at `offset` in uncompressed chunk data.
pub fn message_at<'a>(
    data: &'a [u8],
    offset: u32,
    chunk_pos: u64,
    limits: &record::Limits,
) -> Result<(u32, u64, &'a [u8])> {
    let at = offset as usize;
    let rest = data.get(at..).ok_or_else(|| Error::Malformed {
        offset: chunk_pos,
        what: "index data",
        reason: format!("message offset {offset} is past the chunk's {} bytes", data.len()),
    })?;
    let (header, data, _) =
        record::split_record(rest, chunk_pos + at as u64, limits).map_err(|e| in_chunk(e, chunk_pos))?;
    let (op, conn, time) = match record::message_fields(header, chunk_pos + at as u64 + 4) {
        Ok(f) => f,
        // Another record kind lacks conn/time: report it by its op.
        Err(e) => (record::Header::parse(header, chunk_pos)?.op().map_err(|_| e)?, 0, 0),
    };
    if op != op::MSG_DATA {
        return Err(Error::Malformed {
            offset: chunk_pos,
            what: "index data",
            reason: format!("offset {offset} in the chunk holds op 0x{op:02x}, not a message"),
        });
    }
    Ok((conn, time, data))
}

/// Errors inside decompressed chunk data carry the chunk's file offset, not a chunk-relative one.
fn in_chunk(e: Error, chunk_pos: u64) -> Error {
    match e {
        Error::Truncated { what, needed, available, .. } => Error::Malformed {
            offset: chunk_pos,
            what: "chunk",
            reason: format!("{what} runs past the chunk's end (needs {needed} bytes, {available} left)"),
        },
        other => other,
    }
}
