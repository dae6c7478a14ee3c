//! ROS 2 services over Zenoh (issue 19), against `zenoh_peer.py service-server` and
//! `service-client`: an `example_interfaces/srv/AddTwoInts` service as rmw_zenoh and rclcpp run
//! it (queryable with an `SS` token, querier with an `SC` token, rmw_zenoh's attachment), with
//! service introspection publishing `<service>/_service_event` on both sides.
//!
//! - `rbag record --ros2 --middleware zenoh --services /add_two_ints` and `--all-services`
//!   record those events (read back with rosbags and `rbag echo`);
//! - `rbag play --ros2 --middleware zenoh --publish-service-requests` sends the recorded
//!   requests to a fresh server, byte for byte and in order, from the server's events or (with
//!   `--service-requests-source client_introspection`) the client's.
//!
//! Each test has its own router port, domain id and temp directory; the peers wait for a
//! matching subscriber before each event (`--await-readers`), so nothing depends on speed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rbag_testkit::ros2::{from_hex, Domain};
use rbag_testkit::zenoh::{endpoint, free_port, rbag_env, spawn, zenoh_python, ZenohPeer};
use serde_json::Value;

#[path = "common/actions.rs"]
mod actions;
use actions::{ok_text, record_zenoh, LONG};

const EVENT: &str = "example_interfaces/srv/AddTwoInts_Event";
const ADD: &str = "/add_two_ints";
const ADD_EVENTS: &str = "/add_two_ints/_service_event";
const OTHER: &str = "/add_more";
const OTHER_EVENTS: &str = "/add_more/_service_event";
/// `service_msgs/msg/ServiceEventInfo`'s event types.
const REQUEST_SENT: u8 = 0;
const REQUEST_RECEIVED: u8 = 1;
const RESPONSE_SENT: u8 = 2;
const RESPONSE_RECEIVED: u8 = 3;

/// The Zenoh peers' Python and the rosbags oracle, or `None` after a skip (a failure under CI).
fn setup(test: &str) -> Option<PathBuf> {
    let py = zenoh_python(test)?;
    rbag_testkit::oracle_python(test)?;
    Some(py)
}

/// `--msg-path` for `example_interfaces/srv/AddTwoInts`, as a ROS 2 install provides it.
fn definitions(dir: &Path) -> Vec<String> {
    let srv = dir.join("example_interfaces/srv/AddTwoInts.srv");
    std::fs::create_dir_all(srv.parent().unwrap()).unwrap();
    std::fs::write(&srv, "int64 a\nint64 b\n---\nint64 sum\n").unwrap();
    vec!["--msg-path".into(), dir.join("example_interfaces").display().to_string()]
}

/// A router on a port of its own and a fresh domain id.
struct Net {
    py: PathBuf,
    port: u16,
    domain: Domain,
    router: ZenohPeer,
}

impl Net {
    fn new(py: PathBuf) -> Net {
        let (port, domain) = (free_port(), Domain::new());
        let router = spawn(&py, "router", &["--listen", &endpoint(port)]);
        router.expect_line("READY", LONG);
        Net { py, port, domain, router }
    }

    /// `zenoh_peer.py ROLE` on this network.
    fn peer(&self, role: &str, extra: &[&str]) -> ZenohPeer {
        let (e, d) = (endpoint(self.port), self.domain.id().to_string());
        let mut args = vec!["--connect", e.as_str(), "--domain", d.as_str(), "--timeout", "120", "--linger", "1"];
        args.extend(extra);
        let p = spawn(&self.py, role, &args);
        p.expect_line("READY", LONG);
        p
    }

    /// `rbag play --ros2 --middleware zenoh ARGS BAG`, to its end.
    fn play(&self, bag: &Path, args: &[&str]) -> String {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
        rbag_env(&mut c, self.port, self.domain.id());
        let out = c
            .args(["play", "--ros2", "--middleware", "zenoh", "--disable-keyboard-controls"])
            .args(args)
            .arg(bag)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        ok_text(&out, &format!("rbag play --ros2 --middleware zenoh {}", args.join(" ")));
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        self.router.kill();
    }
}

/// What a client asked: its CALL lines' (a, b, request CDR).
fn calls(client: &ZenohPeer) -> Vec<(i64, i64, Vec<u8>)> {
    client
        .lines()
        .iter()
        .filter_map(|l| l.strip_prefix("CALL "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[1].parse().unwrap(), f[2].parse().unwrap(), from_hex(f[3]))
        })
        .collect()
}

