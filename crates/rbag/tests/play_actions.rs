//! ROS 2 actions on playback, as rosbag2 (Kilted and later) plays them: a bag recorded from a
//! real Cyclone DDS action pair (`cyclone_peer.py action-server` / `action-client`, an
//! `example_interfaces/action/Fibonacci` action with service introspection on both sides), then
//! `rbag play --ros2`:
//!
//! - `--send-actions-as-client` against a live action server and no client: the server gets the
//!   recorded goal with a fresh goal id, runs it, answers rbag's get_result and the recorded
//!   cancel (mapped to the new id); rbag publishes neither feedback nor status;
//! - plain replay with `--actions`, `--exclude-actions` and `-e` on an action's name: which
//!   topics rbag advertises, seen by a recorder.
//!
//! Every test has its own DDS domains and temp directory; nothing here depends on speed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rbag_testkit::ros2::{available, CyclonePeer, Domain};
use serde_json::Value;

#[path = "common/actions.rs"]
mod actions;
use actions::{definitions, ok_text, rbag, record, record_zenoh, LONG};

/// The five topics of the action `name`.
fn action_topics(name: &str) -> BTreeSet<String> {
    ["feedback", "status", "send_goal/_service_event", "cancel_goal/_service_event", "get_result/_service_event"]
        .iter()
        .map(|t| format!("{name}/_action/{t}"))
        .collect()
}

/// Records one goal of order 5 of `/fibonacci` (send_goal, get_result, then a cancel of the
/// finished goal), with a `/chatter` publisher beside it; returns the bag and the goal id the
/// client sent (hex).
fn record_goal(py: &Path, dir: &Path) -> (PathBuf, String) {
    let domain = Domain::new();
    let mut args = vec!["--all-actions".to_string(), "--all-topics".to_string()];
    args.extend(definitions(&dir.join("defs")));
    let rec = record(&domain, dir, "bag", &args);
    rec.wait_log("Recording to");
    let mut srv = CyclonePeer::spawn(
        py,
        &domain,
        "action-server",
        &["--goals", "1", "--cancels", "1", "--await-readers", "--linger", "60", "--timeout", "120"],
    );
    srv.expect_line("READY", LONG);
    let mut chatter = CyclonePeer::spawn(
        py,
        &domain,
        "pub",
        &["--topic", "rt/chatter", "--type", "string", "--count", "3", "--linger", "60", "--no-hex"],
    );
    for t in action_topics("/fibonacci").iter().chain(["/chatter".to_string()].iter()) {
        rec.wait_log(&format!("Subscribed to topic '{t}'"));
    }
    chatter.expect_line("DONE", LONG);
    let mut cli = CyclonePeer::spawn(
        py,
        &domain,
        "action-client",
        &["--goals", "1", "--order", "5", "--cancel", "--await-readers", "--linger", "0"],
    );
    cli.expect_line("DONE", LONG);
    srv.expect_line("DONE 1", LONG);
    let accepted = cli.expect_line("ACCEPTED ", LONG);
    let uuid = accepted.trim().strip_prefix("ACCEPTED ").unwrap().to_string();
    rec.stop();
    for p in [&mut cli, &mut srv, &mut chatter] {
        p.kill();
    }
    (dir.join("bag"), uuid)
}

/// Message count per topic (action topics included), from `rbag info --json`.
fn counts(bag: &Path) -> Vec<(String, u64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_rbag")).args(["info", "--json"]).arg(bag).output().unwrap();
    let info: Value = serde_json::from_str(&ok_text(&out, "rbag info --json")).unwrap();
    let mut all = Vec::new();
    for t in info["topics"].as_array().into_iter().flatten() {
        all.push((t["name"].as_str().unwrap().to_string(), t["message_count"].as_u64().unwrap()));
    }
    all.sort();
    all
}

