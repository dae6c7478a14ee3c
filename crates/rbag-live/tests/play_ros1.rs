//! Playback through the library into a ROS 1 graph: an embedded master, a subscriber node of our
//! own, a corpus bag. No binary is spawned; timing runs on a virtual clock where it is asserted.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rbag_live::play::ros1::{self, Ros1Options};
use rbag_live::play::{controls, Events, PlayEvent, PlaySpec};
use rbag_ros1::master::Master;
use rbag_ros1::names::NodeConfig;
use rbag_ros1::node::{Node, SubEvent};
use rbag_ros1::tcpros::Limits;
use rbag_storage::{Filter, StorageReader};
use rbag_transport::clock::VirtualClock;
use rbag_transport::play::Control;

const LONG: Duration = Duration::from_secs(60);

fn node(master: &Master, name: &str) -> Node {
    let config = NodeConfig {
        name: name.into(),
        namespace: "/".into(),
        master_uri: master.uri().to_string(),
        host: "127.0.0.1".into(),
        remaps: Default::default(),
    };
    Node::start(config, Limits::default()).expect("node starts")
}

fn open(test: &str, name: &str) -> Option<Box<dyn StorageReader>> {
    let dir = rbag_testkit::corpus(test, "ros1")?;
    Some(rbag_storage::open(&dir.join(name)).expect("corpus bag opens"))
}

/// Each topic's messages in the bag, in log-time order: (log time, bytes).
fn bag_messages(reader: &dyn StorageReader, topics: &[&str]) -> BTreeMap<String, Vec<(u64, Vec<u8>)>> {
    let filter = Filter { topics: topics.iter().map(|t| t.to_string()).collect(), ..Filter::default() };
    let mut out: BTreeMap<String, Vec<(u64, Vec<u8>)>> = BTreeMap::new();
    for m in reader.messages(&filter).expect("messages") {
        let m = m.expect("message");
        let topic = reader.connection(m.connection).expect("connection").topic.clone();
        out.entry(topic).or_default().push((m.log_time, m.data.to_vec()));
    }
    out
}

/// What a subscriber heard: per topic, the publisher's header and the messages in order.
#[derive(Default)]
struct Heard {
    headers: BTreeMap<String, rbag_ros1::tcpros::Header>,
    messages: BTreeMap<String, Vec<Vec<u8>>>,
}

fn subscribe(n: &Node, topics: &[&str]) -> Arc<Mutex<Heard>> {
    let heard = Arc::new(Mutex::new(Heard::default()));
    for topic in topics {
        let (h, t) = (heard.clone(), topic.to_string());
        n.subscribe(
            topic,
            "*",
            true,
            Arc::new(move |e| {
                let mut h = h.lock().unwrap();
                match e {
                    SubEvent::Connected { header, .. } => {
                        h.headers.insert(t.clone(), header);
                    }
                    SubEvent::Message { data, .. } => h.messages.entry(t.clone()).or_default().push(data.to_vec()),
                    SubEvent::Closed { .. } => {}
                }
            }),
        )
        .expect("subscribe");
    }
    heard
}

fn count(heard: &Arc<Mutex<Heard>>) -> usize {
    heard.lock().unwrap().messages.values().map(Vec::len).sum()
}

fn wait_count(heard: &Arc<Mutex<Heard>>, n: usize) -> usize {
    let start = Instant::now();
    while count(heard) < n && start.elapsed() < LONG {
        std::thread::sleep(Duration::from_millis(10));
    }
    count(heard)
}

fn ros1_options() -> Ros1Options {
    Ros1Options { queue_size: 100_000, wait_for_subscribers: true, ..Ros1Options::default() }
}

