//! A running `rbag record --ros2` for the recorder tests: its stderr in a file, signals, and a
//! clean exit checked; killed on drop.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rbag_testkit::ros2::{loopback_uri, Domain};

pub const LONG: Duration = Duration::from_secs(20);

pub struct Rec {
    pub child: Child,
    pub log: PathBuf,
}

impl Rec {
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn wait_log(&self, needle: &str) {
        let start = Instant::now();
        while !self.log().contains(needle) {
            assert!(start.elapsed() < LONG, "no {needle:?} from rbag:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{sig}");
    }

    pub fn stop(self) -> String {
        self.signal("INT");
        self.stop_on_its_own()
    }

    /// Waits for rbag (or the process wrapping it) to exit by itself, successfully.
    pub fn stop_on_its_own(mut self) -> String {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let log = self.log();
                assert!(status.success(), "rbag exited {status}:\n{log}");
                assert!(!log.contains("panicked at"), "{log}");
                return log;
            }
            assert!(start.elapsed() < LONG, "rbag did not stop:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Rec {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn rbag_cmd(program: &str, domain: &Domain) -> Command {
    let mut c = Command::new(program);
    c.env("CYCLONEDDS_URI", loopback_uri())
        .env("ROS_DOMAIN_ID", domain.id().to_string())
        .env_remove("ROS_LOCALHOST_ONLY");
    c
}

pub fn record(domain: &Domain, dir: &Path, args: &[&str]) -> Rec {
    let log = dir.join("rbag.log");
    let mut c = rbag_cmd(env!("CARGO_BIN_EXE_rbag"), domain);
    c.args(["record", "--ros2"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    Rec { child: c.spawn().unwrap(), log }
}
