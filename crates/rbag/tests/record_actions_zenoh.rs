//! ROS 2 actions recorded over Zenoh, as rosbag2 (Kilted and later) on rmw_zenoh records them:
//! `rbag record --ros2 --middleware zenoh --all-actions` against `zenoh_peer.py action-server`
//! and `action-client` (an `example_interfaces/action/Fibonacci` action as rmw_zenoh and
//! rclcpp_action run it, with service introspection on both sides), then `rbag info` of the bag.
//!
//! The test has its own router port, domain id and temp directory; the peers wait for a
//! matching subscriber before each publication (`--await-readers`), so nothing depends on speed.

use std::process::Command;
use std::time::Duration;

use rbag_testkit::ros2::Domain;
use rbag_testkit::zenoh::{endpoint, free_port, spawn, zenoh_python};
use serde_json::Value;

#[path = "common/actions.rs"]
mod actions;
use actions::{definitions, record_zenoh, FIB, LONG};

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
    let mut args = vec!["--middleware".to_string(), "zenoh".into(), "--all-actions".into()];
    args.extend(definitions(&tmp.path().join("defs")));
    let rec = record_zenoh(port, &domain, tmp.path(), "bag", &args);
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
