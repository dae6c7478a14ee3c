//! `rbag info`, `convert` and `reindex` on rosbag2 bags, run as a user runs them.

use std::collections::BTreeMap;
use std::path::Path;

use rbag_testkit::{corpus, oracle_python, ros2_dump, sample};
use serde_json::Value;

mod common;
use common::*;

/// A rosbag2 bag of CDR sample messages written by the library (no corpus needed).
fn cdr_bag(path: &Path, format: rbag_storage::Format, seconds: u64) -> Vec<sample::cdr::Written> {
    let mut w = rbag_storage::create(path, format, &Default::default()).unwrap();
    let written = sample::cdr::write(w.as_mut(), START, seconds * 1_000_000_000).unwrap();
    w.finish().unwrap();
    written
}

fn json(o: &std::process::Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// `rbag info --json` on every corpus bag agrees with its metadata.yaml (read by ruamel.yaml)
/// on topics, types and counts, and with the storage files (read by Python's sqlite3 or the
/// mcap library) on start and end.
#[test]
fn info_json_agrees_with_metadata_and_storage() {
    let test = "info_json_agrees_with_metadata_and_storage";
    let (Some(root), Some(python)) = (corpus(test, "ros2"), oracle_python(test)) else {
        return;
    };
    for storage in ["sqlite3", "mcap"] {
        for entry in std::fs::read_dir(root.join(storage)).unwrap() {
            let dir = entry.unwrap().path();
            let name = dir.display().to_string();
            let info = json(&run(&[&"info", &"--json", &dir]));
            let meta = &ros2_dump(&python, "metadata", &dir.join("metadata.yaml"))["rosbag2_bagfile_information"];
            assert_eq!(info["storage"], storage, "{name}");
            assert_eq!(info["message_count"], meta["message_count"], "{name}: message count");
            let topics: BTreeMap<String, &Value> = info["topics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| (t["name"].as_str().unwrap().to_string(), t))
                .collect();
            let listed = meta["topics_with_message_count"].as_array().unwrap();
            assert_eq!(topics.len(), listed.len(), "{name}: topics");
            for t in listed {
                let m = &t["topic_metadata"];
                let ours = topics[m["name"].as_str().unwrap()];
                assert_eq!(ours["type"], m["type"], "{name}");
                assert_eq!(ours["message_count"], t["message_count"], "{name} {}", m["name"]);
                assert_eq!(ours["encoding"], m["serialization_format"], "{name}");
            }
            let files: Vec<&str> =
                meta["relative_file_paths"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
            let ours: Vec<String> = info["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| Path::new(f.as_str().unwrap()).file_name().unwrap().to_string_lossy().into_owned())
                .collect();
            assert_eq!(ours, files, "{name}: files");
            // Start and end from the storage itself.
            let (mut start, mut end) = (None::<u64>, None::<u64>);
            for f in &files {
                let d = ros2_dump(&python, if storage == "mcap" { "mcap" } else { "sqlite" }, &dir.join(f));
                start = [start, d["start_ns"].as_u64()].into_iter().flatten().min();
                end = [end, d["end_ns"].as_u64()].into_iter().flatten().max();
            }
            assert_eq!(info["start_ns"].as_u64(), start, "{name}: start");
            assert_eq!(info["end_ns"].as_u64(), end, "{name}: end");
            // metadata.yaml agrees too, except where rosbag2 of that time wrote the last file's
            // start for the bag's (the split `wbag`).
            let meta_start = meta["starting_time"]["nanoseconds_since_epoch"].as_u64();
            if let (Some(s), Some(ms)) = (start, meta_start) {
                if !name.ends_with("wbag") {
                    assert_eq!(ms, s, "{name}: metadata start");
                    assert_eq!(
                        ms + meta["duration"]["nanoseconds"].as_u64().unwrap(),
                        end.unwrap(),
                        "{name}: metadata end"
                    );
                }
            }
        }
    }
}

/// SQLite3 ⇄ MCAP ⇄ single files, with filters, a time cut, a merge of two inputs and splits:
/// the bytes and times that come out are the ones that went in.
#[test]
fn convert_between_rosbag2_storages() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let written = cdr_bag(&src, rbag_storage::Format::Mcap, 3);
    let expect = |keep: &dyn Fn(&sample::cdr::Written) -> bool| -> Vec<(String, u64, Vec<u8>)> {
        written.iter().filter(|m| keep(m)).map(|m| (m.0.clone(), m.1, m.3.clone())).collect()
    };

    let db = tmp.path().join("as_sqlite");
    let o = run(&[&"convert", &src, &"-o", &db, &"-s", &"sqlite3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(db.join("metadata.yaml").exists() && db.join("as_sqlite_0.db3").exists());
    assert_eq!(read_all(&db), expect(&|_| true));

    let back = tmp.path().join("back.mcap");
    let o = run(&[&"convert", &db, &"-o", &back, &"--compression", &"zstd"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read_all(&back), expect(&|_| true));
    let info = json(&run(&[&"info", &"--json", &back]));
    assert_eq!(info["compression"][0]["name"], "zstd");
    assert_eq!(info["properties"]["profile"], "ros2");

    // Filters and a cut.
    let (s, e) = (START + 500_000_000, START + 2_000_000_000);
    let cut = tmp.path().join("cut.db3");
    let o = run(&[
        &"convert",
        &src,
        &"-o",
        &cut,
        &"--topics",
        &"/chatter",
        &"/point",
        &"--start",
        &format!("{s}ns"),
        &"--end",
        &format!("{e}ns"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read_all(&cut), expect(&|m| m.0 != "/speed" && m.1 >= s && m.1 < e));
    let ex = tmp.path().join("ex");
    let o = run(&[&"convert", &src, &"-o", &ex, &"-s", &"sqlite3", &"-x", &"^/ch", &"--compression-mode", &"message"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read_all(&ex), expect(&|m| m.0 != "/chatter"));

    // Two inputs merged in time order; split by duration into several files.
    let later = tmp.path().join("later.mcap");
    let mut w = rbag_storage::create(&later, rbag_storage::Format::Mcap, &Default::default()).unwrap();
    let more = sample::cdr::write(w.as_mut(), START + 1_234_567, 1_000_000_000).unwrap();
    w.finish().unwrap();
    let merged = tmp.path().join("merged");
    let o = run(&[&"convert", &src, &later, &"-o", &merged, &"-s", &"mcap", &"-d", &"0.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut all: Vec<_> = written.iter().chain(more.iter()).map(|m| (m.0.clone(), m.1, m.3.clone())).collect();
    all.sort_by_key(|m| m.1);
    assert_eq!(read_all(&merged), all);
    let info = json(&run(&[&"info", &"--json", &merged]));
    assert!(info["files"].as_array().unwrap().len() >= 5, "{info}");
    assert_eq!(info["message_count"].as_u64().unwrap() as usize, all.len());
}

/// A ROS 1 bag goes to MCAP with its ROS 1 encoding (profile ros1) and back unchanged.
#[test]
fn ros1_data_keeps_its_encoding() {
    let tmp = tempfile::tempdir().unwrap();
    let bag = sample_bag(tmp.path(), "in.bag", 2);
    let out = tmp.path().join("out.mcap");
    let o = run(&[&"convert", &bag, &"-o", &out, &"--encoding", &"ros1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read_all(&out), read_all(&bag));
    let info = json(&run(&[&"info", &"--json", &out]));
    assert_eq!(info["properties"]["profile"], "ros1");
    assert_eq!(info["topics"][0]["encoding"], "ros1");
    // And back to a ROS 1 bag, identical.
    let again = tmp.path().join("again.bag");
    let o = run(&[&"convert", &out, &"-o", &again]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read_all(&again), read_all(&bag));
}

/// ROS 1 → SQLite3 (CDR) → ROS 1 re-encodes twice and gives back the same bytes (the sample
/// types have no Header), latching included; MCAP output is CDR by default too.
#[test]
fn ros1_to_cdr_and_back_is_lossless() {
    let tmp = tempfile::tempdir().unwrap();
    let bag = sample_bag(tmp.path(), "in.bag", 2);
    let db3 = tmp.path().join("x.db3");
    let o = run(&[&"convert", &bag, &"-o", &db3]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("re-encoded"), "{}", stderr(&o));
    let info = json(&run(&[&"info", &"--json", &db3]));
    let types: Vec<&str> = info["topics"].as_array().unwrap().iter().map(|t| t["type"].as_str().unwrap()).collect();
    assert!(types.contains(&"std_msgs/msg/String") && types.contains(&"geometry_msgs/msg/Point"), "{types:?}");
    let back = tmp.path().join("back.bag");
    let o = run(&[&"convert", &db3, &"-o", &back]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read_all(&back), read_all(&bag));
    let r = rbag_storage::open(&back).unwrap();
    let latched = r.connections().iter().find(|c| c.topic == "/robot_description").unwrap();
    assert_eq!(latched.metadata.get("latching").map(String::as_str), Some("1"));
    assert_eq!(latched.metadata["md5sum"], "992ce8a1687cec8c8bd883ec73ca41d1");
    let mcap = tmp.path().join("y.mcap");
    let o = run(&[&"convert", &bag, &"-o", &mcap]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let info = json(&run(&[&"info", &"--json", &mcap]));
    assert_eq!(info["properties"]["profile"], "ros2");
    let o = run(&[&"convert", &bag, &"-o", &tmp.path().join("z.mcap"), &"--encoding", &"xml"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// `rbag reindex` on a copy of the corpus `wbag` without its metadata.yaml rebuilds one with the
/// same topics, counts and files, and per-file times that match the storage.
#[test]
fn reindex_rebuilds_metadata_yaml() {
    let test = "reindex_rebuilds_metadata_yaml";
    let (Some(root), Some(python)) = (corpus(test, "ros2"), oracle_python(test)) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for storage in ["sqlite3", "mcap"] {
        let orig = root.join(storage).join("wbag");
        let copy = tmp.path().join(storage).join("wbag");
        copy_dir(&orig, &copy);
        std::fs::remove_file(copy.join("metadata.yaml")).unwrap();
        // Readable before the repair, with a warning.
        let o = run(&[&"info", &copy]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stderr(&o).contains("no metadata.yaml"), "{}", stderr(&o));
        let o = run(&[&"reindex", &copy]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let old = &ros2_dump(&python, "metadata", &orig.join("metadata.yaml"))["rosbag2_bagfile_information"];
        let new = &ros2_dump(&python, "metadata", &copy.join("metadata.yaml"))["rosbag2_bagfile_information"];
        assert_eq!(new["relative_file_paths"], old["relative_file_paths"], "{storage}");
        assert_eq!(new["message_count"], old["message_count"]);
        assert_eq!(new["storage_identifier"], storage);
        let counts = |m: &Value| -> BTreeMap<String, (String, u64)> {
            m["topics_with_message_count"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["topic_metadata"]["name"].as_str().unwrap().into(),
                        (t["topic_metadata"]["type"].as_str().unwrap().into(), t["message_count"].as_u64().unwrap()),
                    )
                })
                .collect()
        };
        assert_eq!(counts(new), counts(old), "{storage}: topics");
        let files = new["files"].as_array().unwrap();
        assert_eq!(files.len(), 5);
        for f in files {
            let d = ros2_dump(
                &python,
                if storage == "mcap" { "mcap" } else { "sqlite" },
                &copy.join(f["path"].as_str().unwrap()),
            );
            assert_eq!(f["message_count"].as_u64().unwrap() as usize, d["messages"].as_array().unwrap().len());
            assert_eq!(f["starting_time"]["nanoseconds_since_epoch"], d["start_ns"]);
            assert_eq!(
                f["duration"]["nanoseconds"].as_u64(),
                Some(d["end_ns"].as_u64().unwrap() - d["start_ns"].as_u64().unwrap())
            );
        }
        assert_eq!(read_all(&copy), read_all(&orig), "{storage}: the repaired bag reads the same");
    }
}

fn flip_byte(path: &Path, at: u64) {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut f = std::fs::File::options().read(true).write(true).open(path).unwrap();
    let mut b = [0u8];
    f.seek(SeekFrom::Start(at)).unwrap();
    f.read_exact(&mut b).unwrap();
    f.seek(SeekFrom::Start(at)).unwrap();
    f.write_all(&[b[0] ^ 0xff]).unwrap();
}

/// Damaged rosbag2 input: a clear error that names the file and what is wrong, never a panic;
/// a truncated MCAP (a recorder that died) is read by scanning, with a warning.
#[test]
fn bad_rosbag2_input_gets_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.mcap");

    let garbage = tmp.path().join("corrupt.db3");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(std::iter::repeat_n(0xa5u8, 8192));
    std::fs::write(&garbage, &bytes).unwrap();
    assert_clear_error(&run(&[&"info", &garbage]), &["corrupt.db3"]);

    let db = tmp.path().join("half.db3");
    cdr_bag(&db, rbag_storage::Format::Sqlite3, 5);
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::File::options().write(true).open(&db).unwrap().set_len(len / 2).unwrap();
    let o = run(&[&"convert", &db, &"-o", &out]);
    assert_clear_error(&o, &["half.db3"]);
    let _ = std::fs::remove_file(&out);

    let crc = tmp.path().join("crc.mcap");
    cdr_bag(&crc, rbag_storage::Format::Mcap, 1);
    flip_byte(&crc, 600);
    assert_clear_error(&run(&[&"convert", &crc, &"-o", &out]), &["crc.mcap", "CRC"]);

    let dir = tmp.path().join("missing");
    cdr_bag(&dir, rbag_storage::Format::Sqlite3, 1);
    std::fs::remove_file(dir.join("missing_0.db3")).unwrap();
    assert_clear_error(&run(&[&"info", &dir]), &["metadata.yaml", "missing_0.db3", "missing"]);

    let dir = tmp.path().join("future");
    cdr_bag(&dir, rbag_storage::Format::Mcap, 1);
    let meta = std::fs::read_to_string(dir.join("metadata.yaml")).unwrap().replace("version: 9", "version: 42");
    std::fs::write(dir.join("metadata.yaml"), meta).unwrap();
    assert_clear_error(&run(&[&"info", &dir]), &["metadata.yaml", "unknown metadata version 42"]);

    // A recorder that died: the summary and the end of the data are gone. One big uncompressed
    // chunk, and many small zstd chunks.
    let small_zstd = rbag_storage::WriteOptions {
        compression: rbag_storage::Compression::Zstd,
        chunk_size: 4096,
        ..Default::default()
    };
    for (name, opts) in [("torn.mcap", rbag_storage::WriteOptions::default()), ("torn_zstd.mcap", small_zstd)] {
        let torn = tmp.path().join(name);
        let mut w = rbag_storage::create(&torn, rbag_storage::Format::Mcap, &opts).unwrap();
        let written = sample::cdr::write(w.as_mut(), START, 10_000_000_000).unwrap();
        w.finish().unwrap();
        let len = std::fs::metadata(&torn).unwrap().len();
        std::fs::File::options().write(true).open(&torn).unwrap().set_len(len * 7 / 10).unwrap();
        let o = run(&[&"info", &"--json", &torn]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stderr(&o).contains("no summary"), "{}", stderr(&o));
        let kept = read_all(&torn);
        assert!(kept.len() > written.len() / 2 && kept.len() < written.len(), "{} of {}", kept.len(), written.len());
        let prefix: Vec<_> = written.iter().take(kept.len()).map(|m| (m.0.clone(), m.1, m.3.clone())).collect();
        assert_eq!(kept, prefix, "{name}");
    }
}
