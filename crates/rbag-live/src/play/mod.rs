//! Live playback: bags published into a ROS 1 graph ([`ros1::play`]) or a ROS 2 DDS domain
//! ([`ros2::play`]), as `rosbag play` and `ros2 bag play` do.
//!
//! A front end builds a [`PlaySpec`] (the bags, what to select, the player's options, remaps)
//! plus the middleware's own options, joins the graph (a ROS 1 [`Node`](rbag_ros1::node::Node)
//! or a DDS [`Participant`](rbag_ros2::dds::Participant)), and calls `play` with the receiving
//! end of [`controls`]. The [`PlayHandle`] drives the run from other threads (keys, signals,
//! scripts): pause, resume, step, rate up and down, seek, stop. What the run has to say (a
//! topic left out, a status change) arrives as [`PlayEvent`]s; the result is a [`LiveReport`].
//!
//! Scheduling (rate, pause, loop, `/clock`) is `rbag_transport`'s [`Player`]; this module
//! plans each connection (converting ROS 1 ⇄ CDR where the bag's encoding is not the
//! middleware's), advertises it, and carries the middleware's own features: latching,
//! `--rate-control-topic`, rosbag's `~pause_playback`, rosbag2's control services and
//! `--publish-service-requests`.
//!
//! [`Player`]: rbag_transport::play::Player

mod plan;
mod rate_control;
pub mod ros1;
#[cfg(feature = "ros2")]
pub mod ros2;
#[cfg(feature = "ros2")]
mod service_requests;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

use rbag_storage::{Filter, StorageReader};
use rbag_transport::clock::Clock;
use rbag_transport::play::{Control, PlayError, PlayOptions, PlayReport, PlayState};

pub use plan::UserTypes;

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

/// A handle on a run and the run's end of it: see [`PlayHandle`].
pub fn controls() -> (PlayHandle, PlayControls) {
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    (PlayHandle { tx: tx.clone(), stop: stop.clone() }, PlayControls { rx, handle: PlayHandle { tx, stop } })
}

/// Drives a running playback from any thread. Cheap to clone; controls sent before the run
/// starts are acted on when it does.
#[derive(Clone, Debug)]
pub struct PlayHandle {
    tx: Sender<Control>,
    stop: Arc<AtomicBool>,
}

impl PlayHandle {
    /// Sends any player control; false when the run is over.
    pub fn send(&self, c: Control) -> bool {
        self.tx.send(c).is_ok()
    }

    /// Pauses (a paused player publishes nothing but steps).
    pub fn pause(&self) -> bool {
        self.send(Control::Pause)
    }

    /// Resumes a paused player.
    pub fn resume(&self) -> bool {
        self.send(Control::Resume)
    }

    /// Pauses when playing, resumes when paused.
    pub fn toggle_pause(&self) -> bool {
        self.send(Control::TogglePause)
    }

    /// While paused, publishes exactly the next message.
    pub fn step(&self) -> bool {
        self.send(Control::Step)
    }

    /// Sets the rate factor.
    pub fn set_rate(&self, rate: f64) -> bool {
        self.send(Control::SetRate(rate))
    }

    /// One rate step up (the options' `rate_step` says how big).
    pub fn faster(&self) -> bool {
        self.send(Control::FasterRate)
    }

    /// One rate step down.
    pub fn slower(&self) -> bool {
        self.send(Control::SlowerRate)
    }

    /// Ends the run: waits for subscribers, discovery or slow readers give up too.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.tx.send(Control::Quit);
    }

    /// Whether [`stop`](Self::stop) was called.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// The run's end of [`controls`]: given to `play`.
#[derive(Debug)]
pub struct PlayControls {
    rx: Receiver<Control>,
    /// For the run's own services (a pause service, the end of a burst).
    handle: PlayHandle,
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

/// Nanoseconds since the epoch, now.
fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// The connection ids of `spec.pause_topics` among `source`'s.
fn pause_connections(source: &rbag_transport::play::BagSource, topics: &[String]) -> std::collections::BTreeSet<u32> {
    source.connections().iter().filter(|c| topics.contains(&c.topic)).map(|c| c.id).collect()
}
