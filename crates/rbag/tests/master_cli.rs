//! `rbag master`, the binary, against Debian's rostopic and rosparam on loopback: it prints its
//! URI, serves real peers, exits 0 on SIGINT/SIGTERM, and exits 1 naming a port that is taken.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rbag_testkit::ros1::Ros1Env;

const RBAG: &str = env!("CARGO_BIN_EXE_rbag");

/// Starts `rbag master ARGS` in the graph and returns the URI it printed and its pid.
fn start_master(env: &mut Ros1Env, args: &[&str]) -> (String, u32) {
    let mut cmd = env.command(RBAG);
    cmd.arg("master").args(args);
    let pid = env.spawn("master", cmd).id();
    let start = Instant::now();
    loop {
        let log = env.log("master");
        if let Some(line) = log.lines().find(|l| l.starts_with("rbag master: ")) {
            let uri = line.trim_start_matches("rbag master: ").trim_end_matches(" (ROS_MASTER_URI)").to_string();
            assert!(line.ends_with(" (ROS_MASTER_URI)"), "{line}");
            return (uri, pid);
        }
        assert!(start.elapsed() < Duration::from_secs(10), "rbag master printed no URI:\n{log}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn port_of(uri: &str) -> u16 {
    uri.trim_end_matches('/')
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {uri}"))
}

fn run_ok(env: &Ros1Env, cmd: Command, what: &str) -> String {
    let (ok, out, err) = env.run(cmd, Duration::from_secs(30));
    assert!(ok, "{what} failed:\nstdout: {out}\nstderr: {err}");
    out
}

#[test]
fn rbag_master_serves_rostopic_and_rosparam_and_stops_on_sigint() {
    let Some(mut env) = Ros1Env::new("rbag_master_serves_rostopic_and_rosparam_and_stops_on_sigint") else { return };
    let (uri, _) = start_master(&mut env, &["--host", "127.0.0.1", "-p", "0"]);
    env.port = port_of(&uri);
    assert_eq!(uri, env.master_uri());
    let mut publisher = env.command("/usr/bin/rostopic");
    publisher.args(["pub", "-r", "10", "/chatter", "std_msgs/String", "data: hi"]);
    env.spawn("pub", publisher);
    let start = Instant::now();
    loop {
        let mut list = env.command("/usr/bin/rostopic");
        list.arg("list");
        let out = run_ok(&env, list, "rostopic list");
        if out.lines().any(|l| l == "/chatter") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "/chatter never listed:\n{out}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut echo = env.command("/usr/bin/rostopic");
    echo.args(["echo", "-n", "1", "/chatter"]);
    assert!(run_ok(&env, echo, "rostopic echo").contains("data: \"hi\""));
    let mut set = env.command("/usr/bin/rosparam");
    set.args(["set", "/answer", "42"]);
    run_ok(&env, set, "rosparam set");
    let mut get = env.command("/usr/bin/rosparam");
    get.args(["get", "/answer"]);
    assert_eq!(run_ok(&env, get, "rosparam get").trim(), "42");
    env.kill("pub");
    let status = env.interrupt("master", Duration::from_secs(5)).expect("rbag master exits on SIGINT");
    assert_eq!(status.code(), Some(0), "{}", env.log("master"));
}

#[test]
fn rbag_master_binds_loopback_for_a_loopback_ros_hostname_and_stops_on_sigterm() {
    let Some(mut env) = Ros1Env::new("rbag_master_binds_loopback_for_a_loopback_ros_hostname_and_stops_on_sigterm")
    else {
        return;
    };
    // Ros1Env sets ROS_HOSTNAME=127.0.0.1: no --host needed, as with roscore.
    let (uri, pid) = start_master(&mut env, &["-p", "0"]);
    assert!(uri.starts_with("http://127.0.0.1:"), "{uri}");
    env.port = port_of(&uri);
    let mut list = env.command("/usr/bin/rosparam");
    list.arg("list");
    let out = run_ok(&env, list, "rosparam list");
    assert!(out.lines().any(|l| l == "/run_id"), "{out}");
    rbag_testkit::ros1::signal(pid, "TERM");
    // Exited (a zombie until reaped) on SIGTERM alone, before anything else is sent.
    let start = Instant::now();
    while !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z ")) {
        assert!(start.elapsed() < Duration::from_secs(5), "rbag master ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = env.interrupt("master", Duration::from_secs(5)).expect("reaped");
    assert_eq!(status.code(), Some(0), "{}", env.log("master"));
}

#[test]
fn rbag_master_on_a_taken_port_exits_1_naming_it() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    let mut child = Command::new(RBAG)
        .args(["master", "--host", "127.0.0.1", "-p", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rbag runs");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rbag master kept running on a taken port");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("port {port} is already in use")), "{err}");
    assert!(out.stdout.is_empty());
    drop(taken);
}
