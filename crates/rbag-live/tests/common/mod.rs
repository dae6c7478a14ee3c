//! What the recording tests share: the virtual clock's start, reading a bag back, waiting for
//! a condition, and a recording running on its own thread.
#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rbag_live::record::{Log, RecordOutcome, RecordSpec, Recording};
use rbag_storage::Filter;

/// Where the virtual clock starts.
pub const T0: u64 = 1_700_000_000_000_000_000;
pub const SEC: u64 = 1_000_000_000;
pub const LONG: Duration = Duration::from_secs(30);

/// (topic, log time, text) of every message of a bag or storage file, in log-time order, each
/// payload turned into text by `text`; what an unfinished file gives is what was handed to the
/// OS.
pub fn read(path: &Path, text: fn(&[u8]) -> String) -> Vec<(String, u64, String)> {
    let Ok(reader) = rbag_storage::open(path) else { return Vec::new() };
    let Ok(messages) = reader.messages(&Filter::default()) else { return Vec::new() };
    messages
        .flatten()
        .map(|m| {
            let topic = reader.connection(m.connection).map(|c| c.topic.clone()).unwrap_or_default();
            (topic, m.log_time, text(&m.data))
        })
        .collect()
}

pub fn texts(msgs: &[(String, u64, String)], topic: &str) -> Vec<String> {
    msgs.iter().filter(|m| m.0 == topic).map(|m| m.2.clone()).collect()
}

pub fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let end = Instant::now() + LONG;
    while !ok() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A running recording: its thread, its stop switch and what it logged.
pub struct Running {
    pub stop: Arc<AtomicBool>,
    pub thread: std::thread::JoinHandle<RecordOutcome>,
    pub lines: Arc<Mutex<Vec<String>>>,
    pub controls: Arc<rbag_transport::Controls>,
}

impl Running {
    pub fn start(spec: RecordSpec) -> Running {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let l = lines.clone();
        let log: Log = Arc::new(move |m| l.lock().unwrap().push(m));
        let recording = Recording::start(spec, log).expect("the recording starts");
        let controls = recording.controls();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || recording.run(|_| !s.load(Ordering::SeqCst)).expect("records"));
        Running { stop, thread, lines, controls }
    }

    pub fn logged(&self, needle: &str) -> bool {
        self.lines.lock().unwrap().iter().any(|l| l.contains(needle))
    }

    pub fn finish(self) -> RecordOutcome {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the recording thread")
    }
}
