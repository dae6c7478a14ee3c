//! Decoded messages as text: JSON (one line), YAML as `rostopic echo`/`ros2 topic echo` print
//! it, and flat CSV columns; plus field paths (`pose.position.x`, `points[3]`).

use std::borrow::Cow;
use std::io::{self, Write};

use crate::definition::Array;
use crate::schema::{Kind, Schema};
use crate::value::Value;

/// Where a value sits: the message layout it is an instance (or array) of, if any.
type Ty = Option<usize>;

fn field_ty(kind: Kind) -> Ty {
    match kind {
        Kind::Msg(i) => Some(i),
        _ => None,
    }
}

/// The filler field ROS 2 gives empty messages is not shown, as `ros2 topic echo` does not.
fn hidden(name: &str) -> bool {
    name == crate::schema::EMPTY_STRUCT_FIELD
}

/// A value inside a message, found by a dotted path with `[i]` indices.
pub struct Selected<'v, 'a> {
    ty: Ty,
    value: Cow<'v, Value<'a>>,
}

/// Parses `a.b[2].c` (a leading `.` is allowed) into names and indices.
fn path_segments(path: &str) -> Result<Vec<Segment<'_>>, String> {
    let mut out = Vec::new();
    for part in path.trim_start_matches('.').split('.') {
        let (name, mut rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        if !name.is_empty() {
            out.push(Segment::Field(name));
        }
        while !rest.is_empty() {
            let (idx, after) = rest.split_once(']').ok_or_else(|| format!("unclosed [ in {path:?}"))?;
            out.push(Segment::Index(idx.parse().map_err(|_| format!("bad index {idx:?} in {path:?}"))?));
            rest = after.strip_prefix('[').unwrap_or(after);
        }
    }
    Ok(out)
}

enum Segment<'p> {
    Field(&'p str),
    Index(usize),
}

/// Checks that `path` names a field of the schema's root type; the error lists what exists.
pub fn check_path(schema: &Schema, path: &str) -> Result<(), String> {
    let mut ty = Some(schema.root);
    for seg in path_segments(path)? {
        if let Segment::Field(name) = seg {
            let Some(i) = ty else { return Err(format!("{path:?}: {name} is inside a value that has no fields")) };
            let layout = &schema.msgs[i];
            let f = layout.fields.iter().find(|f| f.name == name).ok_or_else(|| {
                let names: Vec<&str> = layout.fields.iter().map(|f| f.name.as_str()).collect();
                format!("{} has no field {name:?} (it has: {})", layout.name, names.join(", "))
            })?;
            ty = field_ty(f.kind);
        }
    }
    Ok(())
}

/// The value at `path` in a message of `schema`'s root type, or `None` if an index is out of range.
pub fn select<'v, 'a>(schema: &Schema, value: &'v Value<'a>, path: &str) -> Result<Option<Selected<'v, 'a>>, String> {
    let mut cur = Selected { ty: Some(schema.root), value: Cow::Borrowed(value) };
    for seg in path_segments(path)? {
        cur = match (seg, cur.value) {
            (Segment::Field(name), Cow::Borrowed(Value::Message(fields))) => {
                let layout = &schema.msgs[cur.ty.ok_or_else(|| format!("{path:?} goes inside a non-message"))?];
                let i = layout
                    .fields
                    .iter()
                    .position(|f| f.name == name)
                    .ok_or_else(|| format!("{} has no field {name:?}", layout.name))?;
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
            _ => return Err(format!("{path:?} does not fit the message's shape")),
        };
    }
    Ok(Some(cur))
}

impl Selected<'_, '_> {
    pub fn json(&self, schema: &Schema, out: &mut dyn Write) -> io::Result<()> {
        json(schema, self.ty, &self.value, out)
    }

    pub fn yaml(&self, schema: &Schema, max_array: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
        Yaml { schema, max_array, out }.top(self.ty, &self.value)
    }
}

/// One message as compact JSON: objects in field order, non-finite floats as `null`.
pub fn json_message(schema: &Schema, v: &Value, out: &mut dyn Write) -> io::Result<()> {
    json(schema, Some(schema.root), v, out)
}

fn json(schema: &Schema, ty: Ty, v: &Value, out: &mut dyn Write) -> io::Result<()> {
    match v {
        Value::Message(fields) => {
            let Some(layout) = ty.map(|i| &schema.msgs[i]) else { return out.write_all(b"null") };
            out.write_all(b"{")?;
            for (n, (f, v)) in layout.fields.iter().zip(fields).filter(|(f, _)| !hidden(&f.name)).enumerate() {
                if n > 0 {
                    out.write_all(b",")?;
                }
                json_str(f.name.as_bytes(), out)?;
                out.write_all(b":")?;
                json(schema, field_ty(f.kind), v, out)?;
            }
            out.write_all(b"}")
        }
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.write_all(b",")?;
                }
                json(schema, ty, item, out)?;
            }
            out.write_all(b"]")
        }
        Value::Prims(a) => {
            out.write_all(b"[")?;
            for (n, item) in a.iter().enumerate() {
                if n > 0 {
                    out.write_all(b",")?;
                }
                scalar_text(&item, out)?;
            }
            out.write_all(b"]")
        }
        Value::String(s) => json_str(s, out),
        scalar => scalar_text(scalar, out),
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

