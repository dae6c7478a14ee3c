//! Hostile inputs for the ROS 1 bag parser: hand-made lying lengths, and every crash the fuzz
//! targets in `fuzz/` found (minimised, embedded as byte strings). Each test asserts that the
//! parser returns (Ok or Err) and never panics; the hand-made ones also assert the error.

use std::path::Path;

use rbag_storage::ros1::record::{op, parse_record, write_record, Limits, Records};
use rbag_storage::ros1::{reindex, Ros1Reader, MAGIC};
use rbag_storage::{Filter, StorageReader};

// ---------------------------------------------------------------------------------------------
// What the fuzz targets do, so a regression input replays exactly as it was found.

/// `fuzz_targets/ros1_record.rs`: `parse_record` and a `Records` walk over the raw bytes.
fn replay_record(data: &[u8]) -> rbag_storage::Result<()> {
    let limits = Limits::default();
    let first = parse_record(data, 0, &limits).map(|r| {
        assert!(r.len <= data.len());
        let _ = r.op();
    });
    for rec in Records::new(data, 4117, limits) {
        match rec {
            Ok(r) => {
                let _ = r.op();
                let _ = r.header.u32("conn");
                let _ = r.header.time("time");
                let _ = r.header.string("topic");
            }
            Err(_) => break,
        }
    }
    first
}

/// `fuzz_targets/ros1_bag.rs`: open (prefixing the magic line unless present), info, periods, every
/// message, nth on the first connection's topic, then reindex. Returns the first error of
/// the reader, if any; reindex's result is returned separately.
fn replay_bag(data: &[u8]) -> (rbag_storage::Result<()>, rbag_storage::Result<()>) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.bag");
    let mut bytes = Vec::new();
    if !data.starts_with(MAGIC) {
        bytes.extend_from_slice(MAGIC);
    }
    bytes.extend_from_slice(data);
    std::fs::write(&input, &bytes).unwrap();
    let read = read_all(&input);
    let output = dir.path().join("reindexed.bag");
    let re = reindex(&input, &output, None).map(|_| ());
    (read, re)
}

