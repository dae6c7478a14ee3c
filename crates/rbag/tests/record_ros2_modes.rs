//! `rbag record --ros2` modes that hold messages back: `--snapshot-mode` (written only on a
//! trigger) and `--start-paused` (nothing written until space on a terminal). Real Cyclone DDS
//! publishers on loopback, each test on its own DDS domain.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rbag_testkit::ros2::{available, call_service, CyclonePeer, Domain};

mod common;

#[path = "common/recorder.rs"]
mod recorder;
use recorder::{rbag_cmd, record, Rec, LONG};

fn count(bag: &Path, topic: &str) -> u64 {
    let out = Command::new(env!("CARGO_BIN_EXE_rbag")).args(["info", "--json"]).arg(bag).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == topic)
        .map_or(0, |t| t["message_count"].as_u64().unwrap())
}

/// Publishes `hello 0` … `hello <n-1>` once a reader (rbag) matched.
fn publish(py: &Path, domain: &Domain, n: usize) -> CyclonePeer {
    let mut p = CyclonePeer::spawn(
        py,
        domain,
        "pub",
        &[
            "--topic",
            "rt/chatter",
            "--type",
            "string",
            "--count",
            &n.to_string(),
            "--rate",
            "200",
            "--linger",
            "0.5",
            "--no-hex",
        ],
    );
    p.expect_line("DONE", LONG);
    p.wait_exit(LONG);
    p
}

#[test]
fn snapshot_mode_writes_the_cache_only_when_triggered() {
    let test = "snapshot_mode_writes_the_cache_only_when_triggered";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("snap");
    let rec = record(
        &domain,
        tmp.path(),
        &["-a", "-o", bag.to_str().unwrap(), "--snapshot-mode", "--max-cache-size", "1MiB"],
    );
    rec.wait_log("Recording to");
    publish(&py, &domain, 30);
    rec.signal("USR1");
    rec.wait_log("Snapshot");
    // Published after the snapshot and never triggered: not in the bag.
    publish(&py, &domain, 30);
    let log = rec.stop();
    assert!(log.contains("1 snapshot(s)"), "{log}");
    assert_eq!(count(&bag, "/chatter"), 30, "{log}");
}

#[test]
fn snapshot_cache_keeps_only_the_newest_bytes() {
    let test = "snapshot_cache_keeps_only_the_newest_bytes";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("snap");
    // `hello 10` … `hello 39` are 17 bytes, 20 with Cyclone's padding: 200 bytes of cache keep
    // the last 10.
    let rec =
        record(&domain, tmp.path(), &["-a", "-o", bag.to_str().unwrap(), "--snapshot-mode", "--max-cache-size", "200"]);
    rec.wait_log("Recording to");
    publish(&py, &domain, 40);
    rec.signal("USR1");
    rec.wait_log("Snapshot");
    let log = rec.stop();
    assert_eq!(count(&bag, "/chatter"), 10, "{log}");
    let out = Command::new(env!("CARGO_BIN_EXE_rbag")).args(["echo"]).arg(&bag).arg("/chatter").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("hello 30") && text.contains("hello 39") && !text.contains("hello 29'"), "{text}");
}

