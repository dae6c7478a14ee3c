//! Image messages as pictures: `sensor_msgs/Image` as pixels (and PNG), `CompressedImage` as
//! the bytes that were recorded.

use rbag_bag::decode::{MessageRef, ValueRef};

/// How a decoded image's samples are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One 8-bit sample per pixel: mono8, 8UC1, and Bayer mosaics as they are (raw).
    Gray8,
    /// One 16-bit sample per pixel (native byte order in [`Pixels::data`]): mono16, 16UC1,
    /// 16-bit Bayer.
    Gray16,
    /// Red, green, blue (bgr8 and 8UC3 are reordered).
    Rgb8,
    /// Red, green, blue, alpha (bgra8 is reordered).
    Rgba8,
}

impl Layout {
    fn bytes_per_pixel(self) -> usize {
        match self {
            Layout::Gray8 => 1,
            Layout::Gray16 => 2,
            Layout::Rgb8 => 3,
            Layout::Rgba8 => 4,
        }
    }
}

/// An image's pixels, rows packed (no row padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pixels {
    pub width: u32,
    pub height: u32,
    pub layout: Layout,
    /// Samples row by row; 16-bit samples in native byte order.
    pub data: Vec<u8>,
}

/// A picture from an image message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picture {
    /// A `sensor_msgs/Image`, decoded.
    Raw(Pixels),
    /// A `CompressedImage`: its `format` field and its data, as recorded.
    Compressed { format: String, data: Vec<u8> },
}

/// Images larger than this many pixels are refused: a corrupt width or height must not make
/// rbag allocate gigabytes.
pub const MAX_PIXELS: u64 = 1 << 28;

/// Whether a message type is one [`picture`] reads.
pub fn is_image_type(type_name: &str) -> bool {
    let short = type_name.rsplit('/').next().unwrap_or(type_name);
    short == "Image" || short == "CompressedImage"
}

/// The picture in an image message, or why there is none (a sentence naming the field).
pub fn picture(msg: MessageRef) -> Result<Picture, String> {
    let bytes = |name: &str| -> Result<&[u8], String> {
        match msg.field(name) {
            Some(v) => v
                .as_prims()
                .filter(|p| p.prim.size() == 1)
                .map(|p| p.le)
                .ok_or_else(|| format!("field {name} is not a byte array")),
            None => Err(format!("no field {name} (type {})", msg.type_name())),
        }
    };
    let text = |name: &str| -> Result<String, String> {
        match msg.field(name) {
            Some(ValueRef::String(s)) => Ok(String::from_utf8_lossy(s).into_owned()),
            _ => Err(format!("no string field {name} (type {})", msg.type_name())),
        }
    };
    let number = |name: &str| -> Result<u64, String> {
        msg.field(name)
            .and_then(|v| v.as_f64())
            .filter(|n| *n >= 0.0 && n.fract() == 0.0)
            .map(|n| n as u64)
            .ok_or_else(|| format!("no unsigned field {name} (type {})", msg.type_name()))
    };
    if msg.field("format").is_some() && msg.field("width").is_none() {
        return Ok(Picture::Compressed { format: text("format")?, data: bytes("data")?.to_vec() });
    }
    let (width, height, step) = (number("width")?, number("height")?, number("step")?);
    let encoding = text("encoding")?;
    let big_endian = number("is_bigendian").unwrap_or(0) != 0;
    let data = bytes("data")?;
    decode(width, height, step, &encoding, big_endian, data).map(Picture::Raw)
}

/// Pixels from the fields of a `sensor_msgs/Image`.
pub fn decode(
    width: u64,
    height: u64,
    step: u64,
    encoding: &str,
    big_endian: bool,
    data: &[u8],
) -> Result<Pixels, String> {
    let e = encoding.to_ascii_lowercase();
    let (layout, reorder) = match e.as_str() {
        "mono8" | "8uc1" => (Layout::Gray8, false),
        "mono16" | "16uc1" => (Layout::Gray16, false),
        "rgb8" => (Layout::Rgb8, false),
        "bgr8" | "8uc3" => (Layout::Rgb8, true),
        "rgba8" => (Layout::Rgba8, false),
        "bgra8" | "8uc4" => (Layout::Rgba8, true),
        b if b.starts_with("bayer_") && b.ends_with('8') => (Layout::Gray8, false),
        b if b.starts_with("bayer_") && b.ends_with("16") => (Layout::Gray16, false),
        _ => {
            return Err(format!(
                "encoding {encoding:?} is not one rbag exports (mono8/16, rgb8, bgr8, rgba8, bgra8, bayer_*8/16)"
            ))
        }
    };
    if width == 0 || height == 0 {
        return Err(format!("an empty image ({width}x{height})"));
    }
    if width.saturating_mul(height) > MAX_PIXELS {
        return Err(format!("{width}x{height} is more than {MAX_PIXELS} pixels"));
    }
    let row = width as usize * layout.bytes_per_pixel();
    if step < row as u64 {
        return Err(format!("step {step} is less than width {width} x {} bytes", layout.bytes_per_pixel()));
    }
    let need = step.saturating_mul(height - 1).saturating_add(row as u64);
    if (data.len() as u64) < need {
        return Err(format!("data has {} bytes, {width}x{height} with step {step} needs {need}", data.len()));
    }
    let mut out = Vec::with_capacity(row * height as usize);
    for r in 0..height as usize {
        let start = r * step as usize;
        out.extend_from_slice(&data[start..start + row]);
    }
    match layout {
        Layout::Rgb8 | Layout::Rgba8 if reorder => {
            for px in out.chunks_exact_mut(layout.bytes_per_pixel()) {
                px.swap(0, 2);
            }
        }
        Layout::Gray16 if big_endian != cfg!(target_endian = "big") => {
            for s in out.chunks_exact_mut(2) {
                s.swap(0, 1);
            }
        }
        _ => {}
    }
    Ok(Pixels { width: width as u32, height: height as u32, layout, data: out })
}

