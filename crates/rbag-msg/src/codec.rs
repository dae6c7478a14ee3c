//! The two wire formats, decoded by walking a [`Schema`]: ROS 1 serialization (little-endian,
//! packed, strings and sequences prefixed with a `u32` count) and CDR as ROS 2 uses it (XCDR1,
//! little or big endian after a 4-byte encapsulation header, each primitive aligned to its size
//! counted from the end of that header, strings NUL-terminated).
//!
//! Decoding fills a flat vector of nodes (see [`crate::view`]); [`Decoder`](crate::view::Decoder)
//! keeps that vector between messages, so decoding allocates nothing once it is warm. The
//! [`Value`] tree of [`decode`] is built from the same nodes.

use std::borrow::Cow;

use crate::definition::Array;
use crate::schema::{FieldLayout, Kind, MsgLayout, Prim, Schema, MAX_DEPTH};
use crate::value::Value;
use crate::view::{build_value, Item, Node, Span, Tree};

/// How a message is serialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// ROS 1 serialization: little-endian, packed.
    Ros1,
    /// CDR (XCDR1) as ROS 2 writes it, with its encapsulation header.
    Cdr,
}

/// Bytes that do not fit the type, naming the field path and the byte offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{ty}: {}offset {offset}: {reason}", if path.is_empty() { String::new() } else { format!("field {path}, ") })]
pub struct CodecError {
    /// The message type.
    pub ty: String,
    /// Dotted field path (`pose.position.x`, `points[3].x`).
    pub path: String,
    /// Byte offset in the message (decoding) or in the output (encoding).
    pub offset: usize,
    /// What is wrong there.
    pub reason: String,
}

impl CodecError {
    pub(crate) fn within(mut self: Box<Self>, name: &str) -> Box<Self> {
        self.path = if self.path.is_empty() {
            name.to_string()
        } else if self.path.starts_with('[') {
            format!("{name}{}", self.path)
        } else {
            format!("{name}.{}", self.path)
        };
        self
    }
}

/// Errors are boxed inside the codecs: a small `Result` keeps the per-field hot path fast.
pub(crate) type Res<T> = std::result::Result<T, Box<CodecError>>;

/// Counts above this are refused for elements that take no bytes (which no length check bounds).
const MAX_EMPTY_ELEMENTS: usize = 1 << 20;

/// The CDR encapsulation header for little- or big-endian plain CDR.
pub fn cdr_header(big_endian: bool) -> [u8; 4] {
    [0, if big_endian { 0 } else { 1 }, 0, 0]
}

/// Decodes one message into a [`Value`] tree. Bytes left after it are ignored (see
/// [`decode_counted`]).
///
/// The tree allocates per nested message; to decode many messages, a reused
/// [`Decoder`](crate::view::Decoder) does not allocate at all.
pub fn decode<'a>(schema: &Schema, bytes: &'a [u8], encoding: Encoding) -> Result<Value<'a>, CodecError> {
    decode_counted(schema, bytes, encoding).map(|(v, _)| v)
}

/// Decodes one message into a [`Value`] tree and says how many bytes were left after it: more
/// than CDR's final padding means the definition does not describe the message.
pub fn decode_counted<'a>(
    schema: &Schema,
    bytes: &'a [u8],
    encoding: Encoding,
) -> Result<(Value<'a>, usize), CodecError> {
    let mut r = Reader::new(schema, bytes, encoding, Vec::new(), Vec::new());
    r.root().map_err(|e| *e)?;
    let scratch = &r.scratch;
    let v = build_value(schema, &r.nodes, 0, &|s: Span| {
        if s.scratch {
            Cow::Owned(scratch.get(s.range()).unwrap_or_default().to_vec())
        } else {
            Cow::Borrowed(bytes.get(s.range()).unwrap_or_default())
        }
    });
    Ok((v, r.remaining()))
}

/// Trailing bytes a correct message may have: CDR writers pad the end to a multiple of 4.
pub fn allowed_trailing(encoding: Encoding) -> usize {
    match encoding {
        Encoding::Ros1 => 0,
        Encoding::Cdr => 3,
    }
}

