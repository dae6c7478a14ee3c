//! `rbag play --ros2`'s `--message-order`, `--read-ahead-queue-size` and progress bar flags
//! (rosbag2's semantics), against a real Cyclone DDS subscriber
//! (`rbag-testkit/peers/cyclone_peer.py`) and under a pty (`script`).
//!
//! Every test has its own DDS domain and temp dir; each subscriber starts before rbag, and rbag
//! plays with `-d 1` so discovery has settled. No assertion depends on timing: only on what
//! arrives, in what order, and what is drawn.
#![cfg(feature = "ros2")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rbag_storage::{Connection, Format};
use rbag_testkit::ros2::{available, call_service, cdr, loopback_uri, CyclonePeer, Domain};
use regex::Regex;

/// How long anything may take on a loaded 2-core machine before a test gives up.
const LONG: Duration = Duration::from_secs(90);
const T0: u64 = 1_700_000_000_000_000_000;
const MS: u64 = 1_000_000;

struct Graph {
    py: PathBuf,
    domain: Domain,
    tmp: tempfile::TempDir,
}

impl Graph {
    fn new(test: &str) -> Option<Graph> {
        let py = available(test)?;
        Some(Graph { py, domain: Domain::new(), tmp: tempfile::tempdir().unwrap() })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// Sets this graph's environment (its domain, loopback Cyclone) on `c`.
    fn env(&self, c: &mut Command) {
        c.env("ROS_DOMAIN_ID", self.domain.id().to_string())
            .env("CYCLONEDDS_URI", loopback_uri())
            .env_remove("ROS_LOCALHOST_ONLY")
            .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
            .env_remove("ROS_VERSION")
            .env_remove("CYCLONEDDS_HOME");
    }

    /// `rbag play --ros2 --disable-keyboard-controls -d 1 ARGS`, piped, to its end.
    fn play(&self, args: &[&str]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
        self.env(&mut c);
        c.args(["play", "--ros2", "--disable-keyboard-controls", "-d", "1"]).args(args).stdin(Stdio::null());
        let o = c.output().expect("rbag runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "rbag play {args:?}:\n{err}");
        assert!(!err.contains("panicked at"), "{err}");
        o
    }

    /// `rbag ARGS` with stdout and stderr on a pty (`script`), to its end; what was drawn, with
    /// the pty's CRLF turned into LF.
    fn play_on_a_terminal(&self, args: &[&str]) -> String {
        let mut c = self.script(args);
        let o = c.output().expect("script runs");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).replace("\r\n", "\n")
    }

    fn script(&self, args: &[&str]) -> Command {
        let command = std::iter::once(env!("CARGO_BIN_EXE_rbag")).chain(args.iter().copied()).collect::<Vec<_>>();
        let mut c = Command::new("script");
        self.env(&mut c);
        c.args(["-qec", &command.join(" "), "/dev/null"]).stdin(Stdio::null());
        c
    }

    /// A Cyclone std_msgs/String subscriber on `/order`, running and ready.
    fn sub(&self) -> CyclonePeer {
        let args = ["--topic", "rt/order", "--type", "string", "--count", "1000000", "--timeout", "300", "--no-hex"];
        let p = CyclonePeer::spawn(&self.py, &self.domain, "sub", &args);
        p.expect_line("READY", LONG);
        p
    }
}

/// The strings `peer` received once `n` came (or [`LONG`] passed) and a moment more passed for
/// any extra sample; the peer is then stopped.
fn settle(peer: &mut CyclonePeer, n: usize) -> Vec<String> {
    let start = Instant::now();
    while peer.received().len() < n && start.elapsed() < LONG {
        std::thread::sleep(Duration::from_millis(25));
    }
    std::thread::sleep(Duration::from_millis(700));
    peer.kill();
    peer.received().iter().map(|v| v["data"].as_str().expect("string data").to_string()).collect()
}

fn qos_yaml() -> String {
    let inf = "    sec: 9223372036\n    nsec: 854775807\n";
    format!(
        "- history: keep_last\n  depth: 10\n  reliability: reliable\n  durability: volatile\n  deadline:\n{inf}  lifespan:\n{inf}  liveliness: automatic\n  liveliness_lease_duration:\n{inf}  avoid_ros_namespace_conventions: false"
    )
}

/// Logged 100 ms apart, `log i`; sent in another order (`SENT_RANK[i]`: message i was sent
/// as the rank-th, 100 ms apart, the first 50 ms before the first log time).
const SENT_RANK: [u64; 6] = [2, 0, 4, 1, 5, 3];

/// A rosbag2 MCAP bag of std_msgs/msg/String on `/order` with [`SENT_RANK`]'s send times.
fn order_bag(path: &Path) {
    let mut w = rbag_storage::create(path, Format::Mcap, &Default::default()).unwrap();
    let mut c = Connection {
        topic: "/order".into(),
        message_type: "std_msgs/msg/String".into(),
        encoding: "cdr".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros2msg".into(),
        ..Connection::default()
    };
    c.metadata.insert(rbag_storage::rosbag2::QOS_KEY.into(), qos_yaml());
    let id = w.add_connection(&c).unwrap();
    for (i, rank) in SENT_RANK.iter().enumerate() {
        let log = T0 + i as u64 * 100 * MS;
        let sent = T0 - 50 * MS + rank * 100 * MS;
        w.write(id, log, sent, &cdr::string_msg(&format!("log {i}"))).unwrap();
    }
    w.finish().unwrap();
}

fn texts(order: &[usize]) -> Vec<String> {
    order.iter().map(|i| format!("log {i}")).collect()
}

/// The log indexes by send time.
fn by_send_time() -> Vec<usize> {
    let mut idx: Vec<usize> = (0..SENT_RANK.len()).collect();
    idx.sort_by_key(|&i| SENT_RANK[i]);
    idx
}

#[test]
fn message_order_sent_reaches_the_subscriber_in_send_time_order() {
    let test = "message_order_sent_reaches_the_subscriber_in_send_time_order";
    let Some(g) = Graph::new(test) else { return };
    let bag = g.path("order");
    order_bag(&bag);
    let bag = bag.to_str().unwrap();
    let storage: Vec<usize> = (0..SENT_RANK.len()).collect();
    assert_ne!(by_send_time(), storage, "the bag's send order differs from its log order");

    for (flags, want, what) in [
        (vec!["--message-order", "sent"], by_send_time(), "sent"),
        (vec![], storage.clone(), "default (received)"),
        (vec!["--message-order", "received"], storage.clone(), "received"),
        (vec!["--message-order", "sent", "--read-ahead-queue-size", "1"], storage.clone(), "sent, window 1"),
        // rbag never loans messages: the flag is taken and changes nothing.
        (vec!["--disable-loan-message"], storage.clone(), "--disable-loan-message"),
    ] {
        let mut sub = g.sub();
        let mut args = vec![bag, "-r", "4"];
        args.extend_from_slice(&flags);
        g.play(&args);
        assert_eq!(settle(&mut sub, want.len()), texts(&want), "{what}");
    }
}

#[test]
fn a_small_read_ahead_window_reorders_only_within_it() {
    let test = "a_small_read_ahead_window_reorders_only_within_it";
    let Some(g) = Graph::new(test) else { return };
    let bag = g.path("order");
    order_bag(&bag);
    let mut sub = g.sub();
    g.play(&[bag.to_str().unwrap(), "-r", "4", "--message-order", "sent", "--read-ahead-queue-size", "2"]);
    // Window 2 over sends ranked [2, 0, 4, 1, 5, 3]: {0,1}→1, {0,2}→0, {2,3}→3, {2,4}→2,
    // {4,5}→5, 4.
    assert_eq!(settle(&mut sub, 6), texts(&[1, 0, 3, 2, 5, 4]));
}

#[test]
fn bad_order_flags_are_usage_errors() {
    // Refused before rbag joins a graph: no peer is needed.
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("order");
    order_bag(&bag);
    for flags in [["--message-order", "publish"], ["--read-ahead-queue-size", "0"]] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
        let o = c.args(["play", "--ros2", bag.to_str().unwrap()]).args(flags).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(flags[0].trim_start_matches("--").split('-').next().unwrap()), "{flags:?}: {err}");
    }
}

