//! A definition compiled for the codecs: every nested type resolved once, to an index, so that
//! decoding walks plain vectors instead of looking names up.

use std::collections::HashMap;

use crate::definition::{Array, Dialect};
use crate::registry::Registry;
use crate::{Error, Result};

/// A fixed-size primitive (`char`/`byte` are mapped to the type each dialect gives them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // named after the Rust types
pub enum Prim {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl Prim {
    /// Size on the wire, which is also its CDR alignment.
    #[inline(always)]
    pub fn size(self) -> usize {
        // A table, not a match: the codecs ask for it on every field.
        const SIZES: [u8; 11] = [1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8];
        SIZES[self as usize] as usize
    }

    fn from_name(name: &str, dialect: Dialect) -> Option<Prim> {
        Some(match name {
            "bool" => Prim::Bool,
            // ROS 1: `byte` is a deprecated int8, `char` a uint8. ROS 2: both are one octet.
            "byte" if dialect == Dialect::Ros1 => Prim::I8,
            "byte" | "char" | "uint8" => Prim::U8,
            "int8" => Prim::I8,
            "int16" => Prim::I16,
            "uint16" => Prim::U16,
            "int32" => Prim::I32,
            "uint32" => Prim::U32,
            "int64" => Prim::I64,
            "uint64" => Prim::U64,
            "float32" => Prim::F32,
            "float64" => Prim::F64,
            _ => return None,
        })
    }

    /// The `.msg` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::I8 => "int8",
            Prim::U8 => "uint8",
            Prim::I16 => "int16",
            Prim::U16 => "uint16",
            Prim::I32 => "int32",
            Prim::U32 => "uint32",
            Prim::I64 => "int64",
            Prim::U64 => "uint64",
            Prim::F32 => "float32",
            Prim::F64 => "float64",
        }
    }
}

/// What one element of a field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A fixed-size primitive.
    Prim(Prim),
    /// `string` (`wide` for `wstring`), with its ROS 2 bound.
    String {
        /// `wstring` (UTF-16 in CDR).
        wide: bool,
        /// At most this many characters (ROS 2 `string<=N`).
        bound: Option<usize>,
    },
    /// A nested message: an index into [`Schema::msgs`].
    Msg(usize),
}

/// One field, resolved: what its elements are and how many.
#[derive(Debug, Clone)]
pub struct FieldLayout {
    /// The field's name.
    pub name: String,
    /// What one element is.
    pub kind: Kind,
    /// Single value or which kind of array.
    pub array: Array,
    /// The `.msg` base type as written (for messages: the resolved full name).
    pub type_name: String,
    /// The ROS 2 default value, as written.
    pub default: Option<String>,
}

/// One message type, resolved.
#[derive(Debug, Clone)]
pub struct MsgLayout {
    /// Full name (`pkg/Type`, `pkg/msg/Type`, or `time`/`duration` for ROS 1's built-ins).
    pub name: String,
    /// Fields in definition order (ROS 2 empty types get one filler field).
    pub fields: Vec<FieldLayout>,
}

/// A root type and every type it contains, resolved.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The dialect of its definitions.
    pub dialect: Dialect,
    /// The root type and every type nested in it, each once; fields refer to them by index.
    pub msgs: Vec<MsgLayout>,
    /// Index of the root type in `msgs` (always 0).
    pub root: usize,
    /// The fewest bytes each message type takes on the wire (the same in ROS 1 and CDR, which
    /// both allow `""` in 4 bytes), to bound claimed counts.
    min_sizes: Vec<usize>,
    /// For each type whose fields are all single primitives (`Time`, `Vector3`, `Quaternion`),
    /// their primitives: the decoder reads such a type in one tight loop.
    leaves: Vec<Option<Box<[Prim]>>>,
}

/// Nesting deeper than this is refused (it also bounds the codecs' recursion).
pub const MAX_DEPTH: usize = 64;

/// Field ROS 2 adds to a message without fields, because IDL structs cannot be empty.
pub const EMPTY_STRUCT_FIELD: &str = "structure_needs_at_least_one_member";

impl Schema {
    /// Compiles `root` and its nested types from `reg`.
    pub fn compile(reg: &Registry, root: &str) -> Result<Schema> {
        let mut b = Builder { reg, msgs: Vec::new(), index: HashMap::new() };
        b.add(&crate::registry::normalize(root, reg.dialect()), None, 0)?;
        let mut schema =
            Schema { dialect: reg.dialect(), msgs: b.msgs, root: 0, min_sizes: Vec::new(), leaves: Vec::new() };
        schema.min_sizes = min_sizes(&schema);
        schema.leaves = schema.msgs.iter().map(leaf_prims).collect();
        Ok(schema)
    }

