//! Rewriting messages of one definition into another: a newer version of a type (migration),
//! or the same type in the other ROS dialect. Fields are matched by name: shared fields are
//! copied, new fields take their default (the ROS 2 default where the definition gives one),
//! removed fields are dropped, and renames come from [`Rules`]. A changed field type is an
//! error naming the field.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::definition::Array;
use crate::schema::{Kind, Prim, Schema, MAX_DEPTH};
use crate::value::{PrimArray, Value};

/// Field renames: for a type (normalised name), which old field each new field comes from.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    renames: HashMap<(String, String), String>,
    /// Allow the reinterpretations a dialect change needs: same-size integers (`byte`, `char`,
    /// `time.secs` → `Time.sec`).
    pub dialect_casts: bool,
}

impl Rules {
    /// `new_field` of `ty` takes the value of the old `old_field`.
    pub fn rename(&mut self, ty: &str, old_field: &str, new_field: &str) {
        self.renames.insert((type_key(ty), new_field.to_string()), old_field.to_string());
    }

    /// The rules a conversion between ROS 1 and ROS 2 needs: `time`/`duration` fields are
    /// `sec`/`nanosec` in `builtin_interfaces`.
    pub fn between_dialects() -> Self {
        let mut r = Rules { dialect_casts: true, ..Rules::default() };
        for ty in ["builtin_interfaces/Time", "builtin_interfaces/Duration"] {
            r.rename(ty, "secs", "sec");
            r.rename(ty, "nsecs", "nanosec");
        }
        for ty in ["time", "duration"] {
            r.rename(ty, "sec", "secs");
            r.rename(ty, "nanosec", "nsecs");
        }
        r
    }

    /// Adds `other`'s renames (its own win over existing ones).
    pub fn merge(&mut self, other: &Rules) {
        self.renames.extend(other.renames.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.dialect_casts |= other.dialect_casts;
    }

    fn source_name<'a>(&'a self, ty: &str, field: &'a str) -> &'a str {
        self.renames.get(&(type_key(ty), field.to_string())).map_or(field, String::as_str)
    }
}

/// A type's name without the dialect's `msg` part, and ROS 1's `time`/`duration` as the
/// `builtin_interfaces` types they become.
fn type_key(name: &str) -> String {
    match name {
        "time" => "builtin_interfaces/Time".into(),
        "duration" => "builtin_interfaces/Duration".into(),
        _ => crate::registry::normalize(name, crate::Dialect::Ros1),
    }
}

/// A field whose type changed in a way that cannot be carried over.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{ty}, field {field}: {reason}")]
pub struct MigrateError {
    /// The target type.
    pub ty: String,
    /// The field (dotted inside nested types; empty for the message itself).
    pub field: String,
    /// What does not carry over.
    pub reason: String,
}

/// How to build one target message from a source message.
#[derive(Debug, Clone)]
pub(crate) struct MsgPlan {
    /// The source message type (index into the source schema).
    pub(crate) from: usize,
    pub(crate) fields: Vec<FieldPlan>,
}

#[derive(Debug, Clone)]
pub(crate) enum FieldPlan {
    /// Take source field `index`, converting each element.
    Copy { index: usize, elem: Elem, array: Array, field: String },
    /// A field the source lacks.
    Default(Value<'static>),
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Elem {
    Same,
    Cast(Prim),
    /// Nested message: index into the target schema's messages (and the plan table).
    Msg(usize),
}

/// A compiled migration from one schema's root type to another's.
#[derive(Debug, Clone)]
pub struct Plan {
    /// By target message index; `None` for target types no source type maps to.
    pub(crate) msgs: Vec<Option<MsgPlan>>,
    root: usize,
    target_name: String,
}

impl Plan {
    /// Matches `to`'s fields (and those of its nested types) with `from`'s, by name and `rules`.
    pub fn new(from: &Schema, to: &Schema, rules: &Rules) -> Result<Plan, MigrateError> {
        let mut b = PlanBuilder { from, to, rules, msgs: vec![None; to.msgs.len()], pairs: HashMap::new() };
        b.pair(from.root, to.root, 0)?;
        Ok(Plan { msgs: b.msgs, root: to.root, target_name: to.name().to_string() })
    }

    /// Rewrites a message of the source type into the target type.
    pub fn apply<'a>(&self, v: Value<'a>) -> Result<Value<'a>, MigrateError> {
        self.msg(self.root, v)
    }

