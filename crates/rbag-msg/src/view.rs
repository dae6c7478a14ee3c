//! Decoded messages without a tree: a [`Decoder`] decodes a message into one flat vector of
//! nodes that it keeps and reuses, so that decoding a stream of messages allocates nothing once
//! the first has been seen. A message's fields sit in consecutive nodes, as do an array's
//! elements, and a node refers to its children by index; strings and primitive arrays are not
//! copied but point into the input (little-endian data) or, when they had to be converted
//! (big-endian CDR, `wstring`), into one scratch buffer the decoder also keeps.
//!
//! The views ([`MessageRef`], [`ValueRef`], [`ArrayRef`], [`Prims`]) are small `Copy` handles
//! that borrow the decoder, the schema and the input: navigate by field name or path, iterate
//! fields with their names from the [`Schema`], render ([`MessageRef::json`],
//! [`MessageRef::yaml`]), encode again ([`MessageRef::encode`]), or build the [`Value`] tree
//! ([`MessageRef::to_value`]) when an owned copy is wanted.
//!
//! ```
//! use rbag_msg::{encode, Decoder, Encoding, Registry, Schema, Value, ValueRef};
//!
//! let mut reg = Registry::new(rbag_msg::Dialect::Ros2);
//! reg.add("geometry_msgs/msg/Vector3", "float64 x\nfloat64 y\nfloat64 z\n").unwrap();
//! reg.add("my_pkg/msg/Reading", "string frame\ngeometry_msgs/Vector3[] points\nuint8[] raw\n").unwrap();
//! let schema = Schema::compile(&reg, "my_pkg/msg/Reading").unwrap();
//! # let v3 = |x: f64| Value::Message(vec![Value::F64(x), Value::F64(0.0), Value::F64(-x)]);
//! # let value = Value::Message(vec![
//! #     Value::String(b"base".as_slice().into()),
//! #     Value::Array(vec![v3(1.0), v3(2.5)]),
//! #     Value::Prims(rbag_msg::value::PrimArray { prim: rbag_msg::schema::Prim::U8, le: vec![7, 8].into() }),
//! # ]);
//! # let mut bytes = Vec::new();
//! # encode(&schema, &value, Encoding::Cdr, false, &mut bytes).unwrap();
//!
//! let mut decoder = Decoder::new(); // keep it: its buffers are reused for every message
//! let msg = decoder.decode(&schema, &bytes, Encoding::Cdr).unwrap();
//! assert_eq!(msg.field("frame").and_then(|v| v.as_bytes()), Some(&b"base"[..]));
//! assert_eq!(msg.path("points[1].x").unwrap().and_then(|v| v.as_f64()), Some(2.5));
//! for (name, value) in msg.fields() {
//!     if let ValueRef::Prims(p) = value {
//!         assert_eq!((name, p.le), ("raw", &[7u8, 8][..])); // borrowed from `bytes`
//!     }
//! }
//! let mut json = Vec::new();
//! msg.json(&mut json).unwrap();
//! assert!(json.starts_with(br#"{"frame":"base","points":[{"x":1.0"#));
//! let mut again = Vec::new();
//! msg.encode(Encoding::Cdr, false, &mut again).unwrap();
//! assert_eq!(again, bytes);
//! ```

use std::borrow::Cow;
use std::io::{self, Write};
use std::ops::Range;

use crate::codec::{CodecError, Encoding, Reader, Writer};
use crate::render::{self, PathError, Segment};
use crate::schema::{FieldLayout, MsgLayout, Prim, Schema};
use crate::value::{PrimArray, Value};

/// Where a string's or primitive array's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: u32,
    pub(crate) len: u32,
    /// In the decoder's scratch buffer rather than the input.
    pub(crate) scratch: bool,
}

impl Span {
    /// A span of the input (whose length the reader checked fits a `u32`).
    pub(crate) fn input(start: usize, len: usize) -> Span {
        Span { start: start as u32, len: len as u32, scratch: false }
    }

