//! What the `cdr_decode` and `ros1_decode` targets do with one input, shared with
//! `crates/rbag-msg/tests/fuzzed_codec.rs` (which includes this file with `#[path]`), so a
//! regression test replays exactly what the fuzzer ran.
//!
//! An input is one byte choosing a type of the bundled store (humble for CDR, noetic for ROS 1;
//! the byte modulo the number of types, in sorted order), then the message bytes.
#![allow(dead_code)]

use std::io::{self, Write};
use std::sync::OnceLock;

use rbag_msg::store::{self, Distro};
use rbag_msg::value::Value;
use rbag_msg::{codec, render, Encoding, Schema};

/// The store's types of one distro, compiled once (a type that does not compile is left out;
/// the store's own tests say every one does).
pub struct Types {
    pub schemas: Vec<Schema>,
}

pub fn types(distro: Distro) -> &'static Types {
    static NOETIC: OnceLock<Types> = OnceLock::new();
    static HUMBLE: OnceLock<Types> = OnceLock::new();
    let cell = match distro {
        Distro::Noetic => &NOETIC,
        Distro::Humble => &HUMBLE,
        other => panic!("the codec targets use noetic and humble, not {other}"),
    };
    cell.get_or_init(|| {
        let reg = store::registry(distro);
        Types { schemas: reg.names().filter_map(|n| Schema::compile(reg, n).ok()).collect() }
    })
}

impl Types {
    /// The schema an input's first byte chooses, and the rest of the input.
    pub fn pick<'d>(&self, data: &'d [u8]) -> Option<(&Schema, &'d [u8])> {
        let (&first, rest) = data.split_first()?;
        Some((&self.schemas[usize::from(first) % self.schemas.len()], rest))
    }

    /// The first byte that chooses `name` (for seeds and tests).
    pub fn index_of(&self, name: &str) -> Option<u8> {
        self.schemas.iter().position(|s| s.name() == name).and_then(|i| u8::try_from(i).ok())
    }
}

/// A whole fuzz input: pick the type, then [`check`].
pub fn run(distro: Distro, data: &[u8]) {
    let encoding = if distro == Distro::Noetic { Encoding::Ros1 } else { Encoding::Cdr };
    if let Some((schema, bytes)) = types(distro).pick(data) {
        check(schema, encoding, bytes);
    }
}

/// Decoding never panics; whatever decodes renders (JSON that parses, YAML, CSV cells matching
/// the columns, field paths), encodes, and decodes back to the same value (floats compared by
/// bits). ROS 1 input that decoded with no bytes left over encodes back to the same bytes, up to
/// `bool` bytes other than 0 and 1, which decode as `true` and encode as 1 (as genpy does).
pub fn check(schema: &Schema, encoding: Encoding, bytes: &[u8]) {
    let Ok((value, left)) = codec::decode_counted(schema, bytes, encoding) else { return };
    assert!(left <= bytes.len());
    render_all(schema, &value);

    let big_endian = encoding == Encoding::Cdr && matches!(bytes[1], 0 | 2);
    let mut out = Vec::new();
    codec::encode(schema, &value, encoding, big_endian, &mut out)
        .unwrap_or_else(|e| panic!("{}: a decoded value does not encode: {e}", schema.name()));
    let (again, left2) = codec::decode_counted(schema, &out, encoding)
        .unwrap_or_else(|e| panic!("{}: encoded output does not decode: {e}\n  {out:02x?}", schema.name()));
    assert_eq!(left2, 0, "{}: encoded output has {left2} bytes left over", schema.name());
    assert!(
        same(&value, &again),
        "{}: round trip changed the value\n  before {value:?}\n  after  {again:?}",
        schema.name()
    );

    match encoding {
        Encoding::Ros1 if left == 0 => {
            assert_eq!(out.len(), bytes.len(), "{}: re-encoded length", schema.name());
            for (i, (a, b)) in bytes.iter().zip(&out).enumerate() {
                assert!(
                    a == b || (*a > 1 && *b == 1),
                    "{}: re-encoded bytes differ at {i}: {a:#04x} → {b:#04x}",
                    schema.name()
                );
            }
        }
        Encoding::Ros1 => {}
        Encoding::Cdr => {
            // The other byte order gives the same value, and re-encoding is stable.
            let mut other = Vec::new();
            codec::encode(schema, &value, encoding, !big_endian, &mut other).expect("encode in the other byte order");
            let flipped = codec::decode(schema, &other, encoding).expect("decode the other byte order");
            assert!(same(&value, &flipped), "{}: byte order changed the value", schema.name());
            let mut twice = Vec::new();
            codec::encode(schema, &again, encoding, big_endian, &mut twice).expect("encode again");
            assert_eq!(out, twice, "{}: encoding is not stable", schema.name());
        }
    }
}

/// JSON (checked to parse, as an object), YAML (whole and truncated), CSV and field paths.
fn render_all(schema: &Schema, value: &Value) {
    let mut json = Vec::new();
    render::json_message(schema, value, &mut json).expect("json into a Vec");
    match serde_json::from_slice::<serde_json::Value>(&json) {
        Ok(serde_json::Value::Object(_)) => {}
        Ok(other) => panic!("{}: JSON is not an object: {other}", schema.name()),
        Err(e) => panic!("{}: JSON does not parse: {e}\n  {}", schema.name(), String::from_utf8_lossy(&json)),
    }
    render::yaml_message(schema, value, None, &mut io::sink()).expect("yaml into a sink");
    let mut yaml = Vec::new();
    render::yaml_message(schema, value, Some(2), &mut yaml).expect("yaml into a Vec");
    assert!(std::str::from_utf8(&yaml).is_ok(), "{}: YAML is not UTF-8", schema.name());

    // A type too wide for CSV is refused by `Csv::new` (and never has cells).
    if let Ok(csv) = render::Csv::new(schema) {
        let cells = csv.cells(schema, value);
        assert_eq!(
            csv.columns().len(),
            cells.len(),
            "{}: CSV cells do not match the columns {:?}",
            schema.name(),
            csv.columns()
        );
    }

    for f in &schema.root().fields {
        render::check_path(schema, &f.name).unwrap_or_else(|e| panic!("{}: {e}", schema.name()));
        for path in [f.name.clone(), format!("{}[0]", f.name)] {
            if let Ok(Some(s)) = render::select(schema, value, &path) {
                s.json(schema, &mut io::sink()).expect("json into a sink");
                s.yaml(schema, Some(4), &mut io::sink()).expect("yaml into a sink");
            }
        }
    }
    let _ = io::sink().flush();
}

/// Equal values, floats compared by their bits (a NaN is the same NaN after a round trip).
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) | (Value::Message(x), Value::Message(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        _ => a == b,
    }
}
