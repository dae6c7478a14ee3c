//! The master's XML-RPC API over its state, with no sockets: rosmaster's `master_api.py`, its
//! argument validation (`apivalidate`, `validators.py`) and its exact reply strings.
//!
//! [`MasterState::call`] answers one call and says which notifications the call causes; the
//! caller (the server in `mod.rs`) hands those to the notifier, so nothing here blocks.

use super::params::{updates, ParamTree, SetError};
use super::registrations::{Kind, Registrations};
use crate::names::{canonicalize, resolve_for as resolve};
use crate::xmlrpc::Value;

/// The caller id the master uses when it calls nodes.
pub const MASTER_CALLER_ID: &str = "/master";

/// What the master must tell a node after a call, in this order.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The node's XML-RPC API.
    pub api: String,
    /// The call to make on it.
    pub callback: Callback,
}

/// A call the master makes on a node's slave API.
#[derive(Debug, Clone, PartialEq)]
pub enum Callback {
    /// `publisherUpdate("/master", topic, [publisher APIs])`.
    PublisherUpdate {
        /// The topic.
        topic: String,
        /// Every publisher's API, now.
        publishers: Vec<String>,
    },
    /// `paramUpdate("/master", key/, value)`; `{}` when the parameter is gone.
    ParamUpdate {
        /// The parameter (with a trailing `/`).
        key: String,
        /// Its new value.
        value: Value,
    },
    /// `shutdown("/master", reason)`: another node took this node's name.
    Shutdown {
        /// Why.
        reason: String,
    },
}

impl Notification {
    /// The slave API method.
    pub fn method(&self) -> &'static str {
        match self.callback {
            Callback::PublisherUpdate { .. } => "publisherUpdate",
            Callback::ParamUpdate { .. } => "paramUpdate",
            Callback::Shutdown { .. } => "shutdown",
        }
    }

    /// The call's parameters, caller id first.
    pub fn params(&self) -> Vec<Value> {
        let me = Value::Str(MASTER_CALLER_ID.into());
        match &self.callback {
            Callback::PublisherUpdate { topic, publishers } => {
                vec![me, Value::Str(topic.clone()), publishers.clone().into()]
            }
            Callback::ParamUpdate { key, value } => vec![me, Value::Str(key.clone()), value.clone()],
            Callback::Shutdown { reason } => vec![me, Value::Str(reason.clone())],
        }
    }
}

/// The master's answer to one call: the XML-RPC result (a fault only for unknown methods),
/// and the notifications it causes.
pub type Reply = (Result<Value, (i32, String)>, Vec<Notification>);

/// Registrations, topic types and parameters: everything the master knows.
#[derive(Debug)]
pub struct MasterState {
    uri: String,
    pid: i32,
    regs: Registrations,
    /// Topic → type, in first-seen order; never forgotten (as rosmaster).
    topic_types: Vec<(String, String)>,
    params: ParamTree,
    shutdown_requested: bool,
}

/// `[code, status, value]`.
fn triple(code: i32, msg: impl Into<String>, v: Value) -> Value {
    Value::Array(vec![Value::Int(code), Value::Str(msg.into()), v])
}

fn strs(v: Vec<String>) -> Value {
    Value::Array(v.into_iter().map(Value::Str).collect())
}

fn empty_struct() -> Value {
    Value::Struct(Vec::new())
}

/// Python's truth value of an XML-RPC argument (`if not param`).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Int(i) => *i != 0,
        Value::Bool(b) => *b,
        Value::Str(s) | Value::Base64(s) => !s.is_empty(),
        Value::Double(d) => *d != 0.0,
        Value::DateTime(_) => true,
        Value::Array(a) => !a.is_empty(),
        Value::Struct(m) => !m.is_empty(),
        Value::Nil => false,
    }
}

/// A refused argument: rosmaster's message (returned with code -1).
type Invalid = String;

fn non_empty_str(v: &Value, name: &str) -> Result<String, Invalid> {
    match v {
        _ if !truthy(v) => Err(format!("ERROR: parameter [{name}] must be specified and non-empty")),
        Value::Str(s) => Ok(s.clone()),
        _ => Err(format!("ERROR: parameter [{name}] must be a string")),
    }
}

fn not_none(v: &Value, name: &str) -> Result<Value, Invalid> {
    match v {
        Value::Nil => Err(format!("ERROR: parameter [{name}] must be specified")),
        v => Ok(v.clone()),
    }
}

