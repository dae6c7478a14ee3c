//! Decoded messages as text: JSON (one line), YAML as `rostopic echo`/`ros2 topic echo` print
//! it, and flat CSV columns; plus field paths (`pose.position.x`, `points[3]`).
//!
//! Every renderer takes either form of a decoded message, with the same text: a [`Value`] tree
//! (the functions here) or a [`MessageRef`] view ([`MessageRef::json`], [`MessageRef::yaml`],
//! [`Csv::cells_of`]).

use std::borrow::Cow;
use std::io::{self, Write};

use crate::definition::Array;
use crate::schema::{Kind, MsgLayout, Prim, Schema};
use crate::value::{scalar, Value};
use crate::view::{Item, MessageRef, Tree, ValueRef};

/// Where a value sits: the message layout it is an instance (or array) of, if any.
type Ty = Option<usize>;

fn field_ty(kind: Kind) -> Ty {
    match kind {
        Kind::Msg(i) => Some(i),
        _ => None,
    }
}

fn layout(schema: Option<&Schema>, ty: Ty) -> Option<&MsgLayout> {
    schema?.msgs.get(ty?)
}

/// The filler field ROS 2 gives empty messages is not shown, as `ros2 topic echo` does not.
fn hidden(name: &str) -> bool {
    name == crate::schema::EMPTY_STRUCT_FIELD
}

/// A field path that is malformed or does not fit the message type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path cannot be parsed.
    #[error("field path {path:?}: {reason}")]
    Syntax {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A name the message type does not have.
    #[error("field path {path:?}: {ty} has no field {name:?} (it has: {})", fields.join(", "))]
    NoField {
        /// The path as given.
        path: String,
        /// The message type that lacks the field.
        ty: String,
        /// The missing name.
        name: String,
        /// The fields the type has.
        fields: Vec<String>,
    },
    /// A name after a value that is not a message.
    #[error("field path {path:?}: {name} is inside a value that has no fields")]
    NotAMessage {
        /// The path as given.
        path: String,
        /// The name that cannot be looked up.
        name: String,
    },
    /// An index after a value that is not an array.
    #[error("field path {path:?}: an index follows a value that is not an array")]
    NotAnArray {
        /// The path as given.
        path: String,
    },
}

impl PathError {
    pub(crate) fn no_field(path: &str, layout: &MsgLayout, name: &str) -> PathError {
        PathError::NoField {
            path: path.into(),
            ty: layout.name.clone(),
            name: name.into(),
            fields: layout.fields.iter().map(|f| f.name.clone()).collect(),
        }
    }
}

/// A message type too wide to print as CSV columns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{ty} flattens to {columns} columns, more than {max}")]
pub struct CsvError {
    /// The message type.
    pub ty: String,
    /// How many columns it would need (saturating).
    pub columns: usize,
    /// The limit, [`MAX_COLUMNS`].
    pub max: usize,
}

/// A value inside a message, found by a dotted path with `[i]` indices.
pub struct Selected<'v, 'a> {
    ty: Ty,
    value: Cow<'v, Value<'a>>,
}

/// Parses `a.b[2].c` (a leading `.` is allowed) into names and indices.
pub(crate) fn path_segments(path: &str) -> Result<Vec<Segment<'_>>, PathError> {
    let syntax = |reason: String| PathError::Syntax { path: path.into(), reason };
    let mut out = Vec::new();
    for part in path.trim_start_matches('.').split('.') {
        let (name, mut rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        if !name.is_empty() {
            out.push(Segment::Field(name));
        }
        while !rest.is_empty() {
            let (idx, after) = rest.split_once(']').ok_or_else(|| syntax("unclosed [".into()))?;
            out.push(Segment::Index(idx.parse().map_err(|_| syntax(format!("bad index {idx:?}")))?));
            rest = after.strip_prefix('[').unwrap_or(after);
        }
    }
    Ok(out)
}

/// One step of a field path.
pub(crate) enum Segment<'p> {
    Field(&'p str),
    Index(usize),
}

/// Checks that `path` names a field of the schema's root type; the error lists what exists.
/// Indices may be negative (`[-1]`, from the end) or slices (`[*]`, `[1:3]`, `[:2]`, `[-2:]`).
pub fn check_path(schema: &Schema, path: &str) -> Result<(), PathError> {
    let mut ty = Some(schema.root);
    for seg in path_steps(path)? {
        if let Step::Field(name) = seg {
            let Some(i) = ty else { return Err(PathError::NotAMessage { path: path.into(), name: name.into() }) };
            let layout = &schema.msgs[i];
            let f =
                layout.fields.iter().find(|f| f.name == name).ok_or_else(|| PathError::no_field(path, layout, name))?;
            ty = field_ty(f.kind);
        }
    }
    Ok(())
}