/// Encodes one message, appending to `out`. CDR output is little-endian unless `big_endian`.
pub fn encode(
    schema: &Schema,
    value: &Value,
    encoding: Encoding,
    big_endian: bool,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    let mut w = Writer::new(schema, out, encoding, big_endian);
    w.msg(schema.root, value, 0).map_err(|e| *e)
}

/// The placeholder a message's field slots hold until they are decoded.
const HOLE: Node = Node::Scalar(Prim::U8, 0);

pub(crate) struct Reader<'s, 'a> {
    schema: &'s Schema,
    buf: &'a [u8],
    pub(crate) pos: usize,
    /// Where CDR alignment counts from (after the encapsulation header).
    origin: usize,
    pub(crate) cdr: bool,
    pub(crate) be: bool,
    /// Messages left to decode: ROS 1 messages may take no bytes, so a type that nests many of
    /// them would otherwise expand a few bytes into billions of values.
    budget: usize,
    /// The decoded message: node 0 is the root; a message's fields, and an array's elements,
    /// sit in consecutive slots.
    pub(crate) nodes: Vec<Node>,
    /// Bytes that are not in the input as they are: byte-swapped big-endian arrays and `wstring`s
    /// converted to UTF-8.
    pub(crate) scratch: Vec<u8>,
}

/// Messages a decode may produce besides one per input byte.
const MESSAGE_BUDGET: usize = 1 << 20;

impl<'s, 'a> Reader<'s, 'a> {
    /// A reader at the start of `buf` (before the CDR header), filling `nodes` and `scratch`
    /// (both cleared: a decoder passes its buffers in to keep their capacity).
    pub(crate) fn new(
        schema: &'s Schema,
        buf: &'a [u8],
        encoding: Encoding,
        mut nodes: Vec<Node>,
        mut scratch: Vec<u8>,
    ) -> Self {
        nodes.clear();
        scratch.clear();
        let budget = buf.len().saturating_add(MESSAGE_BUDGET);
        Reader { schema, buf, pos: 0, origin: 0, cdr: encoding == Encoding::Cdr, be: false, budget, nodes, scratch }
    }

    /// Reads the CDR encapsulation header (nothing for ROS 1).
    pub(crate) fn header(&mut self) -> Res<()> {
        if u32::try_from(self.buf.len()).is_err() {
            return Err(self.err(0, format!("message of {} bytes is larger than 4 GiB", self.buf.len())));
        }
        if self.cdr {
            let h = self.take(4)?;
            self.be = match (h[0], h[1]) {
                (0, 0) => true,
                (0, 1) => false,
                (a, b) => {
                    return Err(self.err(0, format!("CDR encapsulation {a:#04x}{b:02x} is not plain CDR (0x0000 or 0x0001), which is all ROS 2 writes")))
                }
            };
            self.origin = 4;
        }
        Ok(())
    }

    /// Decodes the whole message into `nodes`: node 0 is the root message.
    pub(crate) fn root(&mut self) -> Res<()> {
        self.header()?;
        self.nodes.push(HOLE);
        self.msg(self.schema.root, 0, 0)
    }

    pub(crate) fn err(&self, offset: usize, reason: String) -> Box<CodecError> {
        Box::new(CodecError { ty: self.schema.name().to_string(), path: String::new(), offset, reason })
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline(always)]
    pub(crate) fn align(&mut self, n: usize) -> Res<()> {
        if self.cdr && n > 1 {
            // Sizes are powers of two: a mask, not a division, on this hot path.
            let pad = self.origin.wrapping_sub(self.pos) & (n - 1);
            // Trailing padding may be absent at the very end of a message.
            if pad > self.remaining() {
                return Err(self.err(self.pos, format!("message ends inside {pad} bytes of alignment")));
            }
            self.pos += pad;
        }
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn take(&mut self, n: usize) -> Res<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.err(self.pos, format!("needs {n} more bytes, the message has {} left", self.remaining())));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A primitive's little-endian bytes (zero-padded to 8).
    #[inline]
    pub(crate) fn prim_le(&mut self, p: Prim) -> Res<[u8; 8]> {
        match self.prim(p)? {
            Node::Scalar(_, bits) => Ok(bits.to_le_bytes()),
            _ => Ok([0; 8]), // `prim` makes only scalars
        }
    }

