//! `TcprosServer` serving real subscribers: rospy (an `AnyMsg` subscriber sending `*`, and a
//! typed `sensor_msgs/Imu` one sending the real md5) and roscpp (Debian's C++ `rosbag record`,
//! which stores our reply header verbatim as the bag's connection). The node's slave API is
//! stood in for by a minimal XML-RPC handler that answers `requestTopic` with the server's port.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rbag_ros1::tcpros::{Publication, TcprosServer};
use rbag_ros1::xmlrpc::{self, Value};

const N: usize = 15;
const CALLER: &str = "/rbag_tcpros_pub";
const STRING_MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";
const RECORD: &str = "/usr/lib/rosbag/record";

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

fn peers(test: &str) -> Option<PathBuf> {
    let py = rbag_testkit::rosbag_python(test)?;
    let ok = Command::new(&py).args(["-c", "import rospy, sensor_msgs.msg"]).output().is_ok_and(|o| o.status.success());
    if !ok || !Path::new("/usr/bin/rosmaster").exists() || !Path::new(RECORD).exists() {
        rbag_testkit::skip(
            test,
            "Debian's rosmaster, python3-rospy or rosbag record is not installed (run scripts/setup-peers.sh)",
        );
        return None;
    }
    Some(py)
}

fn ros_env(cmd: &mut Command, home: &Path, master: &str) {
    cmd.env("ROS_HOME", home).env("ROS_LOG_DIR", home).env("ROS_MASTER_URI", master).env("ROS_HOSTNAME", "127.0.0.1");
    cmd.env_remove("ROS_IP").env_remove("ROS_NAMESPACE");
}

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

/// The part of a node's slave API subscribers need: `requestTopic` names the TCPROS port.
struct Slave {
    port: u16,
}

impl xmlrpc::Handler for Slave {
    fn call(&self, method: &str, _params: Vec<Value>) -> Result<Value, (i32, String)> {
        let ok = |v: Value| Ok(Value::Array(vec![1.into(), "".into(), v]));
        match method {
            "requestTopic" => ok(Value::Array(vec!["TCPROS".into(), "127.0.0.1".into(), (self.port as i32).into()])),
            "getPid" => ok((std::process::id() as i32).into()),
            _ => ok(0.into()),
        }
    }
}

fn wait_lines(path: &Path, n: usize, what: &str, procs: &mut [&mut Proc], err: &Path) -> Vec<String> {
    let start = Instant::now();
    loop {
        let lines: Vec<String> =
            std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_string).collect();
        if lines.len() >= n {
            return lines;
        }
        for p in procs.iter_mut() {
            if let Ok(Some(status)) = p.0.try_wait() {
                panic!("a peer exited ({status}) before {what}: {}", std::fs::read_to_string(err).unwrap_or_default());
            }
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{what}: {} of {n} lines after 60 s", lines.len());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// "key hex(value)" lines as (key, value) pairs.
fn header_lines(lines: &[String]) -> Vec<(String, String)> {
    lines
        .iter()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap_or((l, ""));
            (k.to_string(), String::from_utf8(unhex(v)).unwrap())
        })
        .collect()
}

fn string_msg(s: &str) -> Bytes {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    Bytes::from(v)
}

