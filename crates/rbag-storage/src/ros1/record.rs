//! ROS bag v2.0 records, parsed from byte slices with no I/O.
//!
//! A record is `header_len: u32, header, data_len: u32, data`; a header is a list of
//! `field_len: u32, name=value` fields, one of them `op`. Every length is checked against the
//! bytes that remain and against [`Limits`] before anything is allocated.

use crate::{Error, Result};

/// The file magic, version line included.
pub const MAGIC: &[u8] = b"#ROSBAG V2.0\n";

/// Record op codes.
pub mod op {
    /// A message data record.
    pub const MSG_DATA: u8 = 0x02;
    /// The bag header record.
    pub const BAG_HEADER: u8 = 0x03;
    /// An index data record (per connection, after each chunk).
    pub const INDEX_DATA: u8 = 0x04;
    /// A chunk record.
    pub const CHUNK: u8 = 0x05;
    /// A chunk info record (in the index section).
    pub const CHUNK_INFO: u8 = 0x06;
    /// A connection record.
    pub const CONNECTION: u8 = 0x07;
}

/// Upper bounds on lengths read from a file, against lying length fields.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A record header (connection headers carry whole message definitions).
    pub max_header_len: u32,
    /// A record's data, and a chunk's uncompressed size. How much of it is held in memory at
    /// once is up to [`crate::budget`], not this.
    pub max_data_len: u64,
}

impl Default for Limits {
    /// 1 GiB of data: roscpp itself refuses messages over 10^9 bytes, so no real bag holds a
    /// larger record.
    fn default() -> Self {
        Limits { max_header_len: 16 << 20, max_data_len: 1 << 30 }
    }
}

impl Limits {
    /// How far a torn compressed chunk (whose header gives no size) is decoded: 1024 times its
    /// compressed bytes, at least 64 MiB, at most `max_data_len`. Decoding streams (memory stays
    /// bounded either way); this bounds the time a decompression bomb costs.
    pub fn salvage_limit(&self, compressed: usize) -> u64 {
        ((compressed as u64).saturating_mul(1024)).max(64 << 20).min(self.max_data_len)
    }
}

/// A record header: its `name=value` fields in file order, borrowed and validated once; field
/// lookups walk the (short) list again rather than allocating one.
#[derive(Debug, Clone, Copy)]
pub struct Header<'a> {
    /// File offset of the header, for error messages.
    pub offset: u64,
    raw: &'a [u8],
}

/// Splits the first field off `rest`: `(name, value, rest)`.
fn split_field(rest: &[u8], at: u64) -> Result<(&[u8], &[u8], &[u8])> {
    let len = read_u32(rest, at, "header field length")? as usize;
    let body = rest.get(4..).and_then(|r| r.get(..len)).ok_or_else(|| Error::Truncated {
        offset: at,
        what: "header field",
        needed: len as u64,
        available: rest.len().saturating_sub(4) as u64,
    })?;
    let eq = body.iter().position(|&b| b == b'=').ok_or_else(|| Error::Malformed {
        offset: at,
        what: "header field",
        reason: "no '=' in field".into(),
    })?;
    Ok((&body[..eq], &body[eq + 1..], &rest[4 + len..]))
}

impl<'a> Header<'a> {
    /// Checks that `buf` splits into `name=value` fields.
    pub fn parse(buf: &'a [u8], offset: u64) -> Result<Self> {
        let mut rest = buf;
        while !rest.is_empty() {
            let at = offset + (buf.len() - rest.len()) as u64;
            rest = split_field(rest, at)?.2;
        }
        Ok(Header { offset, raw: buf })
    }

