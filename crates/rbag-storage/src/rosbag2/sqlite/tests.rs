//! Tests of the SQLite3 reader and writer together.

use super::super::{FileWriter, QOS_KEY, TYPE_HASH_KEY};
use super::reader::*;
use super::schema::*;
use super::writer::*;
use crate::*;
use regex::Regex;
use rusqlite::params_from_iter;
use std::collections::BTreeMap;
use std::path::Path;

fn conn(topic: &str, ty: &str) -> Connection {
    let mut metadata = BTreeMap::new();
    metadata.insert(QOS_KEY.to_string(), "- history: 3\n  depth: 0".to_string());
    metadata.insert(TYPE_HASH_KEY.to_string(), format!("RIHS01_{}", "ab".repeat(32)));
    Connection {
        id: 0,
        topic: topic.into(),
        message_type: ty.into(),
        encoding: "cdr".into(),
        definition: "string data".into(),
        definition_encoding: "ros2msg".into(),
        metadata,
    }
}

/// A bag with /a (even k) and /b (odd k) at time 1000 + 10 k.
fn write_bag(path: &Path, n: u64, preset: SqlitePreset) -> Vec<(u32, u64, Vec<u8>)> {
    let mut options = WriteOptions::default();
    options.rosbag2.sqlite_preset = preset;
    options.rosbag2.ros_distro = "jazzy".into();
    let mut w = SqliteWriter::create(path, &options).unwrap();
    let a = w.add_connection(&conn("/a", "std_msgs/msg/String")).unwrap();
    let mut b_conn = conn("/b", "std_msgs/msg/Header");
    b_conn.metadata.clear();
    b_conn.definition.clear();
    b_conn.definition_encoding.clear();
    let b = w.add_connection(&b_conn).unwrap();
    assert_eq!((a, b), (1, 2));
    let mut written = Vec::new();
    for k in 0..n {
        let c = if k % 2 == 0 { a } else { b };
        let data: Vec<u8> = (0..(k % 50) as u8).collect();
        w.write(c, 1000 + 10 * k, 0, &data).unwrap();
        written.push((c, 1000 + 10 * k, data));
    }
    w.set_bag_metadata("rosbag2_bagfile_information:\n  version: 9\n  storage_identifier: sqlite3\n");
    Box::new(w).finish().unwrap();
    written
}

fn read_all(r: &SqliteReader, f: &Filter) -> Vec<(u32, u64, Vec<u8>)> {
    r.messages(f)
        .unwrap()
        .map(|m| m.map(|m| (m.connection, m.log_time, m.data.to_vec())))
        .collect::<Result<_>>()
        .unwrap()
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x_0.db3");
    let written = write_bag(&path, 1000, SqlitePreset::Default);
    let r = SqliteReader::open(&path).unwrap();
    assert_eq!(r.schema_version(), 4);
    assert_eq!(r.ros_distro().as_deref(), Some("jazzy"));
    assert_eq!(r.bag_metadata().as_deref(), Some("version: 9\nstorage_identifier: sqlite3\n"));
    let conns = r.connections();
    assert_eq!(conns.len(), 2);
    let mut expected = conn("/a", "std_msgs/msg/String");
    expected.id = 1;
    assert_eq!(conns[0], expected);
    assert_eq!((conns[1].id, conns[1].topic.as_str()), (2, "/b"));
    assert!(conns[1].metadata.is_empty() && conns[1].definition.is_empty() && conns[1].definition_encoding.is_empty());

    assert_eq!(read_all(&r, &Filter::default()), written);
    let info = r.info().unwrap();
    assert_eq!((info.format, info.version.as_str(), info.indexed), ("sqlite3", "4", true));
    assert_eq!(info.message_count, 1000);
    assert_eq!((info.start_ns, info.end_ns), (Some(1000), Some(1000 + 10 * 999)));
    let a_bytes: u64 = written.iter().filter(|m| m.0 == 1).map(|m| m.2.len() as u64).sum();
    assert_eq!(
        info.connections[&1],
        ConnectionStats { message_count: 500, data_bytes: Some(a_bytes), estimated_bytes: None }
    );
    assert_eq!(info.connections[&2].message_count, 500);
    assert_eq!(info.size_bytes, std::fs::metadata(&path).unwrap().len());
    let total: u64 = written.iter().map(|m| m.2.len() as u64).sum();
    assert_eq!(r.stats().bytes_read, total);

    let periods = r.median_periods().unwrap();
    assert_eq!(periods.get("/a"), Some(&20));
    assert_eq!(periods.get("/b"), Some(&20));
    // The reader created nothing beside the file.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("x_0.db3")]);
}

