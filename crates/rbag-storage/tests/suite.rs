//! The storage suite every backend passes: write, read back, filter, index access.
//! Each backend is one `backend_suite!` line at the bottom.

use std::path::Path;

use rbag_storage::{Compression, CompressionMode, Connection, Filter, Format, Message, StorageReader, WriteOptions};

const QOS: &str = "- history: 1\n  depth: 10\n  reliability: 1\n  durability: 2\n  deadline:\n    sec: 0\n    nsec: 0\n  lifespan:\n    sec: 0\n    nsec: 0\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n  avoid_ros_namespace_conventions: false";

/// A connection in the encoding the format stores natively: ROS 1 connections for ROS 1 bags,
/// CDR topics with QoS for rosbag2. `caller` makes two publishers of one topic distinct.
fn conn(format: Format, topic: &str, caller: &str) -> Connection {
    let mut c = Connection { topic: topic.into(), definition: "string data\n".into(), ..Connection::default() };
    if format == Format::Ros1 {
        c.message_type = "std_msgs/String".into();
        c.encoding = "ros1".into();
        c.definition_encoding = "ros1msg".into();
        c.metadata.insert("md5sum".into(), "992ce8a1687cec8c8bd883ec73ca41d1".into());
        c.metadata.insert("callerid".into(), caller.into());
    } else {
        c.message_type = "std_msgs/msg/String".into();
        c.encoding = "cdr".into();
        c.definition_encoding = "ros2msg".into();
        let depth = if caller == "/pub1" { "10" } else { "5" };
        c.metadata.insert("offered_qos_profiles".into(), QOS.replace("depth: 10", &format!("depth: {depth}")));
    }
    c
}

/// Where a test writes: `t.<ext>`, or a rosbag2 directory `t` when `ext` is empty.
fn out(dir: &Path, ext: &str) -> std::path::PathBuf {
    if ext.is_empty() {
        dir.join("t")
    } else {
        dir.join(format!("t.{ext}"))
    }
}

/// The compression settings a backend supports, each to be round-tripped.
fn compressions(format: Format, ext: &str) -> Vec<WriteOptions> {
    let chunk = |compression| WriteOptions { compression, ..WriteOptions::default() };
    let mode = |m| {
        let mut o = WriteOptions::default();
        o.rosbag2.compression_mode = m;
        o
    };
    match (format, ext.is_empty()) {
        (Format::Ros1, _) => vec![chunk(Compression::None), chunk(Compression::Lz4), chunk(Compression::Bz2)],
        (Format::Mcap, false) => vec![chunk(Compression::None), chunk(Compression::Lz4), chunk(Compression::Zstd)],
        (Format::Mcap, true) => vec![chunk(Compression::Zstd), mode(CompressionMode::File)],
        (Format::Sqlite3, false) => vec![chunk(Compression::None), mode(CompressionMode::Message)],
        (Format::Sqlite3, true) => {
            vec![chunk(Compression::None), mode(CompressionMode::File), mode(CompressionMode::Message)]
        }
    }
}

/// Messages written out of time order across small chunks, on two topics, one of them with two
/// connections (two publishers).
fn write_fixture(path: &Path, format: Format, options: &WriteOptions) -> Vec<(String, u64, Vec<u8>)> {
    let mut w = rbag_storage::create(path, format, options).unwrap();
    let a1 = w.add_connection(&conn(format, "/a", "/pub1")).unwrap();
    let a2 = w.add_connection(&conn(format, "/a", "/pub2")).unwrap();
    let b = w.add_connection(&conn(format, "/b/c", "/pub1")).unwrap();
    let mut written = Vec::new();
    for i in 0..600u64 {
        // Times go backwards every 100 messages, so chunks overlap and arrive unsorted.
        let t = 1_000_000_000_000 + ((5 - i / 100) * 100 + i % 100) * 1_000_000;
        let (id, topic) = match i % 3 {
            0 => (a1, "/a"),
            1 => (a2, "/a"),
            _ => (b, "/b/c"),
        };
        let data = format!("msg {i:04}").into_bytes();
        w.write(id, t, t, &data).unwrap();
        written.push((topic.to_string(), t, data));
    }
    w.finish().unwrap();
    written
}

