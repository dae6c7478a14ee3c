//! Bounds-checked parsing of the MCAP records rbag reads: header, schema, channel, statistics,
//! chunk index, metadata index and metadata. The `mcap` crate allocates whatever a string's
//! length prefix says before it checks the record holds that much (fuzzing found a 4 GiB
//! allocation from a 9-byte record), so reading never hands file bytes to it.

use std::collections::BTreeMap;

use crate::{Error, Result};

/// A cursor over one record body; every read checks the bytes are there.
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    offset: u64,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8], offset: u64, what: &'static str) -> Self {
        Cursor { buf, pos: 0, offset, what }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(|| Error::Malformed {
            offset: self.offset,
            what: self.what,
            reason: format!(
                "a field of {n} bytes at byte {} runs past the record's {} bytes",
                self.pos,
                self.buf.len()
            ),
        })?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self) -> Result<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    /// A `u32`-prefixed byte string, borrowed.
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    pub fn string(&mut self) -> Result<String> {
        let (offset, what) = (self.offset, self.what);
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| Error::Malformed {
            offset,
            what,
            reason: "a string is not UTF-8".into(),
        })
    }

    /// A `u32` byte-length prefixed map, each entry read by `entry`.
    fn map<K: Ord, V>(&mut self, mut entry: impl FnMut(&mut Cursor<'a>) -> Result<(K, V)>) -> Result<BTreeMap<K, V>> {
        let body = self.bytes()?;
        let mut inner = Cursor { buf: body, pos: 0, offset: self.offset, what: self.what };
        let mut out = BTreeMap::new();
        while inner.pos < body.len() {
            let (k, v) = entry(&mut inner)?;
            out.insert(k, v);
        }
        Ok(out)
    }

    pub fn string_map(&mut self) -> Result<BTreeMap<String, String>> {
        self.map(|c| Ok((c.string()?, c.string()?)))
    }
}

pub struct Header {
    pub profile: String,
    pub library: String,
}

pub fn header(body: &[u8], offset: u64) -> Result<Header> {
    let mut c = Cursor::new(body, offset, "MCAP header");
    Ok(Header { profile: c.string()?, library: c.string()? })
}

pub struct Schema {
    pub id: u16,
    pub name: String,
    pub encoding: String,
    pub data: Vec<u8>,
}

pub fn schema(body: &[u8], offset: u64) -> Result<Schema> {
    let mut c = Cursor::new(body, offset, "MCAP schema");
    Ok(Schema { id: c.u16()?, name: c.string()?, encoding: c.string()?, data: c.bytes()?.to_vec() })
}

pub struct Channel {
    pub id: u16,
    pub schema_id: u16,
    pub topic: String,
    pub message_encoding: String,
    pub metadata: BTreeMap<String, String>,
}

pub fn channel(body: &[u8], offset: u64) -> Result<Channel> {
    let mut c = Cursor::new(body, offset, "MCAP channel");
    Ok(Channel {
        id: c.u16()?,
        schema_id: c.u16()?,
        topic: c.string()?,
        message_encoding: c.string()?,
        metadata: c.string_map()?,
    })
}

pub struct Statistics {
    pub message_count: u64,
    pub attachment_count: u32,
    pub metadata_count: u32,
    pub channel_message_counts: BTreeMap<u16, u64>,
}

pub fn statistics(body: &[u8], offset: u64) -> Result<Statistics> {
    let mut c = Cursor::new(body, offset, "MCAP statistics");
    let message_count = c.u64()?;
    c.u16()?; // schemas
    c.u32()?; // channels
    let attachment_count = c.u32()?;
    let metadata_count = c.u32()?;
    c.u32()?; // chunks
    c.u64()?; // start
    c.u64()?; // end
    let channel_message_counts = c.map(|c| Ok((c.u16()?, c.u64()?)))?;
    Ok(Statistics { message_count, attachment_count, metadata_count, channel_message_counts })
}

pub struct ChunkIndex {
    pub message_start_time: u64,
    pub message_end_time: u64,
    pub chunk_start_offset: u64,
    pub chunk_length: u64,
    pub message_index_offsets: BTreeMap<u16, u64>,
    pub compression: String,
    pub compressed_size: u64,
    pub uncompressed_size: u64,
}

