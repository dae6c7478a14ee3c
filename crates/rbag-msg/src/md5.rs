//! ROS 1 MD5 sums, computed as genmsg does: constants first (`type NAME=value`), then fields,
//! with primitive types written as declared (`float64[9] covariance`) and each nested message
//! replaced by its own MD5 (array suffix dropped), comments and extra whitespace removed.

use std::collections::BTreeMap;

use md5::{Digest, Md5};

use crate::definition::{Dialect, MsgDef};
use crate::{Error, Result};

/// ROS 1 definitions by full name (`pkg/Type`), for resolving nested types.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    defs: BTreeMap<String, MsgDef>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `pkg/Type` parsed from its `.msg` text.
    pub fn add(&mut self, full_name: &str, text: &str) -> Result<()> {
        let def = crate::definition::parse(text, Dialect::Ros1, full_name)?;
        self.defs.insert(full_name.to_string(), def);
        Ok(())
    }

    /// Adds a type and its dependencies from the concatenated text a bag carries for it.
    pub fn add_concatenated(&mut self, full_name: &str, text: &str) -> Result<()> {
        for (name, part) in crate::concatenated::split(full_name, text)? {
            self.add(&name, part)?;
        }
        Ok(())
    }

    pub fn get(&self, full_name: &str) -> Option<&MsgDef> {
        self.defs.get(full_name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.defs.keys().map(String::as_str)
    }

    /// The MD5 sum of `pkg/Type`, resolving nested types in this registry.
    pub fn md5(&self, full_name: &str) -> Result<String> {
        self.md5_depth(full_name, 0)
    }

    fn md5_depth(&self, full_name: &str, depth: usize) -> Result<String> {
        if depth > 64 {
            return Err(Error::Recursive { name: full_name.to_string() });
        }
        let def = self.defs.get(full_name).ok_or_else(|| Error::UnknownType { name: full_name.to_string(), context: None })?;
        let package = full_name.split('/').next().unwrap_or("");
        let mut lines = Vec::with_capacity(def.constants.len() + def.fields.len());
        for c in &def.constants {
            lines.push(format!("{} {}={}", c.ty, c.name, c.value));
        }
        for f in &def.fields {
            if f.ty.is_primitive() {
                let suffix = match f.ty.array {
                    crate::definition::Array::Single => String::new(),
                    crate::definition::Array::Fixed(n) => format!("[{n}]"),
                    crate::definition::Array::Bounded(n) => format!("[<={n}]"),
                    crate::definition::Array::Unbounded => "[]".into(),
                };
                lines.push(format!("{}{suffix} {}", f.ty.base, f.name));
            } else {
                let dep = resolve(&f.ty.base, package);
                let sum = self.md5_depth(&dep, depth + 1).map_err(|e| match e {
                    Error::UnknownType { name, .. } => Error::UnknownType { name, context: Some(format!("field {} of {full_name}", f.name)) },
                    other => other,
                })?;
                lines.push(format!("{sum} {}", f.name));
            }
        }
        let mut h = Md5::new();
        h.update(lines.join("\n").as_bytes());
        Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// The full name of a nested type written in `package`: `Header` is `std_msgs/Header`, a bare
/// name is in the same package, and ROS 2's `pkg/msg/Type` is `pkg/Type`.
pub fn resolve(base: &str, package: &str) -> String {
    match base.split('/').collect::<Vec<_>>()[..] {
        ["Header"] => "std_msgs/Header".into(),
        [name] => format!("{package}/{name}"),
        [pkg, "msg", name] => format!("{pkg}/{name}"),
        _ => base.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_msgs_string_and_header() {
        let mut r = Registry::new();
        r.add("std_msgs/String", "string data\n").unwrap();
        r.add("std_msgs/Header", "uint32 seq\ntime stamp\nstring frame_id\n").unwrap();
        assert_eq!(r.md5("std_msgs/String").unwrap(), "992ce8a1687cec8c8bd883ec73ca41d1");
        assert_eq!(r.md5("std_msgs/Header").unwrap(), "2176decaecbce78abc3b96ef049fabed");
        r.add("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n").unwrap();
        assert_eq!(r.md5("geometry_msgs/Point").unwrap(), "4a842b65f413084dc2b10fb484ea7f17");
    }

    #[test]
    fn a_missing_nested_type_is_named() {
        let mut r = Registry::new();
        r.add("a/B", "Header header\nC c\n").unwrap();
        let e = r.md5("a/B").unwrap_err().to_string();
        assert!(e.contains("std_msgs/Header") && e.contains("a/B"), "{e}");
    }
}
