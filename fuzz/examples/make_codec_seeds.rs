//! Seeds for the `cdr_decode` and `ros1_decode` targets:
//! `cargo run --release --example make_codec_seeds -- corpus [CORPUS_ROOT]` fills
//! `corpus/cdr_decode` and `corpus/ros1_decode` with
//!
//! - `gen-*`: one message of every bundled type (humble for CDR, little- and big-endian;
//!   noetic for ROS 1), encoded from a made-up value: every number 1 (floats 1.5), every
//!   string `"ab"`, every sequence two elements long (bounded ones up to their bound);
//! - `real-*`: the first few messages of each connection of the real bags under CORPUS_ROOT
//!   (default `/work/shared/corpus`: `ros1/*.bag` and the rosbag2 bags under `ros2/*/*`) whose
//!   type the store has, up to 4 KiB each.
//!
//! Each input is the byte that picks the type (`codec_check::Types::pick`) and the message.

#[path = "../fuzz_targets/codec_check.rs"]
mod codec_check;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rbag_msg::definition::Array;
use rbag_msg::schema::{Kind, Prim};
use rbag_msg::store::Distro;
use rbag_msg::value::{PrimArray, Value};
use rbag_msg::{codec, Encoding, Schema};
use rbag_storage::Filter;

const MAX_REAL: usize = 4096;
const PER_CONNECTION: usize = 3;

fn main() {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(args.next().unwrap_or_else(|| "corpus".into()));
    let bags = PathBuf::from(args.next().unwrap_or_else(|| "/work/shared/corpus".into()));
    let mut counts = Vec::new();
    for (distro, target) in [(Distro::Humble, "cdr_decode"), (Distro::Noetic, "ros1_decode")] {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        let encoding = if distro == Distro::Noetic { Encoding::Ros1 } else { Encoding::Cdr };
        let types = codec_check::types(distro);
        let mut n = 0;
        for (i, schema) in types.schemas.iter().enumerate() {
            let value = sample(schema, schema.root, 0);
            for big_endian in [false, true] {
                if big_endian && encoding == Encoding::Ros1 {
                    continue;
                }
                let mut bytes = vec![i as u8];
                codec::encode(schema, &value, encoding, big_endian, &mut bytes).unwrap();
                codec_check::check(schema, encoding, &bytes[1..]);
                let order = if big_endian { "-be" } else { "" };
                save(&dir, &format!("gen-{}{order}", file_name(schema.name())), &bytes);
                n += 1;
            }
        }
        let real = real_messages(&bags, distro, &dir);
        counts.push(format!("{target}: {n} generated, {real} from bags"));
    }
    println!("{}", counts.join("; "));
}

/// A value of layout `idx` with every field filled.
fn sample(schema: &Schema, idx: usize, depth: usize) -> Value<'static> {
    let fields = schema.msgs[idx]
        .fields
        .iter()
        .map(|f| {
            let n = match f.array {
                Array::Single => return one(schema, f.kind, depth),
                Array::Fixed(n) => n,
                Array::Bounded(b) => b.min(2),
                Array::Unbounded => 2,
            };
            match f.kind {
                Kind::Prim(p) => {
                    Value::Prims(PrimArray { prim: p, le: Cow::Owned((0..n).flat_map(|_| prim_le(p)).collect()) })
                }
                k => Value::Array((0..n).map(|_| one(schema, k, depth)).collect()),
            }
        })
        .collect();
    Value::Message(fields)
}

fn one(schema: &Schema, kind: Kind, depth: usize) -> Value<'static> {
    match kind {
        Kind::Prim(Prim::Bool) => Value::Bool(true),
        Kind::Prim(Prim::I8) => Value::I8(-1),
        Kind::Prim(Prim::U8) => Value::U8(1),
        Kind::Prim(Prim::I16) => Value::I16(-1),
        Kind::Prim(Prim::U16) => Value::U16(1),
        Kind::Prim(Prim::I32) => Value::I32(-1),
        Kind::Prim(Prim::U32) => Value::U32(1),
        Kind::Prim(Prim::I64) => Value::I64(-1),
        Kind::Prim(Prim::U64) => Value::U64(1),
        Kind::Prim(Prim::F32) => Value::F32(1.5),
        Kind::Prim(Prim::F64) => Value::F64(1.5),
        Kind::String { bound, .. } => Value::String(Cow::Borrowed(&b"ab"[..bound.unwrap_or(2).min(2)])),
        Kind::Msg(i) => sample(schema, i, depth + 1),
    }
}

/// The little-endian bytes of [`one`]'s value for `p`.
fn prim_le(p: Prim) -> Vec<u8> {
    match p {
        Prim::Bool | Prim::U8 => vec![1],
        Prim::I8 => vec![0xff],
        Prim::F32 => 1.5f32.to_le_bytes().to_vec(),
        Prim::F64 => 1.5f64.to_le_bytes().to_vec(),
        Prim::I16 | Prim::I32 | Prim::I64 => vec![0xff; p.size()],
        _ => {
            let mut v = vec![0; p.size()];
            v[0] = 1;
            v
        }
    }
}

/// Copies up to [`PER_CONNECTION`] messages of each connection whose type the store has.
fn real_messages(root: &Path, distro: Distro, dir: &Path) -> usize {
    let (encoding, bags) = if distro == Distro::Noetic {
        ("ros1", glob(&root.join("ros1"), 1))
    } else {
        ("cdr", glob(&root.join("ros2"), 2))
    };
    let types = codec_check::types(distro);
    let mut n = 0;
    for bag in bags {
        let Ok(reader) = rbag_storage::open(&bag) else { continue };
        let Ok(messages) = reader.messages(&Filter::default()) else { continue };
        let mut taken = std::collections::HashMap::<u32, usize>::new();
        for m in messages {
            let Ok(m) = m else { break };
            let Some(c) = reader.connection(m.connection) else { continue };
            let name = rbag_msg::registry::normalize(&c.message_type, distro.dialect());
            let Some(index) = types.index_of(&name) else { continue };
            let count = taken.entry(c.id).or_default();
            if c.encoding != encoding || *count >= PER_CONNECTION || m.data.len() > MAX_REAL {
                continue;
            }
            let mut bytes = vec![index];
            bytes.extend_from_slice(&m.data);
            let stem = bag.file_name().unwrap_or_default().to_string_lossy().replace('.', "_");
            let parent = bag.parent().and_then(Path::file_name).unwrap_or_default().to_string_lossy().into_owned();
            save(dir, &format!("real-{parent}-{stem}-{}-c{}-{count}", file_name(&name), c.id), &bytes);
            *count += 1;
            n += 1;
        }
    }
    n
}

/// Files (ROS 1 bags) or directories (rosbag2 bags) `depth` levels under `dir`.
fn glob(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for _ in 0..depth {
        out = out.iter().flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten().map(|e| e.path())).collect();
    }
    out.sort();
    out
}

fn file_name(ty: &str) -> String {
    ty.replace('/', "_")
}

fn save(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
}
