//! A recorder that outlives its recordings, as rosbag2's recorder node does: `~/stop` closes
//! the bag and leaves the node up, `~/record` starts a new bag, discovery can be stopped and
//! started, and pause holds across them. The control services act on a [`RecorderSession`];
//! the front end runs one [`super::Recording`] after another, attaching each one's
//! [`Controls`] while it runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use rbag_transport::Controls;

use crate::services::RecorderControl;

/// The recorder's state between and during recordings.
pub struct RecorderSession {
    current: Mutex<Option<Arc<Controls>>>,
    /// Pause while no recording runs (rosbag2 Lyrical lets `~/pause` act then).
    paused: AtomicBool,
    stop: AtomicBool,
    record: Mutex<Option<String>>,
    wake: Condvar,
    discovery: Arc<AtomicBool>,
}

impl RecorderSession {
    /// A session whose first recording starts paused or not, with discovery on or off.
    pub fn new(start_paused: bool, discovery: bool) -> Arc<RecorderSession> {
        Arc::new(RecorderSession {
            current: Mutex::new(None),
            paused: AtomicBool::new(start_paused),
            stop: AtomicBool::new(false),
            record: Mutex::new(None),
            wake: Condvar::new(),
            discovery: Arc::new(AtomicBool::new(discovery)),
        })
    }

    /// Whether the next recording starts paused.
    pub fn start_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// The switch a recording's discovery follows (shared with its source).
    pub fn discovery_switch(&self) -> Arc<AtomicBool> {
        self.discovery.clone()
    }

    /// A recording started with `controls`.
    pub fn attach(&self, controls: Arc<Controls>) {
        self.stop.store(false, Ordering::SeqCst);
        *lock(&self.current) = Some(controls);
    }

    /// The recording ended; its pause state is kept for the next.
    pub fn detach(&self) {
        if let Some(c) = lock(&self.current).take() {
            self.paused.store(c.is_paused(), Ordering::SeqCst);
        }
    }

    /// Whether `~/stop` asked the running recording to end.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Waits for `~/record` while `keep_waiting` holds (polled every 100 ms); its `uri` (empty:
    /// the previous bag's name, made unique).
    pub fn wait_record(&self, keep_waiting: impl Fn() -> bool) -> Option<String> {
        let mut req = lock(&self.record);
        loop {
            if let Some(uri) = req.take() {
                return Some(uri);
            }
            if !keep_waiting() {
                return None;
            }
            req = self.wake.wait_timeout(req, Duration::from_millis(100)).map_or_else(|e| e.into_inner().0, |r| r.0);
        }
    }

    fn with_current<T>(&self, f: impl FnOnce(&Controls) -> T) -> Option<T> {
        lock(&self.current).as_deref().map(f)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl RecorderControl for RecorderSession {
    fn set_paused(&self, paused: bool) -> bool {
        let was = self.paused.swap(paused, Ordering::SeqCst);
        self.with_current(|c| c.paused.swap(paused, Ordering::SeqCst)).unwrap_or(was)
    }

    fn paused(&self) -> bool {
        self.with_current(Controls::is_paused).unwrap_or_else(|| self.paused.load(Ordering::SeqCst))
    }

    fn snapshot(&self) {
        self.with_current(Controls::snapshot);
    }

    fn split(&self) -> bool {
        self.with_current(Controls::split).is_some()
    }

    fn recording(&self) -> bool {
        lock(&self.current).is_some() && !self.stop_requested()
    }

    fn stop(&self) -> bool {
        let recording = self.recording();
        if recording {
            self.stop.store(true, Ordering::SeqCst);
        }
        recording
    }

    fn record(&self, uri: &str) -> bool {
        if self.recording() {
            return false;
        }
        *lock(&self.record) = Some(uri.to_string());
        self.wake.notify_all();
        true
    }

    fn set_discovery(&self, on: bool) -> bool {
        self.discovery.swap(on, Ordering::SeqCst)
    }

    fn discovery(&self) -> bool {
        self.discovery.load(Ordering::SeqCst)
    }
}