fn read_all(r: &dyn StorageReader, filter: &Filter) -> Vec<(String, u64, Vec<u8>)> {
    r.messages(filter)
        .unwrap()
        .map(|m| {
            let m: Message = m.unwrap();
            (r.connection(m.connection).unwrap().topic.clone(), m.log_time, m.data.to_vec())
        })
        .collect()
}

/// Time order, ties in write order (the writer's file order).
fn expected(
    mut w: Vec<(String, u64, Vec<u8>)>,
    keep: impl Fn(&(String, u64, Vec<u8>)) -> bool,
) -> Vec<(String, u64, Vec<u8>)> {
    w.retain(|m| keep(m));
    w.sort_by_key(|m| m.1);
    w
}

pub fn roundtrip(format: Format, ext: &str) {
    for opts in compressions(format, ext) {
        let dir = tempfile::tempdir().unwrap();
        let path = out(dir.path(), ext);
        let opts = WriteOptions { chunk_size: 2000, ..opts };
        let written = write_fixture(&path, format, &opts);
        let r = rbag_storage::open(&path).unwrap();
        // rosbag2's SQLite schema has one row per topic: the two publishers of /a share it.
        assert_eq!(r.connections().len(), if format == Format::Sqlite3 { 2 } else { 3 });
        assert_eq!(read_all(r.as_ref(), &Filter::default()), expected(written.clone(), |_| true), "{opts:?}");
        let info = r.info().unwrap();
        assert_eq!(info.message_count, 600);
        assert_eq!(info.start_ns, Some(1_000_000_000_000));
        assert_eq!(info.end_ns, Some(1_000_000_000_000 + 599 * 1_000_000));
        assert!(info.indexed);
    }
}

pub fn filters(format: Format, ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = out(dir.path(), ext);
    let written = write_fixture(&path, format, &WriteOptions { chunk_size: 1500, ..WriteOptions::default() });
    let r = rbag_storage::open(&path).unwrap();
    let only_a = Filter { topics: vec!["/a".into()], ..Filter::default() };
    assert_eq!(read_all(r.as_ref(), &only_a), expected(written.clone(), |m| m.0 == "/a"));
    let re = Filter { regex: Some(regex::Regex::new("^/b").unwrap()), ..Filter::default() };
    assert_eq!(read_all(r.as_ref(), &re), expected(written.clone(), |m| m.0 == "/b/c"));
    let ex = Filter { exclude_topics: vec!["/a".into()], ..Filter::default() };
    assert_eq!(read_all(r.as_ref(), &ex), expected(written.clone(), |m| m.0 != "/a"));
    let (s, e) = (1_000_000_000_000 + 150 * 1_000_000, 1_000_000_000_000 + 420 * 1_000_000);
    let window = Filter { start: Some(s), end: Some(e), ..Filter::default() };
    assert_eq!(read_all(r.as_ref(), &window), expected(written.clone(), |m| m.1 >= s && m.1 < e));
    let none = Filter { topics: vec!["/nope".into()], ..Filter::default() };
    assert!(read_all(r.as_ref(), &none).is_empty());
}

pub fn index_access(format: Format, ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = out(dir.path(), ext);
    let written =
        write_fixture(&path, format, &WriteOptions { chunk_size: 1000, ..compressions(format, ext).pop().unwrap() });
    let r = rbag_storage::open(&path).unwrap();
    let b = expected(written.clone(), |m| m.0 == "/b/c");
    for n in [0, 7, b.len() - 1] {
        let m = r.nth("/b/c", n as u64).unwrap().unwrap();
        assert_eq!((m.log_time, m.data.to_vec()), (b[n].1, b[n].2.clone()), "nth {n}");
    }
    assert!(r.nth("/b/c", b.len() as u64).unwrap().is_none());
    assert!(r.nth("/nope", 0).unwrap().is_none());
    let t = b[b.len() / 2].1;
    let from: Vec<u64> = r.seek(t).unwrap().map(|m| m.unwrap().log_time).collect();
    assert_eq!(from, expected(written, |m| m.1 >= t).iter().map(|m| m.1).collect::<Vec<_>>());
}