fn json_str(s: &[u8], out: &mut dyn Write) -> io::Result<()> {
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
    Yaml { schema, max_array, out }.top(Some(schema.root), v)
}

struct Yaml<'s, 'o> {
    schema: &'s Schema,
    /// Arrays longer than this print their first elements and `'...'`.
    max_array: Option<usize>,
    out: &'o mut dyn Write,
}

impl Yaml<'_, '_> {
    fn top(&mut self, ty: Ty, v: &Value) -> io::Result<()> {
        match v {
            Value::Message(_) => self.fields(ty, v, 0, false),
            Value::Array(_) | Value::Prims(_) if !is_empty(v) => self.items(ty, v, 0),
            _ => {
                self.inline(v)?;
                self.out.write_all(b"\n")
            }
        }
    }

    /// A message's fields, one per line at `indent`; the first one follows a `- ` when
    /// `after_dash`.
    fn fields(&mut self, ty: Ty, v: &Value, indent: usize, after_dash: bool) -> io::Result<()> {
        let (Some(i), Value::Message(values)) = (ty, v) else { return Ok(()) };
        let schema = self.schema;
        for (n, (f, v)) in schema.msgs[i].fields.iter().zip(values).filter(|(f, _)| !hidden(&f.name)).enumerate() {
            if n > 0 || !after_dash {
                write!(self.out, "{:1$}", "", indent)?;
            }
            write!(self.out, "{}:", f.name)?;
            let ty = field_ty(f.kind);
            match v {
                Value::Message(_) if !has_visible_fields(schema, ty) => self.out.write_all(b" {}\n")?,
                Value::Message(_) => {
                    self.out.write_all(b"\n")?;
                    self.fields(ty, v, indent + 2, false)?;
                }
                Value::Array(_) | Value::Prims(_) if !is_empty(v) => {
                    self.out.write_all(b"\n")?;
                    self.items(ty, v, indent)?;
                }
                _ => {
                    self.out.write_all(b" ")?;
                    self.inline(v)?;
                    self.out.write_all(b"\n")?;
                }
            }
        }
        Ok(())
    }

    /// Array elements as `- item` lines at `indent`.
    fn items(&mut self, ty: Ty, v: &Value, indent: usize) -> io::Result<()> {
        let len = array_len(v);
        let shown = self.max_array.map_or(len, |m| m.min(len));
        for i in 0..shown {
            write!(self.out, "{:1$}- ", "", indent)?;
            match v {
                Value::Array(items) if matches!(items[i], Value::Message(_)) && has_visible_fields(self.schema, ty) => {
                    self.fields(ty, &items[i], indent + 2, true)?
                }
                Value::Array(items) => {
                    self.inline(&items[i])?;
                    self.out.write_all(b"\n")?;
                }
                Value::Prims(a) => {
                    if let Some(x) = a.get(i) {
                        scalar_text(&x, self.out)?;
                    }
                    self.out.write_all(b"\n")?;
                }
                _ => {}
            }
        }
        if shown < len {
            writeln!(self.out, "{:1$}- '...'", "", indent)?;
        }
        Ok(())
    }

    /// Scalars, strings and empty arrays.
    fn inline(&mut self, v: &Value) -> io::Result<()> {
        match v {
            Value::String(s) => yaml_str(&String::from_utf8_lossy(s), self.out),
            Value::Array(_) | Value::Prims(_) => self.out.write_all(b"[]"),
            Value::Message(_) => self.out.write_all(b"{}"),
            Value::F32(x) if !x.is_finite() => self.out.write_all(yaml_special(f64::from(*x))),
            Value::F64(x) if !x.is_finite() => self.out.write_all(yaml_special(*x)),
            scalar => scalar_text(scalar, self.out),
        }
    }
}

