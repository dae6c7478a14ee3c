//! Recording a ROS 2 graph: discovery, subscriptions with adaptive QoS, and raw samples handed
//! to the [`RecordQueue`] as they arrive. Nothing is deserialised.
//!
//! As `ros2 bag record`:
//! - topics are found by polling discovery (`-p/--polling-interval`), so topics that appear
//!   later are recorded; with `--no-discovery` only the named topics are subscribed, at start;
//! - a topic's subscription asks for what all its publishers offer (see [`crate::qos`]) unless
//!   `--qos-profile-overrides-path` names it; the offered profiles are stored with the topic;
//! - a topic with several types is skipped with an error, as rosbag2 does;
//! - a type without a known definition is recorded anyway, with a warning: the bytes are
//!   what they are, and a definition can be supplied when the bag is read.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bytes::Bytes;
use rbag_storage::rosbag2::qos::{self as qos_text, QosProfile};
use rbag_storage::rosbag2::{QOS_KEY, TYPE_HASH_KEY};
use rbag_storage::Connection;
use rbag_transport::throttle::Throttle;
use rbag_transport::{ConnKey, Push, RecordQueue};

use crate::graph::{Endpoint, EndpointEvent, EndpointKind, Graph, GraphError, Sample, Subscription, MAX_SAMPLE_BYTES};
use crate::names::{topic_from_dds, type_from_dds, RosTopic};
use crate::qos::{adapt_request_to_offers, Overrides};
use crate::select::Ros2Selection;

/// Fills a connection's definition (and hash) from the type sources; returns a warning when
/// the type is unknown. Called once per topic, off the receive path.
pub type DefinitionHook = Box<dyn Fn(&mut Connection) -> Option<String> + Send + Sync>;

/// Where messages and notices go.
pub type Log = Arc<dyn Fn(String) + Send + Sync>;

/// What to record and how to subscribe.
pub struct Ros2RecordSpec {
    /// Which topics and services.
    pub selection: Ros2Selection,
    /// Per-topic subscription QoS instead of the adapted one.
    pub overrides: Overrides,
    /// `--no-discovery`: subscribe to the named topics at start and never look again.
    pub no_discovery: bool,
    /// `--include-unpublished-topics`: subscribe to selected topics that only have
    /// subscribers (their type comes from the subscriber).
    pub include_unpublished: bool,
    /// `--ignore-leaf-topics`: leave out topics with no subscriber, until one appears.
    pub ignore_leaf_topics: bool,
    /// `--topic-types`: when not empty, only topics of these ROS types.
    pub topic_types: BTreeSet<String>,
    /// `--exclude-topic-types`.
    pub exclude_topic_types: BTreeSet<String>,
    /// Samples larger than this are dropped and counted, not recorded.
    pub max_sample_bytes: usize,
}

/// A topic's subscription; dropping it unsubscribes.
struct Subscribed {
    reader: Box<dyn Subscription>,
    /// Samples over the reader's hard limit reported so far.
    oversized: u64,
}

/// A live recording; call [`Ros2Recording::poll`] every polling interval.
pub struct Ros2Recording {
    graph: Box<dyn Graph>,
    spec: Ros2RecordSpec,
    queue: Arc<RecordQueue>,
    hook: DefinitionHook,
    log: Log,
    subscribed: BTreeMap<String, Subscribed>,
    /// Topics refused (several types) or unsubscribable, so they are reported once.
    refused: BTreeSet<String>,
    started: Option<std::time::Instant>,
    overflow: Arc<std::sync::Mutex<Throttle>>,
    oversized: Arc<std::sync::Mutex<Throttle>>,
}

/// How long `--no-discovery` still takes in topics after start: one round of discovery.
pub const STARTUP_DISCOVERY: std::time::Duration = std::time::Duration::from_secs(1);

pub(crate) use rbag_transport::now_ns;

impl Ros2Recording {
    /// A recording on `graph` (DDS or Zenoh) that registers each topic's connection with
    /// `queue` (its definition filled by `hook`) and pushes its samples there; `log` gets
    /// subscriptions and warnings.
    pub fn new(
        graph: Box<dyn Graph>,
        spec: Ros2RecordSpec,
        queue: Arc<RecordQueue>,
        hook: DefinitionHook,
        log: Log,
    ) -> Result<Ros2Recording, GraphError> {
        Ok(Ros2Recording {
            graph,
            spec,
            queue,
            hook,
            log,
            subscribed: BTreeMap::new(),
            refused: BTreeSet::new(),
            started: None,
            overflow: Default::default(),
            oversized: Default::default(),
        })
    }

