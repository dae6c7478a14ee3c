//! A ROS 1 subscriber for `bench/ros1_live.sh`: receives one topic with rbag-ros1's `Node`, notes
//! each message's receive wall time and the log time the message carries, and reports counts,
//! the receive rate and (in a second step) lateness against a player's schedule.
//!
//! ```text
//! bench_sub sub TOPIC [--count N] [--idle SEC] [--timeout SEC] [--stamp string|header|none]
//!                     [--samples FILE] [--tcp-nodelay]
//! bench_sub lateness FILE --started NS [--rate R]
//! bench_sub wait-subscribers TOPIC N [--timeout SEC]
//! ```
//!
//! `sub` ends after N messages, or SEC (default 3) seconds without a message once one arrived, or
//! after --timeout (default 600 s), and prints one JSON line on stdout: `received`, `bytes`,
//! `first_recv_ns`, `last_recv_ns`, `span_s` (first → last receive), `msgs_per_s`
//! ((received − 1) / span) and `out_of_order` (log times going backwards). It prints `ready` on
//! stderr once it is registered with the master. With --samples it writes `log_ns recv_ns` per
//! message.
//!
//! The log time is read from the payload: `string` is a std_msgs/String whose data starts with
//! the log time in decimal nanoseconds; `header` is a message starting with a std_msgs/Header
//! (seq, stamp.secs, stamp.nsecs) whose stamp is the log time, e.g. sensor_msgs/Image.
//!
//! `lateness` reads a samples file and prints p50/p99/max of
//! `recv − (started + (log − first_log) / rate)`, the schedule `rbag play --stats` reports
//! (`started_wall_ns`), and the same against the earliest anchor the samples allow
//! (`vs_earliest`: `anchor = min(recv − (log − first_log) / rate)`, so every value is ≥ 0: the
//! delay beyond the least-delayed message), which needs nothing from the player.
//!
//! `wait-subscribers` waits until the master lists at least N subscribers of TOPIC.
//!
//! The master is ROS_MASTER_URI, the host ROS_HOSTNAME/ROS_IP, as for any node.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rbag_ros1::names::NodeConfig;
use rbag_ros1::node::{Node, SubEvent};
use rbag_ros1::tcpros::Limits;

fn usage() -> ! {
    eprintln!(
        "usage: bench_sub sub TOPIC [--count N] [--idle SEC] [--timeout SEC] [--stamp string|header|none] [--samples FILE] [--tcp-nodelay]\n       bench_sub lateness FILE --started NS [--rate R]\n       bench_sub wait-subscribers TOPIC N [--timeout SEC]"
    );
    std::process::exit(2)
}

fn die(msg: impl std::fmt::Display) -> ! {
    eprintln!("bench_sub: {msg}");
    std::process::exit(1)
}

#[derive(Clone, Copy, PartialEq)]
enum Stamp {
    String,
    Header,
    None,
}

/// The log time a payload carries.
fn stamp_of(kind: Stamp, data: &[u8]) -> Option<u64> {
    match kind {
        Stamp::None => Some(0),
        Stamp::Header => {
            let w = |i: usize| data.get(i..i + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()) as u64);
            Some(w(4)? * 1_000_000_000 + w(8)?)
        }
        Stamp::String => {
            let text = data.get(4..)?;
            let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
            std::str::from_utf8(&text[..digits]).ok()?.parse().ok()
        }
    }
}

#[derive(Default)]
struct State {
    received: u64,
    bytes: u64,
    unreadable: u64,
    out_of_order: u64,
    last_log: u64,
    first_recv: u64,
    last_recv: u64,
    /// (log_ns, recv_ns), when samples are kept.
    samples: Vec<(u64, u64)>,
    closed_with_error: Vec<String>,
}

fn node(base: &str) -> Node {
    let name = format!("{base}_{}", std::process::id());
    let (config, _) =
        NodeConfig::from_env_and_args(&name, |k| std::env::var(k).ok(), &[]).unwrap_or_else(|e| die(format!("{e:?}")));
    Node::start(config, Limits::default()).unwrap_or_else(|e| die(e))
}