/// Whether a message type prints any field (ROS 2's filler for empty types does not).
fn has_visible_fields(schema: &Schema, ty: Ty) -> bool {
    ty.is_some_and(|i| schema.msgs[i].fields.iter().any(|f| !hidden(&f.name)))
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
        return json_str(s.as_bytes(), out);
    }
    write!(out, "'{}'", s.replace('\'', "''"))
}

fn array_len(v: &Value) -> usize {
    match v {
        Value::Array(items) => items.len(),
        Value::Prims(a) => a.len(),
        _ => 0,
    }
}

fn is_empty(v: &Value) -> bool {
    array_len(v) == 0
}

/// Fixed arrays up to this long get a column per element; longer ones one JSON column.
const MAX_EXPANDED_ARRAY: usize = 64;
/// A type that flattens to more columns than this is refused (`--json` suits it better).
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
    pub fn new(schema: &Schema) -> Result<Csv, String> {
        let counts = column_counts(schema);
        let columns = columns(schema, &counts)?;
        Ok(Csv { counts, columns })
    }

    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// One message's cells, in column order, already CSV-quoted.
    pub fn cells(&self, schema: &Schema, v: &Value) -> Vec<String> {
        let mut out = Vec::with_capacity(self.columns.len());
        cells(schema, &self.counts, schema.root, v, 0, &mut out);
        out
    }
}

fn columns(schema: &Schema, counts: &[usize]) -> Result<Vec<String>, String> {
    let n = counts[schema.root];
    if n > MAX_COLUMNS {
        return Err(format!("{} flattens to {n} columns, more than {MAX_COLUMNS}; use --json", schema.name()));
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

fn cells(schema: &Schema, counts: &[usize], i: usize, v: &Value, depth: usize, out: &mut Vec<String>) {
    fn cell(schema: &Schema, ty: Ty, v: &Value) -> String {
        let mut buf = Vec::new();
        match v {
            Value::String(s) => buf.extend_from_slice(&String::from_utf8_lossy(s).into_owned().into_bytes()),
            Value::F32(_) | Value::F64(_) if v.as_f64().is_some_and(|x| !x.is_finite()) => {
                buf.extend_from_slice(format!("{}", v.as_f64().unwrap_or(f64::NAN)).as_bytes())
            }
            _ => {
                let _ = json(schema, ty, v, &mut buf);
            }
        }
        csv_quote(&String::from_utf8_lossy(&buf)).into_owned()
    }
    let Value::Message(values) = v else { return };
    for (f, v) in schema.msgs[i].fields.iter().zip(values).filter(|(f, _)| !hidden(&f.name)) {
        match (f.kind, f.array, v) {
            (Kind::Msg(j), Array::Single | Array::Fixed(_), _) if counts[j] == 0 && expands(f).is_some() => {}
            (Kind::Msg(j), Array::Single, _) if depth < crate::schema::MAX_DEPTH => {
                cells(schema, counts, j, v, depth + 1, out)
            }
            (Kind::Msg(j), Array::Fixed(_), Value::Array(items))
                if depth < crate::schema::MAX_DEPTH && expands(f).is_some() =>
            {
                items.iter().for_each(|item| cells(schema, counts, j, item, depth + 1, out))
            }
            (_, Array::Fixed(_), Value::Array(items)) if expands(f).is_some() => {
                items.iter().for_each(|item| out.push(cell(schema, field_ty(f.kind), item)))
            }
            (_, Array::Fixed(_), Value::Prims(a)) if expands(f).is_some() => {
                a.iter().for_each(|item| out.push(cell(schema, None, &item)))
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
            "name: 'it''s'\npts:\n- x: 1.0\n  y: 0.1\n- x: 2.5\n  y: .nan\ndata:\n- 1\n- 2\n- '...'\norigin:\n  x: 0.0\n  y: -1.0\nv:\n- 1.5\n- 2.0\n"
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
        assert!(check_path(&s, "origin.z").unwrap_err().contains("has: x, y"));
        assert!(check_path(&s, "pts[0].x").is_ok());
    }
}