/// The bar's lines in what a terminal was sent, with their state letters, in order.
fn bar_lines(shown: &str) -> Vec<(String, char)> {
    let re = Regex::new(r"\[(\d+\.\d{9})\] Duration (\d+\.\d\d)/(\d+\.\d\d) \[([RPBDS])\]").unwrap();
    re.captures_iter(shown).map(|c| (c[1].to_string(), c[4].chars().next().unwrap())).collect()
}

#[test]
fn the_progress_bar_is_drawn_on_a_terminal_with_its_states() {
    let test = "the_progress_bar_is_drawn_on_a_terminal_with_its_states";
    let Some(g) = Graph::new(test) else { return };
    let bag = g.path("order");
    order_bag(&bag);
    let bag = bag.to_str().unwrap();
    let shown = g.play_on_a_terminal(&["play", "--ros2", "--disable-keyboard-controls", "-d", "1", bag, "-r", "4"]);
    assert!(shown.contains("Progress bar enabled at 3 Hz.\n"), "{shown:?}");
    assert!(shown.contains("Progress bar [?]: [R]unning, [P]aused, [B]urst, [D]elayed, [S]topped\n"), "{shown:?}");
    assert!(shown.contains("====== Playback Progress ======\n"), "{shown:?}");
    // Two separation lines before the first drawing; later ones go up two lines and redraw.
    let first = shown.find("======").unwrap();
    assert!(shown[..first].ends_with("[S]topped\n\n\n"), "{shown:?}");
    assert!(shown.contains("\x1b[2F"), "redrawn in place: {shown:?}");
    let lines = bar_lines(&shown);
    let states: Vec<char> = lines.iter().map(|l| l.1).collect();
    assert_eq!(states.first(), Some(&'D'), "delayed first: {shown:?}");
    assert!(states.contains(&'R'), "{shown:?}");
    assert_eq!(states.last(), Some(&'S'), "{shown:?}");
    let last = Regex::new(r"\[1700000000\.500000000\] Duration 0\.50/0\.50 \[S\]").unwrap();
    assert!(last.is_match(&shown), "ends at the last message: {shown:?}");
    assert!(shown.contains("[1700000000.000000000] Duration 0.00/0.50 [D]"), "{shown:?}");

    // On every message (negative rate): a drawing per message at least; no separation lines.
    let shown = g.play_on_a_terminal(&[
        "play",
        "--ros2",
        "--disable-keyboard-controls",
        bag,
        "--progress-bar-update-rate",
        "-1",
        "--progress-bar-separation-lines",
        "0",
    ]);
    assert!(shown.contains("Progress bar enabled for every message.\n"), "{shown:?}");
    let first = shown.find("======").unwrap();
    assert!(shown[..first].ends_with("[S]topped\n"), "{shown:?}");
    let running: Vec<String> = bar_lines(&shown).into_iter().filter(|l| l.1 == 'R').map(|l| l.0).collect();
    for i in 0..6 {
        let t = format!("1700000000.{:09}", i * 100 * MS);
        assert!(running.contains(&t), "no [R] drawing at message {i} ({t}): {running:?}");
    }

    // A burst shows B.
    let shown = g.play_on_a_terminal(&["burst", "--disable-keyboard-controls", bag, "-n", "3"]);
    assert!(bar_lines(&shown).iter().any(|l| l.1 == 'B'), "{shown:?}");
}