    fn msg<'a>(&self, idx: usize, v: Value<'a>) -> Result<Value<'a>, MigrateError> {
        let (Some(plan), Value::Message(mut src)) = (&self.msgs[idx], v) else {
            return Err(self.err("", "the value is not a message of the source type"));
        };
        let mut out = Vec::with_capacity(plan.fields.len());
        for f in &plan.fields {
            out.push(match f {
                FieldPlan::Default(d) => d.clone(),
                FieldPlan::Copy { index, elem, array, field } => {
                    let v = std::mem::replace(
                        src.get_mut(*index).ok_or_else(|| self.err(field, "missing in the value"))?,
                        Value::Bool(false),
                    );
                    let v = self.convert(*elem, v, field)?;
                    check_len(*array, &v).map_err(|r| self.err(field, &r))?;
                    v
                }
            });
        }
        Ok(Value::Message(out))
    }

    fn convert<'a>(&self, elem: Elem, v: Value<'a>, field: &str) -> Result<Value<'a>, MigrateError> {
        Ok(match (elem, v) {
            (Elem::Same, v) => v,
            (Elem::Msg(i), Value::Array(items)) => {
                Value::Array(items.into_iter().map(|x| self.msg(i, x)).collect::<Result<_, _>>()?)
            }
            (Elem::Msg(i), v) => self.msg(i, v)?,
            // Same-size reinterpretation: the bytes stay, only the element type changes.
            (Elem::Cast(to), Value::Prims(a)) => Value::Prims(PrimArray { prim: to, le: a.le }),
            (Elem::Cast(to), v) => cast(to, &v).ok_or_else(|| self.err(field, "cannot convert the value"))?,
        })
    }

    fn err(&self, field: &str, reason: &str) -> MigrateError {
        MigrateError { ty: self.target_name.clone(), field: field.to_string(), reason: reason.to_string() }
    }
}

fn check_len(to: Array, v: &Value) -> Result<(), String> {
    match v {
        Value::Prims(a) => fits(to, a.len()),
        Value::Array(items) => fits(to, items.len()),
        _ => Ok(()),
    }
}

/// Whether `n` elements fit an array field of the new type (both rewriting paths check this).
pub(crate) fn fits(to: Array, n: usize) -> Result<(), String> {
    match to {
        Array::Fixed(m) if m != n => Err(format!("has {n} elements, the new type holds exactly {m}")),
        Array::Bounded(m) if n > m => Err(format!("has {n} elements, the new type holds at most {m}")),
        _ => Ok(()),
    }
}

/// A same-size integer as another integer type (two's complement).
fn cast(to: Prim, v: &Value) -> Option<Value<'static>> {
    let bits: u64 = match *v {
        Value::I8(x) => x as u8 as u64,
        Value::U8(x) => x as u64,
        Value::I16(x) => x as u16 as u64,
        Value::U16(x) => x as u64,
        Value::I32(x) => x as u32 as u64,
        Value::U32(x) => x as u64,
        Value::I64(x) => x as u64,
        Value::U64(x) => x,
        _ => return None,
    };
    Some(match to {
        Prim::I8 => Value::I8(bits as u8 as i8),
        Prim::U8 => Value::U8(bits as u8),
        Prim::I16 => Value::I16(bits as u16 as i16),
        Prim::U16 => Value::U16(bits as u16),
        Prim::I32 => Value::I32(bits as u32 as i32),
        Prim::U32 => Value::U32(bits as u32),
        Prim::I64 => Value::I64(bits as i64),
        Prim::U64 => Value::U64(bits),
        _ => return None,
    })
}

fn is_int(p: Prim) -> bool {
    !matches!(p, Prim::Bool | Prim::F32 | Prim::F64)
}

struct PlanBuilder<'s> {
    from: &'s Schema,
    to: &'s Schema,
    rules: &'s Rules,
    msgs: Vec<Option<MsgPlan>>,
    pairs: HashMap<usize, usize>,
}

