//! A decoded message as an owned tree that borrows strings and primitive arrays from the input
//! bytes, read together with its [`Schema`](crate::schema::Schema) for field names.
//!
//! The tree is a convenience: it allocates one `Vec` per nested message and array. Decoding
//! many messages is faster with a reused [`Decoder`](crate::view::Decoder) and its views, which
//! build the tree on request ([`MessageRef::to_value`](crate::view::MessageRef::to_value)).

use std::borrow::Cow;

use crate::schema::Prim;

/// One field's value. Messages hold their fields in definition order.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // the scalar variants are named after their Rust types
pub enum Value<'a> {
    Bool(bool),
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
    /// The string's bytes: ROS 1 strings need not be UTF-8, and keeping bytes keeps round trips
    /// exact. `wstring`s are stored as UTF-8.
    String(Cow<'a, [u8]>),
    /// An array of primitives as little-endian bytes, so that image data and point clouds are
    /// borrowed, not copied element by element.
    Prims(PrimArray<'a>),
    /// An array of strings or messages.
    Array(Vec<Value<'a>>),
    /// A message's fields, in definition order.
    Message(Vec<Value<'a>>),
}

/// An array of primitives as little-endian bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct PrimArray<'a> {
    /// The element type.
    pub prim: Prim,
    /// `len() * prim.size()` bytes, little-endian.
    pub le: Cow<'a, [u8]>,
}

impl PrimArray<'_> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.le.len() / self.prim.size()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.le.is_empty()
    }

    /// Element `i` as a scalar value.
    pub fn get(&self, i: usize) -> Option<Value<'static>> {
        let n = self.prim.size();
        self.le.get(i * n..i * n + n).map(|b| scalar(self.prim, b))
    }

    /// The elements as scalar values.
    pub fn iter(&self) -> impl Iterator<Item = Value<'static>> + '_ {
        self.le.chunks_exact(self.prim.size()).map(|b| scalar(self.prim, b))
    }

    /// A copy that no longer borrows the input.
    pub fn into_owned(self) -> PrimArray<'static> {
        PrimArray { prim: self.prim, le: Cow::Owned(self.le.into_owned()) }
    }
}

/// A scalar from its little-endian bytes (`b.len() == p.size()`; a shorter slice reads as zeros).
#[inline]
pub(crate) fn scalar(p: Prim, b: &[u8]) -> Value<'static> {
    #[inline]
    fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
        b.get(..N).and_then(|s| s.try_into().ok()).unwrap_or([0; N])
    }
    match p {
        Prim::Bool => Value::Bool(arr::<1>(b)[0] != 0),
        Prim::I8 => Value::I8(i8::from_le_bytes(arr(b))),
        Prim::U8 => Value::U8(arr::<1>(b)[0]),
        Prim::I16 => Value::I16(i16::from_le_bytes(arr(b))),
        Prim::U16 => Value::U16(u16::from_le_bytes(arr(b))),
        Prim::I32 => Value::I32(i32::from_le_bytes(arr(b))),
        Prim::U32 => Value::U32(u32::from_le_bytes(arr(b))),
        Prim::I64 => Value::I64(i64::from_le_bytes(arr(b))),
        Prim::U64 => Value::U64(u64::from_le_bytes(arr(b))),
        Prim::F32 => Value::F32(f32::from_le_bytes(arr(b))),
        Prim::F64 => Value::F64(f64::from_le_bytes(arr(b))),
    }
}

impl Value<'_> {
    /// A copy that no longer borrows the input.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Bool(v) => Value::Bool(v),
            Value::I8(v) => Value::I8(v),
            Value::U8(v) => Value::U8(v),
            Value::I16(v) => Value::I16(v),
            Value::U16(v) => Value::U16(v),
            Value::I32(v) => Value::I32(v),
            Value::U32(v) => Value::U32(v),
            Value::I64(v) => Value::I64(v),
            Value::U64(v) => Value::U64(v),
            Value::F32(v) => Value::F32(v),
            Value::F64(v) => Value::F64(v),
            Value::String(s) => Value::String(Cow::Owned(s.into_owned())),
            Value::Prims(p) => Value::Prims(p.into_owned()),
            Value::Array(v) => Value::Array(v.into_iter().map(Value::into_owned).collect()),
            Value::Message(v) => Value::Message(v.into_iter().map(Value::into_owned).collect()),
        }
    }

    /// The number as `f64` (for CSV, plots and migrations), if it is one.
    pub fn as_f64(&self) -> Option<f64> {
        Some(match *self {
            Value::I8(v) => v.into(),
            Value::U8(v) => v.into(),
            Value::I16(v) => v.into(),
            Value::U16(v) => v.into(),
            Value::I32(v) => v.into(),
            Value::U32(v) => v.into(),
            Value::I64(v) => v as f64,
            Value::U64(v) => v as f64,
            Value::F32(v) => v.into(),
            Value::F64(v) => v,
            _ => return None,
        })
    }
}
