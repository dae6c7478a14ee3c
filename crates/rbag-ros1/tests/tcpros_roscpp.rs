//! Our TCPROS subscriber against a real roscpp publisher: Debian's C++ `rosbag play`, found
//! through Debian's rosmaster. Its reply header, its refusal text (which `TcprosServer` copies)
//! and the payload bytes are checked against the bag that was played.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rbag_ros1::tcpros::{connect, Limits, SubscribeRequest, TcprosError};
use rbag_ros1::xmlrpc::{self, Value};

const N: usize = 20;
const CALLER: &str = "/rbag_tcpros_test";
const STRING_MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";

const PLAY: &str = "/usr/lib/rosbag/play";

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

/// Debian's python3-rosbag, rosmaster and C++ player, or a recorded skip.
fn peers(test: &str) -> Option<PathBuf> {
    let py = rbag_testkit::rosbag_python(test)?;
    if !Path::new("/usr/bin/rosmaster").exists() || !Path::new(PLAY).exists() {
        rbag_testkit::skip(
            test,
            "Debian's rosmaster or /usr/lib/rosbag/play is not installed (run scripts/setup-peers.sh)",
        );
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

#[test]
fn subscriber_receives_roscpp_plays_bytes() {
    let test = "subscriber_receives_roscpp_plays_bytes";
    let Some(python) = peers(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let bag = dir.path().join("chatter.bag");
    let out = Command::new(python)
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/tcpros_make_bag.py"))
        .arg(&bag)
        .arg(N.to_string())
        .env("ROS_HOME", &home)
        .env("ROS_LOG_DIR", &home)
        .output()
        .unwrap();
    assert!(out.status.success(), "writing the bag: {}", String::from_utf8_lossy(&out.stderr));
    let sent: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    assert_eq!(sent.len(), N);

    let (_master, master) = start_master(&home);
    let mut cmd = Command::new(PLAY);
    cmd.args(["--wait-for-subscribers", "-k", "-q", "-d", "0"]).arg(&bag);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("play.stderr")).unwrap());
    ros_env(&mut cmd, &home, &master);
    let play = Proc(cmd.spawn().expect("play starts"));
    let limits = Limits::default();
    let t = Duration::from_secs(10);
    let addr = publisher_addr(&master, "/chatter");

    // roscpp's refusal, verbatim: `topic /chatter` without brackets, `]. Dropping`.
    let bad = "0123456789abcdef0123456789abcdef";
    match connect(&addr, &request("/chatter", "std_msgs/String", bad), &limits, t) {
        Err(TcprosError::Refused { msg, .. }) => assert_eq!(
            msg,
            format!("Client [{CALLER}] wants topic /chatter to have datatype/md5sum [std_msgs/String/{bad}], but our version has [std_msgs/String/{STRING_MD5}]. Dropping connection.")
        ),
        other => panic!("{:?}", other.map(|l| l.header().clone())),
    }
    // roscpp checks the md5 only: a wrong type with `*` is accepted.
    drop(connect(&addr, &request("/chatter", "std_msgs/Int32", "*"), &limits, t).unwrap());

    let mut link = connect(&addr, &request("/chatter", "*", "*"), &limits, t).unwrap();
    let h = link.header();
    assert_eq!(
        h.iter().map(|(k, _)| k).collect::<Vec<_>>(),
        ["callerid", "latching", "md5sum", "message_definition", "topic", "type"]
    );
    assert_eq!(h.get("latching"), Some("0"));
    assert_eq!(h.get("md5sum"), Some(STRING_MD5));
    assert_eq!(h.get("message_definition"), Some("string data\n"));
    assert_eq!(h.get("topic"), Some("/chatter"));
    assert_eq!(h.get("type"), Some("std_msgs/String"));
    assert!(h.get("callerid").is_some_and(|c| c.starts_with("/play_")), "{h:?}");
    link.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let got: Vec<String> = (0..N).map(|_| hex(&link.next_message().unwrap().expect("a String"))).collect();
    assert_eq!(got, sent);
    drop(play);
    link.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert!(link.next_message().unwrap().is_none());
}