    /// A span of the scratch buffer, if it fits a `u32`.
    pub(crate) fn scratch(start: usize, len: usize) -> Option<Span> {
        let end = start.checked_add(len)?;
        u32::try_from(end).ok()?;
        Some(Span { start: start as u32, len: len as u32, scratch: true })
    }

    pub(crate) fn range(self) -> Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// One decoded value: 16 bytes, no heap data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Node {
    /// A primitive: its value's little-endian bits, zero-extended (no per-type dispatch while
    /// decoding; the view gives it its type).
    Scalar(Prim, u64),
    Str(Span),
    Prims(Prim, Span),
    /// An array of strings or messages: elements in nodes `first..first + len`.
    Array {
        first: u32,
        len: u32,
    },
    /// A message of type `ty` (an index into [`Schema::msgs`]): fields from node `first` on.
    Msg {
        ty: u32,
        first: u32,
    },
}

impl Node {
    /// A scalar from its little-endian bytes (at most 8; a shorter slice reads as zero-extended).
    #[inline(always)]
    pub(crate) fn scalar(p: Prim, b: &[u8]) -> Node {
        let mut a = [0u8; 8];
        let n = b.len().min(8);
        a[..n].copy_from_slice(&b[..n]);
        Node::Scalar(p, u64::from_le_bytes(a))
    }
}

/// A primitive's value from its little-endian bits.
fn scalar_ref(p: Prim, bits: u64) -> ValueRef<'static> {
    match p {
        Prim::Bool => ValueRef::Bool(bits != 0),
        Prim::I8 => ValueRef::I8(bits as u8 as i8),
        Prim::U8 => ValueRef::U8(bits as u8),
        Prim::I16 => ValueRef::I16(bits as u16 as i16),
        Prim::U16 => ValueRef::U16(bits as u16),
        Prim::I32 => ValueRef::I32(bits as u32 as i32),
        Prim::U32 => ValueRef::U32(bits as u32),
        Prim::I64 => ValueRef::I64(bits as i64),
        Prim::U64 => ValueRef::U64(bits),
        Prim::F32 => ValueRef::F32(f32::from_bits(bits as u32)),
        Prim::F64 => ValueRef::F64(f64::from_bits(bits)),
    }
}

/// A primitive's value from its little-endian bytes.
fn scalar_at(p: Prim, b: &[u8]) -> ValueRef<'static> {
    match Node::scalar(p, b) {
        Node::Scalar(p, bits) => scalar_ref(p, bits),
        _ => ValueRef::Bool(false), // `Node::scalar` makes only scalars
    }
}

/// Builds the [`Value`] tree of node `i`; `bytes` resolves a span.
pub(crate) fn build_value<'x>(
    schema: &Schema,
    nodes: &[Node],
    i: usize,
    bytes: &dyn Fn(Span) -> Cow<'x, [u8]>,
) -> Value<'x> {
    let Some(&node) = nodes.get(i) else { return Value::Message(Vec::new()) };
    let children = |first: u32, n: usize| -> Vec<Value<'x>> {
        (first as usize..first as usize + n).map(|j| build_value(schema, nodes, j, bytes)).collect()
    };
    match node {
        Node::Scalar(p, bits) => scalar_ref(p, bits).scalar().unwrap_or(Value::Bool(false)),
        Node::Str(s) => Value::String(bytes(s)),
        Node::Prims(prim, s) => Value::Prims(PrimArray { prim, le: bytes(s) }),
        Node::Array { first, len } => Value::Array(children(first, len as usize)),
        Node::Msg { ty, first } => {
            Value::Message(children(first, schema.msgs.get(ty as usize).map_or(0, |m| m.fields.len())))
        }
    }
}

/// A reusable decoder: decode a message, read it through the returned [`MessageRef`], decode the
/// next one. Its node vector and scratch buffer keep their capacity, so after the first messages
/// of a stream decoding allocates nothing.
#[derive(Debug, Default, Clone)]
pub struct Decoder {
    nodes: Vec<Node>,
    scratch: Vec<u8>,
}