/// One step of a field path as `rbag echo` takes it: a field, an index (negative counts from
/// the end) or a slice (`[*]` is the whole array; bounds as Python's, clamped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'p> {
    /// A field of a message.
    Field(&'p str),
    /// One element; `-1` is the last.
    Index(i64),
    /// Elements `start..end` (either bound may be missing or negative).
    Slice(Option<i64>, Option<i64>),
}

/// Parses `a.b[2].c[-1].d[1:3][*]` (a leading `.` is allowed).
pub fn path_steps(path: &str) -> Result<Vec<Step<'_>>, PathError> {
    let syntax = |reason: String| PathError::Syntax { path: path.into(), reason };
    let bound = |b: &str| -> Result<Option<i64>, PathError> {
        let b = b.trim();
        if b.is_empty() {
            return Ok(None);
        }
        b.parse().map(Some).map_err(|_| syntax(format!("bad slice bound {b:?}")))
    };
    let mut out = Vec::new();
    for part in path.trim_start_matches('.').split('.') {
        let (name, mut rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        if !name.is_empty() {
            out.push(Step::Field(name));
        } else if rest.is_empty() && !part.is_empty() {
            return Err(syntax("empty field name".into()));
        }
        while !rest.is_empty() {
            let (idx, after) = rest.split_once(']').ok_or_else(|| syntax("unclosed [".into()))?;
            let step = match idx.trim() {
                "*" | ":" => Step::Slice(None, None),
                i => match i.split_once(':') {
                    Some((a, b)) => Step::Slice(bound(a)?, bound(b)?),
                    None => Step::Index(i.parse().map_err(|_| syntax(format!("bad index {idx:?}")))?),
                },
            };
            out.push(step);
            rest = match after.strip_prefix('[') {
                Some(r) => r,
                None if after.is_empty() => after,
                None => return Err(syntax(format!("unexpected {after:?} after ]"))),
            };
        }
    }
    Ok(out)
}

/// An index past the end of an array, met while selecting a path in one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfRange {
    /// The path of the array (`transforms`; empty for the message itself).
    pub array: String,
    /// The index asked for.
    pub index: i64,
    /// The array's length in this message.
    pub len: usize,
}

impl std::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "index [{}] is past the end of {} (length {})", self.index, self.array, self.len)
    }
}

/// What a field path selects in one message.
#[derive(Debug, Clone)]
pub enum Selection<'d> {
    /// One value (the path has no slice).
    One(ValueRef<'d>),
    /// The values a slice selects, in order.
    Many(Vec<ValueRef<'d>>),
    /// An index is past the end of an array of this message.
    OutOfRange(OutOfRange),
}

fn array_len(v: &ValueRef) -> Option<usize> {
    match v {
        ValueRef::Array(a) => Some(a.len()),
        ValueRef::Prims(p) => Some(p.len()),
        _ => None,
    }
}

fn element<'d>(v: &ValueRef<'d>, i: usize) -> Option<ValueRef<'d>> {
    match v {
        ValueRef::Array(a) => a.get(i),
        ValueRef::Prims(p) => p.get(i),
        _ => None,
    }
}

/// The value(s) at `path` in `msg` (see [`path_steps`] for the syntax). A path that does not
/// fit the type is an error; an index past an array's end is [`Selection::OutOfRange`].
pub fn select_ref<'d>(msg: MessageRef<'d>, path: &str) -> Result<Selection<'d>, PathError> {
    let mut cur = vec![ValueRef::Message(msg)];
    let mut many = false;
    let mut walked = String::new();
    for step in path_steps(path)? {
        let mut next = Vec::with_capacity(cur.len());
        for v in &cur {
            match step {
                Step::Field(name) => match v {
                    ValueRef::Message(m) => {
                        next.push(m.field(name).ok_or_else(|| PathError::no_field(path, m.layout(), name))?)
                    }
                    _ => return Err(PathError::NotAMessage { path: path.into(), name: name.into() }),
                },
                Step::Index(i) => {
                    let len = array_len(v).ok_or_else(|| PathError::NotAnArray { path: path.into() })?;
                    let k = if i < 0 { i.checked_add(len as i64) } else { Some(i) };
                    match k.and_then(|k| usize::try_from(k).ok()).and_then(|k| element(v, k)) {
                        Some(e) => next.push(e),
                        None => return Ok(Selection::OutOfRange(OutOfRange { array: walked, index: i, len })),
                    }
                }
                Step::Slice(a, b) => {
                    let len = array_len(v).ok_or_else(|| PathError::NotAnArray { path: path.into() })?;
                    let clamp = |x: i64| -> usize {
                        let x = if x < 0 { x.saturating_add(len as i64) } else { x };
                        x.clamp(0, len as i64) as usize
                    };
                    let (a, b) = (a.map_or(0, clamp), b.map_or(len, clamp));
                    next.extend((a..b.max(a)).filter_map(|k| element(v, k)));
                    many = true;
                }
            }
        }
        match step {
            Step::Field(name) if walked.is_empty() => walked.push_str(name),
            Step::Field(name) => {
                walked.push('.');
                walked.push_str(name)
            }
            Step::Index(i) => walked.push_str(&format!("[{i}]")),
            Step::Slice(a, b) => walked.push_str(&format!(
                "[{}:{}]",
                a.map(|a| a.to_string()).unwrap_or_default(),
                b.map(|b| b.to_string()).unwrap_or_default()
            )),
        }
        cur = next;
    }
    Ok(if many { Selection::Many(cur) } else { Selection::One(cur.pop().unwrap_or(ValueRef::Message(msg))) })
}

