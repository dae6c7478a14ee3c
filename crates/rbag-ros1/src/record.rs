//! Recording a ROS 1 graph: which topics to subscribe to (now and as they appear), and turning
//! each publisher link into a bag connection whose messages go, as raw bytes, into the
//! [`RecordQueue`]. The writer side is `rbag-transport`'s.
//!
//! Like `rosbag record`, rbag subscribes with `type=*` and `md5sum=*`, so any type is taken,
//! and stores the publisher's reply header as the connection: `type`, `md5sum`,
//! `message_definition`, `callerid` and `latching`.

use rbag_storage::ros1::keys;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use rbag_storage::Connection;
use rbag_transport::throttle::Throttle;
use rbag_transport::{ConnKey, Push, RecordQueue, TopicSelection};

use crate::master_client::MasterError;
use crate::node::{Node, NodeError, SubEvent};
use crate::tcpros::Header;

/// Completes a connection before it is stored (e.g. a missing definition or MD5 sum filled
/// from known types). Returns a warning to print, if any.
pub type ConnectionHook = Arc<dyn Fn(&mut Connection) -> Option<String> + Send + Sync>;

/// Where the recorder's messages and warnings go.
pub type Log = Arc<dyn Fn(String) + Send + Sync>;

/// What to record and how to subscribe.
pub struct RecordSpec {
    /// With resolved names (`/ns/chatter`, remaps applied).
    pub selection: TopicSelection,
    /// `--node`: also every topic this node subscribes to.
    pub node: Option<String>,
    /// Ask publishers for TCP_NODELAY.
    pub tcp_nodelay: bool,
}

/// The connection a publisher's reply header describes.
pub fn connection_from_header(topic: &str, header: &Header) -> Connection {
    let mut metadata = std::collections::BTreeMap::new();
    metadata.insert(keys::MD5SUM.to_string(), header.get(keys::MD5SUM).unwrap_or("*").to_string());
    metadata.insert(keys::CALLERID.to_string(), header.get(keys::CALLERID).unwrap_or("").to_string());
    metadata.insert(keys::LATCHING.to_string(), header.get(keys::LATCHING).unwrap_or("0").to_string());
    Connection {
        id: 0,
        topic: topic.to_string(),
        message_type: header.get("type").unwrap_or("*").to_string(),
        encoding: "ros1".into(),
        definition: header.get("message_definition").unwrap_or("").to_string(),
        definition_encoding: "ros1msg".into(),
        metadata,
    }
}

/// A live recording's subscriptions. [`Recording::discover`] is called once at the start and
/// then periodically (rosbag polls the master every second).
pub struct Recording {
    node: Node,
    spec: RecordSpec,
    queue: Arc<RecordQueue>,
    hook: ConnectionHook,
    log: Log,
    links: Arc<Mutex<HashMap<u64, ConnKey>>>,
    overflow: Arc<Mutex<Throttle>>,
    done: Mutex<BTreeSet<String>>,
    /// Every topic this recording has subscribed to.
    subscribed: Mutex<BTreeSet<String>>,
}

impl Recording {
    /// A recording on `node` that registers each connection with `queue` (completed by
    /// `hook`) and pushes its messages there; `log` gets subscriptions and warnings.
    pub fn new(node: Node, spec: RecordSpec, queue: Arc<RecordQueue>, hook: ConnectionHook, log: Log) -> Recording {
        Recording {
            node,
            spec,
            queue,
            hook,
            log,
            links: Arc::default(),
            overflow: Arc::default(),
            done: Mutex::default(),
            subscribed: Mutex::default(),
        }
    }

