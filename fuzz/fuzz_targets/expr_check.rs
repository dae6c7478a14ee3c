//! What the `filter_expr` target does with an input, shared with
//! `crates/rbag-bag/tests/fuzzed_expr.rs` (which includes this file with `#[path]`), so a test
//! replays exactly what the fuzzer ran.
//!
//! [`Fixture::new`] writes two small bags once: a ROS 1 bag with `rbag-testkit`'s sample topics
//! (`std_msgs/String`, `Float64`, `geometry_msgs/Point`, a latched `String`), a `String` that is
//! not UTF-8 and a few messages of richer bundled types (headers and times, nested messages,
//! arrays of messages, of numbers, of strings and of bytes), and an MCAP bag with the same
//! richer types as CDR. [`Fixture::run`] parses the input as an expression and, when it
//! parses, runs an [`ExprFilter`] over every message of both bags, as `rbag filter` does:
//! `Ok` or `Err`, never a panic, within libFuzzer's time and memory limits.

use std::borrow::Cow;
use std::path::Path;

use rbag_bag::decode::TypeSources;
use rbag_bag::expr::{ExprFilter, Expression, Unmatched};
use rbag_bag::{Bag, Filter, Format, Message, Select, WriteOptions, Writer};
use rbag_msg::definition::Array;
use rbag_msg::schema::{Kind, Prim};
use rbag_msg::value::{PrimArray, Value};
use rbag_msg::Schema;

/// The bags' first log time: 2023-11-14T22:13:20Z.
pub const START: u64 = 1_700_000_000_000_000_000;

/// Bundled types with a message each: topic, ROS 1 type (the ROS 1 bag), ROS 2 type (the MCAP).
const TYPES: &[(&str, &str, &str)] = &[
    ("/imu", "sensor_msgs/Imu", "sensor_msgs/msg/Imu"),
    ("/tf", "tf2_msgs/TFMessage", "tf2_msgs/msg/TFMessage"),
    ("/diagnostics", "diagnostic_msgs/DiagnosticArray", "diagnostic_msgs/msg/DiagnosticArray"),
    ("/image", "sensor_msgs/Image", "sensor_msgs/msg/Image"),
    ("/odom", "nav_msgs/Odometry", "nav_msgs/msg/Odometry"),
    ("/rosout", "rosgraph_msgs/Log", "rcl_interfaces/msg/Log"),
];

/// The strings messages get, in turn: a frame id, empty, ASCII, UTF-8, and not UTF-8.
const STRINGS: &[&[u8]] = &[b"base_link", b"", b"ab", "h\u{e9}llo w\u{f6}rld".as_bytes(), b"\xff\xfe/x"];

/// The bags, opened, with their messages read once.
pub struct Fixture {
    bags: Vec<(Bag, Vec<Message>)>,
}

impl Fixture {
    /// Writes the bags into `dir` and opens them.
    pub fn new(dir: &Path) -> Fixture {
        let ros1 = dir.join("expr_fixture.bag");
        let mcap = dir.join("expr_fixture.mcap");
        for p in [&ros1, &mcap] {
            let _ = std::fs::remove_file(p);
        }
        let options = WriteOptions::default();

        let mut w = Writer::create(&ros1, Format::Ros1, &options).expect("create the ROS 1 fixture");
        let ids: Vec<u32> = rbag_testkit::sample::TOPICS
            .iter()
            .map(|t| w.add_connection(&rbag_testkit::sample::connection(t)).expect("sample connection"))
            .collect();
        for (k, time, data) in rbag_testkit::sample::messages(START, 30_000_000) {
            w.write(ids[k], time, time, &data).expect("sample message");
        }
        let raw = w.add_connection(&rbag_testkit::sample::string_connection(Format::Ros1, "/raw")).expect("/raw");
        let mut not_utf8 = 4u32.to_le_bytes().to_vec();
        not_utf8.extend_from_slice(b"\xff\xfe/x");
        w.write(raw, START + 5, START + 5, &not_utf8).expect("/raw message");
        write_types(&mut w);
        w.finish().expect("finish the ROS 1 fixture");

        let mut w = Writer::create(&mcap, Format::Mcap, &options).expect("create the MCAP fixture");
        let chatter =
            w.add_connection(&rbag_testkit::sample::string_connection(Format::Mcap, "/chatter")).expect("/chatter");
        w.write(chatter, START, START, b"\x00\x01\x00\x00\x03\x00\x00\x00hi\x00").expect("/chatter message");
        write_types(&mut w);
        w.finish().expect("finish the MCAP fixture");

        let bags = [ros1, mcap]
            .iter()
            .map(|p| {
                let bag = Bag::open(p).expect("open a fixture");
                let msgs = bag
                    .messages(&Filter::default())
                    .expect("fixture messages")
                    .collect::<Result<Vec<_>, _>>()
                    .expect("read the fixture");
                (bag, msgs)
            })
            .collect();
        Fixture { bags }
    }

    /// Messages in the bags.
    pub fn message_count(&self) -> usize {
        self.bags.iter().map(|(_, m)| m.len()).sum()
    }

