//! `.msg` text → a definition: fields and constants, in ROS 1 or ROS 2 dialect.

use crate::{Error, Result};

/// Which rules a definition follows (ROS 2 adds bounds and defaults; ROS 1 has `time`,
/// `duration` and the implicit `std_msgs/Header`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// ROS 1 (`pkg/Type` names).
    Ros1,
    /// ROS 2 (`pkg/msg/Type` names).
    Ros2,
}

/// How many elements a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Array {
    /// One value.
    Single,
    /// `T[N]`.
    Fixed(usize),
    /// `T[<=N]` (ROS 2).
    Bounded(usize),
    /// `T[]`.
    Unbounded,
}

/// A field's type as written: a primitive (`uint8`, `string<=10`, `time`) or a message type
/// (`Header`, `geometry_msgs/Point`, `pkg/msg/Type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldType {
    /// The base type name, as written (`float64`, `Point`, `geometry_msgs/Point`).
    pub base: String,
    /// `string<=N` / `wstring<=N` bound (ROS 2).
    pub string_bound: Option<usize>,
    /// Single value or which kind of array.
    pub array: Array,
}

/// One field of a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its type as written.
    pub ty: FieldType,
    /// Its name.
    pub name: String,
    /// ROS 2 default value, as written.
    pub default: Option<String>,
}

/// A constant of a definition (`uint8 OK=0`): part of MD5 sums, not of messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    /// Its primitive type as written.
    pub ty: String,
    /// Its name.
    pub name: String,
    /// The value as written (comments removed, except in string constants).
    pub value: String,
}

/// A parsed `.msg`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MsgDef {
    /// Fields in definition order.
    pub fields: Vec<Field>,
    /// Constants in definition order.
    pub constants: Vec<Constant>,
}

/// Primitive type names of either dialect (including the ROS 1 aliases `byte`/`char` and
/// `time`/`duration`).
pub const PRIMITIVES: &[&str] = &[
    "bool", "byte", "char", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32",
    "float64", "string", "wstring", "time", "duration",
];

impl FieldType {
    /// Whether the base is a primitive (no nested message).
    pub fn is_primitive(&self) -> bool {
        PRIMITIVES.contains(&self.base.as_str())
    }
}

/// Parses `.msg` text; `what` names the type or file in errors.
pub fn parse(text: &str, dialect: Dialect, what: &str) -> Result<MsgDef> {
    let mut def = MsgDef::default();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let bad = |reason: String| Error::Parse { what: what.to_string(), line, reason };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (ty_text, rest) = split_word(trimmed).ok_or_else(|| bad("a type without a name".into()))?;
        let ty = field_type(ty_text).map_err(bad)?;
        // Constants: `TYPE NAME=VALUE`; a string constant's value runs to the end of the line.
        let rest = rest.trim_start();
        let name_end = rest.find(|c: char| c.is_whitespace() || c == '=' || c == '#').unwrap_or(rest.len());
        let name = &rest[..name_end];
        if name.is_empty() {
            return Err(bad(format!("type {ty_text} has no field name")));
        }
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad(format!("{name:?} is not a valid field name")));
        }
        let after = rest[name_end..].trim_start();
        if let Some(value) = after.strip_prefix('=') {
            if ty.array != Array::Single || !ty.is_primitive() {
                return Err(bad(format!("constant {name} must have a primitive, non-array type")));
            }
            let value =
                if ty.base == "string" || ty.base == "wstring" { value.trim() } else { strip_comment(value).trim() };
            def.constants.push(Constant { ty: ty.base.clone(), name: name.to_string(), value: value.to_string() });
            continue;
        }
        let after = strip_comment(after).trim();
        let default = match (after.is_empty(), dialect) {
            (true, _) => None,
            (false, Dialect::Ros2) => Some(after.to_string()),
            (false, Dialect::Ros1) => return Err(bad(format!("unexpected {after:?} after field {name}"))),
        };
        def.fields.push(Field { ty, name: name.to_string(), default });
    }
    Ok(def)
}

fn split_word(s: &str) -> Option<(&str, &str)> {
    let end = s.find(char::is_whitespace)?;
    Some((&s[..end], &s[end..]))
}

fn strip_comment(s: &str) -> &str {
    s.find('#').map_or(s, |i| &s[..i])
}

/// `base`, `base[N]`, `base[<=N]`, `base[]`, `string<=N` and combinations.
fn field_type(text: &str) -> std::result::Result<FieldType, String> {
    let (base_text, array) = match text.find('[') {
        Some(i) => {
            let inner = text[i + 1..].strip_suffix(']').ok_or_else(|| format!("unclosed array in {text:?}"))?;
            let array = if inner.is_empty() {
                Array::Unbounded
            } else if let Some(n) = inner.strip_prefix("<=") {
                Array::Bounded(n.parse().map_err(|_| format!("bad array bound in {text:?}"))?)
            } else {
                Array::Fixed(inner.parse().map_err(|_| format!("bad array size in {text:?}"))?)
            };
            (&text[..i], array)
        }
        None => (text, Array::Single),
    };
    let (base, string_bound) = match base_text.split_once("<=") {
        Some((b @ ("string" | "wstring"), n)) => {
            (b, Some(n.parse().map_err(|_| format!("bad string bound in {text:?}"))?))
        }
        Some(_) => return Err(format!("only strings take a <= bound: {text:?}")),
        None => (base_text, None),
    };
    if base.is_empty() || !base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/') {
        return Err(format!("{base:?} is not a type name"));
    }
    Ok(FieldType { base: base.to_string(), string_bound, array })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_constants_arrays_and_bounds() {
        let text = "# comment\nuint8 A=1 # one\nstring S= hello # not a comment\nHeader header\nfloat64[9] covariance\ngeometry_msgs/Point[] points\nuint8[<=4] small\nstring<=10 name \"abc\"\nint32 x 5 # default\n";
        let d = parse(text, Dialect::Ros2, "t").unwrap();
        assert_eq!(d.constants[0], Constant { ty: "uint8".into(), name: "A".into(), value: "1".into() });
        assert_eq!(d.constants[1].value, "hello # not a comment");
        assert_eq!(d.fields[1].ty.array, Array::Fixed(9));
        assert_eq!(d.fields[2].ty.base, "geometry_msgs/Point");
        assert_eq!(d.fields[2].ty.array, Array::Unbounded);
        assert_eq!(d.fields[3].ty.array, Array::Bounded(4));
        assert_eq!(d.fields[4].ty.string_bound, Some(10));
        assert_eq!(d.fields[4].default.as_deref(), Some("\"abc\""));
        assert_eq!(d.fields[5].default.as_deref(), Some("5"));
    }

    #[test]
    fn errors_name_the_type_and_line() {
        let e = parse("uint8 ok\nfloat64[x] bad\n", Dialect::Ros1, "pkg/T").unwrap_err().to_string();
        assert!(e.contains("pkg/T") && e.contains("line 2"), "{e}");
        assert!(parse("int32 x 5\n", Dialect::Ros1, "t").is_err());
    }
}
