//! A ROS 1 node: its slave API server, its TCPROS server, its publications and subscriptions,
//! and its registrations with the master.
//!
//! Subscriptions follow the graph: the master's `publisherUpdate` adds and removes publisher
//! links, and a link that drops while its publisher is still listed is retried with backoff.
//! Each link runs on its own thread and hands raw message bytes to the subscriber's callback:
//! nothing here deserializes.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use bytes::Bytes;

use crate::master_client::{MasterClient, MasterError};
use crate::names::NodeConfig;
use crate::slave::{BusInfo, SlaveApi};
use crate::tcpros::{
    self, Header, LinkCloser, Publication, SubscribeRequest, TcprosError, TcprosServer, TopicPublisher,
};
use crate::xmlrpc::{self, Value};

/// Something a subscription's links report. Callbacks run on the link's thread.
#[derive(Debug)]
pub enum SubEvent {
    /// A link to a publisher is up; `header` is the publisher's reply (type, md5sum,
    /// message_definition, callerid, latching).
    Connected {
        /// The link's id, unique in the node.
        link: u64,
        /// The topic.
        topic: String,
        /// The publisher's slave API URI.
        publisher: String,
        /// The publisher's connection header.
        header: Header,
    },
    /// One message, as raw bytes, with its receive time (ns since the epoch).
    Message {
        /// The link it came on.
        link: u64,
        /// When it was received (ns since the epoch).
        received_ns: u64,
        /// The serialised message.
        data: Bytes,
    },
    /// The link ended. `error` says why when it was not a clean close.
    Closed {
        /// The link.
        link: u64,
        /// The topic.
        topic: String,
        /// The publisher's slave API URI.
        publisher: String,
        /// Why, when it was not a clean close.
        error: Option<String>,
    },
}

/// Called for every event of a subscription.
pub type SubHandler = Arc<dyn Fn(SubEvent) + Send + Sync>;

