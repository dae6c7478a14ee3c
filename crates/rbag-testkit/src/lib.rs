//! Helpers for rbag's tests: where the shared corpus and the real peers are, and how a test that
//! cannot run says so. Under `CI` a missing corpus or peer fails the test; elsewhere the test
//! prints why it skipped and the suite's summary counts it (`scripts/test.sh`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod browser;
pub mod decoded;
pub mod objects;
pub mod ros1;
pub mod ros2;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root exists")
}

/// Records a skip, or fails under CI where nothing may be skipped.
pub fn skip(test: &str, reason: &str) {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false") {
        panic!("{test}: {reason} (CI is set: a missing corpus or peer is a failure)");
    }
    eprintln!("SKIPPED {test}: {reason}");
    if let Some(log) = std::env::var_os("RBAG_SKIP_LOG") {
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
            let _ = writeln!(f, "{test}: {reason}");
        }
    }
}

/// `../shared/corpus/<sub>`, or `None` after recording a skip.
pub fn corpus(test: &str, sub: &str) -> Option<PathBuf> {
    let dir = repo_root().join("../shared/corpus").join(sub);
    if dir.exists() {
        Some(dir)
    } else {
        skip(test, &format!("corpus {} is absent", dir.display()));
        None
    }
}

fn python_has(python: &Path, modules: &str) -> bool {
    Command::new(python).args(["-c", &format!("import {modules}")]).output().is_ok_and(|o| o.status.success())
}

/// `python` if it imports `module`, or `None` after recording a skip that says how to get it.
fn python_with(test: &str, python: PathBuf, module: &str, missing: &str) -> Option<PathBuf> {
    if python_has(&python, module) {
        Some(python)
    } else {
        skip(test, &format!("{missing} (run scripts/setup-peers.sh)"));
        None
    }
}

/// Debian's Python 3 with the ROS 1 `rosbag` module (it imports only in /usr/bin/python3).
pub fn rosbag_python(test: &str) -> Option<PathBuf> {
    python_with(test, "/usr/bin/python3".into(), "rosbag", "Debian's python3-rosbag is not installed")
}

/// The venv Python with the `rosbags` and `mcap` oracles.
pub fn oracle_python(test: &str) -> Option<PathBuf> {
    python_with(test, repo_root().join(".peers/venv/bin/python"), "rosbags", "the rosbags oracle venv is missing")
}

/// Debian's `rosbag` command line.
pub fn rosbag_cli(test: &str) -> Option<PathBuf> {
    let p = PathBuf::from("/usr/bin/rosbag");
    if p.exists() && rosbag_python(test).is_some() {
        Some(p)
    } else {
        if p.exists() {
            return None;
        }
        skip(test, "Debian's rosbag command is not installed (run scripts/setup-peers.sh)");
        None
    }
}

/// Foxglove's `mcap` CLI (Rust), built into `.peers/mcap` by scripts/setup-peers.sh.
pub fn mcap_cli(test: &str) -> Option<PathBuf> {
    let p = repo_root().join(".peers/mcap/bin/mcap");
    if p.exists() {
        Some(p)
    } else {
        skip(test, "the mcap CLI is not built (run scripts/setup-peers.sh)");
        None
    }
}

/// Environment for ROS 1 Python tools: logs and home in a temp dir, nothing on the network.
pub fn ros_env(cmd: &mut Command, home: &Path) {
    cmd.env("ROS_HOME", home)
        .env("ROS_LOG_DIR", home)
        .env("ROS_MASTER_URI", "http://127.0.0.1:1")
        .env("ROS_HOSTNAME", "127.0.0.1");
}

/// Runs `tests/oracle/ros1_dump.py` with `python` and parses its JSON.
pub fn ros1_dump(python: &Path, lib: &str, bag: &Path) -> serde_json::Value {
    let home = std::env::temp_dir().join(format!("rbag-ros-home-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&home);
    let mut cmd = Command::new(python);
    cmd.arg(repo_root().join("tests/oracle/ros1_dump.py")).arg(lib).arg(bag);
    ros_env(&mut cmd, &home);
    let out = cmd.output().expect("oracle runs");
    assert!(out.status.success(), "oracle {lib} failed on {}: {}", bag.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("oracle prints JSON")
}

/// Runs `tests/oracle/ros2_dump.py MODE PATH` (modes: sqlite, mcap, rosbags, metadata) with
/// the oracle venv's `python` and parses its JSON.
pub fn ros2_dump(python: &Path, mode: &str, path: &Path) -> serde_json::Value {
    let out = Command::new(python)
        .arg(repo_root().join("tests/oracle/ros2_dump.py"))
        .arg(mode)
        .arg(path)
        .output()
        .expect("oracle runs");
    assert!(
        out.status.success(),
        "oracle {mode} failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("oracle prints JSON")
}

/// A short hex digest of bytes, the same the oracle script prints (SHA-1 via `sha1sum`-free code
/// is overkill; FNV-1a 64 is enough to compare payloads and is identical in Python).
pub fn digest(data: &[u8]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}{:08x}", data.len())
}

pub mod sample;
pub mod zenoh;
