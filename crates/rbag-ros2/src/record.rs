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
    /// `--use-sim-time`: messages are stamped with `/clock`'s time, and nothing is subscribed
    /// (so nothing written) until the first `/clock` message, as rosbag2's discovery waits.
    pub sim_time: Option<Arc<SimClock>>,
    /// `--static-topics-path`: topics and their ROS types subscribed without waiting for
    /// discovery (Lyrical), with the default subscription QoS ([`static_topic_qos`]).
    pub static_topics: Vec<(String, String)>,
}

/// The latest `/clock` time (`--use-sim-time`), shared by the `/clock` subscription, the
/// sample handlers and the pipeline's clock.
#[derive(Debug, Default)]
pub struct SimClock {
    /// ns since the epoch of the last `/clock` message, plus 1 (0: none yet).
    ns_plus_one: std::sync::atomic::AtomicU64,
}

impl SimClock {
    /// The simulated time, once a `/clock` message came.
    pub fn now(&self) -> Option<u64> {
        self.ns_plus_one.load(std::sync::atomic::Ordering::Acquire).checked_sub(1)
    }

    /// The pipeline's clock for periodic work (idle splits by `-d`): the simulated time, 0
    /// until `/clock` runs.
    pub fn as_now(self: &Arc<Self>) -> rbag_transport::pipeline::Now {
        let clock = self.clone();
        Arc::new(move || clock.now().unwrap_or(0))
    }

    /// Sets the time to `ns`.
    pub fn set(&self, ns: u64) {
        self.ns_plus_one.store(ns.saturating_add(1), std::sync::atomic::Ordering::Release);
    }

    /// Takes in a serialized `rosgraph_msgs/msg/Clock` (CDR with its encapsulation header);
    /// false when it is too short to be one.
    pub fn set_from_cdr(&self, data: &[u8]) -> bool {
        let Some(body) = data.get(4..12) else { return false };
        let little = data.get(1).is_some_and(|b| b & 1 == 1);
        let (sec, nsec) = if little {
            (
                i32::from_le_bytes([body[0], body[1], body[2], body[3]]),
                u32::from_le_bytes([body[4], body[5], body[6], body[7]]),
            )
        } else {
            (
                i32::from_be_bytes([body[0], body[1], body[2], body[3]]),
                u32::from_be_bytes([body[4], body[5], body[6], body[7]]),
            )
        };
        // A time before the epoch cannot be a log time: it counts as 0.
        let ns = u64::try_from(sec).map_or(0, |s| s * 1_000_000_000 + u64::from(nsec));
        self.set(ns);
        true
    }
}

/// `/clock` as rclcpp's time source subscribes to it: best effort, volatile, keep last 1.
pub fn clock_qos() -> QosProfile {
    use rbag_storage::rosbag2::qos::policy;
    QosProfile {
        history: policy::KEEP_LAST,
        depth: 1,
        reliability: policy::BEST_EFFORT,
        durability: policy::VOLATILE,
        ..QosProfile::default()
    }
}

/// The QoS of a static topic's subscription: rclcpp's default (reliable, volatile, keep last
/// 10); there are no publishers to adapt to before discovery.
pub fn static_topic_qos() -> QosProfile {
    use rbag_storage::rosbag2::qos::policy;
    QosProfile {
        history: policy::KEEP_LAST,
        depth: 10,
        reliability: policy::RELIABLE,
        durability: policy::VOLATILE,
        ..QosProfile::default()
    }
}

