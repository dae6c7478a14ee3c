//! Interop with Fast DDS, the stack of rmw_fastrtps (ROS 2's default middleware), as Debian's
//! libfastrtps 2.9 builds it: a Fast DDS publisher is recorded by `rbag record --ros2`, and
//! `rbag play --ros2` reaches a Fast DDS subscriber. Everything on 127.0.0.1 only (Cyclone's
//! loopback config, the peer's unicast-only transport), on a DDS domain of its own.
#![cfg(feature = "ros2")]

use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use rbag_testkit::ros2::{fastdds_peer, loopback_uri, wait_child, Domain};

const LONG: Duration = Duration::from_secs(90);

fn rbag(domain: &Domain) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
    c.env("CYCLONEDDS_URI", loopback_uri())
        .env("ROS_DOMAIN_ID", domain.id().to_string())
        .env_remove("ROS_LOCALHOST_ONLY")
        .stdin(Stdio::null());
    c
}

/// Starts `program args`, stdout and stderr into `dir/<name>.out`.
fn spawn(mut c: Command, dir: &Path, name: &str) -> Child {
    let out = File::create(dir.join(format!("{name}.out"))).unwrap();
    c.stdout(out.try_clone().unwrap()).stderr(out).spawn().unwrap_or_else(|e| panic!("starting {name}: {e}"))
}

fn output(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{name}.out"))).unwrap_or_default()
}

fn wait(child: &mut Child, dir: &Path, name: &str) -> ExitStatus {
    let mut status = None;
    wait_child(child, &mut status, LONG).unwrap_or_else(|| {
        let _ = child.kill();
        panic!("{name} did not finish within {LONG:?}:\n{}", output(dir, name))
    })
}

fn wait_for(dir: &Path, name: &str, needle: &str) {
    let start = std::time::Instant::now();
    while !output(dir, name).contains(needle) {
        assert!(start.elapsed() < LONG, "no {needle:?} from {name}:\n{}", output(dir, name));
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn hello(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("hello {i}")).collect()
}

#[test]
fn fast_dds_publisher_is_recorded_and_playback_reaches_a_fast_dds_subscriber() {
    let test = "fast_dds_publisher_is_recorded_and_playback_reaches_a_fast_dds_subscriber";
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let Some(peer) = fastdds_peer(test, dir) else { return };
    let domain = Domain::new();
    let bag = dir.join("from_fastdds");

    // Fast DDS publishes (once a reader matched, then waits for acknowledgements); rbag records.
    let mut c = rbag(&domain);
    c.args(["record", "--ros2", "-a", "-o"]).arg(&bag);
    let mut rec = spawn(c, dir, "record");
    wait_for(dir, "record", "Recording to");
    let mut c = Command::new(&peer);
    c.args(["pub", &domain.id().to_string(), "rt/chatter", "20"]).stdin(Stdio::null());
    let mut publisher = spawn(c, dir, "pub");
    assert!(wait(&mut publisher, dir, "pub").success(), "{}", output(dir, "pub"));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(rec.id() as libc::pid_t, libc::SIGINT) };
    assert!(wait(&mut rec, dir, "record").success(), "{}", output(dir, "record"));
    let log = output(dir, "record");
    assert!(log.contains("Subscribed to topic '/chatter' (std_msgs/msg/String)"), "{log}");
    let echo = rbag(&domain).args(["echo", "--json"]).arg(&bag).arg("/chatter").output().unwrap();
    let recorded: Vec<String> = String::from_utf8_lossy(&echo.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["message"]["data"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(recorded, hello(20), "{log}");

    // rbag plays the bag back; a Fast DDS subscriber receives every message in order.
    let mut c = Command::new(&peer);
    c.args(["sub", &domain.id().to_string(), "rt/chatter", "20"]).stdin(Stdio::null());
    let mut subscriber = spawn(c, dir, "sub");
    wait_for(dir, "sub", "READY");
    let mut c = rbag(&domain);
    c.args(["play", "--ros2", "--disable-keyboard-controls", "-d", "1"]).arg(&bag);
    let mut play = spawn(c, dir, "play");
    assert!(wait(&mut play, dir, "play").success(), "{}", output(dir, "play"));
    assert!(wait(&mut subscriber, dir, "sub").success(), "{}", output(dir, "sub"));
    let received: Vec<String> =
        output(dir, "sub").lines().filter_map(|l| l.strip_prefix("RECEIVED ")).map(str::to_string).collect();
    assert_eq!(received, hello(20), "{}", output(dir, "play"));
}