fn read_all(path: &Path) -> rbag_storage::Result<()> {
    let reader = Ros1Reader::open(path)?;
    reader.info()?;
    reader.median_periods()?;
    for msg in reader.messages(&Filter::default())? {
        msg?;
    }
    if let Some(topic) = reader.connections().first().map(|c| c.topic.clone()) {
        reader.nth(&topic, 0)?;
        reader.nth(&topic, 1)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Builders for compact bags (the bag header without its 4 KiB of padding).

fn record(fields: &[(&str, &[u8])], data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_record(&mut out, fields, data);
    out
}

fn bag_header(index_pos: u64, conn_count: u32, chunk_count: u32) -> Vec<u8> {
    record(
        &[
            ("chunk_count", &chunk_count.to_le_bytes()),
            ("conn_count", &conn_count.to_le_bytes()),
            ("index_pos", &index_pos.to_le_bytes()),
            ("op", &[op::BAG_HEADER]),
        ],
        &[],
    )
}

/// The bag header's length: every header written by `bag_header` has the same.
fn bag_header_len() -> u64 {
    bag_header(0, 0, 0).len() as u64
}

fn connection(id: u32, topic: &str) -> Vec<u8> {
    let mut data = Vec::new();
    for (k, v) in [("topic", topic), ("type", "std_msgs/String"), ("md5sum", "*"), ("message_definition", "string data\n")] {
        data.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
        data.extend_from_slice(k.as_bytes());
        data.push(b'=');
        data.extend_from_slice(v.as_bytes());
    }
    record(&[("op", &[op::CONNECTION]), ("conn", &id.to_le_bytes()), ("topic", topic.as_bytes())], &data)
}

fn message(conn: u32, secs: u32, payload: &[u8]) -> Vec<u8> {
    let mut time = secs.to_le_bytes().to_vec();
    time.extend_from_slice(&0u32.to_le_bytes());
    record(&[("op", &[op::MSG_DATA]), ("conn", &conn.to_le_bytes()), ("time", &time)], payload)
}

/// A chunk record whose `size` field says `size`, holding `data` uncompressed.
fn chunk(size: u32, data: &[u8]) -> Vec<u8> {
    record(&[("op", &[op::CHUNK]), ("compression", b"none"), ("size", &size.to_le_bytes())], data)
}

fn index_data(conn: u32, entries: &[(u32, u32)]) -> Vec<u8> {
    let mut data = Vec::new();
    for &(secs, offset) in entries {
        data.extend_from_slice(&secs.to_le_bytes());
        data.extend_from_slice(&0u32.to_le_bytes());
        data.extend_from_slice(&offset.to_le_bytes());
    }
    record(
        &[
            ("op", &[op::INDEX_DATA]),
            ("ver", &1u32.to_le_bytes()),
            ("conn", &conn.to_le_bytes()),
            ("count", &(entries.len() as u32).to_le_bytes()),
        ],
        &data,
    )
}

fn chunk_info(chunk_pos: u64, secs: u32, counts: &[(u32, u32)]) -> Vec<u8> {
    let mut time = secs.to_le_bytes().to_vec();
    time.extend_from_slice(&0u32.to_le_bytes());
    let mut data = Vec::new();
    for &(conn, n) in counts {
        data.extend_from_slice(&conn.to_le_bytes());
        data.extend_from_slice(&n.to_le_bytes());
    }
    record(
        &[
            ("op", &[op::CHUNK_INFO]),
            ("ver", &1u32.to_le_bytes()),
            ("chunk_pos", &chunk_pos.to_le_bytes()),
            ("start_time", &time),
            ("end_time", &time),
            ("count", &(counts.len() as u32).to_le_bytes()),
        ],
        &data,
    )
}

/// A complete, valid bag of one uncompressed chunk holding one message; `size` overrides the
/// chunk's `size` field and `indexed: false` leaves the index out (index_pos 0).
fn one_message_bag(size: Option<u32>, indexed: bool) -> Vec<u8> {
    let msg = message(0, 100, b"hello");
    let chunk_data = [connection(0, "/chatter"), msg].concat();
    let first = MAGIC.len() as u64 + bag_header_len();
    let chunk_rec = chunk(size.unwrap_or(chunk_data.len() as u32), &chunk_data);
    let conn_len = connection(0, "/chatter").len() as u32;
    let body = [chunk_rec, index_data(0, &[(100, conn_len)])].concat();
    let index_pos = first + body.len() as u64;
    let index = [connection(0, "/chatter"), chunk_info(first, 100, &[(0, 1)])].concat();
    if indexed {
        [MAGIC, &bag_header(index_pos, 1, 1), &body, &index].concat()
    } else {
        [MAGIC, &bag_header(0, 0, 0), &body].concat()
    }
}

fn open_bytes(bytes: &[u8]) -> rbag_storage::Result<Ros1Reader> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.bag");
    std::fs::write(&path, bytes).unwrap();
    Ros1Reader::open(&path)
}

fn read_bytes(bytes: &[u8]) -> rbag_storage::Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.bag");
    std::fs::write(&path, bytes).unwrap();
    read_all(&path)
}

// ---------------------------------------------------------------------------------------------
// Hand-made hostile inputs.

#[test]
fn builders_make_a_valid_bag() {
    read_bytes(&one_message_bag(None, true)).unwrap();
    let r = open_bytes(&one_message_bag(None, true)).unwrap();
    assert_eq!(r.info().unwrap().message_count, 1);
    let m = r.nth("/chatter", 0).unwrap().unwrap();
    assert_eq!(&m.data[..], b"hello");
    let r = open_bytes(&one_message_bag(None, false)).unwrap();
    assert!(!r.is_indexed());
    assert_eq!(r.messages(&Filter::default()).unwrap().count(), 1);
}

#[test]
fn truncated_record_is_an_error() {
    let full = message(0, 1, b"payload");
    for cut in 0..full.len() {
        assert!(parse_record(&full[..cut], 0, &Limits::default()).is_err(), "cut at {cut}");
        assert!(replay_record(&full[..cut]).is_err(), "cut at {cut}");
    }
    replay_record(&full).unwrap();
}

