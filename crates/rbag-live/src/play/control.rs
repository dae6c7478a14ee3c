//! Driving a run from other threads: a [`PlayHandle`] for the front end (keys, signals,
//! scripts) and the run's end of the channel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

use rbag_transport::play::Control;

/// A handle on a run and the run's end of it: see [`PlayHandle`].
pub fn controls() -> (PlayHandle, PlayControls) {
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    (PlayHandle { tx: tx.clone(), stop: stop.clone() }, PlayControls { rx, handle: PlayHandle { tx, stop } })
}

/// Drives a running playback from any thread. Cheap to clone; controls sent before the run
/// starts are acted on when it does.
#[derive(Clone, Debug)]
pub struct PlayHandle {
    tx: Sender<Control>,
    stop: Arc<AtomicBool>,
}

impl PlayHandle {
    /// Sends any player control; false when the run is over.
    pub fn send(&self, c: Control) -> bool {
        self.tx.send(c).is_ok()
    }

    /// Pauses (a paused player publishes nothing but steps).
    pub fn pause(&self) -> bool {
        self.send(Control::Pause)
    }

    /// Resumes a paused player.
    pub fn resume(&self) -> bool {
        self.send(Control::Resume)
    }

    /// Pauses when playing, resumes when paused.
    pub fn toggle_pause(&self) -> bool {
        self.send(Control::TogglePause)
    }

    /// While paused, publishes exactly the next message.
    pub fn step(&self) -> bool {
        self.send(Control::Step)
    }

    /// Sets the rate factor.
    pub fn set_rate(&self, rate: f64) -> bool {
        self.send(Control::SetRate(rate))
    }

    /// One rate step up (the options' `rate_step` says how big).
    pub fn faster(&self) -> bool {
        self.send(Control::FasterRate)
    }

    /// One rate step down.
    pub fn slower(&self) -> bool {
        self.send(Control::SlowerRate)
    }

    /// Ends the run: waits for subscribers, discovery or slow readers give up too.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.tx.send(Control::Quit);
    }

    /// Whether [`stop`](Self::stop) was called.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// The run's end of [`controls`]: given to `play`.
#[derive(Debug)]
pub struct PlayControls {
    pub(crate) rx: Receiver<Control>,
    /// For the run's own services (a pause service, the end of a burst).
    pub(crate) handle: PlayHandle,
}
