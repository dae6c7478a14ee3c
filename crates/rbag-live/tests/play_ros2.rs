//! Playback through the library into a ROS 2 DDS domain of the test's own (Cyclone on loopback),
//! read by raw DDS readers in another participant. No binary is spawned.
#![cfg(feature = "ros2")]

use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use rbag_live::play::ros2::{self, Ros2Options};
use rbag_live::play::{controls, Events, PlayEvent, PlaySpec};
use rbag_ros2::dds::{Participant, RawReader, Sample};
use rbag_ros2::qos::Overrides;
use rbag_storage::rosbag2::qos::{policy, QosProfile};
use rbag_storage::{Filter, StorageReader};
use rbag_testkit::ros2::{same_payload, Domain};

const LONG: Duration = Duration::from_secs(30);
const TOPIC: &str = "rt/topic";
const STRING: &str = "std_msgs::msg::dds_::String_";

fn reader(p: &Participant, q: &QosProfile) -> (RawReader, mpsc::Receiver<Sample>) {
    let (tx, rx) = mpsc::channel();
    let r = RawReader::new(p, TOPIC, STRING, q, Box::new(move |s| drop(tx.send(s)))).expect("raw reader");
    (r, rx)
}

/// Up to `n` samples, waiting at most `timeout` in all.
fn collect(rx: &mpsc::Receiver<Sample>, got: &mut Vec<Vec<u8>>, n: usize, timeout: Duration) {
    let end = Instant::now() + timeout;
    while got.len() < n {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(s) => got.push(s.data),
            Err(_) => return,
        }
    }
}

fn assert_same(what: &str, got: &[Vec<u8>], want: &[Vec<u8>]) {
    assert_eq!(got.len(), want.len(), "{what}: how many");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(same_payload(g, w), "{what}: message {i} differs");
    }
}

#[test]
fn a_rosbag2_corpus_bag_reaches_a_dds_reader_in_order_steps_while_paused_and_serves_a_late_reader() {
    let test = "a_rosbag2_corpus_bag_reaches_a_dds_reader_in_order_steps_while_paused_and_serves_a_late_reader";
    let Some(dir) = rbag_testkit::corpus(test, "ros2") else { return };
    let bag = rbag_storage::open(&dir.join("mcap/talker")).expect("corpus bag opens");
    let filter = Filter { topics: vec!["/topic".into()], ..Filter::default() };
    let want: Vec<Vec<u8>> =
        bag.messages(&filter).expect("messages").map(|m| m.expect("message").data.to_vec()).collect();
    assert_eq!(want.len(), 10, "the talker bag has 10 messages on /topic");

    let domain = Domain::new();
    let player = Participant::new(domain.id()).expect("participant");
    let peer = Participant::new(domain.id()).expect("participant");
    let volatile = QosProfile {
        reliability: policy::RELIABLE,
        durability: policy::VOLATILE,
        history: policy::KEEP_ALL,
        ..QosProfile::default()
    };
    let (_reader, rx) = reader(&peer, &volatile);

    // Transient local, as a latched ROS 1 topic plays into ROS 2: a late reader gets the last 10.
    let ros2 = Ros2Options {
        qos_overrides: Overrides::parse(
            "/topic: {reliability: reliable, durability: transient_local, history: keep_last, depth: 10}",
        )
        .expect("overrides"),
        ..Ros2Options::default()
    };
    let mut spec = PlaySpec::new(vec![bag as Box<dyn StorageReader>]);
    spec.filter = filter;
    spec.options.rate = 20.0;
    spec.options.start_paused = true;
    spec.options.keep_alive = true;
    let events = Arc::new(Mutex::new(Vec::new()));
    spec.events = {
        let events = events.clone();
        Events::new(move |e| events.lock().unwrap().push(e))
    };
    let (handle, run) = controls();
    let playing = std::thread::spawn(move || ros2::play(&player, spec, &ros2, run));

    // Paused: one step sends exactly one message (a control sent before the run starts waits
    // for it).
    assert!(handle.step());
    let mut got = Vec::new();
    collect(&rx, &mut got, 1, LONG);
    std::thread::sleep(Duration::from_millis(500));
    collect(&rx, &mut got, 2, Duration::from_millis(10));
    assert_eq!(got.len(), 1, "one step, one message, while paused");

    // Resumed: the rest, in order, byte for byte.
    assert!(handle.resume());
    collect(&rx, &mut got, want.len(), LONG);
    assert_same("volatile reader", &got, &want);

    // A reader that joins after the end still gets every message: the writer is transient local.
    let (_late, late_rx) = reader(&peer, &QosProfile { durability: policy::TRANSIENT_LOCAL, ..volatile });
    let mut late = Vec::new();
    collect(&late_rx, &mut late, want.len(), LONG);
    assert_same("late transient-local reader", &late, &want);

    handle.stop();
    let report = playing.join().expect("no panic").expect("playback");
    let play = report.play.expect("played");
    assert_eq!(play.published, want.len() as u64);
    assert!(play.quit, "keep-alive runs until stopped");
    let states: Vec<bool> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            PlayEvent::State(s) => Some(s.paused),
            _ => None,
        })
        .collect();
    assert_eq!(states.last(), Some(&false), "resumed: {states:?}");
}

#[test]
fn a_burst_sends_n_messages_at_once_and_ends() {
    let test = "a_burst_sends_n_messages_at_once_and_ends";
    let Some(dir) = rbag_testkit::corpus(test, "ros2") else { return };
    let bag = rbag_storage::open(&dir.join("mcap/talker")).expect("corpus bag opens");
    let domain = Domain::new();
    let player = Participant::new(domain.id()).expect("participant");
    let peer = Participant::new(domain.id()).expect("participant");
    let q = QosProfile {
        reliability: policy::RELIABLE,
        durability: policy::VOLATILE,
        history: policy::KEEP_ALL,
        ..QosProfile::default()
    };
    let (_reader, rx) = reader(&peer, &q);
    let mut spec = PlaySpec::new(vec![bag]);
    spec.filter.topics = vec!["/topic".into()];
    let ros2 = Ros2Options {
        burst: Some(4),
        qos_overrides: Overrides::parse("/topic: {reliability: reliable}").expect("overrides"),
        ..Ros2Options::default()
    };
    let (_handle, run) = controls();
    let started = Instant::now();
    let report = ros2::play(&player, spec, &ros2, run).expect("burst");
    // The bag spans 4.5 s at rate 1: a burst does not wait for the schedule.
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    assert_eq!(report.play.expect("played").published, 4);
    let mut got = Vec::new();
    collect(&rx, &mut got, 4, LONG);
    collect(&rx, &mut got, 5, Duration::from_millis(300));
    assert_eq!(got.len(), 4);
}