    /// Takes in discovery news and subscribes to new selected topics; returns the topics
    /// subscribed by this call.
    pub fn poll(&mut self) -> Vec<String> {
        let events = self.graph.poll();
        for e in &events {
            if let EndpointEvent::Gone(ep) = e {
                if let Some(RosTopic::Topic(t)) = topic_from_dds(&ep.topic) {
                    if self.subscribed.contains_key(&t) && ep.kind == EndpointKind::Writer {
                        (self.log)(format!("publisher {} on {t} left", ep.guid));
                    }
                }
            }
        }
        // Samples over the reader's hard limit never reach the handler: say so here.
        for (topic, sub) in &mut self.subscribed {
            let n = sub.reader.oversized();
            if n > sub.oversized {
                (self.log)(format!(
                    "warning: topic {topic}: dropped {} sample(s) larger than {} bytes",
                    n - sub.oversized,
                    MAX_SAMPLE_BYTES
                ));
                sub.oversized = n;
            }
        }
        let mut new = Vec::new();
        // --no-discovery: only what the graph showed at start-up (one discovery round).
        let started = *self.started.get_or_insert_with(std::time::Instant::now);
        if self.spec.no_discovery && started.elapsed() > STARTUP_DISCOVERY {
            return new;
        }
        let candidates: BTreeSet<String> = self
            .graph
            .endpoints()
            .into_iter()
            .filter(|e| !e.local && (e.kind == EndpointKind::Writer || self.spec.include_unpublished))
            .filter_map(|e| match topic_from_dds(&e.topic) {
                // The type decides whether an `_action/...` topic is an action's.
                Some(RosTopic::Topic(t)) => {
                    let ros_type = type_from_dds(&e.type_name).unwrap_or_else(|| e.type_name.clone());
                    self.spec.selection.takes(&t, &ros_type).then_some(t)
                }
                _ => None,
            })
            .filter(|t| !self.subscribed.contains_key(t) && !self.refused.contains(t))
            .filter(|t| !self.spec.ignore_leaf_topics || !self.endpoints_of(t).1.is_empty())
            .collect();
        for topic in candidates {
            if let Some(t) = self.try_subscribe(&topic) {
                new.push(t);
            }
        }
        new
    }

    /// The remote endpoints on `topic` (writers first).
    fn endpoints_of(&self, topic: &str) -> (Vec<Endpoint>, Vec<Endpoint>) {
        let dds = crate::names::topic_to_dds(topic);
        self.graph
            .endpoints()
            .into_iter()
            .filter(|e| !e.local && e.topic == dds)
            .partition(|e| e.kind == EndpointKind::Writer)
    }

    fn try_subscribe(&mut self, topic: &str) -> Option<String> {
        let (writers, readers) = self.endpoints_of(topic);
        let types: BTreeSet<&str> =
            if writers.is_empty() { readers.iter() } else { writers.iter() }.map(|e| e.type_name.as_str()).collect();
        let type_name = match types.len() {
            0 => return None,
            1 => types.into_iter().next().unwrap_or_default().to_string(),
            _ => {
                (self.log)(format!(
                    "error: topic {topic} has more than one type ({}); only topics with one type are recorded",
                    types.into_iter().collect::<Vec<_>>().join(", ")
                ));
                self.refused.insert(topic.to_string());
                return None;
            }
        };
        let ros_type = type_from_dds(&type_name).unwrap_or_else(|| type_name.clone());
        // Type filters are for topics: an action's topics are chosen by the action flags.
        let is_action = rbag_storage::rosbag2::actions::action_of(topic, &ros_type).is_some();
        if !is_action
            && ((!self.spec.topic_types.is_empty() && !self.spec.topic_types.contains(&ros_type))
                || self.spec.exclude_topic_types.contains(&ros_type))
        {
            self.refused.insert(topic.to_string());
            return None;
        }
        let offers: Vec<QosProfile> = writers.iter().map(|w| w.qos).collect();
        let (request, warnings) = match self.spec.overrides.get(topic) {
            Some(p) => (*p, Vec::new()),
            None => adapt_request_to_offers(topic, &offers),
        };
        for w in warnings {
            (self.log)(format!("warning: {w}"));
        }
        let mut metadata = BTreeMap::new();
        metadata.insert(QOS_KEY.to_string(), qos_text::to_text(&offers, 9));
        let type_hash = writers.iter().chain(readers.iter()).find_map(|e| e.type_hash.clone());
        if let Some(h) = &type_hash {
            metadata.insert(TYPE_HASH_KEY.to_string(), h.clone());
        }
        let mut conn = Connection {
            id: 0,
            topic: topic.to_string(),
            message_type: ros_type.clone(),
            encoding: "cdr".into(),
            definition: String::new(),
            definition_encoding: String::new(),
            metadata,
        };
        if let Some(w) = (self.hook)(&mut conn) {
            (self.log)(format!("warning: topic {topic}: {w}"));
        }
        let key = self.queue.register(conn);
        let reader = match self.graph.subscribe(
            topic,
            &type_name,
            type_hash.as_deref(),
            &request,
            self.sample_handler(topic, key),
        ) {
            Ok(r) => r,
            Err(e) => {
                (self.log)(format!("error: topic {topic}: {e}"));
                self.refused.insert(topic.to_string());
                return None;
            }
        };
        (self.log)(format!("Subscribed to topic '{topic}' ({ros_type})"));
        self.subscribed.insert(topic.to_string(), Subscribed { reader, oversized: 0 });
        Some(topic.to_string())
    }

    fn sample_handler(&self, topic: &str, key: ConnKey) -> Box<dyn Fn(Sample) + Send + Sync> {
        let queue = self.queue.clone();
        let log = self.log.clone();
        let (overflow, oversized) = (self.overflow.clone(), self.oversized.clone());
        let limit = self.spec.max_sample_bytes;
        let topic = topic.to_string();
        Box::new(move |sample: Sample| {
            if sample.data.len() > limit {
                if let Some(n) = oversized.lock().unwrap_or_else(|p| p.into_inner()).add(1) {
                    log(format!("warning: topic {topic}: dropped {n} sample(s) larger than the limit ({} bytes, the latest {} bytes)", limit, sample.data.len()));
                }
                return;
            }
            if let Push::Queued { dropped_oldest } = queue.push(key, now_ns(), Bytes::from(sample.data)) {
                if let Some(n) = overflow.lock().unwrap_or_else(|p| p.into_inner()).add(dropped_oldest) {
                    log(format!(
                        "warning: cache full (--max-cache-size); dropped {n} message(s), the latest on {topic}"
                    ));
                }
            }
        })
    }
}
