//! What to play and how: the flags `rosbag play` and `ros2 bag play` share, in one struct.

use std::collections::BTreeSet;

use rbag_storage::Message;

use super::{PlayError, ProgressHook, RateStep};

/// Which of a message's two times orders playback and sets its schedule (`ros2 bag play
/// --message-order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MessageOrder {
    /// The receive time, the bag's log time: storage order, no reordering needed.
    #[default]
    Received,
    /// The send time (the publisher's source timestamp, MCAP's `publish_time`), reordered
    /// within [`PlayOptions::read_ahead`] messages. SQLite3 bags store none: there it is the
    /// receive time.
    Sent,
}

impl MessageOrder {
    /// The time of `m` that playback follows.
    pub fn time(self, m: &Message) -> u64 {
        match self {
            MessageOrder::Received => m.log_time,
            MessageOrder::Sent => m.publish_time,
        }
    }
}

/// Playback settings. Times are nanoseconds; bag times are log times, or send times with
/// [`MessageOrder::Sent`].
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// Rate factor (`-r`): 2 plays twice as fast.
    pub rate: f64,
    /// Start this far after the bag's first message, on any topic (`-s`, `--start-offset`).
    pub start_offset_ns: u64,
    /// Play only this long from the start point, inclusive (`-u`); must be positive.
    pub duration_ns: Option<u64>,
    /// Play nothing logged after this absolute bag time, inclusive (`--playback-until`).
    pub until_ns: Option<u64>,
    /// Restart from the start point at the end (`-l`).
    pub loop_: bool,
    /// At the end, keep running (clock ticks, controls) until told to quit (`-k`).
    pub keep_alive: bool,
    /// Publish without waiting between messages (`rosbag play -i`). Pause still holds.
    pub immediate: bool,
    /// When the next message is more than this far (bag time) after the last one reached, it is
    /// sent at once and the schedule continues from it: the gap shrinks to nothing
    /// (`--skip-empty`).
    pub skip_empty_ns: Option<u64>,
    /// Start paused (`--pause`).
    pub start_paused: bool,
    /// Publish the bag time through [`PlaySink::clock`](super::PlaySink::clock) at this many
    /// ticks per second of real time, and each message's time just before it (`--clock --hz`).
    pub clock_hz: Option<f64>,
    /// Pause before publishing a message on these connections (`--pause-topics`, mapped to
    /// connection ids by the caller).
    pub pause_connections: BTreeSet<u32>,
    /// What [`Control::FasterRate`](super::Control::FasterRate) and `SlowerRate` do.
    pub rate_step: RateStep,
    /// Schedule from the start point, as `ros2 bag play` does, so a quiet stretch before the
    /// first selected message is waited out. Off (default): the first message goes out at once,
    /// as in `rosbag play`. Also applies to each loop.
    pub from_start_point: bool,
    /// Which time orders and schedules the messages (`--message-order`).
    pub message_order: MessageOrder,
    /// With [`MessageOrder::Sent`], how many messages are read ahead and reordered by send time
    /// (`--read-ahead-queue-size`, as rosbag2's priority queue): a message sent earlier than
    /// one already played, but logged more than this many messages later, plays late. 1 keeps
    /// storage order. Unused with [`MessageOrder::Received`]: storage gives log-time order.
    pub read_ahead: usize,
    /// Wait this long (clock time) before playing, reported as delayed through
    /// [`PlayOptions::progress`]; controls are heard meanwhile (`ros2 bag play --delay`).
    pub start_delay_ns: u64,
    /// Told where playback is after every message and state change: for a progress bar.
    pub progress: Option<ProgressHook>,
}

impl Default for PlayOptions {
    fn default() -> Self {
        PlayOptions {
            rate: 1.0,
            start_offset_ns: 0,
            duration_ns: None,
            until_ns: None,
            loop_: false,
            keep_alive: false,
            immediate: false,
            skip_empty_ns: None,
            start_paused: false,
            clock_hz: None,
            pause_connections: BTreeSet::new(),
            rate_step: RateStep::default(),
            from_start_point: false,
            message_order: MessageOrder::Received,
            read_ahead: 1000,
            start_delay_ns: 0,
            progress: None,
        }
    }
}

impl PlayOptions {
    /// Refuses settings no schedule can follow.
    pub fn validate(&self) -> Result<(), PlayError> {
        if !(self.rate.is_finite() && self.rate > 0.0) {
            return Err(PlayError::Options(format!("rate must be a positive number, not {}", self.rate)));
        }
        if let Some(hz) = self.clock_hz {
            if !(hz.is_finite() && hz > 0.0) {
                return Err(PlayError::Options(format!("clock rate must be a positive number of Hz, not {hz}")));
            }
        }
        if self.read_ahead == 0 {
            return Err(PlayError::Options("the read-ahead queue must hold at least 1 message".into()));
        }
        if self.duration_ns == Some(0) {
            return Err(PlayError::Options("duration must be positive".into()));
        }
        Ok(())
    }

    /// Real-time nanoseconds between clock ticks.
    pub(crate) fn tick_period_ns(&self) -> Option<u64> {
        self.clock_hz.map(|hz| ((1e9 / hz).round() as u64).max(1))
    }
}
