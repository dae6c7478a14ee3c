//! The ROS 1 side of a recording: join the graph (starting an embedded master when none
//! answers), subscribe to the selected topics as they appear (rosbag polls the master every
//! second), publish the bag's name on `begin_write` (`-p`), and trigger snapshots from a topic.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rbag_ros1::node::{Node, SubEvent};
use rbag_ros1::record::{ConnectionHook, RecordSpec as Ros1Spec, Recording as Ros1Recording};
use rbag_ros1::tcpros::{Limits, Publication, TopicPublisher};
use rbag_transport::{Controls, RecordQueue, SelectError, TopicSelection};

use super::{Feed, LiveRecordError, Log};
use crate::graph::{self, Graph};

/// How often the master is asked for new topics (rosbag: every second).
const DISCOVERY_PERIOD: Duration = Duration::from_secs(1);

/// What to record from a ROS 1 graph, with names as the user gave them (resolved against the
/// node's namespace and remappings once it has joined).
#[derive(Debug, Clone, Default)]
pub struct Ros1Source {
    /// The node's name before `__name:=` (rosbag's is anonymous: `rbag_record_<pid>`).
    pub node_name: String,
    /// ROS remapping arguments (`from:=to`, `__name:=x`, `__ns:=x`).
    pub remaps: Vec<String>,
    /// Topic names, or patterns when `regex`.
    pub topics: Vec<String>,
    /// `-e`: `topics` are regular expressions matched against whole names.
    pub regex: bool,
    /// `-a`: every topic, including ones that appear later.
    pub all: bool,
    /// `-x`: leave out discovered topics matching this regular expression.
    pub exclude: Option<String>,
    /// `--node`: every topic this node subscribes to.
    pub node: Option<String>,
    /// Ask publishers for TCP_NODELAY.
    pub tcp_nodelay: bool,
    /// `-p`: publish each file's name (std_msgs/String) on `begin_write` when it is opened.
    pub publish_begin_write: bool,
    /// Any message on this topic triggers a snapshot.
    pub snapshot_topic: Option<String>,
}

impl Ros1Source {
    /// The topic selection with names resolved by `resolve`. Patterns that do not compile are
    /// errors, found before anything joins a graph when called with the identity.
    pub fn selection(&self, resolve: impl Fn(&str) -> String) -> Result<TopicSelection, SelectError> {
        let mut sel = if self.regex {
            TopicSelection::regexes(self.topics.iter())?
        } else {
            TopicSelection::topics(self.topics.iter().map(|t| resolve(t)))
        };
        if self.all {
            sel = sel.with_all();
        }
        if let Some(x) = &self.exclude {
            sel = sel.with_exclude(x)?;
        }
        Ok(sel)
    }
}

/// A std_msgs/String as ROS 1 serialises it.
fn string_msg(s: &str) -> Bytes {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v.into()
}

pub(super) struct Ros1Feed {
    graph: Graph,
    node: Node,
    recording: Ros1Recording,
    begin_write: Option<Arc<TopicPublisher>>,
    last_discovery: Option<Instant>,
}

impl Ros1Feed {
    pub(super) fn start(
        source: Ros1Source,
        queue: Arc<RecordQueue>,
        controls: Arc<Controls>,
        log: &Log,
    ) -> Result<Ros1Feed, LiveRecordError> {
        let name = if source.node_name.is_empty() { graph::anonymous("rbag_record") } else { source.node_name.clone() };
        let graph = graph::join_ros1(&name, &source.remaps, Limits::default(), |uri| {
            log(format!("rbag: no ROS master at {uri}; started an embedded master there (it stops when rbag exits)"))
        })?;
        let node = graph.node.clone();
        let selection = source.selection(|t| node.config().resolve(t))?;
        let hook: ConnectionHook = Arc::new(graph::complete_connection);
        let spec = Ros1Spec { selection, node: source.node.clone(), tcp_nodelay: source.tcp_nodelay };
        let recording = Ros1Recording::new(node.clone(), spec, queue, hook, log.clone());
        if let Some(t) = &source.snapshot_topic {
            let topic = node.config().resolve(t);
            node.subscribe(
                &topic,
                "*",
                true,
                Arc::new(move |e| {
                    if let SubEvent::Message { .. } = e {
                        controls.snapshot();
                    }
                }),
            )?;
        }
        let begin_write = if source.publish_begin_write {
            let p = Publication {
                topic: node.config().resolve("begin_write"),
                msg_type: "std_msgs/String".into(),
                md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
                message_definition: "string data\n".into(),
                latching: false,
                caller_id: node.name().to_string(),
                queue_size: 10,
            };
            Some(node.advertise(p)?)
        } else {
            None
        };
        Ok(Ros1Feed { graph, node, recording, begin_write, last_discovery: None })
    }
}

impl Feed for Ros1Feed {
    fn poll(&mut self, log: &Log) {
        if self.last_discovery.is_some_and(|t| t.elapsed() < DISCOVERY_PERIOD) {
            return;
        }
        self.last_discovery = Some(Instant::now());
        match self.recording.discover() {
            Ok(new) => {
                for t in new {
                    log(format!("Subscribing to {t}"));
                }
            }
            Err(e) => log(format!("warning: topic discovery: {e}")),
        }
    }

    fn topic_done(&mut self, topic: &str) -> bool {
        self.recording.finish_topic(topic);
        self.recording.all_finished()
    }

    fn opened(&mut self, path: &std::path::Path) {
        if let Some(pb) = &self.begin_write {
            pb.publish(string_msg(&path.display().to_string()));
        }
    }

    fn shutdown_requested(&self) -> Option<String> {
        self.node.wait_shutdown_request(Duration::ZERO)
    }

    fn turn(&self) -> Duration {
        Duration::from_millis(50)
    }

    fn leave(self: Box<Self>) {
        drop(self.recording);
        self.graph.leave();
    }
}