impl Decoder {
    /// An empty decoder (it grows to fit the largest message it decodes).
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Decodes one message of `schema`'s root type. Bytes left after it are ignored (see
    /// [`Decoder::decode_counted`]).
    pub fn decode<'d>(
        &'d mut self,
        schema: &'d Schema,
        bytes: &'d [u8],
        encoding: Encoding,
    ) -> Result<MessageRef<'d>, CodecError> {
        self.decode_counted(schema, bytes, encoding).map(|(m, _)| m)
    }

    /// Decodes one message and says how many bytes were left after it: more than CDR's final
    /// padding ([`allowed_trailing`](crate::codec::allowed_trailing)) means the definition does
    /// not describe the message.
    pub fn decode_counted<'d>(
        &'d mut self,
        schema: &'d Schema,
        bytes: &'d [u8],
        encoding: Encoding,
    ) -> Result<(MessageRef<'d>, usize), CodecError> {
        let nodes = std::mem::take(&mut self.nodes);
        let scratch = std::mem::take(&mut self.scratch);
        let mut r = Reader::new(schema, bytes, encoding, nodes, scratch);
        let done = r.root();
        let left = r.remaining();
        (self.nodes, self.scratch) = (r.nodes, r.scratch);
        done.map_err(|e| *e)?;
        let ctx = Ctx { schema, nodes: &self.nodes, input: bytes, scratch: &self.scratch };
        Ok((ctx.message(0), left))
    }

    /// Releases buffers grown past `bytes` (after an unusually large message).
    pub fn shrink_to(&mut self, bytes: usize) {
        self.nodes.shrink_to(bytes / std::mem::size_of::<Node>());
        self.scratch.shrink_to(bytes);
    }
}

/// What every view holds: the schema, the decoded nodes and the bytes they point into.
#[derive(Clone, Copy)]
struct Ctx<'d> {
    schema: &'d Schema,
    nodes: &'d [Node],
    input: &'d [u8],
    scratch: &'d [u8],
}

impl<'d> Ctx<'d> {
    fn bytes(self, s: Span) -> &'d [u8] {
        let src = if s.scratch { self.scratch } else { self.input };
        src.get(s.range()).unwrap_or_default()
    }

    /// Node `i`, which must be a message (the decoder put one there).
    fn message(self, i: usize) -> MessageRef<'d> {
        match self.nodes.get(i) {
            Some(&Node::Msg { ty, first }) => MessageRef { ctx: self, ty, first },
            _ => unreachable!("node {i} is not a message"),
        }
    }

    fn value(self, i: usize) -> ValueRef<'d> {
        match self.nodes[i] {
            Node::Scalar(p, bits) => scalar_ref(p, bits),
            Node::Str(s) => ValueRef::String(self.bytes(s)),
            Node::Prims(prim, s) => ValueRef::Prims(Prims { prim, le: self.bytes(s) }),
            Node::Array { first, len } => ValueRef::Array(ArrayRef { ctx: self, first, len }),
            Node::Msg { ty, first } => ValueRef::Message(MessageRef { ctx: self, ty, first }),
        }
    }
}

/// A decoded message of some type in the schema: fields by index, name or path.
#[derive(Clone, Copy)]
pub struct MessageRef<'d> {
    ctx: Ctx<'d>,
    ty: u32,
    first: u32,
}

impl std::fmt::Debug for MessageRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut m = f.debug_struct(&self.layout().name);
        for (name, v) in self.fields() {
            m.field(name, &v);
        }
        m.finish()
    }
}

