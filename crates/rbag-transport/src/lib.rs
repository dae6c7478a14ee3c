//! Recording and playback logic with no network code.
//!
//! Middlewares (`rbag-ros1`, `rbag-ros2`) hand raw messages to a recording and take scheduled
//! messages from the player; everything that decides *what* is stored and *when* something is
//! sent lives here, so it is the same for every middleware and can be tested with a virtual
//! clock. The modules:
//! - recording: [`queue`] (the byte-bounded buffer the network threads push into),
//!   [`pipeline`] (the writer thread's loop: drain, checkpoint, split on demand, pause,
//!   snapshot), [`record`] (the [`Recorder`]: files, splits, retention, limits, latched
//!   repeats, disk space, the drop report), [`snapshot`] (the ring buffer), [`select`]
//!   (`rosbag record`'s topic selection), [`disk`] (free space), [`throttle`] (rate-limited
//!   warnings) and [`key`] (the connection key and the wall clock they share);
//! - playback: [`play`] (the [`play::Player`], its sources and controls) and [`clock`] (the
//!   time source it runs on).
//!
//! The rule for when a file ends and which old files go is not here but in
//! [`rbag_storage::Rosbag2Options::split_due`], so `rbag convert`'s rosbag2 splits follow it
//! too.

#![warn(missing_docs)]

pub mod clock;
pub mod play;

pub mod disk;
pub mod key;
pub mod pipeline;
pub mod queue;
pub mod record;
pub mod select;
pub mod snapshot;
pub mod throttle;

pub use disk::{free_space, SpaceProbe, DISK_CHECK_INTERVAL_NS};
pub use key::{now_ns, ConnKey};
pub use pipeline::{Controls, Event, Pipeline, PipelineOptions, SnapshotOptions};
pub use queue::{Popped, Push, Queued, RecordQueue};
pub use record::{
    Layout, Notice, OutputName, RecordError, RecordOptions, RecordReport, Recorder, Split, StopReason, WriteOutcome,
    DROPPED_TOPIC,
};
pub use select::{SelectError, TopicSelection};
pub use snapshot::SnapshotBuffer;
