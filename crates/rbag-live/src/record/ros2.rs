//! The ROS 2 side of a recording: a participant on ROS_DOMAIN_ID, discovery polled every
//! polling interval, subscriptions with adapted QoS, and each topic's definition filled from
//! the type sources before its first sample is stored.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rbag_msg::Registry;
use rbag_ros2::dds::DdsGraph;
use rbag_ros2::graph::Graph;
use rbag_ros2::record::{DefinitionHook, Ros2RecordSpec, Ros2Recording};
use rbag_ros2::service::ServiceHost;
use rbag_storage::rosbag2::TYPE_HASH_KEY;
use rbag_storage::Connection;
use rbag_transport::RecordQueue;

use super::{Feed, LiveRecordError, Log};
use crate::graph;
use crate::middleware::Ros2Middleware;

/// What to record from a ROS 2 graph.
pub struct Ros2Source {
    /// Topics, services, types and QoS overrides (`ros2 bag record`'s selection).
    pub spec: Ros2RecordSpec,
    /// ROS 2 types whose definitions are stored with the topics (`--msg-path` and the bundled
    /// store); a type missing here is recorded without one.
    pub definitions: Registry,
    /// How often discovery is polled for new topics.
    pub polling: Duration,
    /// DDS (Cyclone) or Zenoh (as rmw_zenoh).
    pub middleware: Ros2Middleware,
    /// The recorder's node name (rosbag2's `rosbag2_recorder`, `--node-name`).
    pub node: String,
    /// A graph already joined (a recorder whose services outlive its recordings); `None`: the
    /// recording joins `middleware` as `node` itself.
    pub join: Option<Ros2Join>,
    /// While off, no new topics are discovered (`~/stop_discovery`).
    pub discovery: Arc<AtomicBool>,
}

impl Ros2Source {
    /// What `spec` selects, on `middleware`, as rosbag2's `rosbag2_recorder` node, polled
    /// every 100 ms, with types from `definitions`.
    pub fn new(spec: Ros2RecordSpec, definitions: Registry, middleware: Ros2Middleware) -> Ros2Source {
        Ros2Source {
            spec,
            definitions,
            polling: Duration::from_millis(100),
            middleware,
            node: "rosbag2_recorder".into(),
            join: None,
            discovery: Arc::new(AtomicBool::new(true)),
        }
    }
}

/// rosbag2's default bag name at `wall_ns`: `rosbag2_YYYY_MM_DD-HH_MM_SS` in local time.
pub fn default_dir_name(wall_ns: u64) -> PathBuf {
    let stamp = rbag_transport::record::local_stamp(wall_ns);
    match stamp.split('-').collect::<Vec<_>>().as_slice() {
        [y, mo, d, h, mi, s] => PathBuf::from(format!("rosbag2_{y}_{mo}_{d}-{h}_{mi}_{s}")),
        _ => PathBuf::from(format!("rosbag2_{stamp}")),
    }
}

/// `dir`, or when it exists the first of `dir(1)`, `dir(2)`… that does not: where rosbag2's
/// recorder (Lyrical) puts a new recording asked for with a name in use.
pub fn unused_dir_name(dir: &std::path::Path) -> PathBuf {
    let mut n = 0u64;
    let mut candidate = dir.to_path_buf();
    while candidate.exists() {
        n += 1;
        let mut name = dir.as_os_str().to_os_string();
        name.push(format!("({n})"));
        candidate = PathBuf::from(name);
    }
    candidate
}

/// Fills a connection's definition (and type hash) from `reg`; says so when the type is
/// unknown (the bytes are recorded anyway, a definition can be given when reading).
fn definition_hook(reg: Registry) -> DefinitionHook {
    Box::new(move |conn: &mut Connection| {
        let Ok(schema) = rbag_msg::Schema::compile(&reg, &conn.message_type) else {
            return Some(format!("type {} is unknown to rbag; recorded without a definition", conn.message_type));
        };
        conn.definition = rbag_msg::dialect::concatenated(&schema, &reg, &|_| None);
        conn.definition_encoding = "ros2msg".into();
        if !conn.metadata.contains_key(TYPE_HASH_KEY) {
            if let Ok(h) = reg.rihs01(&conn.message_type) {
                conn.metadata.insert(TYPE_HASH_KEY.into(), h);
            }
        }
        None
    })
}

