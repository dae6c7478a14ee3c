//! Commands a running player obeys: keys, a pause service, a signal handler. They arrive on
//! one channel so the player can wake on any of them while it waits.

/// A command to a running [`Player`](super::Player).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Control {
    /// Space in `rosbag play` and `ros2 bag play`.
    TogglePause,
    /// Pause; nothing is published but steps.
    Pause,
    /// Resume from a pause.
    Resume,
    /// While paused, publish exactly the next message and stay paused (`s`; `ros2 bag play`'s
    /// right arrow). Ignored while playing, as both tools do.
    Step,
    /// A new rate factor; non-positive or non-finite rates are ignored.
    SetRate(f64),
    /// One step up or down by the options' [`RateStep`].
    FasterRate,
    /// One step down by the options' [`RateStep`].
    SlowerRate,
    /// Turn pausing on the pause topics on or off (`t` in `rosbag play`).
    TogglePauseTopics,
    /// Jump to this bag time (ns), clamped to the played range; paused stays paused.
    Seek(u64),
    /// Stop now; the run returns its report.
    Quit,
}

/// How [`Control::FasterRate`] / [`Control::SlowerRate`] change the rate; the two tools differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateStep {
    /// `ros2 bag play`'s arrows: ×1.1 and ÷1.1, unbounded.
    #[default]
    Factor,
    /// `rosbag play`'s `+`/`-`: ±1 from 1 up, ±0.1 below 1, kept within 0.1..=10.
    Rosbag,
}

impl RateStep {
    /// The rate one step up from `rate`.
    pub fn faster(self, rate: f64) -> f64 {
        match self {
            RateStep::Factor => rate * 1.1,
            RateStep::Rosbag => (rate + if rate >= 1.0 { 1.0 } else { 0.1 }).min(10.0),
        }
    }

    /// The rate one step down from `rate`.
    pub fn slower(self, rate: f64) -> f64 {
        match self {
            RateStep::Factor => rate / 1.1,
            RateStep::Rosbag => (rate - if rate > 1.0 { 1.0 } else { 0.1 }).max(0.1),
        }
    }
}
