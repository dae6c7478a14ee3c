//! The TCPROS connection header and message frames.
//!
//! A header is `u32le total_len`, then fields, each `u32le len` + `key=value` (split at the
//! first `=`). A frame is `u32le len` + the serialized message. Nothing here knows about
//! sockets: readers take any [`Read`], so the fuzz target feeds them a `Cursor`.

use std::io::{self, Read, Write};

use bytes::Bytes;

use super::Limits;

/// What was wrong with the bytes of one connection, before the caller adds topic and peer.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// A length prefix over its limit: the peer is lying, or is not speaking TCPROS.
    #[error("{what} length {len} is over the limit of {limit} bytes")]
    TooLong {
        /// What was being read (the length prefix, the header, a message).
        what: &'static str,
        /// The length the peer announced.
        len: u64,
        /// The limit it is over.
        limit: u64,
    },
    /// The peer closed the connection inside a length prefix, a header or a message.
    #[error("connection closed inside the {what}: {missing} of {expected} bytes missing")]
    Truncated {
        /// What was being read (the length prefix, the header, a message).
        what: &'static str,
        /// Bytes the item needed.
        expected: u64,
        /// Bytes that never came.
        missing: u64,
    },
    /// The header's fields do not split into `key=value` text.
    #[error("malformed connection header: {reason}")]
    Malformed {
        /// What is wrong with it.
        reason: String,
    },
    /// No byte arrived within the socket's read timeout. The stream's position inside the
    /// frame is lost, so the connection cannot be read further.
    #[error("nothing arrived within the read timeout while reading the {what}")]
    TimedOut {
        /// What was being read (the length prefix, the header, a message).
        what: &'static str,
    },
    /// The socket failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being read (the length prefix, the header, a message).
        what: &'static str,
        /// The socket's error.
        source: io::Error,
    },
}

/// A connection header: `key=value` fields in the order they were sent or added.
///
/// Keys may repeat on the wire; [`Header::get`] returns the last value, as roscpp's map and
/// rospy's dict both keep the last one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    fields: Vec<(String, String)>,
}

impl Header {
    /// An empty header.
    pub fn new() -> Header {
        Header::default()
    }

    /// A header with these fields, in this order.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Header {
        Header { fields: pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect() }
    }

    /// Appends a field.
    pub fn push(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.fields.push((key.into(), value.into()));
    }

    /// Sorts the fields by key (stable), the order roscpp and rospy send them in.
    pub fn sort(&mut self) {
        self.fields.sort_by(|a, b| a.0.cmp(&b.0));
    }

    /// The last value of field `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// All fields in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.fields.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many fields there are.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there are no fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Splits a header's body (the bytes after its total length) into fields. Every field
    /// length is checked against the bytes left; fields must hold `=` and be UTF-8.
    pub fn parse(body: &[u8]) -> Result<Header, WireError> {
        let mut fields = Vec::new();
        let mut at = 0usize;
        while at < body.len() {
            let rest = &body[at..];
            let Some(prefix) = rest.get(..4) else {
                return Err(malformed(format!("field length at byte {at} is cut off: {} of 4 bytes left", rest.len())));
            };
            let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
            let Some(field) = rest[4..].get(..len) else {
                return Err(malformed(format!("field at byte {at} claims {len} bytes, only {} left", rest.len() - 4)));
            };
            let Some(eq) = field.iter().position(|&b| b == b'=') else {
                return Err(malformed(format!("field at byte {at} ({len} bytes) has no '='")));
            };
            let text = |b: &[u8], part: &str| {
                String::from_utf8(b.to_vec())
                    .map_err(|_| malformed(format!("field at byte {at}: the {part} is not UTF-8")))
            };
            fields.push((text(&field[..eq], "key")?, text(&field[eq + 1..], "value")?));
            at += 4 + len;
        }
        Ok(Header { fields })
    }

    /// The header as sent on the wire, total length included. Fails only for a header whose
    /// length does not fit the `u32` prefix (over 4 GiB).
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        let too_long =
            |len: usize| WireError::TooLong { what: "connection header", len: len as u64, limit: u32::MAX as u64 };
        let total: usize = self.fields.iter().map(|(k, v)| 4 + k.len() + 1 + v.len()).sum();
        let total32 = u32::try_from(total).map_err(|_| too_long(total))?;
        let mut out = Vec::with_capacity(4 + total);
        out.extend_from_slice(&total32.to_le_bytes());
        for (k, v) in &self.fields {
            // Each field is shorter than the total, which fits.
            out.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
            out.extend_from_slice(k.as_bytes());
            out.push(b'=');
            out.extend_from_slice(v.as_bytes());
        }
        Ok(out)
    }
}