/// How [`yaml_value`] and [`json_value`] print values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// YAML: print at most this many elements of each array, then `- '... (N items)'`.
    pub max_array: Option<usize>,
    /// YAML: arrays as `'<array type: T, length: N>'` (rostopic's `--noarr`).
    pub no_arrays: bool,
    /// YAML: strings as `'<string length: N>'` (rostopic's `--nostr`).
    pub no_strings: bool,
    /// JSON: NaN and infinities as `null` instead of the strings `"NaN"`, `"Infinity"`,
    /// `"-Infinity"`.
    pub nan_null: bool,
}

/// The schema and message type of a message, or of an array of them.
fn schema_and_ty<'d>(v: &ValueRef<'d>) -> (Option<&'d Schema>, Ty) {
    match v {
        ValueRef::Message(m) => (Some(m.schema()), Some(m.type_index())),
        ValueRef::Array(a) => match a.get(0) {
            Some(ValueRef::Message(m)) => (Some(m.schema()), Some(m.type_index())),
            _ => (None, None),
        },
        _ => (None, None),
    }
}

/// A value as YAML in `style` (a message's fields, an array's `- ` items, or a scalar's line).
pub fn yaml_value(v: ValueRef, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    let (schema, ty) = schema_and_ty(&v);
    Yaml { schema, max_array: style.max_array, no_arrays: style.no_arrays, no_strings: style.no_strings, out }
        .top(ty, v)
}

/// Values a slice selected as one YAML sequence.
pub fn yaml_values(vs: &[ValueRef], style: &Style, out: &mut dyn Write) -> io::Result<()> {
    if vs.is_empty() {
        return out.write_all(b"[]\n");
    }
    for v in vs {
        let mut buf = Vec::new();
        yaml_value(*v, style, &mut buf)?;
        for (n, line) in String::from_utf8_lossy(&buf).lines().enumerate() {
            writeln!(out, "{}{line}", if n == 0 { "- " } else { "  " })?;
        }
    }
    Ok(())
}

/// A value as compact JSON in `style`.
pub fn json_value(v: ValueRef, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    let (schema, ty) = schema_and_ty(&v);
    json_with(schema, ty, v, !style.nan_null, out)
}

/// Values a slice selected as one JSON array.
pub fn json_values(vs: &[ValueRef], style: &Style, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"[")?;
    for (n, v) in vs.iter().enumerate() {
        if n > 0 {
            out.write_all(b",")?;
        }
        json_value(*v, style, out)?;
    }
    out.write_all(b"]")
}

/// The value at `path` in a message of `schema`'s root type, or `None` if an index is out of range.
pub fn select<'v, 'a>(
    schema: &Schema,
    value: &'v Value<'a>,
    path: &str,
) -> Result<Option<Selected<'v, 'a>>, PathError> {
    let mut cur = Selected { ty: Some(schema.root), value: Cow::Borrowed(value) };
    for seg in path_segments(path)? {
        cur = match (seg, cur.value) {
            (Segment::Field(name), Cow::Borrowed(Value::Message(fields))) => {
                let Some(layout) = cur.ty.and_then(|i| schema.msgs.get(i)) else {
                    return Err(PathError::NotAMessage { path: path.into(), name: name.into() });
                };
                let i = layout.fields.iter().position(|f| f.name == name);
                let i = i.ok_or_else(|| PathError::no_field(path, layout, name))?;
                let Some(v) = fields.get(i) else { return Ok(None) };
                Selected { ty: field_ty(layout.fields[i].kind), value: Cow::Borrowed(v) }
            }
            (Segment::Index(i), Cow::Borrowed(Value::Array(items))) => match items.get(i) {
                Some(v) => Selected { ty: cur.ty, value: Cow::Borrowed(v) },
                None => return Ok(None),
            },
            (Segment::Index(i), Cow::Borrowed(Value::Prims(a))) => match a.get(i) {
                Some(v) => Selected { ty: None, value: Cow::Owned(v) },
                None => return Ok(None),
            },
            (Segment::Field(name), _) => return Err(PathError::NotAMessage { path: path.into(), name: name.into() }),
            (Segment::Index(_), _) => return Err(PathError::NotAnArray { path: path.into() }),
        };
    }
    Ok(Some(cur))
}