impl Pixels {
    /// The image as a PNG file (16-bit samples stay 16-bit).
    pub fn png(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        let (colour, depth) = match self.layout {
            Layout::Gray8 => (png::ColorType::Grayscale, png::BitDepth::Eight),
            Layout::Gray16 => (png::ColorType::Grayscale, png::BitDepth::Sixteen),
            Layout::Rgb8 => (png::ColorType::Rgb, png::BitDepth::Eight),
            Layout::Rgba8 => (png::ColorType::Rgba, png::BitDepth::Eight),
        };
        encoder.set_color(colour);
        encoder.set_depth(depth);
        // Fast: exporting thousands of frames should be bound by the disk, not by deflate.
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        if self.layout == Layout::Gray16 {
            // PNG stores 16-bit samples big-endian.
            let be: Vec<u8> =
                self.data.chunks_exact(2).flat_map(|s| u16::from_ne_bytes([s[0], s[1]]).to_be_bytes()).collect();
            writer.write_image_data(&be).map_err(|e| e.to_string())?;
        } else {
            writer.write_image_data(&self.data).map_err(|e| e.to_string())?;
        }
        writer.finish().map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// The image as packed RGB, 8 bits a sample (16-bit samples keep their high byte): what a
    /// video encoder is fed.
    pub fn rgb8(&self) -> Vec<u8> {
        match self.layout {
            Layout::Rgb8 => self.data.clone(),
            Layout::Gray8 => self.data.iter().flat_map(|&g| [g, g, g]).collect(),
            Layout::Gray16 => self
                .data
                .chunks_exact(2)
                .flat_map(|s| {
                    let g = (u16::from_ne_bytes([s[0], s[1]]) >> 8) as u8;
                    [g, g, g]
                })
                .collect(),
            Layout::Rgba8 => self.data.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect(),
        }
    }
}

/// The file extension for compressed image data, from its first bytes (the `format` field is
/// free text: `jpeg`, `rgb8; jpeg compressed bgr8`, `16UC1; compressedDepth png`).
pub fn extension(data: &[u8]) -> &'static str {
    if data.starts_with(b"\x89PNG\r\n\x1a\n") {
        "png"
    } else if data.starts_with(&[0xFF, 0xD8, 0xFF]) {
        "jpg"
    } else if data.starts_with(b"RIFF") && data.get(8..12) == Some(b"WEBP") {
        "webp"
    } else {
        "bin"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bgr_is_reordered_and_row_padding_dropped() {
        // 2x2 bgr8 with 2 bytes of padding per row.
        let data = [1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0];
        let p = decode(2, 2, 8, "bgr8", false, &data).unwrap();
        assert_eq!(p.data, vec![3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10]);
    }

    #[test]
    fn mono16_big_endian_becomes_native() {
        let p = decode(2, 1, 4, "mono16", true, &[0x01, 0x02, 0x03, 0x04]).unwrap();
        let v: Vec<u16> = p.data.chunks_exact(2).map(|s| u16::from_ne_bytes([s[0], s[1]])).collect();
        assert_eq!(v, vec![0x0102, 0x0304]);
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert!(decode(4, 4, 4, "mono8", false, &[0; 15]).unwrap_err().contains("needs 16"));
        assert!(decode(4, 4, 3, "mono8", false, &[0; 16]).unwrap_err().contains("step"));
        assert!(decode(1 << 20, 1 << 20, 1 << 20, "mono8", false, &[]).unwrap_err().contains("pixels"));
        assert!(decode(1, 1, 4, "32FC1", false, &[0; 4]).unwrap_err().contains("32FC1"));
        // Found by fuzz/image_decode: a 0x0 image decoded, then could not be written as PNG.
        assert!(decode(0, 0, 0, "rgba8", false, &[]).unwrap_err().contains("empty image"));
        assert!(decode(0, 3, 0, "mono8", false, &[0; 9]).unwrap_err().contains("empty image"));
    }

    #[test]
    fn extensions_from_magic() {
        assert_eq!(extension(b"\x89PNG\r\n\x1a\nxx"), "png");
        assert_eq!(extension(&[0xFF, 0xD8, 0xFF, 0xE0]), "jpg");
        assert_eq!(extension(b"hello"), "bin");
    }
}