/// rosgraph_msgs/msg/Clock's DDS name and type hash (Jazzy and later).
const CLOCK_DDS_TYPE: &str = "rosgraph_msgs::msg::dds_::Clock_";
const CLOCK_HASH: &str = "RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564";

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
    /// The `/clock` subscription of `--use-sim-time`.
    clock: Option<Box<dyn Subscription>>,
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
            clock: None,
        })
    }

    /// `--use-sim-time`: subscribes to `/clock` once; true once its first message came.
    fn sim_clock_running(&mut self) -> bool {
        let Some(sim) = self.spec.sim_time.clone() else { return true };
        if self.clock.is_none() {
            let clock = sim.clone();
            let handler: Box<dyn Fn(Sample) + Send + Sync> = Box::new(move |s: Sample| {
                clock.set_from_cdr(&s.data);
            });
            match self.graph.subscribe("/clock", CLOCK_DDS_TYPE, Some(CLOCK_HASH), &clock_qos(), handler) {
                Ok(r) => {
                    (self.log)("Waiting for the first /clock message (--use-sim-time).".into());
                    self.clock = Some(r);
                }
                Err(e) => {
                    (self.log)(format!("error: topic /clock: {e}"));
                    return false;
                }
            }
        }
        sim.now().is_some()
    }

    /// Subscribes to the `--static-topics-path` topics not subscribed yet, with their type
    /// from the file.
    fn subscribe_static(&mut self) -> Vec<String> {
        let mut new = Vec::new();
        for (topic, ros_type) in self.spec.static_topics.clone() {
            if self.subscribed.contains_key(&topic) || self.refused.contains(&topic) {
                continue;
            }
            let Some(dds_type) = crate::names::type_to_dds(&ros_type) else {
                (self.log)(format!("error: static topic {topic}: {ros_type:?} is not a pkg/msg/Type name"));
                self.refused.insert(topic);
                continue;
            };
            let request = self.spec.overrides.get(&topic).copied().unwrap_or_else(static_topic_qos);
            if let Some(t) = self.subscribe_as(&topic, &dds_type, &ros_type, None, request, &[]) {
                new.push(t);
            }
        }
        new
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
        // rosbag2 subscribes nothing until /clock runs: messages before it have no time.
        if !self.sim_clock_running() {
            return Vec::new();
        }
        let mut new = self.subscribe_static();
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
        let type_hash = writers.iter().chain(readers.iter()).find_map(|e| e.type_hash.clone());
        self.subscribe_as(topic, &type_name, &ros_type, type_hash, request, &offers)
    }

    /// Registers `topic`'s connection and subscribes with `request`; `offers` are the
    /// publishers' profiles stored with it.
    fn subscribe_as(
        &mut self,
        topic: &str,
        type_name: &str,
        ros_type: &str,
        type_hash: Option<String>,
        request: QosProfile,
        offers: &[QosProfile],
    ) -> Option<String> {
        let mut metadata = BTreeMap::new();
        metadata.insert(QOS_KEY.to_string(), qos_text::to_text(offers, 9));
        if let Some(h) = &type_hash {
            metadata.insert(TYPE_HASH_KEY.to_string(), h.clone());
        }
        let mut conn = Connection {
            id: 0,
            topic: topic.to_string(),
            message_type: ros_type.to_string(),
            encoding: "cdr".into(),
            definition: String::new(),
            definition_encoding: String::new(),
            metadata,
        };
        if let Some(w) = (self.hook)(&mut conn) {
            (self.log)(format!("warning: topic {topic}: {w}"));
        }
        // A static topic's hash comes from its definition (Zenoh keys name it).
        let type_hash = type_hash.or_else(|| conn.metadata.get(TYPE_HASH_KEY).cloned());
        let key = self.queue.register(conn);
        let reader = match self.graph.subscribe(
            topic,
            type_name,
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
        let sim = self.spec.sim_time.clone();
        Box::new(move |sample: Sample| {
            // Sim time stamps with /clock's time; the graph's own clock is not the bag's.
            let time = match &sim {
                Some(clock) => match clock.now() {
                    Some(t) => t,
                    None => return,
                },
                None => now_ns(),
            };
            if sample.data.len() > limit {
                if let Some(n) = oversized.lock().unwrap_or_else(|p| p.into_inner()).add(1) {
                    log(format!("warning: topic {topic}: dropped {n} sample(s) larger than the limit ({} bytes, the latest {} bytes)", limit, sample.data.len()));
                }
                return;
            }
            if let Push::Queued { dropped_oldest } = queue.push(key, time, Bytes::from(sample.data)) {
                if let Some(n) = overflow.lock().unwrap_or_else(|p| p.into_inner()).add(dropped_oldest) {
                    log(format!(
                        "warning: cache full (--max-cache-size); dropped {n} message(s), the latest on {topic}"
                    ));
                }
            }
        })
    }
}