    /// What the target does with one input.
    pub fn run(&self, data: &[u8]) {
        match std::str::from_utf8(data) {
            Ok(src) => self.expression(src),
            // `rbag filter` takes the expression as a `&str`: bytes that are not UTF-8 are
            // refused before this; their lossy text must still parse or fail cleanly.
            Err(_) => {
                if let Err(e) = Expression::parse(&String::from_utf8_lossy(data)) {
                    let _ = e.to_string();
                }
            }
        }
    }

    fn expression(&self, src: &str) {
        let expr = match Expression::parse(src) {
            Ok(e) => e,
            Err(e) => {
                let _ = e.to_string();
                return;
            }
        };
        assert_eq!(expr.source(), src);
        // Without a message (what `rbag filter` does when the expression never reads `m`).
        if let Err(e) = expr.matches("/chatter", START + 1_500_000_000, None) {
            let _ = e.to_string();
        }
        let mut filter = ExprFilter::new(expr, Unmatched::Keep, TypeSources::default());
        let mut selected = 0u64;
        'bags: for (input, (bag, msgs)) in self.bags.iter().enumerate() {
            for msg in msgs {
                let conn = bag.connection(msg.connection).expect("the fixture's connections");
                match filter.select(input, bag, conn, msg) {
                    Ok(_) => selected += 1,
                    // `rbag filter` stops at the first error.
                    Err(e) => {
                        let _ = e.to_string();
                        break 'bags;
                    }
                }
            }
        }
        let report = filter.report();
        assert_eq!(report.kept + report.dropped, selected, "every selected message is counted once");
        let unmatched: u64 = report.unmatched.iter().map(|u| u.messages).sum();
        assert!(unmatched <= selected);
    }
}

/// One message of each of [`TYPES`] in the writer's dialect, three of the first.
fn write_types(w: &mut Writer) {
    for (n, &(topic, ros1, ros2)) in TYPES.iter().enumerate() {
        let ty = if w.dialect() == rbag_msg::Dialect::Ros1 { ros1 } else { ros2 };
        let id = w.add_connection_for(topic, ty).unwrap_or_else(|e| panic!("{ty}: {e}"));
        let schema = w.schema(id).unwrap_or_else(|e| panic!("{ty}: {e}"));
        let count = if n == 0 { 3 } else { 1 };
        for i in 0..count {
            let k = n + i;
            let value = sample(&schema, schema.root, k, 0);
            let time = START + 1_000_000 * (1 + k as u64);
            w.write_value(id, time, time, &value).unwrap_or_else(|e| panic!("{ty}: {e}"));
        }
    }
}

/// A value of layout `idx`, every field filled from `k`: numbers near `k`, strings in turn from
/// [`STRINGS`], sequences of `k % 3 + 1` elements (bounded ones up to their bound).
fn sample(schema: &Schema, idx: usize, k: usize, depth: usize) -> Value<'static> {
    let fields = schema.msgs[idx]
        .fields
        .iter()
        .enumerate()
        .map(|(j, f)| {
            let k = k + j;
            let n = match f.array {
                Array::Single => return one(schema, f.kind, k, depth),
                Array::Fixed(n) => n,
                Array::Bounded(b) => b.min(k % 3 + 1),
                Array::Unbounded => k % 3 + 1,
            };
            match f.kind {
                Kind::Prim(p) => Value::Prims(PrimArray {
                    prim: p,
                    le: Cow::Owned((0..n).flat_map(|i| prim_le(p, k + i)).collect()),
                }),
                kind => Value::Array((0..n).map(|i| one(schema, kind, k + i, depth)).collect()),
            }
        })
        .collect();
    Value::Message(fields)
}

fn one(schema: &Schema, kind: Kind, k: usize, depth: usize) -> Value<'static> {
    let i = k as i64 - 2;
    match kind {
        Kind::Prim(Prim::Bool) => Value::Bool(k % 2 == 1),
        Kind::Prim(Prim::I8) => Value::I8(i as i8),
        Kind::Prim(Prim::U8) => Value::U8(k as u8),
        Kind::Prim(Prim::I16) => Value::I16(i as i16),
        Kind::Prim(Prim::U16) => Value::U16(k as u16),
        Kind::Prim(Prim::I32) => Value::I32(i as i32),
        Kind::Prim(Prim::U32) => Value::U32(k as u32),
        Kind::Prim(Prim::I64) => Value::I64(i),
        Kind::Prim(Prim::U64) => Value::U64(k as u64),
        Kind::Prim(Prim::F32) => Value::F32(i as f32 * 0.5),
        Kind::Prim(Prim::F64) => Value::F64(i as f64 * 1.25),
        Kind::String { bound, .. } => {
            let s = STRINGS[k % STRINGS.len()];
            Value::String(Cow::Borrowed(&s[..bound.unwrap_or(s.len()).min(s.len())]))
        }
        Kind::Msg(m) => sample(schema, m, k, depth + 1),
    }
}

/// The little-endian bytes of [`one`]'s value for `p`.
fn prim_le(p: Prim, k: usize) -> Vec<u8> {
    let i = k as i64 - 2;
    match p {
        Prim::Bool => vec![(k % 2) as u8],
        Prim::F32 => (i as f32 * 0.5).to_le_bytes().to_vec(),
        Prim::F64 => (i as f64 * 1.25).to_le_bytes().to_vec(),
        Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64 => i.to_le_bytes()[..p.size()].to_vec(),
        _ => (k as u64).to_le_bytes()[..p.size()].to_vec(),
    }
}