    /// One primitive as a node (the common case, kept short and inlined: a node returned
    /// through memory costs a store-forwarding stall per field). Away from the end of the
    /// message it loads 8 bytes and masks, with no per-size copy.
    #[inline(always)]
    fn prim(&mut self, p: Prim) -> Res<Node> {
        let n = p.size();
        self.align(n)?;
        if let Some(b) = self.buf.get(self.pos..self.pos + 8) {
            let raw = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            let shift = 64 - 8 * n as u32;
            let bits = if self.be { raw.swap_bytes() >> shift } else { raw & (u64::MAX >> shift) };
            self.pos += n;
            return Ok(Node::Scalar(p, bits));
        }
        let b = self.take(n)?;
        if self.be && n > 1 {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(b);
            a[..n].reverse();
            return Ok(Node::scalar(p, &a[..n]));
        }
        Ok(Node::scalar(p, b))
    }

    #[inline]
    pub(crate) fn u32(&mut self) -> Res<u32> {
        match self.prim(Prim::U32)? {
            Node::Scalar(_, bits) => Ok(bits as u32),
            _ => Ok(0), // `prim` makes only scalars
        }
    }

    /// A sequence or string count, checked against the bytes left (`min_each` bytes per element).
    pub(crate) fn count(&mut self, min_each: usize) -> Res<usize> {
        let at = self.pos;
        let n = self.u32()? as usize;
        if !self.can_hold(n, min_each) {
            return Err(self.err(at, format!("length {n} is more than the {} bytes left can hold", self.remaining())));
        }
        Ok(n)
    }

    /// Where the string's bytes are: in the input, or (a `wstring` in CDR, made UTF-8) in the
    /// scratch buffer.
    fn string_span(&mut self, wide: bool, bound: Option<usize>) -> Res<Span> {
        let at = self.pos;
        let unit = if wide && self.cdr { 2 } else { 1 };
        let n = self.count(unit)?;
        if let Some(b) = bound {
            // CDR lengths count the NUL terminator.
            let chars = if self.cdr && !wide { n.saturating_sub(1) } else { n };
            if chars > b {
                return Err(self.err(at, format!("string of {chars} characters exceeds its bound {b}")));
            }
        }
        let start = self.pos;
        let bytes = self.take(n * unit)?;
        if !self.cdr {
            return Ok(Span::input(start, n));
        }
        if wide {
            let s0 = self.scratch.len();
            let be = self.be;
            let units = bytes.chunks_exact(2).map(|c| {
                if be {
                    u16::from_be_bytes([c[0], c[1]])
                } else {
                    u16::from_le_bytes([c[0], c[1]])
                }
            });
            let mut utf8 = [0u8; 4];
            for c in char::decode_utf16(units) {
                let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
                self.scratch.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
            return self.scratch_span(s0);
        }
        match bytes.last() {
            Some(0) => Ok(Span::input(start, n - 1)),
            Some(_) => Err(self.err(at, "string is not NUL-terminated".into())),
            None => Ok(Span::input(start, 0)), // some writers put length 0 for ""
        }
    }

    /// The scratch bytes from `s0` to the end, as a span.
    fn scratch_span(&self, s0: usize) -> Res<Span> {
        Span::scratch(s0, self.scratch.len() - s0)
            .ok_or_else(|| self.err(self.pos, "the decoded message's converted data exceeds 4 GiB".into()))
    }

    /// A string's bytes (for the streaming transcoder, which holds no nodes).
    pub(crate) fn string(&mut self, wide: bool, bound: Option<usize>) -> Res<Cow<'a, [u8]>> {
        let s = self.string_span(wide, bound)?;
        if s.scratch {
            let v = self.scratch.get(s.range()).unwrap_or_default().to_vec();
            self.scratch.truncate(s.start as usize);
            return Ok(Cow::Owned(v));
        }
        Ok(Cow::Borrowed(self.buf.get(s.range()).unwrap_or_default()))
    }