impl<'d> MessageRef<'d> {
    /// The schema this message was decoded with.
    pub fn schema(&self) -> &'d Schema {
        self.ctx.schema
    }

    /// Its type's layout (field names, kinds, arrays).
    pub fn layout(&self) -> &'d MsgLayout {
        &self.ctx.schema.msgs[self.ty as usize]
    }

    /// Its type's index in [`Schema::msgs`].
    pub fn type_index(&self) -> usize {
        self.ty as usize
    }

    /// Its type's full name (`geometry_msgs/msg/Vector3`).
    pub fn type_name(&self) -> &'d str {
        &self.layout().name
    }

    /// The number of fields (including the filler field ROS 2 gives empty types).
    pub fn len(&self) -> usize {
        self.layout().fields.len()
    }

    /// Whether the type has no fields (ROS 1 empty messages).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Field `i`, in definition order.
    pub fn get(&self, i: usize) -> Option<ValueRef<'d>> {
        (i < self.len()).then(|| self.ctx.value(self.first as usize + i))
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<ValueRef<'d>> {
        self.get(self.layout().fields.iter().position(|f| f.name == name)?)
    }

    /// Every field with its name, in definition order.
    pub fn fields(&self) -> impl ExactSizeIterator<Item = (&'d str, ValueRef<'d>)> + 'd {
        let this = *self;
        self.layout()
            .fields
            .iter()
            .enumerate()
            .map(move |(i, f)| (f.name.as_str(), this.ctx.value(this.first as usize + i)))
    }

    /// Every field with its layout (type, array kind, default), in definition order.
    pub fn fields_with_layout(&self) -> impl ExactSizeIterator<Item = (&'d FieldLayout, ValueRef<'d>)> + 'd {
        let this = *self;
        self.layout().fields.iter().enumerate().map(move |(i, f)| (f, this.ctx.value(this.first as usize + i)))
    }

    /// The value at a dotted path with indices (`pose.position.x`, `points[3]`, a leading `.`
    /// allowed); `Ok(None)` if an index is past the end of this message's array. A path that
    /// does not fit the type is an error.
    pub fn path(&self, path: &str) -> Result<Option<ValueRef<'d>>, PathError> {
        let mut cur = ValueRef::Message(*self);
        for seg in render::path_segments(path)? {
            cur = match (seg, cur) {
                (Segment::Field(name), ValueRef::Message(m)) => match m.field(name) {
                    Some(v) => v,
                    None => return Err(PathError::no_field(path, m.layout(), name)),
                },
                (Segment::Index(i), ValueRef::Array(a)) => match a.get(i) {
                    Some(v) => v,
                    None => return Ok(None),
                },
                (Segment::Index(i), ValueRef::Prims(p)) => match p.get(i) {
                    Some(v) => v,
                    None => return Ok(None),
                },
                (Segment::Field(name), _) => {
                    return Err(PathError::NotAMessage { path: path.into(), name: name.into() })
                }
                (Segment::Index(_), _) => return Err(PathError::NotAnArray { path: path.into() }),
            };
        }
        Ok(Some(cur))
    }

    /// An owned tree of the message (strings and arrays still borrowed).
    pub fn to_value(&self) -> Value<'d> {
        Value::Message(self.fields().map(|(_, v)| v.to_value()).collect())
    }

    /// The message as compact JSON: objects in field order (the same text as
    /// [`render::json_message`]).
    pub fn json(&self, out: &mut dyn Write) -> io::Result<()> {
        render::json(Some(self.ctx.schema), Some(self.ty as usize), ValueRef::Message(*self), out)
    }

    /// The message as YAML, the way `ros2 topic echo` prints it; arrays longer than `max_array`
    /// are cut.
    pub fn yaml(&self, max_array: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
        render::yaml(Some(self.ctx.schema), Some(self.ty as usize), ValueRef::Message(*self), max_array, out)
    }

    /// Encodes the message (which must be of the schema's root type) again, appending to `out`.
    /// CDR output is little-endian unless `big_endian`.
    pub fn encode(&self, encoding: Encoding, big_endian: bool, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let mut w = Writer::new(self.ctx.schema, out, encoding, big_endian);
        w.msg(self.ty as usize, ValueRef::Message(*self), 0).map_err(|e| *e)
    }
}

/// An array of strings or messages. Arrays of primitives are [`Prims`].
#[derive(Clone, Copy)]
pub struct ArrayRef<'d> {
    ctx: Ctx<'d>,
    first: u32,
    len: u32,
}

