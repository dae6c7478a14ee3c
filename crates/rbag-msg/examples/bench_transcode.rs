//! ROS 1 → CDR rewriting, one pass ([`rbag_msg::stream`]) against decode → plan → encode, on
//! the same payloads. Prints the median ns per message of each and the ratio.
//!
//! `cargo run --release -p rbag-msg --example bench_transcode`

use std::borrow::Cow;
use std::hint::black_box;
use std::time::Instant;

use rbag_msg::migrate::{Plan, Rules};
use rbag_msg::schema::Prim;
use rbag_msg::store::{self, Distro};
use rbag_msg::testgen::{random_message, Rng};
use rbag_msg::value::PrimArray;
use rbag_msg::{dialect, Dialect, Encoding, Schema, Value};

/// A ROS 1 payload of `name`: random small fields, and the named byte array `big` bytes long.
fn payload(schema: &Schema, big: Option<(&str, usize)>) -> Vec<u8> {
    let mut v = random_message(schema, &mut Rng::new(7), 2);
    if let (Some((field, len)), Value::Message(fields)) = (big, &mut v) {
        let i = schema.root().fields.iter().position(|f| f.name == field).expect("field exists");
        fields[i] = Value::Prims(PrimArray { prim: Prim::U8, le: Cow::Owned((0..len).map(|k| k as u8).collect()) });
    }
    let mut out = Vec::new();
    rbag_msg::encode(schema, &v, Encoding::Ros1, false, &mut out).expect("encodes");
    out
}

fn median_ns(iters: usize, mut f: impl FnMut()) -> f64 {
    let mut rounds: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[3]
}

fn main() {
    let ros1 = store::registry(Distro::Noetic);
    let ros2 = store::registry(Distro::Humble);
    // (type, a byte array field made this long, iterations per round)
    type Case = (&'static str, Option<(&'static str, usize)>, usize);
    let cases: [Case; 4] = [
        ("sensor_msgs/Imu", None, 200_000),
        ("tf2_msgs/TFMessage", None, 200_000),
        ("sensor_msgs/PointCloud2", Some(("data", 65_536 * 16)), 300),
        ("sensor_msgs/Image", Some(("data", 640 * 480 * 3)), 300),
    ];
    println!("{:<26} {:>8} {:>14} {:>14} {:>7}", "type (ROS 1 -> CDR)", "bytes", "one-pass ns", "tree ns", "ratio");
    for (name, big, iters) in cases {
        let from = Schema::compile(ros1, name).expect("in the store");
        let (_, to) = dialect::target(&from, ros1, ros2, Dialect::Ros2).expect("has a ROS 2 type");
        let plan = Plan::new(&from, &to, &Rules::between_dialects()).expect("plan");
        assert!(plan.streamable());
        let data = payload(&from, big);
        let mut out = Vec::with_capacity(data.len() + 64);
        let stream = median_ns(iters, || {
            out.clear();
            rbag_msg::stream::transcode(&plan, &from, Encoding::Ros1, &to, Encoding::Cdr, black_box(&data), &mut out)
                .expect("transcodes");
            black_box(&out);
        });
        let mut tree_out = Vec::with_capacity(data.len() + 64);
        let tree = median_ns(iters, || {
            tree_out.clear();
            let v = rbag_msg::decode(&from, black_box(&data), Encoding::Ros1).expect("decodes");
            let v = plan.apply(v).expect("applies");
            rbag_msg::encode(&to, &v, Encoding::Cdr, false, &mut tree_out).expect("encodes");
            black_box(&tree_out);
        });
        assert_eq!(out, tree_out, "{name}: both paths give the same bytes");
        println!("{name:<26} {:>8} {stream:>14.0} {tree:>14.0} {:>6.2}x", data.len(), tree / stream);
    }
}
