//! The storage suite every backend passes: write, read back, filter, index access.
//! Each backend is one `backend_suite!` line at the bottom.

use std::path::Path;

use rbag_storage::{Compression, Connection, Filter, Format, Message, StorageReader, WriteOptions};

fn conn(topic: &str, ty: &str, caller: &str) -> Connection {
    let mut c = Connection {
        topic: topic.into(),
        message_type: ty.into(),
        encoding: "ros1".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    };
    c.metadata.insert("md5sum".into(), "992ce8a1687cec8c8bd883ec73ca41d1".into());
    c.metadata.insert("callerid".into(), caller.into());
    c
}

/// Messages written out of time order across small chunks, on two topics, one of them with two
/// connections (two publishers).
fn write_fixture(path: &Path, format: Format, options: &WriteOptions) -> Vec<(String, u64, Vec<u8>)> {
    let mut w = rbag_storage::create(path, format, options).unwrap();
    let a1 = w.add_connection(&conn("/a", "std_msgs/String", "/pub1")).unwrap();
    let a2 = w.add_connection(&conn("/a", "std_msgs/String", "/pub2")).unwrap();
    let b = w.add_connection(&conn("/b/c", "std_msgs/String", "/pub1")).unwrap();
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
fn expected(mut w: Vec<(String, u64, Vec<u8>)>, keep: impl Fn(&(String, u64, Vec<u8>)) -> bool) -> Vec<(String, u64, Vec<u8>)> {
    w.retain(|m| keep(m));
    w.sort_by_key(|m| m.1);
    w
}

pub fn roundtrip(format: Format, ext: &str) {
    for compression in [Compression::None, Compression::Lz4, Compression::Bz2] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("t.{ext}"));
        let opts = WriteOptions { compression, chunk_size: 2000, ..WriteOptions::default() };
        let written = write_fixture(&path, format, &opts);
        let r = rbag_storage::open(&path).unwrap();
        assert_eq!(r.connections().len(), 3);
        assert_eq!(read_all(r.as_ref(), &Filter::default()), expected(written.clone(), |_| true), "{compression:?}");
        let info = r.info().unwrap();
        assert_eq!(info.message_count, 600);
        assert_eq!(info.start_ns, Some(1_000_000_000_000));
        assert_eq!(info.end_ns, Some(1_000_000_000_000 + 599 * 1_000_000));
        assert!(info.indexed);
    }
}

pub fn filters(format: Format, ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("t.{ext}"));
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
    let path = dir.path().join(format!("t.{ext}"));
    let written = write_fixture(&path, format, &WriteOptions { compression: Compression::Lz4, chunk_size: 1000, ..WriteOptions::default() });
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
    let path = dir.path().join(format!("t.{ext}"));
    let w = rbag_storage::create(&path, format, &WriteOptions::default()).unwrap();
    w.finish().unwrap();
    let r = rbag_storage::open(&path).unwrap();
    assert_eq!(r.messages(&Filter::default()).unwrap().count(), 0);
    let info = r.info().unwrap();
    assert_eq!((info.message_count, info.start_ns), (0, None));
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
