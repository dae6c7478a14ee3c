//! Recording and playback logic with no network code.
//!
//! Middlewares (`rbag-ros1`, later `rbag-ros2`) deliver raw messages to a [`Recorder`]-side
//! API and take scheduled messages from the player; everything that decides *what* is stored
//! and *when* something is sent lives here, so it is the same for every middleware and can be
//! tested with a virtual clock.

pub mod clock;
pub mod play;

pub mod disk;
pub mod queue;
pub mod record;
pub mod select;
pub mod snapshot;
pub mod split;
pub mod throttle;

pub use disk::{free_space, SpaceProbe, DISK_CHECK_INTERVAL_NS};
pub use queue::{Popped, Push, Queued, RecordQueue};
pub use record::{
    ConnKey, Notice, OutputName, RecordError, RecordOptions, RecordReport, Recorder, Split, StopReason, WriteOutcome,
    DROPPED_TOPIC,
};
pub use select::{SelectError, TopicSelection};
pub use snapshot::SnapshotBuffer;