    /// The first value of field `name`.
    pub fn get(&self, name: &str) -> Option<&'a [u8]> {
        self.fields().find(|(k, _)| *k == name.as_bytes()).map(|(_, v)| v)
    }

    /// All fields in file order.
    pub fn fields(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let mut rest = self.raw;
        std::iter::from_fn(move || {
            // `parse` validated every field, so splitting cannot fail here.
            let (k, v, r) = split_field(rest, 0).ok()?;
            rest = r;
            Some((k, v))
        })
    }

    /// The first values of fields `names`, in one pass over the fields: a record read for
    /// several fields (a chunk info's five) splits its fields once, not once per field.
    pub fn get_all<const N: usize>(&self, names: [&str; N]) -> [Option<&'a [u8]>; N] {
        let mut out = [None; N];
        let mut left = N;
        for (k, v) in self.fields() {
            if let Some(i) = names.iter().position(|n| n.as_bytes() == k) {
                if out[i].is_none() {
                    out[i] = Some(v);
                    left -= 1;
                    if left == 0 {
                        break;
                    }
                }
            }
        }
        out
    }

    /// Field `name`'s value `v` (from [`Header::get_all`]) as a little-endian `u32`, with the
    /// errors of [`Header::u32`].
    pub fn u32_of(&self, name: &'static str, v: Option<&'a [u8]>) -> Result<u32> {
        let v = self.check(name, v, 4)?;
        Ok(u32::from_le_bytes([v[0], v[1], v[2], v[3]]))
    }

    /// Field `name`'s value `v` as a little-endian `u64`, with the errors of [`Header::u64`].
    pub fn u64_of(&self, name: &'static str, v: Option<&'a [u8]>) -> Result<u64> {
        let v = self.check(name, v, 8)?;
        let mut b = [0u8; 8];
        b.copy_from_slice(v);
        Ok(u64::from_le_bytes(b))
    }

    /// Field `name`'s value `v` as a ROS time, with the errors of [`Header::time`].
    pub fn time_of(&self, name: &'static str, v: Option<&'a [u8]>) -> Result<u64> {
        Ok(time_from_bytes(self.check(name, v, 8)?))
    }

    fn require(&self, name: &'static str, len: usize) -> Result<&'a [u8]> {
        self.check(name, self.get(name), len)
    }

    /// `v` (field `name`'s value, if any) when it is `len` bytes long.
    fn check(&self, name: &'static str, v: Option<&'a [u8]>, len: usize) -> Result<&'a [u8]> {
        let v = v.ok_or_else(|| Error::Malformed {
            offset: self.offset,
            what: "record header",
            reason: format!("missing field {name:?}"),
        })?;
        if v.len() != len {
            return Err(Error::Malformed {
                offset: self.offset,
                what: "record header",
                reason: format!("field {name:?} has {} bytes, expected {len}", v.len()),
            });
        }
        Ok(v)
    }

    /// The `op` field.
    pub fn op(&self) -> Result<u8> {
        Ok(self.require("op", 1)?[0])
    }

    /// The little-endian `u32` field `name`.
    pub fn u32(&self, name: &'static str) -> Result<u32> {
        let v = self.require(name, 4)?;
        Ok(u32::from_le_bytes([v[0], v[1], v[2], v[3]]))
    }

    /// The little-endian `u64` field `name`.
    pub fn u64(&self, name: &'static str) -> Result<u64> {
        let v = self.require(name, 8)?;
        let mut b = [0u8; 8];
        b.copy_from_slice(v);
        Ok(u64::from_le_bytes(b))
    }

    /// A ROS time field as nanoseconds.
    pub fn time(&self, name: &'static str) -> Result<u64> {
        let v = self.require(name, 8)?;
        Ok(time_from_bytes(v))
    }

    /// A text field (topic, type, compression).
    pub fn string(&self, name: &'static str) -> Result<String> {
        let v = self.get(name).ok_or_else(|| Error::Malformed {
            offset: self.offset,
            what: "record header",
            reason: format!("missing field {name:?}"),
        })?;
        Ok(String::from_utf8_lossy(v).into_owned())
    }
}

/// `op`, `conn` and `time` of a record header in one validating pass over its fields: the hot
/// path of reading messages. A missing or mis-sized field is reported as [`Header::u32`] would.
pub fn message_fields(raw: &[u8], offset: u64) -> Result<(u8, u32, u64)> {
    let (mut op, mut conn, mut time) = (None, None, None);
    let mut rest = raw;
    while !rest.is_empty() {
        let (k, v, r) = split_field(rest, offset + (raw.len() - rest.len()) as u64)?;
        rest = r;
        match (k, v.len()) {
            (b"op", 1) if op.is_none() => op = Some(v[0]),
            (b"conn", 4) if conn.is_none() => conn = Some(u32::from_le_bytes([v[0], v[1], v[2], v[3]])),
            (b"time", 8) if time.is_none() => time = Some(time_from_bytes(v)),
            _ => {}
        }
    }
    match (op, conn, time) {
        (Some(op), Some(conn), Some(time)) => Ok((op, conn, time)),
        _ => {
            let h = Header { offset, raw };
            Ok((h.op()?, h.u32("conn")?, h.time("time")?))
        }
    }
}

/// A ROS `time` (u32 secs, u32 nsecs) as nanoseconds since the epoch.
pub fn time_from_bytes(v: &[u8]) -> u64 {
    let sec = u32::from_le_bytes([v[0], v[1], v[2], v[3]]) as u64;
    let nsec = u32::from_le_bytes([v[4], v[5], v[6], v[7]]) as u64;
    sec * 1_000_000_000 + nsec
}

