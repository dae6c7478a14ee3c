//! Writes the ROS 1 bag that `bench/convert.sh` converts: a realistic robot recording with the
//! real noetic definitions (the full concatenated `message_definition` text, comments included,
//! as a noetic recorder stores it) and MD5 sums of the bundled type store, and payloads encoded
//! with `rbag_msg::encode` from value trees, so every message is a valid serialisation of its
//! type. Uncompressed, rbag's default 768 KiB chunks, messages in log-time order:
//!
//! | topic | type | rate | payload |
//! |---|---|---|---|
//! | `/camera/image_raw` | sensor_msgs/Image (640x480 rgb8) | 30 Hz | 921,661 B |
//! | `/imu` | sensor_msgs/Imu | 200 Hz | 320 B |
//! | `/tf` | tf2_msgs/TFMessage (3 transforms) | 100 Hz | 282 B |
//! | `/odom` | nav_msgs/Odometry | 50 Hz | 713 B |
//! | `/chatter` | std_msgs/String | 10 Hz | 17-18 B |
//!
//! 10 s give 3,900 messages and a 278.2 MB bag. Prints `bag= size= messages= payload_bytes=
//! seconds=` on stdout.
//!
//! usage: bench_convert_gen OUT.bag [SECONDS]

use std::borrow::Cow;
use std::path::PathBuf;

use rbag_msg::schema::Prim;
use rbag_msg::store::{self, Distro};
use rbag_msg::value::PrimArray;
use rbag_msg::{Encoding, Schema, Value};
use rbag_storage::{Connection, Format};

const START: u64 = 1_700_000_000_000_000_000;
const WIDTH: usize = 640;
const HEIGHT: usize = 480;

/// (topic, type, rate in Hz).
const TOPICS: &[(&str, &str, u64)] = &[
    ("/camera/image_raw", "sensor_msgs/Image", 30),
    ("/imu", "sensor_msgs/Imu", 200),
    ("/tf", "tf2_msgs/TFMessage", 100),
    ("/odom", "nav_msgs/Odometry", 50),
    ("/chatter", "std_msgs/String", 10),
];

fn s(v: &str) -> Value<'static> {
    Value::String(Cow::Owned(v.as_bytes().to_vec()))
}

fn f64s(v: &[f64]) -> Value<'static> {
    Value::Prims(PrimArray { prim: Prim::F64, le: Cow::Owned(v.iter().flat_map(|x| x.to_le_bytes()).collect()) })
}

fn header(seq: u64, t: u64, frame: &str) -> Value<'static> {
    let stamp = Value::Message(vec![Value::U32((t / 1_000_000_000) as u32), Value::U32((t % 1_000_000_000) as u32)]);
    Value::Message(vec![Value::U32(seq as u32), stamp, s(frame)])
}

fn vec3(x: f64, y: f64, z: f64) -> Value<'static> {
    Value::Message(vec![Value::F64(x), Value::F64(y), Value::F64(z)])
}

/// A rotation of `yaw` radians about z.
fn quat_yaw(yaw: f64) -> Value<'static> {
    Value::Message(vec![Value::F64(0.0), Value::F64(0.0), Value::F64((yaw / 2.0).sin()), Value::F64((yaw / 2.0).cos())])
}

fn diag(n: usize, v: f64) -> Vec<f64> {
    (0..n * n).map(|i| if i % (n + 1) == 0 { v } else { 0.0 }).collect()
}

/// Fills `px` with frame `i` of a moving gradient plus xorshift noise (cheap, and not a
/// constant that a storage layer could special-case).
fn fill_image(px: &mut [u8], i: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ i.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    for (row, line) in px.chunks_exact_mut(WIDTH * 3).enumerate() {
        for (col, p) in line.chunks_exact_mut(3).enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = (x & 0x0f) as u8;
            p[0] = (col as u64 + i * 4) as u8 ^ n;
            p[1] = (row as u64 + i * 2) as u8 ^ n;
            p[2] = ((col + row) / 5) as u8 ^ n;
        }
    }
}

