//! Chunk compression: none, bz2 and lz4 (roslz4 writes standard LZ4 frames).

use std::borrow::Cow;
use std::io::{Read, Write};

use super::record::Limits;
use crate::{Compression, Error, Result};

/// Parses a chunk's `compression` field.
pub fn parse(name: &[u8], offset: u64) -> Result<Compression> {
    match name {
        b"none" => Ok(Compression::None),
        b"lz4" => Ok(Compression::Lz4),
        b"bz2" => Ok(Compression::Bz2),
        other => Err(Error::UnsupportedCompression {
            offset,
            name: String::from_utf8_lossy(other).into_owned(),
        }),
    }
}

fn reader<'a>(compression: Compression, data: &'a [u8]) -> Box<dyn Read + 'a> {
    match compression {
        Compression::Lz4 => Box::new(lz4_flex::frame::FrameDecoder::new(data)),
        Compression::Bz2 => Box::new(bzip2::read::BzDecoder::new(data)),
        Compression::Zstd => match zstd::stream::read::Decoder::with_buffer(data) {
            Ok(d) => Box::new(d),
            Err(e) => Box::new(FailingReader(Some(e))),
        },
        Compression::None => Box::new(data),
    }
}

/// A reader whose first read reports the error that kept the real reader from starting.
struct FailingReader(Option<std::io::Error>);

impl Read for FailingReader {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(self.0.take().unwrap_or_else(|| std::io::ErrorKind::InvalidData.into()))
    }
}

/// Decompresses a whole chunk whose header says it holds `size` bytes.
pub fn decompress(compression: Compression, data: &[u8], size: u64, offset: u64, limits: &Limits) -> Result<Vec<u8>> {
    let limit = limits.inflate_limit(data.len());
    if compression != Compression::None && size > limit {
        return Err(Error::TooLarge { offset, what: "chunk (its size for so few compressed bytes)", len: size, limit });
    }
    // Do not trust `size` for the allocation: grow past 64 MiB only as data arrives.
    let mut out = Vec::with_capacity(size.min(64 << 20) as usize);
    // Read one byte past `size` so a chunk that inflates to more than it claims is caught.
    reader(compression, data)
        .take(size + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::Decompress { offset, compression: compression.name(), reason: e.to_string() })?;
    if out.len() as u64 != size {
        return Err(Error::Decompress {
            offset,
            compression: compression.name(),
            reason: format!("header says {size} bytes, data holds {}{}", if out.len() as u64 > size { "more than " } else { "" }, out.len().min(size as usize)),
        });
    }
    Ok(out)
}

/// Decompresses as much of a torn chunk as decodes, up to `limit` bytes.
pub fn salvage(compression: Compression, data: &[u8], limit: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut r = reader(compression, data).take(limit);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    out
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

    #[test]
    fn a_size_no_real_data_reaches_is_refused_before_inflating() {
        let z = compress(Compression::Bz2, &[0u8; 1000]).unwrap();
        let e = decompress(Compression::Bz2, &z, 1 << 30, 7, &Limits::default()).unwrap_err();
        assert!(matches!(e, Error::TooLarge { offset: 7, .. }), "{e}");
    }

    #[test]
    fn roundtrip_every_compression() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        for c in [Compression::None, Compression::Lz4, Compression::Bz2] {
            let z = compress(c, &data).unwrap();
            let l = Limits::default();
            assert_eq!(decompress(c, &z, data.len() as u64, 0, &l).unwrap(), data);
            assert!(decompress(c, &z, data.len() as u64 - 1, 0, &l).is_err(), "{c:?} size lie");
            let cut = &z[..z.len() / 2];
            let part = salvage(c, cut, u64::MAX);
            assert!(data.starts_with(&part), "{c:?} salvage is a prefix");
        }
    }
}