/// Why a node operation failed.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// A master call failed.
    #[error(transparent)]
    Master(#[from] MasterError),
    /// The TCPROS server or a link failed.
    #[error(transparent)]
    Tcpros(#[from] TcprosError),
    /// The slave API server could not start.
    #[error("cannot serve the node API on {host}: {source}")]
    Bind {
        /// The host it was to listen on.
        host: String,
        /// What the system said.
        source: std::io::Error,
    },
}

struct LinkState {
    id: u64,
    closer: Option<LinkCloser>,
    /// Still listed by the master; a dropped link is retried only while this holds.
    wanted: bool,
}

struct Subscription {
    msg_type: String,
    tcp_nodelay: bool,
    handler: SubHandler,
    links: BTreeMap<String, LinkState>,
    /// A `publisherUpdate` came: the master sends one only for changes after this node
    /// registered, so the `registerSubscriber` reply, when read later, is older news.
    updated: bool,
}

/// Shared state behind a [`Node`]; the slave API and the link threads hold it too.
pub struct Inner {
    config: NodeConfig,
    master: MasterClient,
    slave_uri: String,
    tcpros: Arc<TcprosServer>,
    limits: tcpros::Limits,
    pubs: Mutex<BTreeMap<String, (String, Arc<TopicPublisher>)>>,
    subs: Mutex<BTreeMap<String, Subscription>>,
    next_link: AtomicU64,
    closing: AtomicBool,
    shutdown: (Mutex<Option<String>>, Condvar),
    /// The slave API server, stopped by [`Node::shutdown`].
    server: Mutex<Option<xmlrpc::Server>>,
    /// Services served: (name, rosrpc URI), for unregistering.
    services: Mutex<Vec<(String, String)>>,
}

/// A node in a ROS 1 graph. Dropping it does not unregister: call [`Node::shutdown`].
#[derive(Clone)]
pub struct Node {
    inner: Arc<Inner>,
}

struct SlaveHandler(Arc<Inner>);

impl xmlrpc::Handler for SlaveHandler {
    fn call(&self, method: &str, params: Vec<Value>) -> Result<Value, (i32, String)> {
        crate::slave::dispatch(&self.0, method, params)
    }
}

/// Nanoseconds since the epoch: rbag's one wall clock, re-exported where link threads stamp
/// messages.
pub use rbag_transport::now_ns;

impl Node {
    /// Starts the node's servers. Nothing is registered with the master yet, and the master
    /// is not contacted.
    pub fn start(config: NodeConfig, limits: tcpros::Limits) -> Result<Node, NodeError> {
        let bind_host = if config.host == "localhost" { "127.0.0.1".to_string() } else { config.host.clone() };
        let listener = TcpListener::bind((bind_host.as_str(), 0))
            .or_else(|_| TcpListener::bind(("0.0.0.0", 0)))
            .map_err(|e| NodeError::Bind { host: bind_host.clone(), source: e })?;
        let port = listener.local_addr().map_err(|e| NodeError::Bind { host: bind_host.clone(), source: e })?.port();
        let tcpros = TcprosServer::bind_with_limits(&bind_host, limits)
            .or_else(|_| TcprosServer::bind_with_limits("0.0.0.0", limits))?;
        let master = MasterClient::new(&config.master_uri, &config.name)?;
        let slave_uri = format!("http://{}:{port}/", config.host);
        let inner = Arc::new(Inner {
            config,
            master,
            slave_uri,
            tcpros,
            limits,
            pubs: Mutex::new(BTreeMap::new()),
            subs: Mutex::new(BTreeMap::new()),
            next_link: AtomicU64::new(1),
            closing: AtomicBool::new(false),
            shutdown: (Mutex::new(None), Condvar::new()),
            server: Mutex::new(None),
            services: Mutex::new(Vec::new()),
        });
        let handler = Arc::new(SlaveHandler(inner.clone()));
        let server =
            xmlrpc::Server::start(listener, handler).map_err(|e| NodeError::Bind { host: bind_host, source: e })?;
        *inner.server.lock().unwrap_or_else(|p| p.into_inner()) = Some(server);
        Ok(Node { inner })
    }

    /// The node's name, namespace, master and remappings.
    pub fn config(&self) -> &NodeConfig {
        &self.inner.config
    }

    /// The node's resolved name.
    pub fn name(&self) -> &str {
        &self.inner.config.name
    }

    /// This node's slave API URI.
    pub fn uri(&self) -> &str {
        &self.inner.slave_uri
    }

    /// The client the node calls the master with.
    pub fn master(&self) -> &MasterClient {
        &self.inner.master
    }

    /// Advertises a topic and registers it with the master.
    pub fn advertise(&self, publication: Publication) -> Result<Arc<TopicPublisher>, NodeError> {
        let topic = publication.topic.clone();
        let msg_type = publication.msg_type.clone();
        let publisher = self.inner.tcpros.advertise(publication)?;
        self.inner
            .pubs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(topic.clone(), (msg_type.clone(), publisher.clone()));
        if let Err(e) = self.inner.master.register_publisher(&topic, &msg_type, &self.inner.slave_uri) {
            self.inner.pubs.lock().unwrap_or_else(|p| p.into_inner()).remove(&topic);
            self.inner.tcpros.unadvertise(&topic);
            return Err(e.into());
        }
        Ok(publisher)
    }

    /// Serves a service (`def.name` resolved) on this node's TCPROS port and registers it with
    /// the master.
    pub fn advertise_service(&self, def: crate::tcpros::ServiceDef) -> Result<(), NodeError> {
        let name = def.name.clone();
        let (host, port) = self.inner.tcpros_address();
        let api = format!("rosrpc://{host}:{port}");
        self.inner.tcpros.advertise_service(def);
        if let Err(e) = self.inner.master.register_service(&name, &api, &self.inner.slave_uri) {
            self.inner.tcpros.unadvertise_service(&name);
            return Err(e.into());
        }
        self.inner.services.lock().unwrap_or_else(|p| p.into_inner()).push((name, api));
        Ok(())
    }

    /// Subscribes to `topic` (already resolved) with type `msg_type` (`*` takes any), and
    /// connects to every publisher the master lists, now and later.
    pub fn subscribe(
        &self,
        topic: &str,
        msg_type: &str,
        tcp_nodelay: bool,
        handler: SubHandler,
    ) -> Result<(), NodeError> {
        {
            let mut subs = self.inner.subs.lock().unwrap_or_else(|p| p.into_inner());
            if subs.contains_key(topic) {
                return Ok(());
            }
            subs.insert(
                topic.to_string(),
                Subscription {
                    msg_type: msg_type.to_string(),
                    tcp_nodelay,
                    handler,
                    links: BTreeMap::new(),
                    updated: false,
                },
            );
        }
        match self.inner.master.register_subscriber(topic, msg_type, &self.inner.slave_uri) {
            Ok(publishers) => {
                // The reply can be read after a `publisherUpdate` the master sent later (the two
                // travel on different connections); then the update is the newer list.
                self.inner.connect_publishers(topic, publishers, false);
                Ok(())
            }
            Err(e) => {
                self.inner.subs.lock().unwrap_or_else(|p| p.into_inner()).remove(topic);
                Err(e.into())
            }
        }
    }

    /// Stops subscribing to `topic`: unregisters it (best effort) and closes its links.
    pub fn unsubscribe(&self, topic: &str) {
        let sub = self.inner.subs.lock().unwrap_or_else(|p| p.into_inner()).remove(topic);
        if let Some(sub) = sub {
            let _ = self.inner.master.unregister_subscriber(topic, &self.inner.slave_uri);
            for link in sub.links.into_values() {
                if let Some(c) = link.closer {
                    c.close();
                }
            }
        }
    }

    /// Whether this node already subscribes to `topic`.
    pub fn is_subscribed(&self, topic: &str) -> bool {
        self.inner.subs.lock().unwrap_or_else(|p| p.into_inner()).contains_key(topic)
    }

    /// Waits up to `timeout` for a `shutdown` call from the graph (e.g. `rosnode kill`);
    /// returns its reason.
    pub fn wait_shutdown_request(&self, timeout: Duration) -> Option<String> {
        let (lock, cv) = &self.inner.shutdown;
        let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = cv.wait_timeout_while(guard, timeout, |r| r.is_none()).unwrap_or_else(|p| p.into_inner());
        guard.clone()
    }

    /// Unregisters everything from the master (best effort) and closes every link.
    pub fn shutdown(&self) {
        let inner = &self.inner;
        inner.closing.store(true, Ordering::SeqCst);
        let subs = std::mem::take(&mut *inner.subs.lock().unwrap_or_else(|p| p.into_inner()));
        for (topic, sub) in subs {
            let _ = inner.master.unregister_subscriber(&topic, &inner.slave_uri);
            for link in sub.links.into_values() {
                if let Some(c) = link.closer {
                    c.close();
                }
            }
        }
        let services = std::mem::take(&mut *inner.services.lock().unwrap_or_else(|p| p.into_inner()));
        for (name, api) in services {
            let _ = inner.master.unregister_service(&name, &api);
            inner.tcpros.unadvertise_service(&name);
        }
        let pubs = std::mem::take(&mut *inner.pubs.lock().unwrap_or_else(|p| p.into_inner()));
        for topic in pubs.keys() {
            let _ = inner.master.unregister_publisher(topic, &inner.slave_uri);
            inner.tcpros.unadvertise(topic);
        }
        inner.tcpros.shutdown();
        if let Some(server) = inner.server.lock().unwrap_or_else(|p| p.into_inner()).take() {
            server.shutdown();
        }
    }
}

impl SlaveApi for Inner {
    fn master_uri(&self) -> &str {
        self.master.uri()
    }

    fn publications(&self) -> Vec<(String, String)> {
        let pubs = self.pubs.lock().unwrap_or_else(|p| p.into_inner());
        pubs.iter().map(|(t, (ty, _))| (t.clone(), ty.clone())).collect()
    }

    fn subscriptions(&self) -> Vec<(String, String)> {
        let subs = self.subs.lock().unwrap_or_else(|p| p.into_inner());
        subs.iter().map(|(t, s)| (t.clone(), s.msg_type.clone())).collect()
    }

    fn publishes(&self, topic: &str) -> bool {
        self.pubs.lock().unwrap_or_else(|p| p.into_inner()).contains_key(topic)
    }

    fn tcpros_address(&self) -> (String, u16) {
        (self.config.host.clone(), self.tcpros.port())
    }

    fn bus_info(&self) -> Vec<BusInfo> {
        let subs = self.subs.lock().unwrap_or_else(|p| p.into_inner());
        let mut rows = Vec::new();
        for (topic, s) in subs.iter() {
            for (uri, l) in &s.links {
                rows.push(BusInfo { id: l.id, peer: uri.clone(), outbound: false, topic: topic.clone() });
            }
        }
        rows
    }

    fn request_shutdown(&self, why: &str) {
        let (lock, cv) = &self.shutdown;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.to_string());
        cv.notify_all();
    }

    /// The master's list of publishers for `topic`: new ones get a link, gone ones lose theirs.
    fn publisher_update(self: &Arc<Inner>, topic: &str, uris: Vec<String>) {
        self.connect_publishers(topic, uris, true);
    }
}

