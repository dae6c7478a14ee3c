//! The summary `rbag info` prints, built from index data only.

use std::collections::BTreeMap;
use std::path::Path;

use rbag_storage::rosbag2::actions::{action_of, action_type, ActionPart};
use rbag_storage::rosbag2::qos::{self, PolicyKind};
use rbag_storage::{Filter, StorageReader};

use crate::{Bag, Result};
use serde::Serialize;

/// What `rbag info` reports, in the units the JSON output uses.
#[derive(Debug, Clone, Serialize)]
pub struct BagInfo {
    /// The path the bag was opened from.
    pub path: String,
    /// The storage files (one, or a rosbag2 bag's splits).
    pub files: Vec<String>,
    /// The storage backend's name (`ros1`, `sqlite3`, `mcap`, ...).
    pub storage: &'static str,
    /// The format version (`2.0`, rosbag2 metadata version, MCAP profile version).
    pub version: String,
    /// False for a bag whose index was never written (its recorder did not close it); a
    /// reindex repairs it.
    pub indexed: bool,
    /// Bytes on disk, every file together.
    pub size_bytes: u64,
    /// Messages in the bag, declared connections and undeclared ones.
    pub message_count: u64,
    /// Log time of the first message, in ns since the epoch.
    pub start_ns: Option<u64>,
    /// Log time of the last message.
    pub end_ns: Option<u64>,
    /// `end_ns - start_ns`, 0 for an empty bag.
    pub duration_ns: u64,
    /// Chunks (ROS 1, MCAP); 0 for storages without them.
    pub chunk_count: u64,
    /// Chunk compression in use, per algorithm.
    pub compression: Vec<CompressionInfo>,
    /// Format facts: MCAP `profile`/`library`, rosbag2 `ros_distro`, `metadata_version`,
    /// `compression` (rosbag2 file or message mode).
    pub properties: BTreeMap<String, String>,
    /// Message types, sorted by name.
    pub types: Vec<TypeInfo>,
    /// Topics, sorted by name: every topic, services' event topics and actions' topics too.
    pub topics: Vec<TopicInfo>,
    /// ROS 2 actions, recorded as rosbag2 (Kilted and later) records them: five topics each,
    /// which are also in [`BagInfo::topics`]. Sorted as the topics are.
    pub actions: Vec<ActionInfo>,
    /// Messages on connections the bag never declares (counted in `message_count`): their
    /// topic and type are unknown.
    pub undeclared: Vec<UndeclaredInfo>,
    /// The message definitions stored in the bag, one per distinct (type, dialect, text),
    /// sorted by name: their hashes, and their text with [`InfoOptions::verbose`].
    pub definitions: Vec<DefinitionInfo>,
}

/// A ROS 2 action in the bag, as `ros2 bag info` lists it (`Action information`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ActionInfo {
    /// The action's name (`/fibonacci`).
    pub name: String,
    /// Its type (`example_interfaces/action/Fibonacci`), from its send_goal, get_result or
    /// feedback topic's type; empty when only cancel_goal and status were recorded.
    #[serde(rename = "type")]
    pub action_type: String,
    /// Serialization format of its topics (`cdr`).
    pub encoding: String,
    /// Messages on all its topics.
    pub message_count: u64,
    /// Bytes of payload on all its topics, where known (see [`TopicInfo::size_bytes`]).
    pub size_bytes: Option<u64>,
    /// `feedback` and `status`, in that order, each listed even when not recorded (count 0).
    pub topics: Vec<ActionTopicInfo>,
    /// `send_goal`, `cancel_goal` and `get_result`, in that order, likewise.
    pub services: Vec<ActionServiceInfo>,
}

/// One of an action's topics (`feedback`, `status`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ActionTopicInfo {
    /// `feedback` or `status`.
    pub name: String,
    /// The recorded topic (`/fibonacci/_action/feedback`).
    pub topic: String,
    /// Messages on it.
    pub message_count: u64,
}