#[test]
fn a_paused_player_shows_p_until_resumed() {
    let test = "a_paused_player_shows_p_until_resumed";
    let Some(g) = Graph::new(test) else { return };
    let bag = g.path("order");
    order_bag(&bag);
    let out = g.path("pty-out");
    let mut c = g.script(&["play", "--ros2", "--disable-keyboard-controls", "-p", bag.to_str().unwrap()]);
    let mut child = c.stdout(std::fs::File::create(&out).unwrap()).spawn().unwrap();
    let start = Instant::now();
    let shown = || std::fs::read_to_string(&out).unwrap_or_default().replace("\r\n", "\n");
    while !bar_lines(&shown()).iter().any(|l| l.1 == 'P') {
        assert!(start.elapsed() < LONG, "no [P] drawn: {:?}", shown());
        std::thread::sleep(Duration::from_millis(50));
    }
    call_service(&g.py, &g.domain, "/rosbag2_player/resume", "Resume", "0.0");
    let mut status = None;
    let done = rbag_testkit::ros2::wait_child(&mut child, &mut status, LONG);
    if done.is_none() {
        let _ = child.kill();
        panic!("rbag did not end after resume: {:?}", shown());
    }
    let states: Vec<char> = bar_lines(&shown()).iter().map(|l| l.1).collect();
    let p = states.iter().position(|&s| s == 'P').unwrap();
    assert!(states[p..].contains(&'R'), "{states:?}");
    assert_eq!(states.last(), Some(&'S'), "{states:?}");
}

#[test]
fn no_progress_bar_when_piped_or_quiet() {
    let test = "no_progress_bar_when_piped_or_quiet";
    let Some(g) = Graph::new(test) else { return };
    let bag = g.path("order");
    order_bag(&bag);
    let bag = bag.to_str().unwrap();
    let o = g.play(&[bag, "-r", "4"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("Progress") && !err.contains('\x1b'), "piped: {err:?}");
    assert!(err.contains("Done: 6 message(s) published"), "{err}");
    for flags in [&["-q"][..], &["--progress-bar-update-rate", "0"]] {
        let mut args = vec!["play", "--ros2", "--disable-keyboard-controls", bag];
        args.extend_from_slice(flags);
        let shown = g.play_on_a_terminal(&args);
        assert!(!shown.contains("Progress") && !shown.contains("======"), "{flags:?}: {shown:?}");
    }
}
