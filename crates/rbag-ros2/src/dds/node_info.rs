//! `ros_discovery_info`: how a DDS-based ROS 2 process says which nodes it has and which
//! readers and writers belong to each (rmw_dds_common's ParticipantEntitiesInfo). Without it
//! `ros2 node list` shows no node for rbag, only nameless endpoints.
//!
//! As rmw_cyclonedds publishes it (rmw_node.cpp L1412-1453 at jazzy 2ec6f21c): DDS topic
//! `ros_discovery_info` (no `rt/` prefix), type `rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_`,
//! reliable, transient local, keep last 1, the whole participant's nodes in each sample and a new
//! sample whenever an endpoint comes or goes. GIDs are the 16-byte DDS GUIDs (Gid.msg is
//! `char[16] data` since Iron).
//!
//! rbag's process has one node (the recorder or the player). Its endpoints are the
//! participant's own, read back from DDS discovery, so nothing has to register with the node.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rbag_storage::rosbag2::qos::{policy, QosProfile};

use super::{DdsError, Endpoints, Guid, Participant, RawWriter};
use crate::graph::EndpointKind;

/// The DDS topic.
pub const TOPIC: &str = "ros_discovery_info";
/// The DDS type.
pub const TYPE: &str = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_";

/// How often the node's endpoints are looked at again.
const PERIOD: Duration = Duration::from_millis(100);

/// A node's entry: namespace, name, its readers' and writers' GIDs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeEntities {
    /// `/` at the root.
    pub namespace: String,
    /// The node's name.
    pub name: String,
    /// GIDs of its readers.
    pub readers: BTreeSet<Guid>,
    /// GIDs of its writers.
    pub writers: BTreeSet<Guid>,
}

/// ParticipantEntitiesInfo in little-endian CDR, with its encapsulation header.
pub fn encode(participant: Guid, nodes: &[NodeEntities]) -> Vec<u8> {
    let mut c = Cdr(vec![0, 1, 0, 0]);
    c.bytes(&participant.0);
    c.u32(nodes.len() as u32);
    for n in nodes {
        c.string(&n.namespace);
        c.string(&n.name);
        for gids in [&n.readers, &n.writers] {
            c.u32(gids.len() as u32);
            for g in gids {
                c.bytes(&g.0);
            }
        }
    }
    c.0
}

/// A CDR writer: alignment counts from after the encapsulation header.
struct Cdr(Vec<u8>);

impl Cdr {
    fn u32(&mut self, v: u32) {
        while !(self.0.len() - 4).is_multiple_of(4) {
            self.0.push(0);
        }
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }

    fn string(&mut self, s: &str) {
        self.u32(s.len() as u32 + 1);
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
    }
}

/// Publishes one node's `ros_discovery_info` while it lives, updated as the participant's
/// endpoints change; dropping it stops the updates (the last sample stays with the writer).
pub struct NodeAnnouncer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl NodeAnnouncer {
    /// Announces node `name` in `namespace` as the owner of every endpoint of `participant`.
    pub fn start(participant: &Participant, namespace: &str, name: &str) -> Result<NodeAnnouncer, DdsError> {
        let qos = QosProfile {
            history: policy::KEEP_LAST,
            depth: 1,
            reliability: policy::RELIABLE,
            durability: policy::TRANSIENT_LOCAL,
            ..QosProfile::default()
        };
        let writer = RawWriter::new(participant, TOPIC, TYPE, &qos, None)?;
        let mut endpoints = Endpoints::new(participant)?;
        let own = participant.guid();
        let stop = Arc::new(AtomicBool::new(false));
        let mut node = NodeEntities { namespace: namespace.into(), name: name.into(), ..NodeEntities::default() };
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("ros_discovery_info".into())
            .spawn(move || {
                let mut sent = None;
                while !flag.load(Ordering::Relaxed) {
                    endpoints.poll();
                    (node.readers, node.writers) = (BTreeSet::new(), BTreeSet::new());
                    // Its own discovery readers show up as readers of the built-in topics: not the node's.
                    for e in endpoints.all().filter(|e| e.local && e.topic != TOPIC && !e.topic.starts_with("DCPS")) {
                        match e.kind {
                            EndpointKind::Reader => node.readers.insert(e.guid),
                            EndpointKind::Writer => node.writers.insert(e.guid),
                        };
                    }
                    if sent.as_ref() != Some(&node) {
                        let now = crate::record::now_ns() as i64;
                        if writer.write(&encode(own, std::slice::from_ref(&node)), now).is_ok() {
                            sent = Some(node.clone());
                        }
                    }
                    std::thread::sleep(PERIOD);
                }
            })
            .map_err(|e| DdsError::own("announcing the node on ros_discovery_info".into(), e.to_string()))?;
        Ok(NodeAnnouncer { stop, thread: Some(thread) })
    }
}

/// A node on a participant: the participant, announced as holding node `name`'s endpoints,
/// and where that node's services are served.
pub struct DdsNode {
    participant: Arc<Participant>,
    _announcer: NodeAnnouncer,
}

impl DdsNode {
    /// Announces node `name` (in `/`) on `participant`.
    pub fn new(participant: Arc<Participant>, name: &str) -> Result<DdsNode, DdsError> {
        let announcer = NodeAnnouncer::start(&participant, "/", name.trim_start_matches('/'))?;
        Ok(DdsNode { participant, _announcer: announcer })
    }

    /// The participant.
    pub fn participant(&self) -> &Participant {
        &self.participant
    }

    /// The participant, shared.
    pub fn participant_arc(&self) -> Arc<Participant> {
        self.participant.clone()
    }
}

impl Drop for NodeAnnouncer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn participant_entities_info_is_laid_out_as_rosidl_does() {
        let g = |b: u8| Guid([b; 16]);
        let node = NodeEntities {
            namespace: "/".into(),
            name: "rbag".into(),
            readers: [g(1)].into(),
            writers: [g(2), g(3)].into(),
        };
        let out = encode(g(9), &[node]);
        let mut want = vec![0, 1, 0, 0];
        want.extend([9; 16]);
        want.extend(1u32.to_le_bytes());
        want.extend(2u32.to_le_bytes());
        want.extend(b"/\0\0\0"); // "/" + NUL, padded to 4 for the next length
        want.extend(5u32.to_le_bytes());
        want.extend(b"rbag\0\0\0\0");
        want.extend(1u32.to_le_bytes());
        want.extend([1; 16]);
        want.extend(2u32.to_le_bytes());
        want.extend([2; 16]);
        want.extend([3; 16]);
        assert_eq!(out, want);
    }
}