impl Selected<'_, '_> {
    /// The selected value as compact JSON.
    pub fn json(&self, schema: &Schema, out: &mut dyn Write) -> io::Result<()> {
        json(Some(schema), self.ty, &*self.value, out)
    }

    /// The selected value as YAML.
    pub fn yaml(&self, schema: &Schema, max_array: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
        yaml(Some(schema), self.ty, &*self.value, max_array, out)
    }
}

/// One message as compact JSON: objects in field order, non-finite floats as `null`.
pub fn json_message(schema: &Schema, v: &Value, out: &mut dyn Write) -> io::Result<()> {
    json(Some(schema), Some(schema.root), v, out)
}

/// A value as compact JSON; `ty` is its message type (for a message or an array of them).
pub(crate) fn json<'t, T: Tree<'t>>(schema: Option<&Schema>, ty: Ty, v: T, out: &mut dyn Write) -> io::Result<()> {
    json_with(schema, ty, v, false, out)
}

/// [`json`], with non-finite floats as the strings `"NaN"`, `"Infinity"`, `"-Infinity"` when
/// `nan_strings`.
fn json_with<'t, T: Tree<'t>>(
    schema: Option<&Schema>,
    ty: Ty,
    v: T,
    nan_strings: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let scalar_text = |x: &Value, out: &mut dyn Write| json_scalar(x, nan_strings, out);
    match v.item() {
        Item::Message(_) => {
            let Some(layout) = layout(schema, ty) else { return out.write_all(b"null") };
            out.write_all(b"{")?;
            for (n, (k, f)) in layout.fields.iter().enumerate().filter(|(_, f)| !hidden(&f.name)).enumerate() {
                let Some(v) = v.child(k) else { break };
                if n > 0 {
                    out.write_all(b",")?;
                }
                json_string(f.name.as_bytes(), out)?;
                out.write_all(b":")?;
                json_with(schema, field_ty(f.kind), v, nan_strings, out)?;
            }
            out.write_all(b"}")
        }
        Item::Array(len) => {
            out.write_all(b"[")?;
            for k in 0..len {
                let Some(item) = v.child(k) else { break };
                if k > 0 {
                    out.write_all(b",")?;
                }
                json_with(schema, ty, item, nan_strings, out)?;
            }
            out.write_all(b"]")
        }
        Item::Prims(p, le) => {
            out.write_all(b"[")?;
            for (n, b) in le.chunks_exact(p.size()).enumerate() {
                if n > 0 {
                    out.write_all(b",")?;
                }
                scalar_text(&scalar(p, b), out)?;
            }
            out.write_all(b"]")
        }
        Item::Str(s) => json_string(s, out),
        Item::Scalar(x) => scalar_text(&x, out),
    }
}

/// A JSON scalar; non-finite floats as strings when `nan_strings`, else `null`.
fn json_scalar(v: &Value, nan_strings: bool, out: &mut dyn Write) -> io::Result<()> {
    match v.as_f64() {
        Some(x) if nan_strings && matches!(v, Value::F32(_) | Value::F64(_)) && !x.is_finite() => {
            out.write_all(match x {
                x if x.is_nan() => &b"\"NaN\""[..],
                x if x > 0.0 => b"\"Infinity\"",
                _ => b"\"-Infinity\"",
            })
        }
        _ => scalar_text(v, out),
    }
}

/// Numbers as JSON and YAML both accept them: floats always with a `.` or exponent.
fn scalar_text(v: &Value, out: &mut dyn Write) -> io::Result<()> {
    match *v {
        Value::Bool(b) => write!(out, "{b}"),
        Value::I8(x) => write!(out, "{x}"),
        Value::U8(x) => write!(out, "{x}"),
        Value::I16(x) => write!(out, "{x}"),
        Value::U16(x) => write!(out, "{x}"),
        Value::I32(x) => write!(out, "{x}"),
        Value::U32(x) => write!(out, "{x}"),
        Value::I64(x) => write!(out, "{x}"),
        Value::U64(x) => write!(out, "{x}"),
        Value::F32(x) if x.is_finite() => write!(out, "{x:?}"),
        Value::F64(x) if x.is_finite() => write!(out, "{x:?}"),
        _ => out.write_all(b"null"),
    }
}

/// `s` as a JSON string literal (lossy for bytes that are not UTF-8).
pub fn json_string(s: &[u8], out: &mut dyn Write) -> io::Result<()> {
    let s = String::from_utf8_lossy(s);
    out.write_all(b"\"")?;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let esc: Option<Cow<str>> = match c {
            '"' => Some("\\\"".into()),
            '\\' => Some("\\\\".into()),
            '\n' => Some("\\n".into()),
            '\r' => Some("\\r".into()),
            '\t' => Some("\\t".into()),
            c if (c as u32) < 0x20 => Some(format!("\\u{:04x}", c as u32).into()),
            _ => None,
        };
        if let Some(e) = esc {
            out.write_all(s[start..i].as_bytes())?;
            out.write_all(e.as_bytes())?;
            start = i + c.len_utf8();
        }
    }
    out.write_all(s[start..].as_bytes())?;
    out.write_all(b"\"")
}

