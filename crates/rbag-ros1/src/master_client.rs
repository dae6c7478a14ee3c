//! The master's XML-RPC API as typed calls. Every reply is `[code, statusMessage, value]`
//! (1 success, -1 caller error, 0 master failure); anything else becomes a [`MasterError`].

use std::sync::Mutex;
use std::time::Duration;

use crate::xmlrpc::{self, Client, Value};

/// A master call that failed or was refused.
#[derive(Debug, thiserror::Error)]
pub enum MasterError {
    /// Nothing answers at the master's URI.
    #[error("no ROS master answers at {uri}: {source}")]
    Unreachable {
        /// The master's URI.
        uri: String,
        /// How the connection failed.
        source: xmlrpc::Error,
    },
    /// A call failed on the way (HTTP, XML-RPC).
    #[error("ROS master at {uri}: {method}: {source}")]
    Rpc {
        /// The master's URI.
        uri: String,
        /// The master API method.
        method: String,
        /// What failed.
        source: xmlrpc::Error,
    },
    /// The master answered with an error code.
    #[error("ROS master at {uri} refused {method} (code {code}): {message}")]
    Refused {
        /// The master's URI.
        uri: String,
        /// The master API method.
        method: String,
        /// The status code (not 1).
        code: i32,
        /// The master's status message.
        message: String,
    },
    /// The reply does not have the shape the method's answer has.
    #[error("ROS master at {uri}: {method}: unexpected reply {reply}")]
    BadReply {
        /// The master's URI.
        uri: String,
        /// The master API method.
        method: String,
        /// The reply, as text.
        reply: String,
    },
}

/// Topics, with the nodes on each side, and services, as `getSystemState` gives them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemState {
    /// (topic, publishing nodes).
    pub publishers: Vec<(String, Vec<String>)>,
    /// (topic, subscribing nodes).
    pub subscribers: Vec<(String, Vec<String>)>,
    /// (service, serving nodes).
    pub services: Vec<(String, Vec<String>)>,
}

/// A client for the master, calling as one node (`caller_id`), on one kept connection.
pub struct MasterClient {
    uri: String,
    caller_id: String,
    client: Mutex<Client>,
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?.iter().map(|x| x.as_str().map(str::to_string)).collect()
}

fn pairs(v: &Value) -> Option<Vec<(String, String)>> {
    v.as_array()?
        .iter()
        .map(|p| match p.as_array()? {
            [a, b] => Some((a.as_str()?.to_string(), b.as_str()?.to_string())),
            _ => None,
        })
        .collect()
}

fn topic_nodes(v: &Value) -> Option<Vec<(String, Vec<String>)>> {
    v.as_array()?
        .iter()
        .map(|p| match p.as_array()? {
            [t, nodes] => Some((t.as_str()?.to_string(), strings(nodes)?)),
            _ => None,
        })
        .collect()
}

impl MasterClient {
    /// A client; nothing is sent until the first call.
    pub fn new(uri: &str, caller_id: &str) -> Result<MasterClient, MasterError> {
        let client = Client::new(uri)
            .map_err(|e| MasterError::Unreachable { uri: uri.to_string(), source: e })?
            .with_timeout(Duration::from_secs(10));
        Ok(MasterClient { uri: uri.to_string(), caller_id: caller_id.to_string(), client: Mutex::new(client) })
    }

    /// The master's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The node name calls are made as.
    pub fn caller_id(&self) -> &str {
        &self.caller_id
    }

    /// Calls `method(caller_id, args...)` and returns the value of a code-1 reply.
    pub fn call(&self, method: &str, args: Vec<Value>) -> Result<Value, MasterError> {
        let mut params = vec![Value::from(self.caller_id.as_str())];
        params.extend(args);
        let reply = {
            let mut client = self.client.lock().unwrap_or_else(|p| p.into_inner());
            client.call(method, &params)
        };
        let reply = reply.map_err(|e| match e {
            xmlrpc::Error::Io { .. } => MasterError::Unreachable { uri: self.uri.clone(), source: e },
            e => MasterError::Rpc { uri: self.uri.clone(), method: method.into(), source: e },
        })?;
        match reply {
            Value::Array(mut parts) if parts.len() == 3 => {
                let value = parts.pop().unwrap_or(Value::Nil);
                let message = parts[1].as_str().unwrap_or_default().to_string();
                match parts[0].as_i32() {
                    Some(1) => Ok(value),
                    Some(code) => {
                        Err(MasterError::Refused { uri: self.uri.clone(), method: method.into(), code, message })
                    }
                    None => Err(self.bad(method, &Value::Array(parts))),
                }
            }
            other => Err(self.bad(method, &other)),
        }
    }

