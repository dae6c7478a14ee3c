//! Our TCPROS subscriber against real rospy publishers, found through Debian's rosmaster: the
//! reply header must carry rospy's type, md5 and definition, and the payloads must be the
//! exact bytes rospy serialised.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rbag_ros1::tcpros::{connect, Limits, Link, SubscribeRequest, TcprosError};
use rbag_ros1::xmlrpc::{self, Value};

const N: usize = 20;
const CALLER: &str = "/rbag_tcpros_test";

/// Kills the process when the test ends, passed or not.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Debian's rospy (only /usr/bin/python3 imports it) and rosmaster, or a recorded skip.
fn peers(test: &str) -> Option<PathBuf> {
    let py = PathBuf::from("/usr/bin/python3");
    let ok = Command::new(&py)
        .args(["-c", "import rospy, std_msgs.msg, sensor_msgs.msg"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok || !Path::new("/usr/bin/rosmaster").exists() {
        rbag_testkit::skip(test, "Debian's rosmaster and python3-rospy are not installed (run scripts/setup-peers.sh)");
        return None;
    }
    Some(py)
}

fn ros_env(cmd: &mut Command, home: &Path, master: &str) {
    cmd.env("ROS_HOME", home).env("ROS_LOG_DIR", home).env("ROS_MASTER_URI", master).env("ROS_HOSTNAME", "127.0.0.1");
    cmd.env_remove("ROS_IP").env_remove("ROS_NAMESPACE");
}

/// Starts `rosmaster --core` on a free port and waits until it answers `getPid`.
fn start_master(home: &Path) -> (Proc, String) {
    let port = free_port();
    let uri = format!("http://127.0.0.1:{port}/");
    let mut cmd = Command::new("/usr/bin/rosmaster");
    cmd.args(["--core", "-p", &port.to_string()]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    ros_env(&mut cmd, home, &uri);
    let proc = Proc(cmd.spawn().expect("rosmaster starts"));
    let start = Instant::now();
    while xmlrpc::call(&uri, "getPid", &[CALLER.into()]).is_err() {
        assert!(start.elapsed() < Duration::from_secs(30), "rosmaster on port {port} did not answer getPid in 30 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    (proc, uri)
}

/// Waits for `dir/name` to appear (the script writes it atomically) and returns its lines.
fn wait_file(dir: &Path, name: &str, script: &mut Proc) -> Vec<String> {
    let start = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(dir.join(name)) {
            return s.lines().map(str::to_string).collect();
        }
        if let Ok(Some(status)) = script.0.try_wait() {
            let err = std::fs::read_to_string(dir.join("stderr")).unwrap_or_default();
            panic!("the rospy script exited ({status}) before writing {name}: {err}");
        }
        assert!(start.elapsed() < Duration::from_secs(60), "the rospy script did not write {name} in 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn ok_value(v: Value, what: &str) -> Value {
    match v {
        Value::Array(mut a) if a.len() == 3 && a[0] == Value::Int(1) => a.remove(2),
        other => panic!("{what}: {other:?}"),
    }
}

/// The publisher's TCPROS `host:port` for `topic`, through the master and `requestTopic`.
fn publisher_addr(master: &str, topic: &str) -> String {
    let start = Instant::now();
    let uri = loop {
        let params = [CALLER.into(), topic.into(), "*".into(), "http://127.0.0.1:1/".into()];
        let v = ok_value(xmlrpc::call(master, "registerSubscriber", &params).unwrap(), "registerSubscriber");
        if let Some(uri) = v.as_array().and_then(|a| a.first()).and_then(Value::as_str) {
            break uri.to_string();
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no publisher of {topic} registered");
        std::thread::sleep(Duration::from_millis(50));
    };
    let protos = Value::Array(vec![Value::Array(vec!["TCPROS".into()])]);
    let v =
        ok_value(xmlrpc::call(&uri, "requestTopic", &[CALLER.into(), topic.into(), protos]).unwrap(), "requestTopic");
    match v.as_array() {
        Some([Value::Str(p), Value::Str(host), Value::Int(port)]) if p == "TCPROS" => format!("{host}:{port}"),
        _ => panic!("requestTopic reply {v:?}"),
    }
}

fn request(topic: &str, ty: &str, md5: &str) -> SubscribeRequest {
    SubscribeRequest {
        topic: topic.into(),
        caller_id: CALLER.into(),
        msg_type: ty.into(),
        md5sum: md5.into(),
        message_definition: None,
        tcp_nodelay: true,
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex_text(s: &str) -> String {
    String::from_utf8((0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect())
        .unwrap()
}

/// Checks the reply against what genpy says about the type.
fn check_reply(link: &Link, topic: &str, types: &[String], ty: &str, latching: &str) {
    let line = types.iter().find(|l| l.starts_with(&format!("{ty} "))).unwrap();
    let parts: Vec<&str> = line.split(' ').collect();
    let h = link.header();
    assert_eq!(
        h.iter().map(|(k, _)| k).collect::<Vec<_>>(),
        ["callerid", "latching", "md5sum", "message_definition", "topic", "type"]
    );
    assert_eq!(h.get("callerid"), Some("/tcpros_pub"));
    assert_eq!(h.get("latching"), Some(latching));
    assert_eq!(h.get("md5sum"), Some(parts[1]));
    assert_eq!(h.get("message_definition"), Some(unhex_text(parts[2]).as_str()));
    assert_eq!(h.get("topic"), Some(topic));
    assert_eq!(h.get("type"), Some(ty));
}

#[test]
fn subscriber_receives_rospys_bytes() {
    let test = "subscriber_receives_rospys_bytes";
    let Some(python) = peers(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let (_master, master) = start_master(&home);

    let mut cmd = Command::new(python);
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/tcpros_rospy_pub.py")).arg(&out).arg(N.to_string());
    cmd.stdin(Stdio::null())
        .stdout(std::fs::File::create(out.join("stdout")).unwrap())
        .stderr(std::fs::File::create(out.join("stderr")).unwrap());
    ros_env(&mut cmd, &home, &master);
    let mut script = Proc(cmd.spawn().expect("python starts"));
    let types = wait_file(&out, "types", &mut script);
    assert_eq!(types[0].split(' ').nth(1), Some("992ce8a1687cec8c8bd883ec73ca41d1"));
    let imu = wait_file(&out, "imu", &mut script);
    assert_eq!(imu.len(), N);

    // /imu is latched: a late subscriber gets exactly the last message, then nothing.
    let limits = Limits::default();
    let t = Duration::from_secs(10);
    let mut link = connect(&publisher_addr(&master, "/imu"), &request("/imu", "*", "*"), &limits, t).unwrap();
    check_reply(&link, "/imu", &types, "sensor_msgs/Imu", "1");
    // rospy serialises only when a topic has connections, numbering header.seq from 1 as it
    // does (rospy/topics.py `self.seq += 1`); the script's copy was serialised with seq 0.
    let m = link.next_message().unwrap().expect("the latched Imu");
    assert_eq!(&imu[N - 1][..8], "00000000");
    assert_eq!(hex(&m), format!("01000000{}", &imu[N - 1][8..]));
    link.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    match link.next_message() {
        Err(TcprosError::Wire { source: rbag_ros1::tcpros::WireError::TimedOut { .. }, .. }) => {}
        other => panic!("only the last Imu is latched, got {other:?}"),
    }

    // rospy's refusals, verbatim (docs/ros1-live-spike.md §3).
    let chatter = publisher_addr(&master, "/chatter");
    let bad = "0123456789abcdef0123456789abcdef";
    match connect(&chatter, &request("/chatter", "std_msgs/String", bad), &limits, t) {
        Err(TcprosError::Refused { msg, peer, topic }) => {
            assert_eq!((peer.as_str(), topic.as_str()), (chatter.as_str(), "/chatter"));
            assert_eq!(
                msg,
                format!("Client [{CALLER}] wants topic [/chatter] to have datatype/md5sum [std_msgs/String/{bad}], but our version has [std_msgs/String/992ce8a1687cec8c8bd883ec73ca41d1] Dropping connection.")
            );
        }
        other => panic!("{:?}", other.map(|l| l.header().clone())),
    }
    match connect(&chatter, &request("/chatter", "std_msgs/Int32", "da5909fbe378aeaf85e547e830cc1bb7"), &limits, t) {
        Err(TcprosError::Refused { msg, .. }) => {
            assert_eq!(msg, "topic types do not match: [std_msgs/Int32] vs. [std_msgs/String]")
        }
        other => panic!("{:?}", other.map(|l| l.header().clone())),
    }

    // /chatter: the script publishes once we are connected; every byte must match.
    let mut link = connect(&chatter, &request("/chatter", "*", "*"), &limits, t).unwrap();
    check_reply(&link, "/chatter", &types, "std_msgs/String", "0");
    link.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let got: Vec<String> = (0..N).map(|_| hex(&link.next_message().unwrap().expect("a String"))).collect();
    let sent = wait_file(&out, "chatter", &mut script);
    assert_eq!(got, sent);
    // Killing the publisher ends the link cleanly, at a frame boundary.
    drop(script);
    link.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert!(link.next_message().unwrap().is_none());
}