/// One message as YAML, the way `ros2 topic echo` prints it (without the `---`).
pub fn yaml_message(schema: &Schema, v: &Value, max_array: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
    yaml(Some(schema), Some(schema.root), v, max_array, out)
}

/// A value as YAML: a message's fields, an array's items, or a scalar's line.
pub(crate) fn yaml<'t, T: Tree<'t>>(
    schema: Option<&Schema>,
    ty: Ty,
    v: T,
    max_array: Option<usize>,
    out: &mut dyn Write,
) -> io::Result<()> {
    Yaml { schema, max_array, no_arrays: false, no_strings: false, out }.top(ty, v)
}

struct Yaml<'s, 'o> {
    schema: Option<&'s Schema>,
    /// Arrays longer than this print their first elements and `'... (N items)'`.
    max_array: Option<usize>,
    /// Arrays as a placeholder naming their type and length.
    no_arrays: bool,
    /// Strings as a placeholder naming their length.
    no_strings: bool,
    out: &'o mut dyn Write,
}

impl Yaml<'_, '_> {
    /// The placeholder `--noarr`/`--nostr` print instead of an array or a string.
    fn placeholder<'t, T: Tree<'t>>(&self, ty: Ty, v: T) -> Option<String> {
        match v.item() {
            Item::Str(s) if self.no_strings => Some(format!("'<string length: {}>'", s.len())),
            Item::Prims(p, le) if self.no_arrays => {
                Some(format!("'<array type: {}, length: {}>'", p.name(), le.len() / p.size()))
            }
            Item::Array(n) if self.no_arrays => {
                let elem = match (layout(self.schema, ty), v.child(0).map(|e| e.item())) {
                    (Some(l), _) => l.name.clone(),
                    (None, Some(Item::Str(_))) | (None, None) => "string".into(),
                    (None, Some(e)) => e.describe(),
                };
                Some(format!("'<array type: {elem}, length: {n}>'"))
            }
            _ => None,
        }
    }

    fn top<'t, T: Tree<'t>>(&mut self, ty: Ty, v: T) -> io::Result<()> {
        if let Some(p) = self.placeholder(ty, v) {
            return writeln!(self.out, "{p}");
        }
        match v.item() {
            Item::Message(_) => self.fields(ty, v, 0, false),
            item if item.array_len().is_some_and(|n| n > 0) => self.items(ty, v, 0),
            item => {
                self.inline(&item)?;
                self.out.write_all(b"\n")
            }
        }
    }

    /// A message's fields, one per line at `indent`; the first one follows a `- ` when
    /// `after_dash`.
    fn fields<'t, T: Tree<'t>>(&mut self, ty: Ty, v: T, indent: usize, after_dash: bool) -> io::Result<()> {
        let (Some(layout), Item::Message(_)) = (layout(self.schema, ty), v.item()) else { return Ok(()) };
        for (n, (k, f)) in layout.fields.iter().enumerate().filter(|(_, f)| !hidden(&f.name)).enumerate() {
            let Some(v) = v.child(k) else { break };
            if n > 0 || !after_dash {
                write!(self.out, "{:1$}", "", indent)?;
            }
            write!(self.out, "{}:", f.name)?;
            let ty = field_ty(f.kind);
            if let Some(p) = self.placeholder(ty, v) {
                writeln!(self.out, " {p}")?;
                continue;
            }
            match v.item() {
                Item::Message(_) if !has_visible_fields(self.schema, ty) => self.out.write_all(b" {}\n")?,
                Item::Message(_) => {
                    self.out.write_all(b"\n")?;
                    self.fields(ty, v, indent + 2, false)?;
                }
                item if item.array_len().is_some_and(|n| n > 0) => {
                    self.out.write_all(b"\n")?;
                    self.items(ty, v, indent)?;
                }
                item => {
                    self.out.write_all(b" ")?;
                    self.inline(&item)?;
                    self.out.write_all(b"\n")?;
                }
            }
        }
        Ok(())
    }

    /// Array elements as `- item` lines at `indent`.
    fn items<'t, T: Tree<'t>>(&mut self, ty: Ty, v: T, indent: usize) -> io::Result<()> {
        let item = v.item();
        let len = item.array_len().unwrap_or(0);
        let shown = self.max_array.map_or(len, |m| m.min(len));
        for i in 0..shown {
            write!(self.out, "{:1$}- ", "", indent)?;
            match &item {
                Item::Array(_) => {
                    let Some(elem) = v.child(i) else { break };
                    match elem.item() {
                        Item::Message(_) if has_visible_fields(self.schema, ty) => {
                            self.fields(ty, elem, indent + 2, true)?
                        }
                        e => {
                            self.inline(&e)?;
                            self.out.write_all(b"\n")?;
                        }
                    }
                }
                Item::Prims(p, le) => {
                    if let Some(b) = le.get(i * p.size()..(i + 1) * p.size()) {
                        self.inline(&Item::Scalar(scalar(*p, b)))?;
                    }
                    self.out.write_all(b"\n")?;
                }
                _ => {}
            }
        }
        if shown < len {
            writeln!(self.out, "{:1$}- '... ({len} items)'", "", indent)?;
        }
        Ok(())
    }

