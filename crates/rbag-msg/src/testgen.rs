//! Random messages of any compiled type, for property tests, fuzz seeds and benchmarks (behind
//! the `testgen` feature, which only tests and benches enable). A small xorshift generator keeps
//! runs reproducible from a seed without another dependency.

use std::borrow::Cow;

use crate::definition::Array;
use crate::schema::{Kind, Prim, Schema, MAX_DEPTH};
use crate::value::{scalar, PrimArray, Value};

/// xorshift64*: reproducible, fast, good enough for test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is taken as 1).
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// A random value of the schema's root type; unbounded sequences get up to `max_len` elements.
pub fn random_message(schema: &Schema, rng: &mut Rng, max_len: usize) -> Value<'static> {
    random_msg(schema, schema.root, rng, max_len, 0)
}

fn random_msg(schema: &Schema, idx: usize, rng: &mut Rng, max_len: usize, depth: usize) -> Value<'static> {
    let fields = schema.msgs[idx]
        .fields
        .iter()
        .map(|f| {
            let n = match f.array {
                Array::Single => return random_one(schema, f.kind, rng, max_len, depth),
                Array::Fixed(n) => n,
                Array::Bounded(b) => rng.below(b.min(max_len) + 1),
                Array::Unbounded => rng.below(max_len + 1),
            };
            match f.kind {
                Kind::Prim(p) => {
                    let mut le = Vec::with_capacity(n * p.size());
                    for _ in 0..n {
                        le.extend_from_slice(&random_prim_le(p, rng)[..p.size()]);
                    }
                    Value::Prims(PrimArray { prim: p, le: Cow::Owned(le) })
                }
                // Nested sequences get shorter, so that sizes stay bounded.
                kind => Value::Array((0..n).map(|_| random_one(schema, kind, rng, max_len / 4, depth)).collect()),
            }
        })
        .collect();
    Value::Message(fields)
}

fn random_one(schema: &Schema, kind: Kind, rng: &mut Rng, max_len: usize, depth: usize) -> Value<'static> {
    match kind {
        Kind::Prim(p) => scalar(p, &random_prim_le(p, rng)[..p.size()]),
        Kind::String { bound, .. } => {
            let len = rng.below(bound.unwrap_or(12).min(12) + 1);
            Value::String(Cow::Owned((0..len).map(|_| b'a' + rng.below(26) as u8).collect()))
        }
        Kind::Msg(i) if depth < MAX_DEPTH => random_msg(schema, i, rng, max_len, depth + 1),
        Kind::Msg(_) => Value::Message(Vec::new()),
    }
}

/// Random bits, except that floats are finite (NaN would not compare equal) and bools 0 or 1.
fn random_prim_le(p: Prim, rng: &mut Rng) -> [u8; 8] {
    let bits = rng.next_u64();
    match p {
        Prim::Bool => [(bits & 1) as u8, 0, 0, 0, 0, 0, 0, 0],
        Prim::F32 => {
            let mut a = [0; 8];
            a[..4].copy_from_slice(&((bits as i32) as f32 / 1024.0).to_le_bytes());
            a
        }
        Prim::F64 => ((bits as i64) as f64 / 1e6).to_le_bytes(),
        _ => bits.to_le_bytes(),
    }
}
