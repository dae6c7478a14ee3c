//! Who publishes, subscribes, serves and watches parameters (rosmaster's `registrations.py`).
//!
//! Everything keeps registration order, as rosmaster's dicts do: `getSystemState` and
//! `getPublishedTopics` list topics in the order they first appeared (again after they emptied).

use std::collections::BTreeMap;

use crate::xmlrpc::Value;

/// The four kinds of registration a node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Publisher,
    Subscriber,
    Service,
    ParamSubscriber,
}

/// A multimap key → `(caller_id, caller_api)` providers, in registration order.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    entries: Vec<(String, Vec<(String, String)>)>,
}

impl Registry {
    /// Keys with their providers, in order.
    pub fn entries(&self) -> &[(String, Vec<(String, String)>)] {
        &self.entries
    }

    /// The providers' APIs for `key`.
    pub fn apis(&self, key: &str) -> Vec<String> {
        self.providers(key).iter().map(|(_, api)| api.clone()).collect()
    }

    /// The providers of `key`.
    pub fn providers(&self, key: &str) -> &[(String, String)] {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, p)| p.as_slice()).unwrap_or(&[])
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    fn register(&mut self, key: &str, id: &str, api: &str) {
        let provider = (id.to_string(), api.to_string());
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, providers)) => {
                if !providers.contains(&provider) {
                    providers.push(provider);
                }
            }
            None => self.entries.push((key.to_string(), vec![provider])),
        }
    }

    /// Replaces every provider of `key` (services have one).
    fn replace(&mut self, key: &str, id: &str, api: &str) {
        let provider = vec![(id.to_string(), api.to_string())];
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, providers)) => *providers = provider,
            None => self.entries.push((key.to_string(), provider)),
        }
    }

    /// Removes one provider; a key left with none goes. True when it was there.
    fn unregister(&mut self, key: &str, id: &str, api: &str) -> bool {
        let Some(i) = self.entries.iter().position(|(k, _)| k == key) else { return false };
        let providers = &mut self.entries[i].1;
        let before = providers.len();
        providers.retain(|(pid, papi)| !(pid == id && papi == api));
        let removed = providers.len() != before;
        if providers.is_empty() {
            self.entries.remove(i);
        }
        removed
    }

    fn remove_key(&mut self, key: &str) {
        self.entries.retain(|(k, _)| k != key);
    }

    fn unregister_all(&mut self, id: &str) {
        for (_, providers) in &mut self.entries {
            providers.retain(|(pid, _)| pid != id);
        }
        self.entries.retain(|(_, p)| !p.is_empty());
    }

    /// `[[key, [caller_id, ...]], ...]`, as `getSystemState` lists each kind.
    pub fn state(&self) -> Value {
        Value::Array(
            self.entries
                .iter()
                .map(|(k, p)| {
                    let ids = p.iter().map(|(id, _)| Value::Str(id.clone())).collect();
                    Value::Array(vec![Value::Str(k.clone()), Value::Array(ids)])
                })
                .collect(),
        )
    }
}

/// A node the master knows: its API and what it holds. It is forgotten when it holds nothing.
#[derive(Debug, Clone)]
pub struct Node {
    pub api: String,
    held: Vec<(Kind, String)>,
}

/// The master's registrations.
#[derive(Debug, Default)]
pub struct Registrations {
    nodes: BTreeMap<String, Node>,
    pub publishers: Registry,
    pub subscribers: Registry,
    /// Service → the `(caller_id, caller_api)` of its one provider.
    pub services: Registry,
    /// Service → `(caller_id, service_api)` (the `rosrpc://` URI).
    service_apis: Vec<(String, (String, String))>,
    /// Subscribed parameter keys (with a trailing slash) → subscribers.
    pub param_subscribers: Registry,
}

/// rosmaster's reply to an unregister call: `(code, message, number unregistered)`.
pub type Unregistered = (i32, String, i32);

