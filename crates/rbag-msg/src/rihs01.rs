//! RIHS01 type hashes (REP-2011), computed as `rosidl_generator_type_description` does, so
//! they equal the `type_description_hash` rosbag2 stores beside each topic.
//!
//! The hashed text is the JSON of the type description: `{"type_description": T,
//! "referenced_type_descriptions": [..]}` with every nested type once, sorted by name; each
//! type is `{"type_name": .., "fields": [..]}` and each field `{"name": .., "type": {"type_id":
//! .., "capacity": .., "string_capacity": .., "nested_type_name": ..}}`. Keys keep that order,
//! separators are Python's `", "` and `": "`, non-ASCII is `\u` escaped; default values,
//! constants and comments are not part of it. Type ids follow
//! `type_description_interfaces/msg/FieldType`. A `.msg` `char` is `uint8` there: rosidl
//! turns it into IDL `uint8` before describing it.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::definition::{Array, Dialect, Field, FieldType};
use crate::registry::{normalize, Registry};
use crate::{Error, Result};

/// Nesting deeper than this is taken for a type that contains itself.
const MAX_DEPTH: usize = 64;

/// `FieldType` ids are the element's id plus one of these for collections.
const ARRAY_OFFSET: u8 = 48;
const BOUNDED_SEQUENCE_OFFSET: u8 = 96;
const UNBOUNDED_SEQUENCE_OFFSET: u8 = 144;
const NESTED_TYPE: u8 = 1;

impl Registry {
    /// The `RIHS01_<sha256 hex>` hash of a ROS 2 type (`pkg/msg/Type`, or a service's or
    /// action's type), resolving nested types in this registry.
    pub fn rihs01(&self, name: &str) -> Result<String> {
        let json = self.type_description_json(name)?;
        let digest = Sha256::digest(json.as_bytes());
        Ok(format!("RIHS01_{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>()))
    }

    /// The exact JSON text [`rihs01`](Self::rihs01) hashes (useful to diff against rosidl's).
    pub fn type_description_json(&self, name: &str) -> Result<String> {
        if self.dialect() != Dialect::Ros2 {
            return Err(Error::Parse {
                what: name.to_string(),
                line: 0,
                reason: "RIHS01 hashes are defined for ROS 2 types only".into(),
            });
        }
        let root = normalize(name, Dialect::Ros2);
        let mut described = BTreeMap::new();
        self.describe(&root, &mut Vec::new(), &mut described)?;
        let top = described.remove(&root).unwrap_or_default();
        let referenced: Vec<String> = described.into_values().collect();
        Ok(format!("{{\"type_description\": {top}, \"referenced_type_descriptions\": [{}]}}", referenced.join(", ")))
    }

    /// Adds the JSON of `name` and of every type it references to `out` (by name).
    fn describe(&self, name: &str, stack: &mut Vec<String>, out: &mut BTreeMap<String, String>) -> Result<()> {
        if stack.iter().any(|s| s == name) || stack.len() > MAX_DEPTH {
            return Err(Error::Recursive { name: name.to_string() });
        }
        if out.contains_key(name) {
            return Ok(());
        }
        let def = self.require(name, stack.last().map(String::as_str))?;
        let mut fields = Vec::with_capacity(def.fields.len().max(1));
        let mut nested = Vec::new();
        for f in &def.fields {
            let nested_name = (!f.ty.is_primitive()).then(|| self.resolve(&f.ty.base, name));
            fields.push(field_json(f, nested_name.as_deref()).map_err(|reason| Error::Parse {
                what: name.to_string(),
                line: 0,
                reason: format!("field {}: {reason}", f.name),
            })?);
            nested.extend(nested_name);
        }
        if fields.is_empty() {
            let dummy = Field {
                ty: FieldType { base: "uint8".into(), string_bound: None, array: Array::Single },
                name: crate::schema::EMPTY_STRUCT_FIELD.into(),
                default: None,
            };
            fields.push(field_json(&dummy, None).map_err(|reason| Error::Parse {
                what: name.to_string(),
                line: 0,
                reason,
            })?);
        }
        out.insert(
            name.to_string(),
            format!("{{\"type_name\": {}, \"fields\": [{}]}}", json_string(name), fields.join(", ")),
        );
        stack.push(name.to_string());
        for dep in nested {
            self.describe(&dep, stack, out)?;
        }
        stack.pop();
        Ok(())
    }
}

/// One field's JSON; `nested` is the resolved full name of a message-typed field.
fn field_json(f: &Field, nested: Option<&str>) -> std::result::Result<String, String> {
    let element = match nested {
        Some(_) => NESTED_TYPE,
        None => primitive_id(&f.ty)?,
    };
    let (offset, capacity) = match f.ty.array {
        Array::Single => (0, 0),
        Array::Fixed(n) => (ARRAY_OFFSET, n),
        Array::Bounded(n) => (BOUNDED_SEQUENCE_OFFSET, n),
        Array::Unbounded => (UNBOUNDED_SEQUENCE_OFFSET, 0),
    };
    Ok(format!(
        "{{\"name\": {}, \"type\": {{\"type_id\": {}, \"capacity\": {capacity}, \"string_capacity\": {}, \"nested_type_name\": {}}}}}",
        json_string(&f.name),
        element + offset,
        f.ty.string_bound.unwrap_or(0),
        json_string(nested.unwrap_or("")),
    ))
}

/// The `FieldType` id of a primitive element type, as spelt in `.msg`.
fn primitive_id(ty: &FieldType) -> std::result::Result<u8, String> {
    let bounded = ty.string_bound.is_some();
    Ok(match ty.base.as_str() {
        "int8" => 2,
        "uint8" | "char" => 3,
        "int16" => 4,
        "uint16" => 5,
        "int32" => 6,
        "uint32" => 7,
        "int64" => 8,
        "uint64" => 9,
        "float32" => 10,
        "float64" => 11,
        "bool" => 15,
        "byte" => 16,
        "string" if bounded => 21,
        "string" => 17,
        "wstring" if bounded => 22,
        "wstring" => 18,
        other => return Err(format!("{other} has no ROS 2 type id (ROS 1 only)")),
    })
}

/// A JSON string as Python's `json.dumps` writes it with `ensure_ascii=True`.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ros2() -> Registry {
        Registry::new(Dialect::Ros2)
    }