/// The action's topics and how many samples a goal of order 5 puts on each when only the
/// server publishes: 4 feedback messages, 3 status arrays, and per service the server's
/// REQUEST_RECEIVED and RESPONSE_SENT events.
fn server_only_counts() -> Vec<(String, u64)> {
    let mut want: Vec<(String, u64)> = action_topics("/fibonacci")
        .into_iter()
        .map(|t| {
            let n = if t.ends_with("/feedback") {
                4
            } else if t.ends_with("/status") {
                3
            } else {
                2
            };
            (t, n)
        })
        .collect();
    want.sort();
    want
}

/// Checks a server's output after rbag played the recorded goal `recorded` as a client (its
/// stderr `err`): one goal with a fresh id, its result asked for, the cancel mapped.
fn check_server_run(srv: &mut CyclonePeer, recorded: &str, err: &str) {
    let goal = srv.expect_line("GOAL ", LONG);
    let new_id = goal.split_whitespace().nth(1).unwrap().to_string();
    assert_eq!(goal.split_whitespace().nth(2), Some("5"), "the recorded goal's order: {goal}");
    assert_ne!(new_id, recorded, "a fresh goal id");
    assert!(err.contains(&format!("goal {recorded} sent as goal {new_id}")), "{err}");
    // rbag asked for the result, and the recorded cancel went for the new id.
    srv.expect_line(&format!("RESULT {new_id} [0, 1, 1, 2, 3, 5]"), LONG);
    srv.expect_line(&format!("CANCEL {new_id} 3"), LONG);
    srv.expect_line("DONE 1", LONG);
    assert_eq!(srv.wait_exit(LONG).and_then(|s| s.code()), Some(0), "{}", srv.output());
    assert_eq!(srv.output().matches("GOAL ").count(), 1, "one goal: {}", srv.output());
    assert!(!srv.output().contains("NO_ATTACHMENT"), "{}", srv.output());
    assert!(!err.contains("warning"), "{err}");
}

/// Plays `bag` with `--send-actions-as-client` and `extra` into a fresh domain holding a Cyclone
/// action server (no client) and a recorder of the action's topics; checks the server's run and
/// that only the server published on the action's topics.
fn play_as_client_on_dds(py: &Path, dir: &Path, bag: &Path, recorded: &str, name: &str, extra: &[&str]) {
    let domain = Domain::new();
    let mut args = vec!["--all-actions".to_string()];
    args.extend(definitions(&dir.join("defs")));
    let watch = record(&domain, dir, name, &args);
    watch.wait_log("Recording to");
    let mut srv = CyclonePeer::spawn(
        py,
        &domain,
        "action-server",
        &["--goals", "1", "--cancels", "1", "--linger", "0", "--timeout", "120"],
    );
    srv.expect_line("READY", LONG);
    for t in action_topics("/fibonacci") {
        watch.wait_log(&format!("Subscribed to topic '{t}'"));
    }
    let out = rbag(&domain)
        .args(["play", "--ros2", "--send-actions-as-client", "--disable-keyboard-controls"])
        .arg(bag)
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    ok_text(&out, &format!("rbag play --ros2 --send-actions-as-client {extra:?}"));
    check_server_run(&mut srv, recorded, &err);
    std::thread::sleep(Duration::from_millis(500));
    watch.stop();
    assert_eq!(counts(&dir.join(name)), server_only_counts(), "{extra:?}");
}