/// Nanoseconds as a ROS `time`; fails past the year 2106.
pub fn time_to_bytes(ns: u64) -> Result<[u8; 8]> {
    let sec = u32::try_from(ns / 1_000_000_000)
        .map_err(|_| Error::Invalid(format!("time {ns} ns does not fit a ROS 1 time")))?;
    let nsec = (ns % 1_000_000_000) as u32;
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&sec.to_le_bytes());
    b[4..].copy_from_slice(&nsec.to_le_bytes());
    Ok(b)
}

pub(crate) fn read_u32(buf: &[u8], offset: u64, what: &'static str) -> Result<u32> {
    match buf.get(..4) {
        Some(b) => Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        None => Err(Error::Truncated { offset, what, needed: 4, available: buf.len() as u64 }),
    }
}

/// One record in a buffer.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    /// The record header's fields.
    pub header: Header<'a>,
    /// The record data.
    pub data: &'a [u8],
    /// File offset of the record's first byte.
    pub offset: u64,
    /// Total bytes the record takes.
    pub len: usize,
}

impl<'a> Record<'a> {
    /// The `op` field of the header.
    pub fn op(&self) -> Result<u8> {
        self.header.op()
    }
}

/// The lengths at the start of a record, read before its body is available.
#[derive(Debug, Clone, Copy)]
pub struct Prefix {
    /// Bytes of the header.
    pub header_len: u32,
    /// Bytes of the data.
    pub data_len: u32,
}

/// Splits the record at the start of `buf` (file offset `offset`) into its header bytes and
/// data, checking both lengths; the header's fields are not looked at.
pub fn split_record<'a>(buf: &'a [u8], offset: u64, limits: &Limits) -> Result<(&'a [u8], &'a [u8], usize)> {
    let header_len = read_u32(buf, offset, "record header length")?;
    check_header_len(header_len, offset, limits)?;
    let hl = header_len as usize;
    let header = buf.get(4..4 + hl).ok_or_else(|| Error::Truncated {
        offset,
        what: "record header",
        needed: header_len as u64,
        available: buf.len().saturating_sub(4) as u64,
    })?;
    let data_at = 4 + hl;
    let data_len = read_u32(&buf[data_at.min(buf.len())..], offset + data_at as u64, "record data length")?;
    check_data_len(data_len as u64, offset, limits)?;
    let start = data_at + 4;
    let data = buf.get(start..start + data_len as usize).ok_or_else(|| Error::Truncated {
        offset,
        what: "record data",
        needed: data_len as u64,
        available: buf.len().saturating_sub(start) as u64,
    })?;
    Ok((header, data, start + data_len as usize))
}

/// Parses the record at the start of `buf` (which begins at file offset `offset`).
pub fn parse_record<'a>(buf: &'a [u8], offset: u64, limits: &Limits) -> Result<Record<'a>> {
    let (header, data, len) = split_record(buf, offset, limits)?;
    let header = Header::parse(header, offset + 4)?;
    Ok(Record { header, data, offset, len })
}

pub(crate) fn check_header_len(len: u32, offset: u64, limits: &Limits) -> Result<()> {
    if len > limits.max_header_len {
        return Err(Error::TooLarge {
            offset,
            what: "record header",
            len: len as u64,
            limit: limits.max_header_len as u64,
        });
    }
    Ok(())
}

pub(crate) fn check_data_len(len: u64, offset: u64, limits: &Limits) -> Result<()> {
    if len > limits.max_data_len {
        return Err(Error::TooLarge { offset, what: "record data", len, limit: limits.max_data_len });
    }
    Ok(())
}

/// The length of the whole record at the start of `buf` (file offset `offset`, the rest of
/// the file): what [`read_record_into`] reads, with its checks and errors, when the bytes are
/// already at hand (a mapped file), so none are copied.
pub fn record_len(buf: &[u8], offset: u64, limits: &Limits) -> Result<usize> {
    let remaining = buf.len() as u64;
    let truncated = |what, needed| Error::Truncated { offset, what, needed, available: remaining };
    if remaining < 4 {
        return Err(truncated("record header length", 4));
    }
    let header_len = read_u32(buf, offset, "record header length")?;
    check_header_len(header_len, offset, limits)?;
    let with_len = 8 + header_len as u64;
    if with_len > remaining {
        return Err(truncated("record header", with_len));
    }
    let data_len = read_u32(&buf[4 + header_len as usize..], offset, "record data length")? as u64;
    check_data_len(data_len, offset, limits)?;
    if with_len + data_len > remaining {
        return Err(truncated("record data", with_len + data_len));
    }
    Ok((with_len + data_len) as usize)
}

