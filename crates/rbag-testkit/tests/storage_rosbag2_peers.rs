//! rosbag2 bags written by rbag, read by the reference readers: rosbags (both storages, plain
//! and compressed) and the mcap library (profile, schemas, channel metadata).

use std::path::Path;

use rbag_storage::{Compression, CompressionMode, Format, McapPreset, WriteOptions};
use rbag_testkit::{digest, oracle_python, ros2_dump, sample};

const START: u64 = 1_700_000_000_000_000_000;

fn write(path: &Path, format: Format, opts: &WriteOptions) -> Vec<(String, u64, u64, Vec<u8>)> {
    let mut w = rbag_storage::create(path, format, opts).unwrap();
    let written = sample::cdr::write(w.as_mut(), START, 2_000_000_000).unwrap();
    w.finish().unwrap();
    written
}

fn variants(format: Format) -> Vec<(&'static str, WriteOptions)> {
    let mut v = vec![("plain", WriteOptions::default())];
    let mut file = WriteOptions::default();
    file.rosbag2.compression_mode = CompressionMode::File;
    v.push(("file-zstd", file));
    match format {
        Format::Sqlite3 => {
            let mut m = WriteOptions::default();
            m.rosbag2.compression_mode = CompressionMode::Message;
            v.push(("message-zstd", m));
            let mut r = WriteOptions::default();
            r.rosbag2.sqlite_preset = rbag_storage::SqlitePreset::Resilient;
            v.push(("resilient", r));
        }
        _ => {
            v.push(("chunk-zstd", WriteOptions { compression: Compression::Zstd, ..WriteOptions::default() }));
            v.push(("chunk-lz4", WriteOptions { compression: Compression::Lz4, ..WriteOptions::default() }));
            for p in [McapPreset::Fastwrite, McapPreset::ZstdFast, McapPreset::ZstdSmall] {
                let mut o = WriteOptions::default();
                o.rosbag2.mcap_preset = p;
                v.push((
                    match p {
                        McapPreset::Fastwrite => "fastwrite",
                        McapPreset::ZstdFast => "zstd_fast",
                        _ => "zstd_small",
                    },
                    o,
                ));
            }
        }
    }
    // A Humble reader's metadata: version 5, integer QoS enums.
    let mut humble = WriteOptions { compression: Compression::None, ..WriteOptions::default() };
    humble.rosbag2.metadata_version = 5;
    humble.rosbag2.ros_distro = "humble".into();
    v.push(("humble-metadata", humble));
    v
}

fn check_rosbags(format: Format) {
    let test = format!("rosbags_reads_rbag_{}", format.name());
    let Some(python) = oracle_python(&test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (label, opts) in variants(format) {
        let dir = tmp.path().join(label);
        let written = write(&dir, format, &opts);
        let dump = ros2_dump(&python, "rosbags", &dir);
        assert!(dump["error"].is_null(), "{label}: rosbags failed: {}", dump["error"]);
        let got: Vec<(String, u64, String)> = dump["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m[0].as_str().unwrap().into(), m[1].as_u64().unwrap(), m[2].as_str().unwrap().into()))
            .collect();
        let want: Vec<(String, u64, String)> = written.iter().map(|m| (m.0.clone(), m.1, digest(&m.3))).collect();
        assert_eq!(got, want, "{label}: rosbags sees other messages");
        for (topic, ty, _, _) in sample::cdr::TOPICS {
            assert_eq!(dump["topics"][topic]["type"], *ty, "{label} {topic}");
        }
        let meta = std::fs::read_to_string(dir.join("metadata.yaml")).unwrap();
        if label == "humble-metadata" {
            assert!(meta.contains("version: 5") && meta.contains("reliability: 1"), "{meta}");
        } else {
            assert!(meta.contains("version: 9") && meta.contains("reliability: reliable"), "{meta}");
        }
    }
}

#[test]
fn rosbags_reads_rbag_sqlite3() {
    check_rosbags(Format::Sqlite3);
}

#[test]
fn rosbags_reads_rbag_mcap() {
    check_rosbags(Format::Mcap);
}

/// The mcap library sees a rosbag2 MCAP file: profile `ros2`, one `ros2msg` schema per type with
/// its text, channels with `cdr` encoding and the QoS metadata, the `rosbag2` metadata record,
/// and log/publish times as written.
#[test]
fn mcap_library_reads_rbag_mcap() {
    let Some(python) = oracle_python("mcap_library_reads_rbag_mcap") else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (label, opts) in variants(Format::Mcap).into_iter().filter(|v| v.0 != "file-zstd") {
        let dir = tmp.path().join(label);
        let written = write(&dir, Format::Mcap, &opts);
        let dump = ros2_dump(&python, "mcap", &dir.join(format!("{label}_0.mcap")));
        assert_eq!(dump["profile"], "ros2", "{label}");
        for (topic, ty, def, _) in sample::cdr::TOPICS {
            let ch = &dump["channels"][topic];
            assert_eq!(ch["message_encoding"], "cdr");
            assert_eq!(ch["schema"], *ty);
            assert!(ch["metadata"]["offered_qos_profiles"].as_str().unwrap().contains("reliability:"), "{label}: {ch}");
            assert_eq!(dump["schemas"][ty]["encoding"], "ros2msg");
            assert_eq!(dump["schemas"][ty]["data"], *def);
        }
        let stored = dump["metadata"]["rosbag2"]["serialized_metadata"].as_str().unwrap();
        assert!(stored.contains(&format!("message_count: {}", written.len())), "{stored}");
        let got: Vec<(String, u64, u64, String)> = dump["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m[0].as_str().unwrap().into(),
                    m[1].as_u64().unwrap(),
                    m[2].as_u64().unwrap(),
                    m[3].as_str().unwrap().into(),
                )
            })
            .collect();
        let want: Vec<(String, u64, u64, String)> =
            written.iter().map(|m| (m.0.clone(), m.1, m.2, digest(&m.3))).collect();
        assert_eq!(got, want, "{label}");
    }
}

/// Bags rosbags writes (both storages, plain, FILE and MESSAGE zstd) read in rbag as the bytes
/// and times rosbags wrote.
#[test]
fn rbag_reads_rosbags_bags() {
    let Some(python) = oracle_python("rbag_reads_rosbags_bags") else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (storage, mode) in
        [("sqlite3", "none"), ("sqlite3", "file"), ("sqlite3", "message"), ("mcap", "none"), ("mcap", "file")]
    {
        let dir = tmp.path().join(format!("{storage}_{mode}"));
        let script = rbag_testkit::repo_root().join("tests/oracle/rosbags_write.py");
        let out = std::process::Command::new(&python).arg(script).arg(&dir).arg(storage).arg(mode).output().unwrap();
        assert!(out.status.success(), "rosbags writer: {}", String::from_utf8_lossy(&out.stderr));
        let written: Vec<(String, u64, String)> = serde_json::from_slice(&out.stdout).unwrap();
        let r = rbag_storage::open(&dir).unwrap();
        let got: Vec<(String, u64, String)> = r
            .messages(&rbag_storage::Filter::default())
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                (r.connection(m.connection).unwrap().topic.clone(), m.log_time, digest(&m.data))
            })
            .collect();
        assert_eq!(got, written, "{storage} {mode}");
        assert_eq!(r.info().unwrap().message_count, 300);
    }
}
