//! Chunk compression: none, bz2 and lz4 (roslz4 writes standard LZ4 frames).

use std::borrow::Cow;
use std::io::{Read, Write};

use bytes::Bytes;

use crate::budget::{self, Budgeted, Reservation};
use crate::{Compression, Error, Result};

/// Parses a chunk's `compression` field.
pub fn parse(name: &[u8], offset: u64) -> Result<Compression> {
    match name {
        b"none" => Ok(Compression::None),
        b"lz4" => Ok(Compression::Lz4),
        b"bz2" => Ok(Compression::Bz2),
        other => Err(Error::UnsupportedCompression { offset, name: String::from_utf8_lossy(other).into_owned() }),
    }
}

/// A decoder of `compression` over `input`.
pub fn decoder<'a, R: Read + Send + 'a>(compression: Compression, input: R) -> Box<dyn Read + Send + 'a> {
    match compression {
        Compression::Lz4 => Box::new(lz4_flex::frame::FrameDecoder::new(input)),
        Compression::Bz2 => Box::new(bzip2::read::BzDecoder::new(input)),
        Compression::Zstd => match zstd::stream::read::Decoder::new(input) {
            Ok(d) => Box::new(d),
            Err(e) => Box::new(FailingReader(Some(e))),
        },
        Compression::None => Box::new(input),
    }
}

/// A reader whose first read reports the error that kept the real reader from starting.
struct FailingReader(Option<std::io::Error>);

impl Read for FailingReader {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(self.0.take().unwrap_or_else(|| std::io::ErrorKind::InvalidData.into()))
    }
}

/// A reader that ends where its inner reader fails: what decodes of a torn stream.
pub struct UntilError<R>(pub R);

impl<R: Read> Read for UntilError<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return Ok(0),
                Ok(n) => return Ok(n),
            }
        }
    }
}

/// Reads into all of `buf`; how many bytes there were before the end of `r`.
fn fill(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Decompresses a whole chunk whose header says it holds `size` bytes into a buffer that
/// `reservation` (at least `size` bytes of the memory budget) pays for. `lenient` decodes a
/// torn stream as far as it goes (what a scan found to hold `size` bytes of records).
pub fn decompress(
    compression: Compression,
    data: &[u8],
    size: u64,
    offset: u64,
    reservation: Reservation,
    lenient: bool,
) -> Result<Bytes> {
    let name = compression.name();
    let bad = |reason: String| Error::Decompress { offset, compression: name, reason };
    let mut out = budget::reused_vec(size, offset, "chunk")?;
    if compression == Compression::Zstd && !lenient {
        zstd_whole(data, size, &mut out).map_err(bad)?;
        return Ok(Budgeted::bytes(out, reservation));
    }
    out.resize(size as usize, 0);
    let mut strict = decoder(compression, data);
    let mut torn;
    let r: &mut dyn Read = if lenient {
        torn = UntilError(&mut strict);
        &mut torn
    } else {
        &mut strict
    };
    let got = fill(r, &mut out).map_err(|e| bad(e.to_string()))?;
    if got as u64 != size {
        return Err(bad(format!("header says {size} bytes, data holds {got}")));
    }
    // One byte more would mean the chunk inflates to more than it says.
    if !lenient && fill(r, &mut [0u8]).map_err(|e| bad(e.to_string()))? != 0 {
        return Err(bad(format!("header says {size} bytes, data holds more")));
    }
    Ok(Budgeted::bytes(out, reservation))
}

thread_local! {
    /// This thread's zstd decompression context, reused from chunk to chunk.
    static ZSTD: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { std::cell::RefCell::new(None) };
}

/// Decompresses zstd `data`, which must hold exactly `size` bytes, in one call into `out`'s
/// spare room: no zero-filling, no copy through a stream's buffer, one context per thread.
fn zstd_whole(data: &[u8], size: u64, out: &mut Vec<u8>) -> std::result::Result<(), String> {
    out.clear();
    let got = ZSTD.with(|z| {
        let mut z = z.borrow_mut();
        if z.is_none() {
            *z = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
        }
        let Some(d) = z.as_mut() else { return Err("no zstd context".to_string()) };
        d.decompress_to_buffer(data, out).map_err(|e| {
            // The output is bounded by `out`'s room, at least `size`: running out of it means
            // the chunk inflates to more than it says.
            if e.to_string().contains("Destination buffer is too small") {
                format!("header says {size} bytes, data holds more")
            } else {
                e.to_string()
            }
        })
    })?;
    match (got as u64).cmp(&size) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Less => Err(format!("header says {size} bytes, data holds {got}")),
        std::cmp::Ordering::Greater => Err(format!("header says {size} bytes, data holds more")),
    }
}