    fn bad(&self, method: &str, reply: &Value) -> MasterError {
        let mut text = format!("{reply:?}");
        text.truncate(200);
        MasterError::BadReply { uri: self.uri.clone(), method: method.into(), reply: text }
    }

    fn typed<T>(&self, method: &str, args: Vec<Value>, f: impl Fn(&Value) -> Option<T>) -> Result<T, MasterError> {
        let v = self.call(method, args)?;
        f(&v).ok_or_else(|| self.bad(method, &v))
    }

    /// Whether a master answers (`getPid`).
    pub fn ping(&self) -> Result<i32, MasterError> {
        self.typed("getPid", vec![], Value::as_i32)
    }

    /// Registers this node as a publisher; returns the subscribers' slave URIs.
    pub fn register_publisher(
        &self,
        topic: &str,
        msg_type: &str,
        caller_api: &str,
    ) -> Result<Vec<String>, MasterError> {
        self.typed("registerPublisher", vec![topic.into(), msg_type.into(), caller_api.into()], strings)
    }

    /// Registers this node as a subscriber; returns the publishers' slave URIs.
    pub fn register_subscriber(
        &self,
        topic: &str,
        msg_type: &str,
        caller_api: &str,
    ) -> Result<Vec<String>, MasterError> {
        self.typed("registerSubscriber", vec![topic.into(), msg_type.into(), caller_api.into()], strings)
    }

    /// Registers a service at `service_api` (`rosrpc://host:port`).
    pub fn register_service(&self, service: &str, service_api: &str, caller_api: &str) -> Result<(), MasterError> {
        self.call("registerService", vec![service.into(), service_api.into(), caller_api.into()]).map(drop)
    }

    /// `unregisterService`.
    pub fn unregister_service(&self, service: &str, service_api: &str) -> Result<(), MasterError> {
        self.call("unregisterService", vec![service.into(), service_api.into()]).map(drop)
    }

    /// `unregisterPublisher`.
    pub fn unregister_publisher(&self, topic: &str, caller_api: &str) -> Result<(), MasterError> {
        self.call("unregisterPublisher", vec![topic.into(), caller_api.into()]).map(drop)
    }

    /// `unregisterSubscriber`.
    pub fn unregister_subscriber(&self, topic: &str, caller_api: &str) -> Result<(), MasterError> {
        self.call("unregisterSubscriber", vec![topic.into(), caller_api.into()]).map(drop)
    }

    /// Topics that have publishers, with their types.
    pub fn published_topics(&self) -> Result<Vec<(String, String)>, MasterError> {
        self.typed("getPublishedTopics", vec!["".into()], pairs)
    }

    /// Every topic type the master knows, published or not.
    pub fn topic_types(&self) -> Result<Vec<(String, String)>, MasterError> {
        self.typed("getTopicTypes", vec![], pairs)
    }

    /// `getSystemState`: every topic's publishers and subscribers, and the services.
    pub fn system_state(&self) -> Result<SystemState, MasterError> {
        self.typed("getSystemState", vec![], |v| match v.as_array()? {
            [p, s, r] => Some(SystemState {
                publishers: topic_nodes(p)?,
                subscribers: topic_nodes(s)?,
                services: topic_nodes(r)?,
            }),
            _ => None,
        })
    }

    /// A node's slave URI.
    pub fn lookup_node(&self, node: &str) -> Result<String, MasterError> {
        self.typed("lookupNode", vec![node.into()], |v| v.as_str().map(str::to_string))
    }

