//! The recording pipeline against real files, on a virtual clock: the queue is filled by hand,
//! every step is driven by the test, and the bags are read back.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rbag_storage::{Connection, Filter, Format};
use rbag_transport::clock::{Clock, VirtualClock};
use rbag_transport::pipeline::Now;
use rbag_transport::{
    Controls, Event, Layout, Notice, OutputName, Pipeline, PipelineOptions, RecordOptions, RecordQueue,
    SnapshotOptions, Split,
};

const T0: u64 = 1_700_000_000_000_000_000;
const SEC: u64 = 1_000_000_000;

fn conn(topic: &str) -> Connection {
    Connection {
        id: 0,
        topic: topic.into(),
        message_type: "std_msgs/String".into(),
        encoding: "ros1".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros1msg".into(),
        metadata: BTreeMap::from([
            ("callerid".to_string(), "/talker".to_string()),
            ("latching".to_string(), "0".to_string()),
            ("md5sum".to_string(), "992ce8a1687cec8c8bd883ec73ca41d1".to_string()),
        ]),
    }
}

fn msg(text: &str) -> Bytes {
    let mut v = (text.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(text.as_bytes());
    v.into()
}

fn texts(path: &Path) -> Vec<String> {
    let Ok(reader) = rbag_storage::open(path) else { return Vec::new() };
    let Ok(messages) = reader.messages(&Filter::default()) else { return Vec::new() };
    messages.flatten().map(|m| String::from_utf8_lossy(&m.data[4..]).into_owned()).collect()
}

struct Rig {
    clock: Arc<VirtualClock>,
    queue: Arc<RecordQueue>,
    controls: Arc<Controls>,
    pipeline: Pipeline,
    events: Vec<Event>,
}

impl Rig {
    fn new(record: RecordOptions, opts: PipelineOptions) -> Rig {
        let clock = Arc::new(VirtualClock::new(T0));
        let c = clock.clone();
        let now: Now = Arc::new(move || c.now());
        let queue = Arc::new(RecordQueue::new(None));
        let controls = Arc::new(Controls::default());
        let pipeline = Pipeline::new(record, opts, queue.clone(), controls.clone(), now).unwrap();
        Rig { clock, queue, controls, pipeline, events: Vec::new() }
    }

    /// Steps until the queue is empty (one more step for the periodic work).
    fn drain(&mut self) {
        let events = &mut self.events;
        while !self.queue.is_empty() {
            self.pipeline.step(Duration::ZERO, &mut |e| events.push(e)).unwrap();
        }
        self.pipeline.step(Duration::ZERO, &mut |e| events.push(e)).unwrap();
    }

    fn checkpoints(&self) -> usize {
        self.events.iter().filter(|e| matches!(e, Event::Checkpoint)).count()
    }
}

fn mcap(dir: &Path) -> RecordOptions {
    RecordOptions {
        output: OutputName::Exact(dir.join("run.mcap")),
        format: Format::Mcap,
        split: Some(Split::default()),
        min_space: 0,
        ..RecordOptions::default()
    }
}

/// A checkpoint comes when the clock has moved `checkpoint_every_ns` since the last one and
/// something was written; it puts the open chunk in the file.
#[test]
fn checkpoints_follow_the_virtual_clock() {
    let dir = tempfile::tempdir().unwrap();
    let mut rig = Rig::new(mcap(dir.path()), PipelineOptions::default());
    let k = rig.queue.register(conn("/a"));
    for i in 0..3 {
        rig.queue.push(k, T0 + i, msg(&format!("m{i}")));
    }
    rig.drain();
    let file = dir.path().join("run_0.mcap");
    assert_eq!((rig.checkpoints(), texts(&file).len()), (0, 0), "no time has passed: the chunk is open");
    rig.clock.advance(SEC - 1);
    rig.drain();
    assert_eq!(rig.checkpoints(), 0, "one nanosecond short");
    rig.clock.advance(1);
    rig.drain();
    assert_eq!(rig.checkpoints(), 1);
    assert_eq!(texts(&file), ["m0", "m1", "m2"]);
    // Nothing new written: no checkpoint however long the wait.
    rig.clock.advance(10 * SEC);
    rig.drain();
    assert_eq!(rig.checkpoints(), 1);
    let report = rig.pipeline.finish().unwrap();
    assert_eq!(report.messages.get("/a"), Some(&3));
}

/// Pause discards messages (connections are still learned); a split request starts the next
/// file at the clock's time; the notices come out as events.
#[test]
fn pause_and_split_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    let mut rig = Rig::new(mcap(dir.path()), PipelineOptions::default());
    let k = rig.queue.register(conn("/a"));
    rig.queue.push(k, T0, msg("kept"));
    rig.drain();
    rig.controls.set_paused(true);
    rig.queue.push(k, T0 + 1, msg("discarded"));
    rig.drain();
    rig.controls.set_paused(false);
    rig.controls.split();
    rig.drain();
    rig.queue.push(k, T0 + 2, msg("second"));
    rig.drain();
    let report = rig.pipeline.finish().unwrap();
    let names: Vec<_> = report.files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["run_0.mcap", "run_1.mcap"]);
    assert_eq!(texts(&report.files[0]), ["kept"]);
    assert_eq!(texts(&report.files[1]), ["second"]);
    assert!(rig.events.contains(&Event::Notice(Notice::Opened(dir.path().join("run_1.mcap")))), "{:?}", rig.events);
}