/// Roughly what a streaming decoder of `data` holds besides its output: bz2's block (900 kB
/// blocks need about 3.7 MB), lz4's two block buffers, zstd's window (its frame header says
/// how large; libzstd refuses windows over 128 MiB).
pub fn decoder_footprint(compression: Compression, data: &[u8]) -> u64 {
    const SLACK: u64 = 256 << 10;
    match compression {
        Compression::None => 0,
        Compression::Bz2 => (4 << 20) + SLACK,
        Compression::Lz4 => {
            // Frame descriptor: magic, FLG, BD; BD bits 4-6 give the largest block.
            let block = match data.get(5).map(|bd| (bd >> 4) & 7) {
                Some(4) => 64 << 10,
                Some(5) => 256 << 10,
                Some(6) => 1 << 20,
                _ => 4 << 20,
            };
            2 * block + SLACK
        }
        Compression::Zstd => zstd_window(data).unwrap_or(8 << 20).min(128 << 20) + SLACK,
    }
}

/// The window size a zstd frame header asks the decoder for, if `data` starts with one.
fn zstd_window(data: &[u8]) -> Option<u64> {
    if data.get(..4)? != [0x28, 0xB5, 0x2F, 0xFD] {
        return None;
    }
    let fhd = *data.get(4)?;
    let single_segment = fhd & 0x20 != 0;
    if !single_segment {
        let wd = *data.get(5)?;
        let log = 10 + u32::from(wd >> 3);
        let base = 1u64.checked_shl(log)?;
        return Some(base + (base / 8) * u64::from(wd & 7));
    }
    // Single segment: the window is the content size, after any dictionary id.
    let dict = [0usize, 1, 2, 4][usize::from(fhd & 3)];
    let at = 5 + dict;
    let fcs = match fhd >> 6 {
        0 => u64::from(*data.get(at)?),
        1 => u64::from(u16::from_le_bytes(data.get(at..at + 2)?.try_into().ok()?)) + 256,
        2 => u64::from(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?)),
        _ => u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?),
    };
    Some(fcs)
}

/// A chunk's decompressed bytes read in order without holding them: for a chunk larger than
/// the memory budget has free. Reading from an earlier position starts the decoder over.
pub struct Stream {
    compression: Compression,
    compressed: Bytes,
    lenient: bool,
    decoder: Box<dyn Read + Send>,
    /// Decompressed bytes read so far.
    pos: u64,
    /// File offset of the chunk, for errors.
    chunk: u64,
    /// Pays for the decoder's own buffers.
    _reservation: Reservation,
}

impl Stream {
    /// A stream over `compressed`, whose decoder is paid for from the memory budget.
    pub fn new(compression: Compression, compressed: Bytes, lenient: bool, chunk: u64) -> Result<Self> {
        let footprint = decoder_footprint(compression, &compressed);
        let reservation = budget::reserve(footprint, chunk, "a streaming chunk decoder")?;
        let decoder = Self::start(compression, &compressed, lenient);
        Ok(Stream { compression, compressed, lenient, decoder, pos: 0, chunk, _reservation: reservation })
    }

    fn start(compression: Compression, compressed: &Bytes, lenient: bool) -> Box<dyn Read + Send> {
        let d = decoder(compression, std::io::Cursor::new(compressed.clone()));
        if lenient {
            Box::new(UntilError(d))
        } else {
            d
        }
    }