/// A ROS 2 graph joined as the recorder's node: a DDS participant announcing the node (on
/// `ros_discovery_info`), or a Zenoh session with the node's token. It outlives recordings, so
/// a recorder's services stay up between them; each recording subscribes as this node.
#[derive(Clone)]
pub enum Ros2Join {
    /// Cyclone DDS.
    Dds(Arc<rbag_ros2::dds::DdsNode>),
    /// Zenoh, as rmw_zenoh.
    Zenoh(Arc<rbag_ros2::zenoh::ZenohSession>, rbag_ros2::zenoh::Node),
}

impl Ros2Join {
    /// Joins `ROS_DOMAIN_ID`'s graph on `middleware` as node `node` (`rosbag2_recorder`),
    /// saying so through `log`.
    pub fn open(middleware: Ros2Middleware, node: &str, log: &Log) -> Result<Ros2Join, LiveRecordError> {
        let node = node.trim_start_matches('/');
        Ok(match middleware {
            Ros2Middleware::Dds => {
                let participant = Arc::new(graph::participant()?);
                log(format!("Joined DDS domain {}.", participant.domain()));
                Ros2Join::Dds(Arc::new(rbag_ros2::dds::DdsNode::new(participant, node)?))
            }
            Ros2Middleware::Zenoh => {
                let session = graph::zenoh_session(log)?;
                let n = rbag_ros2::zenoh::Node::new(&session, "/", node)?;
                Ros2Join::Zenoh(session, n)
            }
        })
    }

    /// Where the node's services are served.
    pub fn services(&self) -> Arc<dyn ServiceHost> {
        match self {
            Ros2Join::Dds(n) => n.clone(),
            Ros2Join::Zenoh(s, n) => Arc::new(rbag_ros2::zenoh::ZenohServices::with_node(s.clone(), n.clone())),
        }
    }

    fn graph(&self) -> Result<Box<dyn Graph>, LiveRecordError> {
        Ok(match self {
            Ros2Join::Dds(n) => Box::new(DdsGraph::new(n.participant_arc())?),
            Ros2Join::Zenoh(s, n) => Box::new(rbag_ros2::zenoh::ZenohGraph::with_node(s.clone(), n.clone())?),
        })
    }
}

/// rosbag2's `/events/write_split` (`Rosbag2QoS::EventQoS`: reliable, volatile, keep last 3).
const WRITE_SPLIT_TOPIC: &str = "/events/write_split";
const WRITE_SPLIT_TYPE: &str = "rosbag2_interfaces/msg/WriteSplitEvent";
const WRITE_SPLIT_DDS_TYPE: &str = "rosbag2_interfaces::msg::dds_::WriteSplitEvent_";

fn event_qos() -> rbag_storage::rosbag2::qos::QosProfile {
    use rbag_storage::rosbag2::qos::{policy, QosProfile};
    QosProfile {
        history: policy::KEEP_LAST,
        depth: 3,
        reliability: policy::RELIABLE,
        durability: policy::VOLATILE,
        ..QosProfile::default()
    }
}

/// A `WriteSplitEvent` as CDR (little endian, with its encapsulation header): three strings.
pub(crate) fn write_split_cdr(closed: &str, opened: &str, node_name: &str) -> Vec<u8> {
    let mut b = vec![0, 1, 0, 0];
    for text in [closed, opened, node_name] {
        while b.len() % 4 != 0 {
            b.push(0);
        }
        b.extend((text.len() as u32 + 1).to_le_bytes());
        b.extend(text.as_bytes());
        b.push(0);
    }
    b
}

enum SplitWriter {
    Dds(rbag_ros2::dds::RawWriter),
    Zenoh(Box<rbag_ros2::zenoh::ZenohPublisher>),
}

/// The recorder's write_split publisher, on the recorder's node.
struct WriteSplitPublisher {
    writer: SplitWriter,
    node_name: String,
    log: Log,
    /// Keeps the graph joined until the last event is out.
    _join: Ros2Join,
}