    // Reference hashes are the ones rosidl generated into `*__description.c` (ROS 2 Kilted,
    // example_interfaces and std_msgs as vendored by hpmicro/hpm_sdk's micro-ROS) and the ones
    // rosbag2 recorded in the corpus.
    #[test]
    fn primitives_strings_and_empty_messages() {
        let mut r = ros2();
        r.add("std_msgs/msg/String", "string data\n").unwrap();
        r.add("builtin_interfaces/msg/Time", "int32 sec\nuint32 nanosec\n").unwrap();
        r.add("example_interfaces/msg/Empty", "# nothing\n").unwrap();
        r.add("example_interfaces/msg/WString", "wstring data\n").unwrap();
        r.add("example_interfaces/msg/Char", "char data\n").unwrap();
        r.add("std_msgs/msg/Char", "char data\n").unwrap();
        let cases = [
            ("std_msgs/msg/String", "df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"),
            ("builtin_interfaces/msg/Time", "b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197"),
            ("example_interfaces/msg/Empty", "73c22a7341eeccf8ef504a991e60d4078223f0931a5d5d212800e7c978903c58"),
            ("example_interfaces/msg/WString", "32033e06d9dfe5468c5d6e1dc8b7a23c8910bad071cfd4e151a951d580e68dd8"),
            ("example_interfaces/msg/Char", "320dcd57e1183fb08463cc3ab50bf7e5ce0ecee39f64d15a9e9eeca3384c91a5"),
            ("std_msgs/msg/Char", "3ad2d04dd29ba19d04b16659afa3ccaedd691914b02a64e82e252f2fa6a586a9"),
        ];
        for (name, hash) in cases {
            assert_eq!(r.rihs01(name).unwrap(), format!("RIHS01_{hash}"), "{name}");
        }
    }

    #[test]
    fn nested_types_arrays_and_bounds_in_the_json() {
        let mut r = ros2();
        r.add("service_msgs/msg/ServiceEventInfo", "uint8 REQUEST_SENT = 0\nuint8 event_type\nbuiltin_interfaces/Time stamp\nchar[16] client_gid\nint64 sequence_number\n").unwrap();
        r.add("builtin_interfaces/msg/Time", "int32 sec\nuint32 nanosec\n").unwrap();
        assert_eq!(
            r.rihs01("service_msgs/msg/ServiceEventInfo").unwrap(),
            "RIHS01_41bcbbe07a75c9b52bc96bfd5c24d7f0fc0a08c0cb7921b3373c5732345a6f45"
        );
        r.add("a/msg/B", "string<=5[<=3] s\nTime[] t\nbuiltin_interfaces/Time[2] u\nint32 x 5\n").unwrap();
        r.add("a/msg/Time", "bool ok\n").unwrap();
        let json = r.type_description_json("a/B").unwrap();
        assert!(json.starts_with("{\"type_description\": {\"type_name\": \"a/msg/B\", \"fields\": [{\"name\": \"s\", \"type\": {\"type_id\": 117, \"capacity\": 3, \"string_capacity\": 5, \"nested_type_name\": \"\"}}, "), "{json}");
        assert!(json.contains("{\"name\": \"t\", \"type\": {\"type_id\": 145, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"a/msg/Time\"}}"), "{json}");
        assert!(json.contains("\"type_id\": 49, \"capacity\": 2"), "{json}");
        // Referenced types once each, sorted by name.
        assert!(json.ends_with("\"referenced_type_descriptions\": [{\"type_name\": \"a/msg/Time\", \"fields\": [{\"name\": \"ok\", \"type\": {\"type_id\": 15, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"\"}}]}, {\"type_name\": \"builtin_interfaces/msg/Time\", \"fields\": [{\"name\": \"sec\", \"type\": {\"type_id\": 6, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"\"}}, {\"name\": \"nanosec\", \"type\": {\"type_id\": 7, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"\"}}]}]}"), "{json}");
    }

    #[test]
    fn missing_recursive_and_ros1_types_are_errors() {
        let mut r = ros2();
        r.add("a/msg/B", "C c\n").unwrap();
        let e = r.rihs01("a/msg/B").unwrap_err().to_string();
        assert!(e.contains("a/msg/C") && e.contains("a/msg/B"), "{e}");
        r.add("a/msg/C", "B b\n").unwrap();
        assert!(matches!(r.rihs01("a/msg/B"), Err(Error::Recursive { .. })));
        r.add("a/msg/D", "time t\n").unwrap();
        let e = r.rihs01("a/msg/D").unwrap_err().to_string();
        assert!(e.contains("a/msg/D") && e.contains("field t"), "{e}");
        assert!(Registry::new(Dialect::Ros1).rihs01("a/B").is_err());
    }

    #[test]
    fn json_strings_escape_like_python() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(json_string("é😀"), "\"\\u00e9\\ud83d\\ude00\"");
    }
}
