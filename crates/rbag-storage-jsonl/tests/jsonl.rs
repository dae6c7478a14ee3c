//! The JSON Lines backend through rbag-storage's public entry points only, as a program that
//! registers it would use it.

use std::collections::BTreeMap;
use std::path::Path;

use rbag_storage::{Connection, Error, Filter, OutputPolicy, StorageOptions, StorageWriter, WriteOptions};
use rbag_storage_jsonl::JsonlError;

fn conn(topic: &str, meta: &[(&str, &str)]) -> Connection {
    Connection {
        id: 0,
        topic: topic.into(),
        message_type: "std_msgs/String".into(),
        encoding: "ros1".into(),
        definition: "string data\n# a \"quoted\" comment\n".into(),
        definition_encoding: "ros1msg".into(),
        metadata: meta.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
    }
}

fn create(path: &Path, storage: StorageOptions) -> rbag_storage::Result<Box<dyn StorageWriter>> {
    rbag_storage_jsonl::register();
    rbag_storage::create_named(path, "jsonl", &WriteOptions::default(), &storage, &OutputPolicy::default())
}

/// Writes two connections and messages out of time order, with every byte value.
fn write_sample(path: &Path, storage: StorageOptions) -> Vec<(u32, u64, u64, Vec<u8>)> {
    let mut w = create(path, storage).unwrap();
    let a =
        w.add_connection(&conn("/a", &[("md5sum", "992ce8a1687cec8c8bd883ec73ca41d1"), ("latching", "1")])).unwrap();
    let b = w.add_connection(&conn("/b", &[("callerid", "/talker")])).unwrap();
    let mut written = Vec::new();
    for i in 0..50u64 {
        let (c, t) = if i % 3 == 0 { (b, 5_000 - i * 10) } else { (a, 1_000 + i * 100) };
        let data: Vec<u8> = (0..(i as usize * 7)).map(|k| (k * 31 + i as usize) as u8).collect();
        w.write(c, t, t + 1, &data).unwrap();
        written.push((c, t, t + 1, data));
    }
    w.finish().unwrap();
    written.sort_by_key(|m| m.1);
    written
}

