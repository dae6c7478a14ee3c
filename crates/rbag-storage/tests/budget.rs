//! The memory budget (issue 13, D4): a reader that cannot hold a chunk whole streams it, and
//! reads exactly what it reads with room to spare. Each test sets the process-wide limit
//! (nextest runs every test in a process of its own).

use std::path::Path;

use rbag_storage::{budget, Compression, Connection, Error, Filter, Format, WriteOptions};

const START: u64 = 1_700_000_000_000_000_000;

fn conn(topic: &str) -> Connection {
    Connection {
        topic: topic.into(),
        message_type: "std_msgs/String".into(),
        encoding: "ros1".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    }
}

/// 300 messages of about 100 KB on two topics, in chunks of 10 MiB (more than the tests'
/// budgets leave free); every 25th message is 30 ms early, so chunks overlap in time and a
/// streamed chunk must now and then start over.
fn write(path: &Path, format: Format, compression: Compression) {
    let options = WriteOptions { compression, chunk_size: 10 << 20, ..WriteOptions::default() };
    let mut w = rbag_storage::create(path, format, &options).unwrap();
    let a = w.add_connection(&conn("/a")).unwrap();
    let b = w.add_connection(&conn("/b")).unwrap();
    for i in 0..300u64 {
        let t = START + i * 1_000_000 - if i % 25 == 24 { 30_000_000 } else { 0 };
        let len = 80_000 + (i as usize * 377) % 40_000;
        let mut data = (len as u32).to_le_bytes().to_vec();
        data.extend((0..len).map(|k| (k as u64 * 31 + i) as u8));
        w.write(if i % 3 == 0 { a } else { b }, t, t, &data).unwrap();
    }
    w.finish().unwrap();
}

fn read(path: &Path) -> rbag_storage::Result<Vec<(u32, u64, Vec<u8>)>> {
    let r = rbag_storage::open(path)?;
    let out = r.messages(&Filter::default())?.map(|m| m.map(|m| (m.connection, m.log_time, m.data.to_vec()))).collect();
    out
}

fn streamed_reads_equal_held_reads(format: Format, compression: Compression, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    write(&path, format, compression);
    let held = read(&path).unwrap();
    assert_eq!(held.len(), 300);
    // Room for a decoder and a message, never for a chunk.
    budget::set_limit(9 << 20);
    let streamed = read(&path).unwrap();
    assert_eq!(streamed, held, "{name}");
    assert_eq!(budget::used(), 0, "every reservation is returned");
    // nth through the index, streamed too.
    let r = rbag_storage::open(&path).unwrap();
    let want: Vec<_> = held.iter().filter(|m| r.connection(m.0).unwrap().topic == "/b").collect();
    let got = r.nth("/b", 150).unwrap().unwrap();
    assert_eq!((got.log_time, got.data.to_vec()), (want[150].1, want[150].2.clone()));
}

#[test]
fn ros1_bz2_chunks_stream_when_the_budget_has_no_room() {
    streamed_reads_equal_held_reads(Format::Ros1, Compression::Bz2, "x.bag");
}

#[test]
fn ros1_lz4_chunks_stream_when_the_budget_has_no_room() {
    streamed_reads_equal_held_reads(Format::Ros1, Compression::Lz4, "x.bag");
}

#[test]
fn mcap_zstd_chunks_stream_when_the_budget_has_no_room() {
    streamed_reads_equal_held_reads(Format::Mcap, Compression::Zstd, "x.mcap");
}

#[test]
fn mcap_lz4_chunks_stream_when_the_budget_has_no_room() {
    streamed_reads_equal_held_reads(Format::Mcap, Compression::Lz4, "x.mcap");
}

#[test]
fn a_message_over_the_budget_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.bag");
    let options = WriteOptions { compression: Compression::Bz2, ..WriteOptions::default() };
    let mut w = rbag_storage::create(&path, Format::Ros1, &options).unwrap();
    let a = w.add_connection(&conn("/a")).unwrap();
    w.write(a, START, START, &vec![0u8; 3 << 20]).unwrap();
    w.finish().unwrap();
    budget::set_limit(2 << 20);
    let err = read(&path).unwrap_err();
    assert!(matches!(&err, Error::InFile { inner, .. } if matches!(**inner, Error::OverBudget { .. })), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("big.bag") && text.contains("memory budget of 2 MiB") && text.contains("RBAG_MEMORY_BUDGET"),
        "{text}"
    );
    budget::set_limit(64 << 20);
    assert_eq!(read(&path).unwrap().len(), 1);
}

#[test]
fn an_unindexed_bag_is_scanned_and_read_within_a_small_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.bag");
    write(&path, Format::Ros1, Compression::Bz2);
    let held = read(&path).unwrap();
    // Zero the index position: the recorder never closed the bag.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(10).position(|w| w == b"index_pos=").unwrap() + 10;
    bytes[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
    let unindexed = dir.path().join("x.bag.active");
    std::fs::write(&unindexed, bytes).unwrap();
    budget::set_limit(9 << 20);
    let r = rbag_storage::open(&unindexed).unwrap();
    assert!(!r.info().unwrap().indexed);
    assert_eq!(read(&unindexed).unwrap(), held);
}