fn is_api(v: &Value, name: &str) -> Result<String, Invalid> {
    match v {
        Value::Str(s) if !s.is_empty() => {
            if s.starts_with("http://") || s.starts_with("rosrpc://") {
                Ok(s.clone())
            } else {
                Err(format!("ERROR: parameter [{name}] is not an RPC URI"))
            }
        }
        _ => Err(format!("ERROR: parameter [{name}] is not an XMLRPC URI")),
    }
}

/// A graph name, resolved against the caller (`valid_name`).
fn valid_name(v: &Value, name: &str, caller: &str) -> Result<String, Invalid> {
    match v {
        Value::Str(s) if !s.is_empty() => {
            if s.contains(':') || s.contains(' ') {
                Err(format!("ERROR: parameter [{name}] contains illegal chars"))
            } else {
                Ok(resolve(s, caller))
            }
        }
        _ => Err(format!("ERROR: parameter [{name}] must be a non-empty string")),
    }
}

/// A topic or service name: a valid name that is not `/` (`is_topic`, `is_service`).
fn is_topic(v: &Value, name: &str, caller: &str) -> Result<String, Invalid> {
    let resolved = valid_name(v, name, caller)?;
    if v.as_str() == Some("/") {
        return Err(format!("ERROR: parameter [{name}] cannot be the global namespace"));
    }
    Ok(resolved)
}

fn empty_or_valid_name(v: &Value, name: &str, caller: &str) -> Result<String, Invalid> {
    match v {
        Value::Str(s) if s.is_empty() => Ok(String::new()),
        Value::Str(s) => Ok(resolve(s, caller)),
        _ => Err(format!("ERROR: parameter [{name}] must be a string")),
    }
}

fn valid_type_name(v: &Value, name: &str) -> Result<String, Invalid> {
    match v {
        Value::Str(s) if s == "*" => Ok(s.clone()),
        Value::Str(s) if !s.is_empty() => {
            if s.split('/').count() == 2 {
                Ok(s.clone())
            } else {
                Err(format!("ERROR: parameter [{name}] is not a valid package resource name"))
            }
        }
        _ => Err(format!("ERROR: parameter [{name}] must be a non-empty string")),
    }
}

/// Each method's number of arguments after the caller id, and the value rosmaster returns
/// with an error (`apivalidate`'s `error_return_value`).
fn signature(method: &str) -> Option<(usize, Value)> {
    let zero = Value::Int(0);
    let empty = || Value::Str(String::new());
    let list = || Value::Array(Vec::new());
    Some(match method {
        "getUri" => (0, empty()),
        "getPid" => (0, Value::Int(-1)),
        "shutdown" => (1, zero),
        "getParam" | "deleteParam" | "searchParam" => (1, zero),
        "setParam" => (2, zero),
        "subscribeParam" | "unsubscribeParam" => (2, zero),
        "hasParam" => (1, Value::Bool(false)),
        "getParamNames" => (0, list()),
        "registerService" => (3, zero),
        "lookupService" => (1, empty()),
        "unregisterService" => (2, zero),
        "registerSubscriber" | "registerPublisher" => (3, list()),
        "unregisterSubscriber" | "unregisterPublisher" => (2, zero),
        "lookupNode" => (1, empty()),
        "getPublishedTopics" => (1, zero),
        "getTopicTypes" => (0, list()),
        "getSystemState" => (0, Value::Array(vec![list(), list(), list()])),
        _ => return None,
    })
}

/// The `run_id` roscore would make: a uuid1-shaped string from the time and the process id.
pub fn new_run_id() -> String {
    use std::sync::atomic::{AtomicU16, Ordering};
    static COUNTER: AtomicU16 = AtomicU16::new(0);
    let now = std::time::Duration::from_nanos(rbag_transport::now_ns());
    // uuid1 time: 100 ns intervals since 1582-10-15.
    let t = (now.as_nanos() / 100) as u64 + 0x01b2_1dd2_1381_4000;
    let pid = std::process::id();
    let seq = (COUNTER.fetch_add(1, Ordering::Relaxed) ^ (now.subsec_nanos() as u16)) & 0x3fff | 0x8000;
    // A random-style node id (multicast bit set, as uuid1 does without a MAC), from the pid.
    let node = (u64::from(pid).wrapping_mul(0x9e37_79b9_7f4a_7c15) & 0xffff_ffff_ffff) | 0x0100_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{seq:04x}-{node:012x}",
        t as u32,
        (t >> 32) as u16,
        ((t >> 48) as u16 & 0x0fff) | 0x1000
    )
}

