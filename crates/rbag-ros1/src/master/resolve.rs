//! Name resolution exactly as rosmaster applies it to the names it is sent
//! (`rosgraph.names`: `canonicalize_name`, `namespace`, `ns_join`, `resolve_name`).
//!
//! The master resolves every key and topic against the *caller id*, with no remapping: this is
//! the master's half of naming, not a node's (a node also applies remappings and its own
//! namespace before calling).

/// `/a//b/` → `/a/b`; relative names stay relative; `""` and `"/"` are kept.
pub fn canonicalize(name: &str) -> String {
    if name.is_empty() || name == "/" {
        return name.to_string();
    }
    let joined = name.split('/').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("/");
    if name.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// The namespace of a name, with a trailing slash: `/wg/node1` → `/wg/`, `/node` → `/`.
pub fn namespace(name: &str) -> String {
    let name = name.strip_suffix('/').unwrap_or(name);
    match name.rfind('/') {
        Some(i) if i > 0 => name[..=i].to_string(),
        _ => "/".to_string(),
    }
}

/// Joins a namespace and a name; a global (`/x`) or private (`~x`) name is returned unjoined.
pub fn ns_join(ns: &str, name: &str) -> String {
    if name.starts_with('~') || name.starts_with('/') {
        return name.to_string();
    }
    if ns == "~" {
        return format!("~{name}");
    }
    if ns.is_empty() {
        return name.to_string();
    }
    if ns.ends_with('/') {
        format!("{ns}{name}")
    } else {
        format!("{ns}/{name}")
    }
}

/// Resolves `name` against the node `caller`: `/abs` stays, `~priv` → `caller/priv`,
/// `rel` → `namespace(caller)/rel`. An empty name is the caller's namespace.
pub fn resolve(name: &str, caller: &str) -> String {
    if name.is_empty() {
        return namespace(caller);
    }
    let name = canonicalize(name);
    if name.starts_with('/') {
        name
    } else if let Some(private) = name.strip_prefix('~') {
        canonicalize(&format!("{caller}/{private}"))
    } else {
        format!("{}{name}", namespace(caller))
    }
}

/// The non-empty segments of a name.
pub fn segments(name: &str) -> impl Iterator<Item = &str> {
    name.split('/').filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_rosgraph_names_does() {
        assert_eq!(canonicalize("/a//b/"), "/a/b");
        assert_eq!(canonicalize("a//b/"), "a/b");
        assert_eq!(canonicalize("/"), "/");
        assert_eq!(namespace("/wg/node1"), "/wg/");
        assert_eq!(namespace("/node"), "/");
        assert_eq!(namespace("/wg/"), "/");
        assert_eq!(namespace("node"), "/");
        assert_eq!(namespace(""), "/");
        assert_eq!(ns_join("/a", "b"), "/a/b");
        assert_eq!(ns_join("/a/", "b"), "/a/b");
        assert_eq!(ns_join("/a", "/b"), "/b");
        assert_eq!(ns_join("/a", "~b"), "~b");
        assert_eq!(ns_join("~", "b"), "~b");
        assert_eq!(resolve("/foo/", "/ns/node"), "/foo");
        assert_eq!(resolve("foo", "/ns/node"), "/ns/foo");
        assert_eq!(resolve("foo/bar", "/node"), "/foo/bar");
        assert_eq!(resolve("~priv", "/ns/node"), "/ns/node/priv");
        assert_eq!(resolve("~", "/ns/node"), "/ns/node");
        assert_eq!(resolve("", "/ns/node"), "/ns/");
        assert_eq!(resolve("/", "/ns/node"), "/");
        assert_eq!(resolve("x", "rosparam-1"), "/x");
    }
}
