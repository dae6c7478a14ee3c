//! The few MCAP record layouts rbag parses itself, so message payloads are served as slices of
//! the mapped file or of a decompressed chunk instead of being copied one by one. Everything
//! else (header, schemas, channels, summary) goes through the `mcap` crate.

use std::ops::Range;

use crate::{Error, Result};

pub const MAGIC: &[u8] = b"\x89MCAP0\r\n";

pub mod op {
    pub const HEADER: u8 = 0x01;
    pub const FOOTER: u8 = 0x02;
    pub const SCHEMA: u8 = 0x03;
    pub const CHANNEL: u8 = 0x04;
    pub const MESSAGE: u8 = 0x05;
    pub const CHUNK: u8 = 0x06;
    pub const MESSAGE_INDEX: u8 = 0x07;
    pub const CHUNK_INDEX: u8 = 0x08;
    pub const ATTACHMENT: u8 = 0x09;
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    pub const STATISTICS: u8 = 0x0B;
    pub const METADATA_INDEX: u8 = 0x0D;
    pub const METADATA: u8 = 0x0C;
    pub const DATA_END: u8 = 0x0F;
}

/// One record: its op code, where its body lies in the buffer, and its file offset.
#[derive(Debug, Clone)]
pub struct Raw {
    pub op: u8,
    pub body: Range<usize>,
    pub offset: u64,
}

/// Walks `op | u64 length | body` records of `buf`; `base` is the file offset of `buf[0]`
/// (for a chunk's records, the chunk's own offset, since they have no file position).
/// A record that runs past the end gives one `Truncated` error, then the walk ends.
pub struct Walk<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
    in_chunk: bool,
}

impl<'a> Walk<'a> {
    pub fn new(buf: &'a [u8], start: usize, base: u64, in_chunk: bool) -> Self {
        Walk { buf, pos: start, base, in_chunk }
    }

    fn at(&self, pos: usize) -> u64 {
        if self.in_chunk {
            self.base
        } else {
            self.base + pos as u64
        }
    }
}

impl Iterator for Walk<'_> {
    type Item = Result<Raw>;

    fn next(&mut self) -> Option<Result<Raw>> {
        let rest = self.buf.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let offset = self.at(self.pos);
        let fail = |needed: u64, what| Error::Truncated { offset, what, needed, available: rest.len() as u64 };
        if rest.len() < 9 {
            self.pos = self.buf.len();
            return Some(Err(fail(9, "an MCAP record header")));
        }
        let len = u64_at(rest, 1);
        if len > (rest.len() - 9) as u64 {
            self.pos = self.buf.len();
            // The mcap writer puts all ones in a chunk's length until the chunk is complete.
            if len == u64::MAX {
                return Some(Err(fail(len, "an MCAP chunk its writer never finished (its length is still unset)")));
            }
            return Some(Err(fail(len.saturating_add(9), "an MCAP record")));
        }
        let start = self.pos + 9;
        let end = start + len as usize;
        self.pos = end;
        Some(Ok(Raw { op: rest[0], body: start..end, offset }))
    }
}

/// The fixed fields of a Message record; `data` is relative to the record body.
pub struct MessageHead {
    pub channel: u16,
    pub log_time: u64,
    pub publish_time: u64,
    pub data: Range<usize>,
}

pub fn message(body: &[u8], offset: u64) -> Result<MessageHead> {
    if body.len() < 22 {
        return Err(Error::Malformed {
            offset,
            what: "MCAP message",
            reason: format!("{} bytes, under the 22 of its fixed fields", body.len()),
        });
    }
    Ok(MessageHead {
        channel: u16::from_le_bytes([body[0], body[1]]),
        log_time: u64_at(body, 6),
        publish_time: u64_at(body, 14),
        data: 22..body.len(),
    })
}

/// A Chunk record's header, with where its (maybe compressed) records lie in the body.
pub struct ChunkHead {
    pub start: u64,
    pub end: u64,
    pub uncompressed_size: u64,
    pub crc: u32,
    pub compression: String,
    pub records: Range<usize>,
}

pub fn chunk(body: &[u8], offset: u64) -> Result<ChunkHead> {
    chunk_inner(body, offset, false)
}

/// The header of a chunk the file ends inside: its records are whatever bytes are left.
pub fn torn_chunk(body: &[u8], offset: u64) -> Result<ChunkHead> {
    chunk_inner(body, offset, true)
}

fn chunk_inner(body: &[u8], offset: u64, torn: bool) -> Result<ChunkHead> {
    let bad = |reason: String| Error::Malformed { offset, what: "MCAP chunk", reason };
    if body.len() < 32 {
        return Err(bad(format!("{} bytes, under the 32 of its fixed fields", body.len())));
    }
    let name_len = u32::from_le_bytes([body[28], body[29], body[30], body[31]]) as usize;
    let name_end = 32usize
        .checked_add(name_len)
        .filter(|&e| e + 8 <= body.len())
        .ok_or_else(|| bad(format!("compression name of {name_len} bytes runs past the record")))?;
    let compression =
        std::str::from_utf8(&body[32..name_end]).map_err(|_| bad("compression name is not UTF-8".into()))?.to_string();
    let records_len = u64_at(body, name_end);
    let records_start = name_end + 8;
    if !torn && records_len != (body.len() - records_start) as u64 {
        return Err(bad(format!(
            "records length {records_len} disagrees with the record ({} bytes)",
            body.len() - records_start
        )));
    }
    Ok(ChunkHead {
        start: u64_at(body, 0),
        end: u64_at(body, 8),
        uncompressed_size: u64_at(body, 16),
        crc: u32::from_le_bytes([body[24], body[25], body[26], body[27]]),
        compression,
        records: records_start..body.len(),
    })
}

/// `(channel, log_time, offset in the chunk's records)` of each entry of a MessageIndex record
/// body.
pub fn message_index(body: &[u8], offset: u64, out: &mut impl FnMut(u16, u64, u64)) -> Result<()> {
    let bad = |reason: String| Error::Malformed { offset, what: "MCAP message index", reason };
    if body.len() < 6 {
        return Err(bad("shorter than its fixed fields".into()));
    }
    let channel = u16::from_le_bytes([body[0], body[1]]);
    let len = u32::from_le_bytes([body[2], body[3], body[4], body[5]]) as usize;
    let entries = body
        .get(6..6 + len)
        .filter(|e| e.len() % 16 == 0)
        .ok_or_else(|| bad(format!("entries of {len} bytes do not fit")))?;
    for e in entries.chunks_exact(16) {
        out(channel, u64_at(e, 0), u64_at(e, 8));
    }
    Ok(())
}

/// Reads a little-endian u64 at `at`; callers have checked the length.
fn u64_at(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_reports_a_torn_record_once() {
        let mut buf = vec![op::MESSAGE];
        buf.extend_from_slice(&100u64.to_le_bytes());
        buf.extend_from_slice(&[0; 10]);
        let mut w = Walk::new(&buf, 0, 8, false);
        assert!(matches!(w.next(), Some(Err(Error::Truncated { offset: 8, .. }))));
        assert!(w.next().is_none());
    }

    #[test]
    fn short_message_is_an_error() {
        assert!(message(&[0; 10], 0).is_err());
        let m = message(&[0; 25], 0).unwrap();
        assert_eq!(m.data, 22..25);
    }
}