    /// Decompressed bytes read so far.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::Decompress { offset: self.chunk, compression: self.compression.name(), reason: e.to_string() }
    }

    fn short(&self, what: &str, at: u64) -> Error {
        Error::Malformed {
            offset: self.chunk,
            what: "chunk",
            reason: format!("{what} at byte {at} of its data runs past its end"),
        }
    }

    /// Moves to decompressed byte `to`, starting over when it lies behind.
    pub fn seek(&mut self, to: u64) -> Result<()> {
        if to < self.pos {
            self.decoder = Self::start(self.compression, &self.compressed, self.lenient);
            self.pos = 0;
        }
        let mut left = to - self.pos;
        let mut scratch = [0u8; 16 << 10];
        while left > 0 {
            let n = left.min(scratch.len() as u64) as usize;
            let got = fill(&mut self.decoder, &mut scratch[..n]).map_err(|e| self.error(e))?;
            self.pos += got as u64;
            if got < n {
                return Err(self.short("a record", to));
            }
            left -= n as u64;
        }
        Ok(())
    }

    /// Fills `buf`, or says how many bytes there were before the end: 0 at a clean end.
    pub fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        let got = fill(&mut self.decoder, buf).map_err(|e| self.error(e))?;
        self.pos += got as u64;
        Ok(got)
    }

    /// Fills `buf` with the next bytes of `what`.
    pub fn read_exact(&mut self, buf: &mut [u8], what: &str) -> Result<()> {
        let at = self.pos;
        if self.read_some(buf)? < buf.len() {
            return Err(self.short(what, at));
        }
        Ok(())
    }

    /// The next `len` bytes of `what`, in a buffer paid for from the memory budget.
    pub fn read_budgeted(&mut self, len: u64, what: &'static str) -> Result<Bytes> {
        let (mut buf, reservation) = budget::buffer(len, self.chunk, what)?;
        buf.resize(len as usize, 0);
        self.read_exact(&mut buf, what)?;
        Ok(Budgeted::bytes(buf, reservation))
    }
}

/// Compresses chunk data for writing (uncompressed chunks are passed through, not copied).
pub fn compress(compression: Compression, data: &[u8]) -> Result<Cow<'_, [u8]>> {
    let io = |e: std::io::Error| Error::Invalid(format!("{} compression failed: {e}", compression.name()));
    match compression {
        Compression::None => Ok(Cow::Borrowed(data)),
        Compression::Bz2 => {
            // Level 9 and the default work factor, as rosbag does.
            let mut enc = bzip2::write::BzEncoder::new(Vec::with_capacity(data.len() / 4), bzip2::Compression::best());
            enc.write_all(data).map_err(io)?;
            enc.finish().map(Cow::Owned).map_err(io)
        }
        Compression::Lz4 => {
            // roslz4 reads independent blocks with a content checksum.
            let info = lz4_flex::frame::FrameInfo::new()
                .block_mode(lz4_flex::frame::BlockMode::Independent)
                .block_size(lz4_flex::frame::BlockSize::Max4MB)
                .content_checksum(true);
            let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::with_capacity(data.len() / 2));
            enc.write_all(data).map_err(io)?;
            enc.finish().map(Cow::Owned).map_err(|e| Error::Invalid(format!("lz4 compression failed: {e}")))
        }
        Compression::Zstd => Err(Error::Invalid("ROS 1 bags have no zstd chunk compression (use lz4 or bz2)".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(c: Compression, z: &[u8], size: u64) -> Result<Bytes> {
        decompress(c, z, size, 0, budget::try_reserve(size).unwrap(), false)
    }

    #[test]
    fn roundtrip_every_compression() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        for c in [Compression::None, Compression::Lz4, Compression::Bz2] {
            let z = compress(c, &data).unwrap();
            assert_eq!(all(c, &z, data.len() as u64).unwrap(), data);
            assert!(all(c, &z, data.len() as u64 - 1).is_err(), "{c:?} size lie");
            assert!(all(c, &z, data.len() as u64 + 1).is_err(), "{c:?} size lie");
            let cut = &z[..z.len() / 2];
            let mut part = Vec::new();
            UntilError(decoder(c, cut)).read_to_end(&mut part).unwrap();
            assert!(data.starts_with(&part), "{c:?} what decodes of a torn stream is a prefix");
        }
    }

    #[test]
    fn streams_read_forward_and_start_over() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
        for c in [Compression::None, Compression::Lz4, Compression::Bz2] {
            let z = Bytes::from(compress(c, &data).unwrap().into_owned());
            let mut s = Stream::new(c, z, false, 7).unwrap();
            s.seek(1000).unwrap();
            assert_eq!(s.read_budgeted(10, "test").unwrap(), data[1000..1010]);
            s.seek(5).unwrap();
            assert_eq!(s.read_budgeted(3, "test").unwrap(), data[5..8]);
            s.seek(299_990).unwrap();
            assert!(s.read_budgeted(20, "test").is_err(), "{c:?} past the end");
        }
    }

    #[test]
    fn zstd_window_from_the_frame_header() {
        let z = zstd::stream::encode_all(&[0u8; 100_000][..], 3).unwrap();
        let w = zstd_window(&z).unwrap();
        assert!((100_000..=4 << 20).contains(&w), "{w}");
        assert_eq!(zstd_window(b"nope"), None);
    }
}
