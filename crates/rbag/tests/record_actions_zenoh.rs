//! ROS 2 actions recorded over Zenoh, as rosbag2 (Kilted and later) on rmw_zenoh records them:
//! `rbag record --ros2 --middleware zenoh --all-actions` against `zenoh_peer.py action-server`
//! and `action-client` (an `example_interfaces/action/Fibonacci` action as rmw_zenoh and
//! rclcpp_action run it, with service introspection on both sides), then `rbag info` of the bag.
//!
//! The test has its own router port, domain id and temp directory; the peers wait for a
//! matching subscriber before each publication (`--await-readers`), so nothing depends on speed.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rbag_testkit::ros2::Domain;
use rbag_testkit::zenoh::{endpoint, free_port, rbag_env, spawn, zenoh_python};
use serde_json::Value;

const LONG: Duration = Duration::from_secs(60);
const FIB: &str = "example_interfaces/action/Fibonacci";

/// A running `rbag record` with its stderr in a file; killed on drop.
struct Rec {
    child: Child,
    log: PathBuf,
}

impl Rec {
    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn wait_log(&self, needle: &str) {
        let start = Instant::now();
        while !self.stderr().contains(needle) {
            assert!(start.elapsed() < LONG, "rbag record printed no {needle:?} in {LONG:?}:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn stop(mut self) -> String {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(start.elapsed() < LONG, "rbag record did not stop:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        };
        let log = self.stderr();
        assert_eq!(status.code(), Some(0), "rbag record exit status:\n{log}");
        assert!(!log.contains("panicked at"), "rbag record panicked:\n{log}");
        log
    }
}

impl Drop for Rec {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `--msg-path` directories for the action's types, as a ROS 2 install would provide them.
fn definitions(dir: &Path) -> Vec<String> {
    let files = [
        ("example_interfaces/action/Fibonacci.action", "int32 order\n---\nint32[] sequence\n---\nint32[] sequence\n"),
        ("unique_identifier_msgs/msg/UUID.msg", "uint8[16] uuid\n"),
        ("action_msgs/msg/GoalInfo.msg", "unique_identifier_msgs/UUID goal_id\nbuiltin_interfaces/Time stamp\n"),
        ("action_msgs/msg/GoalStatus.msg", "GoalInfo goal_info\nint8 status\n"),
        ("action_msgs/msg/GoalStatusArray.msg", "GoalStatus[] status_list\n"),
        ("action_msgs/srv/CancelGoal.srv", "GoalInfo goal_info\n---\nint8 return_code\nGoalInfo[] goals_canceling\n"),
    ];
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    ["example_interfaces", "unique_identifier_msgs", "action_msgs"]
        .iter()
        .flat_map(|pkg| ["--msg-path".to_string(), dir.join(pkg).display().to_string()])
        .collect()
}

#[test]
fn zenoh_all_actions_records_an_rmw_zenoh_action_pair() {
    let test = "zenoh_all_actions_records_an_rmw_zenoh_action_pair";
    let Some(py) = zenoh_python(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (port, domain) = (free_port(), Domain::new());
    let (e, d) = (endpoint(port), domain.id().to_string());
    let mut router = spawn(&py, "router", &["--listen", &e]);
    router.expect_line("READY", LONG);
    let bag = tmp.path().join("bag");
    let log = tmp.path().join("record.err");
    let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
    rbag_env(&mut c, port, domain.id());
    c.args(["record", "--ros2", "--middleware", "zenoh", "--all-actions"])
        .args(definitions(&tmp.path().join("defs")))
        .arg("-o")
        .arg(&bag)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(&log).unwrap());
    let rec = Rec { child: c.spawn().expect("rbag record starts"), log };
    rec.wait_log(&format!("Joined Zenoh domain {}", domain.id()));
    let peer = |role: &str, extra: &[&str]| {
        let mut args = vec!["--connect", &e, "--domain", &d, "--await-readers", "--linger", "1", "--timeout", "120"];
        args.extend(extra);
        spawn(&py, role, &args)
    };
    let mut srv = peer("action-server", &["--goals", "1", "--cancels", "1"]);
    srv.expect_line("READY", LONG);
    for t in
        ["feedback", "status", "send_goal/_service_event", "get_result/_service_event", "cancel_goal/_service_event"]
    {
        rec.wait_log(&format!("Subscribed to topic '/fibonacci/_action/{t}'"));
    }
    let mut cli = peer("action-client", &["--goals", "1", "--order", "5", "--cancel"]);
    cli.expect_line("DONE", LONG);
    srv.expect_line("DONE 1", LONG);
    assert!(cli.output().contains("RESULT 4 [0, 1, 1, 2, 3, 5]"), "{}", cli.output());
    std::thread::sleep(Duration::from_millis(500));
    let log = rec.stop();
    cli.kill();
    srv.kill();
    router.kill();
    assert!(!log.contains("unknown to rbag"), "every action type has a definition:\n{log}");

    let out = Command::new(env!("CARGO_BIN_EXE_rbag")).args(["info", "--json"]).arg(&bag).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let actions = info["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{actions:?}");
    let a = &actions[0];
    assert_eq!((a["name"].as_str(), a["type"].as_str()), (Some("/fibonacci"), Some(FIB)));
    let counts = |list: &str, key: &str| -> Vec<(String, u64)> {
        a[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["name"].as_str().unwrap().into(), p[key].as_u64().unwrap()))
            .collect()
    };
    // One goal of order 5: 4 feedback messages, 3 status arrays; each service's call is 4
    // events (request sent and received, response sent and received).
    assert_eq!(counts("topics", "message_count"), [("feedback".into(), 4), ("status".into(), 3)]);
    assert_eq!(
        counts("services", "event_count"),
        [("send_goal".into(), 4), ("cancel_goal".into(), 4), ("get_result".into(), 4)]
    );
    // -v: one request and one response per service (the client's GID on both sides).
    let out = Command::new(env!("CARGO_BIN_EXE_rbag")).args(["info", "--json", "-v"]).arg(&bag).output().unwrap();
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    for s in info["actions"][0]["services"].as_array().unwrap() {
        assert_eq!((s["request_count"].as_u64(), s["response_count"].as_u64()), (Some(1), Some(1)), "{s}");
    }
    // rbag echo decodes the recorded events with the stored definitions.
    let out = Command::new(env!("CARGO_BIN_EXE_rbag"))
        .arg("echo")
        .arg(&bag)
        .arg("/fibonacci/_action/send_goal/_service_event")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("order: 5") && text.contains("accepted: true"), "{text}");
}
