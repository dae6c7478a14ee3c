//! The mapping from bag time to clock time. Bag time `anchor_bag` is due at clock time
//! `anchor_wall`, later bag times follow at `rate`. Pausing freezes the bag position, and every
//! change re-anchors at the current position, so what is still to come neither jumps nor bursts
//! (`rosbag play` keeps its bag clock the same way).

#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    anchor_wall: u64,
    anchor_bag: u64,
    rate: f64,
    paused: bool,
}

impl Schedule {
    pub fn new(now: u64, bag: u64, rate: f64, paused: bool) -> Self {
        Schedule { anchor_wall: now, anchor_bag: bag, rate, paused }
    }

    pub fn paused(&self) -> bool {
        self.paused
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The bag time reached at clock time `wall`; frozen while paused.
    pub fn position(&self, wall: u64) -> u64 {
        if self.paused || wall <= self.anchor_wall {
            return self.anchor_bag;
        }
        let ahead = ((wall - self.anchor_wall) as f64 * self.rate).round();
        self.anchor_bag.saturating_add(ahead as u64)
    }

    /// The clock time bag time `bag` is due at; `None` while paused. Times before the anchor
    /// are due at the anchor.
    pub fn due(&self, bag: u64) -> Option<u64> {
        if self.paused {
            return None;
        }
        let wait = (bag.saturating_sub(self.anchor_bag) as f64 / self.rate).round();
        Some(self.anchor_wall.saturating_add(wait as u64))
    }

    /// Bag time `bag` is reached now (start, loop, seek, step, skipped gap).
    pub fn jump(&mut self, now: u64, bag: u64) {
        self.anchor_wall = now;
        self.anchor_bag = bag;
    }

    pub fn pause(&mut self, now: u64) {
        if !self.paused {
            let at = self.position(now);
            self.jump(now, at);
            self.paused = true;
        }
    }

    pub fn resume(&mut self, now: u64) {
        if self.paused {
            self.anchor_wall = now;
            self.paused = false;
        }
    }

    pub fn set_rate(&mut self, now: u64, rate: f64) {
        let at = self.position(now);
        self.jump(now, at);
        self.rate = rate;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_freezes_and_resume_continues() {
        let mut s = Schedule::new(100, 1_000, 2.0, false);
        assert_eq!(s.due(1_200), Some(200));
        s.pause(150);
        assert_eq!(s.position(10_000), 1_100);
        assert_eq!(s.due(1_200), None);
        s.resume(500);
        assert_eq!(s.due(1_200), Some(550));
    }

    #[test]
    fn rate_change_reanchors_at_the_position() {
        let mut s = Schedule::new(0, 0, 1.0, false);
        s.set_rate(100, 0.5);
        assert_eq!(s.position(100), 100);
        assert_eq!(s.due(150), Some(200));
    }
}
