//! Conformance on real ROS 1 bags (../shared/corpus/ros1, recorded by Debian's C++ rosbag):
//! rbag must report what Debian's Python `rosbag` reports, and yield the same bytes and times.

use std::collections::BTreeMap;
use std::process::Command;

use rbag_storage::{Filter, StorageReader};
use rbag_testkit::{corpus, digest, ros1_dump, ros_env, rosbag_python};
use serde_json::Value;

/// Checks `reader` against an oracle dump: per-topic counts/types/MD5s, start/end, and every
/// message's bytes and time, in the same order.
fn check_against(name: &str, reader: &dyn StorageReader, oracle: &Value) {
    let info = reader.info().unwrap();
    let mut topics: BTreeMap<String, (String, String, u64, u64)> = BTreeMap::new();
    for c in reader.connections() {
        let t = topics.entry(c.topic.clone()).or_insert((c.message_type.clone(), c.metadata["md5sum"].clone(), 0, 0));
        t.2 += info.connections[&c.id].message_count;
        t.3 += 1;
    }
    let want = oracle["topics"].as_object().unwrap();
    assert_eq!(topics.len(), want.len(), "{name}: topic count");
    for (topic, w) in want {
        let got = topics.get(topic).unwrap_or_else(|| panic!("{name}: rbag lacks topic {topic}"));
        assert_eq!(got.0, w["type"].as_str().unwrap().replace("/msg/", "/"), "{name} {topic}: type");
        assert_eq!(got.1, w["md5sum"].as_str().unwrap(), "{name} {topic}: md5sum");
        assert_eq!(got.2, w["message_count"].as_u64().unwrap(), "{name} {topic}: message count");
        assert_eq!(got.3, w["connections"].as_u64().unwrap(), "{name} {topic}: connections");
    }
    assert_eq!(info.start_ns, oracle["start_ns"].as_u64(), "{name}: start");
    assert_eq!(info.end_ns, oracle["end_ns"].as_u64(), "{name}: end");

    let topic_of: BTreeMap<u32, String> = reader.connections().iter().map(|c| (c.id, c.topic.clone())).collect();
    let ours: Vec<(String, u64, String)> = reader
        .messages(&Filter::default())
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (topic_of[&m.connection].clone(), m.log_time, digest(&m.data))
        })
        .collect();
    let theirs: Vec<(String, u64, String)> = oracle["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m[0].as_str().unwrap().to_string(), m[1].as_u64().unwrap(), m[2].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(ours.len(), theirs.len(), "{name}: message count");
    assert!(ours.windows(2).all(|w| w[0].1 <= w[1].1), "{name}: times must not decrease");
    for topic in topics.keys() {
        let a: Vec<_> = ours.iter().filter(|m| &m.0 == topic).collect();
        let b: Vec<_> = theirs.iter().filter(|m| &m.0 == topic).collect();
        assert_eq!(a, b, "{name} {topic}: bytes and times, in order");
    }
    assert_eq!(ours, theirs, "{name}: the whole sequence, ties included");
}

#[test]
fn indexed_corpus_bags_match_debian_rosbag() {
    let test = "indexed_corpus_bags_match_debian_rosbag";
    let (Some(dir), Some(py)) = (corpus(test, "ros1"), rosbag_python(test)) else { return };
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "bag") {
            let reader = rbag_storage::open(&path).unwrap();
            assert!(reader.info().unwrap().indexed);
            check_against(&path.display().to_string(), reader.as_ref(), &ros1_dump(&py, "rosbag", &path));
            n += 1;
        }
    }
    assert!(n >= 4, "expected the corpus's indexed bags, found {n}");
}