    /// Counts one message against the budget.
    pub(crate) fn spend(&mut self) -> Res<()> {
        match self.budget.checked_sub(1) {
            Some(b) => {
                self.budget = b;
                Ok(())
            }
            None => {
                Err(self.err(self.pos, "the type expands into too many nested messages for the bytes given".into()))
            }
        }
    }

    /// Reserves `n` consecutive node slots; returns the first.
    fn reserve(&mut self, n: usize) -> Res<usize> {
        let first = self.nodes.len();
        let end = first.checked_add(n).filter(|&e| u32::try_from(e).is_ok());
        let Some(end) = end else {
            return Err(self.err(self.pos, "the message decodes to more than 4 billion values".into()));
        };
        self.nodes.resize(end, HOLE);
        Ok(first)
    }

    /// Decodes a message of type `idx` into node `slot`, its fields into slots reserved at the end.
    fn msg(&mut self, idx: usize, slot: usize, depth: usize) -> Res<()> {
        let schema = self.schema;
        if let Some(prims) = schema.leaf(idx) {
            // All single primitives: they take bytes, so no budget is needed, and no dispatch.
            let first = self.reserve(prims.len())?;
            self.nodes[slot] = Node::Msg { ty: idx as u32, first: first as u32 };
            for (k, &p) in prims.iter().enumerate() {
                match self.prim(p) {
                    Ok(n) => self.nodes[first + k] = n,
                    Err(e) => return Err(e.within(&schema.msgs[idx].fields[k].name)),
                }
            }
            return Ok(());
        }
        if depth > MAX_DEPTH {
            return Err(self.err(self.pos, "nesting too deep".into()));
        }
        self.spend()?;
        let layout: &MsgLayout = &schema.msgs[idx];
        let first = self.reserve(layout.fields.len())?;
        // Both fit a u32: `reserve` checked the end, and a schema has far fewer types.
        self.nodes[slot] = Node::Msg { ty: idx as u32, first: first as u32 };
        for (k, f) in layout.fields.iter().enumerate() {
            // Single primitives are most fields: read them without the general dispatch.
            let r = match (f.array, f.kind) {
                (Array::Single, Kind::Prim(p)) => self.prim(p).map(|n| self.nodes[first + k] = n),
                _ => self.field(f, first + k, depth),
            };
            r.map_err(|e| e.within(&f.name))?;
        }
        Ok(())
    }

    /// One field of a message, array or not, into node `slot`.
    fn field(&mut self, f: &FieldLayout, slot: usize, depth: usize) -> Res<()> {
        match f.array {
            Array::Single => self.one(f.kind, slot, depth),
            Array::Fixed(n) => {
                self.check_fixed(f.kind, n)?;
                self.many(f.kind, n, slot, depth)
            }
            Array::Bounded(b) => {
                let n = self.bounded_len(f.kind, b)?;
                self.many(f.kind, n, slot, depth)
            }
            Array::Unbounded => {
                let n = self.seq_len(f.kind)?;
                self.many(f.kind, n, slot, depth)
            }
        }
    }

    /// Reads one field and forgets it (the streaming transcoder skips fields it drops).
    pub(crate) fn skip(&mut self, f: &FieldLayout, depth: usize) -> Res<()> {
        let (n0, s0) = (self.nodes.len(), self.scratch.len());
        self.nodes.push(HOLE);
        let r = self.field(f, n0, depth);
        self.nodes.truncate(n0);
        self.scratch.truncate(s0);
        r
    }

    /// A fixed array of strings or messages must fit the bytes left, like a sequence's count
    /// (its elements may take no bytes, so walking a huge one would hang).
    pub(crate) fn check_fixed(&self, kind: Kind, n: usize) -> Res<()> {
        let min_each = self.min_each(kind);
        if matches!(kind, Kind::Prim(_)) || self.can_hold(n, min_each) {
            return Ok(());
        }
        Err(self.err(
            self.pos,
            match min_each {
                0 => format!("fixed array of {n} empty elements is more than the {MAX_EMPTY_ELEMENTS} allowed"),
                _ => format!("fixed array of {n} cannot fit the {} bytes left", self.remaining()),
            },
        ))
    }

