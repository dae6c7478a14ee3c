//! A type in the other ROS version: names (`pkg/Type` ⇄ `pkg/msg/Type`), definitions (ROS 1
//! `time`/`duration`/`Header` ⇄ `builtin_interfaces`/`std_msgs`), the concatenated definition
//! text bags carry, and a compiled target schema that prefers the standard definitions.

use crate::definition::{Array, Dialect, FieldType, MsgDef};
use crate::registry::{normalize, Registry};
use crate::schema::Schema;
use crate::Result;

/// Field types spelled differently in the two dialects.
fn translate_base(base: &str, to: Dialect) -> String {
    match (to, base) {
        (Dialect::Ros2, "time") => "builtin_interfaces/Time".into(),
        (Dialect::Ros2, "duration") => "builtin_interfaces/Duration".into(),
        (Dialect::Ros2, "Header") => "std_msgs/Header".into(),
        (Dialect::Ros1, "builtin_interfaces/Time" | "builtin_interfaces/msg/Time") => "time".into(),
        (Dialect::Ros1, "builtin_interfaces/Duration" | "builtin_interfaces/msg/Duration") => "duration".into(),
        (Dialect::Ros1, "wstring") => "string".into(),
        (_, b) => b.replace("/msg/", "/"),
    }
}

/// A definition rewritten for the other dialect. ROS 1 has no bounds or defaults, so going there
/// drops them.
pub fn translate(def: &MsgDef, to: Dialect) -> MsgDef {
    let mut out = def.clone();
    // genmsg evaluates a bool constant as Python: ROS 2's `true` must become `True`.
    for c in out.constants.iter_mut().filter(|c| c.ty == "bool") {
        c.value = match (to, c.value.as_str()) {
            (Dialect::Ros1, "true") => "True".into(),
            (Dialect::Ros1, "false") => "False".into(),
            (Dialect::Ros2, "True") => "true".into(),
            (Dialect::Ros2, "False") => "false".into(),
            _ => c.value.clone(),
        };
    }
    for f in &mut out.fields {
        f.ty.base = translate_base(&f.ty.base, to);
        if to == Dialect::Ros1 {
            f.ty.string_bound = None;
            f.default = None;
            if let Array::Bounded(_) = f.ty.array {
                f.ty.array = Array::Unbounded;
            }
        }
    }
    out
}

/// `.msg` text for a definition (comments are not kept).
pub fn msg_text(def: &MsgDef) -> String {
    let mut s = String::new();
    for c in &def.constants {
        s.push_str(&format!("{} {}={}\n", c.ty, c.name, c.value));
    }
    for f in &def.fields {
        s.push_str(&field_type_text(&f.ty));
        s.push(' ');
        s.push_str(&f.name);
        if let Some(d) = &f.default {
            s.push(' ');
            s.push_str(d);
        }
        s.push('\n');
    }
    s
}

fn field_type_text(t: &FieldType) -> String {
    let mut s = t.base.clone();
    if let Some(b) = t.string_bound {
        s.push_str(&format!("<={b}"));
    }
    match t.array {
        Array::Single => {}
        Array::Fixed(n) => s.push_str(&format!("[{n}]")),
        Array::Bounded(n) => s.push_str(&format!("[<={n}]")),
        Array::Unbounded => s.push_str("[]"),
    }
    s
}

/// The concatenated definition a bag stores for `schema`'s root type (ROS 1
/// `message_definition`, rosbag2 `ros2msg`): its text, then each nested type once, after a line
/// of 80 `=` and `MSG: pkg/Type`. `texts` gives a type's original text when known (with
/// comments); otherwise the text is written from the registry.
pub fn concatenated(schema: &Schema, reg: &Registry, texts: &dyn Fn(&str) -> Option<String>) -> String {
    let text_of = |name: &str| texts(name).or_else(|| reg.get(name).map(msg_text)).unwrap_or_default();
    let mut out = text_of(schema.name());
    for m in schema.msgs.iter().skip(1) {
        if matches!(m.name.as_str(), "time" | "duration") {
            continue;
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&"=".repeat(80));
        out.push_str("\nMSG: ");
        out.push_str(&normalize(&m.name, Dialect::Ros1));
        out.push('\n');
        out.push_str(&text_of(&m.name));
    }
    out
}

/// The registry and schema of `source`'s root type in dialect `to`: for each type, the
/// definition in `standard` when it has one (the bundled store, or newer definitions to migrate
/// to), else the source's own definition, translated if the dialect changes.
pub fn target(source: &Schema, source_reg: &Registry, standard: &Registry, to: Dialect) -> Result<(Registry, Schema)> {
    let mut reg = Registry::new(to);
    let root = normalize(source.name(), to);
    let mut lookup = |name: &str| {
        standard.get(name).cloned().or_else(|| {
            let d = source_reg.get(&normalize(name, source.dialect))?;
            Some(if to == source.dialect { d.clone() } else { translate(d, to) })
        })
    };
    let schema = Schema::compile_filling(&mut reg, &root, &mut lookup)?;
    Ok((reg, schema))
}

/// Whether a ROS 2 type has a ROS 1 counterpart: service and action types do not.
pub fn has_ros1_name(name: &str) -> bool {
    !name.contains("/srv/") && !name.contains("/action/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros1_types_become_ros2_ones() {
        let mut r1 = Registry::new(Dialect::Ros1);
        r1.add("std_msgs/Header", "uint32 seq\ntime stamp\nstring frame_id\n").unwrap();
        r1.add("my/Thing", "bool FLAG=True\nHeader header\nduration d\nbyte b\nmy/Other o\n").unwrap();
        r1.add("my/Other", "time[] times\n").unwrap();
        let s1 = Schema::compile(&r1, "my/Thing").unwrap();
        let mut standard = Registry::new(Dialect::Ros2);
        standard.add("std_msgs/Header", "builtin_interfaces/Time stamp\nstring frame_id\n").unwrap();
        standard.add("builtin_interfaces/Time", "int32 sec\nuint32 nanosec\n").unwrap();
        standard.add("builtin_interfaces/Duration", "int32 sec\nuint32 nanosec\n").unwrap();
        let (reg, s2) = target(&s1, &r1, &standard, Dialect::Ros2).unwrap();
        assert_eq!(s2.name(), "my/msg/Thing");
        assert_eq!(
            msg_text(reg.get("my/msg/Thing").unwrap()),
            "bool FLAG=true\nstd_msgs/Header header\nbuiltin_interfaces/Duration d\nbyte b\nmy/Other o\n"
        );
        assert_eq!(reg.get("std_msgs/msg/Header").unwrap().fields.len(), 2);
        let text = concatenated(&s2, &reg, &|_| None);
        assert!(text.contains("\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\n"), "{text}");
        assert!(text.contains("\nMSG: my/Other\nbuiltin_interfaces/Time[] times\n"), "{text}");
        // And back: ROS 2 → ROS 1 gives time/duration and the standard Header with seq.
        let (back_reg, back) = target(&s2, &reg, &r1, Dialect::Ros1).unwrap();
        assert!(msg_text(back_reg.get("my/Thing").unwrap()).starts_with("bool FLAG=True\n"));
        assert_eq!(back.name(), "my/Thing");
        assert!(back.msgs.iter().any(|m| m.name == "duration"));
        assert_eq!(back.msgs.iter().find(|m| m.name == "std_msgs/Header").unwrap().fields[0].name, "seq");
    }
}
