//! Every message of every corpus bag decodes (`rbag echo --json`) to the same values as an
//! independent decoder, compared field by field as JSON:
//! - ROS 1 bags: Debian's rosbag with genpy's message classes (`tests/oracle/decode_ros1.py`);
//! - MCAP: the mcap library's `mcap_ros2` decoder (`decode_mcap.py`);
//! - SQLite3: rosbags (`decode_rosbags.py`) where it works. rosbags 0.11.9 yields no messages
//!   from `sqlite3/talker`, which holds the same messages as `mcap/talker`, so the mcap decoder
//!   covers it.

mod common;

use std::path::Path;
use std::process::Command;

use rbag_testkit::decoded::{assert_same, by_topic};
use rbag_testkit::{corpus, oracle_python, repo_root, rosbag_python};

const TEST_MSGS: &str = "test_msgs=/usr/share/test_interface_files";

fn echo(bag: &Path, extra: &[&str]) -> Vec<u8> {
    let out = common::rbag().arg("echo").arg(bag).arg("--json").args(extra).output().unwrap();
    assert!(out.status.success(), "rbag echo {}: {}", bag.display(), common::stderr(&out));
    out.stdout
}

fn oracle(python: &Path, script: &str, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<u8> {
    let mut cmd = Command::new(python);
    cmd.arg(repo_root().join("tests/oracle").join(script));
    for a in args {
        cmd.arg(a);
    }
    let home = tempfile::tempdir().unwrap();
    rbag_testkit::ros_env(&mut cmd, home.path());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{script} {:?}: {}",
        cmd.get_args().collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn mcap_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    v.sort();
    v
}

#[test]
fn ros1_bags_decode_like_genpy() {
    let test = "ros1_bags_decode_like_genpy";
    let (Some(root), Some(python)) = (corpus(test, "ros1"), rosbag_python(test)) else { return };
    let mut total = 0;
    for name in ["multi_none.bag", "multi_lz4.bag", "multi_bz2.bag", "small_chunks.bag"] {
        let bag = root.join(name);
        total += assert_same(name, &by_topic(&echo(&bag, &[])), &by_topic(&oracle(&python, "decode_ros1.py", &[&bag])));
    }
    // rosbag cannot read the unindexed file; genpy decodes rbag's repaired copy of it.
    let dir = tempfile::tempdir().unwrap();
    let active = root.join("crashed.bag.active");
    let repaired = dir.path().join("crashed.bag");
    let out = common::run(&[&"reindex", &active, &"-o", &repaired]);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", common::stderr(&out));
    total += assert_same(
        "crashed.bag.active",
        &by_topic(&echo(&active, &[])),
        &by_topic(&oracle(&python, "decode_ros1.py", &[&repaired])),
    );
    assert!(total > 2500, "{total}");
    eprintln!("{total} ROS 1 messages equal genpy's");
}

#[test]
fn mcap_bags_decode_like_mcap_ros2() {
    let test = "mcap_bags_decode_like_mcap_ros2";
    let (Some(root), Some(python)) = (corpus(test, "ros2/mcap"), oracle_python(test)) else { return };
    let mut total = 0;
    // bag_with_topics_and_service_events: mcap_ros2 cannot parse the service event schemas; its
    // topics are checked here and the events in `service_events_decode_like_rosbags`.
    for name in ["talker", "wbag", "cdr_test"] {
        let dir = root.join(name);
        let paths = mcap_files(&dir);
        let args: Vec<&dyn AsRef<std::ffi::OsStr>> = paths.iter().map(|p| p as &dyn AsRef<std::ffi::OsStr>).collect();
        total += assert_same(
            name,
            &by_topic(&echo(&dir, &["--msg-path", TEST_MSGS])),
            &by_topic(&oracle(&python, "decode_mcap.py", &args)),
        );
    }
    // The SQLite3 talker holds the same messages (its stored definitions are stubs).
    let sqlite_talker = root.join("../sqlite3/talker");
    let mcap_talker = mcap_files(&root.join("talker"));
    total += assert_same(
        "sqlite3/talker",
        &by_topic(&echo(&sqlite_talker, &[])),
        &by_topic(&oracle(&python, "decode_mcap.py", &[&mcap_talker[0]])),
    );
    eprintln!("{total} MCAP messages equal mcap_ros2's");
}

#[test]
fn sqlite3_bags_decode_like_rosbags() {
    let test = "sqlite3_bags_decode_like_rosbags";
    let (Some(root), Some(python)) = (corpus(test, "ros2/sqlite3"), oracle_python(test)) else { return };
    let mut total = 0;
    for name in ["wbag", "cdr_test", "empty_bag"] {
        let dir = root.join(name);
        total += assert_same(
            name,
            &by_topic(&echo(&dir, &["--msg-path", TEST_MSGS])),
            &by_topic(&oracle(&python, "decode_rosbags.py", &[&dir, &"--msg-path", &TEST_MSGS])),
        );
    }
    assert!(total > 6000, "{total}");
    eprintln!("{total} SQLite3 messages equal rosbags'");
}

/// Service introspection events (`pkg/srv/X_Event`). mcap_ros2 cannot parse their schema (the
/// `.srv` text rosbag2 stores), and rosbags has no `.srv` support: the oracle is rosbags'
/// deserializer with the event type derived in `decode_rosbags.py` from Debian's test_msgs
/// `.srv` files. rbag reads the MCAP bag's own `.srv` schema, and the SQLite3 bag (which stores
/// no definitions) through `--msg-path`.
#[test]
fn service_events_decode_like_rosbags() {
    let test = "service_events_decode_like_rosbags";
    let (Some(root), Some(python)) = (corpus(test, "ros2"), oracle_python(test)) else { return };
    let mut total = 0;
    for (storage, rbag_args) in [("mcap", &[][..]), ("sqlite3", &["--msg-path", TEST_MSGS][..])] {
        let dir = root.join(storage).join("bag_with_topics_and_service_events");
        let ours = by_topic(&echo(&dir, rbag_args));
        assert!(ours.keys().any(|t| t.ends_with("/_service_event")), "{:?}", ours.keys());
        total += assert_same(
            storage,
            &ours,
            &by_topic(&oracle(&python, "decode_rosbags.py", &[&dir, &"--msg-path", &TEST_MSGS])),
        );
    }
    assert_eq!(total, 20);
}