/// One of an action's services (`send_goal`, `cancel_goal`, `get_result`), recorded through its
/// service event topic.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ActionServiceInfo {
    /// `send_goal`, `cancel_goal` or `get_result`.
    pub name: String,
    /// The recorded event topic (`/fibonacci/_action/send_goal/_service_event`).
    pub topic: String,
    /// Event messages on it (each call gives up to four: request sent and received, response
    /// sent and received).
    pub event_count: u64,
    /// Requests, as `ros2 bag info -v` counts them (distinct client and sequence number),
    /// with [`InfoOptions::verbose`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_count: Option<u64>,
    /// Likewise, the responses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_count: Option<u64>,
}

/// A message definition stored in the bag.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DefinitionInfo {
    /// The type it defines.
    pub name: String,
    /// Its dialect: `ros1msg`, `ros2msg`, `ros2idl`, or empty when unknown.
    pub encoding: String,
    /// The hash the bag records with it: ROS 1 MD5 sum or ROS 2 `type_description_hash`
    /// (`RIHS01_...`); `None` when the bag records neither.
    pub hash: Option<String>,
    /// Bytes of definition text stored (0: the bag carries no definition for the type).
    pub length: u64,
    /// Topics whose connections use it.
    pub topics: Vec<String>,
    /// The text itself, only with [`InfoOptions::verbose`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// One offered QoS profile of a ROS 2 topic, as the bag records it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct QosInfo {
    /// `keep_last`, `keep_all`, `system_default`, `unknown`.
    pub history: String,
    /// Queue depth for keep-last.
    pub depth: u64,
    /// `reliable`, `best_effort`, ...
    pub reliability: String,
    /// `transient_local`, `volatile`, ...
    pub durability: String,
    /// `automatic`, `manual_by_topic`, ...
    pub liveliness: String,
    /// Deadline in ns (`i64::MAX`: infinite, however the bag wrote it; 0: unspecified).
    pub deadline_ns: i64,
    /// Lifespan in ns (`i64::MAX`: infinite, 0: unspecified).
    pub lifespan_ns: i64,
    /// Liveliness lease duration in ns (`i64::MAX`: infinite, 0: unspecified).
    pub liveliness_lease_duration_ns: i64,
    /// Whether the topic name skips ROS namespace conventions.
    pub avoid_ros_namespace_conventions: bool,
}

impl QosInfo {
    fn from_profile(p: &qos::QosProfile) -> Self {
        // rosbag2 wrote "infinite" as i64::MAX ns and, before Galactic, as 2147483651 s
        // 294967295 ns: both are infinite here.
        let ns = |d: qos::Duration| {
            if d.sec >= i64::from(i32::MAX) {
                i64::MAX
            } else {
                d.as_nanos().clamp(i64::MIN as i128, i64::MAX as i128) as i64
            }
        };
        QosInfo {
            history: PolicyKind::History.name(p.history).into(),
            depth: p.depth,
            reliability: PolicyKind::Reliability.name(p.reliability).into(),
            durability: PolicyKind::Durability.name(p.durability).into(),
            liveliness: PolicyKind::Liveliness.name(p.liveliness).into(),
            deadline_ns: ns(p.deadline),
            lifespan_ns: ns(p.lifespan),
            liveliness_lease_duration_ns: ns(p.liveliness_lease_duration),
            avoid_ros_namespace_conventions: p.avoid_ros_namespace_conventions,
        }
    }
}

/// How topics are ordered in a summary (`rbag info --sort`, as `ros2 bag info --sort`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TopicSort {
    /// By name (the default).
    #[default]
    Name,
    /// By message type, then name.
    Type,
    /// Most messages first, then by name.
    Count,
    /// Largest first (payload bytes where known, exact or estimated), then by name.
    Size,
}

/// What a summary includes beyond the index: see [`Bag::info_with`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InfoOptions {
    /// Definitions' text, and each service's request and response counts (which read the
    /// service event messages' headers).
    pub verbose: bool,
    /// The order of [`BagInfo::topics`].
    pub sort: TopicSort,
}

