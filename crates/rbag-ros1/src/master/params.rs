//! The parameter tree (rosmaster's `paramserver.py`): a nested dictionary whose namespaces are
//! structs, and the rule that decides which `paramUpdate` notifications a change sends.

use crate::names::{canonicalize, ns_join, segments};
use crate::xmlrpc::Value;

/// Why a parameter could not be set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetError {
    /// `setParam("/", v)` with `v` not a struct.
    RootNotAStruct,
}

/// The parameter tree. Struct members keep their order, as Python dicts do.
#[derive(Debug, Clone, Default)]
pub struct ParamTree {
    root: Vec<(String, Value)>,
}

/// Python's dict semantics for a struct that arrives over XML-RPC: a repeated name keeps the
/// first position and the last value. Applied at every level.
pub fn as_dict(v: Value) -> Value {
    match v {
        Value::Struct(members) => {
            let mut out: Vec<(String, Value)> = Vec::with_capacity(members.len());
            for (k, v) in members {
                let v = as_dict(v);
                match out.iter_mut().find(|(name, _)| *name == k) {
                    Some(slot) => slot.1 = v,
                    None => out.push((k, v)),
                }
            }
            Value::Struct(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(as_dict).collect()),
        other => other,
    }
}

fn find<'a>(members: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    members.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

impl ParamTree {
    /// The value at a resolved key; a namespace is a struct, `/` the whole tree.
    pub fn get(&self, key: &str) -> Option<Value> {
        let mut members = &self.root;
        let mut found: Option<&Value> = None;
        for name in segments(key) {
            if let Some(v) = found {
                members = match v {
                    Value::Struct(m) => m,
                    _ => return None,
                };
            }
            found = Some(find(members, name)?);
        }
        Some(match found {
            Some(v) => v.clone(),
            None => Value::Struct(self.root.clone()),
        })
    }

    /// Whether a resolved key is set (a namespace counts).
    pub fn has(&self, key: &str) -> bool {
        let mut members = &self.root;
        let mut found: Option<&Value> = None;
        for name in segments(key) {
            if let Some(v) = found {
                members = match v {
                    Value::Struct(m) => m,
                    _ => return false,
                };
            }
            match find(members, name) {
                Some(v) => found = Some(v),
                None => return false,
            }
        }
        true
    }

    /// Sets a resolved key. A struct value replaces the whole subtree; a non-struct on the way
    /// down is replaced by a namespace.
    pub fn set(&mut self, key: &str, value: Value) -> Result<(), SetError> {
        let value = as_dict(value);
        let names: Vec<&str> = segments(key).collect();
        let Some((last, path)) = names.split_last() else {
            return match value {
                Value::Struct(m) => {
                    self.root = m;
                    Ok(())
                }
                _ => Err(SetError::RootNotAStruct),
            };
        };
        let mut members = &mut self.root;
        for name in path {
            let i = match members.iter().position(|(k, _)| k == name) {
                Some(i) => i,
                None => {
                    members.push((name.to_string(), Value::Struct(Vec::new())));
                    members.len() - 1
                }
            };
            let slot = &mut members[i].1;
            if !matches!(slot, Value::Struct(_)) {
                *slot = Value::Struct(Vec::new());
            }
            members = match slot {
                Value::Struct(m) => m,
                _ => return Ok(()), // made a struct just above
            };
        }
        match members.iter_mut().find(|(k, _)| k == last) {
            Some(slot) => slot.1 = value,
            None => members.push((last.to_string(), value)),
        }
        Ok(())
    }

    /// Deletes a resolved key; false when it is not set (or is the root, which cannot go).
    pub fn delete(&mut self, key: &str) -> bool {
        let names: Vec<&str> = segments(key).collect();
        let Some((last, path)) = names.split_last() else { return false };
        let mut members = &mut self.root;
        for name in path {
            members = match members.iter_mut().find(|(k, _)| k == name) {
                Some((_, Value::Struct(m))) => m,
                _ => return false,
            };
        }
        let before = members.len();
        members.retain(|(k, _)| k != last);
        members.len() != before
    }

    /// Every leaf's full name, depth first in tree order; namespaces themselves (and empty ones)
    /// are not listed.
    pub fn names(&self) -> Vec<String> {
        fn walk(prefix: &str, members: &[(String, Value)], out: &mut Vec<String>) {
            for (k, v) in members {
                let full = ns_join(prefix, k);
                match v {
                    Value::Struct(m) => walk(&full, m, out),
                    _ => out.push(full),
                }
            }
        }
        let mut out = Vec::new();
        walk("/", &self.root, &mut out);
        out
    }

    /// rosmaster's `search_param(ns, key)`: from namespace `ns` upwards, the first namespace
    /// where the key's *first* segment exists gives `ns + key` (the rest need not exist). A
    /// global key is returned if it is set. `Err` for keys rosmaster refuses.
    pub fn search(&self, ns: &str, key: &str) -> Result<Option<String>, &'static str> {
        if key.is_empty() || key.starts_with('~') {
            return Err("invalid key");
        }
        if !ns.starts_with('/') {
            return Err("namespace must be global");
        }
        if key.starts_with('/') {
            return Ok(self.has(key).then(|| key.to_string()));
        }
        let Some(first) = segments(key).next() else { return Ok(None) };
        if self.has(&ns_join(ns, first)) {
            return Ok(Some(ns_join(ns, key)));
        }
        let namespaces: Vec<&str> = segments(ns).collect();
        for up in 1..=namespaces.len() {
            let parent = &namespaces[..namespaces.len() - up];
            let join = |last: &str| {
                let mut s = String::new();
                for p in parent.iter().copied().chain(std::iter::once(last)) {
                    s.push('/');
                    s.push_str(p);
                }
                s
            };
            if self.has(&join(first)) {
                return Ok(Some(join(key)));
            }
        }
        Ok(None)
    }
}