fn malformed(reason: String) -> WireError {
    WireError::Malformed { reason }
}

/// Reads into `buf` until it is full or the stream ends; returns how many bytes arrived.
fn read_full(r: &mut impl Read, buf: &mut [u8], what: &'static str) -> Result<usize, WireError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(what, e)),
        }
    }
    Ok(got)
}

/// A read timeout shows up as `WouldBlock` on Unix and `TimedOut` on Windows.
fn io_error(what: &'static str, e: io::Error) -> WireError {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => WireError::TimedOut { what },
        _ => WireError::Io { what, source: e },
    }
}

/// Reads exactly `len` bytes, growing the buffer only as bytes arrive, so a lying length costs
/// what the peer sent rather than what it claimed.
fn read_body(r: &mut impl Read, len: usize, what: &'static str) -> Result<Vec<u8>, WireError> {
    let mut buf = Vec::with_capacity(len.min(1 << 20));
    if let Err(e) = r.take(len as u64).read_to_end(&mut buf) {
        return Err(io_error(what, e));
    }
    if buf.len() < len {
        return Err(WireError::Truncated { what, expected: len as u64, missing: (len - buf.len()) as u64 });
    }
    Ok(buf)
}

/// Reads a `u32le` length prefix: `None` if the stream ended before its first byte.
fn read_len(r: &mut impl Read, what: &'static str) -> Result<Option<usize>, WireError> {
    let mut b = [0u8; 4];
    match read_full(r, &mut b, what)? {
        0 => Ok(None),
        4 => Ok(Some(u32::from_le_bytes(b) as usize)),
        n => Err(WireError::Truncated { what, expected: 4, missing: (4 - n) as u64 }),
    }
}

/// Reads one connection header, refusing a total length over `limits.max_header`.
pub fn read_header(r: &mut impl Read, limits: &Limits) -> Result<Header, WireError> {
    let Some(len) = read_len(r, "connection header length")? else {
        return Err(WireError::Truncated { what: "connection header length", expected: 4, missing: 4 });
    };
    if len > limits.max_header {
        return Err(WireError::TooLong { what: "connection header", len: len as u64, limit: limits.max_header as u64 });
    }
    Header::parse(&read_body(r, len, "connection header")?)
}

/// Writes a connection header.
pub fn write_header(w: &mut impl Write, h: &Header) -> io::Result<()> {
    let bytes = h.encode().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    w.write_all(&bytes)
}

/// Reads one message frame: `Ok(None)` if the stream ended cleanly before it, an error if it
/// ended inside it or its length is over `limits.max_message`.
pub fn read_frame(r: &mut impl Read, limits: &Limits) -> Result<Option<Bytes>, WireError> {
    let Some(len) = read_len(r, "message length")? else { return Ok(None) };
    if len > limits.max_message {
        return Err(WireError::TooLong { what: "message", len: len as u64, limit: limits.max_message as u64 });
    }
    Ok(Some(Bytes::from(read_body(r, len, "message")?)))
}

/// Writes one message frame; a message over 4 GiB cannot be framed and is refused.
pub fn write_frame(w: &mut impl Write, msg: &[u8]) -> io::Result<()> {
    let len = u32::try_from(msg.len()).map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("a {}-byte message does not fit a TCPROS frame", msg.len()))
    })?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(msg)
}