pub fn empty_bag(format: Format, ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = out(dir.path(), ext);
    let w = rbag_storage::create(&path, format, &WriteOptions::default()).unwrap();
    w.finish().unwrap();
    let r = rbag_storage::open(&path).unwrap();
    assert_eq!(r.messages(&Filter::default()).unwrap().count(), 0);
    let info = r.info().unwrap();
    assert_eq!((info.message_count, info.start_ns), (0, None));
}

/// rosbag2 directories: a bag split by size reads as one bag, metadata.yaml lists every file
/// with its own counts, and `max_files` keeps only the newest files.
pub fn split(format: Format) {
    let dir = tempfile::tempdir().unwrap();
    let path = out(dir.path(), "");
    let mut opts = WriteOptions { chunk_size: 500, ..WriteOptions::default() };
    // Size splits for MCAP; SQLite3's minimum split (86 KiB) is over this bag, so by duration.
    if format == Format::Mcap {
        opts.rosbag2.max_file_size = Some(3000);
    } else {
        opts.rosbag2.max_file_duration_ns = Some(40_000_000);
    }
    let written = write_fixture(&path, format, &opts);
    let r = rbag_storage::open(&path).unwrap();
    let info = r.info().unwrap();
    assert!(info.files.len() > 2, "{:?}", info.files);
    assert_eq!(read_all(r.as_ref(), &Filter::default()), expected(written.clone(), |_| true));
    let meta = rbag_storage::rosbag2::metadata::BagMetadata::read(&path.join("metadata.yaml")).unwrap();
    assert_eq!(meta.files.len(), info.files.len());
    assert_eq!(meta.files.iter().map(|f| f.message_count).sum::<u64>(), 600);
    assert_eq!(meta.message_count, 600);
    assert_eq!(meta.topics.iter().map(|t| t.message_count).sum::<u64>(), 600);
    let ext = if format == Format::Mcap { "mcap" } else { "db3" };
    assert_eq!(meta.relative_file_paths[1], format!("t_1.{ext}"));

    let circular = out(dir.path(), "");
    let circular = circular.with_file_name("c");
    opts.rosbag2.max_files = Some(2);
    let written = write_fixture(&circular, format, &opts);
    let meta = rbag_storage::rosbag2::metadata::BagMetadata::read(&circular.join("metadata.yaml")).unwrap();
    assert_eq!(meta.files.len(), 2);
    assert_eq!(std::fs::read_dir(&circular).unwrap().count(), 3, "two files and metadata.yaml");
    let kept = meta.message_count as usize;
    let r = rbag_storage::open(&circular).unwrap();
    let mut tail = written[written.len() - kept..].to_vec();
    tail.sort_by_key(|m| m.1);
    assert_eq!(read_all(r.as_ref(), &Filter::default()), tail);
}

/// `split_now` (rosbag2's `split_bagfile`): the next message goes to a new file; a split of a
/// file with no message keeps it; a single-file bag does not split.
pub fn split_on_request(format: Format) {
    let dir = tempfile::tempdir().unwrap();
    let path = out(dir.path(), "");
    let mut w = rbag_storage::rosbag2::Rosbag2Writer::create(&path, format, &WriteOptions::default()).unwrap();
    use rbag_storage::StorageWriter;
    let a = w.add_connection(&conn(format, "/a", "/pub1")).unwrap();
    for i in 0..3u64 {
        w.write(a, 1000 + i, 1000 + i, &[i as u8; 8]).unwrap();
    }
    assert!(w.split_now().unwrap());
    assert!(w.split_now().unwrap(), "a second split in a row keeps the empty file");
    for i in 3..5u64 {
        w.write(a, 1000 + i, 1000 + i, &[i as u8; 8]).unwrap();
    }
    Box::new(w).finish().unwrap();
    let meta = rbag_storage::rosbag2::metadata::BagMetadata::read(&path.join("metadata.yaml")).unwrap();
    assert_eq!(meta.files.iter().map(|f| f.message_count).collect::<Vec<_>>(), [3, 2]);
    let r = rbag_storage::open(&path).unwrap();
    assert_eq!(read_all(r.as_ref(), &Filter::default()).len(), 5);

    let single = dir.path().join(if format == Format::Mcap { "one.mcap" } else { "one.db3" });
    let mut w = rbag_storage::create(&single, format, &WriteOptions::default()).unwrap();
    assert!(!w.split_now().unwrap(), "a single file cannot split");
    w.finish().unwrap();
}