    /// The primitives of type `idx` if all its fields are single primitives (at least one).
    #[inline]
    pub(crate) fn leaf(&self, idx: usize) -> Option<&[Prim]> {
        self.leaves.get(idx)?.as_deref()
    }

    /// The fewest bytes a message of type `idx` can take on the wire.
    pub fn min_size(&self, idx: usize) -> usize {
        self.min_sizes.get(idx).copied().unwrap_or(0)
    }

    /// Compiles `root` from `reg`, adding each type `reg` lacks from `lookup` as the compiler
    /// meets it: only the types the schema needs are copied (from a store, a directory of interface files, or a
    /// translation). A type neither has is an [`Error::UnknownType`] naming who needs it.
    pub fn compile_filling(
        reg: &mut Registry,
        root: &str,
        lookup: &mut dyn FnMut(&str) -> Option<crate::MsgDef>,
    ) -> Result<Schema> {
        // Each round adds one type, and a schema holds at most this many distinct types.
        for _ in 0..MAX_DEPTH * 64 {
            match Schema::compile(reg, root) {
                Err(Error::UnknownType { name, context }) => match lookup(&name) {
                    Some(def) => reg.add_def(&name, def),
                    None => return Err(Error::UnknownType { name, context }),
                },
                other => return other,
            }
        }
        Err(Error::Recursive { name: root.to_string() })
    }

    /// The root type's layout.
    pub fn root(&self) -> &MsgLayout {
        &self.msgs[self.root]
    }

    /// The root type's full name.
    pub fn name(&self) -> &str {
        &self.root().name
    }
}

/// A type's primitives, if all its fields are single primitives and it has some (a type with
/// none takes no bytes, and the decoder counts those against its budget).
fn leaf_prims(m: &MsgLayout) -> Option<Box<[Prim]>> {
    let prims = m.fields.iter().map(|f| match (f.array, f.kind) {
        (Array::Single, Kind::Prim(p)) => Some(p),
        _ => None,
    });
    prims.collect::<Option<Box<[Prim]>>>().filter(|p| !p.is_empty())
}

/// Every type's minimum wire size, each type computed once (memoised: a type used twice per
/// nesting level must not cost twice as much at every level).
fn min_sizes(s: &Schema) -> Vec<usize> {
    fn size(s: &Schema, idx: usize, memo: &mut Vec<Option<usize>>, depth: usize) -> usize {
        if let Some(n) = memo[idx] {
            return n;
        }
        if depth > MAX_DEPTH {
            return 0;
        }
        let mut total = 0usize;
        for f in &s.msgs[idx].fields {
            let one = match f.kind {
                Kind::Prim(p) => p.size(),
                // CDR writers may give "" as length 0 with no terminator: 4 bytes, as in ROS 1.
                Kind::String { .. } => 4,
                Kind::Msg(i) => size(s, i, memo, depth + 1),
            };
            total = total.saturating_add(match f.array {
                Array::Single => one,
                Array::Fixed(n) => one.saturating_mul(n),
                _ => 4,
            });
        }
        memo[idx] = Some(total);
        total
    }
    let mut memo = vec![None; s.msgs.len()];
    (0..s.msgs.len()).map(|i| size(s, i, &mut memo, 0)).collect()
}

struct Builder<'r> {
    reg: &'r Registry,
    msgs: Vec<MsgLayout>,
    index: HashMap<String, usize>,
}

