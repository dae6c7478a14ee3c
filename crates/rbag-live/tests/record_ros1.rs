//! Recording a ROS 1 graph through the library (no binary): the recording starts its own
//! embedded master on a free port, a publisher node of rbag-ros1 publishes, and the bag is read
//! back. Checkpoints and split times run on a virtual clock; splits and snapshots are triggered
//! through the recording's controls.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rbag_live::record::{RecordSpec, Ros1Source, Source};
use rbag_ros1::names::NodeConfig;
use rbag_ros1::node::Node;
use rbag_ros1::tcpros::{Limits, Publication, TopicPublisher};
use rbag_storage::Format;
use rbag_transport::clock::{Clock, VirtualClock};

use common::{texts, wait_until, Running, LONG, SEC, T0};
use rbag_transport::pipeline::Now;
use rbag_transport::{OutputName, PipelineOptions, RecordOptions, SnapshotOptions, Split};

/// A std_msgs/String as ROS 1 serialises it.
fn string_msg(text: &str) -> Bytes {
    let mut v = (text.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(text.as_bytes());
    v.into()
}

/// The text of a std_msgs/String as ROS 1 serialises it.
fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(&data[4..]).into_owned()
}

fn read(path: &Path) -> Vec<(String, u64, String)> {
    common::read(path, text)
}

/// A virtual clock starting at T0 and the pipeline's view of it.
fn virtual_clock() -> (Arc<VirtualClock>, Now) {
    let clock = Arc::new(VirtualClock::new(T0));
    let now = clock.clone();
    (clock, Arc::new(move || now.now()))
}

/// Points the recording at a master that does not run yet: it starts an embedded one.
fn master_uri() -> String {
    let uri = format!("http://127.0.0.1:{}/", rbag_testkit::ros1::free_port());
    std::env::set_var("ROS_MASTER_URI", &uri);
    std::env::set_var("ROS_HOSTNAME", "127.0.0.1");
    uri
}

fn publisher_node(master_uri: &str) -> Node {
    let config = NodeConfig {
        name: "/talker".into(),
        namespace: "/".into(),
        master_uri: master_uri.into(),
        host: "127.0.0.1".into(),
        remaps: Default::default(),
    };
    Node::start(config, Limits::default()).expect("the publisher node starts")
}

fn advertise(node: &Node, topic: &str, latching: bool) -> Arc<TopicPublisher> {
    node.advertise(Publication {
        topic: topic.into(),
        msg_type: "std_msgs/String".into(),
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
        message_definition: "string data\n".into(),
        latching,
        caller_id: node.name().to_string(),
        queue_size: 100,
    })
    .expect("advertise")
}

fn source(topics: &[&str]) -> Ros1Source {
    Ros1Source {
        node_name: "/rbag_record_test".into(),
        topics: topics.iter().map(|t| t.to_string()).collect(),
        ..Ros1Source::default()
    }
}

