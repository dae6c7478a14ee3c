//! `rbag record --ros2 --middleware zenoh` flags the DDS tests (`record_ros2_flags.rs`,
//! `record_ros2_modes.rs`) show over Cyclone DDS, here against eclipse-zenoh peers that behave
//! as rmw_zenoh_cpp on the wire (`crates/rbag-testkit/peers/zenoh_peer.py`): `--use-sim-time`
//! with `/clock` from a Zenoh publisher, `--static-topics-path`, and `--snapshot-mode` triggered
//! by the `~/snapshot` service called as an rmw_zenoh client calls it. Each test has its own
//! router port, domain id and directory.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rbag_testkit::ros2::{from_hex, Domain};
use rbag_testkit::zenoh::{endpoint, free_port, spawn, zenoh_python, ZenohPeer};

mod common;
#[path = "common/zenoh_net.rs"]
mod zenoh_net;
use zenoh_net::{exit_ok, hash_of, router, talker, Rbag, LONG};

const STRING: &str = "std_msgs::msg::dds_::String_";
const CLOCK: &str = "rosgraph_msgs::msg::dds_::Clock_";

/// The payloads (hex) a talker printed as published, in order.
fn published(peer: &ZenohPeer) -> Vec<String> {
    peer.lines()
        .iter()
        .filter_map(|l| l.strip_prefix("PUBLISHED "))
        .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
        .collect()
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// `topic`'s messages in `path` (a bag directory or one storage file): (log time, payload hex).
fn messages(path: &Path, topic: &str) -> Vec<(u64, String)> {
    common::read_all(path).into_iter().filter(|m| m.0 == topic).map(|m| (m.1, hex(&m.2))).collect()
}

/// The `.mcap` files of a bag directory, sorted by split index.
fn mcap_files(bag: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(bag)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    let index = |p: &PathBuf| -> u64 {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        name.split('.').next().unwrap().rsplit('_').next().unwrap().parse().unwrap()
    };
    files.sort_by_key(index);
    files
}

/// `--use-sim-time` over Zenoh: a simulator's `/clock` (best effort, keep last 1, rmw_zenoh's
/// key, token and attachment) at 20 simulated seconds per wall second. Log times are `/clock`'s
/// (`sec = 100 + i`, `nanosec = 250000000`), nothing published before the first `/clock` is in
/// the bag, and `-d 5` splits by simulated seconds.
#[test]
fn zenoh_use_sim_time_stamps_messages_with_clock_time_and_splits_by_it() {
    let test = "zenoh_use_sim_time_stamps_messages_with_clock_time_and_splits_by_it";
    let Some(py) = zenoh_python(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (port, domain) = (free_port(), Domain::new());
    let d = domain.id();
    let mut router = router(&py, port);
    let bag = dir.path().join("sim");
    let mut rec = Rbag::record(
        dir.path(),
        port,
        d,
        &["--topics", "/chatter", "--use-sim-time", "-d", "5", "-o", bag.to_str().unwrap()],
    );
    rec.expect_err("Waiting for the first /clock message");
    let string_hash = hash_of("std_msgs/msg/String");
    // Published while no /clock runs: rbag has not subscribed, none of these may be written.
    let mut early =
        talker(&py, port, d, "/chatter", STRING, &string_hash, &["--count", "10", "--rate", "20", "--linger", "0"]);
    exit_ok(&mut early);
    assert!(!rec.stderr().contains("Subscribed to topic '/chatter'"), "{}", rec.stderr());
    let clock_args =
        ["--kind", "clock", "--best-effort", "--depth", "1", "--count", "400", "--rate", "20", "--wait-sub", "30"];
    let mut clock = talker(&py, port, d, "/clock", CLOCK, &hash_of("rosgraph_msgs/msg/Clock"), &clock_args);
    clock.expect_line("SUBSCRIBER", LONG);
    // rbag subscribes to /chatter once /clock runs (and discovery shows the talker); the talker
    // waits for that subscription.
    let mut chatter =
        talker(&py, port, d, "/chatter", STRING, &string_hash, &["--count", "40", "--rate", "20", "--wait-sub", "30"]);
    chatter.expect_line("SUBSCRIBER", LONG);
    exit_ok(&mut chatter);
    let log = rec.stop();
    clock.kill();
    router.kill();
    let msgs = messages(&bag, "/chatter");
    let payloads: Vec<String> = msgs.iter().map(|m| m.1.clone()).collect();
    assert_eq!(payloads, published(&chatter), "the talker's 40 messages and no early one:\n{log}");
    for (t, _) in &msgs {
        // /clock's times (100.25 s + whole seconds), not the wall clock's ~1.7e18 ns.
        assert!((100_250_000_000..=499_250_000_000).contains(t), "log time {t} is not /clock's\n{log}");
        assert_eq!(t % 1_000_000_000, 250_000_000, "log time {t} is not a /clock sample's\n{log}");
    }
    assert!(msgs.windows(2).all(|w| w[0].0 <= w[1].0), "log times follow /clock: {msgs:?}");
    let (first, last) = (msgs[0].0, msgs[msgs.len() - 1].0);
    // 40 messages at 20 Hz span ~40 simulated seconds: -d 5 (simulated) makes several files.
    assert!(last - first > 5_000_000_000, "{first}..{last}");
    let files = mcap_files(&bag);
    assert!(files.len() >= 2, "{files:?}\n{log}");
    let mut total = 0;
    for f in &files {
        let m = messages(f, "/chatter");
        total += m.len();
        if let (Some(a), Some(b)) = (m.first(), m.last()) {
            assert!(b.0 - a.0 <= 5_000_000_000, "{}: {}..{} spans more than -d 5", f.display(), a.0, b.0);
        }
    }
    assert_eq!(total, 40, "{files:?}");
}

/// `--static-topics-path` over Zenoh: the file's topic is subscribed at start with the file's
/// type (before any publisher exists, so without discovery), under the key its type's hash
/// names, and a talker's messages are recorded; a topic not in the file is not (discovery off).
#[test]
fn zenoh_static_topics_are_subscribed_without_discovery() {
    let test = "zenoh_static_topics_are_subscribed_without_discovery";
    let Some(py) = zenoh_python(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (port, domain) = (free_port(), Domain::new());
    let d = domain.id();
    let mut router = router(&py, port);
    let list = dir.path().join("static.yaml");
    std::fs::write(&list, "static_topics_and_types_list:\n  - [/chatter, std_msgs/msg/String]\n").unwrap();
    let bag = dir.path().join("st");
    let mut rec = Rbag::record(
        dir.path(),
        port,
        d,
        &["--static-topics-path", list.to_str().unwrap(), "-o", bag.to_str().unwrap()],
    );
    // Subscribed before any publisher exists: no discovery needed.
    rec.expect_err("Subscribed to topic '/chatter' (std_msgs/msg/String)");
    let string_hash = hash_of("std_msgs/msg/String");
    let mut other = talker(&py, port, d, "/other", STRING, &string_hash, &["--count", "100", "--rate", "50"]);
    // The talker publishes once it sees rbag's subscriber token: the static subscription's.
    let mut chatter =
        talker(&py, port, d, "/chatter", STRING, &string_hash, &["--count", "10", "--rate", "20", "--wait-sub", "30"]);
    chatter.expect_line("SUBSCRIBER", LONG);
    exit_ok(&mut chatter);
    exit_ok(&mut other);
    let log = rec.stop();
    router.kill();
    let got: Vec<String> = messages(&bag, "/chatter").into_iter().map(|m| m.1).collect();
    assert_eq!(got, published(&chatter), "{log}");
    assert_eq!(got.len(), 10);
    // Static topics alone: discovery is off, /other is not recorded.
    assert!(!log.contains("'/other'"), "{log}");
    assert!(messages(&bag, "/other").is_empty(), "{log}");
    let meta = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    assert!(meta.contains("std_msgs/msg/String") && meta.contains(&string_hash), "{meta}");
}

/// Calls `/rosbag2_recorder/<service>` (type `rosbag2_interfaces/srv/<ty>`) as an rmw_zenoh
/// client (the hash from the server's token): the response's fields after the encapsulation,
/// once the reply's attachment carried the client's sequence number (1) and GID back.
fn call_recorder(py: &Path, port: u16, domain: u32, service: &str, ty: &str) -> Vec<u8> {
    let (e, d) = (endpoint(port), domain.to_string());
    let topic = format!("/rosbag2_recorder/{service}");
    let dds_type = format!("rosbag2_interfaces::srv::dds_::{ty}_");
    let args = ["--connect", &e, "--domain", &d, "--topic", &topic, "--dds-type", &dds_type, "--request", "0001000000"];
    let mut client = spawn(py, "call", &args);
    let status = client.wait_exit(LONG);
    let out = client.output();
    assert!(status.is_some_and(|s| s.success()), "{topic}: {out}");
    let field = |tag: &str| out.lines().find_map(|l| l.strip_prefix(tag).map(str::to_string)).unwrap_or_default();
    let gid = from_hex(&field("CLIENT "));
    let response = field("RESPONSE ");
    let (payload, attachment) = response.split_once(' ').unwrap_or_else(|| panic!("{topic}: {out}"));
    let (payload, attachment) = (from_hex(payload), from_hex(attachment));
    assert_eq!(attachment.len(), 33, "{topic}: {out}");
    assert_eq!((&attachment[..8], attachment[16], &attachment[17..]), (&1i64.to_le_bytes()[..], 16, &gid[..]), "{out}");
    payload[4..].to_vec()
}

/// `--snapshot-mode` over Zenoh, triggered by the `~/snapshot` service: messages wait in the
/// ring (the bag holds none), and a `Snapshot` call from an rmw_zenoh client answers success
/// and writes them all, in order; without `--snapshot-mode` the call answers failure.
#[test]
fn zenoh_snapshot_service_writes_the_buffered_messages() {
    let test = "zenoh_snapshot_service_writes_the_buffered_messages";
    let Some(py) = zenoh_python(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (port, domain) = (free_port(), Domain::new());
    let d = domain.id();
    let mut router = router(&py, port);
    let bag = dir.path().join("snap");
    let args = ["--topics", "/chatter", "--snapshot-mode", "--max-cache-size", "1MiB", "-o", bag.to_str().unwrap()];
    let mut rec = Rbag::record(dir.path(), port, d, &args);
    rec.expect_err("Recording to");
    let string_hash = hash_of("std_msgs/msg/String");
    let mut chatter =
        talker(&py, port, d, "/chatter", STRING, &string_hash, &["--count", "20", "--rate", "50", "--wait-sub", "30"]);
    exit_ok(&mut chatter);
    // Let the last samples reach the ring; nothing is written before the trigger.
    std::thread::sleep(Duration::from_millis(2000));
    assert!(!rec.stderr().contains("Snapshot"), "{}", rec.stderr());
    let success = call_recorder(&py, port, d, "snapshot", "Snapshot");
    assert_eq!(success.first(), Some(&1), "Snapshot's success: {success:?}");
    rec.expect_err("Snapshot: wrote 20 message(s)");
    let log = rec.stop();
    let got: Vec<String> = messages(&bag, "/chatter").into_iter().map(|m| m.1).collect();
    assert_eq!(got.len(), 20, "{log}");
    assert_eq!(got, published(&chatter), "{log}");
    // Outside snapshot mode the service answers failure, as rosbag2's does.
    let plain = dir.path().join("plain");
    let mut rec = Rbag::record(dir.path(), port, d, &["--topics", "/chatter", "-o", plain.to_str().unwrap()]);
    rec.expect_err("Recording to");
    assert_eq!(call_recorder(&py, port, d, "snapshot", "Snapshot").first(), Some(&0), "{}", rec.stderr());
    let log = rec.stop();
    assert!(!log.contains("Snapshot"), "{log}");
    router.kill();
}
