//! ROS 1 graph names: resolution (`/abs`, `rel`, `~private`), remapping arguments
//! (`from:=to`, `__name:=`, `__ns:=`, `__master:=`, `__ip:=`, `__hostname:=`) and the
//! environment (`ROS_MASTER_URI`, `ROS_IP`/`ROS_HOSTNAME`, `ROS_NAMESPACE`), as roscpp and rospy
//! read them.

use std::collections::BTreeMap;

/// A name that cannot be a ROS graph name.
#[derive(Debug, thiserror::Error)]
#[error("invalid ROS name {name:?}: {reason}")]
pub struct NameError {
    /// The name as given.
    pub name: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Checks the characters ROS allows: letters, digits, `_`, `/`, and a leading `~`.
pub fn validate(name: &str) -> Result<(), NameError> {
    let bad = |reason| Err(NameError { name: name.to_string(), reason });
    if name.is_empty() {
        return bad("empty");
    }
    let body = name.strip_prefix('~').unwrap_or(name);
    if body.chars().any(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '/')) {
        return bad("only letters, digits, '_' and '/' are allowed");
    }
    if body.split('/').any(|part| part.starts_with(|c: char| c.is_ascii_digit())) {
        return bad("a name part may not start with a digit");
    }
    Ok(())
}

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

/// Resolves `name` as the master does for the node `caller` (no remapping): `/abs` stays, `~priv` → `caller/priv`,
/// `rel` → `namespace(caller)/rel`. An empty name is the caller's namespace.
pub fn resolve_for(name: &str, caller: &str) -> String {
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

/// Resolves `name` for a node in `namespace`: `/abs` stays, `~priv` goes under the node,
/// anything else under the namespace.
pub fn resolve(name: &str, namespace: &str, node: &str) -> String {
    if name.starts_with('~') {
        resolve_for(name, node)
    } else {
        canonicalize(&ns_join(&format!("{namespace}/"), name))
    }
}

/// How a node joins the graph: its name, the master, the host it advertises, its remappings.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeConfig {
    /// Fully resolved node name, e.g. `/rbag_record_1234`.
    pub name: String,
    /// The namespace relative names resolve in (`ROS_NAMESPACE`, `__ns:=`).
    pub namespace: String,
    /// `ROS_MASTER_URI`.
    pub master_uri: String,
    /// The host put in this node's URIs (`ROS_IP`, else `ROS_HOSTNAME`, else the host name).
    pub host: String,
    /// Resolved `from` → resolved `to`.
    pub remaps: BTreeMap<String, String>,
}

/// Defaults when the environment says nothing: roscore's port on loopback.
pub const DEFAULT_MASTER_URI: &str = "http://localhost:11311/";

impl NodeConfig {
    /// Builds the configuration of a node named `default_name` from the environment and from
    /// command-line remapping arguments (the `x:=y` items; others are ignored). Returns the
    /// arguments that were not remappings.
    pub fn from_env_and_args(
        default_name: &str,
        env: impl Fn(&str) -> Option<String>,
        args: &[String],
    ) -> Result<(NodeConfig, Vec<String>), NameError> {
        let mut special = BTreeMap::new();
        let mut pairs = Vec::new();
        let mut rest = Vec::new();
        for a in args {
            match a.split_once(":=") {
                Some((from, to)) if from.starts_with("__") => {
                    special.insert(from.to_string(), to.to_string());
                }
                Some((from, to)) => pairs.push((from.to_string(), to.to_string())),
                None => rest.push(a.clone()),
            }
        }
        let non_empty = |v: Option<String>| v.filter(|s| !s.is_empty());
        let namespace = canonicalize(
            &special.get("__ns").cloned().or_else(|| non_empty(env("ROS_NAMESPACE"))).unwrap_or_else(|| "/".into()),
        );
        let base = special.get("__name").cloned().unwrap_or_else(|| default_name.to_string());
        validate(&base)?;
        let name = canonicalize(&ns_join(&format!("{namespace}/"), &base));
        let master_uri = special
            .get("__master")
            .cloned()
            .or_else(|| non_empty(env("ROS_MASTER_URI")))
            .unwrap_or_else(|| DEFAULT_MASTER_URI.into());
        let host = special
            .get("__ip")
            .or_else(|| special.get("__hostname"))
            .cloned()
            .or_else(|| non_empty(env("ROS_IP")))
            .or_else(|| non_empty(env("ROS_HOSTNAME")))
            .unwrap_or_else(local_hostname);
        let mut remaps = BTreeMap::new();
        for (from, to) in pairs {
            validate(&from)?;
            validate(&to)?;
            remaps.insert(resolve(&from, &namespace, &name), resolve(&to, &namespace, &name));
        }
        Ok((NodeConfig { name, namespace, master_uri, host, remaps }, rest))
    }