/// Split on demand, the latched message repeated at the head of the new split (stamped with
/// the split's virtual time), and checkpoints: with MCAP output (the ros1 profile) a file's
/// messages are only readable once a chunk is closed, which a checkpoint does when the virtual
/// clock has moved a second past the last one.
#[test]
fn ros1_split_repeats_latched_and_checkpoints_on_the_virtual_clock() {
    let dir = tempfile::tempdir().unwrap();
    let uri = master_uri();
    let (clock, now) = virtual_clock();
    let output = RecordOptions {
        output: OutputName::Exact(dir.path().join("run.mcap")),
        format: Format::Mcap,
        split: Some(Split::default()),
        repeat_latched: true,
        min_space: 0,
        ..RecordOptions::default()
    };
    let spec = RecordSpec {
        output,
        pipeline: PipelineOptions { idle_wait: Duration::from_millis(10), ..PipelineOptions::default() },
        queue_bytes: None,
        start_paused: false,
        source: Source::Ros1(source(&["/chatter", "/map"])),
        clock: Some(now),
    };
    let rec = Running::start(spec);
    assert!(rec.logged("started an embedded master"), "no master ran at {uri}: one is started");
    let talker = publisher_node(&uri);
    let map = advertise(&talker, "/map", true);
    let chatter = advertise(&talker, "/chatter", false);
    map.publish(string_msg("map-1"));
    assert!(map.wait_for_subscribers(1, LONG) && chatter.wait_for_subscribers(1, LONG), "the recorder subscribes");
    for i in 0..5 {
        chatter.publish(string_msg(&format!("hello {i}")));
    }
    let first = dir.path().join("run_0.mcap");
    // Nothing moves the virtual clock yet: no checkpoint, the open chunk is not in the file.
    // Every message must be in the pipeline before the clock moves, or the one checkpoint
    // would leave the late ones in the open chunk.
    wait_until("six messages taken", || rec.controls.taken() >= 6);
    assert!(read(&first).is_empty(), "before a checkpoint the messages are still in the open chunk");
    clock.advance(SEC);
    wait_until("the checkpoint of run_0", || read(&first).len() == 6);
    let msgs = read(&first);
    assert_eq!(texts(&msgs, "/map"), ["map-1"]);
    assert_eq!(texts(&msgs, "/chatter"), (0..5).map(|i| format!("hello {i}")).collect::<Vec<_>>());

    rec.controls.split();
    let second = dir.path().join("run_1.mcap");
    wait_until("the split into run_1", || second.exists());
    for i in 5..8 {
        chatter.publish(string_msg(&format!("hello {i}")));
    }
    wait_until("nine messages taken", || rec.controls.taken() >= 9);
    clock.advance(SEC);
    wait_until("the checkpoint of run_1", || read(&second).len() == 4);

    let outcome = rec.finish();
    talker.shutdown();
    let report = outcome.report;
    let names: Vec<PathBuf> = report.files.iter().map(|f| f.strip_prefix(dir.path()).unwrap().to_path_buf()).collect();
    assert_eq!(names, [PathBuf::from("run_0.mcap"), PathBuf::from("run_1.mcap")]);
    // Repeated latched copies are not counted as recorded messages.
    assert_eq!(report.messages.get("/chatter"), Some(&8));
    assert_eq!(report.messages.get("/map"), Some(&1));
    let msgs = read(&second);
    let map_copy: Vec<_> = msgs.iter().filter(|m| m.0 == "/map").collect();
    assert_eq!(map_copy.len(), 1, "the latched message heads the new split");
    assert_eq!((map_copy[0].1, map_copy[0].2.as_str()), (T0 + SEC, "map-1"), "stamped with the split's time");
    assert_eq!(texts(&msgs, "/chatter"), (5..8).map(|i| format!("hello {i}")).collect::<Vec<_>>());
    assert_eq!(read(&first).len(), 6, "the first split is closed with what it had");
}

/// Snapshot mode: messages only go to a ring bounded in bytes; a trigger writes the newest
/// ones into a bag of their own, and what the ring forgot is not in it.
#[test]
fn ros1_snapshot_writes_the_newest_messages_on_a_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let uri = master_uri();
    let (_clock, now) = virtual_clock();
    let output = RecordOptions {
        output: OutputName::Exact(dir.path().join("snap.bag")),
        min_space: 0,
        ..RecordOptions::default()
    };
    // "hello N" is 11 bytes with its length: the ring keeps the newest five.
    let snapshot = SnapshotOptions { max_duration_ns: None, max_bytes: Some(55), each_to_new_bag: true };
    let spec = RecordSpec {
        output,
        pipeline: PipelineOptions {
            snapshot: Some(snapshot),
            idle_wait: Duration::from_millis(10),
            ..PipelineOptions::default()
        },
        queue_bytes: None,
        start_paused: false,
        source: Source::Ros1(source(&["/chatter"])),
        clock: Some(now),
    };
    let rec = Running::start(spec);
    let talker = publisher_node(&uri);
    let chatter = advertise(&talker, "/chatter", false);
    assert!(chatter.wait_for_subscribers(1, LONG), "the recorder subscribes");
    for i in 0..10 {
        chatter.publish(string_msg(&format!("hello {i}")));
    }
    wait_until("the ten messages in the ring", || rec.controls.taken() >= 10);
    let bag = dir.path().join("snap.bag");
    assert!(!bag.exists(), "nothing is written before the trigger");
    rec.controls.snapshot();
    wait_until("the snapshot", || rec.logged("snapshot written to"));
    let outcome = rec.finish();
    talker.shutdown();
    assert_eq!(texts(&read(&bag), "/chatter"), (5..10).map(|i| format!("hello {i}")).collect::<Vec<_>>());
    assert_eq!(outcome.report.snapshots, 1);
    assert_eq!(outcome.report.files, [bag]);
    assert_eq!(outcome.report.messages.get("/chatter"), Some(&5));
}