impl WriteSplitPublisher {
    fn new(join: &Ros2Join, node: &str, type_hash: &str, log: &Log) -> Result<Self, LiveRecordError> {
        let writer = match join {
            Ros2Join::Dds(n) => {
                let user_data = format!("typehash={type_hash};");
                SplitWriter::Dds(rbag_ros2::dds::RawWriter::new(
                    n.participant(),
                    &format!("rt{WRITE_SPLIT_TOPIC}"),
                    WRITE_SPLIT_DDS_TYPE,
                    &event_qos(),
                    Some(&user_data),
                )?)
            }
            Ros2Join::Zenoh(s, n) => SplitWriter::Zenoh(Box::new(rbag_ros2::zenoh::ZenohPublisher::new(
                s,
                n,
                WRITE_SPLIT_TOPIC,
                WRITE_SPLIT_DDS_TYPE,
                type_hash,
                &event_qos(),
            )?)),
        };
        Ok(WriteSplitPublisher {
            writer,
            node_name: format!("/{}", node.trim_start_matches('/')),
            log: log.clone(),
            _join: join.clone(),
        })
    }
}

impl super::SplitEvents for WriteSplitPublisher {
    fn publish(&mut self, closed: &std::path::Path, opened: &std::path::Path) {
        let data = write_split_cdr(&closed.to_string_lossy(), &opened.to_string_lossy(), &self.node_name);
        let now = rbag_transport::now_ns() as i64;
        let sent = match &self.writer {
            SplitWriter::Dds(w) => w.write(&data, now).map_err(|e| e.to_string()),
            SplitWriter::Zenoh(w) => w.write(&data, now).map_err(|e| e.to_string()),
        };
        if let Err(e) = sent {
            (self.log)(format!("warning: publishing on {WRITE_SPLIT_TOPIC}: {e}"));
        }
    }
}

pub(super) struct Ros2Feed {
    /// The graph, kept while the recording runs (a join made for it alone leaves with it).
    _join: Ros2Join,
    split_events: Option<WriteSplitPublisher>,
    recording: Ros2Recording,
    discovery: Arc<AtomicBool>,
    polling: Duration,
    next: Instant,
}

impl Ros2Feed {
    pub(super) fn start(source: Ros2Source, queue: Arc<RecordQueue>, log: &Log) -> Result<Ros2Feed, LiveRecordError> {
        let join = match source.join {
            Some(j) => j,
            None => Ros2Join::open(source.middleware, &source.node, log)?,
        };
        // The event type is in the bundled store; without its hash, no events (said once).
        let split_events = match source.definitions.rihs01(WRITE_SPLIT_TYPE) {
            Ok(hash) => Some(WriteSplitPublisher::new(&join, &source.node, &hash, log)?),
            Err(e) => {
                log(format!("warning: {WRITE_SPLIT_TOPIC} not published: {e}"));
                None
            }
        };
        let hook = definition_hook(source.definitions);
        let recording = Ros2Recording::new(join.graph()?, source.spec, queue, hook, log.clone())?;
        Ok(Ros2Feed {
            _join: join,
            split_events,
            recording,
            discovery: source.discovery,
            polling: source.polling.max(Duration::from_millis(1)),
            next: Instant::now(),
        })
    }
}

impl Feed for Ros2Feed {
    fn poll(&mut self, _log: &Log) {
        // Stopped discovery keeps the subscriptions made and makes no new ones.
        if Instant::now() >= self.next && self.discovery.load(Ordering::Relaxed) {
            self.recording.poll();
            self.next = Instant::now() + self.polling;
        }
    }

    fn topic_done(&mut self, _topic: &str) -> bool {
        false
    }

    fn split_events(&mut self) -> Option<Box<dyn super::SplitEvents>> {
        self.split_events.take().map(|p| Box::new(p) as Box<dyn super::SplitEvents>)
    }

    fn turn(&self) -> Duration {
        Duration::from_millis(10).min(self.polling)
    }

    fn leave(self: Box<Self>) {
        drop(self.recording);
    }
}

#[cfg(test)]
mod tests {
    use super::write_split_cdr;

    #[test]
    fn write_split_event_is_three_aligned_cdr_strings() {
        let b = write_split_cdr("a/b_0.mcap", "", "/rosbag2_recorder");
        let mut want = vec![0, 1, 0, 0];
        want.extend(11u32.to_le_bytes());
        want.extend(b"a/b_0.mcap\0");
        want.push(0); // padding to 4
        want.extend(1u32.to_le_bytes());
        want.push(0);
        want.extend([0, 0, 0]);
        want.extend(18u32.to_le_bytes());
        want.extend(b"/rosbag2_recorder\0");
        assert_eq!(b, want);
    }
}
