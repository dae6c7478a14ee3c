//! Warnings about events that can happen thousands of times a second (dropped messages,
//! oversized samples): at most one per [`Throttle::EVERY`], with the events counted in between.
//! A warning per event would flood the terminal and cost the recorder time it does not have
//! (rosbag warns every 5 s too).

use std::time::{Duration, Instant};

/// Counts events and says when a warning about them is due.
#[derive(Debug, Default)]
pub struct Throttle {
    last: Option<Instant>,
    pending: u64,
}

impl Throttle {
    /// The least time between two warnings.
    pub const EVERY: Duration = Duration::from_secs(5);

    /// Counts `n` events; returns how many to report when a warning is due.
    pub fn add(&mut self, n: u64) -> Option<u64> {
        self.pending += n;
        if self.pending == 0 || self.last.is_some_and(|t| t.elapsed() < Self::EVERY) {
            return None;
        }
        self.last = Some(Instant::now());
        Some(std::mem::take(&mut self.pending))
    }
}

#[cfg(test)]
mod tests {
    use super::Throttle;

    #[test]
    fn warnings_are_rate_limited_and_count_every_event() {
        let mut w = Throttle::default();
        assert_eq!(w.add(0), None);
        assert_eq!(w.add(2), Some(2));
        assert_eq!(w.add(3), None);
        assert_eq!(w.add(4), None);
        w.last = w.last.map(|t| t - Throttle::EVERY);
        assert_eq!(w.add(1), Some(8));
    }
}