pub fn chunk_index(body: &[u8], offset: u64) -> Result<ChunkIndex> {
    let mut c = Cursor::new(body, offset, "MCAP chunk index");
    let message_start_time = c.u64()?;
    let message_end_time = c.u64()?;
    let chunk_start_offset = c.u64()?;
    let chunk_length = c.u64()?;
    let message_index_offsets = c.map(|c| Ok((c.u16()?, c.u64()?)))?;
    c.u64()?; // message index length
    Ok(ChunkIndex {
        message_start_time,
        message_end_time,
        chunk_start_offset,
        chunk_length,
        message_index_offsets,
        compression: c.string()?,
        compressed_size: c.u64()?,
        uncompressed_size: c.u64()?,
    })
}

/// A Chunk Index record's fields without allocations: its (channel, MessageIndex offset)
/// pairs go to a caller's flat list, and the compression name is borrowed. What the reader
/// keeps of each of a 10 GB file's ~13 000 chunk indexes; [`chunk_index`] is the same record
/// as owned fields.
pub struct ChunkIndexRef<'a> {
    pub message_start_time: u64,
    pub message_end_time: u64,
    pub chunk_start_offset: u64,
    pub chunk_length: u64,
    pub message_index_length: u64,
    pub compression: &'a str,
    pub compressed_size: u64,
    pub uncompressed_size: u64,
}

/// Parses a Chunk Index record as [`chunk_index`] does (the same errors), appending its
/// message index offsets to `offsets` as (channel, offset) sorted by channel, the last of
/// a repeated channel kept (as a map keeps it). On an error `offsets` is left as it was.
pub fn chunk_index_into<'a>(body: &'a [u8], offset: u64, offsets: &mut Vec<(u16, u64)>) -> Result<ChunkIndexRef<'a>> {
    let from = offsets.len();
    let r = chunk_index_fields(body, offset, offsets);
    if r.is_err() {
        offsets.truncate(from);
    } else {
        let added = &mut offsets[from..];
        if !added.windows(2).all(|w| w[0].0 < w[1].0) {
            // Out of order or repeated: sorted (stably, so a repeat's last stays last), then
            // each channel's last entry kept.
            added.sort_by_key(|e| e.0);
            let mut keep = from;
            for k in from..offsets.len() {
                if k + 1 < offsets.len() && offsets[k + 1].0 == offsets[k].0 {
                    continue;
                }
                offsets[keep] = offsets[k];
                keep += 1;
            }
            offsets.truncate(keep);
        }
    }
    r
}

fn chunk_index_fields<'a>(body: &'a [u8], offset: u64, offsets: &mut Vec<(u16, u64)>) -> Result<ChunkIndexRef<'a>> {
    let mut c = Cursor::new(body, offset, "MCAP chunk index");
    let message_start_time = c.u64()?;
    let message_end_time = c.u64()?;
    let chunk_start_offset = c.u64()?;
    let chunk_length = c.u64()?;
    let map = c.bytes()?;
    let mut inner = Cursor { buf: map, pos: 0, offset: c.offset, what: c.what };
    while inner.pos < map.len() {
        offsets.push((inner.u16()?, inner.u64()?));
    }
    let message_index_length = c.u64()?;
    let compression = std::str::from_utf8(c.bytes()?).map_err(|_| Error::Malformed {
        offset,
        what: "MCAP chunk index",
        reason: "a string is not UTF-8".into(),
    })?;
    Ok(ChunkIndexRef {
        message_start_time,
        message_end_time,
        chunk_start_offset,
        chunk_length,
        message_index_length,
        compression,
        compressed_size: c.u64()?,
        uncompressed_size: c.u64()?,
    })
}

/// Where a Metadata record is, and its length (op and length prefix included).
pub struct MetadataIndex {
    pub offset: u64,
    pub length: u64,
}

pub fn metadata_index(body: &[u8], offset: u64) -> Result<MetadataIndex> {
    let mut c = Cursor::new(body, offset, "MCAP metadata index");
    Ok(MetadataIndex { offset: c.u64()?, length: c.u64()? })
}

pub fn metadata(body: &[u8], offset: u64) -> Result<(String, BTreeMap<String, String>)> {
    let mut c = Cursor::new(body, offset, "MCAP metadata");
    Ok((c.string()?, c.string_map()?))
}

/// Where an Attachment record is, and its length (op and length prefix included).
pub struct AttachmentIndex {
    pub offset: u64,
    pub length: u64,
}

pub fn attachment_index(body: &[u8], offset: u64) -> Result<AttachmentIndex> {
    let mut c = Cursor::new(body, offset, "MCAP attachment index");
    Ok(AttachmentIndex { offset: c.u64()?, length: c.u64()? })
}

/// An Attachment record's fields; `data` is where its bytes lie in the record body.
pub struct Attachment {
    pub log_time: u64,
    pub create_time: u64,
    pub name: String,
    pub media_type: String,
    pub data: std::ops::Range<usize>,
    pub crc: u32,
}

