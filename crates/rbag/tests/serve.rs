//! `rbag serve` against a real client: Foxglove's npm `@foxglove/ws-protocol` (FoxgloveClient
//! over `ws`, in Node), driven by tests/web/serve_client.mjs. What arrives is compared with an
//! independent reader of the same bag: Debian's python3-rosbag for ROS 1, the `mcap` Python
//! library for MCAP, SQLite (immutable=1) for .db3, as (topic, log time, payload digest).
//!
//! Each test starts its own server on port 0. A missing peer (node, the npm packages, an
//! oracle) or corpus is a skip, printed, and a failure under CI.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rbag_testkit::{corpus, repo_root, skip};
use serde_json::Value;

/// `(topic, log time, digest)`, as the client and the oracles print them.
type Msg = (String, u64, String);

/// `node` and `.peers/web/node_modules` with the client's packages, or a recorded skip.
fn node(test: &str) -> Option<PathBuf> {
    let modules = repo_root().join(".peers/web/node_modules");
    let has_node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_node {
        skip(test, "node is not installed (run scripts/setup-peers.sh)");
        return None;
    }
    for p in ["@foxglove/ws-protocol/package.json", "ws/package.json"] {
        if !modules.join(p).exists() {
            skip(test, &format!("{} is missing (run scripts/setup-peers.sh)", modules.join(p).display()));
            return None;
        }
    }
    Some(modules)
}

/// A running `rbag serve`; killed (SIGTERM) when dropped.
struct Serve {
    child: Child,
    port: u16,
    stderr: Arc<Mutex<String>>,
}

impl Serve {
    fn start(bags: &[&Path], flags: &[&str]) -> Serve {
        Serve::start_with(bags, flags, &[])
    }

