//! What a recording needs from a ROS 2 graph, whatever carries it: the endpoints discovery
//! shows (in DDS names, which rmw_zenoh's tokens use too) and raw subscriptions. DDS
//! ([`crate::dds`]) and Zenoh ([`crate::zenoh`]) each implement [`Graph`], so the recording's
//! rules ([`crate::record`]) are written once.

use rbag_storage::rosbag2::qos::QosProfile;

/// A 16-byte endpoint identity (a DDS GUID, an rmw_zenoh GID), printed as hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Guid(pub [u8; 16]);

impl Guid {
    /// The participant part (the first 12 bytes) with the DDS participant entity id.
    pub fn participant(self) -> Guid {
        let mut g = self.0;
        g[12..].copy_from_slice(&[0, 0, 1, 0xc1]);
        Guid(g)
    }
}

impl std::fmt::Display for Guid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A writer or a reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndpointKind {
    /// A publication (DCPSPublication, an `MP` token).
    Writer,
    /// A subscription (DCPSSubscription, an `MS` token).
    Reader,
}

/// An endpoint somewhere in the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Writer or reader.
    pub kind: EndpointKind,
    /// The endpoint's GUID.
    pub guid: Guid,
    /// Its participant's (or Zenoh session's) GUID.
    pub participant: Guid,
    /// The DDS topic name (`rt/chatter`).
    pub topic: String,
    /// The DDS type name (`std_msgs::msg::dds_::String_`).
    pub type_name: String,
    /// The QoS it offers (writer) or requests (reader).
    pub qos: QosProfile,
    /// The type's `RIHS01_…` hash, where the endpoint says it.
    pub type_hash: Option<String>,
    /// Whether it belongs to this process's own participant or session.
    pub local: bool,
}

/// A change in the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointEvent {
    /// A new endpoint was discovered.
    Appeared(Endpoint),
    /// The endpoint left (deleted, or its participant vanished).
    Gone(Endpoint),
}

/// One received sample.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Serialized payload with its 4-byte encapsulation header (what rosbag2 stores).
    pub data: Vec<u8>,
    /// The writer's source timestamp, ns since the epoch.
    pub source_timestamp: i64,
    /// Which writer sent it (a local handle, or the first bytes of its GID).
    pub publication: u64,
}

/// Called on the middleware's receive thread for every sample: hand it off and return.
pub type SampleCallback = Box<dyn Fn(Sample) + Send + Sync>;

/// Samples larger than this are dropped with the callback never seeing them; the limit
/// protects the recorder's memory from a peer that announces absurd sizes.
pub const MAX_SAMPLE_BYTES: usize = 1 << 30;

/// A subscription; dropping it stops the callbacks.
pub trait Subscription: Send {
    /// Samples dropped so far for being over [`MAX_SAMPLE_BYTES`].
    fn oversized(&self) -> u64;
}

/// Discovery and raw subscriptions on one ROS 2 graph.
pub trait Graph: Send {
    /// The discovery news since the last call.
    fn poll(&mut self) -> Vec<EndpointEvent>;
    /// Every endpoint known now.
    fn endpoints(&self) -> Vec<Endpoint>;
    /// Subscribes to the ROS topic `topic` of DDS type `dds_type` with `qos`; `on_sample`
    /// gets each sample.
    fn subscribe(
        &self,
        topic: &str,
        dds_type: &str,
        type_hash: Option<&str>,
        qos: &QosProfile,
        on_sample: SampleCallback,
    ) -> Result<Box<dyn Subscription>, GraphError>;
}

/// A middleware call failed: which, on what, and why.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// A DDS call.
    #[cfg(feature = "dds")]
    #[error(transparent)]
    Dds(#[from] crate::dds::DdsError),
    /// A Zenoh call.
    #[cfg(feature = "zenoh")]
    #[error(transparent)]
    Zenoh(#[from] crate::zenoh::ZenohError),
}