#[test]
fn start_paused_records_nothing_until_space_on_a_terminal() {
    let test = "start_paused_records_nothing_until_space_on_a_terminal";
    let Some(py) = available(test) else { return };
    if !Path::new("/usr/bin/script").exists() {
        rbag_testkit::skip(test, "util-linux's script (a terminal for the keys) is not installed");
        return;
    }
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("paused");
    // script(1) runs rbag on a pseudo-terminal and forwards what we write to it as keys.
    let log = tmp.path().join("rbag.log");
    // `exec`: rbag is script's own child, so it can be told apart from script (whose command
    // line holds the same words) and signalled itself.
    let inner = format!("exec {} record --ros2 -a --start-paused -o {}", env!("CARGO_BIN_EXE_rbag"), bag.display());
    let mut c = rbag_cmd("/usr/bin/script", &domain);
    c.args(["-qfec", &inner, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null());
    let mut rec = Rec { child: c.spawn().unwrap(), log };
    let mut keys = rec.child.stdin.take().unwrap();
    rec.wait_log("press space");
    publish(&py, &domain, 20);
    keys.write_all(b" ").unwrap();
    keys.flush().unwrap();
    rec.wait_log("Recording resumed");
    publish(&py, &domain, 25);
    // Stop rbag itself, as a user's Ctrl-C would: script would answer a signal by closing the
    // terminal under rbag.
    let pid = Command::new("pgrep").args(["-P", &rec.child.id().to_string()]).output().unwrap();
    let pid = String::from_utf8_lossy(&pid.stdout)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
        .expect("rbag's pid");
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let log = rec.stop_on_its_own();
    assert!(log.contains("Recording stopped"), "{log}");
    assert_eq!(count(&bag, "/chatter"), 25, "only what was published after resuming:\n{log}");
}

#[test]
fn control_services_pause_resume_split_and_snapshot_as_ros2_service_call_does() {
    let test = "control_services_pause_resume_split_and_snapshot_as_ros2_service_call_does";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    // --node-name renames the node the services live under.
    let call = |name: &str, srv: &str| call_service(&py, &domain, &format!("/my_recorder/{name}"), srv, "0");

    // --start-paused with no terminal: only the resume service starts the recording.
    let bag = tmp.path().join("paused");
    let rec = record(
        &domain,
        tmp.path(),
        &["-a", "--start-paused", "--node-name", "my_recorder", "-o", bag.to_str().unwrap()],
    );
    rec.wait_log("Recording is paused");
    assert_eq!(call("is_paused", "IsPaused")["paused"], true);
    publish(&py, &domain, 10);
    call("resume", "Resume");
    rec.wait_log("Recording resumed");
    assert_eq!(call("is_paused", "IsPaused")["paused"], false);
    publish(&py, &domain, 15);
    // Not in snapshot mode: snapshot fails, as in rosbag2.
    assert_eq!(call("snapshot", "Snapshot")["success"], false);
    // split_bagfile: what follows goes to a second file.
    call("split_bagfile", "SplitBagfile");
    rec.wait_log("Splitting");
    publish(&py, &domain, 6);
    call("pause", "Pause");
    rec.wait_log("Recording paused");
    publish(&py, &domain, 5);
    let log = rec.stop();
    assert_eq!(count(&bag, "/chatter"), 21, "only what was published between resume and pause:\n{log}");
    let meta = rbag_storage::rosbag2::metadata::BagMetadata::read(&bag.join("metadata.yaml")).unwrap();
    assert_eq!(meta.files.iter().map(|f| f.message_count).collect::<Vec<_>>(), [15, 6], "{log}");

    // Snapshot mode, rosbag2's node name: the service writes the cache.
    let call = |name: &str, srv: &str| call_service(&py, &domain, &format!("/rosbag2_recorder/{name}"), srv, "0");
    let dir = tmp.path().join("snap-run");
    std::fs::create_dir_all(&dir).unwrap();
    let bag = dir.join("snap");
    let rec =
        record(&domain, &dir, &["-a", "-o", bag.to_str().unwrap(), "--snapshot-mode", "--max-cache-size", "1MiB"]);
    rec.wait_log("Recording to");
    publish(&py, &domain, 12);
    assert_eq!(call("snapshot", "Snapshot")["success"], true);
    rec.wait_log("Snapshot");
    let log = rec.stop();
    assert_eq!(count(&bag, "/chatter"), 12, "{log}");
}

#[test]
fn ignore_leaf_topics_waits_for_a_subscriber() {
    let test = "ignore_leaf_topics_waits_for_a_subscriber";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("leaves");
    let rec = record(&domain, tmp.path(), &["-a", "--ignore-leaf-topics", "-o", bag.to_str().unwrap()]);
    rec.wait_log("Recording to");
    // Transient-local publishers keep their samples for rbag whenever it subscribes.
    let publisher = |topic: &str, n: &str| {
        let p = CyclonePeer::spawn(
            &py,
            &domain,
            "pub",
            &[
                "--topic",
                topic,
                "--type",
                "string",
                "--count",
                n,
                "--transient-local",
                "--depth",
                "50",
                "--no-wait",
                "--linger",
                "30",
                "--no-hex",
            ],
        );
        p.expect_line("DONE", LONG);
        p
    };
    let _leaf = publisher("rt/leaf", "5");
    let _watched = publisher("rt/watched", "7");
    // It stays subscribed (it waits for more than it gets).
    let _sub = CyclonePeer::spawn(
        &py,
        &domain,
        "sub",
        &[
            "--topic",
            "rt/watched",
            "--type",
            "string",
            "--count",
            "1000",
            "--timeout",
            "60",
            "--transient-local",
            "--no-hex",
        ],
    );
    rec.wait_log("Subscribed to topic '/watched'");
    // Long enough for several discovery polls to see /leaf, and for /watched's history to arrive.
    std::thread::sleep(Duration::from_secs(2));
    let log = rec.stop();
    assert!(!log.contains("'/leaf'"), "a topic nobody subscribes to was recorded:\n{log}");
    assert_eq!(count(&bag, "/watched"), 7, "{log}");
    assert_eq!(count(&bag, "/leaf"), 0, "{log}");
}

#[test]
fn a_vanished_terminal_stops_the_recording_with_a_valid_bag() {
    let test = "a_vanished_terminal_stops_the_recording_with_a_valid_bag";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("hup");
    // stderr is a pipe nobody reads any more: every status line fails with EPIPE, as it fails
    // with EIO on a closed terminal. Neither may cost the recording.
    let mut c = rbag_cmd(env!("CARGO_BIN_EXE_rbag"), &domain);
    c.args(["record", "--ros2", "-a", "-o", bag.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    drop(child.stderr.take());
    publish(&py, &domain, 15);
    // The terminal's hangup ends the recording like Ctrl-C, with the bag closed and indexed.
    assert!(Command::new("kill").args(["-HUP", &child.id().to_string()]).status().unwrap().success());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < LONG, "rbag did not stop on SIGHUP");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "rbag exited {status}");
    assert!(bag.join("metadata.yaml").exists());
    assert_eq!(count(&bag, "/chatter"), 15);
}

/// Runs `rbag record --ros2 ARGS` to completion (it must fail fast) and returns its exit code
/// and stderr.
fn record_fails(domain: &Domain, args: &[&str]) -> (i32, String) {
    let out = rbag_cmd(env!("CARGO_BIN_EXE_rbag"), domain).args(["record", "--ros2"]).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked at"), "{err}");
    (out.status.code().unwrap_or(-1), err)
}

#[test]
fn no_discovery_takes_only_the_topics_present_at_start() {
    let test = "no_discovery_takes_only_the_topics_present_at_start";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("nd");
    // /early publishes (and waits for a reader) before rbag starts; /late only after 3 s.
    let early = CyclonePeer::spawn(
        &py,
        &domain,
        "pub",
        &[
            "--topic",
            "rt/early",
            "--type",
            "string",
            "--count",
            "5",
            "--rate",
            "2",
            "--no-hex",
            "--match-timeout",
            "30",
        ],
    );
    early.expect_line("READY", LONG);
    let rec = record(&domain, tmp.path(), &["-a", "--no-discovery", "-p", "50", "-o", bag.to_str().unwrap()]);
    rec.wait_log("Subscribed to topic '/early'");
    std::thread::sleep(Duration::from_secs(2));
    let mut late = CyclonePeer::spawn(
        &py,
        &domain,
        "pub",
        &[
            "--topic",
            "rt/late",
            "--type",
            "string",
            "--count",
            "5",
            "--rate",
            "50",
            "--no-wait",
            "--start-delay",
            "1",
            "--no-hex",
        ],
    );
    late.expect_line("DONE", LONG);
    late.wait_exit(LONG);
    early.expect_line("DONE", LONG);
    let log = rec.stop();
    assert!(!log.contains("'/late'"), "--no-discovery subscribed to a topic that appeared later:\n{log}");
    assert_eq!(count(&bag, "/early"), 5, "{log}");
    assert_eq!(count(&bag, "/late"), 0, "{log}");
}

#[test]
fn include_unpublished_topics_records_a_topic_with_only_subscribers() {
    let test = "include_unpublished_topics_records_a_topic_with_only_subscribers";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let sub = CyclonePeer::spawn(
        &py,
        &domain,
        "sub",
        &["--topic", "rt/wanted", "--type", "imu", "--count", "1", "--timeout", "30", "--no-hex"],
    );
    sub.expect_line("READY", LONG);
    for (flag, subscribed) in [(None, false), (Some("--include-unpublished-topics"), true)] {
        let bag = tmp.path().join(format!("u{subscribed}"));
        let mut args = vec!["-a", "-o", bag.to_str().unwrap()];
        args.extend(flag);
        let rec = record(&domain, tmp.path(), &args);
        rec.wait_log("Recording to");
        if subscribed {
            rec.wait_log("Subscribed to topic '/wanted'");
        } else {
            // Time for discovery to find the subscriber, which must not be recorded.
            std::thread::sleep(Duration::from_secs(2));
        }
        let log = rec.stop();
        assert_eq!(log.contains("Subscribed to topic '/wanted' (sensor_msgs/msg/Imu)"), subscribed, "{flag:?}:\n{log}");
        let meta = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
        assert_eq!(meta.contains("name: /wanted"), subscribed, "{flag:?}:\n{meta}");
    }
}

#[test]
fn a_full_cache_drops_counts_and_exits_3() {
    let test = "a_full_cache_drops_counts_and_exits_3";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("drops");
    // Every 2 KiB sample alone is over a 1000-byte cache: each one is dropped and counted.
    let rec =
        record(&domain, tmp.path(), &["--topics", "/blob", "-o", bag.to_str().unwrap(), "--max-cache-size", "1000"]);
    rec.wait_log("Recording to");
    let mut p = CyclonePeer::spawn(
        &py,
        &domain,
        "pub",
        &["--topic", "rt/blob", "--type", "blob", "--size", "2048", "--count", "10", "--rate", "100", "--no-hex"],
    );
    p.expect_line("DONE", LONG);
    p.wait_exit(LONG);
    let mut rec = rec;
    rec.signal("INT");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = rec.child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < LONG, "rbag did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    let log = rec.log();
    assert_eq!(status.code(), Some(3), "{log}");
    assert!(log.contains("/blob: 10 message(s) dropped"), "{log}");
    assert!(log.contains("warning: cache full"), "{log}");
    assert_eq!(count(&bag, "/blob"), 0);
}

#[test]
fn usage_errors_exit_2_before_joining_the_graph() {
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let out = out.to_str().unwrap();
    for (args, says) in [
        (vec!["-o", out], "name topics"),
        (vec!["-a", "-o", out, "-f", "json"], "serialization format"),
        (vec!["-a", "-o", out, "-s", "rosbag"], "unknown storage"),
        (vec!["-a", "-o", out, "--compression-format", "lz4"], "zstd"),
        (vec!["-a", "-o", out, "-e", "("], "regular expression"),
        (vec!["-a", "-o", out, "--custom-data", "novalue"], "KEY=VALUE"),
        (vec!["-a", "-o", out, "--snapshot-mode", "--max-cache-size", "0"], "must not be 0"),
    ] {
        let (code, err) = record_fails(&domain, &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(!Path::new(out).exists(), "nothing was created");
}

/// Services are recorded through their `/_service_event` topics: `--all-services`,
/// `--services` and `--exclude-services` choose them, `--all-topics` does not take them.
#[test]
fn service_flags_choose_service_event_topics() {
    let test = "service_flags_choose_service_event_topics";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    // Event topics of two services and one plain topic (the payload type does not matter to
    // the selection).
    let mut peers: Vec<CyclonePeer> = ["rt/add/_service_event", "rt/sub/_service_event", "rt/chatter"]
        .iter()
        .map(|t| {
            CyclonePeer::spawn(
                &py,
                &domain,
                "pub",
                &["--topic", t, "--type", "string", "--count", "1", "--no-wait", "--linger", "60", "--no-hex"],
            )
        })
        .collect();
    for p in &peers {
        p.expect_line("DONE", LONG);
    }
    for (args, want) in [
        (vec!["--all-services"], vec!["/add/_service_event", "/sub/_service_event"]),
        (vec!["--all-topics"], vec!["/chatter"]),
        (vec!["--services", "/add"], vec!["/add/_service_event"]),
        (vec!["-a", "--exclude-services", "sub"], vec!["/add/_service_event", "/chatter"]),
    ] {
        let bag = tmp.path().join(format!("b{}", args.join("_").replace('/', "")));
        let mut full = args.clone();
        full.extend(["-o", bag.to_str().unwrap()]);
        let rec = record(&domain, tmp.path(), &full);
        rec.wait_log("Recording to");
        for t in &want {
            rec.wait_log(&format!("Subscribed to topic '{t}'"));
        }
        // Time for a topic that must not be recorded to show up.
        std::thread::sleep(Duration::from_millis(1000));
        let log = rec.stop();
        let mut got: Vec<String> = log
            .lines()
            .filter_map(|l| l.strip_prefix("Subscribed to topic '"))
            .filter_map(|l| l.split('\'').next())
            .map(str::to_string)
            .collect();
        got.sort();
        assert_eq!(got, want, "{args:?}:\n{log}");
    }
    for p in &mut peers {
        p.kill();
    }
}

/// A type rbag does not know is recorded raw; its definition can be given when reading
/// (`echo --msg-path`) or when recording (`record --msg-path`, then stored in the bag).
#[test]
fn unknown_types_decode_once_their_definition_is_given() {
    let test = "unknown_types_decode_once_their_definition_is_given";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let defs = tmp.path().join("defs");
    std::fs::create_dir_all(&defs).unwrap();
    std::fs::write(defs.join("Mystery.msg"), "int32 a\nstring b\n").unwrap();
    let msg_path = format!("rbag_test={}", defs.display());
    let echo = |bag: &Path, extra: &[&str]| {
        let out =
            Command::new(env!("CARGO_BIN_EXE_rbag")).arg("echo").arg(bag).arg("/mystery").args(extra).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (k, with_defs) in [false, true].into_iter().enumerate() {
        let bag = tmp.path().join(format!("m{k}"));
        let mut args = vec!["--topics", "/mystery", "-o", bag.to_str().unwrap()];
        if with_defs {
            args.extend(["--msg-path", msg_path.as_str()]);
        }
        let rec = record(&domain, tmp.path(), &args);
        rec.wait_log("Recording to");
        let mut p = CyclonePeer::spawn(
            &py,
            &domain,
            "pub",
            &["--topic", "rt/mystery", "--type", "unknown", "--count", "3", "--rate", "50", "--no-hex"],
        );
        p.expect_line("DONE", LONG);
        p.wait_exit(LONG);
        let log = rec.stop();
        assert_eq!(log.contains("unknown to rbag"), !with_defs, "{log}");
        assert_eq!(count(&bag, "/mystery"), 3, "{log}");
        let (code, out, err) = echo(&bag, &[]);
        if with_defs {
            assert_eq!(code, Some(0), "{err}");
            assert!(
                out.contains("b: 'mystery 2'") || out.contains("b: mystery 2"),
                "the stored definition decodes it:\n{out}"
            );
        } else {
            assert_ne!(code, Some(0), "no definition, no decoding: {out}");
            assert!(!err.contains("panicked at") && err.contains("rbag_test/msg/Mystery"), "{err}");
            let (code, out, err) = echo(&bag, &["--msg-path", &msg_path]);
            assert_eq!(code, Some(0), "{err}");
            assert!(out.contains("a: 2") && out.contains("mystery 2"), "--msg-path decodes it later:\n{out}");
        }
    }
}

/// `ROS_LOCALHOST_ONLY=1` (Humble) and `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` (Jazzy) keep
/// rbag on loopback with no `CYCLONEDDS_URI`: it still finds a publisher on this host.
#[test]
fn localhost_only_finds_publishers_on_this_host_without_a_cyclone_config() {
    let test = "localhost_only_finds_publishers_on_this_host_without_a_cyclone_config";
    let Some(py) = available(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (k, (var, value)) in
        [("ROS_LOCALHOST_ONLY", "1"), ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")].into_iter().enumerate()
    {
        let domain = Domain::new();
        let bag = tmp.path().join(format!("l{k}"));
        let log = tmp.path().join(format!("l{k}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_rbag"))
            .args(["record", "--ros2", "--topics", "/chatter", "-o", bag.to_str().unwrap()])
            .env_remove("CYCLONEDDS_URI")
            .env_remove("ROS_LOCALHOST_ONLY")
            .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
            .env(var, value)
            .env("ROS_DOMAIN_ID", domain.id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let rec = Rec { child, log };
        rec.wait_log("Recording to");
        publish(&py, &domain, 10);
        let out = rec.stop();
        assert_eq!(count(&bag, "/chatter"), 10, "{var}={value}:\n{out}");
    }
}

/// `ros2 node list` as rmw_dds_common computes it: the node entries of `ros_discovery_info`
/// (read by the Python peer) joined with DDS's built-in DCPSPublication/DCPSSubscription
/// topics (read here through Cyclone's C API: the Python binding crashes on them) show rbag's
/// recorder node under `--node-name`, owning its subscription and its control services' request
/// readers and reply writers, and nothing of another participant.
#[test]
fn the_graph_shows_the_recorder_node_with_its_endpoints() {
    use rbag_ros2::dds::{Endpoints, Participant};
    let test = "the_graph_shows_the_recorder_node_with_its_endpoints";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("bag");
    let rec = record(
        &domain,
        tmp.path(),
        &["--topics", "/chatter", "--node-name", "my_recorder", "-o", bag.to_str().unwrap()],
    );
    rec.wait_log("Recording to");
    let mut chatter =
        CyclonePeer::spawn(&py, &domain, "pub", &["--topic", "rt/chatter", "--count", "3", "--linger", "8"]);
    rec.wait_log("Subscribed to topic '/chatter'");
    let script = rbag_testkit::ros2::graph_peer_script();
    let mut graph = CyclonePeer::spawn_script(&py, &script, &domain, "nodes", &["--until", "my_recorder"]);
    let status = graph.wait_exit(Duration::from_secs(40));
    let out = graph.output();
    assert!(status.is_some_and(|s| s.success()), "{out}");
    // The node's last entry: NODE / my_recorder <participant>, then its endpoints' GIDs.
    let lines: Vec<&str> = out.lines().collect();
    let at = lines.iter().rposition(|l| l.starts_with("NODE / my_recorder ")).unwrap_or_else(|| panic!("{out}"));
    let participant = lines[at].rsplit(' ').next().unwrap().to_string();
    let gids: Vec<(&str, &str)> = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with("NODE") && **l != "DONE")
        .filter_map(|l| l.split_once(' '))
        .collect();
    // DDS discovery, from a participant of this test's own.
    let p = Participant::new(domain.id()).unwrap();
    let mut endpoints = Endpoints::new(&p).unwrap();
    let wanted = [
        ("READER", "rt/chatter"),
        ("READER", "rq/my_recorder/pauseRequest"),
        ("WRITER", "rr/my_recorder/is_pausedReply"),
    ];
    let start = Instant::now();
    let named = loop {
        endpoints.poll();
        let named: Vec<(String, String, String)> = gids
            .iter()
            .filter_map(|(kind, gid)| {
                let e = endpoints.all().find(|e| e.guid.to_string() == *gid)?;
                Some((kind.to_string(), e.topic.clone(), e.participant.to_string()))
            })
            .collect();
        let has = |k: &str, t: &str| named.iter().any(|n| n.0 == k && n.1 == t);
        if wanted.iter().all(|(k, t)| has(k, t)) || start.elapsed() > LONG {
            break named;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    for (k, t) in wanted {
        assert!(named.iter().any(|n| n.0 == k && n.1 == t), "{k} {t} not among the node's endpoints {named:?}:\n{out}");
    }
    assert_eq!(named.len(), gids.len(), "every GID the node names is an endpoint discovery shows: {named:?}\n{out}");
    assert!(named.iter().all(|n| n.2 == participant), "all of the node's participant {participant}: {named:?}");
    chatter.kill();
    rec.stop();
}

/// Over DDS, as `ros2 service call` on rmw_cyclonedds calls them: Jazzy 0.26.10's `record`,
/// `stop` and discovery services, and Lyrical's layouts (named by the client's type hash) of
/// `stop`, `split_bagfile` and `record`. The node stays up between recordings.
#[test]
fn recorder_stop_record_and_discovery_services_in_both_layouts() {
    let test = "recorder_stop_record_and_discovery_services_in_both_layouts";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let first = tmp.path().join("a");
    let rec = record(&domain, tmp.path(), &["--topics", "/chatter", "-o", first.to_str().unwrap()]);
    rec.wait_log("Recording to");
    let call = |name: &str, srv: &str, value: &str, hash: Option<&str>| {
        let service = format!("/rosbag2_recorder/{name}");
        rbag_testkit::ros2::call_service_as(&py, &domain, &service, srv, value, hash)
    };
    let code =
        |v: serde_json::Value| (v["return_code"].as_i64().unwrap(), v["error_string"].as_str().unwrap().to_string());
    assert_eq!(call("is_discovery_running", "IsDiscoveryRunning", "0", None)["running"], true);
    assert_eq!(code(call("stop_discovery", "StopDiscovery", "0", None)), (0, String::new()));
    assert_eq!(call("is_discovery_running", "IsDiscoveryRunning", "0", None)["running"], false);
    assert_eq!(code(call("start_discovery", "StartDiscovery", "0", None)), (0, String::new()));
    assert_eq!(code(call("start_discovery", "StartDiscovery", "0", None)), (1, "Discovery is already running.".into()));
    assert_eq!(code(call("record", "Record", "0", None)), (1, "Recorder is already recording.".into()));
    publish(&py, &domain, 5);
    // Jazzy's stop: an empty answer; the bag is closed, the node stays.
    call("stop", "Stop", "0", None);
    rec.wait_log("The recorder waits for a record request");
    assert_eq!(count(&first, "/chatter"), 5);
    let codes = "---\nint32 return_code\nstring error_string\n";
    let stop = common::rosbag2_srv_hash("Stop", codes);
    assert_eq!(code(call("stop", "Stop", "0", Some(&stop))), (1, "Recorder is already stopped.".into()));
    let split = common::rosbag2_srv_hash(
        "SplitBagfile",
        &format!("builtin_interfaces/Time split_time\nint32 split_mode\nstring tracking_topic_name\n{codes}"),
    );
    assert_eq!(
        code(call("split_bagfile", "SplitBagfile", "0", Some(&split))),
        (1, "Recorder is not recording.".into())
    );
    assert_eq!(
        code(call("start_discovery", "StartDiscovery", "0", None)),
        (1, "Recorder is not currently recording.".into())
    );
    // Lyrical's record, into a named directory.
    let record_hash =
        common::rosbag2_srv_hash("Record", &format!("string uri\nbuiltin_interfaces/Time start_time\n{codes}"));
    let second = tmp.path().join("b");
    assert_eq!(code(call("record", "Record", second.to_str().unwrap(), Some(&record_hash))), (0, String::new()));
    rec.wait_log(&format!("Recording to '{}", second.display()));
    rec.wait_log("Subscribed to topic '/chatter'");
    publish(&py, &domain, 7);
    let log = rec.stop();
    assert_eq!(count(&second, "/chatter"), 7, "{log}");
    assert_eq!(count(&first, "/chatter"), 5, "{log}");
}
