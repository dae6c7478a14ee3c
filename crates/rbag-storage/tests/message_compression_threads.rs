//! rosbag2 MESSAGE compression on worker threads (`compression_threads`): the SQLite3 rows are
//! the same for any thread count, in the order written, split at the same messages, and each
//! decompresses to the payload given.

use std::path::{Path, PathBuf};

use rbag_storage::{CompressionMode, Connection, Format, WriteOptions};

/// One row of a `.db3` file: id, topic id, timestamp, data.
type Row = (i64, i64, i64, Vec<u8>);

fn conn(topic: &str) -> Connection {
    Connection {
        id: 0,
        topic: topic.into(),
        message_type: "std_msgs/msg/String".into(),
        encoding: "cdr".into(),
        ..Connection::default()
    }
}

/// Payloads of varied sizes and compressibility: text-like, runs, and noise that zstd cannot
/// shrink (so its compressed form is longer than the payload).
fn payload(i: u64) -> Vec<u8> {
    let len = (i * 7919 % 3000) as usize + 1;
    match i % 3 {
        0 => format!("message {i} ").repeat(len / 12 + 1).into_bytes(),
        1 => vec![(i % 251) as u8; len],
        _ => {
            let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        }
    }
}

/// Writes 3000 messages on two topics into a bag directory with `threads` compression threads,
/// split at `max_file_size`; returns the payloads given, in order.
fn write(dir: &Path, threads: usize, max_file_size: Option<u64>) -> Vec<Vec<u8>> {
    let mut options = WriteOptions::default();
    options.rosbag2.compression_mode = CompressionMode::Message;
    options.rosbag2.compression_threads = threads;
    options.rosbag2.max_file_size = max_file_size;
    let mut w = rbag_storage::create(dir, Format::Sqlite3, &options).unwrap();
    let a = w.add_connection(&conn("/a")).unwrap();
    let b = w.add_connection(&conn("/b")).unwrap();
    let mut given = Vec::new();
    for i in 0..3000u64 {
        let data = payload(i);
        let t = 1_000_000_000 + i * 1_000_000;
        w.write(if i % 4 == 0 { b } else { a }, t, t, &data).unwrap();
        given.push(data);
    }
    w.finish().unwrap();
    given
}

/// The bag's `.db3` files in split order, with their rows in id order.
fn rows(dir: &Path) -> Vec<(String, Vec<Row>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "db3"))
        .collect();
    files.sort_by_key(|p| {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        name.rsplit('_').next().unwrap().parse::<u64>().unwrap()
    });
    files
        .iter()
        .map(|f| {
            let db = rusqlite::Connection::open(f).unwrap();
            let mut stmt = db.prepare("SELECT id, topic_id, timestamp, data FROM messages ORDER BY id").unwrap();
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .unwrap()
                .collect::<rusqlite::Result<Vec<Row>>>()
                .unwrap();
            (f.file_name().unwrap().to_string_lossy().into_owned(), rows)
        })
        .collect()
}

/// The bag written with `threads` threads: `<threads>/bag`, so every bag's files have the same names.
fn bag(tmp: &Path, threads: usize) -> PathBuf {
    let dir = tmp.join(threads.to_string());
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("bag")
}

/// Fails naming the first file and row that differ (the rows are too long to print whole).
fn same(got: &[(String, Vec<Row>)], expected: &[(String, Vec<Row>)], threads: usize) {
    let names = |f: &[(String, Vec<Row>)]| f.iter().map(|(n, r)| (n.clone(), r.len())).collect::<Vec<_>>();
    assert_eq!(names(got), names(expected), "{threads} threads: files and row counts");
    for ((name, g), (_, e)) in got.iter().zip(expected) {
        if let Some(k) = (0..g.len()).find(|&k| g[k] != e[k]) {
            let head = |r: &Row| (r.0, r.1, r.2, r.3.len());
            panic!("{threads} threads: {name} row {k}: {:?} differs from {:?}", head(&g[k]), head(&e[k]));
        }
    }
}

#[test]
fn message_mode_rows_are_the_same_for_any_thread_count_and_decompress_to_the_payloads() {
    let tmp = tempfile::tempdir().unwrap();
    let one = bag(tmp.path(), 1);
    let given = write(&one, 1, None);
    let expected = rows(&one);
    for threads in [2, 4, 0] {
        let dir = bag(tmp.path(), threads);
        write(&dir, threads, None);
        same(&rows(&dir), &expected, threads);
    }
    // One file, every message in the order written, each a zstd frame of its payload.
    assert_eq!(expected.len(), 1);
    let stored = &expected[0].1;
    assert_eq!(stored.len(), given.len());
    let mut shrunk = 0;
    for (k, ((_, topic, _, data), payload)) in stored.iter().zip(&given).enumerate() {
        assert_eq!(*topic, if k % 4 == 0 { 2 } else { 1 }, "row {k}");
        assert_eq!(&zstd::decode_all(&data[..]).unwrap(), payload, "row {k}");
        shrunk += usize::from(data.len() < payload.len());
    }
    assert!(shrunk > 1000, "{shrunk} of {} messages were compressed smaller", given.len());
    // metadata.yaml (counts, times, files) is the same too.
    let meta = |d: &Path| std::fs::read_to_string(d.join("metadata.yaml")).unwrap();
    assert_eq!(meta(&bag(tmp.path(), 2)), meta(&one));
}

#[test]
fn message_mode_splits_by_size_at_the_same_messages_for_any_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let one = bag(tmp.path(), 1);
    // The SQLite3 minimum split: the 3000 messages (about 2.4 MB before compression) make
    // several files.
    let given = write(&one, 1, Some(86_016));
    let expected = rows(&one);
    assert!(expected.len() >= 3, "{} files", expected.len());
    for threads in [2, 3] {
        let dir = bag(tmp.path(), threads);
        write(&dir, threads, Some(86_016));
        same(&rows(&dir), &expected, threads);
        let meta = |d: &Path| std::fs::read_to_string(d.join("metadata.yaml")).unwrap();
        assert_eq!(meta(&dir), meta(&one));
    }
    // Across the files, every payload once and in order.
    let all: Vec<Vec<u8>> =
        expected.iter().flat_map(|(_, r)| r.iter().map(|row| zstd::decode_all(&row.3[..]).unwrap())).collect();
    assert_eq!(all, given);
}