impl Inner {
    /// Makes `topic`'s links those of `uris`: new publishers get a link, gone ones lose theirs.
    /// `update` says the list is a `publisherUpdate`; the `registerSubscriber` reply is
    /// ignored once one came.
    fn connect_publishers(self: &Arc<Inner>, topic: &str, uris: Vec<String>, update: bool) {
        let mut start = Vec::new();
        {
            let mut subs = self.subs.lock().unwrap_or_else(|p| p.into_inner());
            let Some(sub) = subs.get_mut(topic) else { return };
            if !update && sub.updated {
                return;
            }
            sub.updated |= update;
            for (uri, link) in sub.links.iter_mut() {
                if !uris.contains(uri) {
                    link.wanted = false;
                    if let Some(c) = link.closer.take() {
                        c.close();
                    }
                }
            }
            sub.links.retain(|_, l| l.wanted);
            for uri in uris {
                if uri == self.slave_uri || sub.links.contains_key(&uri) {
                    continue;
                }
                let id = self.next_link.fetch_add(1, Ordering::Relaxed);
                sub.links.insert(uri.clone(), LinkState { id, closer: None, wanted: true });
                start.push((uri, id));
            }
        }
        for (uri, id) in start {
            let this = self.clone();
            let topic = topic.to_string();
            let _ = std::thread::Builder::new()
                .name(format!("ros1-link-{id}"))
                .spawn(move || run_link(this, topic, uri, id));
        }
    }