/// Reads one whole record from `r` (positioned at file offset `offset`, with `remaining` bytes
/// left in the file) into `buf`, checking both lengths before allocating.
pub fn read_record_into(
    r: &mut impl std::io::Read,
    offset: u64,
    remaining: u64,
    limits: &Limits,
    buf: &mut Vec<u8>,
) -> Result<()> {
    let io = |e: std::io::Error| Error::Io { path: Default::default(), source: e };
    let truncated = |what, needed| Error::Truncated { offset, what, needed, available: remaining };
    buf.clear();
    if remaining < 4 {
        return Err(truncated("record header length", 4));
    }
    buf.resize(4, 0);
    r.read_exact(buf).map_err(io)?;
    let header_len = read_u32(buf, offset, "record header length")?;
    check_header_len(header_len, offset, limits)?;
    let with_len = 8 + header_len as u64;
    if with_len > remaining {
        return Err(truncated("record header", with_len));
    }
    buf.resize(with_len as usize, 0);
    r.read_exact(&mut buf[4..]).map_err(io)?;
    let data_len = read_u32(&buf[4 + header_len as usize..], offset, "record data length")? as u64;
    check_data_len(data_len, offset, limits)?;
    if with_len + data_len > remaining {
        return Err(truncated("record data", with_len + data_len));
    }
    // The file holds that many bytes (checked above); a failed allocation is an error, not an abort.
    let total = (with_len + data_len) as usize;
    buf.try_reserve_exact(total.saturating_sub(buf.len())).map_err(|_| Error::OutOfMemory {
        offset,
        what: "record",
        needed: with_len + data_len,
    })?;
    buf.resize(total, 0);
    r.read_exact(&mut buf[with_len as usize..]).map_err(io)?;
    Ok(())
}

/// Appends a record with the given header fields and data.
pub fn write_record(out: &mut Vec<u8>, fields: &[(&str, &[u8])], data: &[u8]) {
    let header_len: usize = fields.iter().map(|(k, v)| 4 + k.len() + 1 + v.len()).sum();
    out.reserve(8 + header_len + data.len());
    out.extend_from_slice(&(header_len as u32).to_le_bytes());
    for (k, v) in fields {
        out.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
        out.extend_from_slice(k.as_bytes());
        out.push(b'=');
        out.extend_from_slice(v);
    }
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
}

/// Iterates over the records packed in `buf` (a chunk's data, or an index region).
pub struct Records<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
    limits: Limits,
}

impl<'a> Records<'a> {
    /// Records of `buf`, whose first byte is at file offset `base`.
    pub fn new(buf: &'a [u8], base: u64, limits: Limits) -> Self {
        Records { buf, pos: 0, base, limits }
    }

    /// Bytes consumed by complete records so far.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let offset = self.base + self.pos as u64;
        match parse_record(&self.buf[self.pos..], offset, &self.limits) {
            Ok(r) => {
                self.pos += r.len;
                Some(Ok(r))
            }
            Err(e) => {
                self.pos = self.buf.len();
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_record() {
        let mut buf = Vec::new();
        write_record(&mut buf, &[("op", &[op::MSG_DATA]), ("conn", &7u32.to_le_bytes())], b"hello");
        let r = parse_record(&buf, 100, &Limits::default()).unwrap();
        assert_eq!(r.op().unwrap(), op::MSG_DATA);
        assert_eq!(r.header.u32("conn").unwrap(), 7);
        assert_eq!(r.data, b"hello");
        assert_eq!(r.len, buf.len());
    }

    #[test]
    fn truncated_and_lying_lengths_are_errors() {
        let mut buf = Vec::new();
        write_record(&mut buf, &[("op", &[op::MSG_DATA])], b"hello");
        for cut in 0..buf.len() {
            assert!(parse_record(&buf[..cut], 0, &Limits::default()).is_err(), "cut {cut}");
        }
        let mut lying = buf.clone();
        lying[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(parse_record(&lying, 0, &Limits::default()), Err(Error::TooLarge { .. })));
        let mut field = buf.clone();
        field[4..8].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
        assert!(parse_record(&field, 0, &Limits::default()).is_err());
    }

    #[test]
    fn time_conversion() {
        let b = time_to_bytes(1_700_000_000_123_456_789).unwrap();
        assert_eq!(time_from_bytes(&b), 1_700_000_000_123_456_789);
        assert!(time_to_bytes(u64::MAX).is_err());
    }
}