#[test]
fn send_actions_as_client_runs_the_recorded_goal_on_a_live_server_with_a_new_goal_id() {
    let test = "send_actions_as_client_runs_the_recorded_goal_on_a_live_server_with_a_new_goal_id";
    let Some(py) = available(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (bag, recorded) = record_goal(&py, tmp.path());
    // The requests the server received (default), then those the client sent.
    play_as_client_on_dds(&py, tmp.path(), &bag, &recorded, "watch1", &[]);
    let client = ["--service-requests-source", "client_introspection"];
    play_as_client_on_dds(&py, tmp.path(), &bag, &recorded, "watch2", &client);
}

/// Which topics `rbag play --ros2 <bag> ARGS` advertises, as a recorder of everything sees them.
fn played_topics(bag: &Path, dir: &Path, name: &str, args: &[&str]) -> BTreeSet<String> {
    let domain = Domain::new();
    let watch = record(&domain, dir, name, &["-a".to_string()]);
    watch.wait_log("Recording to");
    let out = rbag(&domain)
        .args(["play", "--ros2", "--disable-keyboard-controls", "-d", "3"])
        .arg(bag)
        .args(args)
        .output()
        .unwrap();
    ok_text(&out, &format!("rbag play --ros2 {args:?}"));
    let got = watch.subscribed();
    watch.stop();
    got
}

#[test]
fn actions_and_exclude_actions_choose_what_plain_replay_publishes() {
    let test = "actions_and_exclude_actions_choose_what_plain_replay_publishes";
    let Some(py) = available(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (bag, _) = record_goal(&py, tmp.path());
    let fib = action_topics("/fibonacci");
    let chatter: BTreeSet<String> = ["/chatter".to_string()].into();
    let all: BTreeSet<String> = fib.union(&chatter).cloned().collect();
    let cases: Vec<(Vec<&str>, &BTreeSet<String>)> = vec![
        (vec![], &all),
        (vec!["--actions", "/fibonacci"], &fib),
        (vec!["--actions", "fibonacci", "--topics", "/chatter"], &all),
        (vec!["--exclude-actions", "/fibonacci"], &chatter),
        // -e and -x see the action's name: no topic name matches `^/fibonacci$`.
        (vec!["-e", "^/fibonacci$"], &fib),
        (vec!["-x", "^/fibonacci$"], &chatter),
    ];
    for (k, (args, want)) in cases.into_iter().enumerate() {
        let got = played_topics(&bag, tmp.path(), &format!("w{k}"), &args);
        assert_eq!(&got, want, "{args:?}");
    }
    // An action the bag does not hold is a usage error.
    let domain = Domain::new();
    let out = rbag(&domain).args(["play", "--ros2"]).arg(&bag).args(["--actions", "/nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--actions /nope"));
}

/// The same bag played over Zenoh (`--middleware zenoh`) against `zenoh_peer.py action-server`,
/// an rmw_zenoh-style server: rbag's queriers reach its queryables.
#[test]
fn send_actions_as_client_over_zenoh_runs_the_goal_on_an_rmw_zenoh_server() {
    use rbag_testkit::zenoh::{endpoint, free_port, rbag_env, spawn, zenoh_python};
    let test = "send_actions_as_client_over_zenoh_runs_the_goal_on_an_rmw_zenoh_server";
    let Some(py) = available(test) else { return };
    let Some(zpy) = zenoh_python(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (bag, recorded) = record_goal(&py, tmp.path());

    let (port, domain) = (free_port(), Domain::new());
    let (e, d) = (endpoint(port), domain.id().to_string());
    let mut router = spawn(&zpy, "router", &["--listen", &e]);
    router.expect_line("READY", LONG);
    let mut srv = spawn(
        &zpy,
        "action-server",
        &["--connect", &e, "--domain", &d, "--goals", "1", "--cancels", "1", "--linger", "0", "--timeout", "120"],
    );
    srv.expect_line("READY", LONG);
    // A recorder of the action's topics, over Zenoh too.
    let mut args = vec!["--middleware".to_string(), "zenoh".to_string(), "--all-actions".to_string()];
    args.extend(definitions(&tmp.path().join("defs")));
    let watch = record_zenoh(port, &domain, tmp.path(), "zwatch", &args);
    for t in action_topics("/fibonacci") {
        watch.wait_log(&format!("Subscribed to topic '{t}'"));
    }
    let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
    rbag_env(&mut c, port, domain.id());
    let out = c
        .args(["play", "--ros2", "--middleware", "zenoh", "--send-actions-as-client", "--disable-keyboard-controls"])
        .arg(&bag)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    ok_text(&out, "rbag play --ros2 --middleware zenoh --send-actions-as-client");
    check_server_run(&mut srv, &recorded, &err);
    // Only the server published on the action's topics.
    std::thread::sleep(Duration::from_millis(500));
    watch.stop();
    assert_eq!(counts(&tmp.path().join("zwatch")), server_only_counts());
    router.kill();
}