#[test]
fn time_window_and_topics() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.db3");
    let written = write_bag(&path, 1000, SqlitePreset::Default);
    let r = SqliteReader::open(&path).unwrap();
    let f = Filter { start: Some(1100), end: Some(1200), ..Filter::default() };
    let got = read_all(&r, &f);
    let want: Vec<_> = written.iter().filter(|m| (1100..1200).contains(&m.1)).cloned().collect();
    assert_eq!(got.len(), 10);
    assert_eq!(got, want);
    let f = Filter { topics: vec!["/b".into()], start: Some(5000), ..Filter::default() };
    let want: Vec<_> = written.iter().filter(|m| m.0 == 2 && m.1 >= 5000).cloned().collect();
    assert_eq!(read_all(&r, &f), want);
    let f = Filter { regex: Some(Regex::new("a").unwrap()), exclude_topics: vec!["/a".into()], ..Filter::default() };
    assert!(read_all(&r, &f).is_empty());
    let f = Filter { start: Some(u64::MAX), ..Filter::default() };
    assert!(read_all(&r, &f).is_empty());
    let f = Filter { end: Some(u64::MAX), ..Filter::default() };
    assert_eq!(read_all(&r, &f).len(), 1000);
    assert_eq!(r.seek(10_980).unwrap().count(), 2);
    // Dropping a stream early stops its thread.
    let mut it = r.messages(&Filter::default()).unwrap();
    assert!(it.next().is_some());
    drop(it);
}

#[test]
fn equal_times_keep_write_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.db3");
    let mut w = SqliteWriter::create(&path, &WriteOptions::default()).unwrap();
    let a = w.add_connection(&conn("/a", "t/msg/T")).unwrap();
    let b = w.add_connection(&conn("/b", "t/msg/T")).unwrap();
    let mut written = Vec::new();
    for k in 0..200u32 {
        let c = if k % 3 == 0 { a } else { b };
        let time = u64::from(k / 100);
        w.write(c, time, time, &k.to_le_bytes()).unwrap();
        written.push((c, time, k.to_le_bytes().to_vec()));
    }
    // A large message skips the buffer; it must still land after the buffered ones.
    w.write(a, 1, 1, &vec![1u8; COMMIT_BYTES as usize]).unwrap();
    written.push((a, 1, vec![1u8; COMMIT_BYTES as usize]));
    Box::new(w).finish().unwrap();
    let r = SqliteReader::open(&path).unwrap();
    assert_eq!(read_all(&r, &Filter::default()), written);
    // Only the type's first topic wrote its definition.
    let db = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = db.query_row("SELECT COUNT(*) FROM message_definitions", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 1);
    drop(db);
    // A type without a definition gets no row at all (see `insert_topic`).
    let path = dir.path().join("y.db3");
    write_bag(&path, 1, SqlitePreset::Default);
    let db = rusqlite::Connection::open(&path).unwrap();
    let types: Vec<String> = db
        .prepare("SELECT topic_type FROM message_definitions")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(types, vec!["std_msgs/msg/String".to_string()]);
}