#[cfg(test)]
mod sim_clock_tests {
    use super::SimClock;

    #[test]
    fn a_clock_message_sets_the_time_and_nothing_before_it() {
        let c = SimClock::default();
        assert_eq!(c.now(), None);
        let mut cdr = vec![0, 1, 0, 0];
        cdr.extend(7i32.to_le_bytes());
        cdr.extend(5u32.to_le_bytes());
        assert!(c.set_from_cdr(&cdr));
        assert_eq!(c.now(), Some(7_000_000_005));
        c.set(0);
        assert_eq!(c.now(), Some(0));
        assert!(!c.set_from_cdr(&[0, 1, 0, 0, 1]));
        let mut be = vec![0, 0, 0, 0];
        be.extend(2i32.to_be_bytes());
        be.extend(1u32.to_be_bytes());
        assert!(c.set_from_cdr(&be));
        assert_eq!(c.now(), Some(2_000_000_001));
    }
}

/// A `--static-topics-path` file that cannot be used: which file, where, and why.
#[derive(Debug, thiserror::Error)]
#[error("static topics file {path}: {message}")]
pub struct StaticTopicsError {
    /// The file.
    pub path: String,
    /// What is wrong (with the line, when known).
    pub message: String,
}

/// Reads rosbag2's static topics file (Lyrical `--static-topics-path`):
/// `static_topics_and_types_list: [[/topic, pkg/msg/Type], …]`. rosbag2 logs a bad file and
/// records nothing from it; rbag refuses it, naming the line.
pub fn load_static_topics(path: &std::path::Path) -> Result<Vec<(String, String)>, StaticTopicsError> {
    let err = |message: String| StaticTopicsError { path: path.display().to_string(), message };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    parse_static_topics(&text).map_err(err)
}

/// [`load_static_topics`] on text; the error says where.
pub fn parse_static_topics(text: &str) -> Result<Vec<(String, String)>, String> {
    #[derive(serde::Deserialize)]
    struct File {
        static_topics_and_types_list: Option<Vec<Vec<String>>>,
    }
    let file: File = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    let entries = file.static_topics_and_types_list.ok_or("no static_topics_and_types_list")?;
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).map_or(0, |i| i + 1);
    let mut out = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        match e.as_slice() {
            [topic, ty] if !topic.is_empty() && ty.split('/').count() == 3 => {
                let topic = if topic.starts_with('/') { topic.clone() } else { format!("/{topic}") };
                out.push((topic, ty.clone()));
            }
            other => {
                let at = other.first().map_or(0, |t| line_of(t));
                return Err(format!("line {at}: entry {} is {other:?}; expected [/topic, pkg/msg/Type]", i + 1));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod static_topics_tests {
    use super::parse_static_topics;

    #[test]
    fn the_list_gives_topics_and_types_and_a_bad_entry_names_its_line() {
        let text =
            "static_topics_and_types_list:\n  - [/chatter, std_msgs/msg/String]\n  - [imu, sensor_msgs/msg/Imu]\n";
        let got = parse_static_topics(text).unwrap();
        assert_eq!(
            got,
            [
                ("/chatter".to_string(), "std_msgs/msg/String".to_string()),
                ("/imu".into(), "sensor_msgs/msg/Imu".into())
            ]
        );
        let bad = "static_topics_and_types_list:\n  - [/chatter, std_msgs/msg/String]\n  - [/odd]\n";
        let e = parse_static_topics(bad).unwrap_err();
        assert!(e.contains("line 3") && e.contains("entry 2"), "{e}");
        let e = parse_static_topics("static_topics_and_types_list: [[/a, b]\n").unwrap_err();
        assert!(e.contains("line"), "{e}");
    }
}