/// Chunked formats read only what a query needs: `info` reads no chunk, a time window reads
/// the chunks that overlap it, and a topic reads only the chunks that hold it.
pub fn reads_only_needed_chunks(format: Format, ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = out(dir.path(), ext);
    let mut w =
        rbag_storage::create(&path, format, &WriteOptions { chunk_size: 200, ..WriteOptions::default() }).unwrap();
    let a = w.add_connection(&conn(format, "/a", "/pub1")).unwrap();
    let b = w.add_connection(&conn(format, "/b/c", "/pub1")).unwrap();
    for i in 0..400u64 {
        // /a for the first half of the time, /b/c for the second: each chunk holds one topic.
        w.write(if i < 200 { a } else { b }, 1_000 + i * 1_000, 1_000 + i * 1_000, &[i as u8; 40]).unwrap();
    }
    w.finish().unwrap();
    let r = rbag_storage::open(&path).unwrap();
    let info = r.info().unwrap();
    assert!(info.chunk_count >= 20, "{}", info.chunk_count);
    assert_eq!(r.stats().chunks_read, 0, "info reads no chunk");
    let window = Filter { start: Some(100_000), end: Some(110_000), ..Filter::default() };
    assert_eq!(r.messages(&window).unwrap().count(), 10);
    let after_window = r.stats().chunks_read;
    assert!(after_window <= 5, "a 10-message window read {after_window} chunks");
    let only_b = Filter { topics: vec!["/b/c".into()], ..Filter::default() };
    assert_eq!(r.messages(&only_b).unwrap().count(), 200);
    let for_b = r.stats().chunks_read - after_window;
    assert!(for_b <= info.chunk_count / 2 + 2, "topic /b/c read {for_b} of {} chunks", info.chunk_count);
}

macro_rules! backend_suite {
    ($name:ident, $format:expr, $ext:literal) => {
        mod $name {
            #[test]
            fn roundtrip() {
                super::roundtrip($format, $ext)
            }
            #[test]
            fn filters() {
                super::filters($format, $ext)
            }
            #[test]
            fn index_access() {
                super::index_access($format, $ext)
            }
            #[test]
            fn empty_bag() {
                super::empty_bag($format, $ext)
            }
        }
    };
}

backend_suite!(ros1, rbag_storage::Format::Ros1, "bag");
backend_suite!(mcap_file, rbag_storage::Format::Mcap, "mcap");
backend_suite!(mcap_dir, rbag_storage::Format::Mcap, "");
backend_suite!(sqlite3_file, rbag_storage::Format::Sqlite3, "db3");
backend_suite!(sqlite3_dir, rbag_storage::Format::Sqlite3, "");

/// `repeat_transient_local`: every split file starts with the last messages (up to the QoS
/// depth) of each transient-local topic, so each file alone holds the latched state.
pub fn repeat_transient_local(format: Format) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r");
    let mut opts = WriteOptions { chunk_size: 500, ..WriteOptions::default() };
    opts.rosbag2.max_file_duration_ns = Some(100_000_000);
    opts.rosbag2.repeat_transient_local = true;
    let mut w = rbag_storage::create(&path, format, &opts).unwrap();
    let mut latched = conn(format, "/map", "/pub1");
    let tl = QOS.replace("durability: 2", "durability: 1").replace("depth: 10", "depth: 2");
    latched.metadata.insert("offered_qos_profiles".into(), tl);
    let map = w.add_connection(&latched).unwrap();
    let chatter = w.add_connection(&conn(format, "/chatter", "/pub1")).unwrap();
    let t0 = 1_000_000_000_000u64;
    for i in 0..3u64 {
        w.write(map, t0 + i, t0 + i, format!("map {i}").as_bytes()).unwrap();
    }
    for i in 0..50u64 {
        w.write(chatter, t0 + 10 + i * 10_000_000, t0, format!("c {i}").as_bytes()).unwrap();
    }
    w.finish().unwrap();
    let meta = rbag_storage::rosbag2::metadata::BagMetadata::read(&path.join("metadata.yaml")).unwrap();
    assert!(meta.files.len() >= 4, "{:?}", meta.files);
    for (k, f) in meta.files.iter().enumerate() {
        let r = rbag_storage::open(&path.join(&f.path)).unwrap();
        let maps: Vec<Vec<u8>> = r
            .messages(&Filter { topics: vec!["/map".into()], ..Filter::default() })
            .unwrap()
            .map(|m| m.unwrap().data.to_vec())
            .collect();
        let want: Vec<Vec<u8>> = if k == 0 {
            vec![b"map 0".to_vec(), b"map 1".to_vec(), b"map 2".to_vec()]
        } else {
            vec![b"map 1".to_vec(), b"map 2".to_vec()]
        };
        assert_eq!(maps, want, "file {k}");
    }
}