/// Debian's `rosbag reindex` drops the unterminated chunk of `crashed.bag.active` whole (it
/// keeps 0 of its messages), so rbag must keep a superset of what it keeps. The messages rbag
/// keeps are then checked by Debian's rosbag itself: rbag's reindexed bag is read (and every
/// message deserialised) by rosbag, with the same bytes and times rbag reads from the `.active`.
#[test]
fn crashed_bag_keeps_more_than_rosbag_reindex_and_rosbag_agrees() {
    let test = "crashed_bag_keeps_more_than_rosbag_reindex_and_rosbag_agrees";
    let (Some(dir), Some(py)) = (corpus(test, "ros1"), rosbag_python(test)) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("crashed.bag");
    std::fs::copy(dir.join("crashed.bag.active"), &copy).unwrap();
    // The corpus is read-only and the copy inherits that; rosbag reindex must write it.
    std::fs::set_permissions(&copy, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    std::fs::create_dir(tmp.path().join("out")).unwrap();
    let mut cmd = Command::new("/usr/bin/rosbag");
    cmd.arg("reindex").arg("--output-dir").arg(tmp.path().join("out")).arg(&copy);
    ros_env(&mut cmd, tmp.path());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "rosbag reindex: {}", String::from_utf8_lossy(&out.stderr));
    let theirs = ros1_dump(&py, "rosbag", &tmp.path().join("out/crashed.bag"));

    let active = dir.join("crashed.bag.active");
    let reader = rbag_storage::open(&active).unwrap();
    assert!(!reader.info().unwrap().indexed, "an unindexed bag must say so");
    let ours = reader.messages(&Filter::default()).unwrap().map(|m| m.unwrap()).collect::<Vec<_>>();
    let their_msgs = theirs["messages"].as_array().unwrap();
    assert!(
        ours.len() >= their_msgs.len() && !ours.is_empty(),
        "rbag {} vs rosbag reindex {}",
        ours.len(),
        their_msgs.len()
    );
    let digests: std::collections::HashSet<(u64, String)> =
        ours.iter().map(|m| (m.log_time, digest(&m.data))).collect();
    for m in their_msgs {
        assert!(
            digests.contains(&(m[1].as_u64().unwrap(), m[2].as_str().unwrap().to_string())),
            "rosbag kept a message rbag lacks: {m}"
        );
    }

    let repaired = tmp.path().join("rbag-repaired.bag");
    let report = rbag_storage::ros1::reindex(&active, &repaired, None, false).unwrap();
    assert_eq!(report.messages_kept, ours.len() as u64);
    let oracle = ros1_dump(&py, "rosbag", &repaired);
    assert_eq!(oracle["decoded"].as_u64(), Some(ours.len() as u64), "rosbag deserialises every kept message");
    check_against("crashed.bag.active", reader.as_ref(), &oracle);
}

#[test]
fn corpus_bags_serve_nth_and_windows_through_the_index() {
    let test = "corpus_bags_serve_nth_and_windows_through_the_index";
    let Some(dir) = corpus(test, "ros1") else { return };
    for name in ["small_chunks.bag", "multi_lz4.bag", "multi_bz2.bag"] {
        let path = dir.join(name);
        let all: Vec<_> =
            rbag_storage::open(&path).unwrap().messages(&Filter::default()).unwrap().map(Result::unwrap).collect();
        let reader = rbag_storage::open(&path).unwrap();
        let ids: Vec<u32> = reader.connections().iter().filter(|c| c.topic == "/chatter").map(|c| c.id).collect();
        let chatter: Vec<_> = all.iter().filter(|m| ids.contains(&m.connection)).cloned().collect();
        for n in [0, 1, chatter.len() / 2, chatter.len() - 1] {
            assert_eq!(reader.nth("/chatter", n as u64).unwrap().as_ref(), Some(&chatter[n]), "{name} nth {n}");
        }
        assert_eq!(reader.nth("/chatter", chatter.len() as u64).unwrap(), None);
        let t = chatter[chatter.len() / 2].log_time;
        let from: Vec<_> = reader.seek(t).unwrap().map(Result::unwrap).collect();
        assert_eq!(from, all.iter().filter(|m| m.log_time >= t).cloned().collect::<Vec<_>>(), "{name} seek");
    }
}