/// A time window walks `timestamp_idx` instead of scanning the table.
#[test]
fn time_windows_use_the_timestamp_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.db3");
    write_bag(&path, 100, SqlitePreset::Default);
    let db = rusqlite::Connection::open(&path).unwrap();
    let filter = Filter { start: Some(10), end: Some(20), ..Filter::default() };
    // Also when a strict read takes the rows of undeclared topic ids too.
    for declared in [None, Some(&[1, 2][..])] {
        let (sql, params) = select_sql(&[1, 2], declared, &filter).unwrap();
        let mut stmt = db.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let plan: Vec<String> =
            stmt.query_map(params_from_iter(&params), |r| r.get::<_, String>(3)).unwrap().map(|r| r.unwrap()).collect();
        assert!(plan.iter().any(|p| p.contains("timestamp_idx") && p.contains("timestamp>")), "{plan:?}");
    }
}

#[test]
fn nth_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.db3");
    let written = write_bag(&path, 1000, SqlitePreset::Default);
    let r = SqliteReader::open(&path).unwrap();
    let m = r.nth("/b", 7).unwrap().unwrap();
    let want = written.iter().filter(|m| m.0 == 2).nth(7).unwrap();
    assert_eq!((m.connection, m.log_time, m.data.to_vec()), want.clone());
    assert_eq!(m.publish_time, m.log_time);
    assert!(r.nth("/b", 500).unwrap().is_none());
    assert!(r.nth("/nope", 0).unwrap().is_none());
    assert!(r.nth("/a", u64::MAX).unwrap().is_none());
}

#[test]
fn resilient_wal_is_read_while_recording() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.db3");
    let mut options = WriteOptions::default();
    options.rosbag2.sqlite_preset = SqlitePreset::Resilient;
    let mut w = SqliteWriter::create(&path, &options).unwrap();
    let a = w.add_connection(&conn("/a", "t/msg/T")).unwrap();
    for k in 0..100 {
        w.write(a, k, k, b"xyz").unwrap();
    }
    w.flush().unwrap();
    assert!(w.bytes_written() > 0);
    assert!(sibling(&path, "-wal").exists());
    {
        let r = SqliteReader::open(&path).unwrap();
        assert_eq!(r.info().unwrap().message_count, 100);
        assert_eq!(r.messages(&Filter::default()).unwrap().count(), 100);
    }
    w.write(a, 100, 100, b"xyz").unwrap();
    Box::new(w).finish().unwrap();
    assert!(!sibling(&path, "-wal").exists());
    assert!(!sibling(&path, "-shm").exists());
    let r = SqliteReader::open(&path).unwrap();
    assert_eq!(r.info().unwrap().message_count, 101);
    assert!(r.bag_metadata().is_none());
    assert_eq!(r.ros_distro().as_deref(), Some("rolling"));
}

#[test]
fn dropped_writer_keeps_messages_and_refuses_existing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.db3");
    {
        let mut w = SqliteWriter::create(&path, &WriteOptions::default()).unwrap();
        let a = w.add_connection(&conn("/a", "t/msg/T")).unwrap();
        // A second connection on the same topic shares its row; another type is refused.
        assert_eq!(w.add_connection(&conn("/a", "t/msg/T")).unwrap(), a);
        assert!(w.add_connection(&conn("/a", "t/msg/U")).is_err());
        assert!(matches!(w.write(9, 0, 0, b""), Err(Error::InFile { .. })));
        assert!(w.write(a, u64::MAX, 0, b"").is_err());
        for k in 0..10 {
            w.write(a, k, k, b"x").unwrap();
        }
    }
    let r = SqliteReader::open(&path).unwrap();
    assert_eq!(r.info().unwrap().message_count, 10);
    match SqliteWriter::create(&path, &WriteOptions::default()) {
        Err(Error::OutputExists { path: p }) => assert_eq!(p, path),
        other => panic!("expected OutputExists, got {:?}", other.err()),
    }
}

#[test]
fn empty_bag() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.db3");
    let w = SqliteWriter::create(&path, &WriteOptions::default()).unwrap();
    Box::new(w).finish().unwrap();
    let r = SqliteReader::open(&path).unwrap();
    let info = r.info().unwrap();
    assert_eq!((info.message_count, info.start_ns, info.end_ns), (0, None, None));
    assert_eq!(r.messages(&Filter::default()).unwrap().count(), 0);
    assert!(r.median_periods().unwrap().is_empty());
}

