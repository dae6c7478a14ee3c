//! Definitions by full type name, in one dialect, resolving the nested type names fields use.

use std::collections::BTreeMap;

use crate::definition::{Dialect, MsgDef};
use crate::{Error, Result};

/// Message definitions of one dialect, keyed by normalised name (`pkg/Type` in ROS 1,
/// `pkg/msg/Type` in ROS 2; services' and actions' derived types keep `srv`/`action`).
#[derive(Debug, Clone)]
pub struct Registry {
    dialect: Dialect,
    defs: BTreeMap<String, MsgDef>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new(Dialect::Ros1)
    }
}

impl Registry {
    /// An empty registry of `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        Self { dialect, defs: BTreeMap::new() }
    }

    /// The dialect its definitions follow.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Adds a type parsed from its `.msg` text (replacing an earlier one of that name).
    pub fn add(&mut self, name: &str, text: &str) -> Result<()> {
        let name = normalize(name, self.dialect);
        let def = crate::definition::parse(text, self.dialect, &name)?;
        self.defs.insert(name, def);
        Ok(())
    }

    /// Adds an already parsed definition.
    pub fn add_def(&mut self, name: &str, def: MsgDef) {
        self.defs.insert(normalize(name, self.dialect), def);
    }

    /// Adds a type and its dependencies from the concatenated text a bag carries for it
    /// (ROS 1 `message_definition`, rosbag2 `ros2msg`).
    pub fn add_concatenated(&mut self, root: &str, text: &str) -> Result<()> {
        for (name, part) in crate::concatenated::split(root, text)? {
            self.add(&name, part)?;
        }
        Ok(())
    }

    /// Adds every type of `other` this registry lacks (bag definitions win over a store).
    pub fn fill_from(&mut self, other: &Registry) {
        for (k, v) in &other.defs {
            self.defs.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }

    /// The definition of `name` (any spelling: `pkg/Type` or `pkg/msg/Type`).
    pub fn get(&self, name: &str) -> Option<&MsgDef> {
        self.defs.get(&normalize(name, self.dialect))
    }

    /// Whether it has `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every type's normalised name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.defs.keys().map(String::as_str)
    }

    /// How many types it has.
    pub fn len(&self) -> usize {
        self.defs.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// Like [`get`](Self::get), with an error naming the type and, if given, who needs it.
    pub fn require(&self, name: &str, needed_by: Option<&str>) -> Result<&MsgDef> {
        self.get(name).ok_or_else(|| Error::UnknownType {
            name: normalize(name, self.dialect),
            context: needed_by.map(str::to_string),
        })
    }

    /// The full name of a nested field type written inside `owner` (see [`resolve`]).
    pub fn resolve(&self, base: &str, owner: &str) -> String {
        resolve(base, package_of(owner), self.dialect)
    }
}

/// The package part of a full type name.
pub fn package_of(name: &str) -> &str {
    name.split('/').next().unwrap_or("")
}

/// A type name in a dialect's normal form: ROS 1 `pkg/Type`, ROS 2 `pkg/msg/Type`
/// (`pkg/srv/…` and `pkg/action/…` are kept as they are).
pub fn normalize(name: &str, dialect: Dialect) -> String {
    let parts: Vec<&str> = name.split('/').collect();
    match (dialect, &parts[..]) {
        (Dialect::Ros1, [pkg, "msg", ty]) => format!("{pkg}/{ty}"),
        (Dialect::Ros2, [pkg, ty]) => format!("{pkg}/msg/{ty}"),
        _ => name.to_string(),
    }
}

/// The full name of a nested type written as `base` in a definition of `package`: a bare
/// name is in the same package, and ROS 1's `Header` is `std_msgs/Header`.
pub fn resolve(base: &str, package: &str, dialect: Dialect) -> String {
    if !base.contains('/') {
        if dialect == Dialect::Ros1 && base == "Header" {
            return "std_msgs/Header".into();
        }
        return normalize(&format!("{package}/{base}"), dialect);
    }
    normalize(base, dialect)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised_per_dialect() {
        assert_eq!(normalize("std_msgs/msg/String", Dialect::Ros1), "std_msgs/String");
        assert_eq!(normalize("std_msgs/String", Dialect::Ros2), "std_msgs/msg/String");
        assert_eq!(normalize("a/srv/B_Event", Dialect::Ros2), "a/srv/B_Event");
        assert_eq!(resolve("Header", "geometry_msgs", Dialect::Ros1), "std_msgs/Header");
        assert_eq!(resolve("Point", "geometry_msgs", Dialect::Ros2), "geometry_msgs/msg/Point");
        assert_eq!(resolve("builtin_interfaces/Time", "x", Dialect::Ros2), "builtin_interfaces/msg/Time");
    }
}