    fn start_with(bags: &[&Path], flags: &[&str], env: &[(String, String)]) -> Serve {
        let mut cmd = common::rbag();
        cmd.arg("serve").args(bags).args(["--port", "0"]).args(flags);
        cmd.envs(env.iter().map(|(k, v)| (k, v))).env_remove("AWS_PROFILE");
        let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("rbag serve starts");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr is piped")).lines();
        let stderr = Arc::new(Mutex::new(String::new()));
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            assert!(Instant::now() < deadline, "rbag serve printed no address: {}", stderr.lock().unwrap());
            let line = lines.next().expect("rbag serve prints its address").expect("stderr is text");
            stderr.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some(rest) = line.strip_prefix("rbag serve: ws://127.0.0.1:") {
                break rest.split_whitespace().next().unwrap().parse::<u16>().expect("a port");
            }
        };
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        Serve { child, port, stderr }
    }

    fn url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, then the exit code.
    fn stop(mut self) -> Option<i32> {
        rbag_testkit::ros1::signal(self.child.id(), "TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("rbag serve did not stop on SIGTERM: {}", self.stderr.lock().unwrap());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client_command(modules: &Path, mode: &str, url: &str, args: &[&str]) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/serve_client.mjs");
    let mut cmd = Command::new("node");
    cmd.arg(script).arg(mode).arg(url).args(args).env("RBAG_WEB_MODULES", modules);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

fn parse_client(out: std::process::Output) -> Value {
    assert!(out.status.success(), "client failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("client output is JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Runs the client to the end and parses what it printed.
fn client(modules: &Path, mode: &str, url: &str, args: &[&str]) -> Value {
    parse_client(client_command(modules, mode, url, args).output().expect("node runs"))
}

fn messages(v: &Value) -> Vec<Msg> {
    v["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let t = match &m[1] {
                Value::String(s) => s.parse().unwrap(),
                n => n.as_u64().unwrap(),
            };
            (m[0].as_str().unwrap().to_string(), t, m[m.as_array().unwrap().len() - 1].as_str().unwrap().to_string())
        })
        .collect()
}

/// The messages of a bag by an independent reader, or a recorded skip.
fn oracle(test: &str, kind: &str, path: &Path) -> Option<Vec<Msg>> {
    let dump = match kind {
        "ros1" => rbag_testkit::ros1_dump(&rbag_testkit::rosbag_python(test)?, "rosbag", path),
        "mcap" => rbag_testkit::ros2_dump(&rbag_testkit::oracle_python(test)?, "mcap", path),
        "sqlite" => rbag_testkit::ros2_dump(&rbag_testkit::oracle_python(test)?, "sqlite", path),
        _ => unreachable!(),
    };
    Some(messages(&dump))
}

/// Everything arrived, byte-identical, in log-time order, and in the oracle's order per topic.
fn assert_same(got: &[Msg], want: &[Msg], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: message count");
    assert!(got.windows(2).all(|w| w[0].1 <= w[1].1), "{what}: log times must not go backwards");
    let per_topic = |ms: &[Msg]| {
        let mut m: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
        for (topic, t, d) in ms {
            m.entry(topic.clone()).or_default().push((*t, d.clone()));
        }
        m
    };
    let (g, w) = (per_topic(got), per_topic(want));
    assert_eq!(g.keys().collect::<Vec<_>>(), w.keys().collect::<Vec<_>>(), "{what}: topics");
    for (topic, msgs) in &w {
        assert!(g[topic] == *msgs, "{what}: messages of {topic} differ (times, payload digests or order)");
    }
}

/// Serves `bag` and has a client offering only `proto` receive all of it.
fn serve_whole_bag(test: &str, bag: &Path, kind: &str, oracle_path: &Path) {
    let Some(modules) = node(test) else { return };
    let Some(want) = oracle(test, kind, oracle_path) else { return };
    for proto in [rbag_serve_protocol::V1, rbag_serve_protocol::SDK] {
        let server = Serve::start(&[bag], &["--rate", "100"]);
        let out = client(&modules, "dump", &server.url(), &["--proto", proto]);
        assert_eq!(out["protocol"], proto, "the server answers with the subprotocol offered");
        assert!(out["timedOut"].is_null(), "{proto}: playback did not end: {out}");
        assert_eq!(out["errors"], Value::Array(vec![]), "{proto}: the client saw protocol errors");
        let info = &out["serverInfo"];
        let caps: Vec<&str> = info["capabilities"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        assert!(caps.contains(&"time") && caps.contains(&"playbackControl"), "{caps:?}");
        assert!(info["dataStartTime"]["sec"].is_u64() && info["dataEndTime"]["sec"].is_u64(), "{info}");
        for c in out["channels"].as_array().unwrap() {
            assert!(!c["schema"].as_str().unwrap().is_empty(), "{proto}: channel without schema: {c}");
            let (enc, schema_enc) = (c["encoding"].as_str().unwrap(), c["schemaEncoding"].as_str().unwrap());
            match enc {
                "ros1" => assert_eq!(schema_enc, "ros1msg"),
                "cdr" => assert!(schema_enc == "ros2msg" || schema_enc == "ros2idl", "{c}"),
                other => panic!("unexpected encoding {other}"),
            }
        }
        // The SDK's clients follow playback: paused before, playing, ended.
        let states = out["states"].as_array().unwrap();
        if proto == rbag_serve_protocol::SDK {
            assert!(states.iter().any(|s| s["status"] == 3), "{proto}: no Ended state: {states:?}");
        } else {
            assert!(states.is_empty(), "v1 clients cannot parse PlaybackState: {states:?}");
        }
        assert_same(&messages(&out), &want, &format!("{} over {proto}", bag.display()));
        assert_eq!(server.stop(), Some(0), "SIGTERM stops rbag serve with exit 0");
    }
}

/// The subprotocol names, kept here so the test reads as the client sees them.
mod rbag_serve_protocol {
    pub const V1: &str = "foxglove.websocket.v1";
    pub const SDK: &str = "foxglove.sdk.v1";
}

#[test]
fn a_ros1_bag_reaches_clients_of_both_subprotocols_byte_identical() {
    let test = "a_ros1_bag_reaches_clients_of_both_subprotocols_byte_identical";
    let Some(dir) = corpus(test, "ros1") else { return };
    let bag = dir.join("multi_lz4.bag");
    serve_whole_bag(test, &bag, "ros1", &bag);
}

#[test]
fn an_mcap_bag_reaches_clients_of_both_subprotocols_byte_identical() {
    let test = "an_mcap_bag_reaches_clients_of_both_subprotocols_byte_identical";
    let Some(dir) = corpus(test, "ros2/mcap/cdr_test") else { return };
    let file = dir.join("cdr_test_0.mcap");
    serve_whole_bag(test, &file, "mcap", &file);
}

#[test]
fn a_db3_without_definitions_reaches_clients_with_bundled_schemas() {
    let test = "a_db3_without_definitions_reaches_clients_with_bundled_schemas";
    let Some(dir) = corpus(test, "ros2/sqlite3/talker") else { return };
    serve_whole_bag(test, &dir, "sqlite", &dir.join("talker.db3"));
}

#[test]
fn a_seek_request_plays_from_the_sought_time() {
    let test = "a_seek_request_plays_from_the_sought_time";
    let Some(modules) = node(test) else { return };
    let Some(dir) = corpus(test, "ros1") else { return };
    let bag = dir.join("multi_lz4.bag");
    let Some(want) = oracle(test, "ros1", &bag) else { return };
    let (first, last) = (want.iter().map(|m| m.1).min().unwrap(), want.iter().map(|m| m.1).max().unwrap());
    let seek = first + (last - first) / 2;
    let tail: Vec<Msg> = want.iter().filter(|m| m.1 >= seek).cloned().collect();
    // Real time at first, so the seek (at 1000x) lands while the bag is still playing.
    let server = Serve::start(&[&bag], &["--rate", "1"]);
    let out = client(
        &modules,
        "dump",
        &server.url(),
        &[
            "--proto",
            rbag_serve_protocol::SDK,
            "--seek",
            &seek.to_string(),
            "--speed",
            "1000",
            "--seek-delay-ms",
            "800",
        ],
    );
    assert!(out["timedOut"].is_null(), "{out}");
    let states = out["states"].as_array().unwrap();
    let answer = states
        .iter()
        .find(|s| s["requestId"] == "seek-1")
        .unwrap_or_else(|| panic!("no PlaybackState answers the request: {states:?}"));
    assert_eq!(answer["didSeek"], true);
    assert_eq!(answer["status"], 0, "playing");
    assert_eq!(answer["currentTime"], seek.to_string());
    assert_eq!(answer["speed"], 1000.0);
    let after = answer["afterMessages"].as_u64().unwrap() as usize;
    let got = messages(&out);
    // Before the seek: the start of the bag, played at real time for ~0.5 s.
    assert!(after > 0 && got[..after].iter().all(|m| m.1 < seek), "{after} messages before the seek");
    assert!(got[..after].iter().all(|m| want.contains(m)), "the messages before the seek are the bag's");
    assert_same(&got[after..], &tail, "messages after the seek");
    let latency = answer["atMs"].as_u64().unwrap() - out["seekSentAtMs"].as_u64().unwrap();
    eprintln!("seek answered {latency} ms after the request; {} messages before it, {} after", after, tail.len());
    assert!(latency < 2000, "seek took {latency} ms");
}

#[test]
fn two_clients_at_once_both_get_everything() {
    let test = "two_clients_at_once_both_get_everything";
    let Some(modules) = node(test) else { return };
    let Some(dir) = corpus(test, "ros1") else { return };
    let bag = dir.join("multi_lz4.bag");
    let Some(want) = oracle(test, "ros1", &bag) else { return };
    let server = Serve::start(&[&bag], &["--rate", "50", "--wait-clients", "2"]);
    let a = client_command(&modules, "dump", &server.url(), &["--proto", rbag_serve_protocol::V1]).spawn().unwrap();
    let b = client_command(&modules, "dump", &server.url(), &["--proto", rbag_serve_protocol::SDK]).spawn().unwrap();
    for (name, child) in [("v1 client", a), ("sdk client", b)] {
        let out = parse_client(child.wait_with_output().unwrap());
        assert!(out["timedOut"].is_null(), "{name}: {out}");
        assert_same(&messages(&out), &want, name);
    }
}

#[test]
fn a_client_opened_after_the_end_gets_the_bag_from_the_start() {
    let test = "a_client_opened_after_the_end_gets_the_bag_from_the_start";
    let Some(modules) = node(test) else { return };
    let Some(dir) = corpus(test, "ros1") else { return };
    let bag = dir.join("multi_lz4.bag");
    let Some(want) = oracle(test, "ros1", &bag) else { return };
    let server = Serve::start(&[&bag], &["--rate", "50"]);
    for name in ["first client", "client after the end"] {
        let out = client(&modules, "dump", &server.url(), &["--proto", rbag_serve_protocol::V1]);
        assert!(out["timedOut"].is_null(), "{name}: {out}");
        assert_same(&messages(&out), &want, name);
    }
}

/// A bag of `count` messages of `size` bytes on one topic, 10 ms apart (ROS 1, rbag's writer).
fn big_bag(dir: &Path, count: u64, size: usize) -> PathBuf {
    let path = dir.join("big.bag");
    let mut w = rbag_storage::create(&path, rbag_storage::Format::Ros1, &Default::default()).unwrap();
    let conn = rbag_storage::Connection {
        topic: "/blob".into(),
        message_type: "std_msgs/UInt8MultiArray".into(),
        encoding: "ros1".into(),
        definition: "std_msgs/MultiArrayLayout layout\nuint8[] data\n================================================================================\nMSG: std_msgs/MultiArrayLayout\nstd_msgs/MultiArrayDimension[] dim\nuint32 data_offset\n================================================================================\nMSG: std_msgs/MultiArrayDimension\nstring label\nuint32 size\nuint32 stride\n".into(),
        definition_encoding: "ros1msg".into(),
        metadata: [("md5sum".to_string(), "82373f1612381bb6ee473b5cd6f5d89c".to_string())].into(),
        ..Default::default()
    };
    let id = w.add_connection(&conn).unwrap();
    for i in 0..count {
        // layout: no dims, offset 0; then the data array.
        let mut data = vec![0u8; 8];
        data.extend((size as u32).to_le_bytes());
        data.extend((0..size).map(|j| (i as usize * 31 + j) as u8));
        let t = common::START + i * 10_000_000;
        w.write(id, t, t, &data).unwrap();
    }
    w.finish().unwrap();
    path
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn drop_warnings(out: &Value) -> Vec<String> {
    out["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["level"] == 1 && s["message"].as_str().is_some_and(|m| m.contains("dropped")))
        .map(|s| s["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_slow_client_and_one_leaving_mid_stream_do_not_disturb_the_others() {
    let test = "a_slow_client_and_one_leaving_mid_stream_do_not_disturb_the_others";
    let Some(modules) = node(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    // 32 MB over 2 s of log time: more than the kernel's socket buffers and the 4 MiB queue.
    let bag = big_bag(dir.path(), 200, 160 << 10);
    let want: Vec<Msg> =
        common::read_all(&bag).into_iter().map(|(t, time, d)| (t, time, rbag_testkit::digest(&d))).collect();
    let server = Serve::start(&[&bag], &["--rate", "1", "--queue-size", "4MiB", "--wait-clients", "3"]);
    let url = server.url();
    let steady = client_command(&modules, "dump", &url, &[]).spawn().unwrap();
    let leaving = client_command(&modules, "dump", &url, &["--exit-after", "20"]).spawn().unwrap();
    let slow = client_command(&modules, "dump", &url, &["--stall-ms", "4000"]).spawn().unwrap();

    let out = parse_client(steady.wait_with_output().unwrap());
    assert!(out["timedOut"].is_null(), "{out}");
    assert!(drop_warnings(&out).is_empty(), "the steady client lost messages: {:?}", drop_warnings(&out));
    assert_same(&messages(&out), &want, "the steady client");

    let out = parse_client(leaving.wait_with_output().unwrap());
    assert_eq!(messages(&out).len(), 20, "the leaving client left after 20 messages");

    let out = parse_client(slow.wait_with_output().unwrap());
    assert!(out["timedOut"].is_null(), "{out}");
    let got = messages(&out);
    let warnings = drop_warnings(&out);
    assert!(got.len() < want.len(), "the stalled client cannot have received everything");
    assert_eq!(warnings.len(), 1, "one drop warning, when it reads again: {warnings:?}");
    let dropped: usize = warnings[0].split_whitespace().nth(3).unwrap().parse().unwrap();
    assert_eq!(got.len() + dropped, want.len(), "received + dropped = all: {}", warnings[0]);
    // What it got is a subsequence of the bag, byte-identical.
    let mut rest = want.iter();
    assert!(got.iter().all(|m| rest.any(|w| w == m)), "the slow client's messages are the bag's, in order");

    let mut server = server;
    assert!(server.alive(), "the server survives: {}", server.stderr.lock().unwrap());
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn a_stalled_client_costs_the_server_at_most_its_queue() {
    let test = "a_stalled_client_costs_the_server_at_most_its_queue";
    let Some(modules) = node(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let bag = big_bag(dir.path(), 200, 160 << 10);
    // The default queue (64 MiB), looping as fast as possible: the stalled client is offered
    // far more than its queue while it does not read.
    let server = Serve::start(&[&bag], &["--rate", "1000000", "--loop"]);
    let baseline = rss_kib(server.pid());
    let slow = client_command(&modules, "dump", &server.url(), &["--stall-ms", "5000", "--exit-after", "400"])
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut peak = baseline;
    while started.elapsed() < Duration::from_millis(4500) {
        peak = peak.max(rss_kib(server.pid()));
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = parse_client(slow.wait_with_output().unwrap());
    let warnings = drop_warnings(&out);
    eprintln!("server RSS: {baseline} KiB at start, {peak} KiB at most; slow client: {warnings:?}");
    let bound = baseline + (64 << 10) + (200 << 10);
    assert!(peak < bound, "server RSS {peak} KiB exceeds {bound} KiB");
    assert!(!warnings.is_empty(), "the stalled client is told what it lost: {}", out["statuses"]);
    let mut server = server;
    assert!(server.alive());
}

#[test]
fn malformed_requests_get_error_statuses_and_serving_goes_on() {
    let test = "malformed_requests_get_error_statuses_and_serving_goes_on";
    let Some(modules) = node(test) else { return };
    let Some(dir) = corpus(test, "ros1") else { return };
    let bag = dir.join("multi_lz4.bag");
    let Some(want) = oracle(test, "ros1", &bag) else { return };
    let server = Serve::start(&[&bag], &["--rate", "100"]);
    let out = client(&modules, "malformed", &server.url(), &[]);
    let errors: Vec<&str> = out["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["level"] == 2)
        .map(|s| s["message"].as_str().unwrap())
        .collect();
    let sent = out["sent"].as_array().unwrap();
    assert_eq!(errors.len(), sent.len(), "one error status per bad request: {errors:#?}");
    for needle in [
        "invalid JSON",
        "unknown op \"dance\"",
        "no \"op\"",
        "invalid subscribe",
        "unknown channel id 999999",
        "unknown subscription id 4242",
        "\"advertise\" is not supported",
        "truncated playback control request",
        "unknown binary opcode 77",
        "empty binary",
    ] {
        assert!(errors.iter().any(|e| e.contains(needle)), "no error status says {needle:?}: {errors:#?}");
    }
    assert!(out["timedOut"].is_null(), "{out}");
    assert_eq!(out["count"].as_u64(), Some(want.len() as u64), "after its bad requests the client gets everything");
    // And the next client is served as usual.
    let next =
        client(&modules, "dump", &server.url(), &["--seek", &want[0].1.to_string(), "--proto", "foxglove.sdk.v1"]);
    assert!(next["timedOut"].is_null(), "{next}");
    assert_eq!(messages(&next).len(), want.len());
}

#[test]
fn plain_http_gets_the_page_and_other_subprotocols_are_refused() {
    let test = "plain_http_gets_the_page_and_other_subprotocols_are_refused";
    let Some(dir) = corpus(test, "ros1") else { return };
    let bag = dir.join("multi_lz4.bag");
    let server = Serve::start(&[&bag], &[]);
    let get = |request: &str| {
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    };
    let page = get("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    // What the page says is page.rs's business; here only that plain HTTP reaches it.
    assert!(page.to_ascii_lowercase().contains("content-type: text/html"), "{page}");
    assert!(get("GET /nothing HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
    assert!(get("nonsense\r\n\r\n").starts_with("HTTP/1.1 400"));
    let huge = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000));
    assert!(get(&huge).starts_with("HTTP/1.1 431"));
    let Some(modules) = node(test) else { return };
    let out = client(&modules, "dump", &server.url(), &["--proto", "some.other.protocol", "--timeout", "10"]);
    assert_eq!(out["httpStatus"], 400, "{out}");
}

#[test]
fn a_bag_in_s3_is_served_like_a_local_one() {
    let test = "a_bag_in_s3_is_served_like_a_local_one";
    let Some(modules) = node(test) else { return };
    let Some(dir) = corpus(test, "ros1") else { return };
    let bag = dir.join("multi_lz4.bag");
    let Some(want) = oracle(test, "ros1", &bag) else { return };
    let Some(objects) = rbag_testkit::objects::ObjectServer::start(test, rbag_testkit::objects::Kind::S3) else {
        return;
    };
    objects.create_bucket("serve");
    objects.put("serve", "multi_lz4.bag", &bag);
    let url = objects.url("serve", "multi_lz4.bag");
    let server = Serve::start_with(&[Path::new(&url)], &["--rate", "100"], &objects.env());
    let out = client(&modules, "dump", &server.url(), &[]);
    assert!(out["timedOut"].is_null(), "{out}");
    assert_eq!(out["serverInfo"]["metadata"]["bags"], url.as_str());
    assert_same(&messages(&out), &want, "multi_lz4.bag from S3");
}
