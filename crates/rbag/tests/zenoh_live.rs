//! `rbag record --ros2 --middleware zenoh` and `rbag play --ros2 --middleware zenoh` against
//! eclipse-zenoh peers that behave as rmw_zenoh_cpp on the wire
//! (`crates/rbag-testkit/peers/zenoh_peer.py`: keys, liveliness tokens and attachments cited
//! from rmw_zenoh's sources). Each test has its own loopback port for the router and its own
//! domain id; rbag reaches the router through rmw_zenoh's `ZENOH_CONFIG_OVERRIDE`. Bags are read
//! back with rosbags and the mcap library (`tests/peers/ros2_read.py`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use rbag_testkit::ros2::{from_hex, Domain};
use rbag_testkit::zenoh::{endpoint, free_port, spawn, zenoh_python, ZenohPeer};
use serde_json::Value;

mod common;
#[path = "common/zenoh_net.rs"]
mod zenoh_net;
use zenoh_net::{exit_ok, hash_of, router, talker, Rbag, LONG};

const STRING: &str = "std_msgs::msg::dds_::String_";
const STRING_HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
const BLOB: &str = "sensor_msgs::msg::dds_::CompressedImage_";

fn setup(test: &str) -> Option<PathBuf> {
    let py = zenoh_python(test)?;
    rbag_testkit::oracle_python(test)?;
    Some(py)
}

/// rbag's sample ROS 1 bag of `seconds`, converted into a rosbag2 MCAP directory `DIR/ros2`.
fn ros2_sample(dir: &Path, seconds: u64) -> PathBuf {
    let ros1 = common::sample_bag(dir, "in.bag", seconds);
    let bag = dir.join("ros2");
    let o = common::run(&[&"convert", &ros1, &"-o", &bag, &"-s", &"mcap"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    bag
}

/// The `PUBLISHED`/`RECEIVED` lines of a peer: (index, payload or its digest, attachment).
fn samples(peer: &ZenohPeer, tag: &str) -> Vec<(usize, String, Vec<u8>)> {
    peer.lines()
        .iter()
        .filter_map(|l| l.strip_prefix(tag))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].parse().unwrap(), f[1].to_string(), from_hex(f[2]))
        })
        .collect()
}

