//! Playback: sends a bag's messages to a sink on the schedule their log times set, scaled by a
//! rate, with pause, step, seek, loop and `/clock`, the way `rosbag play` and `ros2 bag play`
//! do. Everything runs on a [`Clock`], so the same run is exact and
//! repeatable under a [`VirtualClock`](crate::clock::VirtualClock).
//!
//! Decisions where the tools leave room:
//! - Message *i* is due at `t0 + (log_time − anchor) / rate`. The anchor is the first
//!   selected message (rosbag: it goes out at once) unless
//!   [`PlayOptions::from_start_point`]; a pause, rate change, step, seek, loop or skipped gap
//!   moves the anchor to the bag time reached at that moment, so nothing bursts afterwards.
//! - Paused means nothing is published but a [`Control::Step`], even in immediate mode and
//!   after a long gap (rosbag publishes the message after a skipped gap even when paused).
//! - Clock ticks keep coming while paused, all with the frozen bag time (both tools do this),
//!   and carry the bag time at the tick's due time; a message's own time is sent just before it
//!   unless the last clock value sent was already that time. In immediate mode only the
//!   per-message values are sent.
//! - Skip-empty: a message more than S after the bag time last reached (the previous message,
//!   the start, a seek target) is sent at once; the gap shrinks to zero, as in rosbag.
//! - Duration and until are inclusive; the start offset counts from the first message on any
//!   topic.
//! - A pause topic pauses as soon as its message is next, i.e. right after the previous message
//!   went out (rosbag does the same): the gap before it is still waited after resuming.
//! - A loop whose pass from the start point yields nothing ends the run instead of spinning.
//! - With [`MessageOrder::Sent`] every rule above reads send time for log time, except where
//!   storage is opened (the start point, a loop, a seek): storage seeks by log time, so a
//!   message logged before that point is not played even when it was sent after it.

#![warn(missing_docs)]

mod bag_source;
pub(crate) mod clock;
mod control;
mod error;
mod lateness;
mod options;
mod progress;
mod reorder;
mod run;
mod schedule;
mod source;

use std::sync::mpsc::Receiver;

pub use bag_source::BagSource;
pub use control::{Control, RateStep};
pub use error::PlayError;
pub use lateness::LatenessStats;
pub use options::{MessageOrder, PlayOptions};
pub use progress::{Progress, ProgressBar, ProgressHook, ProgressState};
pub use reorder::reorder;
pub use source::{MessageStream, PlaySink, PlaySource, PlayState, VecSource};

use self::clock::Clock;

/// How often a held message ([`PlaySink::hold`]) is asked about again.
pub const HOLD_POLL_NS: u64 = 10_000_000;

/// What a finished run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlayReport {
    /// Messages handed to [`PlaySink::publish`].
    pub published: u64,
    /// Calls of [`PlaySink::clock`].
    pub clock_published: u64,
    /// Times playback restarted from the start point.
    pub loops: u64,
    /// Whether a [`Control::Quit`] ended the run (rather than the end of the bag).
    pub quit: bool,
    /// How late messages went out against their schedule.
    pub lateness: LatenessStats,
    /// Clock time at which the schedule was first anchored: the moment the first played bag
    /// time maps to, from which every due time follows (`--stats` reports it as wall time).
    pub anchored_at: Option<u64>,
}

/// Plays sources with fixed options.
#[derive(Debug, Clone)]
pub struct Player {
    options: PlayOptions,
}

impl Player {
    /// A player with `options`, refused when no schedule can follow them.
    pub fn new(options: PlayOptions) -> Result<Self, PlayError> {
        options.validate()?;
        Ok(Player { options })
    }

    /// The options it plays with.
    pub fn options(&self) -> &PlayOptions {
        &self.options
    }

    /// Plays `source` into `sink` until the end (or forever with loop / keep-alive), a
    /// [`Control::Quit`], or the first error from the source or the sink.
    pub fn run(
        &mut self,
        source: &mut dyn PlaySource,
        sink: &mut dyn PlaySink,
        clock: &dyn Clock,
        controls: &Receiver<Control>,
    ) -> Result<PlayReport, PlayError> {
        run::Run::new(&self.options, sink, clock, controls).play(source)
    }
}