    /// Whether the link `id` on `topic` should still be (re)connected.
    fn link_wanted(&self, topic: &str, uri: &str, id: u64) -> bool {
        if self.closing.load(Ordering::SeqCst) {
            return false;
        }
        let subs = self.subs.lock().unwrap_or_else(|p| p.into_inner());
        subs.get(topic).and_then(|s| s.links.get(uri)).is_some_and(|l| l.id == id && l.wanted)
    }

    fn handler(&self, topic: &str) -> Option<(SubHandler, SubscribeRequest)> {
        let subs = self.subs.lock().unwrap_or_else(|p| p.into_inner());
        let s = subs.get(topic)?;
        let req = SubscribeRequest {
            topic: topic.to_string(),
            caller_id: self.config.name.clone(),
            msg_type: s.msg_type.clone(),
            md5sum: "*".into(),
            message_definition: None,
            tcp_nodelay: s.tcp_nodelay,
        };
        Some((s.handler.clone(), req))
    }

    fn set_closer(&self, topic: &str, uri: &str, id: u64, closer: Option<LinkCloser>) -> bool {
        let mut subs = self.subs.lock().unwrap_or_else(|p| p.into_inner());
        match subs.get_mut(topic).and_then(|s| s.links.get_mut(uri)) {
            Some(l) if l.id == id && l.wanted && !self.closing.load(Ordering::SeqCst) => {
                l.closer = closer;
                true
            }
            _ => false,
        }
    }
}

/// Asks a publisher's slave API for a TCPROS endpoint.
fn request_topic(node: &Inner, publisher: &str, topic: &str) -> Result<String, String> {
    let params = [
        Value::from(node.config.name.as_str()),
        Value::from(topic),
        Value::Array(vec![Value::Array(vec!["TCPROS".into()])]),
    ];
    let mut client = xmlrpc::Client::new(publisher).map_err(|e| e.to_string())?.with_timeout(Duration::from_secs(5));
    let reply = client.call("requestTopic", &params).map_err(|e| e.to_string())?;
    let parts = reply.as_array().unwrap_or_default();
    match parts {
        [code, msg, proto] if code.as_i32() == Some(1) => match proto.as_array().unwrap_or_default() {
            [name, host, port] if name.as_str() == Some("TCPROS") => match (host.as_str(), port.as_i32()) {
                (Some(h), Some(p)) if (1..=65535).contains(&p) => Ok(format!("{h}:{p}")),
                _ => Err(format!("requestTopic reply has a bad host/port: {reply:?}")),
            },
            _ => Err(format!("requestTopic: publisher offers no TCPROS ({})", msg.as_str().unwrap_or(""))),
        },
        [_, msg, _] => Err(format!("requestTopic refused: {}", msg.as_str().unwrap_or(""))),
        _ => Err(format!("requestTopic: unexpected reply {reply:?}")),
    }
}

