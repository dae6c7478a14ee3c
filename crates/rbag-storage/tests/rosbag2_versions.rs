//! Every SQLite schema version (1–4) and every metadata.yaml version (1–9) rosbag2 has written.
//! The corpus has only schema 2 and 4 and metadata 4, 7 and 8, so the others are built here in
//! the shapes rosbag2's sources give (docs/rosbag2-formats.md): the exact CREATE TABLE
//! statements of each schema, and each metadata version's keys in rosbag2's order.

use std::path::Path;

use rbag_storage::Filter;

const START: i64 = 1_600_000_000_000_000_000;
const QOS_INT: &str = "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  deadline:\n    sec: 9223372036\n    nsec: 854775807\n  lifespan:\n    sec: 9223372036\n    nsec: 854775807\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 9223372036\n    nsec: 854775807\n  avoid_ros_namespace_conventions: false";

fn topics_ddl(schema: u32) -> &'static str {
    match schema {
        1 => "CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,serialization_format TEXT NOT NULL);",
        2 | 3 => "CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,serialization_format TEXT NOT NULL,offered_qos_profiles TEXT NOT NULL);",
        _ => "CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,serialization_format TEXT NOT NULL,offered_qos_profiles TEXT NOT NULL,type_description_hash TEXT NOT NULL);",
    }
}

/// A `.db3` as rosbag2 with schema `schema` wrote it: /a (3 messages) and /b (2 messages).
fn db3(path: &Path, schema: u32) {
    let db = rusqlite::Connection::open(path).unwrap();
    if schema >= 3 {
        db.execute_batch("CREATE TABLE schema(schema_version INTEGER PRIMARY KEY,ros_distro TEXT NOT NULL);").unwrap();
        db.execute(
            "INSERT INTO schema (schema_version, ros_distro) VALUES (?1, ?2)",
            rusqlite::params![schema, if schema == 3 { "humble" } else { "iron" }],
        )
        .unwrap();
        db.execute_batch(
            "CREATE TABLE metadata(id INTEGER PRIMARY KEY,metadata_version INTEGER NOT NULL,metadata TEXT NOT NULL);",
        )
        .unwrap();
    }
    db.execute_batch(topics_ddl(schema)).unwrap();
    if schema >= 4 {
        db.execute_batch("CREATE TABLE message_definitions(id INTEGER PRIMARY KEY,topic_type TEXT NOT NULL,encoding TEXT NOT NULL,encoded_message_definition TEXT NOT NULL,type_description_hash TEXT NOT NULL);").unwrap();
        db.execute("INSERT INTO message_definitions (topic_type, encoding, encoded_message_definition, type_description_hash) VALUES ('std_msgs/msg/String', 'ros2msg', 'string data', 'RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18')", []).unwrap();
    }
    db.execute_batch("CREATE TABLE messages(id INTEGER PRIMARY KEY,topic_id INTEGER NOT NULL,timestamp INTEGER NOT NULL, data BLOB NOT NULL); CREATE INDEX timestamp_idx ON messages (timestamp ASC);").unwrap();
    for (id, name) in [(1, "/a"), (2, "/b")] {
        match schema {
            1 => db.execute("INSERT INTO topics VALUES (?1, ?2, 'std_msgs/msg/String', 'cdr')", rusqlite::params![id, name]),
            2 | 3 => db.execute("INSERT INTO topics VALUES (?1, ?2, 'std_msgs/msg/String', 'cdr', ?3)", rusqlite::params![id, name, QOS_INT]),
            _ => db.execute("INSERT INTO topics VALUES (?1, ?2, 'std_msgs/msg/String', 'cdr', ?3, 'RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18')", rusqlite::params![id, name, QOS_INT]),
        }
        .unwrap();
    }
    for (i, topic) in [1, 2, 1, 1, 2].iter().enumerate() {
        db.execute(
            "INSERT INTO messages (topic_id, timestamp, data) VALUES (?1, ?2, ?3)",
            rusqlite::params![topic, START + i as i64 * 1000, vec![0u8, 1, 0, 0, i as u8]],
        )
        .unwrap();
    }
}