/// One `paramUpdate` to send: to these `(caller_id, api)` nodes, this key (with a trailing
/// slash) and value (`{}` for a deleted parameter).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamUpdate {
    pub nodes: Vec<(String, String)>,
    pub key: String,
    pub value: Value,
}

/// Every subscription key under a struct value set at `key` (each with a trailing slash).
fn all_keys(key: &str, value: &[(String, Value)], out: &mut Vec<String>) {
    for (k, v) in value {
        let sub = format!("{}/", ns_join(key, k));
        out.push(sub.clone());
        if let Value::Struct(m) = v {
            all_keys(&sub, m, out);
        }
    }
}

/// rosmaster's `compute_param_updates`: who hears of `value` being set at the resolved `key`.
/// `subscribers` are the parameter subscriptions in registration order (keys end in `/`).
///
/// - A subscription at or above the key hears `(key/, value)`, except `ignore` (the caller
///   that set it; a deletion passes `None`).
/// - A struct value: a subscription below the key that the new subtree lacks hears `{}`, and
///   one the new subtree has hears its part of it.
pub fn updates(
    subscribers: &[(String, Vec<(String, String)>)],
    key: &str,
    value: &Value,
    ignore: Option<&str>,
) -> Vec<ParamUpdate> {
    if subscribers.is_empty() {
        return Vec::new();
    }
    let key = if key == "/" { "/".to_string() } else { format!("{}/", canonicalize(key)) };
    let subtree = match value {
        Value::Struct(m) => {
            let mut keys = Vec::new();
            all_keys(&key, m, &mut keys);
            Some(keys)
        }
        _ => None,
    };
    let mut out = Vec::new();
    for (sub_key, nodes) in subscribers {
        let ns_key = if sub_key.ends_with('/') { sub_key.clone() } else { format!("{sub_key}/") };
        if key.starts_with(&ns_key) {
            let nodes = nodes.iter().filter(|(id, _)| Some(id.as_str()) != ignore).cloned().collect();
            out.push(ParamUpdate { nodes, key: key.clone(), value: value.clone() });
        } else if subtree.as_ref().is_some_and(|all| ns_key.starts_with(&key) && !all.contains(sub_key)) {
            out.push(ParamUpdate { nodes: nodes.clone(), key: sub_key.clone(), value: Value::Struct(Vec::new()) });
        }
    }
    for sub_key in subtree.unwrap_or_default() {
        let Some((_, nodes)) = subscribers.iter().find(|(k, _)| *k == sub_key) else { continue };
        let mut v = value;
        let mut found = true;
        for name in segments(&sub_key[key.len().min(sub_key.len())..]) {
            match v {
                Value::Struct(m) => match find(m, name) {
                    Some(x) => v = x,
                    None => found = false,
                },
                _ => found = false,
            }
        }
        if found {
            out.push(ParamUpdate { nodes: nodes.clone(), key: sub_key.clone(), value: v.clone() });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    fn st(m: Vec<(&str, Value)>) -> Value {
        Value::Struct(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    #[test]
    fn namespaces_are_structs_and_dicts_replace_subtrees() {
        let mut t = ParamTree::default();
        t.set("/foo/bar", Value::Int(42)).expect("set");
        t.set("/foo/s", s("hello")).expect("set");
        assert_eq!(t.get("/foo"), Some(st(vec![("bar", Value::Int(42)), ("s", s("hello"))])));
        assert_eq!(t.get("/foo/bar"), Some(Value::Int(42)));
        assert_eq!(t.get("/foo/bar/x"), None);
        assert!(t.has("/foo") && t.has("/foo/s") && !t.has("/foo/nope") && !t.has("/foo/s/x"));
        // A dict replaces the subtree, not a union.
        t.set("/foo", st(vec![("a", Value::Int(1))])).expect("set");
        assert_eq!(t.get("/foo"), Some(st(vec![("a", Value::Int(1))])));
        // Setting under a leaf turns it into a namespace.
        t.set("/foo/a/b", Value::Bool(true)).expect("set");
        assert_eq!(t.get("/foo/a"), Some(st(vec![("b", Value::Bool(true))])));
        assert_eq!(t.set("/", Value::Int(1)), Err(SetError::RootNotAStruct));
        t.set("/", st(vec![("only", Value::Int(3))])).expect("root");
        assert_eq!(t.get("/"), Some(st(vec![("only", Value::Int(3))])));
    }

    #[test]
    fn repeated_struct_names_read_as_a_python_dict() {
        let mut t = ParamTree::default();
        t.set("/d", st(vec![("a", Value::Int(1)), ("b", Value::Int(2)), ("a", Value::Int(3))])).expect("set");
        assert_eq!(t.get("/d"), Some(st(vec![("a", Value::Int(3)), ("b", Value::Int(2))])));
    }

    #[test]
    fn delete_and_names() {
        let mut t = ParamTree::default();
        t.set("/d", st(vec![("a", Value::Int(1)), ("b", st(vec![("c", s("z"))])), ("e", st(vec![]))])).expect("set");
        t.set("/x", Value::Int(0)).expect("set");
        assert_eq!(t.names(), vec!["/d/a", "/d/b/c", "/x"]);
        assert!(t.delete("/d/b/c"));
        assert!(!t.delete("/d/b/c"));
        assert!(!t.delete("/x/y"));
        assert!(!t.delete("/"));
        assert_eq!(t.names(), vec!["/d/a", "/x"]);
    }

    #[test]
    fn search_walks_up_matching_the_first_segment() {
        let mut t = ParamTree::default();
        t.set("/robot_description/arm", s("a")).expect("set");
        t.set("/pr2/robot_description/base", s("b")).expect("set");
        t.set("/pr2/foo/own", s("c")).expect("set");
        assert_eq!(t.search("/pr2/foo", "robot_description"), Ok(Some("/pr2/robot_description".into())));
        assert_eq!(t.search("/pr2/foo", "robot_description/arm"), Ok(Some("/pr2/robot_description/arm".into())));
        assert_eq!(t.search("/other/node", "robot_description"), Ok(Some("/robot_description".into())));
        // The caller id itself is the first namespace searched (its private names).
        assert_eq!(t.search("/pr2/foo", "own"), Ok(Some("/pr2/foo/own".into())));
        assert_eq!(t.search("/n", "nothing"), Ok(None));
        assert_eq!(t.search("/n", "/robot_description"), Ok(Some("/robot_description".into())));
        assert_eq!(t.search("/n", "/nothing"), Ok(None));
        assert_eq!(t.search("/n", "~x"), Err("invalid key"));
        assert_eq!(t.search("n", "x"), Err("namespace must be global"));
    }

    fn subs(list: &[(&str, &str)]) -> Vec<(String, Vec<(String, String)>)> {
        list.iter().map(|(k, id)| (k.to_string(), vec![(id.to_string(), format!("http://{}/", &id[1..]))])).collect()
    }

    #[test]
    fn updates_follow_rosmaster() {
        let s1 = subs(&[("/cached/", "/n1"), ("/foo/", "/n2"), ("/foo/bar/", "/n3"), ("/foo/gone/", "/n4")]);
        // A leaf at the subscribed key.
        let u = updates(&s1, "/cached", &Value::Int(7), Some("/setter"));
        assert_eq!(
            u,
            vec![ParamUpdate {
                nodes: vec![("/n1".into(), "http://n1/".into())],
                key: "/cached/".into(),
                value: Value::Int(7)
            }]
        );
        // The setter itself is not told.
        let u = updates(&s1, "/cached", &Value::Int(7), Some("/n1"));
        assert_eq!(u[0].nodes, vec![]);
        // A leaf below a subscription: the changed key is sent, not the subscribed one.
        let u = updates(&s1, "/foo/x", &Value::Int(1), None);
        assert_eq!(u.len(), 1);
        assert_eq!((u[0].key.as_str(), &u[0].value), ("/foo/x/", &Value::Int(1)));
        // A dict above subscriptions: those it lacks hear {}, those it has hear their part.
        let v = st(vec![("bar", Value::Int(5))]);
        let u = updates(&s1, "/foo", &v, None);
        let got: Vec<(&str, &str, Value)> =
            u.iter().map(|u| (u.nodes[0].0.as_str(), u.key.as_str(), u.value.clone())).collect();
        assert_eq!(
            got,
            vec![("/n2", "/foo/", v.clone()), ("/n4", "/foo/gone/", st(vec![])), ("/n3", "/foo/bar/", Value::Int(5))]
        );
        // Deleting (value {}) tells everything under the key that it is gone.
        let u = updates(&s1, "/foo", &st(vec![]), None);
        let keys: Vec<&str> = u.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, vec!["/foo/", "/foo/bar/", "/foo/gone/"]);
        assert!(updates(&[], "/a", &Value::Int(1), None).is_empty());
        // The root subscription hears everything.
        let u = updates(&subs(&[("/", "/n")]), "/a/b", &Value::Int(1), None);
        assert_eq!(u[0].key, "/a/b/");
    }
}