    /// The fewest bytes one element of `kind` takes.
    fn min_each(&self, kind: Kind) -> usize {
        match kind {
            Kind::Prim(p) => p.size(),
            Kind::String { .. } => 4,
            Kind::Msg(i) => self.schema.min_size(i),
        }
    }

    /// Whether `n` elements of at least `min_each` bytes fit the bytes left (elements that take
    /// none are capped by count instead).
    fn can_hold(&self, n: usize, min_each: usize) -> bool {
        match min_each {
            0 => n <= MAX_EMPTY_ELEMENTS,
            _ => n.checked_mul(min_each).is_some_and(|b| b <= self.remaining()),
        }
    }

    /// A sequence's count, checked against its bound.
    pub(crate) fn bounded_len(&mut self, kind: Kind, bound: usize) -> Res<usize> {
        let n = self.seq_len(kind)?;
        if n > bound {
            return Err(self.err(self.pos, format!("sequence of {n} exceeds its bound {bound}")));
        }
        Ok(n)
    }

    pub(crate) fn seq_len(&mut self, kind: Kind) -> Res<usize> {
        self.count(self.min_each(kind))
    }

    fn one(&mut self, kind: Kind, slot: usize, depth: usize) -> Res<()> {
        match kind {
            Kind::Prim(p) => self.nodes[slot] = self.prim(p)?,
            Kind::String { wide, bound } => self.nodes[slot] = Node::Str(self.string_span(wide, bound)?),
            Kind::Msg(i) => self.msg(i, slot, depth + 1)?,
        }
        Ok(())
    }

    fn many(&mut self, kind: Kind, n: usize, slot: usize, depth: usize) -> Res<()> {
        match kind {
            Kind::Prim(p) => {
                if n > 0 {
                    self.align(p.size())?;
                }
                let len =
                    n.checked_mul(p.size()).ok_or_else(|| self.err(self.pos, format!("array of {n} is too long")))?;
                let start = self.pos;
                let raw = self.take(len)?;
                let span = if self.be && p.size() > 1 {
                    let s0 = self.scratch.len();
                    self.scratch.extend_from_slice(raw);
                    self.scratch[s0..].chunks_exact_mut(p.size()).for_each(<[u8]>::reverse);
                    self.scratch_span(s0)?
                } else {
                    Span::input(start, len)
                };
                self.nodes[slot] = Node::Prims(p, span);
            }
            _ => {
                let first = self.reserve(n)?;
                self.nodes[slot] = Node::Array { first: first as u32, len: n as u32 };
                for i in 0..n {
                    self.one(kind, first + i, depth).map_err(|e| e.within(&format!("[{i}]")))?;
                }
            }
        }
        Ok(())
    }
}

pub(crate) struct Writer<'s, 'o> {
    schema: &'s Schema,
    pub(crate) out: &'o mut Vec<u8>,
    origin: usize,
    cdr: bool,
    be: bool,
}

impl<'s, 'o> Writer<'s, 'o> {
    /// Starts a message at the end of `out` (writing the CDR header).
    pub(crate) fn new(schema: &'s Schema, out: &'o mut Vec<u8>, encoding: Encoding, big_endian: bool) -> Self {
        let cdr = encoding == Encoding::Cdr;
        let origin = out.len() + 4;
        if cdr {
            out.extend_from_slice(&cdr_header(big_endian));
        }
        Writer { schema, out, origin, cdr, be: big_endian && cdr }
    }

    pub(crate) fn err(&self, reason: String) -> Box<CodecError> {
        Box::new(CodecError { ty: self.schema.name().to_string(), path: String::new(), offset: self.out.len(), reason })
    }

    pub(crate) fn align(&mut self, n: usize) {
        if self.cdr && n > 1 {
            let pad = self.origin.wrapping_sub(self.out.len()) & (n - 1);
            self.out.resize(self.out.len() + pad, 0);
        }
    }