#[test]
fn reads_back_what_was_written_in_both_payload_encodings() {
    for payload in ["base64", "hex"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let written = write_sample(&path, StorageOptions::new().with("payload", payload));
        assert_eq!(rbag_storage::detect_backend(&path).unwrap().name(), "jsonl");
        let r = rbag_storage::open(&path).unwrap();
        let conns = r.connections();
        assert_eq!(conns.len(), 2);
        assert_eq!(
            Connection { id: 0, ..conns[0].clone() },
            conn("/a", &[("md5sum", "992ce8a1687cec8c8bd883ec73ca41d1"), ("latching", "1")])
        );
        assert_eq!(Connection { id: 0, ..conns[1].clone() }, conn("/b", &[("callerid", "/talker")]));
        let read: Vec<_> = r
            .messages(&Filter::default())
            .unwrap()
            .map(|m| m.map(|m| (m.connection, m.log_time, m.publish_time, m.data.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(read, written, "{payload}");
        let info = r.info().unwrap();
        assert_eq!((info.format, info.message_count), ("jsonl", 50));
        assert_eq!(info.start_ns, Some(written[0].1));
        assert_eq!(info.end_ns, Some(written[49].1));
        let bytes_b: u64 = written.iter().filter(|m| m.0 == conns[1].id).map(|m| m.3.len() as u64).sum();
        assert_eq!(info.connections[&conns[1].id].data_bytes, Some(bytes_b));
        assert_eq!(info.properties["payload"], payload);
        // The defaults the backend does not override.
        let third_b = written.iter().filter(|m| m.0 == conns[1].id).nth(3).unwrap();
        let m = r.nth("/b", 3).unwrap().unwrap();
        assert_eq!((m.log_time, m.data.to_vec()), (third_b.1, third_b.3.clone()));
        assert!(r.nth("/b", 1000).unwrap().is_none());
        assert_eq!(r.median_periods().unwrap()["/b"], 30);
        assert_eq!(r.stats(), Default::default());
        let windowed = r.messages(&Filter { start: Some(2_000), end: Some(3_000), ..Filter::default() }).unwrap();
        assert_eq!(windowed.count(), written.iter().filter(|m| (2_000..3_000).contains(&m.1)).count());
    }
}

#[test]
fn the_extension_alone_is_not_enough() {
    rbag_storage_jsonl::register();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not.jsonl");
    std::fs::write(&path, "{\"hello\":1}\n").unwrap();
    let e = rbag_storage::open(&path).err().expect("not a bag");
    assert!(matches!(e, Error::UnknownFormat { .. }), "{e}");
}

/// A damaged line fails the open with the file and the line number, typed.
#[test]
fn a_bad_line_names_its_file_and_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    write_sample(&path, StorageOptions::default());
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[4] = "{\"message\":{\"connection\":1,\"log_time\":\"soon\"}}";
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let e = rbag_storage::open(&path).err().expect("bad line");
    let Error::Backend(inner) = &e else { panic!("{e:?}") };
    match inner.downcast_ref::<JsonlError>() {
        Some(JsonlError::BadLine { path: p, line: 5, .. }) => assert_eq!(p, &path),
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(text.contains("x.jsonl: line 5:"), "{text}");

    // A message on a connection the file never declares: read only when lenient.
    lines[4] = "{\"message\":{\"connection\":9,\"log_time\":1,\"publish_time\":1,\"data\":\"\"}}";
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let r = rbag_storage::open(&path).unwrap();
    let e = r.messages(&Filter::default()).unwrap().find_map(Result::err).expect("undeclared");
    assert!(e.to_string().contains("connection 9"), "{e}");
    let r = rbag_storage::open_with(&path, &rbag_storage::ReadOptions { lenient: true, ..Default::default() }).unwrap();
    assert_eq!(r.messages(&Filter::default()).unwrap().filter(|m| m.as_ref().unwrap().connection == 9).count(), 1);
}

#[test]
fn a_torn_last_line_is_reported_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    let written = write_sample(&path, StorageOptions::default());
    let len = std::fs::metadata(&path).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len - 10).unwrap();
    let r = rbag_storage::open(&path).unwrap();
    assert_eq!(r.info().unwrap().message_count, written.len() as u64 - 1);
    let lost = r.lost();
    assert!(lost.len() == 1 && lost[0].contains("line 53") && lost[0].contains("torn"), "{lost:?}");
}

#[test]
fn output_is_staged_and_options_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    // Dropped unfinished: nothing is left, not even a partial file.
    let mut w = create(&path, StorageOptions::default()).unwrap();
    w.add_connection(&conn("/a", &[])).unwrap();
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    write_sample(&path, StorageOptions::default());
    assert!(matches!(create(&path, StorageOptions::default()).err(), Some(Error::OutputExists { .. })));

    let other = dir.path().join("y.jsonl");
    match create(&other, StorageOptions::new().with("payload", "zip")).err() {
        Some(Error::BadOption { backend, key, .. }) => {
            assert_eq!((backend.as_str(), key.as_str()), ("jsonl", "payload"))
        }
        other => panic!("{other:?}"),
    }
    match create(&other, StorageOptions::new().with("chunk", "1")).err() {
        Some(Error::BadOption { key, .. }) => assert_eq!(key, "chunk"),
        other => panic!("{other:?}"),
    }
    let mut w = create(&other, StorageOptions::default()).unwrap();
    assert!(matches!(w.write(7, 0, 0, b""), Err(Error::UnknownConnection { id: 7 })));
}

#[test]
fn listed_in_the_registry_after_the_built_ins() {
    rbag_storage_jsonl::register();
    rbag_storage_jsonl::register();
    let names: Vec<String> = rbag_storage::backends().iter().map(|b| b.name().to_string()).collect();
    assert_eq!(names, ["ros1", "sqlite3", "mcap", "jsonl"]);
    let b = rbag_storage::backend("jsonl").unwrap();
    assert!(b.capabilities().read && b.capabilities().write && !b.capabilities().reindex);
    assert_eq!(rbag_storage::backend_for_extension("jsonl").unwrap().name(), "jsonl");
}