    /// Scalars, strings and empty arrays.
    fn inline(&mut self, item: &Item) -> io::Result<()> {
        match item {
            Item::Str(s) => yaml_str(&String::from_utf8_lossy(s), self.out),
            Item::Array(_) | Item::Prims(..) => self.out.write_all(b"[]"),
            Item::Message(_) => self.out.write_all(b"{}"),
            Item::Scalar(Value::F32(x)) if !x.is_finite() => self.out.write_all(yaml_special(f64::from(*x))),
            Item::Scalar(Value::F64(x)) if !x.is_finite() => self.out.write_all(yaml_special(*x)),
            Item::Scalar(x) => scalar_text(x, self.out),
        }
    }
}

/// Whether a message type prints any field (ROS 2's filler for empty types does not).
fn has_visible_fields(schema: Option<&Schema>, ty: Ty) -> bool {
    layout(schema, ty).is_some_and(|l| l.fields.iter().any(|f| !hidden(&f.name)))
}

fn yaml_special(x: f64) -> &'static [u8] {
    match x {
        x if x.is_nan() => b".nan",
        x if x > 0.0 => b".inf",
        _ => b"-.inf",
    }
}

/// Single-quoted like `ros2 topic echo`, double-quoted with escapes when it holds control
/// characters.
fn yaml_str(s: &str, out: &mut dyn Write) -> io::Result<()> {
    if s.chars().any(char::is_control) {
        return json_string(s.as_bytes(), out);
    }
    write!(out, "'{}'", s.replace('\'', "''"))
}

/// Fixed arrays up to this long get a column per element; longer ones one JSON column.
const MAX_EXPANDED_ARRAY: usize = 64;
/// A type that flattens to more columns than this is refused (JSON suits it better).
pub const MAX_COLUMNS: usize = 10_000;

fn expands(f: &crate::schema::FieldLayout) -> Option<usize> {
    match f.array {
        Array::Single => Some(1),
        Array::Fixed(n) if n <= MAX_EXPANDED_ARRAY => Some(n),
        _ => None,
    }
}

/// How many columns each type flattens to (memoised, saturating).
fn column_counts(schema: &Schema) -> Vec<usize> {
    fn count(schema: &Schema, i: usize, memo: &mut Vec<Option<usize>>, depth: usize) -> usize {
        if let Some(n) = memo[i] {
            return n;
        }
        let mut total = 0usize;
        for f in schema.msgs[i].fields.iter().filter(|f| !hidden(&f.name)) {
            let each = match (f.kind, expands(f)) {
                (Kind::Msg(j), Some(_)) if depth < crate::schema::MAX_DEPTH => count(schema, j, memo, depth + 1),
                _ => 1,
            };
            total = total.saturating_add(each.saturating_mul(
                if matches!(f.kind, Kind::Msg(_)) || f.array != Array::Single { expands(f).unwrap_or(1) } else { 1 },
            ));
        }
        memo[i] = Some(total);
        total
    }
    let mut memo = vec![None; schema.msgs.len()];
    (0..schema.msgs.len()).map(|i| count(schema, i, &mut memo, 0)).collect()
}

/// A message type flattened to CSV columns, worked out once per type: nested fields joined with
/// `.`, fixed arrays of up to 64 elements expanded (`covariance.0`…); other arrays are one
/// column holding a JSON list.
#[derive(Debug, Clone)]
pub struct Csv {
    /// Columns per message type (types with none are not walked).
    counts: Vec<usize>,
    columns: Vec<String>,
}

/// A CSV field, quoted when it must be.
pub fn csv_quote(text: &str) -> Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", text.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(text)
    }
}

impl Csv {
    /// The columns of `schema`'s root type; an error if there are more than [`MAX_COLUMNS`].
    pub fn new(schema: &Schema) -> Result<Csv, CsvError> {
        let counts = column_counts(schema);
        let columns = columns(schema, &counts)?;
        Ok(Csv { counts, columns })
    }

    /// The column names, in order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// One message's cells, in column order, already CSV-quoted.
    pub fn cells(&self, schema: &Schema, v: &Value) -> Vec<String> {
        let mut out = Vec::with_capacity(self.columns.len());
        cells(schema, &self.counts, schema.root, v, 0, &mut out);
        out
    }