    pub(crate) fn le_bytes(&mut self, p: Prim, le: &[u8]) {
        self.align(p.size());
        if self.be && p.size() > 1 {
            let start = self.out.len();
            self.out.extend_from_slice(le);
            self.out[start..].chunks_exact_mut(p.size()).for_each(<[u8]>::reverse);
        } else {
            self.out.extend_from_slice(le);
        }
    }

    pub(crate) fn u32(&mut self, v: usize) -> Res<()> {
        let v = u32::try_from(v).map_err(|_| self.err(format!("length {v} does not fit a u32")))?;
        self.le_bytes(Prim::U32, &v.to_le_bytes());
        Ok(())
    }

    /// A message of type `idx`, from a [`Value`] tree or a decoded view.
    pub(crate) fn msg<'t, T: Tree<'t>>(&mut self, idx: usize, v: T, depth: usize) -> Res<()> {
        let schema = self.schema;
        let layout = &schema.msgs[idx];
        let Item::Message(n) = v.item() else {
            return Err(self.err(format!("expected a {} message, got {}", layout.name, v.item().describe())));
        };
        if n != layout.fields.len() || depth > MAX_DEPTH {
            return Err(self.err(format!("{} has {} fields, the value {n}", layout.name, layout.fields.len())));
        }
        for (i, f) in layout.fields.iter().enumerate() {
            let field = v.child(i).ok_or_else(|| self.err(format!("field {i} is missing")))?;
            self.field(f, field, depth).map_err(|e| e.within(&f.name))?;
        }
        Ok(())
    }

    /// One field of a message, array or not.
    pub(crate) fn field<'t, T: Tree<'t>>(&mut self, f: &FieldLayout, v: T, depth: usize) -> Res<()> {
        match f.array {
            Array::Single => self.one(f.kind, v, depth),
            Array::Fixed(n) => self.many(f.kind, v, Some(n), depth),
            Array::Bounded(b) => match v.item().array_len() {
                Some(n) if n > b => Err(self.err(format!("sequence of {n} exceeds its bound {b}"))),
                _ => self.many(f.kind, v, None, depth),
            },
            Array::Unbounded => self.many(f.kind, v, None, depth),
        }
    }

    pub(crate) fn one<'t, T: Tree<'t>>(&mut self, kind: Kind, v: T, depth: usize) -> Res<()> {
        match (kind, v.item()) {
            (Kind::Prim(p), item) => {
                let le = match &item {
                    Item::Scalar(x) => prim_le(p, x),
                    _ => None,
                };
                let le = le.ok_or_else(|| self.err(format!("expected {}, got {}", p.name(), item.describe())))?;
                self.le_bytes(p, &le[..p.size()]);
                Ok(())
            }
            (Kind::String { wide, .. }, Item::Str(s)) => self.string(s, wide),
            (Kind::Msg(i), _) => self.msg(i, v, depth + 1),
            (_, item) => Err(self.err(format!("expected a string, got {}", item.describe()))),
        }
    }

    pub(crate) fn string(&mut self, s: &[u8], wide: bool) -> Res<()> {
        if !self.cdr {
            self.u32(s.len())?;
            self.out.extend_from_slice(s);
        } else if wide {
            let units: Vec<u16> = String::from_utf8_lossy(s).encode_utf16().collect();
            self.u32(units.len())?;
            for u in units {
                self.le_bytes(Prim::U16, &u.to_le_bytes());
            }
        } else {
            self.u32(s.len() + 1)?;
            self.out.extend_from_slice(s);
            self.out.push(0);
        }
        Ok(())
    }