#[test]
fn a_corpus_bag_reaches_a_subscriber_byte_identical_in_order_and_latched_for_a_late_one() {
    let test = "a_corpus_bag_reaches_a_subscriber_byte_identical_in_order_and_latched_for_a_late_one";
    let Some(reader) = open(test, "multi_lz4.bag") else { return };
    let topics = ["/chatter", "/imu", "/tf", "/robot_description", "/camera/image_raw"];
    let want = bag_messages(reader.as_ref(), &topics);
    let total: usize = want.values().map(Vec::len).sum();
    let master = Master::start("127.0.0.1:0".parse().unwrap()).expect("master");
    let player = node(&master, "/rbag_live_play");
    let sub = node(&master, "/rbag_live_sub");
    let heard = subscribe(&sub, &topics);

    let events = Arc::new(Mutex::new(Vec::new()));
    let mut spec = PlaySpec::new(vec![reader]);
    spec.filter.topics = topics.iter().map(|t| t.to_string()).collect();
    spec.options.immediate = true;
    spec.events = {
        let events = events.clone();
        Events::new(move |e| events.lock().unwrap().push(e))
    };
    let (_handle, run) = controls();
    let report = ros1::play(&player, spec, &ros1_options(), run).expect("playback");
    let play = report.play.expect("played");
    assert_eq!(play.published, total as u64);
    assert_eq!(report.dropped, Some(0));
    assert_eq!(wait_count(&heard, total), total, "every message arrives");
    {
        let h = heard.lock().unwrap();
        for (topic, msgs) in &want {
            let bytes: Vec<Vec<u8>> = msgs.iter().map(|(_, d)| d.clone()).collect();
            assert!(h.messages[topic] == bytes, "{topic}: the bytes and order received are the bag's");
            let header = &h.headers[topic];
            assert_eq!(header.get("latching"), Some(if topic == "/robot_description" { "1" } else { "0" }), "{topic}");
            assert!(header.get("message_definition").is_some_and(|d| !d.is_empty()), "{topic}");
        }
    }
    let waited: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            PlayEvent::WaitingForSubscriber(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(waited.len(), topics.len(), "waited for a subscriber on each topic: {waited:?}");

    // The player's node still publishes: a subscriber that comes late gets the latched message.
    let late = node(&master, "/rbag_live_late");
    let late_heard = subscribe(&late, &["/robot_description", "/chatter"]);
    assert_eq!(wait_count(&late_heard, 1), 1);
    std::thread::sleep(Duration::from_millis(300));
    let h = late_heard.lock().unwrap();
    assert_eq!(h.messages.get("/robot_description"), Some(&vec![want["/robot_description"][0].1.clone()]));
    assert!(!h.messages.contains_key("/chatter"), "a topic that is not latched is not repeated");
    drop(h);
    for n in [late, sub, player] {
        n.shutdown();
    }
    master.shutdown();
}

#[test]
fn pause_step_and_rate_act_on_the_schedule() {
    let test = "pause_step_and_rate_act_on_the_schedule";
    let Some(reader) = open(test, "multi_lz4.bag") else { return };
    let want = bag_messages(reader.as_ref(), &["/tf"]).remove("/tf").expect("the bag has /tf");
    let master = Master::start("127.0.0.1:0".parse().unwrap()).expect("master");
    let player = node(&master, "/rbag_live_play_steps");
    let sub = node(&master, "/rbag_live_sub_steps");
    let heard = subscribe(&sub, &["/tf"]);

    // Paused from the start: two steps at 1 and 2 µs, then rate 2 and resume at 3 µs.
    let clock = Arc::new(
        VirtualClock::new(0)
            .at(1_000, Control::Step)
            .at(2_000, Control::Step)
            .at(3_000, Control::SetRate(2.0))
            .at(3_000, Control::Resume),
    );
    let mut spec = PlaySpec::new(vec![reader]);
    spec.filter.topics = vec!["/tf".into()];
    spec.options.start_paused = true;
    spec.clock = Some(clock.clone());
    let states = Arc::new(Mutex::new(Vec::new()));
    spec.events = {
        let states = states.clone();
        Events::new(move |e| {
            if let PlayEvent::State(s) = e {
                states.lock().unwrap().push((s.paused, s.rate));
            }
        })
    };
    let (_handle, run) = controls();
    let report = ros1::play(&player, spec, &ros1_options(), run).expect("playback");
    assert_eq!(report.play.expect("played").published, want.len() as u64);
    assert_eq!(wait_count(&heard, want.len()), want.len());
    let bytes: Vec<Vec<u8>> = want.iter().map(|(_, d)| d.clone()).collect();
    assert!(heard.lock().unwrap().messages["/tf"] == bytes, "bytes and order");

    // Every send is one wait that a deadline ended: the two steps went out while paused (no
    // deadline), the rest on a schedule anchored at the second message, at twice the bag's pace.
    let sends: Vec<u64> =
        clock.waits().iter().filter(|w| w.control.is_none()).map(|w| w.deadline.expect("a deadline")).collect();
    let steps: Vec<u64> = clock.waits().iter().filter(|w| w.control == Some(Control::Step)).map(|w| w.woke).collect();
    assert_eq!(steps, vec![1_000, 2_000]);
    let anchor = want[1].0;
    let expected: Vec<u64> =
        want[2..].iter().map(|(t, _)| 3_000 + ((t - anchor) as f64 / 2.0).round() as u64).collect();
    assert_eq!(sends, expected, "after resume at rate 2");
    assert_eq!(states.lock().unwrap().last(), Some(&(false, 2.0)), "the last state: playing at rate 2");
    for n in [sub, player] {
        n.shutdown();
    }
    master.shutdown();
}

#[test]
fn stop_from_the_handle_ends_a_paused_run_and_the_pause_service_is_served() {
    let test = "stop_from_the_handle_ends_a_paused_run_and_the_pause_service_is_served";
    let Some(reader) = open(test, "multi_lz4.bag") else { return };
    let master = Master::start("127.0.0.1:0".parse().unwrap()).expect("master");
    let player = node(&master, "/rbag_live_play_stop");
    let mut spec = PlaySpec::new(vec![reader]);
    spec.options.start_paused = true;
    let (handle, run) = controls();
    let h = handle.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        h.stop();
    });
    let report = ros1::play(&player, spec, &Ros1Options::default(), run).expect("playback");
    stopper.join().unwrap();
    let play = report.play.expect("played");
    assert!(play.quit, "a stop ended the run");
    assert_eq!(play.published, 0, "nothing is published while paused");
    assert!(handle.stopped());
    let client = rbag_ros1::master_client::MasterClient::new(master.uri(), "/probe").expect("client");
    let uri = client.lookup_service("/rbag_live_play_stop/pause_playback");
    assert!(uri.is_ok(), "~pause_playback is registered: {uri:?}");
    player.shutdown();
    master.shutdown();
}

