//! What a front end gives playback (the spec, the types, where events go) and what it gets
//! back (the report, the error).

use std::collections::BTreeMap;
use std::sync::Arc;

use rbag_bag::decode::TypeSources;
use rbag_bag::types;
use rbag_msg::Registry;
use rbag_storage::{Filter, StorageReader};
use rbag_transport::clock::Clock;
use rbag_transport::play::{PlayError, PlayOptions, PlayReport, PlayState};

/// What to play, whatever the middleware.
pub struct PlaySpec {
    /// Opened bags, merged by log time (ties to the earlier bag).
    pub bags: Vec<Box<dyn StorageReader>>,
    /// Which topics to play (its time bounds are ignored: `options` set them).
    pub filter: Filter,
    /// Rate, start offset, duration, loop, clock, start paused, ...
    pub options: PlayOptions,
    /// Pause before a message on these topics (`--pause-topics`).
    pub pause_topics: Vec<String>,
    /// Topic renames applied before publishing (`from` → `to`, resolved names).
    pub remaps: BTreeMap<String, String>,
    /// Message definitions beyond the bags' own and the bundled ones, for conversions.
    pub types: UserTypes,
    /// Wait this long (ns) after advertising, before playing, so subscribers can connect.
    pub delay_ns: u64,
    /// Where the run's events go.
    pub events: Events,
    /// The time source (`None`: the system's monotonic clock). A
    /// [`VirtualClock`](rbag_transport::clock::VirtualClock) makes a run exact and instant.
    pub clock: Option<Arc<dyn Clock>>,
}

impl PlaySpec {
    /// Plays every topic of `bags` once at rate 1, events discarded.
    pub fn new(bags: Vec<Box<dyn StorageReader>>) -> PlaySpec {
        PlaySpec {
            bags,
            filter: Filter::default(),
            options: PlayOptions::default(),
            pause_topics: Vec::new(),
            remaps: BTreeMap::new(),
            types: UserTypes::default(),
            delay_ns: 0,
            events: Events::default(),
            clock: None,
        }
    }
}

/// Something a playback run reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum PlayEvent {
    /// Something the user should know that does not stop the run (a topic left out, a QoS
    /// adapted, subscribers that did not match in time).
    Warning(String),
    /// A line of the middleware's own log (rosbag2's services say what they did).
    Info(String),
    /// The player paused, resumed or changed rate.
    State(PlayState),
    /// Waiting for a first subscriber on this (output) topic before playing.
    WaitingForSubscriber(String),
}

/// Receives a run's [`PlayEvent`]s, from the playing thread and from service threads.
#[derive(Clone, Default)]
pub struct Events(Option<Arc<dyn Fn(PlayEvent) + Send + Sync>>);

impl Events {
    /// Events go to `f`.
    pub fn new(f: impl Fn(PlayEvent) + Send + Sync + 'static) -> Events {
        Events(Some(Arc::new(f)))
    }

    /// Hands `e` to the receiver, if any.
    pub fn emit(&self, e: PlayEvent) {
        if let Some(f) = &self.0 {
            f(e);
        }
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Events(..)" } else { "Events(none)" })
    }
}

/// Message definitions a front end adds to what the bags carry (`--msg-path` directories),
/// per dialect. The bundled store fills in behind them.
#[derive(Debug, Clone)]
pub struct UserTypes {
    /// ROS 1 definitions.
    pub ros1: Registry,
    /// ROS 2 definitions.
    pub ros2: Registry,
}

impl Default for UserTypes {
    fn default() -> Self {
        UserTypes { ros1: Registry::new(rbag_msg::Dialect::Ros1), ros2: Registry::new(rbag_msg::Dialect::Ros2) }
    }
}

impl UserTypes {
    /// The fallback types for a bag with `properties`: these first, then the bundled store for
    /// the bag's distro (humble when it does not say), then types only later distros have.
    pub fn sources(&self, properties: &BTreeMap<String, String>) -> TypeSources {
        let (mut ros1, mut ros2) = (self.ros1.clone(), self.ros2.clone());
        ros1.fill_from(&types::bundled_ros1());
        ros2.fill_from(&types::bundled_ros2(types::distro_of(properties)));
        TypeSources::new(ros1, ros2)
    }
}

/// What a finished playback did.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveReport {
    /// The player's report; `None` when the run was stopped before playing (while waiting for
    /// subscribers) or had nothing to do (a burst of 0 messages).
    pub play: Option<PlayReport>,
    /// Wall time (ns since the epoch) at which the first played message was due.
    pub started_wall_ns: u64,
    /// Messages dropped from full subscriber queues (ROS 1), when the middleware counts them.
    pub dropped: Option<u64>,
}

/// Why playback failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The player's options are not playable (a rate of 0, a duration of 0).
    #[error("{0}")]
    Options(#[source] PlayError),
    /// Playback stopped on an error from the bags or the middleware.
    #[error(transparent)]
    Play(PlayError),
    /// A bag could not be read.
    #[error(transparent)]
    Storage(#[from] rbag_storage::Error),
    /// A connection could not be planned for the middleware.
    #[error("topic {topic}: {reason}")]
    Plan {
        /// The bag topic.
        topic: String,
        /// What failed.
        reason: String,
    },
    /// The ROS 1 node could not advertise, subscribe or serve.
    #[error("{what}: {source}")]
    Ros1 {
        /// What rbag was doing.
        what: String,
        /// The node's error.
        source: Box<rbag_ros1::node::NodeError>,
    },
    /// A DDS entity could not be made or used.
    #[cfg(feature = "ros2")]
    #[error(transparent)]
    Dds(#[from] rbag_ros2::dds::DdsError),
    /// The Zenoh session or a publisher could not be made or used.
    #[cfg(feature = "zenoh")]
    #[error(transparent)]
    Zenoh(#[from] rbag_ros2::zenoh::ZenohError),
    /// A control service could not be served.
    #[cfg(feature = "ros2")]
    #[error(transparent)]
    Services(#[from] rbag_ros2::graph::GraphError),
    /// A topic's type has no DDS name (`pkg/msg/Type`).
    #[error("topic {topic}: type {ty:?} has no ROS 2 name (pkg/msg/Type)")]
    NoDdsType {
        /// The output topic.
        topic: String,
        /// The recorded type.
        ty: String,
    },
    /// Replaying a service's requests is not possible (its types do not compile).
    #[error("service events on {topic}: {reason}")]
    ServiceRequests {
        /// The `<service>/_service_event` topic.
        topic: String,
        /// What failed.
        reason: String,
    },
    /// A thread could not be started.
    #[error("starting a thread: {0}")]
    Thread(#[source] std::io::Error),
}

impl From<PlayError> for Error {
    fn from(e: PlayError) -> Self {
        Error::Play(e)
    }
}
