//! Conformance on real rosbag2 bags (../shared/corpus/ros2, written by rosbag2 itself): every
//! message rbag yields must have the bytes and times the storage holds, read independently by
//! Python's sqlite3 (for .db3) and the mcap library (for .mcap).

use std::path::Path;

use rbag_storage::{Filter, StorageReader};
use rbag_testkit::{corpus, digest, oracle_python, ros2_dump};
use serde_json::Value;

/// (topic, log time, publish time or None, digest) of everything `reader` yields, in order.
fn ours(reader: &dyn StorageReader, with_publish: bool) -> Vec<(String, u64, Option<u64>, String)> {
    reader
        .messages(&Filter::default())
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            let topic = reader.connection(m.connection).unwrap().topic.clone();
            (topic, m.log_time, with_publish.then_some(m.publish_time), digest(&m.data))
        })
        .collect()
}

fn theirs(dump: &Value, mcap: bool) -> Vec<(String, u64, Option<u64>, String)> {
    dump["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let s = |i: usize| m[i].as_str().unwrap().to_string();
            let n = |i: usize| m[i].as_u64().unwrap();
            if mcap {
                (s(0), n(1), Some(n(2)), s(3))
            } else {
                (s(0), n(1), None, s(2))
            }
        })
        .collect()
}

/// Checks one bag directory: each storage file alone, and the directory as one bag.
fn check_bag(python: &Path, dir: &Path, mcap: bool) {
    let name = dir.display().to_string();
    let meta = ros2_dump(python, "metadata", &dir.join("metadata.yaml"));
    let files: Vec<String> = meta["rosbag2_bagfile_information"]["relative_file_paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    let mut all = Vec::new();
    for f in &files {
        let path = dir.join(f);
        let dump = ros2_dump(python, if mcap { "mcap" } else { "sqlite" }, &path);
        let want = theirs(&dump, mcap);
        let reader = rbag_storage::open(&path).unwrap();
        assert_eq!(ours(reader.as_ref(), mcap), want, "{}: bytes and times, in order", path.display());
        // Topics, types and per-topic counts as the storage records them.
        let info = reader.info().unwrap();
        let key = if mcap { "channels" } else { "topics" };
        for (topic, t) in dump[key].as_object().unwrap() {
            let conns: Vec<_> = reader.connections().iter().filter(|c| &c.topic == topic).collect();
            assert!(!conns.is_empty(), "{}: rbag lacks {topic}", path.display());
            let count: u64 = conns.iter().map(|c| info.connections[&c.id].message_count).sum();
            assert_eq!(count, t["message_count"].as_u64().unwrap(), "{}: {topic} count", path.display());
            if mcap {
                let schema = &dump["schemas"][t["schema"].as_str().unwrap()];
                assert_eq!(conns[0].message_type, t["schema"].as_str().unwrap());
                assert_eq!(conns[0].definition, schema["data"].as_str().unwrap(), "{topic}: definition text");
                assert_eq!(conns[0].definition_encoding, schema["encoding"].as_str().unwrap());
            } else {
                assert_eq!(conns[0].message_type, t["type"].as_str().unwrap());
                if let Some(q) = t["offered_qos_profiles"].as_str().filter(|q| !q.is_empty()) {
                    assert_eq!(conns[0].metadata["offered_qos_profiles"], q, "{topic}: QoS text");
                }
            }
        }
        assert_eq!(info.start_ns, dump["start_ns"].as_u64(), "{}: start", path.display());
        assert_eq!(info.end_ns, dump["end_ns"].as_u64(), "{}: end", path.display());
        all.extend(want);
    }
    // The directory reads as one bag: the files' messages merged by time (file order on ties).
    all.sort_by_key(|m| m.1);
    let bag = rbag_storage::open(dir).unwrap();
    assert_eq!(ours(bag.as_ref(), mcap), all, "{name}: the bag as one");
    assert_eq!(bag.info().unwrap().files.len(), files.len());
}

fn run(storage: &str, mcap: bool) {
    let test = format!("corpus_ros2_{storage}");
    let (Some(root), Some(python)) = (corpus(&test, &format!("ros2/{storage}")), oracle_python(&test)) else { return };
    let mut n = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        check_bag(&python, &dir, mcap);
        n += 1;
    }
    assert!(n >= 4, "expected the corpus's {storage} bags, found {n}");
}

#[test]
fn sqlite3_bags_match_python_sqlite3() {
    run("sqlite3", false);
}

#[test]
fn mcap_bags_match_the_mcap_library() {
    run("mcap", true);
}

/// rosbags 0.11.9 yields none of the talker bags' 20 messages (their metadata.yaml QoS differs
/// from the storage's); rbag reads all 20.
#[test]
fn talker_bags_yield_every_message() {
    let Some(root) = corpus("talker_bags_yield_every_message", "ros2") else { return };
    for dir in [root.join("sqlite3/talker"), root.join("mcap/talker")] {
        let r = rbag_storage::open(&dir).unwrap();
        assert_eq!(r.messages(&Filter::default()).unwrap().count(), 20, "{}", dir.display());
        assert_eq!(r.nth("/topic", 9).unwrap().map(|m| !m.data.is_empty()), Some(true));
    }
}