impl Builder<'_> {
    fn add(&mut self, name: &str, needed_by: Option<&str>, depth: usize) -> Result<usize> {
        if let Some(&i) = self.index.get(name) {
            if self.msgs[i].name.is_empty() {
                return Err(Error::Recursive { name: name.to_string() });
            }
            return Ok(i);
        }
        if depth > MAX_DEPTH {
            return Err(Error::Recursive { name: name.to_string() });
        }
        let dialect = self.reg.dialect();
        let i = self.msgs.len();
        self.index.insert(name.to_string(), i);
        // An empty name marks "being built" (a cycle if met again).
        self.msgs.push(MsgLayout { name: String::new(), fields: Vec::new() });
        let fields = if let Some(builtin) = ros1_builtin(name, dialect) {
            builtin
        } else {
            let def = self.reg.require(name, needed_by)?.clone();
            let mut fields = Vec::with_capacity(def.fields.len());
            for f in &def.fields {
                let base = f.ty.base.as_str();
                let (kind, type_name) = if let Some(p) = Prim::from_name(base, dialect) {
                    // genpy and every ROS 1 tool treat `byte[]` as raw octets.
                    let p = if p == Prim::I8 && base == "byte" && f.ty.array != Array::Single { Prim::U8 } else { p };
                    (Kind::Prim(p), base.to_string())
                } else if base == "string" || base == "wstring" {
                    (Kind::String { wide: base == "wstring", bound: f.ty.string_bound }, base.to_string())
                } else {
                    let nested = match (dialect, base) {
                        (Dialect::Ros1, "time" | "duration") => base.to_string(),
                        _ => self.reg.resolve(base, name),
                    };
                    let context = format!("field {} of {name}", f.name);
                    (Kind::Msg(self.add(&nested, Some(&context), depth + 1)?), nested)
                };
                fields.push(FieldLayout {
                    name: f.name.clone(),
                    kind,
                    array: f.ty.array,
                    type_name,
                    default: f.default.clone(),
                });
            }
            if fields.is_empty() && dialect == Dialect::Ros2 {
                fields.push(FieldLayout {
                    name: EMPTY_STRUCT_FIELD.into(),
                    kind: Kind::Prim(Prim::U8),
                    array: Array::Single,
                    type_name: "uint8".into(),
                    default: None,
                });
            }
            fields
        };
        self.msgs[i] = MsgLayout { name: name.to_string(), fields };
        Ok(i)
    }
}

/// ROS 1's `time` and `duration`: two 32-bit fields, named as genpy and rostopic name them.
fn ros1_builtin(name: &str, dialect: Dialect) -> Option<Vec<FieldLayout>> {
    let p = match (dialect, name) {
        (Dialect::Ros1, "time") => Prim::U32,
        (Dialect::Ros1, "duration") => Prim::I32,
        _ => return None,
    };
    let field = |n: &str| FieldLayout {
        name: n.into(),
        kind: Kind::Prim(p),
        array: Array::Single,
        type_name: p.name().into(),
        default: None,
    };
    Some(vec![field("secs"), field("nsecs")])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_types_are_resolved_once() {
        let mut r = Registry::new(Dialect::Ros1);
        r.add("std_msgs/Header", "uint32 seq\ntime stamp\nstring frame_id\n").unwrap();
        r.add("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n").unwrap();
        r.add("a/B", "Header header\ngeometry_msgs/Point[] pts\ngeometry_msgs/Point p\nbyte[] raw\nbyte b\n").unwrap();
        let s = Schema::compile(&r, "a/B").unwrap();
        assert_eq!(
            s.msgs.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
            ["a/B", "std_msgs/Header", "time", "geometry_msgs/Point"]
        );
        assert_eq!(s.root().fields[3].kind, Kind::Prim(Prim::U8));
        assert_eq!(s.root().fields[4].kind, Kind::Prim(Prim::I8));
    }

    #[test]
    fn missing_and_recursive_types_are_errors() {
        let mut r = Registry::new(Dialect::Ros2);
        r.add("a/msg/B", "C c\n").unwrap();
        let e = Schema::compile(&r, "a/B").unwrap_err().to_string();
        assert!(e.contains("a/msg/C") && e.contains("field c of a/msg/B"), "{e}");
        r.add("a/msg/C", "B b\n").unwrap();
        assert!(matches!(Schema::compile(&r, "a/B"), Err(Error::Recursive { .. })));
        r.add("a/msg/E", "").unwrap();
        assert_eq!(Schema::compile(&r, "a/E").unwrap().root().fields[0].name, EMPTY_STRUCT_FIELD);
    }

    #[test]
    fn primitive_sizes_follow_their_names() {
        for p in [
            Prim::Bool,
            Prim::I8,
            Prim::U8,
            Prim::I16,
            Prim::U16,
            Prim::I32,
            Prim::U32,
            Prim::I64,
            Prim::U64,
            Prim::F32,
            Prim::F64,
        ] {
            let bits: usize = p.name().trim_start_matches(|c: char| c.is_alphabetic()).parse().unwrap_or(8);
            assert_eq!(p.size() * 8, bits, "{p:?}");
        }
    }
}
