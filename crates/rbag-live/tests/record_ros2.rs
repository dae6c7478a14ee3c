//! Recording a ROS 2 graph through the library (no binary): the recording joins its own DDS
//! domain (ROS_DOMAIN_ID), DDS writers of rbag-ros2 publish, and the rosbag2 directory is read
//! back. Checkpoints and split times run on a virtual clock; splits and snapshots are
//! triggered through the recording's controls.
#![cfg(feature = "ros2")]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rbag_live::record::{RecordSpec, Ros2Source, Source};
use rbag_ros2::dds::{Participant, RawWriter};
use rbag_ros2::qos::Overrides;
use rbag_ros2::record::Ros2RecordSpec;
use rbag_ros2::select::Ros2Selection;
use rbag_storage::rosbag2::qos::{policy, QosProfile};
use rbag_storage::Format;
use rbag_testkit::ros2::{cdr, Domain};
use rbag_transport::clock::{Clock, VirtualClock};

use common::{texts, wait_until, Running, SEC, T0};
use rbag_transport::{Layout, OutputName, PipelineOptions, RecordOptions, SnapshotOptions, Split};

const STRING: &str = "std_msgs::msg::dds_::String_";

/// The text of a CDR std_msgs/String (header, length with the NUL, bytes, NUL).
fn text(data: &[u8]) -> String {
    let len = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
    String::from_utf8_lossy(&data[8..8 + len.saturating_sub(1)]).into_owned()
}

fn read(path: &Path) -> Vec<(String, u64, String)> {
    common::read(path, text)
}

fn hellos(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("hello {i}")).collect()
}

fn qos(durability: i64, depth: u64) -> QosProfile {
    QosProfile { history: policy::KEEP_LAST, depth, reliability: policy::RELIABLE, durability, ..QosProfile::default() }
}

fn spec(dir: &Path, output: RecordOptions, pipeline: PipelineOptions, clock: &Arc<VirtualClock>) -> RecordSpec {
    let selection = Ros2Selection { all_topics: true, ..Ros2Selection::default() };
    let ros2 = Ros2RecordSpec {
        selection,
        overrides: Overrides::default(),
        no_discovery: false,
        include_unpublished: false,
        ignore_leaf_topics: false,
        topic_types: Default::default(),
        exclude_topic_types: Default::default(),
        max_sample_bytes: usize::MAX,
        sim_time: None,
        static_topics: Vec::new(),
    };
    let definitions = rbag_msg::store::registry(rbag_msg::store::Distro::Jazzy).clone();
    let now = clock.clone();
    let _ = dir;
    RecordSpec {
        output,
        pipeline,
        queue_bytes: None,
        start_paused: false,
        source: Source::Ros2(Box::new(Ros2Source {
            polling: Duration::from_millis(50),
            ..Ros2Source::new(ros2, definitions, Default::default())
        })),
        clock: Some(Arc::new(move || now.now())),
    }
}

fn dir_output(dir: &Path) -> RecordOptions {
    RecordOptions {
        output: OutputName::Exact(dir.join("bag")),
        layout: Layout::Rosbag2Dir,
        format: Format::Mcap,
        drop_report: false,
        min_space: 0,
        ..RecordOptions::default()
    }
}