/// One publisher link: connect, deliver, and reconnect with backoff while the publisher is
/// still listed. A publisher that refuses the connection (`error=` header) is not retried,
/// as roscpp does.
fn run_link(node: Arc<Inner>, topic: String, publisher: String, id: u64) {
    let mut backoff = Duration::from_millis(100);
    while node.link_wanted(&topic, &publisher, id) {
        let Some((handler, req)) = node.handler(&topic) else { return };
        let result = request_topic(&node, &publisher, &topic).map_err(|e| (e, false)).and_then(|addr| {
            tcpros::connect(&addr, &req, &node.limits, Duration::from_secs(5))
                .map_err(|e| (e.to_string(), matches!(e, TcprosError::Refused { .. })))
        });
        let mut link = match result {
            Ok(l) => l,
            Err((error, refused)) => {
                handler(SubEvent::Closed {
                    link: id,
                    topic: topic.clone(),
                    publisher: publisher.clone(),
                    error: Some(error),
                });
                if refused {
                    return;
                }
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        if !node.set_closer(&topic, &publisher, id, Some(link.closer())) {
            link.closer().close();
            return;
        }
        let connected = std::time::Instant::now();
        handler(SubEvent::Connected {
            link: id,
            topic: topic.clone(),
            publisher: publisher.clone(),
            header: link.header().clone(),
        });
        let error = loop {
            match link.next_message() {
                Ok(Some(data)) => handler(SubEvent::Message { link: id, received_ns: now_ns(), data }),
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        let refused = matches!(error, Some(TcprosError::Refused { .. }));
        handler(SubEvent::Closed {
            link: id,
            topic: topic.clone(),
            publisher: publisher.clone(),
            error: error.map(|e| e.to_string()),
        });
        node.set_closer(&topic, &publisher, id, None);
        if refused {
            return;
        }
        // A link that lived a while starts over; one that broke at once (a peer that sends a
        // header and then garbage) backs off further, so it cannot flood the log.
        backoff = if connected.elapsed() >= Duration::from_secs(1) {
            Duration::from_millis(100)
        } else {
            (backoff * 2).min(Duration::from_secs(5))
        };
        std::thread::sleep(backoff);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::master::Master;

    /// A `registerSubscriber` reply listing no publisher, read after the master's later
    /// `publisherUpdate` already started a link, must not close it (the recorder lost every
    /// message of a test that way on a loaded machine); a later update still rules.
    #[test]
    fn a_stale_register_reply_keeps_links_that_an_update_started() {
        let master = Master::start("127.0.0.1:0".parse().expect("address")).expect("master");
        let config = NodeConfig {
            name: "/listener".into(),
            namespace: "/".into(),
            master_uri: master.uri().into(),
            host: "127.0.0.1".into(),
            remaps: Default::default(),
        };
        let node = Node::start(config, tcpros::Limits::default()).expect("node");
        node.subscribe("/x", "*", true, Arc::new(|_| {})).expect("subscribe");
        let talker = "http://127.0.0.1:9/".to_string();
        node.inner.publisher_update("/x", vec![talker.clone()]);
        node.inner.connect_publishers("/x", Vec::new(), false);
        let peers: Vec<String> = node.inner.bus_info().into_iter().map(|b| b.peer).collect();
        assert_eq!(peers, std::slice::from_ref(&talker));
        node.inner.publisher_update("/x", Vec::new());
        assert!(node.inner.bus_info().is_empty(), "the master's update is authoritative");
        node.inner.connect_publishers("/x", vec![talker], false);
        assert!(node.inner.bus_info().is_empty(), "a stale reply does not bring back a publisher that left");
        node.shutdown();
    }
}