/// The value of message `i` (at time `t`) of topic `k`.
fn value<'a>(k: usize, i: u64, t: u64, pixels: &'a [u8]) -> Value<'a> {
    let sec = (t - START) as f64 * 1e-9;
    match TOPICS[k].1 {
        "sensor_msgs/Image" => Value::Message(vec![
            header(i, t, "camera_optical_frame"),
            Value::U32(HEIGHT as u32),
            Value::U32(WIDTH as u32),
            s("rgb8"),
            Value::U8(0),
            Value::U32((WIDTH * 3) as u32),
            Value::Prims(PrimArray { prim: Prim::U8, le: Cow::Borrowed(pixels) }),
        ]),
        "sensor_msgs/Imu" => Value::Message(vec![
            header(i, t, "imu_link"),
            quat_yaw(0.1 * sec),
            f64s(&diag(3, 1e-4)),
            vec3(0.01 * (sec * 7.0).sin(), -0.02 * (sec * 5.0).cos(), 0.1),
            f64s(&diag(3, 2e-4)),
            vec3(0.3 * (sec * 3.0).sin(), 0.05, 9.81 + 0.02 * (sec * 11.0).cos()),
            f64s(&diag(3, 1.7e-2)),
        ]),
        "tf2_msgs/TFMessage" => {
            let tf = |parent: &str, child: &str, x: f64, y: f64, z: f64, yaw: f64| {
                Value::Message(vec![header(0, t, parent), s(child), Value::Message(vec![vec3(x, y, z), quat_yaw(yaw)])])
            };
            Value::Message(vec![Value::Array(vec![
                tf("odom", "base_link", 0.5 * sec, 0.1 * sec.sin(), 0.0, 0.1 * sec),
                tf("base_link", "imu_link", 0.1, 0.0, 0.2, 0.0),
                tf("base_link", "camera_link", 0.25, 0.0, 0.45, 0.0),
            ])])
        }
        "nav_msgs/Odometry" => Value::Message(vec![
            header(i, t, "odom"),
            s("base_link"),
            Value::Message(vec![
                Value::Message(vec![vec3(0.5 * sec, 0.1 * sec.sin(), 0.0), quat_yaw(0.1 * sec)]),
                f64s(&diag(6, 1e-3)),
            ]),
            Value::Message(vec![
                Value::Message(vec![vec3(0.5, 0.1 * sec.cos(), 0.0), vec3(0.0, 0.0, 0.1)]),
                f64s(&diag(6, 1e-2)),
            ]),
        ]),
        "std_msgs/String" => Value::Message(vec![s(&format!("hello world {i}"))]),
        other => unreachable!("{other}"),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: bench_convert_gen OUT.bag [SECONDS]";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().ok_or(usage)?);
    let seconds: u64 = args.get(1).map_or(Ok(10), |s| s.parse())?;

    let reg = store::registry(Distro::Noetic);
    let texts = |name: &str| store::text(Distro::Noetic, name).map(str::to_string);
    let mut schemas = Vec::new();
    let mut w = rbag_storage::create(&out, Format::Ros1, &Default::default())?;
    let mut ids = Vec::new();
    for (topic, ty, _) in TOPICS {
        let schema = Schema::compile(reg, ty)?;
        let mut c = Connection {
            topic: (*topic).into(),
            message_type: (*ty).into(),
            encoding: "ros1".into(),
            definition: rbag_msg::dialect::concatenated(&schema, reg, &texts),
            definition_encoding: "ros1msg".into(),
            ..Connection::default()
        };
        c.metadata.insert("md5sum".into(), reg.md5(ty)?);
        c.metadata.insert("callerid".into(), "/robot".into());
        ids.push(w.add_connection(&c)?);
        schemas.push(schema);
    }

    // Every message's (time, topic, index), in log-time order.
    let mut events = Vec::new();
    for (k, (_, _, hz)) in TOPICS.iter().enumerate() {
        for i in 0..seconds * hz {
            events.push((START + i * 1_000_000_000 / hz, k, i));
        }
    }
    events.sort();

    let mut pixels = vec![0u8; WIDTH * HEIGHT * 3];
    let mut buf = Vec::with_capacity(pixels.len() + 1024);
    let mut checked = vec![false; TOPICS.len()];
    let mut bytes = 0u64;
    for &(t, k, i) in &events {
        if TOPICS[k].1 == "sensor_msgs/Image" {
            fill_image(&mut pixels, i);
        }
        buf.clear();
        rbag_msg::encode(&schemas[k], &value(k, i, t, &pixels), Encoding::Ros1, false, &mut buf)?;
        if !checked[k] {
            // The first message of each topic must decode back, with no byte left over.
            let (_, rest) = rbag_msg::decode_counted(&schemas[k], &buf, Encoding::Ros1)?;
            assert_eq!(rest, 0, "{}: {rest} bytes left after decoding", TOPICS[k].0);
            checked[k] = true;
        }
        bytes += buf.len() as u64;
        w.write(ids[k], t, t, &buf)?;
    }
    w.finish()?;
    let size = std::fs::metadata(&out)?.len();
    println!("bag={} size={size} messages={} payload_bytes={bytes} seconds={seconds}", out.display(), events.len());
    Ok(())
}
