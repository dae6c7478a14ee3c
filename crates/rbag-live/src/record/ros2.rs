//! The ROS 2 side of a recording: a participant on ROS_DOMAIN_ID, discovery polled every
//! polling interval, subscriptions with adapted QoS, and each topic's definition filled from
//! the type sources before its first sample is stored.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rbag_msg::Registry;
use rbag_ros2::dds::{DdsGraph, Participant};
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
}

/// rosbag2's default bag name at `wall_ns`: `rosbag2_YYYY_MM_DD-HH_MM_SS` in local time.
pub fn default_dir_name(wall_ns: u64) -> PathBuf {
    let stamp = rbag_transport::record::local_stamp(wall_ns);
    match stamp.split('-').collect::<Vec<_>>().as_slice() {
        [y, mo, d, h, mi, s] => PathBuf::from(format!("rosbag2_{y}_{mo}_{d}-{h}_{mi}_{s}")),
        _ => PathBuf::from(format!("rosbag2_{stamp}")),
    }
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

/// What the recorder's control services are served on: the recording's own participant, or
/// its Zenoh session.
#[derive(Clone)]
pub(super) enum Ros2Host {
    Dds(Arc<Participant>),
    /// The session, and the node the recording subscribes as.
    Zenoh(Arc<rbag_ros2::zenoh::ZenohSession>, rbag_ros2::zenoh::Node),
}

impl Ros2Host {
    /// Node `node`, holding the recording's subscriptions (announced on `ros_discovery_info`
    /// over DDS, the subscriptions' node over Zenoh) and serving its services.
    pub(super) fn node(&self, node: &str) -> Result<Arc<dyn ServiceHost>, LiveRecordError> {
        use rbag_ros2::zenoh::ZenohServices;
        Ok(match self {
            Ros2Host::Dds(p) => Arc::new(rbag_ros2::dds::DdsNode::new(p.clone(), node)?),
            Ros2Host::Zenoh(s, n) if n.name() == node.trim_start_matches('/') => {
                Arc::new(ZenohServices::with_node(s.clone(), n.clone()))
            }
            Ros2Host::Zenoh(s, _) => Arc::new(ZenohServices::new(s.clone(), node)?),
        })
    }
}

pub(super) struct Ros2Feed {
    /// Where the recorder's control services live.
    host: Ros2Host,
    recording: Ros2Recording,
    polling: Duration,
    next: Instant,
}

impl Ros2Feed {
    pub(super) fn start(source: Ros2Source, queue: Arc<RecordQueue>, log: &Log) -> Result<Ros2Feed, LiveRecordError> {
        let (host, graph): (_, Box<dyn Graph>) = match source.middleware {
            Ros2Middleware::Dds => {
                let participant = Arc::new(graph::participant()?);
                log(format!("Joined DDS domain {}.", participant.domain()));
                (Ros2Host::Dds(participant.clone()), Box::new(DdsGraph::new(participant)?))
            }
            Ros2Middleware::Zenoh => {
                let session = graph::zenoh_session(log)?;
                let graph = rbag_ros2::zenoh::ZenohGraph::new(session.clone(), &source.node)?;
                (Ros2Host::Zenoh(session, graph.node().clone()), Box::new(graph))
            }
        };
        let hook = definition_hook(source.definitions);
        let recording = Ros2Recording::new(graph, source.spec, queue, hook, log.clone())?;
        Ok(Ros2Feed { host, recording, polling: source.polling.max(Duration::from_millis(1)), next: Instant::now() })
    }

    pub(super) fn host(&self) -> Ros2Host {
        self.host.clone()
    }
}

impl Feed for Ros2Feed {
    fn poll(&mut self, _log: &Log) {
        if Instant::now() >= self.next {
            self.recording.poll();
            self.next = Instant::now() + self.polling;
        }
    }

    fn topic_done(&mut self, _topic: &str) -> bool {
        false
    }

    fn turn(&self) -> Duration {
        Duration::from_millis(10).min(self.polling)
    }

    fn leave(self: Box<Self>) {
        drop(self.recording);
    }
}