    /// A parameter, or `None` when it is not set.
    pub fn get_param(&self, key: &str) -> Result<Option<Value>, MasterError> {
        match self.call("getParam", vec![key.into()]) {
            Ok(v) => Ok(Some(v)),
            Err(MasterError::Refused { code: -1, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `setParam`.
    pub fn set_param(&self, key: &str, value: Value) -> Result<(), MasterError> {
        self.call("setParam", vec![key.into(), value]).map(drop)
    }

    /// `hasParam`.
    pub fn has_param(&self, key: &str) -> Result<bool, MasterError> {
        self.typed("hasParam", vec![key.into()], Value::as_bool)
    }

    /// Deletes a parameter; `false` when it was not set.
    pub fn delete_param(&self, key: &str) -> Result<bool, MasterError> {
        match self.call("deleteParam", vec![key.into()]) {
            Ok(_) => Ok(true),
            Err(MasterError::Refused { code: -1, .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The closest parameter named `key` up the caller's namespace, as `searchParam` finds it.
    pub fn search_param(&self, key: &str) -> Result<Option<String>, MasterError> {
        match self.call("searchParam", vec![key.into()]) {
            Ok(v) => Ok(v.as_str().map(str::to_string)),
            Err(MasterError::Refused { code: -1, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every parameter's full name (leaves only).
    pub fn param_names(&self) -> Result<Vec<String>, MasterError> {
        self.typed("getParamNames", vec![], strings)
    }

    /// A service's `rosrpc://` URI.
    pub fn lookup_service(&self, service: &str) -> Result<String, MasterError> {
        self.typed("lookupService", vec![service.into()], |v| v.as_str().map(str::to_string))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_unpacked_by_shape() {
        let v = Value::Array(vec![
            Value::Array(vec!["/a".into(), "t/A".into()]),
            Value::Array(vec!["/b".into(), "t/B".into()]),
        ]);
        assert_eq!(pairs(&v), Some(vec![("/a".into(), "t/A".into()), ("/b".into(), "t/B".into())]));
        assert_eq!(pairs(&Value::Array(vec![Value::Array(vec!["/a".into()])])), None);
        let s = Value::Array(vec![Value::Array(vec!["/t".into(), Value::Array(vec!["/n1".into(), "/n2".into()])])]);
        assert_eq!(topic_nodes(&s), Some(vec![("/t".into(), vec!["/n1".into(), "/n2".into()])]));
    }

    #[test]
    fn the_parameter_api_against_the_embedded_master() {
        let master = crate::master::Master::start("127.0.0.1:0".parse().unwrap()).unwrap();
        let m = MasterClient::new(master.uri(), "/ns/node").unwrap();
        assert!(m.ping().is_ok());
        m.set_param("/a/b", Value::Int(3)).unwrap();
        m.set_param("~p", "private".into()).unwrap();
        assert_eq!(m.get_param("/a/b").unwrap(), Some(Value::Int(3)));
        assert_eq!(m.get_param("/nope").unwrap(), None);
        assert!(m.has_param("/a").unwrap());
        assert_eq!(m.search_param("a").unwrap().as_deref(), Some("/a"));
        assert!(m.param_names().unwrap().contains(&"/ns/node/p".to_string()));
        assert!(m.delete_param("/a/b").unwrap());
        assert!(!m.delete_param("/a/b").unwrap());
        assert!(m.published_topics().unwrap().is_empty());
        m.register_publisher("/t", "std_msgs/String", "http://127.0.0.1:1/").unwrap();
        assert_eq!(m.published_topics().unwrap(), vec![("/t".to_string(), "std_msgs/String".to_string())]);
        assert_eq!(m.lookup_node("/ns/node").unwrap(), "http://127.0.0.1:1/");
        assert_eq!(m.system_state().unwrap().publishers, vec![("/t".to_string(), vec!["/ns/node".to_string()])]);
        assert!(matches!(m.lookup_service("/nosrv"), Err(MasterError::Refused { .. })));
        master.shutdown();
    }

    #[test]
    fn a_dead_master_is_unreachable_not_a_panic() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let m = MasterClient::new(&format!("http://127.0.0.1:{port}/"), "/t").unwrap();
        let e = m.ping().unwrap_err();
        assert!(matches!(e, MasterError::Unreachable { .. }), "{e}");
        assert!(e.to_string().contains(&port.to_string()), "{e}");
    }
}