#[test]
fn a_rate_control_topic_holds_playback_until_its_stamp_allows() {
    let test = "a_rate_control_topic_holds_playback_until_its_stamp_allows";
    let Some(reader) = open(test, "multi_lz4.bag") else { return };
    let want = bag_messages(reader.as_ref(), &["/chatter"]).remove("/chatter").expect("the bag has /chatter");
    let master = Master::start("127.0.0.1:0".parse().unwrap()).expect("master");
    let player = node(&master, "/rbag_live_play_rc");
    let sub = node(&master, "/rbag_live_sub_rc");
    let heard = subscribe(&sub, &["/chatter"]);
    // A downstream node says how far it got with a Header stamp (latched, so the player hears it
    // whenever it connects).
    let downstream = node(&master, "/rbag_live_downstream");
    let stamps = downstream
        .advertise(rbag_ros1::tcpros::Publication {
            topic: "/progress".into(),
            msg_type: "rbag_test/Progress".into(),
            md5sum: "*".into(),
            message_definition: "Header header\n".into(),
            latching: true,
            caller_id: "/rbag_live_downstream".into(),
            queue_size: 10,
        })
        .expect("advertise");

    let mut spec = PlaySpec::new(vec![reader]);
    spec.filter.topics = vec!["/chatter".into()];
    let ros1 = Ros1Options { rate_control: Some(("/progress".into(), 0)), ..ros1_options() };
    let (handle, run) = controls();
    let playing = std::thread::spawn(move || ros1::play(&player, spec, &ros1, run));
    let start = Instant::now();
    while !heard.lock().unwrap().headers.contains_key("/chatter") && start.elapsed() < LONG {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(count(&heard), 0, "nothing plays before the first stamp");

    // Stamp = the fifth message's time, max delay 0: exactly the first five may go.
    let t = want[4].0;
    let mut msg = 0u32.to_le_bytes().to_vec();
    msg.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
    msg.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
    msg.extend_from_slice(&0u32.to_le_bytes());
    stamps.publish(msg.into());
    assert_eq!(wait_count(&heard, 5), 5);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(count(&heard), 5, "held at the stamp");
    handle.stop();
    let report = playing.join().expect("no panic").expect("playback");
    assert_eq!(report.play.expect("played").published, 5);
    let bytes: Vec<Vec<u8>> = want[..5].iter().map(|(_, d)| d.clone()).collect();
    assert!(heard.lock().unwrap().messages["/chatter"] == bytes);
    for n in [downstream, sub] {
        n.shutdown();
    }
    master.shutdown();
}