impl PlanBuilder<'_> {
    fn pair(&mut self, from: usize, to: usize, depth: usize) -> Result<(), MigrateError> {
        match self.pairs.get(&to) {
            Some(&f) if f == from => return Ok(()),
            Some(_) => {
                let name = &self.to.msgs[to].name;
                return Err(MigrateError {
                    ty: name.clone(),
                    field: String::new(),
                    reason: "is reached from two different source types".into(),
                });
            }
            None => {}
        }
        if depth > MAX_DEPTH {
            return Err(MigrateError {
                ty: self.to.msgs[to].name.clone(),
                field: String::new(),
                reason: "nesting too deep".into(),
            });
        }
        self.pairs.insert(to, from);
        let (src, dst) = (&self.from.msgs[from], &self.to.msgs[to]);
        let mut fields = Vec::with_capacity(dst.fields.len());
        for f in &dst.fields {
            let err = |reason: String| MigrateError { ty: dst.name.clone(), field: f.name.clone(), reason };
            let source_name = self.rules.source_name(&dst.name, &f.name);
            // ROS 1 allows capitals that ROS 2 lowered (CameraInfo's `D`, `K` → `d`, `k`).
            let found = src.fields.iter().position(|s| s.name == source_name).or_else(|| {
                self.rules
                    .dialect_casts
                    .then(|| src.fields.iter().position(|s| s.name.eq_ignore_ascii_case(source_name)))
                    .flatten()
            });
            let Some(index) = found else {
                fields.push(FieldPlan::Default(
                    default_value(self.to, f.kind, f.array, f.default.as_deref()).map_err(err)?,
                ));
                continue;
            };
            let s = &src.fields[index];
            let arrays_fit = match (s.array, f.array) {
                (Array::Single, Array::Single) => true,
                (Array::Single, _) | (_, Array::Single) => false,
                _ => true,
            };
            if !arrays_fit {
                return Err(err(format!(
                    "changed from {} to {}",
                    describe(self.from, s.kind, s.array),
                    describe(self.to, f.kind, f.array)
                )));
            }
            let elem = match (s.kind, f.kind) {
                (Kind::Prim(a), Kind::Prim(b)) if a == b => Elem::Same,
                (Kind::Prim(a), Kind::Prim(b))
                    if self.rules.dialect_casts && is_int(a) && is_int(b) && a.size() == b.size() =>
                {
                    Elem::Cast(b)
                }
                (Kind::String { .. }, Kind::String { .. }) => Elem::Same,
                (Kind::Msg(i), Kind::Msg(j))
                    if type_key(&self.from.msgs[i].name) == type_key(&self.to.msgs[j].name) =>
                {
                    self.pair(i, j, depth + 1)?;
                    Elem::Msg(j)
                }
                _ => {
                    return Err(err(format!(
                        "changed from {} to {}",
                        describe(self.from, s.kind, s.array),
                        describe(self.to, f.kind, f.array)
                    )))
                }
            };
            fields.push(FieldPlan::Copy { index, elem, array: f.array, field: f.name.clone() });
        }
        self.msgs[to] = Some(MsgPlan { from, fields });
        Ok(())
    }
}

fn describe(schema: &Schema, kind: Kind, array: Array) -> String {
    let base = match kind {
        Kind::Prim(p) => p.name().to_string(),
        Kind::String { wide: false, .. } => "string".into(),
        Kind::String { wide: true, .. } => "wstring".into(),
        Kind::Msg(i) => schema.msgs[i].name.clone(),
    };
    match array {
        Array::Single => base,
        Array::Fixed(n) => format!("{base}[{n}]"),
        Array::Bounded(n) => format!("{base}[<={n}]"),
        Array::Unbounded => format!("{base}[]"),
    }
}

/// The value a new field starts with: its ROS 2 default if the definition gives one, else zero,
/// an empty string, an empty sequence, or a fixed array of such.
pub fn default_value(schema: &Schema, kind: Kind, array: Array, text: Option<&str>) -> Result<Value<'static>, String> {
    if let Some(t) = text {
        return parse_default(kind, array, t).ok_or_else(|| format!("cannot read default value {t:?}"));
    }
    let one = |depth| zero(schema, kind, depth);
    Ok(match array {
        Array::Single => one(0),
        Array::Fixed(n) => match kind {
            Kind::Prim(p) => Value::Prims(PrimArray { prim: p, le: Cow::Owned(vec![0; n * p.size()]) }),
            _ => Value::Array((0..n).map(|_| one(0)).collect()),
        },
        _ => match kind {
            Kind::Prim(p) => Value::Prims(PrimArray { prim: p, le: Cow::Owned(Vec::new()) }),
            _ => Value::Array(Vec::new()),
        },
    })
}

fn zero(schema: &Schema, kind: Kind, depth: usize) -> Value<'static> {
    match kind {
        Kind::Prim(p) => crate::value::scalar(p, &[0; 8][..p.size()]),
        Kind::String { .. } => Value::String(Cow::Borrowed(b"")),
        Kind::Msg(i) if depth < MAX_DEPTH => Value::Message(
            schema.msgs[i]
                .fields
                .iter()
                .map(|f| {
                    default_value(schema, f.kind, f.array, f.default.as_deref())
                        .unwrap_or_else(|_| zero(schema, f.kind, depth + 1))
                })
                .collect(),
        ),
        Kind::Msg(_) => Value::Message(Vec::new()),
    }
}

