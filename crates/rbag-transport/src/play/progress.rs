//! Where playback is, for a progress bar, and `ros2 bag play`'s bar itself (rosbag2#1836): two
//! lines kept at the bottom of the terminal and redrawn in place, at most at a given rate and at
//! once on a state change.

use std::fmt;
use std::sync::Arc;

/// What the player is doing, as rosbag2's bar shows it in brackets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressState {
    /// Publishing on schedule (`R`).
    Running,
    /// Paused by a control, a pause topic or flow control (`P`).
    Paused,
    /// Publishing without waiting (`B`): `ros2 bag burst`.
    Burst,
    /// Waiting out the start delay (`D`).
    Delayed,
    /// Done (`S`).
    Stopped,
}

impl ProgressState {
    /// The letter in the bar.
    pub fn letter(self) -> char {
        match self {
            ProgressState::Running => 'R',
            ProgressState::Paused => 'P',
            ProgressState::Burst => 'B',
            ProgressState::Delayed => 'D',
            ProgressState::Stopped => 'S',
        }
    }
}

/// One progress report: the bag time reached and the bag's time range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// What the player is doing.
    pub state: ProgressState,
    /// Bag time reached (the last message's, or the frozen position).
    pub bag_time_ns: u64,
    /// First and last time of the whole bag (0, 0 when it is empty).
    pub bag_start_ns: u64,
    /// Last time of the whole bag.
    pub bag_end_ns: u64,
}

/// Receives [`Progress`] reports from the playing thread.
#[derive(Clone)]
pub struct ProgressHook(Arc<dyn Fn(&Progress) + Send + Sync>);

impl ProgressHook {
    /// Reports go to `f`; it runs on the playing thread, so it should be quick.
    pub fn new(f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        ProgressHook(Arc::new(f))
    }

    /// Hands `p` to the receiver.
    pub fn report(&self, p: &Progress) {
        (self.0)(p)
    }
}

impl fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressHook(..)")
    }
}

/// Moves to the start of the line two lines up and clears to the end of the screen.
const UP_2: &str = "\x1b[2F\x1b[J";

/// `ros2 bag play`'s progress bar as text to write to a terminal; the caller writes it (and
/// decides whether there is a terminal).
#[derive(Debug, Clone)]
pub struct ProgressBar {
    /// `--progress-bar-update-rate`: Hz, negative for every report, 0 for no bar.
    rate_hz: i32,
    separation_lines: usize,
    last: Option<(u64, ProgressState)>,
    shown: Option<Progress>,
}

impl ProgressBar {
    /// A bar redrawn at most `rate_hz` times a second (negative: on every report; 0: never),
    /// with `separation_lines` blank lines above it.
    pub fn new(rate_hz: i32, separation_lines: usize) -> Self {
        ProgressBar { rate_hz, separation_lines, last: None, shown: None }
    }

    /// Whether anything is drawn.
    pub fn enabled(&self) -> bool {
        self.rate_hz != 0
    }

    /// The lines rosbag2 prints when playback starts; empty when disabled.
    pub fn banner(&self) -> String {
        let rate = match self.rate_hz {
            0 => return String::new(),
            r if r < 0 => "Progress bar enabled for every message.".to_string(),
            r => format!("Progress bar enabled at {r} Hz."),
        };
        format!("{rate}\nProgress bar [?]: [R]unning, [P]aused, [B]urst, [D]elayed, [S]topped\n")
    }

    /// The bar's two lines for `p`.
    pub fn lines(p: &Progress) -> String {
        let secs = |ns: u64| ns as f64 / 1e9;
        let elapsed = p.bag_time_ns.saturating_sub(p.bag_start_ns).min(p.bag_end_ns.saturating_sub(p.bag_start_ns));
        format!(
            "====== Playback Progress ======\n[{}.{:09}] Duration {:.2}/{:.2} [{}]\n",
            p.bag_time_ns / 1_000_000_000,
            p.bag_time_ns % 1_000_000_000,
            secs(elapsed),
            secs(p.bag_end_ns.saturating_sub(p.bag_start_ns)),
            p.state.letter()
        )
    }