#[test]
fn rospy_and_roscpp_record_subscribe_to_our_server() {
    let test = "rospy_and_roscpp_record_subscribe_to_our_server";
    let Some(python) = peers(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let (_master, master) = start_master(&home);

    // Our node: a TCPROS server and the stand-in slave API, registered with the master.
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let slave = TcpListener::bind("127.0.0.1:0").unwrap();
    let slave_uri = format!("http://127.0.0.1:{}/", slave.local_addr().unwrap().port());
    let handler: Arc<dyn xmlrpc::Handler> = Arc::new(Slave { port: server.port() });
    std::thread::spawn(move || xmlrpc::serve(slave, handler));

    // The rospy subscribers; they also tell us Imu's md5 and definition and make the Imu bytes.
    let mut cmd = Command::new(&python);
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/tcpros_rospy_sub.py")).arg(&out).arg(N.to_string());
    let err = out.join("stderr");
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(std::fs::File::create(&err).unwrap());
    ros_env(&mut cmd, &home, &master);
    let mut sub = Proc(cmd.spawn().expect("python starts"));
    let types = wait_lines(&out.join("types"), 1, "types", &mut [&mut sub], &err);
    let imu_sent = wait_lines(&out.join("imu_sent"), N, "imu_sent", &mut [&mut sub], &err);
    let t: Vec<&str> = types[0].split(' ').collect();
    let imu_def = String::from_utf8(unhex(t[2])).unwrap();

    let chatter = server
        .advertise(Publication {
            topic: "/chatter".into(),
            msg_type: "std_msgs/String".into(),
            md5sum: STRING_MD5.into(),
            message_definition: "string data\n".into(),
            latching: true,
            caller_id: CALLER.into(),
            queue_size: 100,
        })
        .unwrap();
    let imu = server
        .advertise(Publication {
            topic: "/imu".into(),
            msg_type: t[0].into(),
            md5sum: t[1].into(),
            message_definition: imu_def.clone(),
            latching: false,
            caller_id: CALLER.into(),
            queue_size: 100,
        })
        .unwrap();
    // Published before anyone subscribes: only the latch keeps it.
    chatter.publish(string_msg("latched"));
    for (topic, ty) in [("/chatter", "std_msgs/String"), ("/imu", t[0])] {
        let v = xmlrpc::call(
            &master,
            "registerPublisher",
            &[CALLER.into(), topic.into(), ty.into(), slave_uri.as_str().into()],
        )
        .unwrap();
        assert_eq!(v.as_array().and_then(|a| a.first()), Some(&Value::Int(1)), "{v:?}");
    }

    // roscpp: the C++ recorder.
    let bag = dir.path().join("rec.bag");
    let mut cmd = Command::new(RECORD);
    // `-l`: record stops by itself after the latched message and the N published ones.
    cmd.args(["-l", &(N + 1).to_string(), "-O"]).arg(&bag).arg("/chatter");
    let rec_err = dir.path().join("record.stderr");
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(std::fs::File::create(&rec_err).unwrap());
    ros_env(&mut cmd, &home, &master);
    let mut record = Proc(cmd.spawn().expect("record starts"));

    assert!(
        chatter.wait_for_subscribers(2, Duration::from_secs(60)),
        "rospy and record did not both connect to /chatter"
    );
    assert!(imu.wait_for_subscribers(1, Duration::from_secs(60)), "rospy did not connect to /imu");
    let mut callers: Vec<String> = chatter.subscribers().into_iter().map(|s| s.caller_id).collect();
    callers.sort();
    assert_eq!(callers[1], "/tcpros_sub");
    assert!(callers[0].starts_with("/record_"), "{callers:?}");

    let mut want = vec![hex(&string_msg("latched"))];
    for (i, imu_hex) in imu_sent.iter().enumerate() {
        let m = string_msg(&format!("chatter {i} \u{e9}"));
        want.push(hex(&m));
        chatter.publish(m);
        imu.publish(Bytes::from(unhex(imu_hex)));
    }

    // rospy, AnyMsg: the raw bytes, latched one first, and our reply header.
    let got = wait_lines(&out.join("chatter"), N + 1, "rospy's /chatter messages", &mut [&mut sub], &err);
    assert_eq!(got, want);
    let h = header_lines(&wait_lines(&out.join("chatter.header"), 6, "the /chatter header", &mut [&mut sub], &err));
    let reply = |latching: &str, md5: &str, def: &str, topic: &str, ty: &str| {
        [
            ("callerid", CALLER),
            ("latching", latching),
            ("md5sum", md5),
            ("message_definition", def),
            ("topic", topic),
            ("type", ty),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<Vec<_>>()
    };
    assert_eq!(h, reply("1", STRING_MD5, "string data\n", "/chatter", "std_msgs/String"));
    // rospy, typed Imu: deserialised and serialised again, byte for byte.
    let got = wait_lines(&out.join("imu"), N, "rospy's /imu messages", &mut [&mut sub], &err);
    assert_eq!(got, imu_sent);
    let h = header_lines(&wait_lines(&out.join("imu.header"), 6, "the /imu header", &mut [&mut sub], &err));
    assert_eq!(h, reply("0", t[1], &imu_def, "/imu", t[0]));

    // roscpp: record exits once it has N + 1 messages; then read its bag back.
    let start = Instant::now();
    while record.0.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "record did not finish its {} messages in 30 s: {}",
            N + 1,
            std::fs::read_to_string(&rec_err).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let lines = read_bag(&python, &bag, &home);
    let msgs: Vec<String> = lines.iter().filter_map(|l| l.strip_prefix("M /chatter ")).map(str::to_string).collect();
    assert_eq!(msgs, want, "record's bag; record stderr: {}", std::fs::read_to_string(&rec_err).unwrap_or_default());
    let conn: Vec<String> = lines.iter().filter_map(|l| l.strip_prefix("H /chatter ")).map(str::to_string).collect();
    assert_eq!(header_lines(&conn), reply("1", STRING_MD5, "string data\n", "/chatter", "std_msgs/String"));
}

/// What Debian's rosbag reads from `bag`.
fn read_bag(python: &Path, bag: &Path, home: &Path) -> Vec<String> {
    let out = Command::new(python)
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/tcpros_read_bag.py"))
        .arg(bag)
        .env("ROS_HOME", home)
        .env("ROS_LOG_DIR", home)
        .output()
        .unwrap();
    assert!(out.status.success(), "rosbag cannot read {}: {}", bag.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}