/// A ROS 2 default value as written in a `.msg` (`5`, `1.5`, `true`, `"text"`, `[1, 2]`).
fn parse_default(kind: Kind, array: Array, text: &str) -> Option<Value<'static>> {
    let text = text.trim();
    if array != Array::Single {
        let inner = text.strip_prefix('[')?.strip_suffix(']')?;
        let items: Vec<&str> = if inner.trim().is_empty() { Vec::new() } else { split_list(inner) };
        return match kind {
            Kind::Prim(p) => {
                let mut le = Vec::with_capacity(items.len() * p.size());
                for item in items {
                    le.extend_from_slice(&prim_bytes(p, item)?[..p.size()]);
                }
                Some(Value::Prims(PrimArray { prim: p, le: Cow::Owned(le) }))
            }
            Kind::String { .. } => Some(Value::Array(
                items.into_iter().map(|s| Value::String(Cow::Owned(unquote(s).into_bytes()))).collect(),
            )),
            Kind::Msg(_) => None,
        };
    }
    match kind {
        Kind::Prim(p) => Some(crate::value::scalar(p, &prim_bytes(p, text)?[..p.size()])),
        Kind::String { .. } => Some(Value::String(Cow::Owned(unquote(text).into_bytes()))),
        Kind::Msg(_) => None,
    }
}

/// Splits `a, "b, c", d` at top-level commas.
fn split_list(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in s.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            (',', None) => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.replace(&format!("\\{q}"), &q.to_string());
        }
    }
    s.to_string()
}

fn prim_bytes(p: Prim, text: &str) -> Option<[u8; 8]> {
    let t = text.trim();
    let mut a = [0u8; 8];
    let b: Vec<u8> = match p {
        Prim::Bool => vec![u8::from(matches!(t.to_ascii_lowercase().as_str(), "true" | "1"))],
        Prim::I8 => t.parse::<i8>().ok()?.to_le_bytes().to_vec(),
        Prim::U8 => t.parse::<u8>().ok()?.to_le_bytes().to_vec(),
        Prim::I16 => t.parse::<i16>().ok()?.to_le_bytes().to_vec(),
        Prim::U16 => t.parse::<u16>().ok()?.to_le_bytes().to_vec(),
        Prim::I32 => t.parse::<i32>().ok()?.to_le_bytes().to_vec(),
        Prim::U32 => t.parse::<u32>().ok()?.to_le_bytes().to_vec(),
        Prim::I64 => t.parse::<i64>().ok()?.to_le_bytes().to_vec(),
        Prim::U64 => t.parse::<u64>().ok()?.to_le_bytes().to_vec(),
        Prim::F32 => t.parse::<f32>().ok()?.to_le_bytes().to_vec(),
        Prim::F64 => t.parse::<f64>().ok()?.to_le_bytes().to_vec(),
    };
    a[..b.len()].copy_from_slice(&b);
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dialect, Registry};

    fn schema(text: &str) -> Schema {
        let mut r = Registry::new(Dialect::Ros2);
        r.add("a/msg/P", "float64 x\nfloat64 y\n").unwrap();
        r.add("a/msg/T", text).unwrap();
        Schema::compile(&r, "a/T").unwrap()
    }

    #[test]
    fn added_removed_renamed_and_changed_fields() {
        let old = schema("int32 keep\nstring gone\nP pos\nint32 old_name\n");
        let new = schema("int32 keep\nP pos\nint32 new_name\nfloat64 added 2.5\nint32[] more\nstring s \"x\"\n");
        let v = Value::Message(vec![
            Value::I32(7),
            Value::String(Cow::Borrowed(b"bye")),
            Value::Message(vec![Value::F64(1.0), Value::F64(2.0)]),
            Value::I32(9),
        ]);
        let mut rules = Rules::default();
        rules.rename("a/msg/T", "old_name", "new_name");
        let out = Plan::new(&old, &new, &rules).unwrap().apply(v.clone()).unwrap();
        let Value::Message(f) = out else { panic!() };
        assert_eq!(f[0], Value::I32(7));
        assert_eq!(f[1], Value::Message(vec![Value::F64(1.0), Value::F64(2.0)]));
        assert_eq!(f[2], Value::I32(9));
        assert_eq!(f[3], Value::F64(2.5));
        assert_eq!(f[4], Value::Prims(PrimArray { prim: Prim::I32, le: Cow::Owned(vec![]) }));
        assert_eq!(f[5], Value::String(Cow::Borrowed(b"x")));
        // Without the rule the renamed field is new (zero), and the old one is dropped.
        let out = Plan::new(&old, &new, &Rules::default()).unwrap().apply(v).unwrap();
        let Value::Message(f) = out else { panic!() };
        assert_eq!(f[2], Value::I32(0));
        let changed = schema("string keep\n");
        let e = Plan::new(&old, &changed, &Rules::default()).unwrap_err();
        assert_eq!((e.ty.as_str(), e.field.as_str()), ("a/msg/T", "keep"));
        assert!(e.to_string().contains("changed from int32 to string"), "{e}");
    }
}