#[test]
fn repeat_transient_local_mcap() {
    repeat_transient_local(Format::Mcap)
}

#[test]
fn repeat_transient_local_sqlite3() {
    repeat_transient_local(Format::Sqlite3)
}

#[test]
fn split_mcap() {
    split(Format::Mcap)
}

#[test]
fn split_sqlite3() {
    split(Format::Sqlite3)
}

#[test]
fn split_on_request_mcap() {
    split_on_request(Format::Mcap)
}

#[test]
fn split_on_request_sqlite3() {
    split_on_request(Format::Sqlite3)
}

#[test]
fn ros1_reads_only_needed_chunks() {
    reads_only_needed_chunks(Format::Ros1, "bag")
}

#[test]
fn mcap_reads_only_needed_chunks() {
    reads_only_needed_chunks(Format::Mcap, "mcap")
}

/// A writer dropped unfinished (an error upstream) leaves nothing at its path, and no
/// temporary beside it: `create` stages and renames only at `finish`.
pub fn dropped_writer_leaves_nothing(format: Format, ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = out(dir.path(), ext);
    let mut w = rbag_storage::create(&path, format, &WriteOptions::default()).unwrap();
    let a = w.add_connection(&conn(format, "/a", "/pub1")).unwrap();
    for i in 0..100u64 {
        w.write(a, 1000 + i, 1000 + i, &[i as u8; 64]).unwrap();
    }
    w.checkpoint().unwrap();
    drop(w);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A writer that stops without closing (a killed recorder, written in place) leaves a file that
/// says so: a ROS 1 bag without an index, an MCAP file without a summary, an SQLite3 file
/// without rbag's completion mark. A closed one carries no such warning.
pub fn unfinished_file_is_flagged(format: Format, ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    for finish in [false, true] {
        let path = dir.path().join(format!("rec{finish}.{ext}"));
        let mut w = rbag_storage::create_at(&path, &path, format, &WriteOptions::default()).unwrap();
        let a = w.add_connection(&conn(format, "/a", "/pub1")).unwrap();
        for i in 0..100u64 {
            w.write(a, 1000 + i, 1000 + i, &[i as u8; 64]).unwrap();
        }
        w.checkpoint().unwrap();
        if finish {
            w.finish().unwrap();
        } else {
            // As a SIGKILL leaves it: no destructor, no close.
            std::mem::forget(w);
        }
        match rbag_storage::open(&path) {
            Ok(r) => assert_eq!(r.warnings().is_empty(), finish, "{path:?}: {:?}", r.warnings()),
            Err(e) => assert!(!finish, "{path:?}: {e}"),
        }
    }
}

#[test]
fn dropped_writer_leaves_nothing_ros1() {
    dropped_writer_leaves_nothing(Format::Ros1, "bag")
}

#[test]
fn dropped_writer_leaves_nothing_mcap() {
    dropped_writer_leaves_nothing(Format::Mcap, "mcap");
    dropped_writer_leaves_nothing(Format::Mcap, "")
}

#[test]
fn dropped_writer_leaves_nothing_sqlite3() {
    dropped_writer_leaves_nothing(Format::Sqlite3, "db3");
    dropped_writer_leaves_nothing(Format::Sqlite3, "")
}

#[test]
fn unfinished_file_is_flagged_ros1() {
    unfinished_file_is_flagged(Format::Ros1, "bag")
}

#[test]
fn unfinished_file_is_flagged_mcap() {
    unfinished_file_is_flagged(Format::Mcap, "mcap")
}

#[test]
fn unfinished_file_is_flagged_sqlite3() {
    unfinished_file_is_flagged(Format::Sqlite3, "db3")
}