    pub(crate) fn many<'t, T: Tree<'t>>(&mut self, kind: Kind, v: T, fixed: Option<usize>, depth: usize) -> Res<()> {
        let item = v.item();
        let n = item.array_len().ok_or_else(|| self.err(format!("expected an array, got {}", item.describe())))?;
        match fixed {
            Some(want) if want != n => return Err(self.err(format!("fixed array of {want} given {n} elements"))),
            Some(_) => {}
            None => self.u32(n)?,
        }
        match (kind, item) {
            (Kind::Prim(p), Item::Prims(q, le)) if q == p => {
                if n > 0 {
                    self.le_bytes(p, le);
                }
                Ok(())
            }
            (Kind::Prim(p), Item::Prims(q, _)) => Err(self.err(format!("expected {}[], got {}[]", p.name(), q.name()))),
            (_, Item::Array(_)) => {
                for i in 0..n {
                    let elem = v.child(i).ok_or_else(|| self.err(format!("element {i} is missing")))?;
                    self.one(kind, elem, depth).map_err(|e| e.within(&format!("[{i}]")))?;
                }
                Ok(())
            }
            (_, item) => Err(self.err(format!("expected an array, got {}", item.describe()))),
        }
    }
}

/// A scalar's little-endian bytes, if `v` is a `p`.
fn prim_le(p: Prim, v: &Value) -> Option<[u8; 8]> {
    let mut a = [0u8; 8];
    let b: &[u8] = match (p, v) {
        (Prim::Bool, Value::Bool(x)) => &[u8::from(*x)],
        (Prim::I8, Value::I8(x)) => &x.to_le_bytes(),
        (Prim::U8, Value::U8(x)) => &[*x],
        (Prim::I16, Value::I16(x)) => &x.to_le_bytes(),
        (Prim::U16, Value::U16(x)) => &x.to_le_bytes(),
        (Prim::I32, Value::I32(x)) => &x.to_le_bytes(),
        (Prim::U32, Value::U32(x)) => &x.to_le_bytes(),
        (Prim::I64, Value::I64(x)) => &x.to_le_bytes(),
        (Prim::U64, Value::U64(x)) => &x.to_le_bytes(),
        (Prim::F32, Value::F32(x)) => &x.to_le_bytes(),
        (Prim::F64, Value::F64(x)) => &x.to_le_bytes(),
        _ => return None,
    };
    a[..b.len()].copy_from_slice(b);
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::Dialect;
    use crate::registry::Registry;
    use crate::value::PrimArray;

    fn schema(dialect: Dialect, defs: &[(&str, &str)], root: &str) -> Schema {
        let mut r = Registry::new(dialect);
        for (n, t) in defs {
            r.add(n, t).unwrap();
        }
        Schema::compile(&r, root).unwrap()
    }

    #[test]
    fn cdr_alignment_counts_from_after_the_header() {
        let s = schema(Dialect::Ros2, &[("a/msg/T", "uint8 a\nfloat64 b\nstring c\nint16[] d\n")], "a/T");
        for be in [false, true] {
            let v = Value::Message(vec![
                Value::U8(7),
                Value::F64(1.5),
                Value::String(Cow::Borrowed(b"hi")),
                Value::Prims(PrimArray { prim: Prim::I16, le: Cow::Owned(vec![1, 0, 2, 0]) }),
            ]);
            let mut out = Vec::new();
            encode(&s, &v, Encoding::Cdr, be, &mut out).unwrap();
            // header 4, u8 1, pad 7, f64 8, len 4, "hi\0" 3, pad 1, len 4, 2×i16
            assert_eq!(out.len(), 4 + 1 + 7 + 8 + 4 + 3 + 1 + 4 + 4);
            assert_eq!(decode(&s, &out, Encoding::Cdr).unwrap(), v);
        }
    }

    #[test]
    fn lying_lengths_and_short_messages_name_the_field() {
        let s = schema(Dialect::Ros1, &[("a/T", "uint32 x\nstring name\nfloat64[] v\n")], "a/T");
        let mut b = vec![1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f];
        let e = decode(&s, &b, Encoding::Ros1).unwrap_err();
        assert_eq!((e.path.as_str(), e.offset), ("name", 4));
        b.truncate(3);
        let e = decode(&s, &b, Encoding::Ros1).unwrap_err().to_string();
        assert!(e.contains("a/T") && e.contains("field x") && e.contains("offset 0"), "{e}");
    }
}
