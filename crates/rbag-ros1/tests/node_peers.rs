//! A rbag node in a real ROS 1 graph (Debian's rosmaster, rospy, rostopic): it subscribes to a
//! rospy publisher with `*` like rosbag record, and publishes to `rostopic echo`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rbag_ros1::names::NodeConfig;
use rbag_ros1::node::{Node, SubEvent};
use rbag_ros1::tcpros::{Limits, Publication};
use rbag_testkit::ros1::Ros1Env;

fn node(env: &Ros1Env, name: &str) -> Node {
    let config = NodeConfig {
        name: name.into(),
        namespace: "/".into(),
        master_uri: env.master_uri(),
        host: "127.0.0.1".into(),
        remaps: Default::default(),
    };
    Node::start(config, Limits::default()).expect("node starts")
}

fn string_msg(s: &str) -> bytes::Bytes {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v.into()
}

const STRING_MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";

#[test]
fn subscribes_to_a_rospy_publisher_like_rosbag_record() {
    let Some(mut env) = Ros1Env::new("subscribes_to_a_rospy_publisher_like_rosbag_record") else { return };
    env.start_rosmaster();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/talker.py");
    let mut talker = env.command("/usr/bin/python3");
    talker.args([script, "/chatter", "50", "0"]);
    env.spawn("talker", talker);

    let n = node(&env, "/rbag_test_sub");
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    n.subscribe("/chatter", "*", false, Arc::new(move |e| sink.lock().unwrap().push(e))).unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let count = events.lock().unwrap().iter().filter(|e| matches!(e, SubEvent::Message { .. })).count();
        if count >= 5 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    n.shutdown();
    let events = events.lock().unwrap();
    let header = events
        .iter()
        .find_map(|e| match e {
            SubEvent::Connected { header, .. } => Some(header.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("never connected; talker log:\n{}\nevents: {events:?}", env.log("talker")));
    assert_eq!(header.get("type"), Some("std_msgs/String"));
    assert_eq!(header.get("md5sum"), Some(STRING_MD5));
    assert!(header.get("message_definition").is_some_and(|d| d.contains("string data")));
    assert!(header.get("callerid").is_some_and(|c| c.starts_with("/talker")));
    let msgs: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            SubEvent::Message { data, .. } => Some(String::from_utf8_lossy(&data[4..]).into_owned()),
            _ => None,
        })
        .collect();
    assert!(msgs.len() >= 5, "{msgs:?}");
    let first: u32 = msgs[0].strip_prefix("hello ").unwrap().parse().unwrap();
    for (i, m) in msgs.iter().enumerate() {
        assert_eq!(m, &format!("hello {}", first + i as u32), "in order, none lost");
    }
}

#[test]
fn publishes_latched_to_rostopic_echo() {
    let Some(mut env) = Ros1Env::new("publishes_latched_to_rostopic_echo") else { return };
    env.start_rosmaster();
    let n = node(&env, "/rbag_test_pub");
    let publication = Publication {
        topic: "/rbag_out".into(),
        msg_type: "std_msgs/String".into(),
        md5sum: STRING_MD5.into(),
        message_definition: "string data\n".into(),
        latching: true,
        caller_id: n.name().into(),
        queue_size: 10,
    };
    let publisher = n.advertise(publication).unwrap();
    publisher.publish(string_msg("latched hello"));
    let mut echo = env.command("/usr/bin/rostopic");
    echo.args(["echo", "-n", "1", "/rbag_out"]);
    let (ok, out, err) = env.run(echo, Duration::from_secs(30));
    n.shutdown();
    assert!(ok, "rostopic echo failed: {err}");
    assert!(out.contains("data: \"latched hello\""), "{out}");

    // The node is gone from the master after shutdown.
    let mut list = env.command("/usr/bin/rostopic");
    list.args(["info", "/rbag_out"]);
    let (_, out, _) = env.run(list, Duration::from_secs(20));
    assert!(!out.contains("/rbag_test_pub"), "{out}");
}