fn sub(args: &[String]) {
    let mut topic = None;
    let mut count = u64::MAX;
    let mut idle = Duration::from_secs(3);
    let mut timeout = Duration::from_secs(600);
    let mut stamp = Stamp::String;
    let mut samples_path = None;
    let mut nodelay = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_else(|| usage());
        match a.as_str() {
            "--count" => count = val().parse().unwrap_or_else(|_| usage()),
            "--idle" => idle = Duration::from_secs_f64(val().parse().unwrap_or_else(|_| usage())),
            "--timeout" => timeout = Duration::from_secs_f64(val().parse().unwrap_or_else(|_| usage())),
            "--stamp" => {
                stamp = match val().as_str() {
                    "string" => Stamp::String,
                    "header" => Stamp::Header,
                    "none" => Stamp::None,
                    _ => usage(),
                }
            }
            "--samples" => samples_path = Some(val()),
            "--tcp-nodelay" => nodelay = true,
            t if topic.is_none() && !t.starts_with("--") => topic = Some(t.to_string()),
            _ => usage(),
        }
    }
    let topic = topic.unwrap_or_else(|| usage());
    let keep = samples_path.is_some();
    let state = Arc::new(Mutex::new(State::default()));
    let node = node("bench_sub");
    let st = state.clone();
    let handler = Arc::new(move |ev: SubEvent| match ev {
        SubEvent::Message { received_ns, data, .. } => {
            let mut s = st.lock().unwrap();
            if s.received == 0 {
                s.first_recv = received_ns;
            }
            s.received += 1;
            s.bytes += data.len() as u64;
            s.last_recv = received_ns;
            match stamp_of(stamp, &data) {
                Some(log) => {
                    if log < s.last_log {
                        s.out_of_order += 1;
                    }
                    s.last_log = log;
                    if keep {
                        s.samples.push((log, received_ns));
                    }
                }
                None => s.unreadable += 1,
            }
        }
        SubEvent::Closed { error: Some(e), publisher, .. } => {
            st.lock().unwrap().closed_with_error.push(format!("{publisher}: {e}"))
        }
        _ => {}
    });
    node.subscribe(&topic, "*", nodelay, handler).unwrap_or_else(|e| die(e));
    eprintln!("ready");
    let start = Instant::now();
    let mut last_seen = (0u64, Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let n = state.lock().unwrap().received;
        if n != last_seen.0 {
            last_seen = (n, Instant::now());
        }
        if n >= count || (n > 0 && last_seen.1.elapsed() >= idle) || start.elapsed() >= timeout {
            break;
        }
    }
    node.shutdown();
    let s = state.lock().unwrap();
    if let Some(path) = samples_path {
        let mut out = String::with_capacity(s.samples.len() * 40);
        for (log, recv) in &s.samples {
            out.push_str(&format!("{log} {recv}\n"));
        }
        std::fs::write(&path, out).unwrap_or_else(|e| die(format!("{path}: {e}")));
    }
    let span = s.last_recv.saturating_sub(s.first_recv) as f64 / 1e9;
    let rate = if span > 0.0 { (s.received - 1) as f64 / span } else { 0.0 };
    println!(
        "{{\"received\":{},\"bytes\":{},\"first_recv_ns\":{},\"last_recv_ns\":{},\"span_s\":{span:.6},\"msgs_per_s\":{rate:.1},\"out_of_order\":{},\"unreadable\":{},\"link_errors\":{}}}",
        s.received,
        s.bytes,
        s.first_recv,
        s.last_recv,
        s.out_of_order,
        s.unreadable,
        s.closed_with_error.len()
    );
    for e in &s.closed_with_error {
        eprintln!("bench_sub: link closed with an error: {e}");
    }
}

/// Nearest-rank percentile of sorted values.
fn pct(sorted: &[i64], p: f64) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn lateness(args: &[String]) {
    let mut file = None;
    let mut started: Option<u64> = None;
    let mut rate = 1.0f64;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_else(|| usage());
        match a.as_str() {
            "--started" => started = Some(val().parse().unwrap_or_else(|_| usage())),
            "--rate" => rate = val().parse().unwrap_or_else(|_| usage()),
            f if file.is_none() && !f.starts_with("--") => file = Some(f.to_string()),
            _ => usage(),
        }
    }
    let file = file.unwrap_or_else(|| usage());
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| die(format!("{file}: {e}")));
    let samples: Vec<(u64, u64)> = text
        .lines()
        .filter_map(|l| {
            let (a, b) = l.split_once(' ')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect();
    let Some(&(first_log, _)) = samples.first() else { die(format!("{file}: no samples")) };
    let late = |anchor: u64| {
        let mut v: Vec<i64> = samples
            .iter()
            .map(|&(log, recv)| recv as i64 - (anchor as i64 + (log.saturating_sub(first_log) as f64 / rate) as i64))
            .collect();
        v.sort_unstable();
        v
    };
    // The earliest anchor any message allows: lateness against it is >= 0, the delay beyond the
    // least-delayed message.
    let earliest = samples
        .iter()
        .map(|&(log, recv)| recv as i64 - (log.saturating_sub(first_log) as f64 / rate) as i64)
        .min()
        .unwrap_or(0);
    let rel = late(earliest as u64);
    let mut out = format!("{{\"count\":{}", samples.len());
    if let Some(st) = started {
        let v = late(st);
        out += &format!(
            ",\"lateness_min_ns\":{},\"lateness_p50_ns\":{},\"lateness_p99_ns\":{},\"lateness_max_ns\":{}",
            v[0],
            pct(&v, 50.0),
            pct(&v, 99.0),
            v[v.len() - 1]
        );
    }
    out += &format!(
        ",\"vs_earliest_p50_ns\":{},\"vs_earliest_p99_ns\":{},\"vs_earliest_max_ns\":{}}}",
        pct(&rel, 50.0),
        pct(&rel, 99.0),
        rel[rel.len() - 1]
    );
    println!("{out}");
}

fn wait_subscribers(args: &[String]) {
    let (Some(topic), Some(n)) = (args.first(), args.get(1).and_then(|n| n.parse::<usize>().ok())) else { usage() };
    let timeout = match args.get(2).map(String::as_str) {
        Some("--timeout") => {
            Duration::from_secs_f64(args.get(3).and_then(|t| t.parse().ok()).unwrap_or_else(|| usage()))
        }
        None => Duration::from_secs(30),
        _ => usage(),
    };
    let node = node("bench_wait");
    let start = Instant::now();
    loop {
        let have = match node.master().system_state() {
            Ok(s) => s.subscribers.iter().find(|(t, _)| t == topic).map(|(_, nodes)| nodes.len()).unwrap_or(0),
            Err(_) => 0,
        };
        if have >= n {
            return;
        }
        if start.elapsed() >= timeout {
            die(format!("{topic}: {have} subscriber(s) after {timeout:?}, wanted {n}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("sub") => sub(&args[1..]),
        Some("lateness") => lateness(&args[1..]),
        Some("wait-subscribers") => wait_subscribers(&args[1..]),
        _ => usage(),
    }
}