/// A rosbag2 directory splits by size through the rosbag2 writer (metadata.yaml lists every
/// file) and keeps the newest files (max_splits), the same rule `convert` applies.
#[test]
fn rosbag2_directory_splits_by_size_and_keeps_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let record = RecordOptions {
        output: OutputName::Exact(dir.path().join("bag")),
        layout: Layout::Rosbag2Dir,
        format: Format::Mcap,
        split: Some(Split { max_bytes: Some(4096), max_duration_ns: None }),
        max_splits: Some(2),
        min_space: 0,
        ..RecordOptions::default()
    };
    let mut rig = Rig::new(record, PipelineOptions { checkpoint_every_ns: Some(1), ..PipelineOptions::default() });
    let k = rig.queue.register(conn("/a"));
    for i in 0..40u64 {
        rig.queue.push(k, T0 + i, msg(&format!("{i:03}{}", "x".repeat(400))));
        rig.clock.advance(1);
        rig.drain();
    }
    let report = rig.pipeline.finish().unwrap();
    let meta = std::fs::read_to_string(dir.path().join("bag/metadata.yaml")).unwrap();
    let listed: Vec<&str> = meta.lines().filter(|l| l.trim_start().starts_with("- bag_")).collect();
    assert_eq!(listed.len(), 2, "the newest two files are kept: {meta}");
    assert!(rig.events.iter().filter(|e| matches!(e, Event::Notice(Notice::Split { .. }))).count() >= 2);
    let kept = texts(&dir.path().join("bag"));
    assert!(!kept.is_empty() && kept.last().unwrap().starts_with("039"), "the newest messages are kept");
    assert_eq!(report.messages.get("/a"), Some(&40));
}

/// Snapshot mode with a bag per trigger: the ring is written and emptied, and each trigger
/// names its bag by the clock's time.
#[test]
fn snapshot_triggers_write_the_ring() {
    let dir = tempfile::tempdir().unwrap();
    let record = RecordOptions {
        output: OutputName::Prefix(dir.path().join("snap").to_string_lossy().into_owned()),
        min_space: 0,
        ..RecordOptions::default()
    };
    let snapshot = SnapshotOptions { max_duration_ns: Some(2 * SEC), max_bytes: None, each_to_new_bag: true };
    let mut rig = Rig::new(record, PipelineOptions { snapshot: Some(snapshot), ..PipelineOptions::default() });
    let k = rig.queue.register(conn("/a"));
    for s in 0..5 {
        rig.queue.push(k, T0 + s * SEC, msg(&format!("s{s}")));
    }
    rig.drain();
    rig.controls.snapshot();
    rig.drain();
    rig.clock.advance(SEC);
    rig.queue.push(k, T0 + 10 * SEC, msg("late"));
    rig.controls.snapshot();
    rig.drain();
    let report = rig.pipeline.finish().unwrap();
    assert_eq!(report.snapshots, 2);
    assert_eq!(report.files.len(), 2, "{:?}", report.files);
    assert_eq!(texts(&report.files[0]), ["s2", "s3", "s4"], "within 2 s of the newest");
    assert_eq!(texts(&report.files[1]), ["late"]);
}