/// metadata.yaml as rosbag2 writes `version`: the keys that version has, in its order.
fn metadata_yaml(version: u32, file: &str, dir: &str) -> String {
    let qos = |indent: &str| match version {
        0..=3 => String::new(),
        4..=8 => format!("{indent}offered_qos_profiles: \"{}\"\n", QOS_INT.replace('\n', "\\n")),
        _ => {
            let list: String = QOS_INT
                .replace("history: 3", "history: unknown")
                .replace("reliability: 1", "reliability: reliable")
                .replace("durability: 2", "durability: volatile")
                .replace("liveliness: 1", "liveliness: automatic")
                .lines()
                .map(|l| format!("{indent}  {l}\n"))
                .collect();
            format!("{indent}offered_qos_profiles:\n{list}")
        }
    };
    let hash = |indent: &str| {
        if version >= 7 {
            format!("{indent}type_description_hash: RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18\n")
        } else {
            String::new()
        }
    };
    let topic = |name: &str, n: u32| {
        format!("    - topic_metadata:\n        name: {name}\n        type: std_msgs/msg/String\n        serialization_format: cdr\n{}{}      message_count: {n}\n", qos("        "), hash("        "))
    };
    // Up to v3 the paths carried the bag directory in front.
    let path = if version <= 3 { format!("{dir}/{file}") } else { file.to_string() };
    let mut y = format!("rosbag2_bagfile_information:\n  version: {version}\n  storage_identifier: sqlite3\n");
    if version < 5 {
        y += &format!("  relative_file_paths:\n    - {path}\n");
    }
    y += &format!("  duration:\n    nanoseconds: 4000\n  starting_time:\n    nanoseconds_since_epoch: {START}\n  message_count: 5\n  topics_with_message_count:\n{}{}", topic("/a", 3), topic("/b", 2));
    if version >= 3 {
        y += "  compression_format: \"\"\n  compression_mode: \"\"\n";
    }
    if version >= 5 {
        y += &format!("  relative_file_paths:\n    - {path}\n  files:\n    - path: {file}\n      starting_time:\n        nanoseconds_since_epoch: {START}\n      duration:\n        nanoseconds: 4000\n      message_count: 5\n");
    }
    if version >= 6 {
        y += "  custom_data: ~\n";
    }
    if version >= 8 {
        y += "  ros_distro: jazzy\n";
    }
    y
}

#[test]
fn every_schema_and_metadata_version_reads() {
    let tmp = tempfile::tempdir().unwrap();
    // The pairs rosbag2 releases wrote: (schema, metadata version).
    let pairs = [(1, 1), (1, 2), (2, 3), (2, 4), (3, 5), (3, 6), (4, 7), (4, 8), (4, 9)];
    for (schema, version) in pairs {
        let name = format!("bag_s{schema}_m{version}");
        let dir = tmp.path().join(&name);
        std::fs::create_dir(&dir).unwrap();
        let file = format!("{name}_0.db3");
        db3(&dir.join(&file), schema);
        std::fs::write(dir.join("metadata.yaml"), metadata_yaml(version, &file, &name)).unwrap();

        let r = rbag_storage::open(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        let info = r.info().unwrap();
        assert_eq!(info.message_count, 5, "{name}");
        assert_eq!(info.version, schema.to_string(), "{name}: schema version");
        assert_eq!(info.properties["metadata_version"], version.to_string(), "{name}");
        assert_eq!((info.start_ns, info.end_ns), (Some(START as u64), Some(START as u64 + 4000)), "{name}");
        let msgs: Vec<(String, u64, Vec<u8>)> = r
            .messages(&Filter::default())
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                (r.connection(m.connection).unwrap().topic.clone(), m.log_time, m.data.to_vec())
            })
            .collect();
        assert_eq!(msgs.len(), 5);
        assert_eq!(msgs.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["/a", "/b", "/a", "/a", "/b"], "{name}");
        let a = r.connections().iter().find(|c| c.topic == "/a").unwrap();
        assert_eq!(a.metadata.contains_key("offered_qos_profiles"), schema >= 2, "{name}");
        assert_eq!(a.definition, if schema >= 4 { "string data" } else { "" }, "{name}");
        let meta = rbag_storage::rosbag2::metadata::BagMetadata::read(&dir.join("metadata.yaml")).unwrap();
        assert_eq!(meta.topics[0].qos.len(), usize::from(version >= 4), "{name}: QoS in metadata");
        if version >= 4 {
            assert_eq!((meta.topics[0].qos[0].reliability, meta.topics[0].qos[0].durability), (1, 2), "{name}");
        }
        assert_eq!(meta.relative_file_paths, std::slice::from_ref(&file), "{name}: bare file names");
    }
}