impl std::fmt::Debug for ArrayRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'d> ArrayRef<'d> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Option<ValueRef<'d>> {
        (i < self.len()).then(|| self.ctx.value(self.first as usize + i))
    }

    /// The elements in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ValueRef<'d>> + 'd {
        let this = *self;
        (0..this.len()).map(move |i| this.ctx.value(this.first as usize + i))
    }
}

/// An array of primitives as its little-endian bytes, borrowed from the message where it was
/// little-endian there (image data and point clouds are not copied).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prims<'d> {
    /// The element type.
    pub prim: Prim,
    /// `len() * prim.size()` bytes, little-endian.
    pub le: &'d [u8],
}

impl<'d> Prims<'d> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.le.len() / self.prim.size()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.le.is_empty()
    }

    /// Element `i` as a scalar.
    pub fn get(&self, i: usize) -> Option<ValueRef<'d>> {
        let n = self.prim.size();
        self.le.get(i * n..i * n + n).map(|b| scalar_at(self.prim, b))
    }

    /// The elements as scalars.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ValueRef<'d>> + 'd {
        let prim = self.prim;
        self.le.chunks_exact(prim.size()).map(move |b| scalar_at(prim, b))
    }

    /// The elements as `f64`s (every primitive but `bool` converts).
    pub fn to_f64s(&self) -> impl ExactSizeIterator<Item = f64> + 'd {
        self.iter().map(|v| v.as_f64().unwrap_or(f64::NAN))
    }

    /// The [`Value`] form.
    pub fn to_prim_array(&self) -> PrimArray<'d> {
        PrimArray { prim: self.prim, le: Cow::Borrowed(self.le) }
    }
}

/// One decoded value, borrowed: the view counterpart of [`Value`].
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)] // the scalar variants are named after their Rust types
pub enum ValueRef<'d> {
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
    /// The string's bytes: ROS 1 strings need not be UTF-8. `wstring`s are given as UTF-8.
    String(&'d [u8]),
    /// An array of primitives.
    Prims(Prims<'d>),
    /// An array of strings or messages.
    Array(ArrayRef<'d>),
    /// A nested message.
    Message(MessageRef<'d>),
}

impl<'d> ValueRef<'d> {
    /// The number as `f64`, if it is one (`bool` is not).
    pub fn as_f64(&self) -> Option<f64> {
        self.scalar().and_then(|v| v.as_f64())
    }

    /// The scalar as a [`Value`], if it is one.
    pub fn scalar(&self) -> Option<Value<'static>> {
        Some(match *self {
            ValueRef::Bool(v) => Value::Bool(v),
            ValueRef::I8(v) => Value::I8(v),
            ValueRef::U8(v) => Value::U8(v),
            ValueRef::I16(v) => Value::I16(v),
            ValueRef::U16(v) => Value::U16(v),
            ValueRef::I32(v) => Value::I32(v),
            ValueRef::U32(v) => Value::U32(v),
            ValueRef::I64(v) => Value::I64(v),
            ValueRef::U64(v) => Value::U64(v),
            ValueRef::F32(v) => Value::F32(v),
            ValueRef::F64(v) => Value::F64(v),
            _ => return None,
        })
    }

    /// A string's bytes.
    pub fn as_bytes(&self) -> Option<&'d [u8]> {
        match *self {
            ValueRef::String(s) => Some(s),
            _ => None,
        }
    }

    /// A string as text, if it is UTF-8.
    pub fn as_str(&self) -> Option<&'d str> {
        self.as_bytes().and_then(|s| std::str::from_utf8(s).ok())
    }

    /// A nested message.
    pub fn as_message(&self) -> Option<MessageRef<'d>> {
        match *self {
            ValueRef::Message(m) => Some(m),
            _ => None,
        }
    }

    /// An array of strings or messages.
    pub fn as_array(&self) -> Option<ArrayRef<'d>> {
        match *self {
            ValueRef::Array(a) => Some(a),
            _ => None,
        }
    }

    /// An array of primitives.
    pub fn as_prims(&self) -> Option<Prims<'d>> {
        match *self {
            ValueRef::Prims(p) => Some(p),
            _ => None,
        }
    }

    /// An owned tree of the value (strings and arrays still borrowed).
    pub fn to_value(&self) -> Value<'d> {
        match *self {
            ValueRef::String(s) => Value::String(Cow::Borrowed(s)),
            ValueRef::Prims(p) => Value::Prims(p.to_prim_array()),
            ValueRef::Array(a) => Value::Array(a.iter().map(|v| v.to_value()).collect()),
            ValueRef::Message(m) => m.to_value(),
            scalar => scalar.scalar().unwrap_or(Value::Bool(false)),
        }
    }

    /// The value as compact JSON (what [`MessageRef::json`] prints for it inside a message).
    pub fn json(&self, out: &mut dyn Write) -> io::Result<()> {
        let (schema, ty) = self.schema_and_ty();
        render::json(schema, ty, *self, out)
    }

    /// The value as YAML (a message's fields, an array's `- ` items, or a scalar's line).
    pub fn yaml(&self, max_array: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
        let (schema, ty) = self.schema_and_ty();
        render::yaml(schema, ty, *self, max_array, out)
    }

    /// The schema and message type of a message or an array of them.
    fn schema_and_ty(&self) -> (Option<&'d Schema>, Option<usize>) {
        match *self {
            ValueRef::Message(m) => (Some(m.ctx.schema), Some(m.ty as usize)),
            ValueRef::Array(a) => (Some(a.ctx.schema), a.get(0).and_then(|v| v.as_message()).map(|m| m.ty as usize)),
            _ => (None, None),
        }
    }
}