/// One request a server took: (request CDR, a, b, sequence number, client GID hex).
type Taken = (Vec<u8>, i64, i64, i64, String);

/// What a server received: its REQUEST lines, in order.
fn taken(server: &ZenohPeer) -> Vec<Taken> {
    server
        .lines()
        .iter()
        .filter_map(|l| l.strip_prefix("REQUEST "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (from_hex(f[1]), f[2].parse().unwrap(), f[3].parse().unwrap(), f[4].parse().unwrap(), f[5].to_string())
        })
        .collect()
}

/// `tests/peers/ros2_read.py rosbags BAG`: the bag as rosbags reads it.
fn rosbags(py: &Path, bag: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ros2_read.py");
    let out = Command::new(py).arg(script).arg("rosbags").arg(bag).output().expect("ros2_read.py runs");
    assert!(out.status.success(), "ros2_read.py: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"].is_null(), "rosbags: {v}");
    v
}

/// An `AddTwoInts_Event` decoded by hand from its CDR: (event type, sequence number, client
/// GID, request (a, b), response sum).
type Event = (u8, i64, Vec<u8>, Option<(i64, i64)>, Option<i64>);

fn event(cdr: &[u8]) -> Event {
    let b = &cdr[4..];
    let i64_at = |o: usize| i64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    // u8 event_type, pad to 4, Time stamp (8), char[16] client_gid, int64 sequence_number.
    let (kind, gid, seq) = (b[0], b[12..28].to_vec(), i64_at(32));
    let mut o = 40;
    let request = (u32_at(o) == 1).then(|| {
        o += 8; // the length, then padding to 8
        let r = (i64_at(o), i64_at(o + 8));
        o += 16;
        r
    });
    if request.is_none() {
        o += 4;
    }
    let o = o.next_multiple_of(4);
    let response = (u32_at(o) == 1).then(|| i64_at((o + 4).next_multiple_of(8)));
    (kind, seq, gid, request, response)
}

/// The bag's events on `topic`, decoded, in the bag's order.
fn events(bag: &Value, topic: &str) -> Vec<Event> {
    bag["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m[0] == topic)
        .map(|m| event(&from_hex(m[2].as_str().unwrap())))
        .collect()
}

/// The (a, b) of each request in `topic`'s events of `kind`, as `rbag echo --json` decodes them.
fn echoed_requests(bag: &Path, topic: &str, kind: u8) -> Vec<(i64, i64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_rbag")).args(["echo", "--json"]).arg(bag).arg(topic).output().unwrap();
    let text = ok_text(&out, "rbag echo --json");
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m["message"]["info"]["event_type"] == kind)
        .map(|m| {
            let r = &m["message"]["request"][0];
            (r["a"].as_i64().unwrap(), r["b"].as_i64().unwrap())
        })
        .collect()
}

/// Checks the four events of each of `want`'s calls: the client's REQUEST_SENT and
/// RESPONSE_RECEIVED, the server's REQUEST_RECEIVED and RESPONSE_SENT, all with the client's
/// GID and sequence number, the request's values and the sum.
fn check_events(got: &[Event], want: &[(i64, i64, Vec<u8>)], client_gid: &[u8]) {
    assert_eq!(got.len(), 4 * want.len(), "{got:?}");
    for (k, (a, b, _)) in want.iter().enumerate() {
        let seq = k as i64 + 1;
        let mut of_call: Vec<_> = got
            .iter()
            .filter(|e| e.1 == seq)
            .inspect(|e| assert_eq!(e.2, client_gid, "{e:?}"))
            .map(|e| (e.0, e.3, e.4))
            .collect();
        of_call.sort();
        assert_eq!(
            of_call,
            [
                (REQUEST_SENT, Some((*a, *b)), None),
                (REQUEST_RECEIVED, Some((*a, *b)), None),
                (RESPONSE_SENT, None, Some(a + b)),
                (RESPONSE_RECEIVED, None, Some(a + b)),
            ],
            "call {k}"
        );
    }
}

/// The client's GID (its CLIENT line).
fn client_gid(client: &ZenohPeer) -> Vec<u8> {
    from_hex(client.expect_line("CLIENT ", LONG).trim_start_matches("CLIENT ").trim())
}

