//! `rbag_view::image::decode` (what `rbag export-images` and `rbag serve`'s page do with a
//! `sensor_msgs/Image`) on arbitrary fields: width, height and step from the first 12 bytes,
//! an encoding chosen by the 13th, big-endian by the 14th, the rest as data. Every call must
//! return `Ok` or `Err` within the pixel bound; a decoded image must encode as PNG and RGB.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_view::image::decode;

const ENCODINGS: [&str; 14] = [
    "mono8",
    "mono16",
    "rgb8",
    "bgr8",
    "rgba8",
    "bgra8",
    "8UC1",
    "8UC3",
    "16UC1",
    "bayer_rggb8",
    "bayer_gbrg16",
    "32FC1",
    "yuv422",
    "",
];

fuzz_target!(|data: &[u8]| {
    if data.len() < 14 {
        return;
    }
    let word = |i: usize| u64::from(u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]));
    let (width, height, step) = (word(0) % 4096, word(4) % 4096, word(8));
    let encoding = ENCODINGS[data[12] as usize % ENCODINGS.len()];
    if let Ok(p) = decode(width, height, step, encoding, data[13] & 1 == 1, &data[14..]) {
        assert_eq!(p.data.len() as u64, width * height * (p.data.len() as u64 / (width * height).max(1)));
        let _ = p.png().expect("a decoded image encodes");
        assert_eq!(p.rgb8().len() as u64, width * height * 3);
    }
});