/// What the renderers and the encoder see of a value, whichever form it has.
#[derive(Debug, Clone)]
pub(crate) enum Item<'t> {
    Scalar(Value<'static>),
    Str(&'t [u8]),
    Prims(Prim, &'t [u8]),
    /// An array of strings or messages with this many elements.
    Array(usize),
    /// A message with this many fields.
    Message(usize),
}

impl Item<'_> {
    pub(crate) fn array_len(&self) -> Option<usize> {
        match *self {
            Item::Prims(p, le) => Some(le.len() / p.size()),
            Item::Array(n) => Some(n),
            _ => None,
        }
    }

    /// A short description for errors.
    pub(crate) fn describe(&self) -> String {
        match self {
            Item::Scalar(v) => format!("{v:?}"),
            Item::Str(_) => "a string".into(),
            Item::Prims(p, _) => format!("{}[]", p.name()),
            Item::Array(n) => format!("an array of {n}"),
            Item::Message(n) => format!("a message of {n} fields"),
        }
    }
}

/// A value the renderers and the encoder can walk: a [`Value`] tree or a decoded view.
pub(crate) trait Tree<'t>: Copy {
    fn item(self) -> Item<'t>;
    /// Field or element `i` of a message or array.
    fn child(self, i: usize) -> Option<Self>;
}

impl<'t, 'a> Tree<'t> for &'t Value<'a> {
    fn item(self) -> Item<'t> {
        match self {
            Value::String(s) => Item::Str(s),
            Value::Prims(a) => Item::Prims(a.prim, &a.le),
            Value::Array(items) => Item::Array(items.len()),
            Value::Message(fields) => Item::Message(fields.len()),
            scalar => Item::Scalar(scalar.clone().into_owned()),
        }
    }

    fn child(self, i: usize) -> Option<Self> {
        match self {
            Value::Array(items) | Value::Message(items) => items.get(i),
            _ => None,
        }
    }
}

impl<'d> Tree<'d> for ValueRef<'d> {
    fn item(self) -> Item<'d> {
        match self {
            ValueRef::String(s) => Item::Str(s),
            ValueRef::Prims(p) => Item::Prims(p.prim, p.le),
            ValueRef::Array(a) => Item::Array(a.len()),
            ValueRef::Message(m) => Item::Message(m.len()),
            scalar => Item::Scalar(scalar.scalar().unwrap_or(Value::Bool(false))),
        }
    }

    fn child(self, i: usize) -> Option<Self> {
        match self {
            ValueRef::Array(a) => a.get(i),
            ValueRef::Message(m) => m.get(i),
            _ => None,
        }
    }
}