/// `tests/peers/ros2_read.py MODE PATH`.
fn read_py(py: &Path, mode: &str, path: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ros2_read.py");
    let out = Command::new(py).arg(script).arg(mode).arg(path).output().expect("ros2_read.py runs");
    assert!(out.status.success(), "ros2_read.py {mode}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn digest(data: &[u8]) -> String {
    if data.len() <= 4096 {
        data.iter().map(|b| format!("{b:02x}")).collect()
    } else {
        format!("fnv:{}", rbag_testkit::digest(data))
    }
}

/// Payloads of `topic` in the bag, in order, as the peers print them.
fn recorded(bag: &Path, topic: &str) -> Vec<String> {
    common::read_all(bag).into_iter().filter(|m| m.0 == topic).map(|m| digest(&m.2)).collect()
}

/// Records a talker and a 4 MiB publisher through `port`, with a router there (`external`)
/// or rbag's own; checks nothing was lost and third-party readers agree.
fn record_talkers(test: &str, external: bool) {
    let Some(py) = setup(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (port, domain) = (free_port(), Domain::new());
    let d = domain.id();
    let mut router = external.then(|| router(&py, port));
    let bag = dir.path().join("bag");
    let out = bag.to_str().unwrap();
    let mut rec =
        Rbag::start(dir.path(), "record", port, d, &["record", "--ros2", "--middleware", "zenoh", "-a", "-o", out]);
    rec.expect_err(&format!("Joined Zenoh domain {d}"));
    assert_eq!(rec.stderr().contains("started one in this process"), !external, "{}", rec.stderr());
    let blob_hash = hash_of("sensor_msgs/msg/CompressedImage");
    let mut chatter =
        talker(&py, port, d, "/chatter", STRING, STRING_HASH, &["--count", "30", "--rate", "100", "--wait-sub", "30"]);
    let big = ["--kind", "blob", "--size", "4194304", "--count", "6", "--rate", "10", "--wait-sub", "30"];
    let mut blob = talker(&py, port, d, "/camera/compressed", BLOB, &blob_hash, &big);
    // A type nobody has a definition for is recorded raw, as over DDS.
    let mystery_hash = format!("RIHS01_{}", "ab".repeat(32));
    let odd = ["--count", "5", "--rate", "50", "--wait-sub", "30"];
    let mut mystery = talker(&py, port, d, "/mystery", "rbag_test::msg::dds_::Mystery_", &mystery_hash, &odd);
    exit_ok(&mut chatter);
    exit_ok(&mut blob);
    exit_ok(&mut mystery);
    rec.expect_err("Subscribed to topic '/camera/compressed'");
    // The talkers have exited; a moment for their last samples to leave rbag's socket.
    std::thread::sleep(Duration::from_millis(2000));
    assert_eq!(rec.finish(true), Some(0), "{}", rec.stderr());
    if let Some(r) = &mut router {
        r.kill();
    }
    let sent: Vec<String> = samples(&chatter, "PUBLISHED ").into_iter().map(|s| s.1).collect();
    assert_eq!(recorded(&bag, "/chatter"), sent, "the bag holds what the talker published, in order");
    // The 4 MiB samples are the peer's blob pattern (too big to print): made again here.
    let sent: Vec<String> = (0..6).map(|i| digest(&rbag_testkit::ros2::cdr::blob_msg(i, 4 << 20))).collect();
    assert_eq!(samples(&blob, "PUBLISHED ").len(), 6);
    assert_eq!(recorded(&bag, "/camera/compressed"), sent, "the 4 MiB samples, whole and in order");
    let sent: Vec<String> = samples(&mystery, "PUBLISHED ").into_iter().map(|s| s.1).collect();
    assert_eq!(recorded(&bag, "/mystery"), sent, "the unknown type, raw");
    assert!(rec.stderr().contains("type rbag_test/msg/Mystery is unknown to rbag"), "{}", rec.stderr());
    // rosbags reads the types, hashes and QoS rbag stored.
    let v = read_py(&py, "rosbags", &bag);
    assert!(v["error"].is_null(), "{}", v["error"]);
    assert_eq!(v["topics"]["/chatter"]["type"], "std_msgs/msg/String");
    assert_eq!(v["topics"]["/camera/compressed"]["type"], "sensor_msgs/msg/CompressedImage");
    assert_eq!(v["topics"]["/chatter"]["count"], 30);
    assert_eq!(v["topics"]["/chatter"]["qos"][0]["reliability"], "reliable");
    let meta = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    assert!(meta.contains(STRING_HASH) && meta.contains(&blob_hash), "{meta}");
    // And the mcap library reads the file.
    let file = std::fs::read_dir(&bag)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "mcap"));
    let m = read_py(&py, "mcap", &file.expect("an .mcap file"));
    assert!(m["error"].is_null(), "{}", m["error"]);
    assert_eq!(m["channels"]["/chatter"]["message_encoding"], "cdr");
}

#[test]
fn zenoh_record_keeps_a_talker_and_4mib_samples_through_the_embedded_router() {
    record_talkers("zenoh_record_keeps_a_talker_and_4mib_samples_through_the_embedded_router", false);
}

#[test]
fn zenoh_record_keeps_a_talker_and_4mib_samples_through_an_external_router() {
    record_talkers("zenoh_record_keeps_a_talker_and_4mib_samples_through_an_external_router", true);
}