    /// What to write for report `p` at clock time `now_ns`: nothing when the rate limit holds it
    /// back (a state change is always drawn), else the bar drawn over its last drawing.
    pub fn update(&mut self, p: &Progress, now_ns: u64) -> Option<String> {
        if !self.enabled() {
            return None;
        }
        if let (Some((at, state)), true) = (self.last, self.rate_hz > 0) {
            let period = 1_000_000_000 / self.rate_hz as u64;
            if state == p.state && now_ns.saturating_sub(at) < period {
                return None;
            }
        }
        self.last = Some((now_ns, p.state));
        let mut out = match self.shown {
            Some(_) => UP_2.to_string(),
            None => "\n".repeat(self.separation_lines),
        };
        out.push_str(&Self::lines(p));
        self.shown = Some(*p);
        Some(out)
    }

    /// What to write so that `text` (whole lines) appears above the bar and the bar stays below
    /// it; just `text` while no bar is drawn.
    pub fn above(&self, text: &str) -> String {
        let Some(p) = &self.shown else { return text.to_string() };
        let mut out = format!("\x1b[{}F\x1b[J{text}", self.separation_lines + 2);
        out.push_str(&"\n".repeat(self.separation_lines));
        out.push_str(&Self::lines(p));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn at(state: ProgressState, t: u64) -> Progress {
        Progress { state, bag_time_ns: t, bag_start_ns: 100 * S, bag_end_ns: 110 * S }
    }

    #[test]
    fn the_lines_are_rosbag2s() {
        let p = Progress { bag_time_ns: 102 * S + 500_000_001, ..at(ProgressState::Running, 0) };
        assert_eq!(
            ProgressBar::lines(&p),
            "====== Playback Progress ======\n[102.500000001] Duration 2.50/10.00 [R]\n"
        );
        assert_eq!(ProgressBar::new(3, 2).banner().lines().next(), Some("Progress bar enabled at 3 Hz."));
        assert!(ProgressBar::new(3, 2).banner().contains("[R]unning, [P]aused, [B]urst, [D]elayed, [S]topped"));
    }

    #[test]
    fn updates_are_rate_limited_but_state_changes_are_drawn() {
        let mut bar = ProgressBar::new(2, 1);
        let first = bar.update(&at(ProgressState::Running, 100 * S), 0).unwrap();
        assert!(first.starts_with("\n===="), "one separation line first: {first:?}");
        assert_eq!(bar.update(&at(ProgressState::Running, 101 * S), S / 4), None);
        let paused = bar.update(&at(ProgressState::Paused, 101 * S), S / 4).unwrap();
        assert!(paused.starts_with(UP_2) && paused.ends_with("[P]\n"), "{paused:?}");
        assert!(bar.update(&at(ProgressState::Paused, 101 * S), S).is_some());
    }

    #[test]
    fn a_negative_rate_draws_every_report_and_zero_none() {
        let mut every = ProgressBar::new(-1, 2);
        assert!((0..3).all(|_| every.update(&at(ProgressState::Running, 100 * S), 0).is_some()));
        let mut none = ProgressBar::new(0, 2);
        assert_eq!(none.update(&at(ProgressState::Running, 100 * S), 0), None);
        assert_eq!(none.banner(), "");
    }

    #[test]
    fn text_above_keeps_the_bar_below() {
        let mut bar = ProgressBar::new(3, 2);
        assert_eq!(bar.above("hi\n"), "hi\n");
        bar.update(&at(ProgressState::Delayed, 100 * S), 0);
        let out = bar.above("hi\n");
        assert!(out.starts_with("\x1b[4F\x1b[Jhi\n\n\n===="), "{out:?}");
        assert!(out.ends_with("[D]\n"));
    }
}