    /// Topics to subscribe to now: the explicit ones, and those the master lists that the
    /// selection (or `--node`) takes. `-x` only removes discovered topics: named ones are
    /// always recorded, as rosbag subscribes to them directly.
    fn wanted(&self) -> Result<BTreeSet<String>, MasterError> {
        // Already resolved and remapped (see `TopicSelection`): remapping twice would chain
        // `a:=b b:=c`, which ROS does not.
        let explicit: BTreeSet<String> = self.spec.selection.explicit_topics().map(str::to_string).collect();
        let mut topics = BTreeSet::new();
        if !self.spec.selection.is_explicit_only() {
            for (topic, _) in self.node.master().published_topics()? {
                if self.spec.selection.matches(&topic) {
                    topics.insert(topic);
                }
            }
        }
        if let Some(node) = &self.spec.node {
            let node = self.node.config().resolve(node);
            for (topic, nodes) in self.node.master().system_state()?.subscribers {
                if nodes.contains(&node) && self.spec.selection.allows_node_topic(&topic) {
                    topics.insert(topic);
                }
            }
        }
        topics.retain(|t| !self.spec.selection.excluded(t));
        topics.extend(explicit);
        Ok(topics)
    }

    /// Subscribes to every wanted topic not yet subscribed. Returns the new topics.
    pub fn discover(&self) -> Result<Vec<String>, NodeError> {
        let mut new = Vec::new();
        for topic in self.wanted()? {
            if self.node.is_subscribed(&topic) || self.done.lock().unwrap_or_else(|p| p.into_inner()).contains(&topic) {
                continue;
            }
            let handler = self.handler(&topic);
            self.node.subscribe(&topic, "*", self.spec.tcp_nodelay, handler)?;
            self.subscribed.lock().unwrap_or_else(|p| p.into_inner()).insert(topic.clone());
            new.push(topic);
        }
        Ok(new)
    }

    /// Stops taking `topic` (its `-l` limit is reached); it is not subscribed again.
    pub fn finish_topic(&self, topic: &str) {
        self.done.lock().unwrap_or_else(|p| p.into_inner()).insert(topic.to_string());
        self.node.unsubscribe(topic);
    }

    /// Whether every topic subscribed so far, and every named topic (even one no publisher
    /// has offered yet), is finished: rosbag's `-l` stops then (`num_subscribers_ == 0`).
    pub fn all_finished(&self) -> bool {
        let done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        let subscribed = self.subscribed.lock().unwrap_or_else(|p| p.into_inner());
        self.spec.selection.explicit_topics().all(|t| done.contains(t)) && subscribed.iter().all(|t| done.contains(t))
    }

    fn handler(&self, topic: &str) -> Arc<dyn Fn(SubEvent) + Send + Sync> {
        let queue = self.queue.clone();
        let hook = self.hook.clone();
        let log = self.log.clone();
        let links = self.links.clone();
        let overflow = self.overflow.clone();
        let topic = topic.to_string();
        // This topic's connections by what they store: a publisher that reconnects with the
        // same header keeps its connection, as rosbag keys connections by their header.
        type Stored = (String, String, std::collections::BTreeMap<String, String>);
        let known: Mutex<HashMap<Stored, ConnKey>> = Mutex::default();
        Arc::new(move |event| match event {
            SubEvent::Connected { link, header, publisher, .. } => {
                let mut conn = connection_from_header(&topic, &header);
                if let Some(w) = hook(&mut conn) {
                    log(format!("warning: topic {topic} from {publisher}: {w}"));
                }
                let stored = (conn.message_type.clone(), conn.definition.clone(), conn.metadata.clone());
                let key = *known
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(stored)
                    .or_insert_with(|| queue.register(conn));
                links.lock().unwrap_or_else(|p| p.into_inner()).insert(link, key);
            }
            SubEvent::Message { link, received_ns, data } => {
                let key = links.lock().unwrap_or_else(|p| p.into_inner()).get(&link).copied();
                if let Some(key) = key {
                    if let Push::Queued { dropped_oldest } = queue.push(key, received_ns, data) {
                        let due = overflow.lock().unwrap_or_else(|p| p.into_inner()).add(dropped_oldest);
                        if let Some(dropped) = due {
                            log(format!(
                                "warning: record buffer exceeded; dropped the {dropped} oldest queued message(s)"
                            ));
                        }
                    }
                }
            }
            SubEvent::Closed { link, error, publisher, .. } => {
                links.lock().unwrap_or_else(|p| p.into_inner()).remove(&link);
                if let Some(e) = error {
                    log(format!("warning: topic {topic}: link to {publisher} dropped: {e}"));
                }
            }
        })
    }
}
