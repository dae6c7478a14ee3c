//! ROS 2 actions as rosbag2 (Kilted and later) records them: `rbag record --ros2` with
//! `--all-actions`, `--actions`, `-a` and `--exclude-actions` against a real Cyclone DDS action
//! server and client (`cyclone_peer.py action-server` / `action-client`, an
//! `example_interfaces/action/Fibonacci` action with service introspection on both sides), then
//! `rbag info` (text, `-v`, `--json`) and `rbag echo` of the recorded bag, and the rosbags oracle
//! reading it.
//!
//! Every test has its own DDS domain and temp directory; the peers run with `--await-readers`,
//! so that a recorder that subscribed gets every sample (they wait for their readers to match
//! and to acknowledge), and nothing here depends on speed.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use rbag_testkit::ros2::{available, CyclonePeer, Domain};
use rbag_testkit::{oracle_python, ros2_dump};
use serde_json::Value;

#[path = "common/actions.rs"]
mod actions;
use actions::{definitions, ok_text, rbag, record, FIB, LONG};

/// The five topics of the action `name`, with their types (Fibonacci's).
fn action_topics(name: &str) -> Vec<(String, String)> {
    [
        ("feedback", format!("{FIB}_FeedbackMessage")),
        ("status", "action_msgs/msg/GoalStatusArray".into()),
        ("send_goal/_service_event", format!("{FIB}_SendGoal_Event")),
        ("cancel_goal/_service_event", "action_msgs/srv/CancelGoal_Event".into()),
        ("get_result/_service_event", format!("{FIB}_GetResult_Event")),
    ]
    .into_iter()
    .map(|(t, ty)| (format!("{name}/_action/{t}"), ty))
    .collect()
}

/// `rbag ARGS` on no domain (reading a bag).
fn rbag_read(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rbag")).args(args).output().expect("rbag runs")
}

fn server(py: &Path, domain: &Domain, action: &str, goals: usize, cancels: usize) -> CyclonePeer {
    let (goals, cancels) = (goals.to_string(), cancels.to_string());
    CyclonePeer::spawn(
        py,
        domain,
        "action-server",
        &[
            "--action",
            action,
            "--goals",
            &goals,
            "--cancels",
            &cancels,
            "--await-readers",
            "--linger",
            "60",
            "--timeout",
            "600",
        ],
    )
}

fn client(py: &Path, domain: &Domain, action: &str, goals: usize, order: i32) -> CyclonePeer {
    let (goals, order) = (goals.to_string(), order.to_string());
    CyclonePeer::spawn(
        py,
        domain,
        "action-client",
        &["--action", action, "--goals", &goals, "--order", &order, "--cancel", "--await-readers", "--linger", "0"],
    )
}

/// Message count per topic and the types, from rbag's JSON summary.
fn json_info(bag: &Path, verbose: bool) -> Value {
    let mut args = vec!["info", "--json", bag.to_str().unwrap()];
    if verbose {
        args.push("-v");
    }
    serde_json::from_str(&ok_text(&rbag_read(&args), "rbag info --json")).unwrap()
}