    /// Resolves a name and applies this node's remappings.
    pub fn resolve(&self, name: &str) -> String {
        let resolved = resolve(name, &self.namespace, &self.name);
        self.remaps.get(&resolved).cloned().unwrap_or(resolved)
    }
}

/// The machine's host name, as roscpp falls back to it; `localhost` if it cannot be read.
fn local_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(env: &[(&str, &str)], args: &[&str]) -> (NodeConfig, Vec<String>) {
        let env: BTreeMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        NodeConfig::from_env_and_args("rec", |k| env.get(k).cloned(), &args).unwrap()
    }

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
        assert_eq!(resolve_for("/foo/", "/ns/node"), "/foo");
        assert_eq!(resolve_for("foo", "/ns/node"), "/ns/foo");
        assert_eq!(resolve_for("foo/bar", "/node"), "/foo/bar");
        assert_eq!(resolve_for("~priv", "/ns/node"), "/ns/node/priv");
        assert_eq!(resolve_for("~", "/ns/node"), "/ns/node");
        assert_eq!(resolve_for("", "/ns/node"), "/ns/");
        assert_eq!(resolve_for("/", "/ns/node"), "/");
        assert_eq!(resolve_for("x", "rosparam-1"), "/x");
    }

    #[test]
    fn resolution_follows_roscpp() {
        assert_eq!(resolve("/a//b/", "/ns", "/ns/node"), "/a/b");
        assert_eq!(resolve("chatter", "/ns", "/ns/node"), "/ns/chatter");
        assert_eq!(resolve("~p", "/ns", "/ns/node"), "/ns/node/p");
        assert_eq!(resolve("chatter", "/", "/node"), "/chatter");
    }

    #[test]
    fn environment_and_special_arguments() {
        let (c, rest) = cfg(
            &[("ROS_MASTER_URI", "http://127.0.0.1:1234"), ("ROS_HOSTNAME", "hn"), ("ROS_IP", "10.0.0.1")],
            &["x.bag", "chatter:=/talk", "__ns:=/robot", "__name:=rec2"],
        );
        assert_eq!(c.name, "/robot/rec2");
        assert_eq!(c.namespace, "/robot");
        assert_eq!(c.master_uri, "http://127.0.0.1:1234");
        assert_eq!(c.host, "10.0.0.1", "ROS_IP wins over ROS_HOSTNAME");
        assert_eq!(rest, vec!["x.bag".to_string()]);
        assert_eq!(c.resolve("chatter"), "/talk");
        assert_eq!(c.resolve("/robot/chatter"), "/talk");
        assert_eq!(c.resolve("other"), "/robot/other");
    }

    #[test]
    fn arguments_override_the_environment() {
        let (c, _) = cfg(
            &[("ROS_MASTER_URI", "http://a:1/"), ("ROS_NAMESPACE", "/env")],
            &["__master:=http://b:2/", "__hostname:=h"],
        );
        assert_eq!(c.master_uri, "http://b:2/");
        assert_eq!(c.host, "h");
        assert_eq!(c.name, "/env/rec");
        let (c, _) = cfg(&[], &[]);
        assert_eq!(c.master_uri, DEFAULT_MASTER_URI);
    }

    #[test]
    fn invalid_names_are_refused() {
        assert!(validate("a-b").is_err());
        assert!(validate("/1abc").is_err());
        assert!(validate("~ok/name_1").is_ok());
        let args = vec!["bad-name:=/x".to_string()];
        assert!(NodeConfig::from_env_and_args("rec", |_| None, &args).is_err());
    }
}
