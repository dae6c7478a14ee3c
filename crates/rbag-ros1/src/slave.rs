//! The node ("slave") XML-RPC API that the master and other nodes call: `requestTopic`,
//! `publisherUpdate`, `paramUpdate`, `getPublications`, `getSubscriptions`, `getBusInfo`,
//! `getBusStats`, `getPid`, `getMasterUri` and `shutdown`. Replies follow rospy's shapes.

use std::sync::Arc;

use crate::xmlrpc::Value;

/// One row of `getBusInfo`.
pub(crate) struct BusInfo {
    pub id: u64,
    pub peer: String,
    pub outbound: bool,
    pub topic: String,
}

/// What the slave API asks of a node. The node's shared state implements it, so this module
/// needs nothing from `node` (which serves this API).
pub(crate) trait SlaveApi {
    /// The master this node registers with.
    fn master_uri(&self) -> &str;
    /// (topic, type) of each publication.
    fn publications(&self) -> Vec<(String, String)>;
    /// (topic, type) of each subscription.
    fn subscriptions(&self) -> Vec<(String, String)>;
    /// Whether the node publishes `topic`.
    fn publishes(&self, topic: &str) -> bool;
    /// Host and port of the node's TCPROS server.
    fn tcpros_address(&self) -> (String, u16);
    /// The node's links.
    fn bus_info(&self) -> Vec<BusInfo>;
    /// Records a `shutdown` call.
    fn request_shutdown(&self, why: &str);
    /// The master's list of publishers for `topic`.
    fn publisher_update(self: &Arc<Self>, topic: &str, uris: Vec<String>);
}

fn reply(code: i32, msg: impl Into<String>, v: Value) -> Value {
    Value::Array(vec![Value::Int(code), Value::Str(msg.into()), v])
}

fn topic_types(list: Vec<(String, String)>) -> Value {
    Value::Array(list.into_iter().map(|(t, ty)| Value::Array(vec![t.into(), ty.into()])).collect())
}

/// Answers one slave API call for `node`. The first parameter of every method is the caller id.
pub(crate) fn dispatch<N: SlaveApi>(node: &Arc<N>, method: &str, params: Vec<Value>) -> Result<Value, (i32, String)> {
    let arity = |n: usize| params.len() == n;
    let bad_arity = || Ok(reply(-1, "Error: bad call arity", Value::Int(0)));
    Ok(match method {
        "getPid" if arity(1) => reply(1, "", Value::Int(std::process::id() as i32)),
        "getMasterUri" if arity(1) => reply(1, "", node.master_uri().into()),
        "getPublications" if arity(1) => reply(1, "publications", topic_types(node.publications())),
        "getSubscriptions" if arity(1) => reply(1, "subscriptions", topic_types(node.subscriptions())),
        "getBusStats" if arity(1) => reply(
            1,
            "",
            Value::Array(vec![
                Value::Array(vec![]),
                Value::Array(vec![]),
                Value::Array(vec![0.into(), 0.into(), 0.into()]),
            ]),
        ),
        "getBusInfo" if arity(1) => {
            let rows = node
                .bus_info()
                .into_iter()
                .map(|b| {
                    Value::Array(vec![
                        Value::Int(b.id as i32),
                        b.peer.into(),
                        (if b.outbound { "o" } else { "i" }).into(),
                        "TCPROS".into(),
                        b.topic.into(),
                        true.into(),
                    ])
                })
                .collect();
            reply(1, "bus info", Value::Array(rows))
        }
        "shutdown" if params.len() == 1 || params.len() == 2 => {
            let why = params.get(1).and_then(Value::as_str).unwrap_or("").to_string();
            node.request_shutdown(&why);
            reply(1, "shutdown", Value::Int(0))
        }
        "paramUpdate" if arity(3) => reply(1, "", Value::Int(0)),
        "publisherUpdate" if arity(3) => {
            let (Some(topic), Some(list)) = (params[1].as_str(), params[2].as_array()) else {
                return Ok(reply(-1, "publisherUpdate: expected a topic and a list of URIs", Value::Int(0)));
            };
            let uris = list.iter().filter_map(Value::as_str).map(str::to_string).collect();
            node.publisher_update(topic, uris);
            reply(1, "", Value::Int(0))
        }
        "requestTopic" if arity(3) => {
            let Some(topic) = params[1].as_str() else {
                return Ok(reply(-1, "requestTopic: the topic is not a string", Value::Int(0)));
            };
            if !node.publishes(topic) {
                return Ok(reply(-1, format!("Not a publisher of [{topic}]"), Value::Array(vec![])));
            }
            let tcpros = params[2]
                .as_array()
                .unwrap_or_default()
                .iter()
                .any(|p| p.as_array().and_then(|p| p.first()).and_then(Value::as_str) == Some("TCPROS"));
            if !tcpros {
                return Ok(reply(0, "no supported protocol implementations", Value::Array(vec![])));
            }
            let (host, port) = node.tcpros_address();
            reply(
                1,
                format!("ready on {host}:{port}"),
                Value::Array(vec!["TCPROS".into(), host.into(), Value::Int(i32::from(port))]),
            )
        }
        "getPid" | "getMasterUri" | "getPublications" | "getSubscriptions" | "getBusStats" | "getBusInfo"
        | "shutdown" | "paramUpdate" | "publisherUpdate" | "requestTopic" => return bad_arity(),
        other => return Err((1, format!("<class 'Exception'>:method \"{other}\" is not supported"))),
    })
}
