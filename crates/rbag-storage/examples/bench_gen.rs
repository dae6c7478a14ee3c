//! Generates the ROS 1 benchmark bag (bench/ros1.sh): an uncompressed bag of mixed message
//! sizes, written in log-time order as a recorder would.
//!
//! ```text
//! cargo run --release -p rbag-storage --example bench_gen -- OUT.bag [--seconds 10] \
//!     [--rates 1000,400,30]
//! ```
//!
//! Per second of recording (defaults give ~300 MiB for 10 s; `--rates` changes the three rates,
//! 0 leaves a topic out):
//! - `/chatter`           std_msgs/String     1000 Hz, 50 B
//! - `/imu/data`          sensor_msgs/Imu      400 Hz, 324 B
//! - `/camera/image_raw`  sensor_msgs/Image     30 Hz, 1024x1024 mono8 (~1 MiB)
//!
//! Payloads are valid ROS 1 serialisations of those types (so the Python peers can also
//! deserialise them), with real type names, md5sums and definitions.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use rbag_storage::ros1::Ros1Writer;
use rbag_storage::{Connection, StorageWriter, WriteOptions};

const T0_NS: u64 = 1_700_000_000_000_000_000;

const STRING_DEF: &str = "string data\n";
const IMU_DEF: &str = "\
Header header
geometry_msgs/Quaternion orientation
float64[9] orientation_covariance
geometry_msgs/Vector3 angular_velocity
float64[9] angular_velocity_covariance
geometry_msgs/Vector3 linear_acceleration
float64[9] linear_acceleration_covariance
================================================================================
MSG: std_msgs/Header
uint32 seq
time stamp
string frame_id
================================================================================
MSG: geometry_msgs/Quaternion
float64 x
float64 y
float64 z
float64 w
================================================================================
MSG: geometry_msgs/Vector3
float64 x
float64 y
float64 z
";
const IMAGE_DEF: &str = "\
Header header
uint32 height
uint32 width
string encoding
uint8 is_bigendian
uint32 step
uint8[] data
================================================================================
MSG: std_msgs/Header
uint32 seq
time stamp
string frame_id
";

/// (topic, type, md5sum, definition, rate in Hz)
const TOPICS: [(&str, &str, &str, &str, u64); 3] = [
    ("/chatter", "std_msgs/String", "992ce8a1687cec8c8bd883ec73ca41d1", STRING_DEF, 1000),
    ("/imu/data", "sensor_msgs/Imu", "6a62c6daae103f4ff57a132d6f95cec2", IMU_DEF, 400),
    ("/camera/image_raw", "sensor_msgs/Image", "060021388200f6f0f447d0fcd9c64743", IMAGE_DEF, 30),
];

