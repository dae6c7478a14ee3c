//! Helpers shared by the CLI test files: run the real binary, check errors, read bags.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rbag_storage::Filter;
use rbag_testkit::sample;

pub const START: u64 = 1_700_000_000_000_000_000;

pub fn rbag() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rbag"))
}

pub fn run(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut c = rbag();
    for a in args {
        c.arg(a);
    }
    c.output().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A clear error: exit 1, no panic, and the message names what is at fault.
pub fn assert_clear_error(o: &Output, names: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "exit code; stderr: {err}");
    assert!(!err.contains("panicked at"), "{err}");
    for n in names {
        assert!(err.contains(n), "error should name {n:?}: {err}");
    }
}

pub fn sample_bag(dir: &Path, name: &str, seconds: u64) -> PathBuf {
    let path = dir.join(name);
    let mut w = rbag_storage::create(&path, rbag_storage::Format::Ros1, &Default::default()).unwrap();
    sample::write(w.as_mut(), START, seconds * 1_000_000_000).unwrap();
    w.finish().unwrap();
    path
}

pub fn read_all(path: &Path) -> Vec<(String, u64, Vec<u8>)> {
    let r = rbag_storage::open(path).unwrap();
    let v = r
        .messages(&Filter::default())
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (r.connection(m.connection).unwrap().topic.clone(), m.log_time, m.data.to_vec())
        })
        .collect();
    v
}

/// RIHS01 of `rosbag2_interfaces/srv/<name>` with the fields `text` (Lyrical's layouts,
/// rosbag2_interfaces 0.33.3), computed here as an oracle independent of rbag-live's table.
pub fn rosbag2_srv_hash(name: &str, text: &str) -> String {
    let mut reg = rbag_msg::store::registry(rbag_msg::store::Distro::Jazzy).clone();
    let full = format!("rosbag2_interfaces/srv/{name}");
    reg.add_srv(&full, text).unwrap();
    reg.rihs01(&full).unwrap()
}