impl Bag {
    /// The summary [`Bag::info`] gives, with topics sorted by `options.sort` and, with
    /// `options.verbose`, the definitions' text and the request and response counts of each
    /// service (read from its `/_service_event` messages: the only payloads read).
    pub fn info_with(&self, options: &InfoOptions) -> Result<BagInfo> {
        let mut info = self.info()?;
        if options.verbose {
            for d in &mut info.definitions {
                let text = self
                    .connections()
                    .iter()
                    .find(|c| {
                        c.message_type == d.name && c.definition_encoding == d.encoding && d.topics.contains(&c.topic)
                    })
                    .map(|c| c.definition.clone());
                d.text = text;
            }
            let is_events =
                |t: &TopicInfo| t.is_service_event() || t.action_part().is_some_and(|(_, p)| p.is_service());
            let services: Vec<String> = info.topics.iter().filter(|t| is_events(t)).map(|t| t.name.clone()).collect();
            if !services.is_empty() {
                let counts = service_counts(self, &services)?;
                for t in info.topics.iter_mut().filter(|t| is_events(t)) {
                    let (req, resp) = counts.get(&t.name).copied().unwrap_or((0, 0));
                    t.service_requests = Some(req);
                    t.service_responses = Some(resp);
                }
                for s in info.actions.iter_mut().flat_map(|a| a.services.iter_mut()) {
                    let (req, resp) = counts.get(&s.topic).copied().unwrap_or((0, 0));
                    s.request_count = Some(req);
                    s.response_count = Some(resp);
                }
            }
        }
        sort_topics(&mut info.topics, options.sort);
        sort_actions(&mut info.actions, options.sort);
        Ok(info)
    }
}

/// Orders topics by `sort`.
pub(crate) fn sort_topics(topics: &mut [TopicInfo], sort: TopicSort) {
    match sort {
        TopicSort::Name => topics.sort_by(|a, b| a.name.cmp(&b.name)),
        TopicSort::Type => topics.sort_by(|a, b| a.message_type.cmp(&b.message_type).then_with(|| a.name.cmp(&b.name))),
        TopicSort::Count => {
            topics.sort_by(|a, b| b.message_count.cmp(&a.message_count).then_with(|| a.name.cmp(&b.name)))
        }
        TopicSort::Size => topics.sort_by(|a, b| b.size_bytes.cmp(&a.size_bytes).then_with(|| a.name.cmp(&b.name))),
    }
}

/// Orders actions as [`sort_topics`] orders topics (by type: the action's type; by count and
/// size: all its topics together).
pub(crate) fn sort_actions(actions: &mut [ActionInfo], sort: TopicSort) {
    match sort {
        TopicSort::Name => actions.sort_by(|a, b| a.name.cmp(&b.name)),
        TopicSort::Type => actions.sort_by(|a, b| a.action_type.cmp(&b.action_type).then_with(|| a.name.cmp(&b.name))),
        TopicSort::Count => {
            actions.sort_by(|a, b| b.message_count.cmp(&a.message_count).then_with(|| a.name.cmp(&b.name)))
        }
        TopicSort::Size => actions.sort_by(|a, b| b.size_bytes.cmp(&a.size_bytes).then_with(|| a.name.cmp(&b.name))),
    }
}