pub fn attachment(body: &[u8], offset: u64) -> Result<Attachment> {
    let mut c = Cursor::new(body, offset, "MCAP attachment");
    let (log_time, create_time, name, media_type) = (c.u64()?, c.u64()?, c.string()?, c.string()?);
    let len = c.u64()?;
    let start = c.pos;
    let n = usize::try_from(len).unwrap_or(usize::MAX);
    c.take(n)?;
    let data = start..c.pos;
    Ok(Attachment { log_time, create_time, name, media_type, data, crc: c.u32()? })
}

/// Where the summary section starts, from the footer at the end of `buf` (the file's bytes
/// from offset `base` to its end); `None` when the file has no summary.
pub fn footer(buf: &[u8], base: u64) -> Result<Option<u64>> {
    // Footer record (op, len, summary_start, summary_offset_start, crc) then the magic.
    let len = buf.len();
    let at = len.checked_sub(super::records::MAGIC.len() + 29).ok_or_else(|| Error::Malformed {
        offset: base,
        what: "MCAP footer",
        reason: "the file is too short to hold one".into(),
    })?;
    let rec = &buf[at..at + 29];
    let at_file = base + at as u64;
    if rec[0] != super::records::op::FOOTER {
        return Err(Error::Malformed {
            offset: at_file,
            what: "MCAP footer",
            reason: format!("op 0x{:02x} where the footer belongs", rec[0]),
        });
    }
    let mut c = Cursor::new(&rec[9..], at_file, "MCAP footer");
    let start = c.u64()?;
    Ok((start != 0).then_some(start).filter(|&s| s < at_file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lying_string_length_is_an_error_not_an_allocation() {
        let mut body = 7u16.to_le_bytes().to_vec();
        body.extend_from_slice(&u32::MAX.to_le_bytes());
        body.extend_from_slice(b"abc");
        assert!(schema(&body, 100).is_err());
        assert!(channel(&body, 100).is_err());
    }

    /// The flat parse gives what the map parse gives: pairs sorted by channel, a repeated
    /// channel's last offset, and the same errors.
    #[test]
    fn flat_chunk_index_matches_the_map() {
        let record = |pairs: &[(u16, u64)], compression: &[u8]| {
            let mut b = Vec::new();
            for v in [1u64, 2, 8, 100] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.extend_from_slice(&((pairs.len() * 10) as u32).to_le_bytes());
            for &(ch, off) in pairs {
                b.extend_from_slice(&ch.to_le_bytes());
                b.extend_from_slice(&off.to_le_bytes());
            }
            b.extend_from_slice(&7u64.to_le_bytes());
            b.extend_from_slice(&(compression.len() as u32).to_le_bytes());
            b.extend_from_slice(compression);
            b.extend_from_slice(&50u64.to_le_bytes());
            b.extend_from_slice(&60u64.to_le_bytes());
            b
        };
        for pairs in [&[(1, 10), (2, 20)][..], &[(3, 30), (1, 10), (3, 33), (2, 20)], &[]] {
            let body = record(pairs, b"zstd");
            let map = chunk_index(&body, 0).unwrap();
            let mut flat = vec![(9, 9)];
            let r = chunk_index_into(&body, 0, &mut flat).unwrap();
            let want: Vec<(u16, u64)> = map.message_index_offsets.into_iter().collect();
            assert_eq!(flat[1..], want[..]);
            assert_eq!((r.compression, r.chunk_length, r.uncompressed_size), ("zstd", 100, 60));
        }
        let bad = record(&[(1, 10)], &[0xff]);
        let mut flat = vec![(9, 9)];
        let e = chunk_index_into(&bad, 0, &mut flat).err().unwrap().to_string();
        assert_eq!(e, chunk_index(&bad, 0).err().unwrap().to_string());
        assert_eq!(flat, [(9, 9)]);
        let short = &record(&[(1, 10)], b"")[..40];
        assert!(chunk_index_into(short, 0, &mut flat).is_err() && flat == [(9, 9)]);
    }

    #[test]
    fn maps_stay_inside_their_length() {
        let mut body = Vec::new();
        body.extend_from_slice(&[1, 0, 2, 0]);
        for s in ["/t", "cdr"] {
            body.extend_from_slice(&(s.len() as u32).to_le_bytes());
            body.extend_from_slice(s.as_bytes());
        }
        body.extend_from_slice(&0u32.to_le_bytes());
        let ch = channel(&body, 0).unwrap();
        assert_eq!((ch.id, ch.schema_id, ch.topic.as_str(), ch.metadata.len()), (1, 2, "/t", 0));
    }
}