    /// One decoded message's cells (a message of the root type of the schema this `Csv` was
    /// made from), in column order, already CSV-quoted.
    pub fn cells_of(&self, msg: &MessageRef) -> Vec<String> {
        let mut out = Vec::with_capacity(self.columns.len());
        cells(msg.schema(), &self.counts, msg.type_index(), ValueRef::Message(*msg), 0, &mut out);
        out
    }
}

fn columns(schema: &Schema, counts: &[usize]) -> Result<Vec<String>, CsvError> {
    let n = counts[schema.root];
    if n > MAX_COLUMNS {
        return Err(CsvError { ty: schema.name().to_string(), columns: n, max: MAX_COLUMNS });
    }
    // Types with no columns are not walked: a type may nest billions of empty ones.
    fn walk(schema: &Schema, counts: &[usize], i: usize, prefix: &str, depth: usize, out: &mut Vec<String>) {
        for f in schema.msgs[i].fields.iter().filter(|f| !hidden(&f.name)) {
            let name = format!("{prefix}{}", f.name);
            match (f.kind, f.array, expands(f)) {
                (Kind::Msg(j), Array::Single | Array::Fixed(_), Some(_)) if counts[j] == 0 => {}
                (Kind::Msg(j), Array::Single, _) if depth < crate::schema::MAX_DEPTH => {
                    walk(schema, counts, j, &format!("{name}."), depth + 1, out)
                }
                (Kind::Msg(j), Array::Fixed(n), Some(_)) if depth < crate::schema::MAX_DEPTH => {
                    (0..n).for_each(|k| walk(schema, counts, j, &format!("{name}.{k}."), depth + 1, out))
                }
                (_, Array::Fixed(n), Some(_)) => (0..n).for_each(|k| out.push(format!("{name}.{k}"))),
                _ => out.push(name),
            }
        }
    }
    let mut out = Vec::with_capacity(n);
    walk(schema, counts, schema.root, "", 0, &mut out);
    Ok(out)
}

/// One cell: a string as text, a non-finite float as Rust prints it, anything else as JSON.
fn cell<'t, T: Tree<'t>>(schema: &Schema, ty: Ty, v: T) -> String {
    let mut buf = Vec::new();
    match v.item() {
        Item::Str(s) => buf.extend_from_slice(String::from_utf8_lossy(s).as_bytes()),
        Item::Scalar(x @ (Value::F32(_) | Value::F64(_))) if x.as_f64().is_some_and(|x| !x.is_finite()) => {
            buf.extend_from_slice(format!("{}", x.as_f64().unwrap_or(f64::NAN)).as_bytes())
        }
        _ => {
            let _ = json(Some(schema), ty, v, &mut buf);
        }
    }
    csv_quote(&String::from_utf8_lossy(&buf)).into_owned()
}

fn prim_cell(p: Prim, b: &[u8]) -> String {
    let v = scalar(p, b);
    let mut buf = Vec::new();
    match v {
        Value::F32(_) | Value::F64(_) if v.as_f64().is_some_and(|x| !x.is_finite()) => {
            buf.extend_from_slice(format!("{}", v.as_f64().unwrap_or(f64::NAN)).as_bytes())
        }
        _ => {
            let _ = scalar_text(&v, &mut buf);
        }
    }
    csv_quote(&String::from_utf8_lossy(&buf)).into_owned()
}