impl MasterState {
    /// A master reachable at `uri`, with the parameters roscore seeds: `/run_id`,
    /// `/rosversion` and `/rosdistro` (with rosmaster's trailing newlines).
    pub fn new(uri: impl Into<String>) -> MasterState {
        let mut params = ParamTree::default();
        for (k, v) in
            [("/run_id", new_run_id()), ("/rosversion", "1.15.15\n".into()), ("/rosdistro", "noetic\n".into())]
        {
            let _ = params.set(k, Value::Str(v));
        }
        MasterState {
            uri: uri.into(),
            pid: std::process::id() as i32,
            regs: Registrations::default(),
            topic_types: Vec::new(),
            params,
            shutdown_requested: false,
        }
    }

    /// The master's URI, as `getUri` answers.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Whether a peer called `shutdown` on the master.
    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested
    }

    /// Answers one call (not `system.multicall`: the HTTP layer splits those).
    pub fn call(&mut self, method: &str, params: Vec<Value>) -> Reply {
        let Some((arity, error_value)) = signature(method) else {
            return (Err((1, format!("<class 'Exception'>:method \"{method}\" is not supported"))), Vec::new());
        };
        let mut notes = Vec::new();
        let reply = if params.is_empty() {
            triple(-1, "missing required caller_id parameter", error_value)
        } else if params.len() != arity + 1 {
            triple(-1, "Error: bad call arity", error_value)
        } else {
            match &params[0] {
                Value::Str(caller) => {
                    let caller = caller.clone();
                    match self.dispatch(method, &caller, &params[1..], &mut notes) {
                        Ok(Ok(v)) => v,
                        Ok(Err((code, msg))) => triple(code, msg, error_value),
                        Err(invalid) => triple(-1, invalid, error_value),
                    }
                }
                _ => triple(-1, "caller_id must be a string", error_value),
            }
        };
        (Ok(reply), notes)
    }

    /// A node answered a `paramUpdate` with -1: it no longer wants updates for `key` (or the
    /// subscription above it that caused the update).
    pub fn param_update_refused(&mut self, api: &str, key: &str) {
        for id in self.regs.nodes_with_api(api) {
            let subscribed: Vec<String> = self
                .regs
                .param_subscribers
                .entries()
                .iter()
                .filter(|(k, nodes)| key.starts_with(k.as_str()) && nodes.iter().any(|(n, a)| *n == id && a == api))
                .map(|(k, _)| k.clone())
                .collect();
            for k in subscribed {
                self.regs.unregister(Kind::ParamSubscriber, &k, &id, api);
            }
        }
    }

    /// One validated call. `Ok(Ok(reply))`, `Ok(Err((code, msg)))` for a failure rosmaster
    /// reports with its method's error value, `Err(msg)` for a refused argument.
    #[allow(clippy::type_complexity)]
    fn dispatch(
        &mut self,
        method: &str,
        caller: &str,
        args: &[Value],
        notes: &mut Vec<Notification>,
    ) -> Result<Result<Value, (i32, String)>, Invalid> {
        let arg = |i: usize| args.get(i).unwrap_or(&Value::Nil);
        Ok(Ok(match method {
            "getUri" => triple(1, "", Value::Str(self.uri.clone())),
            "getPid" => triple(1, "", Value::Int(self.pid)),
            "shutdown" => {
                self.shutdown_requested = true;
                triple(1, "shutdown", Value::Int(0))
            }

            "getParam" => {
                let key = resolve(&non_empty_str(arg(0), "key")?, caller);
                match self.params.get(&key) {
                    Some(v) => triple(1, format!("Parameter [{key}]"), v),
                    None => triple(-1, format!("Parameter [{key}] is not set"), Value::Int(0)),
                }
            }
            "hasParam" => {
                let key = resolve(&non_empty_str(arg(0), "key")?, caller);
                let has = self.params.has(&key);
                triple(1, key, Value::Bool(has))
            }
            "setParam" => {
                let key = resolve(&non_empty_str(arg(0), "key")?, caller);
                let value = not_none(arg(1), "value")?;
                if let Err(SetError::RootNotAStruct) = self.params.set(&key, value) {
                    return Ok(Err((
                        -1,
                        "Error: invalid arguments: cannot set root of parameter tree to non-dictionary".into(),
                    )));
                }
                // Notify with the value as stored (a struct normalised as a dict).
                let stored = self.params.get(&key).unwrap_or_else(empty_struct);
                self.notify_params(&key, &stored, Some(caller), notes);
                triple(1, format!("parameter {key} set"), Value::Int(0))
            }
            "deleteParam" => {
                let key = resolve(&non_empty_str(arg(0), "key")?, caller);
                if key == "/" || !self.params.delete(&key) {
                    triple(-1, format!("parameter [{key}] is not set"), Value::Int(0))
                } else {
                    self.notify_params(&key, &empty_struct(), None, notes);
                    triple(1, format!("parameter {key} deleted"), Value::Int(0))
                }
            }
            "searchParam" => {
                let key = non_empty_str(arg(0), "key")?;
                match self.params.search(caller, &key) {
                    Ok(Some(found)) => triple(1, format!("Found [{found}]"), Value::Str(found)),
                    Ok(None) => triple(
                        -1,
                        format!("Cannot find parameter [{key}] in an upwards search"),
                        Value::Str(String::new()),
                    ),
                    Err(why) => return Ok(Err((0, format!("Internal failure: {why}")))),
                }
            }
            "subscribeParam" => {
                let api = is_api(arg(0), "caller_api")?;
                let key = resolve(&non_empty_str(arg(1), "key")?, caller);
                let sub_key = subscription_key(&key);
                let value = self.params.get(&sub_key).unwrap_or_else(empty_struct);
                self.register(Kind::ParamSubscriber, &sub_key, caller, &api, None, notes);
                triple(1, format!("Subscribed to parameter [{key}]"), value)
            }
            "unsubscribeParam" => {
                let api = is_api(arg(0), "caller_api")?;
                let key = resolve(&non_empty_str(arg(1), "key")?, caller);
                self.regs.unregister(Kind::ParamSubscriber, &subscription_key(&key), caller, &api);
                triple(1, format!("Unsubscribe to parameter [{key}]"), Value::Int(1))
            }
            "getParamNames" => triple(1, "Parameter names", strs(self.params.names())),

            "registerService" => {
                let service = is_topic(arg(0), "service", caller)?;
                let service_api = is_api(arg(1), "service_api")?;
                let api = is_api(arg(2), "caller_api")?;
                self.register(Kind::Service, &service, caller, &api, Some(&service_api), notes);
                triple(1, format!("Registered [{caller}] as provider of [{service}]"), Value::Int(1))
            }
            "lookupService" => {
                let service = is_topic(arg(0), "service", caller)?;
                match self.regs.service_api(&service) {
                    Some(u) => triple(1, format!("rosrpc URI: [{u}]"), Value::Str(u.to_string())),
                    None => triple(-1, "no provider", Value::Str(String::new())),
                }
            }
            "unregisterService" => {
                let service = is_topic(arg(0), "service", caller)?;
                let service_api = is_api(arg(1), "service_api")?;
                let (code, msg, n) = self.regs.unregister_service(&service, caller, &service_api);
                triple(code, msg, Value::Int(n))
            }

            "registerSubscriber" => {
                let topic = is_topic(arg(0), "topic", caller)?;
                let ty = valid_type_name(arg(1), "topic_type")?;
                let api = is_api(arg(2), "caller_api")?;
                self.register(Kind::Subscriber, &topic, caller, &api, None, notes);
                if ty != "*" && !self.topic_types.iter().any(|(t, _)| *t == topic) {
                    self.topic_types.push((topic.clone(), ty));
                }
                triple(1, format!("Subscribed to [{topic}]"), strs(self.regs.publishers.apis(&topic)))
            }
            "unregisterSubscriber" => {
                let topic = is_topic(arg(0), "topic", caller)?;
                let api = is_api(arg(1), "caller_api")?;
                let (code, msg, n) = self.regs.unregister(Kind::Subscriber, &topic, caller, &api);
                triple(code, msg, Value::Int(n))
            }
            "registerPublisher" => {
                let topic = is_topic(arg(0), "topic", caller)?;
                let ty = valid_type_name(arg(1), "topic_type")?;
                let api = is_api(arg(2), "caller_api")?;
                self.register(Kind::Publisher, &topic, caller, &api, None, notes);
                match self.topic_types.iter_mut().find(|(t, _)| *t == topic) {
                    Some(slot) if ty != "*" => slot.1 = ty,
                    Some(_) => {}
                    None => self.topic_types.push((topic.clone(), ty)),
                }
                self.notify_publishers(&topic, notes);
                let subs = self.regs.subscribers.apis(&topic);
                triple(1, format!("Registered [{caller}] as publisher of [{topic}]"), strs(subs))
            }
            "unregisterPublisher" => {
                let topic = is_topic(arg(0), "topic", caller)?;
                let api = is_api(arg(1), "caller_api")?;
                let (code, msg, n) = self.regs.unregister(Kind::Publisher, &topic, caller, &api);
                if n == 1 {
                    self.notify_publishers(&topic, notes);
                }
                triple(code, msg, Value::Int(n))
            }

            "lookupNode" => {
                let node = valid_name(arg(0), "node", caller)?;
                match self.regs.node(&node) {
                    Some(n) => triple(1, "node api", Value::Str(n.api.clone())),
                    None => triple(-1, format!("unknown node [{node}]"), Value::Str(String::new())),
                }
            }
            "getPublishedTopics" => {
                let mut subgraph = empty_or_valid_name(arg(0), "subgraph", caller)?;
                if !subgraph.is_empty() && !subgraph.ends_with('/') {
                    subgraph.push('/');
                }
                let topics = self
                    .regs
                    .publishers
                    .keys()
                    .filter(|t| t.starts_with(&subgraph))
                    .map(|t| {
                        let ty =
                            self.topic_types.iter().find(|(x, _)| x == t).map(|(_, y)| y.clone()).unwrap_or_default();
                        Value::Array(vec![Value::Str(t.to_string()), Value::Str(ty)])
                    })
                    .collect();
                triple(1, "current topics", Value::Array(topics))
            }
            "getTopicTypes" => {
                let types = self
                    .topic_types
                    .iter()
                    .map(|(t, y)| Value::Array(vec![Value::Str(t.clone()), Value::Str(y.clone())]))
                    .collect();
                triple(1, "current system state", Value::Array(types))
            }
            "getSystemState" => {
                let state = Value::Array(vec![
                    self.regs.publishers.state(),
                    self.regs.subscribers.state(),
                    self.regs.services.state(),
                ]);
                triple(1, "current system state", state)
            }
            _ => return Ok(Err((0, format!("Internal failure: no handler for {method}")))),
        }))
    }

    /// Registers, and tells a node instance that lost its name to shut down.
    fn register(
        &mut self,
        kind: Kind,
        key: &str,
        caller: &str,
        api: &str,
        service_api: Option<&str>,
        notes: &mut Vec<Notification>,
    ) {
        if let Some(old) = self.regs.register(kind, key, caller, api, service_api) {
            notes.push(Notification {
                api: old,
                callback: Callback::Shutdown {
                    reason: format!("[{caller}] Reason: new node registered with same name"),
                },
            });
        }
    }

    /// `publisherUpdate` to every subscriber of `topic` with its current publishers.
    fn notify_publishers(&self, topic: &str, notes: &mut Vec<Notification>) {
        let publishers = self.regs.publishers.apis(topic);
        for api in self.regs.subscribers.apis(topic) {
            notes.push(Notification {
                api,
                callback: Callback::PublisherUpdate { topic: topic.to_string(), publishers: publishers.clone() },
            });
        }
    }

    /// `paramUpdate` to the parameter's subscribers, in subscription order.
    fn notify_params(&self, key: &str, value: &Value, ignore: Option<&str>, notes: &mut Vec<Notification>) {
        for u in updates(self.regs.param_subscribers.entries(), key, value, ignore) {
            for (_, api) in u.nodes {
                notes.push(Notification {
                    api,
                    callback: Callback::ParamUpdate { key: u.key.clone(), value: u.value.clone() },
                });
            }
        }
    }
}

/// A parameter subscription's key: canonical, with a trailing slash (`/` stays `/`).
fn subscription_key(key: &str) -> String {
    if key == "/" {
        key.to_string()
    } else {
        format!("{}/", canonicalize(key))
    }
}
