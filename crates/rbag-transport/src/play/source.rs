//! The two ends of playback: where messages come from and where they go. The player knows
//! neither the storage backend nor the middleware.

use rbag_storage::Message;

use super::PlayError;

/// A stream of messages in log-time order (ties in a fixed order).
pub type MessageStream<'a> = Box<dyn Iterator<Item = Result<Message, PlayError>> + 'a>;

/// Messages to play, reopened from a bag time at the start, on each loop and on each seek.
pub trait PlaySource {
    /// First and last log time of the whole bag, on every topic (the start offset counts from
    /// the first, as in both ROS tools); `None` when it holds no message.
    fn time_range(&self) -> Option<(u64, u64)>;

    /// The selected messages logged at `from_ns` or later, in log-time order. Messages with
    /// equal times must come in the same order on every call.
    fn open(&mut self, from_ns: u64) -> Result<MessageStream<'_>, PlayError>;
}

/// Where played messages go: a middleware publisher, a test recorder.
pub trait PlaySink {
    /// Sends one message (its `connection` is the source's id).
    fn publish(&mut self, msg: &Message) -> Result<(), PlayError>;

    /// The bag time, for `/clock`; called only when [`PlayOptions::clock_hz`] is set.
    ///
    /// [`PlayOptions::clock_hz`]: super::PlayOptions::clock_hz
    fn clock(&mut self, _bag_time_ns: u64) -> Result<(), PlayError> {
        Ok(())
    }

    /// Whether the message logged at `bag_time_ns` must wait: flow control from outside
    /// (`rosbag play --rate-control-topic`). While it says so, playback is paused, and it is
    /// asked again every [`HOLD_POLL_NS`](super::HOLD_POLL_NS).
    fn hold(&mut self, _bag_time_ns: u64) -> bool {
        false
    }

    /// The player's state changed through a control or a pause topic: for status lines.
    fn state(&mut self, _state: &PlayState) {}
}

/// What a status line shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlayState {
    /// Whether playback is paused.
    pub paused: bool,
    /// The rate factor.
    pub rate: f64,
    /// Bag time reached.
    pub bag_time_ns: u64,
    /// Whether messages on the pause connections pause playback.
    pub pausing_on_topics: bool,
}

/// Messages held in memory: for tests, and for callers that built their selection themselves.
#[derive(Debug, Clone, Default)]
pub struct VecSource {
    messages: Vec<Message>,
    range: Option<(u64, u64)>,
}

impl VecSource {
    /// Sorts by log time, keeping the given order among equal times.
    pub fn new(mut messages: Vec<Message>) -> Self {
        messages.sort_by_key(|m| m.log_time);
        let range = messages.first().zip(messages.last()).map(|(a, b)| (a.log_time, b.log_time));
        VecSource { messages, range }
    }

    /// Claims a wider bag than the messages cover, as when other topics were not selected.
    pub fn with_time_range(mut self, first: u64, last: u64) -> Self {
        self.range = Some((first, last));
        self
    }
}

impl PlaySource for VecSource {
    fn time_range(&self) -> Option<(u64, u64)> {
        self.range
    }

    fn open(&mut self, from_ns: u64) -> Result<MessageStream<'_>, PlayError> {
        let i = self.messages.partition_point(|m| m.log_time < from_ns);
        Ok(Box::new(self.messages[i..].iter().cloned().map(Ok)))
    }
}