fn wait_exit_ok(peer: &mut ZenohPeer, what: &str) {
    let st = peer.wait_exit(LONG);
    assert!(st.is_some_and(|s| s.success()), "{what} failed ({st:?}):\n{}", peer.output());
}

/// `--services /add_two_ints` records that service's events only, `--all-services` every
/// service's, both while two services are called over Zenoh.
#[test]
fn record_services_over_zenoh_keeps_the_introspection_events() {
    let test = "record_services_over_zenoh_keeps_the_introspection_events";
    let Some(py) = setup(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let net = Net::new(py.clone());
    let defs = definitions(&tmp.path().join("defs"));
    let with = |flags: &[&str]| -> Vec<String> {
        let mut v = vec!["--middleware".to_string(), "zenoh".into()];
        v.extend(flags.iter().map(|f| f.to_string()));
        v.extend(defs.iter().cloned());
        v
    };
    let one = record_zenoh(net.port, &net.domain, tmp.path(), "one", &with(&["--services", ADD]));
    let all = record_zenoh(net.port, &net.domain, tmp.path(), "all", &with(&["--all-services"]));
    for r in [&one, &all] {
        r.wait_log(&format!("Joined Zenoh domain {}", net.domain.id()));
    }
    let common = |service: &'static str, n: &'static str| {
        ["--service", service, "--count", n, "--introspection", "--await-readers"]
    };
    // The servers first: once the recorders subscribed to their events, the clients (same
    // topics) are recorded from their first event.
    let mut srv = net.peer("service-server", &common(ADD, "3"));
    let mut other_srv = net.peer("service-server", &common(OTHER, "2"));
    one.wait_log(&format!("Subscribed to topic '{ADD_EVENTS}'"));
    all.wait_log(&format!("Subscribed to topic '{ADD_EVENTS}'"));
    all.wait_log(&format!("Subscribed to topic '{OTHER_EVENTS}'"));
    let mut cli = net.peer("service-client", &common(ADD, "3"));
    let mut other_cli = net.peer("service-client", &common(OTHER, "2"));
    for (p, what) in [(&mut cli, "client"), (&mut other_cli, "other client"), (&mut srv, "server")] {
        wait_exit_ok(p, what);
    }
    wait_exit_ok(&mut other_srv, "other server");
    assert!(cli.output().contains("SUM 2 296"), "{}", cli.output());
    std::thread::sleep(Duration::from_millis(500));
    let (one_log, all_log) = (one.stop(), all.stop());
    for log in [&one_log, &all_log] {
        assert!(!log.contains("unknown to rbag"), "the event type has a definition:\n{log}");
    }
    assert!(!one_log.contains(OTHER_EVENTS), "--services {ADD} took {OTHER}:\n{one_log}");

    let (want, other_want) = (calls(&cli), calls(&other_cli));
    assert_eq!(want.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(), [(1, 93), (2, 193), (3, 293)]);
    let (gid, other_gid) = (client_gid(&cli), client_gid(&other_cli));
    for (name, topics) in [("one", vec![ADD_EVENTS]), ("all", vec![OTHER_EVENTS, ADD_EVENTS])] {
        let bag = tmp.path().join(name);
        let read = rosbags(&py, &bag);
        // (rosbags' topics come sorted by name.)
        let recorded: Vec<(&str, &str)> = read["topics"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(t, v)| (t.as_str(), v["type"].as_str().unwrap()))
            .collect();
        assert_eq!(recorded, topics.iter().map(|t| (*t, EVENT)).collect::<Vec<_>>(), "{name}: {read}");
        check_events(&events(&read, ADD_EVENTS), &want, &gid);
        // rbag echo decodes the requests with the definition stored in the bag, in call order.
        for kind in [REQUEST_SENT, REQUEST_RECEIVED] {
            assert_eq!(echoed_requests(&bag, ADD_EVENTS, kind), [(1, 93), (2, 193), (3, 293)], "{name}");
        }
        if name == "all" {
            check_events(&events(&read, OTHER_EVENTS), &other_want, &other_gid);
        }
    }
}

/// The calls a client made: (a, b, request CDR).
type Calls = Vec<(i64, i64, Vec<u8>)>;

/// A bag of five calls of `/add_two_ints` recorded over Zenoh: three by a client with
/// introspection, then two by one without, so that the server's REQUEST_RECEIVED events hold
/// five requests and the clients' REQUEST_SENT events three. Returns the bag and both clients'
/// calls.
fn record_calls(net: &Net, dir: &Path) -> (PathBuf, Calls, Calls) {
    let mut args = vec!["--middleware".to_string(), "zenoh".into(), "--services".into(), ADD.into()];
    args.extend(definitions(&dir.join("defs")));
    let rec = record_zenoh(net.port, &net.domain, dir, "calls", &args);
    rec.wait_log(&format!("Joined Zenoh domain {}", net.domain.id()));
    let flags = ["--service", ADD, "--introspection", "--await-readers"];
    let mut srv = net.peer("service-server", &[&flags[..], &["--count", "5"]].concat());
    rec.wait_log(&format!("Subscribed to topic '{ADD_EVENTS}'"));
    let mut cli = net.peer("service-client", &[&flags[..], &["--count", "3"]].concat());
    wait_exit_ok(&mut cli, "client");
    let mut quiet = net.peer("service-client", &["--service", ADD, "--count", "2", "--first", "3"]);
    wait_exit_ok(&mut quiet, "client without introspection");
    wait_exit_ok(&mut srv, "server");
    std::thread::sleep(Duration::from_millis(500));
    rec.stop();
    (dir.join("calls"), calls(&cli), calls(&quiet))
}

/// `--publish-service-requests` over Zenoh: a fresh rmw_zenoh-style server receives the
/// recorded requests as an rmw_zenoh client sends them (attachment with sequence numbers from
/// 1 and one client GID, the request's CDR byte for byte), in order; from the server's
/// REQUEST_RECEIVED events by default (all five calls), from the clients' REQUEST_SENT ones
/// with `--service-requests-source client_introspection` (the three of the introspected
/// client). rbag's client has its `SC` token on the player's node, with the service type's
/// hash. Without a server, playback warns and still ends.
#[test]
fn publish_service_requests_over_zenoh_calls_an_rmw_zenoh_server() {
    let test = "publish_service_requests_over_zenoh_calls_an_rmw_zenoh_server";
    let Some(py) = setup(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let net = Net::new(py);
    let (bag, sent, quiet) = record_calls(&net, tmp.path());
    assert_eq!((sent.len(), quiet.len()), (3, 2));
    let received: Calls = sent.iter().chain(&quiet).cloned().collect();
    assert_eq!(
        received.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(),
        [(1, 93), (2, 193), (3, 293), (4, 393), (5, 493)]
    );
    // The token names AddTwoInts' own type hash, computed from the definitions in the bag.
    let client_token = "/SC/%/%/rosbag2_player/%add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/\
                        RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a/";
    for (source, want) in
        [(None, &received), (Some("service_introspection"), &received), (Some("client_introspection"), &sent)]
    {
        let n = want.len().to_string();
        let mut srv = net.peer("service-server", &["--service", ADD, "--count", &n, "--linger", "0"]);
        let tokens = net.peer("tokens", &["--until", client_token]);
        let mut args = vec!["--publish-service-requests"];
        args.extend(source.iter().flat_map(|s| ["--service-requests-source", *s]));
        let err = net.play(&bag, &args);
        assert!(!err.contains("no server found"), "{source:?}: the server was there:\n{err}");
        assert!(!err.contains("not answered"), "{source:?}: every request was answered:\n{err}");
        srv.expect_line(&format!("DONE {n}"), LONG);
        wait_exit_ok(&mut srv, "server");
        tokens.expect_line(client_token, LONG);
        let got = taken(&srv);
        assert_eq!(got.len(), want.len(), "{source:?}: {}", srv.output());
        for (k, ((cdr, a, b, seq, gid), (wa, wb, wcdr))) in got.iter().zip(want.iter()).enumerate() {
            assert_eq!((cdr, a, b), (wcdr, wa, wb), "{source:?}: request {k}");
            assert_eq!(*seq, k as i64 + 1, "{source:?}: rbag's client numbers its requests from 1");
            assert_eq!(gid, &got[0].4, "{source:?}: one client sends them all");
        }
        assert!(!srv.output().contains("NO_ATTACHMENT"), "{}", srv.output());
    }

    // No server: a warning, the end within the bounded waits.
    let start = Instant::now();
    let err = net.play(&bag, &["--publish-service-requests"]);
    assert!(err.contains(&format!("service {ADD}: no server found")), "{err}");
    assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
}