fn cells<'t, T: Tree<'t>>(schema: &Schema, counts: &[usize], i: usize, v: T, depth: usize, out: &mut Vec<String>) {
    if !matches!(v.item(), Item::Message(_)) {
        return;
    }
    for (k, f) in schema.msgs[i].fields.iter().enumerate().filter(|(_, f)| !hidden(&f.name)) {
        let Some(v) = v.child(k) else { break };
        match (f.kind, f.array, v.item()) {
            (Kind::Msg(j), Array::Single | Array::Fixed(_), _) if counts[j] == 0 && expands(f).is_some() => {}
            (Kind::Msg(j), Array::Single, _) if depth < crate::schema::MAX_DEPTH => {
                cells(schema, counts, j, v, depth + 1, out)
            }
            (Kind::Msg(j), Array::Fixed(_), Item::Array(n))
                if depth < crate::schema::MAX_DEPTH && expands(f).is_some() =>
            {
                (0..n).filter_map(|e| v.child(e)).for_each(|item| cells(schema, counts, j, item, depth + 1, out))
            }
            (_, Array::Fixed(_), Item::Array(n)) if expands(f).is_some() => {
                (0..n).filter_map(|e| v.child(e)).for_each(|item| out.push(cell(schema, field_ty(f.kind), item)))
            }
            (_, Array::Fixed(_), Item::Prims(p, le)) if expands(f).is_some() => {
                le.chunks_exact(p.size()).for_each(|b| out.push(prim_cell(p, b)))
            }
            _ => out.push(cell(schema, field_ty(f.kind), v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::Dialect;
    use crate::registry::Registry;
    use crate::schema::Prim;
    use crate::value::PrimArray;

    fn sample() -> (Schema, Value<'static>) {
        let mut r = Registry::new(Dialect::Ros2);
        r.add("a/msg/P", "float64 x\nfloat32 y\n").unwrap();
        r.add("a/msg/T", "string name\nP[] pts\nuint8[] data\nP origin\nfloat64[2] v\n").unwrap();
        let s = Schema::compile(&r, "a/T").unwrap();
        let p = |x: f64, y: f32| Value::Message(vec![Value::F64(x), Value::F32(y)]);
        let v = Value::Message(vec![
            Value::String(Cow::Borrowed(b"it's")),
            Value::Array(vec![p(1.0, 0.1), p(2.5, f32::NAN)]),
            Value::Prims(PrimArray { prim: Prim::U8, le: Cow::Borrowed(&[1, 2, 3]) }),
            p(0.0, -1.0),
            Value::Prims(PrimArray {
                prim: Prim::F64,
                le: Cow::Owned([1.5f64.to_le_bytes(), 2f64.to_le_bytes()].concat()),
            }),
        ]);
        (s, v)
    }

    #[test]
    fn json_yaml_and_csv() {
        let (s, v) = sample();
        let mut out = Vec::new();
        json_message(&s, &v, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"name":"it's","pts":[{"x":1.0,"y":0.1},{"x":2.5,"y":null}],"data":[1,2,3],"origin":{"x":0.0,"y":-1.0},"v":[1.5,2.0]}"#
        );
        let mut out = Vec::new();
        yaml_message(&s, &v, Some(2), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "name: 'it''s'\npts:\n- x: 1.0\n  y: 0.1\n- x: 2.5\n  y: .nan\ndata:\n- 1\n- 2\n- '... (3 items)'\norigin:\n  x: 0.0\n  y: -1.0\nv:\n- 1.5\n- 2.0\n"
        );
        let csv = Csv::new(&s).unwrap();
        assert_eq!(csv.columns(), ["name", "pts", "data", "origin.x", "origin.y", "v.0", "v.1"]);
        assert_eq!(
            csv.cells(&s, &v),
            [
                "it's",
                "\"[{\"\"x\"\":1.0,\"\"y\"\":0.1},{\"\"x\"\":2.5,\"\"y\"\":null}]\"",
                "\"[1,2,3]\"",
                "0.0",
                "-1.0",
                "1.5",
                "2.0"
            ]
        );
    }

    #[test]
    fn empty_ros2_messages_print_as_braces() {
        let mut r = Registry::new(Dialect::Ros2);
        r.add("a/msg/E", "").unwrap();
        r.add("a/msg/T", "E[] es\nE e\nint8 x\n").unwrap();
        let s = Schema::compile(&r, "a/T").unwrap();
        let e = || Value::Message(vec![Value::U8(0)]);
        let v = Value::Message(vec![Value::Array(vec![e(), e()]), e(), Value::I8(1)]);
        let mut out = Vec::new();
        yaml_message(&s, &v, None, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "es:\n- {}\n- {}\ne: {}\nx: 1\n");
        let mut out = Vec::new();
        json_message(&s, &v, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"es":[{},{}],"e":{},"x":1}"#);
    }

    #[test]
    fn paths() {
        let (s, v) = sample();
        let mut out = Vec::new();
        select(&s, &v, "pts[1].x").unwrap().unwrap().json(&s, &mut out).unwrap();
        select(&s, &v, ".data[2]").unwrap().unwrap().json(&s, &mut out).unwrap();
        assert_eq!(out, b"2.53");
        assert!(select(&s, &v, "pts[9]").unwrap().is_none());
        assert!(check_path(&s, "origin.z").unwrap_err().to_string().contains("has: x, y"));
        assert!(check_path(&s, "pts[0].x").is_ok());
    }

    #[test]
    fn too_wide_types_are_a_typed_error_that_names_no_flag() {
        let mut r = Registry::new(Dialect::Ros2);
        r.add("a/msg/Row", "float64[64] v\n").unwrap();
        r.add("a/msg/Table", "Row[64] rows\n").unwrap();
        r.add("a/msg/Cube", "Table[64] tables\n").unwrap();
        let s = Schema::compile(&r, "a/Cube").unwrap();
        let e = Csv::new(&s).err().unwrap();
        assert_eq!((e.ty.as_str(), e.columns, e.max), ("a/msg/Cube", 64 * 64 * 64, MAX_COLUMNS));
        assert!(!e.to_string().contains("--"), "{e}");
        let e = check_path(&s, "tables[0].rows[1].w").unwrap_err();
        assert!(matches!(&e, PathError::NoField { ty, .. } if ty == "a/msg/Row"), "{e}");
        assert!(!e.to_string().contains("--"), "{e}");
    }
}