/// A rosbag2 directory split on demand: the transient-local topic's last messages (its QoS
/// depth, 2) head the new storage file, stamped with the split's virtual time; checkpoints
/// (when the virtual clock moves a second) hand each file's messages to the OS while recording;
/// metadata.yaml lists both files at the end.
#[test]
fn ros2_split_repeats_transient_local_and_checkpoints_on_the_virtual_clock() {
    let domain = Domain::new();
    std::env::set_var("ROS_DOMAIN_ID", domain.id().to_string());
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(VirtualClock::new(T0));
    let output = RecordOptions { split: Some(Split::default()), repeat_latched: true, ..dir_output(tmp.path()) };
    let pipeline = PipelineOptions { idle_wait: Duration::from_millis(10), ..PipelineOptions::default() };
    let rec = Running::start(spec(tmp.path(), output, pipeline, &clock));

    let peer = Participant::new(domain.id()).expect("participant");
    let map = RawWriter::new(&peer, "rt/map", STRING, &qos(policy::TRANSIENT_LOCAL, 2), None).expect("writer");
    let chatter = RawWriter::new(&peer, "rt/chatter", STRING, &qos(policy::VOLATILE, 100), None).expect("writer");
    wait_until("the recorder's readers", || map.matched() >= 1 && chatter.matched() >= 1);
    for i in 0..3 {
        map.write(&cdr::string_msg(&format!("map-{i}")), 0).unwrap();
    }
    for i in 0..5 {
        chatter.write(&cdr::string_msg(&format!("hello {i}")), 0).unwrap();
    }
    let first = tmp.path().join("bag/bag_0.mcap");
    // Every message must be in the pipeline before the clock moves, or the one checkpoint
    // would leave the late ones in the open chunk.
    wait_until("eight messages taken", || rec.controls.taken() >= 8);
    assert!(read(&first).is_empty(), "before a checkpoint the messages are still in the open chunk");
    clock.advance(SEC);
    wait_until("the checkpoint of bag_0", || read(&first).len() == 8);
    assert_eq!(texts(&read(&first), "/map"), ["map-0", "map-1", "map-2"]);

    rec.controls.split();
    let second = tmp.path().join("bag/bag_1.mcap");
    wait_until("the split into bag_1", || second.exists() && rec.logged("goes on in a new file"));
    for i in 5..8 {
        chatter.write(&cdr::string_msg(&format!("hello {i}")), 0).unwrap();
    }
    wait_until("eleven messages taken", || rec.controls.taken() >= 11);
    clock.advance(SEC);
    wait_until("the checkpoint of bag_1", || read(&second).len() == 5);

    let outcome = rec.finish();
    assert_eq!(outcome.output.as_deref(), Some(tmp.path().join("bag").as_path()));
    let report = outcome.report;
    assert_eq!(report.messages.get("/chatter"), Some(&8));
    assert_eq!(report.messages.get("/map"), Some(&3), "repeated copies are not counted as recorded");
    let msgs = read(&second);
    let repeats: Vec<_> = msgs.iter().filter(|m| m.0 == "/map").map(|m| (m.1, m.2.as_str())).collect();
    assert_eq!(repeats, [(T0 + SEC, "map-1"), (T0 + SEC, "map-2")], "the QoS depth's newest, at the split time");
    assert_eq!(texts(&msgs, "/chatter"), hellos(5..8));
    let meta = std::fs::read_to_string(tmp.path().join("bag/metadata.yaml")).unwrap();
    assert!(meta.contains("bag_0.mcap") && meta.contains("bag_1.mcap"), "{meta}");
    assert_eq!(read(&tmp.path().join("bag")).len(), 8 + 5, "the whole bag reads back");
}

/// `--snapshot-mode`: the ring (bytes) is written into the recording's own bag on a trigger;
/// what arrives after the last trigger is not stored.
#[test]
fn ros2_snapshot_writes_the_cache_into_the_bag_on_a_trigger() {
    let domain = Domain::new();
    std::env::set_var("ROS_DOMAIN_ID", domain.id().to_string());
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(VirtualClock::new(T0));
    // A CDR "hello N" is 16 bytes: the ring keeps the newest five.
    let snapshot = SnapshotOptions { max_duration_ns: None, max_bytes: Some(80), each_to_new_bag: false };
    let pipeline = PipelineOptions {
        snapshot: Some(snapshot),
        idle_wait: Duration::from_millis(10),
        ..PipelineOptions::default()
    };
    let rec = Running::start(spec(tmp.path(), dir_output(tmp.path()), pipeline, &clock));
    let peer = Participant::new(domain.id()).expect("participant");
    let chatter = RawWriter::new(&peer, "rt/chatter", STRING, &qos(policy::VOLATILE, 100), None).expect("writer");
    wait_until("the recorder's reader", || chatter.matched() >= 1);
    for i in 0..10 {
        chatter.write(&cdr::string_msg(&format!("hello {i}")), 0).unwrap();
    }
    wait_until("the ten messages in the ring", || rec.controls.taken() >= 10);
    rec.controls.snapshot();
    wait_until("the snapshot", || rec.logged("from the cache into the bag"));
    for i in 10..13 {
        chatter.write(&cdr::string_msg(&format!("hello {i}")), 0).unwrap();
    }
    wait_until("the three later messages", || rec.controls.taken() >= 13);
    let outcome = rec.finish();
    assert_eq!(outcome.report.snapshots, 1);
    assert_eq!(texts(&read(&tmp.path().join("bag")), "/chatter"), hellos(5..10));
    assert_eq!(outcome.report.messages.get("/chatter"), Some(&5));
}
