//! What the queue, the recorder and the snapshot ring share: the key naming one connection, and
//! the wall clock live recording stamps messages with. Kept apart so that none of them imports
//! another for it.

use std::time::{SystemTime, UNIX_EPOCH};

/// Names one connection (one publisher on one topic) for the recorder and the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnKey(pub u32);

impl std::fmt::Display for ConnKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Nanoseconds since the Unix epoch, now: the receive time of a live message and the time a
/// recording names its files by. The one place rbag reads the wall clock for recording.
pub fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