/// Records one action's goals (each one send_goal, get_result and cancel_goal call, and
/// `order - 1` feedback messages) with `args`, and checks the bag with rosbags and rbag.
#[test]
fn all_actions_records_an_actions_five_topics_and_info_shows_them() {
    let test = "all_actions_records_an_actions_five_topics_and_info_shows_them";
    let Some(py) = available(test) else { return };
    let Some(oracle) = oracle_python(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec!["--all-actions".into()];
    args.extend(definitions(&tmp.path().join("defs")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let rec = record(&domain, tmp.path(), "bag", &args);
    rec.wait_log("Recording to");
    let mut srv = server(&py, &domain, "/fibonacci", 2, 2);
    srv.expect_line("READY", LONG);
    for (topic, ty) in action_topics("/fibonacci") {
        rec.wait_log(&format!("Subscribed to topic '{topic}' ({ty})"));
    }
    let mut cli = client(&py, &domain, "/fibonacci", 2, 5);
    cli.expect_line("DONE", LONG);
    srv.expect_line("DONE 2", LONG);
    assert!(cli.output().contains("RESULT 4 [0, 1, 1, 2, 3, 5]"), "{}", cli.output());
    let log = rec.stop();
    cli.kill();
    srv.kill();
    assert!(!log.contains("unknown to rbag"), "every action type has a definition:\n{log}");
    let bag = tmp.path().join("bag");

    // Per goal: 4 events per service (request sent, received; response sent, received),
    // 4 feedback messages (order 5), 3 status arrays (accepted, executing, succeeded).
    let want: Vec<(String, String, u64)> = action_topics("/fibonacci")
        .into_iter()
        .map(|(t, ty)| {
            let n = if t.ends_with("/status") { 6 } else { 8 };
            (t, ty, n)
        })
        .collect();

    // rosbags reads the bag, and parses every definition it carries.
    let dump = ros2_dump(&oracle, "rosbags", &bag);
    assert!(dump["error"].is_null(), "rosbags: {}", dump["error"]);
    let topics = dump["topics"].as_object().unwrap();
    assert_eq!(topics.len(), 5, "{topics:?}");
    for (t, ty, n) in &want {
        assert_eq!(topics[t]["type"], *ty, "{t}");
        assert_eq!(topics[t]["message_count"], *n, "{t}");
    }

    // rbag info: the action apart, with its counts.
    let info = json_info(&bag, false);
    let actions = info["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{actions:?}");
    let a = &actions[0];
    assert_eq!(a["name"], "/fibonacci");
    assert_eq!(a["type"], FIB);
    assert_eq!(a["encoding"], "cdr");
    assert_eq!(a["message_count"], 38);
    let counts = |list: &str, key: &str| -> Vec<(String, u64)> {
        a[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["name"].as_str().unwrap().into(), p[key].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(counts("topics", "message_count"), [("feedback".into(), 8), ("status".into(), 6)]);
    assert_eq!(
        counts("services", "event_count"),
        [("send_goal".into(), 8), ("cancel_goal".into(), 8), ("get_result".into(), 8)]
    );
    assert!(a["services"][0].get("request_count").is_none(), "requests are counted with -v only");
    // -v: two goals, so two requests and two responses per service (a request sent and the
    // same request received are one request).
    let info = json_info(&bag, true);
    for s in info["actions"][0]["services"].as_array().unwrap() {
        assert_eq!((s["request_count"].as_u64(), s["response_count"].as_u64()), (Some(2), Some(2)), "{s}");
    }

    let text = ok_text(&rbag_read(&["info", bag.to_str().unwrap()]), "rbag info");
    let action_line = text.lines().find(|l| l.starts_with("actions:")).unwrap_or_else(|| panic!("{text}"));
    assert!(action_line.contains("/fibonacci") && action_line.contains(FIB), "{text}");
    assert!(action_line.contains("(2 topics, 3 services)"), "{text}");
    assert!(!text.contains("topics:"), "an action's topics are not listed as topics:\n{text}");
    assert!(!text.contains("services:"), "nor its services as services:\n{text}");
    for (part, n, unit) in [
        ("topic   feedback", 8, "msgs"),
        ("topic   status", 6, "msgs"),
        ("service send_goal", 8, "events"),
        ("service cancel_goal", 8, "events"),
        ("service get_result", 8, "events"),
    ] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(part) && l.trim_end().ends_with(&format!("{n} {unit}"))),
            "{part}: {n} {unit}:\n{text}"
        );
    }
    let verbose = ok_text(&rbag_read(&["info", "-v", bag.to_str().unwrap()]), "rbag info -v");
    assert_eq!(verbose.matches("(requests: 2, responses: 2)").count(), 3, "{verbose}");

    // rbag echo decodes the action's topics with the definitions the recorder stored.
    let echo =
        |topic: &str| ok_text(&rbag_read(&["echo", bag.to_str().unwrap(), topic]), &format!("rbag echo {topic}"));
    let feedback = echo("/fibonacci/_action/feedback");
    assert!(feedback.contains("goal_id") && feedback.contains("sequence"), "{feedback}");
    let send_goal = echo("/fibonacci/_action/send_goal/_service_event");
    assert!(
        send_goal.contains("event_type") && send_goal.contains("order: 5") && send_goal.contains("accepted: true"),
        "{send_goal}"
    );
    let get_result = echo("/fibonacci/_action/get_result/_service_event");
    assert!(get_result.contains("status: 4"), "{get_result}");
    let status = echo("/fibonacci/_action/status");
    assert!(status.contains("status_list"), "{status}");
}

/// `--actions`, `-a` (with and without `--exclude-actions`), `-e`, `-x` and `--all-topics` choose
/// among two actions' topics and a plain topic; `--exclude-actions` alone is a usage error.
#[test]
fn action_flags_choose_actions() {
    let test = "action_flags_choose_actions";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    // Servers' writers are all five topics of their action; nobody needs to send goals.
    let mut peers = vec![server(&py, &domain, "/fibonacci", 1, 0), server(&py, &domain, "/other", 1, 0)];
    peers.push(CyclonePeer::spawn(
        &py,
        &domain,
        "pub",
        &["--topic", "rt/chatter", "--type", "string", "--count", "1", "--no-wait", "--linger", "60", "--no-hex"],
    ));
    for p in &peers {
        p.expect_line("READY", LONG);
    }
    let names = |action: &str| action_topics(action).into_iter().map(|(t, _)| t).collect::<Vec<_>>();
    let (fib, other) = (names("/fibonacci"), names("/other"));
    let chatter = vec!["/chatter".to_string()];
    let cases: Vec<(Vec<&str>, Vec<String>)> = vec![
        (vec!["--actions", "/fibonacci"], fib.clone()),
        (vec!["--actions", "fibonacci", "--all-topics"], [fib.clone(), chatter.clone()].concat()),
        (vec!["--all-actions"], [fib.clone(), other.clone()].concat()),
        (vec!["-a"], [fib.clone(), other.clone(), chatter.clone()].concat()),
        (vec!["-a", "--exclude-actions", "/other"], [fib.clone(), chatter.clone()].concat()),
        (vec!["--all-actions", "-x", "/fib.*"], other.clone()),
        (vec!["-e", "/oth.*"], other.clone()),
        (vec!["--all-topics"], chatter.clone()),
        (vec!["--all-actions", "--actions", "/other"], [fib.clone(), other.clone()].concat()),
    ];
    for (k, (args, want)) in cases.into_iter().enumerate() {
        let rec = record(&domain, tmp.path(), &format!("b{k}"), &args);
        rec.wait_log("Recording to");
        for t in &want {
            rec.wait_log(&format!("Subscribed to topic '{t}'"));
        }
        // Whatever else it would take, it takes at once: the graph is the same as for the
        // subscriptions above.
        std::thread::sleep(Duration::from_millis(1000));
        let got = rec.subscribed();
        let log = rec.stop();
        let want: BTreeSet<String> = want.into_iter().collect();
        assert_eq!(got, want, "{args:?}:\n{log}");
        if args.contains(&"--actions") && args.contains(&"--all-actions") {
            assert!(log.contains("--actions is ignored"), "{log}");
        }
    }
    // --exclude-actions needs something that takes actions wholesale.
    let out = rbag(&domain)
        .args(["record", "--ros2", "--topics", "/chatter", "--exclude-actions", "/other", "-o"])
        .arg(tmp.path().join("never"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--exclude-actions needs"));
    assert!(!tmp.path().join("never").exists());
    for p in &mut peers {
        p.kill();
    }
}