const IMAGE_SIDE: u32 = 1024;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_gen: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut out: Option<PathBuf> = None;
    let mut seconds: u64 = 10;
    let mut rates: [u64; 3] = TOPICS.map(|t| t.4);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => seconds = args.next().ok_or("--seconds needs a value")?.parse()?,
            "--rates" => {
                let v = args.next().ok_or("--rates needs STRING_HZ,IMU_HZ,IMAGE_HZ")?;
                let r: Vec<u64> = v.split(',').map(str::parse).collect::<Result<_, _>>()?;
                rates = <[u64; 3]>::try_from(r).map_err(|_| "--rates needs three numbers")?;
            }
            "-h" | "--help" => {
                println!("usage: bench_gen OUT.bag [--seconds N] [--rates STRING_HZ,IMU_HZ,IMAGE_HZ]");
                return Ok(());
            }
            _ if out.is_none() => out = Some(a.into()),
            other => return Err(format!("unexpected argument {other:?}").into()),
        }
    }
    let out = out.ok_or("usage: bench_gen OUT.bag [--seconds N] [--rates STRING_HZ,IMU_HZ,IMAGE_HZ]")?;
    // Every (time, topic) event of the recording, in log-time order (ties by topic index).
    let mut events: Vec<(u64, usize)> = Vec::new();
    for (k, &rate) in rates.iter().enumerate() {
        for i in 0..seconds * rate {
            events.push((T0_NS + i * 1_000_000_000 / rate, k));
        }
    }
    events.sort_unstable();

    let started = Instant::now();
    let mut w = Box::new(Ros1Writer::create(&out, WriteOptions::default())?);
    let mut ids = Vec::new();
    for (topic, ty, md5, def, _) in TOPICS {
        let mut metadata = BTreeMap::new();
        metadata.insert("md5sum".to_string(), md5.to_string());
        metadata.insert("callerid".to_string(), "/bench_gen".to_string());
        metadata.insert("latching".to_string(), "0".to_string());
        let conn = Connection {
            id: 0,
            topic: topic.into(),
            message_type: ty.into(),
            encoding: "ros1".into(),
            definition: def.into(),
            definition_encoding: "ros1msg".into(),
            metadata,
        };
        ids.push(w.add_connection(&conn)?);
    }

    let mut seq = [0u32; 3];
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut buf = Vec::with_capacity(2 << 20);
    let (mut count, mut bytes) = ([0u64; 3], [0u64; 3]);
    for (t, k) in events {
        buf.clear();
        match k {
            0 => string_msg(&mut buf, seq[k], t),
            1 => imu_msg(&mut buf, seq[k], t),
            _ => image_msg(&mut buf, seq[k], t, &mut rng),
        }
        seq[k] += 1;
        w.write(ids[k], t, t, &buf)?;
        count[k] += 1;
        bytes[k] += buf.len() as u64;
    }
    w.finish()?;
    let size = std::fs::metadata(&out)?.len();
    for k in 0..3 {
        println!(
            "{:<20} {:<18} {:>7} msgs  {:>7} B each  {:>10} B",
            TOPICS[k].0,
            TOPICS[k].1,
            count[k],
            bytes[k] / count[k].max(1),
            bytes[k]
        );
    }
    println!(
        "wrote {} ({} messages, {} payload bytes, file {:.1} MiB) in {:.2}s",
        out.display(),
        count.iter().sum::<u64>(),
        bytes.iter().sum::<u64>(),
        size as f64 / (1 << 20) as f64,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    put_u32(b, s.len() as u32);
    b.extend_from_slice(s.as_bytes());
}

fn put_f64(b: &mut Vec<u8>, v: f64) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// std_msgs/Header
fn header(b: &mut Vec<u8>, seq: u32, t: u64, frame: &str) {
    put_u32(b, seq);
    put_u32(b, (t / 1_000_000_000) as u32);
    put_u32(b, (t % 1_000_000_000) as u32);
    put_str(b, frame);
}

/// std_msgs/String of 50 bytes (4-byte length + 46 characters).
fn string_msg(b: &mut Vec<u8>, seq: u32, t: u64) {
    let s = format!("{:<46}", format!("status ok seq={seq:08} t={t}"));
    put_str(b, &s[..46]);
}

/// sensor_msgs/Imu of 324 bytes (frame id of 12 characters).
fn imu_msg(b: &mut Vec<u8>, seq: u32, t: u64) {
    header(b, seq, t, "imu_link_ned");
    let x = seq as f64 * 1e-3;
    for v in [x.sin() * 0.1, x.cos() * 0.1, 0.0, 1.0] {
        put_f64(b, v); // orientation
    }
    for k in 0..9 {
        put_f64(b, if k % 4 == 0 { 1e-4 } else { 0.0 });
    }
    for v in [x.cos() * 0.02, -x.sin() * 0.02, 0.001] {
        put_f64(b, v); // angular velocity
    }
    for k in 0..9 {
        put_f64(b, if k % 4 == 0 { 2e-4 } else { 0.0 });
    }
    for v in [0.05 * x.sin(), 0.05 * x.cos(), 9.81] {
        put_f64(b, v); // linear acceleration
    }
    for k in 0..9 {
        put_f64(b, if k % 4 == 0 { 3e-3 } else { 0.0 });
    }
}

/// sensor_msgs/Image: 1024x1024 mono8 of pseudo-random pixels (xorshift64).
fn image_msg(b: &mut Vec<u8>, seq: u32, t: u64, rng: &mut u64) {
    header(b, seq, t, "camera_optical_frame");
    put_u32(b, IMAGE_SIDE);
    put_u32(b, IMAGE_SIDE);
    put_str(b, "mono8");
    b.push(0);
    put_u32(b, IMAGE_SIDE);
    let n = (IMAGE_SIDE * IMAGE_SIDE) as usize;
    put_u32(b, n as u32);
    b.reserve(n);
    for _ in 0..n / 8 {
        let mut x = *rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *rng = x;
        b.extend_from_slice(&x.to_le_bytes());
    }
}