/// The actions whose topics are among `topics`, from the topics' names and types.
fn actions<'a>(topics: impl IntoIterator<Item = &'a TopicInfo>) -> Vec<ActionInfo> {
    let mut by_name: BTreeMap<&str, Vec<(ActionPart, &TopicInfo)>> = BTreeMap::new();
    for t in topics {
        if let Some((name, part)) = t.action_part() {
            by_name.entry(name).or_default().push((part, t));
        }
    }
    by_name
        .into_iter()
        .map(|(name, parts)| {
            let find = |p: ActionPart| parts.iter().find(|(q, _)| *q == p).map(|(_, t)| *t);
            let count = |p: ActionPart| find(p).map_or(0, |t| t.message_count);
            let action_type = [ActionPart::SendGoal, ActionPart::GetResult, ActionPart::Feedback]
                .into_iter()
                .find_map(|p| find(p).and_then(|t| action_type(p, &t.message_type)))
                .unwrap_or_default();
            let topic = |p: ActionPart| format!("{name}{}", p.suffix());
            ActionInfo {
                name: name.to_string(),
                action_type,
                encoding: parts.first().map(|(_, t)| t.encoding.clone()).unwrap_or_default(),
                message_count: parts.iter().map(|(_, t)| t.message_count).sum(),
                size_bytes: parts.iter().try_fold(0u64, |acc, (_, t)| t.size_bytes.map(|b| acc + b)),
                topics: ActionPart::ALL
                    .into_iter()
                    .filter(|p| !p.is_service())
                    .map(|p| ActionTopicInfo { name: p.short_name().into(), topic: topic(p), message_count: count(p) })
                    .collect(),
                services: ActionPart::ALL
                    .into_iter()
                    .filter(|p| p.is_service())
                    .map(|p| ActionServiceInfo {
                        name: p.short_name().into(),
                        topic: topic(p),
                        event_count: count(p),
                        request_count: None,
                        response_count: None,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Requests and responses per service event topic, as `ros2 bag info -v` counts them: distinct
/// (client, sequence number) pairs among request events (sent or received) and among response
/// events. Only each event's `ServiceEventInfo` header (its first 40 bytes of CDR) is looked at.
fn service_counts(bag: &Bag, topics: &[String]) -> Result<BTreeMap<String, (u64, u64)>> {
    type Key = ([u8; 16], [u8; 8]);
    let mut seen: BTreeMap<String, (std::collections::BTreeSet<Key>, std::collections::BTreeSet<Key>)> =
        BTreeMap::new();
    let filter = Filter { topics: topics.to_vec(), ..Filter::default() };
    for m in bag.messages(&filter)? {
        let m = m?;
        let Some(c) = bag.reader().connection(m.connection) else { continue };
        if c.encoding != "cdr" {
            continue;
        }
        // 4 bytes of encapsulation, then event_type (u8), stamp (2 x u32), client_gid (16
        // bytes) and, aligned to 8, sequence_number (i64).
        let d = &m.data[..];
        if d.len() < 4 + 40 {
            continue;
        }
        let event = d[4];
        let mut gid = [0u8; 16];
        gid.copy_from_slice(&d[4 + 12..4 + 28]);
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&d[4 + 32..4 + 40]);
        let entry = seen.entry(c.topic.clone()).or_default();
        match event {
            0 | 1 => {
                entry.0.insert((gid, seq));
            }
            2 | 3 => {
                entry.1.insert((gid, seq));
            }
            _ => {}
        }
    }
    Ok(seen.into_iter().map(|(t, (a, b))| (t, (a.len() as u64, b.len() as u64))).collect())
}

/// Messages whose connection (ROS 1 connection, MCAP channel, rosbag2 topic id) the bag never
/// declares.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct UndeclaredInfo {
    /// The connection id the messages refer to.
    pub connection: u32,
    /// How many messages refer to it.
    pub message_count: u64,
}

/// Chunks compressed with one algorithm.
#[derive(Debug, Clone, Serialize)]
pub struct CompressionInfo {
    /// `none`, `lz4`, `bz2`, `zstd`.
    pub name: String,
    /// Chunks compressed so.
    pub chunks: u64,
    /// Their bytes on disk.
    pub compressed_bytes: u64,
    /// Their bytes once decompressed.
    pub uncompressed_bytes: u64,
}

/// A message type in the bag.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct TypeInfo {
    /// Its full name (`sensor_msgs/Imu`, `sensor_msgs/msg/Imu`).
    pub name: String,
    /// ROS 1 MD5 sum, when the bag records one.
    pub md5sum: Option<String>,
}

/// One topic: its type and counts over all its connections.
#[derive(Debug, Clone, Serialize)]
pub struct TopicInfo {
    /// The topic name.
    pub name: String,
    /// Its message type.
    #[serde(rename = "type")]
    pub message_type: String,
    /// Messages on it.
    pub message_count: u64,
    /// Connections (publishers, channels) carrying it.
    pub connections: u64,
    /// Serialization format: `ros1` or `cdr`.
    pub encoding: String,
    /// Bytes of payload on this topic, where the storage knows or estimates it without reading
    /// payloads: exact for SQLite3, estimated from chunk totals for ROS 1 and MCAP.
    pub size_bytes: Option<u64>,
    /// Whether `size_bytes` is an estimate (`rbag du` gives a closer or exact figure).
    pub size_estimated: bool,
    /// 1 / median period between messages, as `rosbag info` computes it.
    pub frequency_hz: Option<f64>,
    /// The offered QoS profiles its connections record (ROS 2), in connection order; empty
    /// where the bag records none.
    pub qos: Vec<QosInfo>,
    /// Hashes of its definitions: ROS 1 MD5 sums or ROS 2 `type_description_hash`es, one per
    /// distinct value among its connections.
    pub definition_hashes: Vec<String>,
    /// For a service event topic (`/srv/_service_event`) summarised verbosely: the requests
    /// its events record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_requests: Option<u64>,
    /// Likewise, the responses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_responses: Option<u64>,
}

impl TopicInfo {
    /// Whether this is a service introspection topic (`/srv/_service_event`), listed apart; an
    /// action's service event topics are its action's, not services.
    pub fn is_service_event(&self) -> bool {
        self.name.ends_with("/_service_event") && self.message_type.ends_with("_Event") && self.action_part().is_none()
    }

    /// The action this topic is part of (name and type both fit, as rosbag2 decides), and
    /// which part.
    pub fn action_part(&self) -> Option<(&str, ActionPart)> {
        action_of(&self.name, &self.message_type)
    }
}

/// Summarises an open bag. Reads only index and summary data.
pub(crate) fn info(path: &Path, reader: &dyn StorageReader) -> Result<BagInfo> {
    let s = reader.info()?;
    let periods = reader.median_periods()?;
    let mut topics: BTreeMap<&str, TopicInfo> = BTreeMap::new();
    let mut types = std::collections::BTreeSet::new();
    let mut definitions: BTreeMap<(String, String, String), DefinitionInfo> = BTreeMap::new();
    for c in reader.connections() {
        let t = topics.entry(&c.topic).or_insert_with(|| TopicInfo {
            name: c.topic.clone(),
            message_type: c.message_type.clone(),
            message_count: 0,
            connections: 0,
            encoding: c.encoding.clone(),
            size_bytes: Some(0),
            size_estimated: false,
            frequency_hz: periods.get(&c.topic).map(|&p| 1e9 / p as f64),
            qos: Vec::new(),
            definition_hashes: Vec::new(),
            service_requests: None,
            service_responses: None,
        });
        t.connections += 1;
        if let Some(text) = c.metadata.get(rbag_storage::rosbag2::QOS_KEY) {
            // A profile the bag mangled is left out: info reports, it does not validate.
            if let Ok(profiles) = qos::parse(text) {
                t.qos.extend(profiles.iter().map(QosInfo::from_profile));
            }
        }
        if let Some(h) = definition_hash(c) {
            if !t.definition_hashes.contains(&h) {
                t.definition_hashes.push(h);
            }
        }
        let d = definitions
            .entry((c.message_type.clone(), c.definition_encoding.clone(), c.definition.clone()))
            .or_insert_with(|| DefinitionInfo {
                name: c.message_type.clone(),
                encoding: c.definition_encoding.clone(),
                hash: definition_hash(c),
                length: c.definition.len() as u64,
                topics: Vec::new(),
                text: None,
            });
        if !d.topics.contains(&c.topic) {
            d.topics.push(c.topic.clone());
        }
        let stats = s.connections.get(&c.id);
        t.message_count += stats.map_or(0, |x| x.message_count);
        let size = stats.and_then(|x| x.data_bytes.map(|b| (b, false)).or(x.estimated_bytes.map(|b| (b, true))));
        t.size_bytes = t.size_bytes.zip(size).map(|(a, (b, _))| a + b);
        t.size_estimated |= size.is_some_and(|s| s.1);
        if !c.message_type.is_empty() {
            types.insert(TypeInfo {
                name: c.message_type.clone(),
                md5sum: c.metadata.get(rbag_storage::ros1::keys::MD5SUM).cloned(),
            });
        }
    }
    Ok(BagInfo {
        path: path.display().to_string(),
        files: s.files.iter().map(|f| f.display().to_string()).collect(),
        storage: s.format,
        version: s.version,
        indexed: s.indexed,
        size_bytes: s.size_bytes,
        message_count: s.message_count,
        start_ns: s.start_ns,
        end_ns: s.end_ns,
        duration_ns: match (s.start_ns, s.end_ns) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        },
        chunk_count: s.chunk_count,
        compression: s
            .compression
            .into_iter()
            .map(|(name, c)| CompressionInfo {
                name,
                chunks: c.chunks,
                compressed_bytes: c.compressed_bytes,
                uncompressed_bytes: c.uncompressed_bytes,
            })
            .collect(),
        properties: s.properties,
        types: types.into_iter().collect(),
        actions: actions(topics.values()),
        topics: topics.into_values().collect(),
        undeclared: s
            .undeclared
            .iter()
            .map(|(&connection, &message_count)| UndeclaredInfo { connection, message_count })
            .collect(),
        definitions: definitions.into_values().filter(|d| !d.name.is_empty()).collect(),
    })
}

/// The hash a connection records for its definition.
fn definition_hash(c: &rbag_storage::Connection) -> Option<String> {
    [rbag_storage::ros1::keys::MD5SUM, rbag_storage::rosbag2::TYPE_HASH_KEY]
        .iter()
        .filter_map(|k| c.metadata.get(*k))
        .find(|h| !h.is_empty() && *h != "*")
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(name: &str, ty: &str, count: u64) -> TopicInfo {
        TopicInfo {
            name: name.into(),
            message_type: ty.into(),
            message_count: count,
            connections: 1,
            encoding: "cdr".into(),
            size_bytes: Some(10 * count),
            size_estimated: false,
            frequency_hz: None,
            qos: Vec::new(),
            definition_hashes: Vec::new(),
            service_requests: None,
            service_responses: None,
        }
    }

    #[test]
    fn actions_group_their_topics_by_name_and_type() {
        let topics = [
            topic("/fib/_action/feedback", "example_interfaces/action/Fibonacci_FeedbackMessage", 4),
            topic("/fib/_action/status", "action_msgs/msg/GoalStatusArray", 3),
            topic("/fib/_action/send_goal/_service_event", "example_interfaces/action/Fibonacci_SendGoal_Event", 2),
            // Only a status: the type is not known.
            topic("/bare/_action/status", "action_msgs/msg/GoalStatusArray", 1),
            // Named like an action's but of another type: a plain (hidden) topic.
            topic("/fake/_action/status", "std_msgs/msg/String", 7),
            topic("/add/_service_event", "example_interfaces/srv/AddTwoInts_Event", 5),
        ];
        let mut got = actions(topics.iter());
        assert_eq!(got.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["/bare", "/fib"]);
        let fib = &got[1];
        assert_eq!(fib.action_type, "example_interfaces/action/Fibonacci");
        assert_eq!((fib.message_count, fib.size_bytes), (9, Some(90)));
        let counts: Vec<(&str, u64)> = fib.topics.iter().map(|t| (t.name.as_str(), t.message_count)).collect();
        assert_eq!(counts, [("feedback", 4), ("status", 3)]);
        let events: Vec<(&str, u64)> = fib.services.iter().map(|s| (s.name.as_str(), s.event_count)).collect();
        assert_eq!(events, [("send_goal", 2), ("cancel_goal", 0), ("get_result", 0)]);
        assert_eq!(fib.services[1].topic, "/fib/_action/cancel_goal/_service_event");
        assert_eq!(got[0].action_type, "");
        assert!(!topics[2].is_service_event() && topics[5].is_service_event());
        assert!(topics[4].action_part().is_none());
        sort_actions(&mut got, TopicSort::Count);
        assert_eq!(got[0].name, "/fib");
    }
}