#[test]
fn negative_timestamp_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.db3");
    write_bag(&path, 10, SqlitePreset::Default);
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute("UPDATE messages SET timestamp = -5 WHERE id = 4", []).unwrap();
    drop(db);
    let r = SqliteReader::open(&path).unwrap();
    let err = r.info().unwrap_err().to_string();
    assert!(err.contains("n.db3") && err.contains("message id 4") && err.contains("negative"), "{err}");
    let err = r.messages(&Filter::default()).unwrap().find_map(|m| m.err()).unwrap().to_string();
    assert!(err.contains("n.db3") && err.contains("message id 4"), "{err}");
    assert!(r.median_periods().is_err());
}

#[test]
fn not_a_bag_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage?#%.db3");
    std::fs::write(&garbage, vec![0x5au8; 10_000]).unwrap();
    let err = SqliteReader::open(&garbage).err().unwrap().to_string();
    assert!(err.contains("garbage?#%.db3") && err.contains("not an SQLite database"), "{err}");

    let other = dir.path().join("other.db3");
    let db = rusqlite::Connection::open(&other).unwrap();
    db.execute_batch("CREATE TABLE t(x)").unwrap();
    drop(db);
    let err = SqliteReader::open(&other).err().unwrap().to_string();
    assert!(err.contains("other.db3") && err.contains("`topics`"), "{err}");

    let missing = dir.path().join("missing.db3");
    let err = SqliteReader::open(&missing).err().unwrap().to_string();
    assert!(err.contains("missing.db3"), "{err}");

    let mut header = b"SQLite format 3\0".to_vec();
    header.resize(4096, 0xff);
    let damaged = dir.path().join("damaged.db3");
    std::fs::write(&damaged, header).unwrap();
    let err = SqliteReader::open(&damaged).err().unwrap().to_string();
    assert!(err.contains("damaged.db3"), "{err}");
}

#[test]
fn uri_escapes() {
    assert_eq!(uri_for(Path::new("/a b/c?.db3"), true), "file:///a%20b/c%3F.db3?immutable=1");
    assert_eq!(uri_for(Path::new("rel/x%#.db3"), false), "file:rel/x%25%23.db3");
}

#[test]
fn metadata_unwrapping() {
    let wrapped = "rosbag2_bagfile_information:\n  version: 5\n  files:\n    - path: a\n";
    let inner = unwrap_bag_metadata(wrapped);
    assert_eq!(inner, "version: 5\nfiles:\n  - path: a\n");
    assert_eq!(metadata_version(&inner), Some(5));
    assert_eq!(unwrap_bag_metadata("version: 9\n"), "version: 9\n");
}

#[test]
fn corpus_files() {
    let root = Path::new("/work/shared/corpus/ros2/sqlite3");
    let Ok(dirs) = std::fs::read_dir(root) else { return };
    for dir in dirs.flatten() {
        let Ok(files) = std::fs::read_dir(dir.path()) else { continue };
        let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        for file in files.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "db3")) {
            let r = SqliteReader::open(&file).unwrap_or_else(|e| panic!("{e}"));
            let info = r.info().unwrap();
            assert!(!r.connections().is_empty(), "{}", file.display());
            let n = r.messages(&Filter::default()).unwrap().collect::<Result<Vec<_>>>().unwrap().len() as u64;
            assert_eq!(n, info.message_count, "{}", file.display());
            if dir.file_name() == "empty_bag" {
                assert_eq!(n, 0);
            } else {
                assert!(n > 0, "{}", file.display());
                let first = &r.connections()[0].topic;
                let _ = r.nth(first, 0).unwrap();
                r.median_periods().unwrap();
            }
            if r.schema_version() >= 4 {
                assert!(r.connections().iter().all(|c| !c.definition.is_empty()), "{}", file.display());
            }
        }
        let after: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(before, after, "files appeared in {}", dir.path().display());
        for name in &after {
            let name = name.to_string_lossy();
            assert!(!name.ends_with("-wal") && !name.ends_with("-shm"), "{name}");
        }
    }
}