impl Registrations {
    /// The node registered as `id`.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.get(id)
    }

    /// The ids of nodes whose API is `api`.
    pub fn nodes_with_api(&self, api: &str) -> Vec<String> {
        self.nodes.iter().filter(|(_, n)| n.api == api).map(|(id, _)| id.clone()).collect()
    }

    /// The `rosrpc://` URI of a service's provider.
    pub fn service_api(&self, service: &str) -> Option<&str> {
        self.service_apis.iter().find(|(k, _)| k == service).map(|(_, (_, api))| api.as_str())
    }

    fn registry(&mut self, kind: Kind) -> &mut Registry {
        match kind {
            Kind::Publisher => &mut self.publishers,
            Kind::Subscriber => &mut self.subscribers,
            Kind::Service => &mut self.services,
            Kind::ParamSubscriber => &mut self.param_subscribers,
        }
    }

    /// Registers `id` at `api` for `key`. Returns the API the node had before when it changed:
    /// that node instance is gone (a new one took its name), so all it held is dropped and the
    /// caller should tell the old API to shut down.
    pub fn register(
        &mut self,
        kind: Kind,
        key: &str,
        id: &str,
        api: &str,
        service_api: Option<&str>,
    ) -> Option<String> {
        let bumped = match self.nodes.get(id) {
            Some(n) if n.api == api => None,
            Some(n) => Some(n.api.clone()),
            None => None,
        };
        if bumped.is_some() || !self.nodes.contains_key(id) {
            self.nodes.insert(id.to_string(), Node { api: api.to_string(), held: Vec::new() });
        }
        if let Some(node) = self.nodes.get_mut(id) {
            if !node.held.iter().any(|(k, h)| *k == kind && h == key) {
                node.held.push((kind, key.to_string()));
            }
        }
        if bumped.is_some() {
            self.publishers.unregister_all(id);
            self.subscribers.unregister_all(id);
            self.services.unregister_all(id);
            self.service_apis.retain(|(_, (pid, _))| pid != id);
            self.param_subscribers.unregister_all(id);
        }
        match (kind, service_api) {
            (Kind::Service, Some(sapi)) => {
                self.services.replace(key, id, api);
                let entry = (id.to_string(), sapi.to_string());
                match self.service_apis.iter_mut().find(|(k, _)| k == key) {
                    Some(slot) => slot.1 = entry,
                    None => self.service_apis.push((key.to_string(), entry)),
                }
            }
            _ => self.registry(kind).register(key, id, api),
        }
        bumped
    }

    /// Unregisters a topic or parameter subscription, with rosmaster's reply.
    pub fn unregister(&mut self, kind: Kind, key: &str, id: &str, api: &str) -> Unregistered {
        if !self.nodes.contains_key(id) {
            return (1, format!("[{id}] is not a registered node"), 0);
        }
        let reply = if self.registry(kind).unregister(key, id, api) {
            (1, format!("Unregistered [{id}] as provider of [{key}]"), 1)
        } else {
            (1, format!("[{id}] is not a known provider of [{key}]"), 0)
        };
        self.release(kind, key, id, reply.2 == 1);
        reply
    }

    /// Unregisters a service if `service_api` is still its provider's, with rosmaster's reply.
    pub fn unregister_service(&mut self, service: &str, id: &str, service_api: &str) -> Unregistered {
        if !self.nodes.contains_key(id) {
            return (1, format!("[{id}] is not a registered node"), 0);
        }
        let current = self.service_apis.iter().position(|(k, _)| k == service);
        let reply = match current {
            _ if self.service_apis.is_empty() => (1, format!("[{id}] is not a provider of [{service}]"), 0),
            Some(i) if self.service_apis[i].1 == (id.to_string(), service_api.to_string()) => {
                self.service_apis.remove(i);
                self.services.remove_key(service);
                (1, format!("Unregistered [{id}] as provider of [{service}]"), 1)
            }
            _ => (1, format!("[{service_api}] is no longer the current service api handle for [{service}]"), 0),
        };
        self.release(Kind::Service, service, id, reply.2 == 1);
        reply
    }

    /// After an unregister: the node no longer holds `key`, and is forgotten if it holds nothing.
    fn release(&mut self, kind: Kind, key: &str, id: &str, removed: bool) {
        let Some(node) = self.nodes.get_mut(id) else { return };
        if removed {
            node.held.retain(|(k, h)| !(*k == kind && h == key));
        }
        if node.held.is_empty() {
            self.nodes.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_come_and_go_with_their_registrations() {
        let mut r = Registrations::default();
        assert_eq!(r.register(Kind::Publisher, "/t", "/a", "http://a/", None), None);
        assert_eq!(r.register(Kind::Subscriber, "/t", "/a", "http://a/", None), None);
        assert_eq!(r.node("/a").map(|n| n.api.as_str()), Some("http://a/"));
        assert_eq!(
            r.unregister(Kind::Publisher, "/t", "/a", "http://a/"),
            (1, "Unregistered [/a] as provider of [/t]".into(), 1)
        );
        assert_eq!(
            r.unregister(Kind::Publisher, "/t", "/a", "http://a/"),
            (1, "[/a] is not a known provider of [/t]".into(), 0)
        );
        assert!(r.node("/a").is_some());
        r.unregister(Kind::Subscriber, "/t", "/a", "http://a/");
        assert!(r.node("/a").is_none());
        assert_eq!(
            r.unregister(Kind::Subscriber, "/t", "/a", "http://a/"),
            (1, "[/a] is not a registered node".into(), 0)
        );
    }

    #[test]
    fn a_new_api_for_a_known_name_drops_the_old_registrations() {
        let mut r = Registrations::default();
        r.register(Kind::Publisher, "/t", "/a", "http://old/", None);
        r.register(Kind::Service, "/s", "/a", "http://old/", Some("rosrpc://old:1"));
        assert_eq!(r.register(Kind::Subscriber, "/u", "/a", "http://new/", None), Some("http://old/".into()));
        assert!(r.publishers.entries().is_empty());
        assert!(r.services.entries().is_empty());
        assert_eq!(r.service_api("/s"), None);
        assert_eq!(r.subscribers.apis("/u"), vec!["http://new/"]);
    }

    #[test]
    fn services_have_one_provider() {
        let mut r = Registrations::default();
        r.register(Kind::Service, "/s", "/a", "http://a/", Some("rosrpc://a:1"));
        r.register(Kind::Service, "/s", "/b", "http://b/", Some("rosrpc://b:2"));
        assert_eq!(r.service_api("/s"), Some("rosrpc://b:2"));
        assert_eq!(
            r.unregister_service("/s", "/a", "rosrpc://a:1"),
            (1, "[rosrpc://a:1] is no longer the current service api handle for [/s]".into(), 0)
        );
        assert_eq!(
            r.unregister_service("/s", "/b", "rosrpc://b:2"),
            (1, "Unregistered [/b] as provider of [/s]".into(), 1)
        );
        assert!(r.node("/b").is_none());
        assert_eq!(r.state_of_services(), Value::Array(vec![]));
    }

    impl Registrations {
        fn state_of_services(&self) -> Value {
            self.services.state()
        }
    }
}