#[test]
fn header_length_of_u32_max_is_an_error() {
    let mut rec = message(0, 1, b"payload");
    rec[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(parse_record(&rec, 0, &Limits::default()).is_err());
    assert!(replay_record(&rec).is_err());
    assert!(replay_record(b"\xff\xff\xff\xff").is_err());
    // In a bag header, too.
    let bag = [MAGIC, b"\xff\xff\xff\xff\x04\x00\x00\x00op=\x03"].concat();
    assert!(open_bytes(&bag).is_err());
    assert!(replay_bag(&bag).0.is_err());
}

#[test]
fn data_and_field_lengths_of_u32_max_are_errors() {
    // Data length u32::MAX after a complete header.
    let mut rec = message(0, 1, b"");
    let hl = u32::from_le_bytes(rec[..4].try_into().unwrap()) as usize;
    rec[4 + hl..8 + hl].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(parse_record(&rec, 0, &Limits::default()).is_err());
    // A header field whose length is u32::MAX.
    let mut rec = message(0, 1, b"x");
    rec[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(parse_record(&rec, 0, &Limits::default()).is_err());
    // A record header of length 0 (no op field).
    assert!(parse_record(b"\x00\x00\x00\x00\x00\x00\x00\x00", 0, &Limits::default()).unwrap().op().is_err());
}

#[test]
fn index_pos_past_the_end_is_an_error() {
    let bag = one_message_bag(None, true);
    let end = bag.len() as u64;
    for index_pos in [end, end + 1, end + 4096, u64::MAX / 2, u64::MAX] {
        for (conns, chunks) in [(1, 1), (0, 0)] {
            let mut b = bag.clone();
            let header = bag_header(index_pos, conns, chunks);
            b[MAGIC.len()..MAGIC.len() + header.len()].copy_from_slice(&header);
            let r = open_bytes(&b);
            if index_pos == end && chunks == 0 {
                // An empty index section at the very end is a bag with no chunks: fine.
                continue;
            }
            assert!(r.is_err(), "index_pos {index_pos}, {chunks} chunks: opened");
            assert!(replay_bag(&b).0.is_err());
        }
    }
}

#[test]
fn chunk_size_of_two_gib_is_an_error() {
    for size in [2u32 << 30, (2u32 << 30) + 1, u32::MAX] {
        // Indexed: open reads only the index, so the lie shows when the chunk is read.
        let bag = one_message_bag(Some(size), true);
        match open_bytes(&bag) {
            Err(_) => {}
            Ok(r) => {
                let all: rbag_storage::Result<Vec<_>> = r.messages(&Filter::default()).unwrap().collect();
                assert!(all.is_err(), "size {size}: messages read");
                assert!(r.nth("/chatter", 0).is_err(), "size {size}: nth read");
            }
        }
        assert!(read_bytes(&bag).is_err());
        // Unindexed: the scan sees the lie (the chunk's records are still salvaged, uncompressed).
        let bag = one_message_bag(Some(size), false);
        let _ = open_bytes(&bag);
        let _ = replay_bag(&bag);
    }
}

#[test]
fn chunk_info_pointing_outside_the_chunk_area_is_an_error() {
    let bag = one_message_bag(None, true);
    let first = MAGIC.len() as u64 + bag_header_len();
    let info = chunk_info(first, 100, &[(0, 1)]);
    let at = bag.len() - info.len();
    for pos in [0, first - 1, at as u64, u64::MAX] {
        let mut b = bag.clone();
        b.truncate(at);
        b.extend_from_slice(&chunk_info(pos, 100, &[(0, 1)]));
        assert!(open_bytes(&b).is_err(), "chunk_pos {pos}: opened");
    }
}

#[test]
fn index_entry_past_the_chunk_is_an_error() {
    let bag = one_message_bag(None, true);
    let conn_len = connection(0, "/chatter").len() as u32;
    let good = index_data(0, &[(100, conn_len)]);
    let at = bag.windows(good.len()).position(|w| w == good.as_slice()).unwrap();
    for offset in [conn_len + 1, 10_000, u32::MAX] {
        let mut b = bag.clone();
        b[at..at + good.len()].copy_from_slice(&index_data(0, &[(100, offset)]));
        assert!(read_bytes(&b).is_err(), "offset {offset}: read");
    }
}

#[test]
fn garbage_after_the_magic_is_an_error() {
    for tail in [&b""[..], b"\x00", b"\x00\x00\x00\x00", b"\x04\x00\x00\x00\x04\x00\x00\x00op=\x03"] {
        let bag = [MAGIC, tail].concat();
        assert!(open_bytes(&bag).is_err(), "{tail:?}: opened");
        assert!(replay_bag(&bag).1.is_err(), "{tail:?}: reindexed");
    }
    assert!(open_bytes(b"#ROSBAG V1.2\n").is_err());
}

#[test]
fn every_truncation_of_a_bag_returns() {
    for bag in [one_message_bag(None, true), one_message_bag(None, false)] {
        for cut in 0..bag.len() {
            let _ = replay_bag(&bag[..cut]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Crashes found by the fuzz targets (minimised with `cargo fuzz tmin`).
