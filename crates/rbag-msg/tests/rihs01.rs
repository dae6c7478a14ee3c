//! RIHS01 hashes equal the real ones: (a) the `type_description_hash` rosbag2 recorded beside
//! every topic of the corpus bags, recomputed from the definition recorded with it (service
//! event topics included); (b) rosbags' `hash_rihs01` for every type of its ROS 2 Humble store,
//! computed from `.msg` text the oracle regenerates from the store.

use std::path::PathBuf;
use std::process::Command;

use rbag_msg::{Dialect, Registry};
use rbag_storage::rosbag2::TYPE_HASH_KEY;
use rbag_testkit::{oracle_python, repo_root};

/// The corpus's rosbag2 bags: each MCAP file, and each SQLite3 bag directory.
fn ros2_bags(root: &std::path::Path) -> Vec<PathBuf> {
    let mut bags = Vec::new();
    for dir in std::fs::read_dir(root.join("mcap")).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            if f.path().extension().is_some_and(|e| e == "mcap") {
                bags.push(f.path());
            }
        }
    }
    for dir in std::fs::read_dir(root.join("sqlite3")).into_iter().flatten().flatten() {
        bags.push(dir.path());
    }
    bags.sort();
    bags
}

#[test]
fn rihs01_from_bag_definitions_equals_the_recorded_hash() {
    let Some(root) = rbag_testkit::corpus("rihs01_from_bag_definitions_equals_the_recorded_hash", "ros2") else {
        return;
    };
    let (mut checked, mut events, mut without_definition) = (0, 0, 0);
    for bag in ros2_bags(&root) {
        let reader = rbag_storage::open(&bag).unwrap_or_else(|e| panic!("{}: {e}", bag.display()));
        for c in reader.connections() {
            let Some(want) = c.metadata.get(TYPE_HASH_KEY).filter(|h| !h.is_empty()) else { continue };
            if c.definition.trim().is_empty() {
                without_definition += 1;
                continue;
            }
            let what = format!("{} {} ({})", bag.display(), c.topic, c.message_type);
            let mut reg = Registry::new(Dialect::Ros2);
            reg.add_ros2_concatenated(&c.message_type, &c.definition).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(&reg.rihs01(&c.message_type).unwrap_or_else(|e| panic!("{what}: {e}")), want, "{what}");
            checked += 1;
            events += usize::from(c.message_type.ends_with("_Event"));
        }
    }
    assert!(checked >= 5 && events >= 2, "checked {checked} topics, {events} service-event topics");
    eprintln!("{checked} recorded RIHS01 hashes recomputed ({events} service-event topics; {without_definition} hashed topics without a recorded definition)");
}

#[test]
fn rihs01_of_every_humble_type_equals_rosbags() {
    let test = "rihs01_of_every_humble_type_equals_rosbags";
    let Some(python) = oracle_python(test) else { return };
    let out = Command::new(python).arg(repo_root().join("tests/oracle/rihs01_humble.py")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let types: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut reg = Registry::new(Dialect::Ros2);
    for t in &types {
        let name = t["name"].as_str().unwrap();
        reg.add(name, t["msg"].as_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut char_fixed = Vec::new();
    for t in &types {
        let name = t["name"].as_str().unwrap();
        let ours = reg.rihs01(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        // rosbags hashes a .msg `char` as FIELD_TYPE_CHAR; rosidl as uint8 (see the oracle).
        assert_eq!(ours, t["rihs01_char_as_uint8"].as_str().unwrap(), "{name}");
        if ours != t["rihs01"].as_str().unwrap() {
            char_fixed.push(name);
        }
    }
    assert!(types.len() >= 140, "rosbags' Humble store has only {} types", types.len());
    // Only types that have a `char` field, or nest one that has, may differ from rosbags' own.
    let with_char: Vec<&str> = types
        .iter()
        .filter(|t| t["msg"].as_str().unwrap().lines().any(|l| l.starts_with("char")))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in &char_fixed {
        let json = reg.type_description_json(name).unwrap();
        assert!(
            with_char.iter().any(|c| json.contains(&format!("\"{c}\""))),
            "{name} differs from rosbags without a char field"
        );
    }
    eprintln!(
        "{} Humble RIHS01 hashes equal rosbags' ({} differ only by rosbags' id for char: {char_fixed:?})",
        types.len(),
        char_fixed.len()
    );
}
