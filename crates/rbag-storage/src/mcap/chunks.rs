//! An MCAP chunk's records, read from its data held whole or streamed: for chunks larger than
//! the memory budget has room for (see [`crate::budget`]).

use bytes::Bytes;

use super::records::{self, op, Walk};
use crate::ros1::compression::{self, Stream};
use crate::{budget, Compression, Error, Result};

/// Where a chunk's records are in the file, and how to decode them.
pub struct Source {
    pub compression: Compression,
    /// The (compressed) records: a slice of the map.
    pub compressed: Bytes,
    /// Bytes they decompress to (for a torn chunk, those that hold complete records).
    pub size: u64,
    /// 0: no CRC to check (none written, or a torn chunk).
    pub crc: u32,
    /// A torn chunk: decode as far as it goes.
    pub lenient: bool,
    /// File offset of the chunk record.
    pub offset: u64,
}

/// A chunk's decompressed records: held whole, or streamed.
pub enum Data {
    Held(Bytes),
    Streamed(Stream),
}

impl Source {
    /// The chunk's records: held whole when they are not compressed (a slice of the map) or
    /// when `hold` and the memory budget has room for them; streamed otherwise. A streamed
    /// chunk's CRC is not checked: that would take a pass of its own.
    pub fn data(&self, hold: bool) -> Result<Data> {
        if self.compression == Compression::None {
            return self.held(None);
        }
        if let Some(r) = hold.then(|| budget::try_reserve(self.size)).flatten() {
            return self.held(Some(r));
        }
        Ok(Data::Streamed(Stream::new(self.compression, self.compressed.clone(), self.lenient, self.offset)?))
    }

    /// The chunk's records decompressed into a buffer `reservation` pays for, and checked
    /// against its CRC: what [`Source::data`] holds, for a read-ahead thread (which must give
    /// the same records, or the same error, as the reading thread).
    pub fn decompress(&self, reservation: budget::Reservation) -> Result<Bytes> {
        self.held_bytes(Some(reservation))
    }

    fn held(&self, reservation: Option<budget::Reservation>) -> Result<Data> {
        self.held_bytes(reservation).map(Data::Held)
    }

    fn held_bytes(&self, reservation: Option<budget::Reservation>) -> Result<Bytes> {
        let data = match reservation {
            None => {
                let len = self.compressed.len() as u64;
                if len != self.size && !self.lenient {
                    return Err(Error::Malformed {
                        offset: self.offset,
                        what: "MCAP chunk",
                        reason: format!("uncompressed chunk says {} bytes but holds {len}", self.size),
                    });
                }
                self.compressed.slice(..(self.size.min(len) as usize))
            }
            Some(r) => {
                compression::decompress(self.compression, &self.compressed, self.size, self.offset, r, self.lenient)?
            }
        };
        if self.crc != 0 {
            let crc = crc32fast::hash(&data);
            if crc != self.crc {
                return Err(Error::Malformed {
                    offset: self.offset,
                    what: "MCAP chunk",
                    reason: format!("CRC mismatch: the chunk says {:08x}, its data hashes to {crc:08x}", self.crc),
                });
            }
        }
        Ok(data)
    }
}

/// A record met by [`walk`].
pub enum Item<'a> {
    /// A Schema or Channel record's body.
    Meta { op: u8, body: &'a [u8] },
    /// A Message record at `at` (its first byte, in the chunk's records).
    Message { at: u64, channel: u16, log_time: u64 },
}

