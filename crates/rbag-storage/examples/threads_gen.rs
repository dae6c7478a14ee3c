//! Generates the read-ahead benchmark's bag (bench/threads_read.sh): an uncompressed ROS 1 bag of
//! camera-like images, compressible the way real ones are (a gradient with a little noise, not
//! blank and not random), with an IMU topic beside them.
//!
//! ```text
//! cargo run --release -p rbag-storage --example threads_gen -- OUT.bag [--images 1100]
//! ```
//!
//! - `/camera/image_raw`  sensor_msgs/Image  30 Hz, 640x480 mono8 (300 KiB); 1100 images ≈ 338 MB
//! - `/imu/data`          sensor_msgs/Imu   200 Hz, 324 B
//!
//! Payloads are valid ROS 1 serialisations with real type names, md5sums and definitions, so
//! `rbag convert` can carry them into MCAP.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rbag_storage::ros1::Ros1Writer;
use rbag_storage::{Connection, StorageWriter, WriteOptions};

const T0_NS: u64 = 1_700_000_000_000_000_000;
const WIDTH: u32 = 640;
const HEIGHT: u32 = 480;

const HEADER_DEF: &str = "\
================================================================================
MSG: std_msgs/Header
uint32 seq
time stamp
string frame_id
";

fn image_def() -> String {
    format!(
        "Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\nuint8[] data\n{HEADER_DEF}"
    )
}

fn imu_def() -> String {
    format!(
        "Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\n\
         geometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\n\
         geometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n{HEADER_DEF}\
         ================================================================================\n\
         MSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n\
         ================================================================================\n\
         MSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n"
    )
}

fn main() {
    if let Err(e) = run() {
        eprintln!("threads_gen: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: threads_gen OUT.bag [--images N]";
    let mut args = std::env::args().skip(1);
    let (mut out, mut images): (Option<PathBuf>, u64) = (None, 1100);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--images" => images = args.next().ok_or("--images needs a value")?.parse()?,
            "-h" | "--help" => {
                println!("{usage}");
                return Ok(());
            }
            _ if out.is_none() => out = Some(a.into()),
            other => return Err(format!("unexpected argument {other:?}").into()),
        }
    }
    let out = out.ok_or(usage)?;
    let mut w = Box::new(Ros1Writer::create(&out, WriteOptions::default())?);
    let topics = [
        ("/camera/image_raw", "sensor_msgs/Image", "060021388200f6f0f447d0fcd9c64743", image_def()),
        ("/imu/data", "sensor_msgs/Imu", "6a62c6daae103f4ff57a132d6f95cec2", imu_def()),
    ];
    let mut ids = Vec::new();
    for (topic, ty, md5, def) in &topics {
        let metadata: BTreeMap<String, String> = [("md5sum", *md5), ("callerid", "/threads_gen"), ("latching", "0")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let conn = Connection {
            topic: (*topic).into(),
            message_type: (*ty).into(),
            encoding: "ros1".into(),
            definition: def.clone(),
            definition_encoding: "ros1msg".into(),
            metadata,
            ..Connection::default()
        };
        ids.push(w.add_connection(&conn)?);
    }
    // 30 Hz images, 200 Hz IMU, in log-time order.
    let mut events: Vec<(u64, usize, u32)> =
        (0..images).map(|i| (T0_NS + i * 1_000_000_000 / 30, 0, i as u32)).collect();
    let imu = images * 200 / 30;
    events.extend((0..imu).map(|i| (T0_NS + i * 5_000_000, 1, i as u32)));
    events.sort_unstable();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let (mut buf, mut bytes) = (Vec::with_capacity(400 << 10), 0u64);
    for &(t, k, seq) in &events {
        buf.clear();
        if k == 0 {
            image_msg(&mut buf, seq, t, &mut rng);
        } else {
            imu_msg(&mut buf, seq, t);
        }
        w.write(ids[k], t, t, &buf)?;
        bytes += buf.len() as u64;
    }
    w.finish()?;
    println!("wrote {} ({} messages, {bytes} payload bytes)", out.display(), events.len());
    Ok(())
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    put_u32(b, s.len() as u32);
    b.extend_from_slice(s.as_bytes());
}

fn header(b: &mut Vec<u8>, seq: u32, t: u64, frame: &str) {
    put_u32(b, seq);
    put_u32(b, (t / 1_000_000_000) as u32);
    put_u32(b, (t % 1_000_000_000) as u32);
    put_str(b, frame);
}

/// A mono8 frame: a coarse diagonal gradient that drifts from frame to frame, with sensor
/// noise (0..3) on about one pixel in six: zstd shrinks it about 3:1, as it does real frames of
/// a plain scene, and bz2 further.
fn image_msg(b: &mut Vec<u8>, seq: u32, t: u64, rng: &mut u64) {
    header(b, seq, t, "camera_optical_frame");
    put_u32(b, HEIGHT);
    put_u32(b, WIDTH);
    put_str(b, "mono8");
    b.push(0);
    put_u32(b, WIDTH);
    put_u32(b, WIDTH * HEIGHT);
    for y in 0..HEIGHT {
        for x in (0..WIDTH).step_by(8) {
            let mut r = *rng;
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            *rng = r;
            for k in 0..8u32 {
                let base = (x + k) / 8 + y / 6 + seq / 2;
                let n = (r >> (8 * k)) & 0xff;
                let noise = if n < 40 { (n & 3) as u8 } else { 0 };
                b.push((base as u8).wrapping_add(noise));
            }
        }
    }
}

fn imu_msg(b: &mut Vec<u8>, seq: u32, t: u64) {
    header(b, seq, t, "imu_link");
    let x = f64::from(seq) * 1e-3;
    let mut put = |v: f64| b.extend_from_slice(&v.to_le_bytes());
    for v in [x.sin() * 0.1, x.cos() * 0.1, 0.0, 1.0] {
        put(v);
    }
    for block in [[x.cos() * 0.02, -x.sin() * 0.02, 0.001], [0.05 * x.sin(), 0.05 * x.cos(), 9.81]] {
        for k in 0..9 {
            put(if k % 4 == 0 { 1e-4 } else { 0.0 });
        }
        for v in block {
            put(v);
        }
    }
    for k in 0..9 {
        put(if k % 4 == 0 { 3e-3 } else { 0.0 });
    }
}