/// `rbag play` into Zenoh: a listener gets the bag's bytes in order on the remapped topic,
/// with rmw_zenoh's attachment (sequence numbers from 1), `/clock` is published, and rbag's
/// publisher token has rmw_zenoh's form.
#[test]
fn zenoh_play_reaches_a_listener_byte_exact_in_order_with_clock_and_remap() {
    let test = "zenoh_play_reaches_a_listener_byte_exact_in_order_with_clock_and_remap";
    let Some(py) = setup(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let bag = ros2_sample(dir.path(), 2);
    let want = recorded(&bag, "/chatter");
    assert!(want.len() >= 100, "{}", want.len());
    let (port, domain) = (free_port(), Domain::new());
    let (d, e) = (domain.id(), endpoint(port));
    let mut router = router(&py, port);
    let ds = d.to_string();
    let n = want.len().to_string();
    let base = ["--connect", e.as_str(), "--domain", ds.as_str(), "--hash", "*", "--timeout", "60"];
    let mut listener =
        spawn(&py, "listener", &[&base[..], &["--topic", "/talk", "--dds-type", STRING, "--count", &n]].concat());
    let clock_args = ["--topic", "/clock", "--dds-type", "rosgraph_msgs::msg::dds_::Clock_", "--count", "3"];
    let mut clock = spawn(&py, "listener", &[&base[..], &clock_args].concat());
    let until = "/MP/%/%/rosbag2_player/%talk/";
    let mut tokens = spawn(&py, "tokens", &["--connect", &e, "--domain", &ds, "--until", until, "--timeout", "60"]);
    listener.expect_line("READY", LONG);
    clock.expect_line("READY", LONG);
    tokens.expect_line("READY", LONG);
    let b = bag.to_str().unwrap();
    let args = [
        "play",
        "--ros2",
        "--middleware",
        "zenoh",
        b,
        "--topics",
        "/chatter",
        "--remap",
        "/chatter:=/talk",
        "--clock",
        "20",
    ];
    let mut play = Rbag::start(dir.path(), "play", port, d, &args);
    assert_eq!(play.finish(false), Some(0), "{}", play.stderr());
    exit_ok(&mut listener);
    exit_ok(&mut clock);
    exit_ok(&mut tokens);
    router.kill();
    let got = samples(&listener, "RECEIVED ");
    assert_eq!(got.iter().map(|s| s.1.clone()).collect::<Vec<_>>(), want, "the listener got the bag's bytes, in order");
    for (k, (_, _, att)) in got.iter().enumerate() {
        assert_eq!(att.len(), 33, "attachment {k}");
        assert_eq!(i64::from_le_bytes(att[..8].try_into().unwrap()), k as i64 + 1, "sequence number {k}");
        assert_eq!(att[16], 0x10);
    }
    let token = tokens.lines().into_iter().find(|l| l.contains(until)).expect("rbag's publisher token");
    let token = token.strip_prefix("TOKEN ").unwrap();
    let parts: Vec<&str> = token.split('/').collect();
    assert_eq!(parts.len(), 13, "{token}");
    assert_eq!((parts[0], parts[1], parts[5]), ("@ros2_lv", ds.as_str(), "MP"), "{token}");
    assert!(parts[2].chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "zid: {token}");
    assert!(parts[3].parse::<u64>().is_ok() && parts[4].parse::<u64>().is_ok(), "ids: {token}");
    assert_eq!(&parts[6..11], &["%", "%", "rosbag2_player", "%talk", STRING], "{token}");
    assert_eq!(parts[11], STRING_HASH, "{token}");
    assert!(rbag_ros2::zenoh_wire::qos_from_text(parts[12]).is_some(), "{token}");
}

/// A transient-local topic whose messages were published before rbag started is recorded from
/// the publisher's cache (zenoh-ext's advanced publisher, as rmw_zenoh's), with its durability
/// stored.
#[test]
fn zenoh_record_takes_a_latched_topic_published_before_it_started() {
    let test = "zenoh_record_takes_a_latched_topic_published_before_it_started";
    let Some(py) = setup(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (port, domain) = (free_port(), Domain::new());
    let d = domain.id();
    let mut router = router(&py, port);
    let tl = ["--count", "3", "--transient-local", "--depth", "5", "--linger", "60"];
    let mut latched = talker(&py, port, d, "/map", STRING, STRING_HASH, &tl);
    latched.expect_line("DONE", LONG);
    let bag = dir.path().join("bag");
    let args = ["record", "--ros2", "--middleware", "zenoh", "--topics", "/map", "-o", bag.to_str().unwrap()];
    let mut rec = Rbag::start(dir.path(), "record", port, d, &args);
    rec.expect_err("Subscribed to topic '/map'");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(rec.finish(true), Some(0), "{}", rec.stderr());
    latched.kill();
    router.kill();
    let sent: Vec<String> = samples(&latched, "PUBLISHED ").into_iter().map(|s| s.1).collect();
    assert_eq!(recorded(&bag, "/map"), sent, "the cached messages, in order:\n{}", rec.stderr());
    let meta = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    assert!(meta.contains("durability: transient_local"), "{meta}");
}

/// `--log-level` as a ROS 2 node's logger level: `info` (the default) prints the status lines,
/// `warn` and `error` leave them out; errors still show.
#[test]
fn log_level_sets_what_play_and_record_print() {
    let dir = tempfile::tempdir().unwrap();
    let bag = ros2_sample(dir.path(), 1);
    let domain = Domain::new();
    for (level, status) in [(None, true), (Some("info"), true), (Some("warn"), false), (Some("error"), false)] {
        let mut args = vec!["play", "--ros2", "--middleware", "zenoh", bag.to_str().unwrap(), "-r", "100"];
        args.extend(level.map(|l| ["--log-level", l]).iter().flatten());
        let mut play = Rbag::start(dir.path(), "play", free_port(), domain.id(), &args);
        assert_eq!(play.finish(false), Some(0), "{}", play.stderr());
        assert_eq!(play.stderr().contains("Joined Zenoh domain"), status, "{level:?}: {}", play.stderr());
    }
    let o = common::run(&[&"record", &"--ros2", &"--log-level", &"loud", &"-a"]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("--log-level"), "{}", common::stderr(&o));
}

/// rmw_zenoh's environment: `ZENOH_SESSION_CONFIG_URI` names the session config file, and
/// `ZENOH_ROUTER_CHECK_ATTEMPTS=-1` skips the router check, so no router is started.
#[test]
fn zenoh_environment_is_read_as_rmw_zenoh_reads_it() {
    let test = "zenoh_environment_is_read_as_rmw_zenoh_reads_it";
    let Some(py) = setup(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (port, domain) = (free_port(), Domain::new());
    let d = domain.id();
    let mut router = router(&py, port);
    let config = dir.path().join("session.json5");
    let text = format!(
        "{{ mode: \"peer\", connect: {{ endpoints: [\"{}\"] }}, listen: {{ endpoints: [\"tcp/127.0.0.1:0\"] }}, scouting: {{ multicast: {{ enabled: false }} }}, timestamping: {{ enabled: true }} }}",
        endpoint(port)
    );
    std::fs::write(&config, text).unwrap();
    let bag = dir.path().join("bag");
    let args = ["record", "--ros2", "--middleware", "zenoh", "--topics", "/chatter", "-o", bag.to_str().unwrap()];
    let env = [("ZENOH_CONFIG_OVERRIDE", None), ("ZENOH_SESSION_CONFIG_URI", Some(config.to_str().unwrap()))];
    // The override points nowhere useful without the file: only the file's endpoint has the router.
    let mut rec = Rbag::start_env(dir.path(), "record", free_port(), d, &args, &env);
    rec.expect_err(&format!("Joined Zenoh domain {d}"));
    let mut chatter = talker(&py, port, d, "/chatter", STRING, STRING_HASH, &["--count", "5", "--wait-sub", "30"]);
    exit_ok(&mut chatter);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(rec.finish(true), Some(0), "{}", rec.stderr());
    assert!(!rec.stderr().contains("started one"), "{}", rec.stderr());
    let sent: Vec<String> = samples(&chatter, "PUBLISHED ").into_iter().map(|s| s.1).collect();
    assert_eq!(recorded(&bag, "/chatter"), sent);
    router.kill();
    // No router anywhere, and the check skipped: nothing is started, and play still runs.
    let ros2 = ros2_sample(dir.path(), 1);
    let args = ["play", "--ros2", "--middleware", "zenoh", ros2.to_str().unwrap(), "-r", "100"];
    let mut play =
        Rbag::start_env(dir.path(), "play", free_port(), d, &args, &[("ZENOH_ROUTER_CHECK_ATTEMPTS", Some("-1"))]);
    assert_eq!(play.finish(false), Some(0), "{}", play.stderr());
    assert!(!play.stderr().contains("started one"), "{}", play.stderr());
}

/// `--clock-topics /chatter`: `/clock` goes out just before each `/chatter` message, at that
/// message's time, and not otherwise (no `--clock` rate).
#[test]
fn clock_topics_publish_clock_before_each_message() {
    let test = "clock_topics_publish_clock_before_each_message";
    let Some(py) = setup(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let bag = ros2_sample(dir.path(), 1);
    let times: Vec<u64> = common::read_all(&bag).into_iter().filter(|m| m.0 == "/chatter").map(|m| m.1).collect();
    let (port, domain) = (free_port(), Domain::new());
    let (d, e) = (domain.id().to_string(), endpoint(port));
    let mut router = router(&py, port);
    let n = times.len().to_string();
    let args = ["--connect", &e, "--domain", &d, "--hash", "*", "--timeout", "60", "--topic", "/clock"];
    let mut clock = spawn(
        &py,
        "listener",
        &[&args[..], &["--dds-type", "rosgraph_msgs::msg::dds_::Clock_", "--count", &n]].concat(),
    );
    clock.expect_line("READY", LONG);
    let b = bag.to_str().unwrap();
    let play_args = [
        "play",
        "--ros2",
        "--middleware",
        "zenoh",
        b,
        "--topics",
        "/chatter",
        "/speed",
        "--clock-topics",
        "/chatter",
        "-r",
        "20",
    ];
    let mut play = Rbag::start(dir.path(), "play", port, domain.id(), &play_args);
    assert_eq!(play.finish(false), Some(0), "{}", play.stderr());
    exit_ok(&mut clock);
    router.kill();
    let got: Vec<u64> = samples(&clock, "RECEIVED ")
        .into_iter()
        .map(|(_, hex, _)| {
            let b = from_hex(&hex);
            let sec = i32::from_le_bytes(b[4..8].try_into().unwrap()) as u64;
            sec * 1_000_000_000 + u32::from_le_bytes(b[8..12].try_into().unwrap()) as u64
        })
        .collect();
    assert_eq!(got, times, "one /clock per /chatter message, at its time");
}

/// Calls `service` (of DDS service type `dds_type`) through an rmw_zenoh-like client; returns
/// the response's fields (after the encapsulation) once the reply's attachment carried the
/// client's sequence number (1) and GID back. `hash` is the one the client names (`None`: the
/// server's, from its token).
fn call_zenoh(
    py: &Path,
    port: u16,
    domain: u32,
    service: &str,
    dds_type: &str,
    hash: Option<&str>,
    request: &str,
) -> Vec<u8> {
    let (e, d) = (endpoint(port), domain.to_string());
    let mut args =
        vec!["--connect", &e, "--domain", &d, "--topic", service, "--dds-type", dds_type, "--request", request];
    if let Some(h) = hash {
        args.extend(["--service-hash", h]);
    }
    let mut client = spawn(py, "call", &args);
    let status = client.wait_exit(LONG);
    let out = client.output();
    assert!(status.is_some_and(|s| s.success()), "{service}: {out}");
    let field = |tag: &str| out.lines().find_map(|l| l.strip_prefix(tag).map(str::to_string)).unwrap_or_default();
    let gid = from_hex(&field("CLIENT "));
    let response = field("RESPONSE ");
    let (payload, attachment) = response.split_once(' ').unwrap_or_else(|| panic!("{service}: {out}"));
    let (payload, attachment) = (from_hex(payload), from_hex(attachment));
    assert_eq!(attachment.len(), 33, "{service}: {out}");
    assert_eq!((&attachment[..8], attachment[16], &attachment[17..]), (&1i64.to_le_bytes()[..], 16, &gid[..]), "{out}");
    assert_eq!(&payload[..2], &[0, 1], "{service}: little-endian CDR: {out}");
    payload[4..].to_vec()
}

/// rosbag2's player and recorder services over Zenoh, as an rmw_zenoh client calls them: a
/// query on the service key with the attachment, answered with the sequence number and GID
/// back. A client naming another distro's type hash is answered too.
#[test]
fn zenoh_control_services_answer_rmw_zenoh_clients() {
    let test = "zenoh_control_services_answer_rmw_zenoh_clients";
    let Some(py) = setup(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let bag = ros2_sample(dir.path(), 2);
    let (port, domain) = (free_port(), Domain::new());
    let d = domain.id();
    let mut router = router(&py, port);
    let srv = |name: &str| format!("rosbag2_interfaces::srv::dds_::{name}_");
    let empty = "0001000000";
    let args = ["play", "--ros2", "--middleware", "zenoh", bag.to_str().unwrap(), "--start-paused"];
    let mut play = Rbag::start(dir.path(), "play", port, d, &args);
    assert_eq!(call_zenoh(&py, port, d, "/rosbag2_player/is_paused", &srv("IsPaused"), None, empty)[0], 1);
    let rate = format!("00010000{}", 2.0f64.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>());
    assert_eq!(call_zenoh(&py, port, d, "/rosbag2_player/set_rate", &srv("SetRate"), None, &rate)[0], 1, "success");
    let got = call_zenoh(&py, port, d, "/rosbag2_player/get_rate", &srv("GetRate"), None, empty);
    assert_eq!(f64::from_le_bytes(got[..8].try_into().unwrap()), 2.0);
    let other = format!("RIHS01_{}", "ab".repeat(32));
    call_zenoh(&py, port, d, "/rosbag2_player/resume", &srv("Resume"), Some(&other), empty);
    assert_eq!(play.finish(false), Some(0), "resumed, the bag plays to its end:\n{}", play.stderr());
    // `play` during the playback is refused, as rosbag2 does; `stop` ends a paused player.
    let args = ["play", "--ros2", "--middleware", "zenoh", bag.to_str().unwrap(), "--start-paused"];
    let mut play = Rbag::start(dir.path(), "play2", port, d, &args);
    let request = format!("00010000{}", "00".repeat(24));
    assert_eq!(call_zenoh(&py, port, d, "/rosbag2_player/play", &srv("Play"), None, &request), [0]);
    let lyrical = lyrical_stop_hash();
    let stopped = call_zenoh(&py, port, d, "/rosbag2_player/stop", &srv("Stop"), Some(&lyrical), empty);
    assert_eq!(return_code(&stopped), (0, String::new()));
    assert_eq!(play.finish(false), Some(0), "stopped while paused:\n{}", play.stderr());
    assert!(play.stderr().contains("dismissing request"), "{}", play.stderr());

    let out = dir.path().join("rec");
    let args = ["record", "--ros2", "--middleware", "zenoh", "-a", "--start-paused", "-o", out.to_str().unwrap()];
    let mut rec = Rbag::start(dir.path(), "record", port, d, &args);
    assert_eq!(call_zenoh(&py, port, d, "/rosbag2_recorder/is_paused", &srv("IsPaused"), None, empty)[0], 1);
    call_zenoh(&py, port, d, "/rosbag2_recorder/resume", &srv("Resume"), None, empty);
    assert_eq!(call_zenoh(&py, port, d, "/rosbag2_recorder/is_paused", &srv("IsPaused"), None, empty)[0], 0);
    rec.expect_err("Recording resumed.");
    assert_eq!(rec.finish(true), Some(0), "{}", rec.stderr());
    router.kill();
}

/// Hex of a CDR request: the encapsulation, then `fields`.
fn request_hex(fields: &[u8]) -> String {
    [0u8, 1, 0, 0].iter().chain(fields).map(|b| format!("{b:02x}")).collect()
}

/// A CDR `string`.
fn cdr_string(s: &str) -> Vec<u8> {
    let mut out = (s.len() as u32 + 1).to_le_bytes().to_vec();
    out.extend_from_slice(s.as_bytes());
    out.push(0);
    out
}

/// RIHS01 of Lyrical's `rosbag2_interfaces/srv/Stop` (#2312: a return code and an error string).
fn lyrical_stop_hash() -> String {
    common::rosbag2_srv_hash("Stop", "---\nint32 return_code\nstring error_string\n")
}

/// A response of `int32 return_code, string error_string`.
fn return_code(fields: &[u8]) -> (i32, String) {
    let code = i32::from_le_bytes(fields[..4].try_into().unwrap());
    let len = u32::from_le_bytes(fields[4..8].try_into().unwrap()) as usize;
    (code, String::from_utf8_lossy(&fields[8..8 + len - 1]).into_owned())
}

/// The recorder's node outlives its recordings, as rosbag2's: `~/stop` closes the bag and
/// keeps serving, `~/record` starts another bag (the last name with `(1)`, or the one asked
/// for), and discovery is switched by its three services. A Lyrical client (its `Stop` hash)
/// gets return codes; a Jazzy one the empty response.
#[test]
fn zenoh_recorder_stops_and_records_again_and_switches_discovery() {
    let test = "zenoh_recorder_stops_and_records_again_and_switches_discovery";
    let Some(py) = setup(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (port, domain) = (free_port(), Domain::new());
    let d = domain.id();
    let mut router = router(&py, port);
    let mut chatter = talker(&py, port, d, "/chatter", STRING, STRING_HASH, &["--count", "100000", "--rate", "100"]);
    let first = dir.path().join("a");
    let args = ["record", "--ros2", "--middleware", "zenoh", "--topics", "/chatter", "-o", first.to_str().unwrap()];
    let mut rec = Rbag::start(dir.path(), "record", port, d, &args);
    rec.expect_err("Subscribed to topic '/chatter'");
    let srv = |name: &str| format!("rosbag2_interfaces::srv::dds_::{name}_");
    let call = |service: &str, ty: &str, hash: Option<&str>, fields: &[u8]| {
        call_zenoh(&py, port, d, &format!("/rosbag2_recorder/{service}"), &srv(ty), hash, &request_hex(fields))
    };
    let empty = [0u8];
    assert_eq!(call("is_discovery_running", "IsDiscoveryRunning", None, &empty)[0], 1);
    assert_eq!(return_code(&call("stop_discovery", "StopDiscovery", None, &empty)), (0, String::new()));
    assert_eq!(call("is_discovery_running", "IsDiscoveryRunning", None, &empty)[0], 0);
    assert_eq!(
        return_code(&call("stop_discovery", "StopDiscovery", None, &empty)),
        (1, "Discovery is not running.".into())
    );
    assert_eq!(return_code(&call("start_discovery", "StartDiscovery", None, &empty)), (0, String::new()));
    assert_eq!(
        return_code(&call("record", "Record", None, &cdr_string(""))),
        (1, "Recorder is already recording.".into())
    );
    // Jazzy's Stop: an empty response; the bag is closed and the node waits.
    assert_eq!(call("stop", "Stop", None, &empty), [0]);
    rec.expect_err("The recorder waits for a record request");
    assert!(first.join("metadata.yaml").exists(), "the stopped bag is closed:\n{}", rec.stderr());
    let lyrical = lyrical_stop_hash();
    assert_eq!(return_code(&call("stop", "Stop", Some(&lyrical), &empty)), (1, "Recorder is already stopped.".into()));
    // Record again under the same name: rosbag2 (Lyrical) appends (1).
    assert_eq!(return_code(&call("record", "Record", None, &cdr_string(""))), (0, String::new()));
    let again = dir.path().join("a(1)");
    rec.expect_err(&format!("Recording to '{}", again.display()));
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(return_code(&call("stop", "Stop", Some(&lyrical), &empty)), (0, String::new()));
    let named = dir.path().join("b");
    assert_eq!(return_code(&call("record", "Record", None, &cdr_string(named.to_str().unwrap()))), (0, String::new()));
    rec.expect_err(&format!("Recording to '{}", named.display()));
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(rec.finish(true), Some(0), "{}", rec.stderr());
    chatter.kill();
    router.kill();
    for bag in [&first, &again, &named] {
        assert!(!recorded(bag, "/chatter").is_empty(), "{}: no /chatter:\n{}", bag.display(), rec.stderr());
    }
}