/// Calls `f` for each Schema, Channel and Message record of a chunk's records; `offset` is the
/// chunk's file offset, for errors. A streamed walk reads message payloads past, not into memory.
/// With `stop_at_damage`, a record that does not parse ends the walk instead of failing it;
/// either way it returns how many bytes hold complete records. Records past `limit` bytes are
/// not read (what a decompression bomb may cost).
pub fn walk(
    data: &mut Data,
    offset: u64,
    stop_at_damage: bool,
    limit: u64,
    f: &mut dyn FnMut(Item<'_>) -> Result<()>,
) -> Result<u64> {
    match data {
        Data::Held(bytes) => {
            let mut complete = 0;
            let end = (bytes.len() as u64).min(limit) as usize;
            for rec in Walk::new(&bytes[..end], 0, offset, true) {
                let rec = match rec {
                    Ok(r) => r,
                    Err(_) if stop_at_damage => break,
                    Err(e) => return Err(e),
                };
                let body = &bytes[rec.body.clone()];
                let item = match rec.op {
                    op::SCHEMA | op::CHANNEL => Some(Item::Meta { op: rec.op, body }),
                    op::MESSAGE => match records::message(body, offset) {
                        Ok(m) => Some(Item::Message {
                            at: rec.body.start as u64 - 9,
                            channel: m.channel,
                            log_time: m.log_time,
                        }),
                        Err(_) if stop_at_damage => break,
                        Err(e) => return Err(e),
                    },
                    _ => None,
                };
                if let Some(item) = item {
                    match f(item) {
                        Err(_) if stop_at_damage => break,
                        r => r?,
                    }
                }
                complete = rec.body.end as u64;
            }
            Ok(complete)
        }
        Data::Streamed(s) => {
            s.seek(0)?;
            let mut complete = 0;
            while s.pos() < limit {
                let at = s.pos();
                let mut head = [0u8; 9];
                let got = match s.read_some(&mut head) {
                    Ok(n) => n,
                    Err(_) if stop_at_damage => break,
                    Err(e) => return Err(e),
                };
                if got == 0 {
                    break;
                }
                if got < 9 {
                    if stop_at_damage {
                        break;
                    }
                    return Err(Error::Truncated {
                        offset,
                        what: "an MCAP record header",
                        needed: 9,
                        available: got as u64,
                    });
                }
                let len = u64::from_le_bytes(head[1..9].try_into().unwrap_or_default());
                let step = match head[0] {
                    op::SCHEMA | op::CHANNEL => {
                        let body = s.read_budgeted(len, "MCAP schema or channel record");
                        let body = match body {
                            Ok(b) => b,
                            Err(_) if stop_at_damage => break,
                            Err(e) => return Err(e),
                        };
                        f(Item::Meta { op: head[0], body: &body })
                    }
                    op::MESSAGE => {
                        let mut fixed = [0u8; 22];
                        if len < 22 || s.read_some(&mut fixed).ok() != Some(22) {
                            if stop_at_damage {
                                break;
                            }
                            return Err(Error::Malformed {
                                offset,
                                what: "MCAP message",
                                reason: format!("record at byte {at} of the chunk is shorter than its fixed fields"),
                            });
                        }
                        let m = records::message(&fixed, offset)?;
                        let r = f(Item::Message { at, channel: m.channel, log_time: m.log_time });
                        r.and_then(|()| s.seek(at + 9 + len))
                    }
                    _ => s.seek(at.saturating_add(9).saturating_add(len)),
                };
                match step {
                    Err(_) if stop_at_damage => break,
                    r => r?,
                }
                complete = s.pos();
            }
            Ok(complete)
        }
    }
}

/// The Message record at `at` in a chunk's records (or, for messages outside chunks, the
/// file): its fixed fields and its payload. `offset` names the chunk in errors.
pub fn message_at(data: &mut Data, at: u64, offset: u64) -> Result<(records::MessageHead, Bytes)> {
    let bad = |reason: String| Error::Malformed { offset, what: "MCAP message index", reason };
    match data {
        Data::Held(bytes) => {
            let rec = match Walk::new(bytes, at as usize, offset, true).next() {
                Some(Ok(r)) if r.op == op::MESSAGE => r,
                Some(Err(e)) => return Err(e),
                _ => return Err(bad(format!("byte {at} does not hold a Message record"))),
            };
            let m = records::message(&bytes[rec.body.clone()], offset)?;
            let payload = bytes.slice(rec.body.start + m.data.start..rec.body.start + m.data.end);
            Ok((m, payload))
        }
        Data::Streamed(s) => {
            s.seek(at)?;
            let mut head = [0u8; 31];
            s.read_exact(&mut head, "a Message record")?;
            let len = u64::from_le_bytes(head[1..9].try_into().unwrap_or_default());
            if head[0] != op::MESSAGE || len < 22 {
                return Err(bad(format!("byte {at} does not hold a Message record")));
            }
            let m = records::message(&head[9..], offset)?;
            let payload = s.read_budgeted(len - 22, "message")?;
            Ok((m, payload))
        }
    }
}
