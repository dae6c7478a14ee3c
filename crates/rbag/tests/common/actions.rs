//! What the action tests share: a running `rbag record --ros2` (over DDS or Zenoh) watched
//! through its stderr, and the `--msg-path` directories of `example_interfaces/action/Fibonacci`.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use rbag_testkit::ros2::{loopback_uri, Domain};

/// How long a step may take before the test fails.
pub const LONG: Duration = Duration::from_secs(60);
/// The action type every test uses.
pub const FIB: &str = "example_interfaces/action/Fibonacci";

/// `rbag` on `domain`, over loopback Cyclone, nothing else from the environment.
pub fn rbag(domain: &Domain) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
    c.env("ROS_DOMAIN_ID", domain.id().to_string())
        .env("CYCLONEDDS_URI", loopback_uri())
        .env_remove("ROS_VERSION")
        .env_remove("ROS_LOCALHOST_ONLY")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("CYCLONEDDS_HOME")
        .stdin(Stdio::null());
    c
}

/// A command's stdout, once it succeeded without a panic.
pub fn ok_text(out: &Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what} failed ({:?}):\n{err}", out.status);
    assert!(!err.contains("panicked at"), "{what} panicked:\n{err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A running `rbag record --ros2`; its stderr goes to a file. Killed on drop.
pub struct Rec {
    child: Child,
    log: PathBuf,
}

/// `rbag record --ros2 ARGS -o DIR/NAME` on `domain` over DDS.
pub fn record(domain: &Domain, dir: &Path, name: &str, args: &[impl AsRef<OsStr>]) -> Rec {
    Rec::start(rbag(domain), dir, name, args)
}

/// `rbag record --ros2 ARGS -o DIR/NAME` over Zenoh, through the router at `port`.
pub fn record_zenoh(port: u16, domain: &Domain, dir: &Path, name: &str, args: &[impl AsRef<OsStr>]) -> Rec {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
    rbag_testkit::zenoh::rbag_env(&mut c, port, domain.id());
    c.stdin(Stdio::null());
    Rec::start(c, dir, name, args)
}

impl Rec {
    fn start(mut c: Command, dir: &Path, name: &str, args: &[impl AsRef<OsStr>]) -> Rec {
        let log = dir.join(format!("{name}.log"));
        c.args(["record", "--ros2"])
            .args(args)
            .arg("-o")
            .arg(dir.join(name))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        Rec { child: c.spawn().expect("starting rbag record --ros2"), log }
    }

    /// What it printed so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until it printed `needle`.
    pub fn wait_log(&self, needle: &str) {
        let start = Instant::now();
        while !self.stderr().contains(needle) {
            assert!(start.elapsed() < LONG, "rbag record printed no {needle:?} in {LONG:?}:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// The topics it said it subscribed to.
    pub fn subscribed(&self) -> BTreeSet<String> {
        self.stderr()
            .lines()
            .filter_map(|l| l.strip_prefix("Subscribed to topic '"))
            .filter_map(|l| l.split('\'').next())
            .map(str::to_string)
            .collect()
    }

    /// SIGINT; expects exit 0; returns the log.
    pub fn stop(mut self) -> String {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(start.elapsed() < LONG, "rbag record did not stop:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        };
        let log = self.stderr();
        assert_eq!(status.code(), Some(0), "rbag record exit status:\n{log}");
        assert!(!log.contains("panicked at"), "rbag record panicked:\n{log}");
        log
    }
}

impl Drop for Rec {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `--msg-path` directories for the action's types, as a ROS 2 install would provide them:
/// `example_interfaces` with only its `.action` file, `action_msgs` (msg and srv) and
/// `unique_identifier_msgs`.
pub fn definitions(dir: &Path) -> Vec<String> {
    let files = [
        ("example_interfaces/action/Fibonacci.action", "int32 order\n---\nint32[] sequence\n---\nint32[] sequence\n"),
        ("unique_identifier_msgs/msg/UUID.msg", "uint8[16] uuid\n"),
        ("action_msgs/msg/GoalInfo.msg", "unique_identifier_msgs/UUID goal_id\nbuiltin_interfaces/Time stamp\n"),
        (
            "action_msgs/msg/GoalStatus.msg",
            "int8 STATUS_UNKNOWN = 0\nint8 STATUS_ACCEPTED = 1\nint8 STATUS_EXECUTING = 2\nint8 STATUS_CANCELING = 3\n\
             int8 STATUS_SUCCEEDED = 4\nint8 STATUS_CANCELED = 5\nint8 STATUS_ABORTED = 6\nGoalInfo goal_info\nint8 status\n",
        ),
        ("action_msgs/msg/GoalStatusArray.msg", "GoalStatus[] status_list\n"),
        (
            "action_msgs/srv/CancelGoal.srv",
            "GoalInfo goal_info\n---\nint8 ERROR_NONE=0\nint8 ERROR_REJECTED=1\nint8 ERROR_UNKNOWN_GOAL_ID=2\n\
             int8 ERROR_GOAL_TERMINATED=3\nint8 return_code\nGoalInfo[] goals_canceling\n",
        ),
    ];
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    ["example_interfaces", "unique_identifier_msgs", "action_msgs"]
        .iter()
        .flat_map(|pkg| ["--msg-path".to_string(), dir.join(pkg).display().to_string()])
        .collect()
}
