//! Hostile inputs for the ROS 1 bag parser: hand-made lying lengths, and every crash the fuzz
//! targets in `fuzz/` found (minimised, embedded as byte strings). Each test asserts that the
//! parser returns (Ok or Err) and never panics; the hand-made ones also assert the error.

use std::path::Path;

mod common;

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
    let re = reindex(&input, &output, None, false).map(|_| ());
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
    for (k, v) in
        [("topic", topic), ("type", "std_msgs/String"), ("md5sum", "*"), ("message_definition", "string data\n")]
    {
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

/// A header that puts the index past the end: the bag was cut short (an interrupted copy),
/// and is read by scanning, with a warning that says so (issue 18); never a panic.
#[test]
fn index_pos_past_the_end_is_read_by_scanning() {
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
            let r = r.unwrap_or_else(|e| panic!("index_pos {index_pos}, {chunks} chunks: {e}"));
            assert!(r.warnings().iter().any(|w| w.contains("cut short")), "index_pos {index_pos}: {:?}", r.warnings());
            let _ = replay_bag(&b);
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

// Crash 1 (ros1_bag, ASan build, found 7 minutes into the first 20-minute run; `cargo fuzz tmin`
// could not shrink it: every shorter input moves the absolute offsets the bag depends on).
// A bag whose only chunk claims 0xFFFF001B bytes of data (the file has 2589): the index
// still loads, but `median_periods` reads "the index records after the chunk" at
// data_offset + data_len, past the end of the file, with length 0. `read_at` let a zero-length
// read past the end through and sliced the mmap out of range:
//   panicked at bytes-1.12.1/src/bytes.rs:374: range end out of bounds: 4294901925 <= 2589
//   via mmap.rs:49 (Mapped::slice) <- reader.rs:108 (read_at) <- reader.rs:270 (index_times)
//   <- reader.rs:462 (periods) <- reader.rs:393 (median_periods)   [lines as of b5d5db3^]
// Fixed in b5d5db3 (read_at checks the offset; index_times rejects data past the next chunk).
const CRASH_INDEX_DATA_PAST_EOF: &[u8] =
    b"#ROSBAG V2.0\x0aE\x00\x00\x00\x10\x00\x00\x00chunk_count=\x04\x00\x00\x00\x0f\x00\x00\x00conn_co\
    unt=\x02\x00\x00\x00\x12\x00\x00\x00index_pos=\xbd\x06\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00op\
    =\x03\x00\x00\x00\x00(\x00\x00\x00\x04\x00\x00\x00op=\x05\x0f\x00\x00\x00compression=lz4\x09\x00\
    \x00\x00size=\xd5\x01\x00\x00\x1b\x00\xff\xff\x04\"M\x18dp\xb9\x08\x01\x00\x00\xff\x1d'\x00\x00\
    \x00\x04\x00\x00\x00op=\x07\x09\x00\x00\x00conn=\x00\x00\x00\x00\x0e\x00\x00\x00topic=/chatter\
    \x8a\x16\x00\x02\xf0\x09\x14\x00\x00\x00type=std_msgs/StringY\x00\xf6Nmd5sum=992ce8a1687cec8c8bd\
    883ec73ca41d1\x1d\x00\x00\x00message_definition=float64 x\x0a\x10\x00\x00\x00callerid=/talker&\
    \xb9\x00\x19\x02\xb9\x00\xe3\x0d\x00\x00\x00time=\x00\xf1Se\x00\xdf\x00S\x00\x01\x02\x03$\x0c\
    \x00\x09\xeb\x00V\x01\x00\x00\x00\x0b\xeb\x00^pose\x8b\x13\x00\x14\x18\xe5\x00\x82geometry\xea\
    \x00_Point\xe9\x00b\x1c\x01\xe9\x00\xd0\x01\xe1\xf5\x05\x05\x00\x00\x00\x00\x01\x02\x03\x04\x00\
    \x00\x00\x00s\x94\x84w/\x00\x00\x00\x04\x00\x00\x00op=\x04\x08\x00\x00\x00ver=\x01\x00\x00\x00\
    \x09\x00\x00\x00conn=\x00\x00\x00\x00\x0a\x00\x00\x00count=\x01\x00\x00\x00\x0c\x00\x00\x00\x00\
    \xf1Se\x00\x00\x00\x00\xb9\x00\x00\x00/\x00\x00\x00\x04\x00\x00\x00op=\x04\x08\x00\x00\x00ver=\
    \x01\x00\x00\x00\x09\x00\x00\x00conn=\x01\x00\x00\x00\x0a\x00\x00\x00count=\x01\x00\x00\x00\x0c\
    \x00\x00\x00\x00\xf1Se\x01\xe1\xf5\x05\xa2\x01\x00\x00(\x00\x00\x00\x04\x00\x00\x00op=\x05\x0f\
    \x00\x00\x00compression=lz4\x09\x00\x00\x00size=G\x01\x00\x00\x9c\x00\x00\x00\x04\"M\x18dp\xb9\
    \x89\x00\x00\x00\xff%&\x00\x00\x00\x04\x00\x00\x00op=\x02\x09\x00\x00\x00conn=\x00\x00\x00\x00\
    \x0d\x00\x00\x00time=\x00\xf1Se\x02\xc2\xeb\x0b\x06\x00\x00\x00\x00\x01\x02\x03\x04\x054\x00\x02\
    \x1c\x014\x00U\x03\xa3\xe1\x11\x074\x00\x1f\x06i\x00\x13V\x04\x84\xd7\x17\x085\x00\x1f\x076\x00\
    \x02\x0dk\x00W\x05e\xcd\x1d\x096\x00\x1f\x087\x00\x02\x0d\xd6\x00X\x06F\xc3#\x0a7\x00\x1f\x098\
    \x00\x02\x0do\x00T\x07\x00\x00\x00\x0b8\x00`\x05\x06\x07\x08\x09\x0a\x00\x00\x00\x00.\xcc\xb7\
    \xd0/\x00\x00\x00\x04\x00\x00\x00op=\x04\x08\x00\x00\x00ver=\x01\x00\x00\x00\x09\x00\x00\x00conn\
    =\x00\x00\x00\x00\x0a\x00\x00\x00count=\x03\x00\x00\x00$\x00\x00\x00\x00\xf1Se\x02\xc2\xeb\x0b\
    \x00\x00\x00\x00\x00\xf1Se\x04\x84\xd7\x17i\x00\x00\x00\x00\xf1Se\x06F\xc3#\xd6\x00\x00\x00/\x00\
    \x00\x00\x04\x00\x00\x00op=\x04\x08\x00\x00\x00ver=\x01\x00\x00\x00\x09\x00\x00\x00conn=\x01\x00\
    \x00\x00\x0a\x00\x00\x00count=\x03\x00\x00\x00$\x00\x00\x00\x00\xf1Se\x03\xa3\xe1\x114\x00\x00\
    \x00\x00\xf1Se\x05e\xcd\x1d\x9f\x00\x00\x00\x00\xf1Se\x07\x00\x00\x00\x0e\x01\x00\x00(\x00\x00\
    \x00\x04\x00\x00\x00op=\x05\x0f\x00\x00\x00compression=lz4\x09\x00\x00\x00size=>\x01\x00\x00\xa4\
    \x00\x00\x00\x04\"M\x18dp\xb9\x91\x00\x00\x00\xff+&\x00\x00\x00\x04\x00\x00\x00op=\x02\x09\x00\
    \x00\x00conn=\x00\x00\x00\x00\x0d\x00\x00\x00time=\x00\xf1Se\x08\xe1\xf5\x05\x0c\x00\x00\x00\x00\
    \x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b:\x00\x02\x1c\x01:\x00S\x09\xc2\xeb\x0b\x04:\x00\x0f\
    l\x00\x13S\x0a\xa3\xe1\x11\x052\x00\x1f\x043\x00\x02\x0de\x00T\x0b\x84\xd7\x17\x063\x00\x1f\x054\
    \x00\x02\x0d\xd3\x00U\x0ce\xcd\x1d\x074\x00\x1f\x065\x00\x02\x0di\x00\xf0\x01\x0dF\xc3#\x08\x00\
    \x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x00\x00\x00\x00Gr#$/\x00\x00\x00\x04\x00\x00\x00op=\x04\
    \x08\x00\x00\x00ver=\x01\x00\x00\x00\x09\x00\x00\x00conn=\x00\x00\x00\x00\x0a\x00\x00\x00count=\
    \x03\x00\x00\x00$\x00\x00\x00\x00\xf1Se\x08\xe1\xf5\x05\x00\x00\x00\x00\x00\xf1Se\x0a\xa3\xe1\
    \x11l\x00\x00\x00\x00\xf1Se\x0ce\xcd\x1d\xd3\x00\x00\x00/\x00\x00\x00\x04\x00\x00\x00op=\x04\x08\
    \x00\x00\x00ver=\x01\x00\x00\x00\x09\x00\x00\x00conn=\x01\x00\x00\x00\x0a\x00\x00\x00count=\x03\
    \x00\x00\x00$\x00\x00\x00\x00\xf1Se\x09\xc2\xeb\x0b:\x00\x00\x00\x00\xf1Se\x0b\x84\xd7\x17\x9f\
    \x00\x00\x00\x00\xf1Se\x0dF\xc3#\x08\x01\x00\x00(\x00\x00\x00\x04\x00\x00\x00op=\x05\x0f\x00\x00\
    \x00compression=lz4\x09\x00\x00\x00size=G\x01\x00\x00\xa0\x00\x00\x00\x04\"M\x18dp\xb9\x8d\x00\
    \x00\x00\xff(&\x00\x00\x00\x04\x00\x00\x00op=\x02\x09\x00\x00\x00conn=\x00\x00\x00\x00\x0d\x00\
    \x00\x00time=\x00\xf1Se\x0e\x00\x00\x00\x09\x00\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x086\x00\
    \x02\x1c\x017\x00X\x0f\xe1\xf5\x05\x0a7\x00\x1f\x098\x00\x02\x0do\x00Y\x10\xc2\xeb\x0b\x0b8\x00\
    \x1f\x0a9\x00\x02\x0dq\x00Z\x11\xa3\xe1\x11\x0c9\x00\x1f\x0b:\x00\x02\x0ds\x00S\x12\x84\xd7\x17\
    \x04:\x00\x0f2\x00\x02\x0dl\x00\xd0\x13e\xcd\x1d\x05\x00\x00\x00\x00\x01\x02\x03\x04\x00\x00\x00\
    \x00Y\xc8d}/\x00\x00\x00\x04\x00\x00\x00op=\x04\x08\x00\x00\x00ver=\x01\x00\x00\x00\x09\x00\x00\
    \x00conn=\x00\x00\x00\x00\x0a\x00\x00\x00count=\x03\x00\x00\x00$\x00\x00\x00\x00\xf1Scompression\
    =e\x10\xc2\xeb\x0bo\x00\x00\x00\x00\xf1Se\x12\x84\xd7\x17\xe2\x00\x00\x00/\x00\x00\x00\x04\x00\
    \x00\x00op=\x04\x08\x00\x00\x00ver=\x01\x00\x00\x00\x09\x00\x00\x00conn=\x01\x00\x00\x00\x0a\x00\
    \x00\x00count=\x03\x00\x00\x00$\xf8\x00\x00\x00\xf1Se\x0f\xe1\xf5\x057\x00\x00\x00\x00\xf1Se\x11\
    \xa3\xe1\x11\xa8\x00\x00\x00\x00\xf1Se\x13e\xcd\x1d\x14\x01\x00\x00'\x00\x00\x00\x04\x00\x00\x00\
    op=\x07\x09\x00\x00\x00conn=\x00\x00\x00\x00\x0e\x00\x00\x00topic=/chatter\x8a\x00\x00\x00\x0e\
    \x00\x00\x00topic=/chatter\x14\x00\x00\x00type=std_msgs/String'\x00\x00\x00md5sum=992ce8a1687cec\
    8c8bd883ec73ca41d1\x1d\x00\x00\x00message_definition=float64 x\x0a\x10\x00\x00\x00callerid=/talk\
    er$\x00\x00\x00\x04\x00\x00\x00op=\x07\x09\x00\x00\x00conn=\x01\x00\x00\x00\x0b\x00\x00\x00topic\
    =/pose\x8b\x00\x00\x00\x0b\x00\x00\x00topic=/pose\x18\x00\x00\x00type=geometry_msgs/Point'\x00\
    \x00\x00md5sum=992ce8a1687cec8c8bd883ec73ca41d1\x1d\x00\x00\x00message_definition=float64 x\x0a\
    \x10\x00\x00\x00callerid=/talkerd\x00\x00\x00\x04\x00\x00\x00op=\x06\x08\x00\x00\x00ver=\x01\x00\
    \x00\x00\x12\x00\x00\x00chunk_pos=Z\x00\x00\x00\x00\x00\x00\x00\x13\x00\x00\x00start_time=\x00\
    \xf1Se\x00\x00\x00\x00\x11\x00\x00\x00end_time=\x00\xf1Se\x01\xe1\xf5\x05\x0a\x00\x00\x00count=\
    \x02\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\
    d\x00\x00\x00\x04\x00\x00\x00op=\x06\x08\x00\x00\x00ver=\x01\x00\x00\x00\x12\x00\x00\x00chunk_po\
    s=+\x02\x00\x00\x00\x00\x00\x00\x13\x00\x00\x00start_time=\x00\xf1Se\x07\x00\x00\x00\x11\x00\x00\
    \x00end_time=\x00\xf1Se\x06F\xc3#\x0a\x00\x00\x00count=\x02\x00\x00\x00\x10\x00\x00\x00\x00\x00\
    \x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00d\x00\x00\x00\x04\x00\x00\x00op=\x06\x08\
    \x00\x00\x00ver=\x01\x00\x00\x00\x12\x00\x00\x00chunk_pos=\xad\x03\x00\x00\x00\x00\x00\x00\x13\
    \x00\x00\x00start_time=\x00\xf1Se\x08\xe1\xf5\x05\x11\x00\x00\x00end_time=\x00\xf1Se\x0dF\xc3#\
    \x0a\x00\x00\x00count=\x02\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x01\x00\
    \x00\x00\x03\x00\x00\x00d\x00\x00\x00\x04\x00\x00\x00op=\x06\x08\x00\x00\x00ver=\x01\x00\x00\x00\
    \x12\x00\x00\x00chunk_pos=7\x05\x00\x00\x00\x00\x00\x00\x13\x00\x00\x00start_time=\x00\xf1Se\x0e\
    \x00\x00\x00\x11\x00\x00\x00end_time=\x00\xf1Se\x13e\xcd\x1d\x0a\x00\x00\x00count=\x02\x00\x00\
    \x00\x10\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00";

// The same bug from a second input (2175 bytes; an lz4 chunk whose data length runs past the
// end), left in fuzz/artifacts by an earlier run of the same target on this tree.
const CRASH_INDEX_DATA_PAST_EOF_2: &[u8] =
    b"#ROSBAG V2.0\x0aE\x00\x00\x00\x10\x00\x00\x00chunk_count=\x04\x00\x00\x00\x0f\x00\x00\x00conn_co\
    unt=\x02\x00\x00\x00\x12\x00\x00\x00index_pos=/\x05\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00op=\
    \x03\x00\x00\x00\x00(\x00\x00\x00\x04\x00\x00\x00op=\x05\x0f\x00\x00\x00compression=lz4\x09\x00\
    \x00\x00size=\xeb\x00\x00\x00\xe0\x00\x00\x00\x04\"M\x18dp\xb9\xcd\x00\x00\x00\xff\x1d'\x00\x00\
    \x00\x04\x00\x00\x00op=\x07\x09\x00\x00\x00conn=\x00\x00\x00\x00\x0e\x00\x00\x00topic=/chatter\
    \x8a\x16\x00\x02\xf0\x09\x14\x00\x00\x00type=std_msgs/StringY\x00\xf6Nmd5sum=992ce8a1687cec8c8bd\
    883ec73ca41d1\x1d\x00\x00\x00message_definition=float64 x\x0a\x10\x00\x00\x00callerid=/talker&\
    \xb9\x00\x19\x02\xb9\x00\xf0\x0a\x0d\x00\x00\x00time=\x00\xf1Se\x00\x00\x00\x00\x04\x00\x00\x00\
    \x00\x01\x02\x03\x00\x00\x00\x00\xa5V\x8f\xc7/\x00\x00\x00\x04\x00\x00\x00op=\x04\x08\x00\x00\
    \x00ver=\x01\x00\x00\x00\x09\x00\x00\x00conn=\x00\x00\x00\x00\x0a\x00\x00\x00count=\x01\x00\x00\
    \x00\x0c\x00\x00\x00\x00\xf1Se\x00\x00\x00\x00\xb9\x00\x00\x00(\x00\x00\x00\x04\x00\x00\x00op=\
    \x05\x0f\x00\x00\x00compression=lz4\x09\x00\x00\x00size=\xea\x00\x00\x00\x00\x00\xe1\x00\x04\"M\
    \x18dp\xb9\xce\x00\x00\x00\xfe\x1a$\x00\x00\x00\x04\x00\x00\x00op=\x07\x09\x00\x00\x00conn=\x01\
    \x00\x00\x00\x0b\x00\x00\x00topic=/pose\x8b\x13\x00\xf6n\x18\x00\x00\x00type=geometry_msgs/Point\
    '\x00\x00\x00md5sum=992ce8a1687cec8c8bd883ec73ca41d1\x1d\x00\x00\x00message_definition=float64 x\
    \x0a\x10\x00\x00\x00callerid=/talker&\xb7\x00\x19\x02\xb7\x00\xf0\x0b\x0d\x00\x00\x00time=\x00\
    \xf1Se\x01\xe1\xf5\x05\x05\x00\x00\x00\x00\x01\x02\x03\x04\x00\x00\x00\x00\x95\x05K\x0d/\x00\x00\
    \x00\x04\x00\x00\x00op=\x04\x08\x00\x00\x00ver=\x01\x00\x00\x00\x09\x00\x00\x00conn=\x01\x00\x00\
    \x00\x0a\x00\x00\x00count=\x01\x00\x00\x00\x0c\x00\x00\x00\x00\xf1Se\x01\xe1\xf5\x05\xb7\x00\x00\
    \x00(\x00\x00\x00\x04\x00\x00\x00op=\x05\x0f\x00\x00\x00compression=lz4\x09\x00\x00\x00size=i\
    \x00\x00\x00a\x00\x00\x00\x04\"M\x18dp\xb9N\x00\x00\x00\xff%&\x00\x00\x00\x04\x00\x00\x00op=\x02\
    \x09\x00\x00\x00conn-\x00\x00\x00\x00\x0d\x00\x00\x00time=\x00\xf1Se\x02\xc2\xeb\x0b\x06\x00\x00\
    \x00\x00\x01\x02\x03\x04\x054\x00\x02\x1c\x014\x00\xf0\x00\x03\xa3\xe1\x11\x07\x00\x00\x00\x00\
    \x01\x02\x03\x04\x05\x06\x00\x00\x00\x00\xfdd\x92\x99/\x00\x00\x00\x04\x00\x00\x00op=\x04\x08\
    \x00\x00\x00ver=\x01\x00\x00\x00\x09\x00\x00\x00conn=\x00\x00\x00\x00\x0a\x00\x00\x00count=\x01\
    \x00\x00\x00\x0c\x00\x00\x00\x00\xf1Se\x02\xc2\xeb\x0b\x00\x00\x00\x00/\x00\x00\x00\x04\x00\x00\
    \x00op=\x04\x08\x00\x00\x00ver=\x01\x00\x00\x00\x09\x00\x00\x00conn=\x01\x00\x00\x00\x0a\x00\x00\
    \x00count=\x01\x00\x00\x00\x0c\x00\x00\x00\x00\xf1Se\x03\xa3\xe1\x114\x00\x00\x00(\x00\x00\x00\
    \x04\x00\x00\x00op=\x05\x0f\x00\x00\x00compression=lz4\x09\x00\x00\x00size=m\x00\x00\x00a\x00\
    \x00\x00\x04\"M\x18dp\xb9N\x00\x00\x00\xff'&\x00\x00\x00\x04\x00\x00\x00op=\x02\x09\x00\x00\x00c\
    onn=\x00\x00\x00\x00\x0d\x00\x00\x00time=\x00\xf1Se\x04\x84\xd7\x17\x08\x00\x00\x00\x00\x01\x02\
    \x03\x04\x05\x06\x076\x00\x02\x1c\x016\x00R\x05e\xcd\x1d\x096\x00`\x03\x04\x05\x06\x07\x08\x00\
    \x00\x00\x00\x19q\x8c\x9b/\x00\x00\x00\x04\x00\x00\x00op=\x04\x08\x00\x00\x00ver=\x01\x00\x00\
    \x00\x09\x00\x00\x00conn=\x00\x00\x00\x00\x0a\x00\x00\x00count=\x01\x00\x00\x00\x0c\x00\x00\x00\
    \x00\xf1Se\x04\x84\xd7\x17\x00\x00\x00\x00/\x00\x00\x00\x04\x00\x00\x00op=\x04\x08\x00\x00\x00ve\
    r=\x01\x00\x00\x00\x09\x00\x00\x00conn=\x01\x00\x00\x00\x0a\x00\x00\x00count=\x01\x00\x00\x00\
    \x0c\x00\x00\x00\x00\xf1Se\x05e\xcd\x1d6\x00\x00\x00'\x00\x00\x00\x04\x00\x00\x00op=\x07\x09\x00\
    \x00\x00conn=\x00\x00\x00\x00\x0e\x00\x00\x00topic=/chatter\x8a\x00\x00\x00\x0e\x00\x00\x00topic\
    =/chatter\x14\x00\x00\x00type=std_msgs/String'\x00\x00\x00md5sum=992ce8a1687cec8c8bd883ec73ca41d\
    1\x1d\x00\x00\x00message_definition=float64 x\x0a\x10\x00\x00\x00callerid=/talker$\x00\x00\x00\
    \x04\x00\x00\x00op=\x07\x09\x00\x00\x00conn=\x01\x00\x00\x00\x0b\x00\x00\x00topic=/pose\x8b\x00\
    \x00\x00\x0b\x00\x00\x00topic=/pose\x18\x00\x00\x00type=geometry_msgs/Point'\x00\x00\x00md5sum=9\
    92ce8a1687cec8c8bd883ec73ca41d1\x1d\x00\x00\x00message_definition=float64 x\x0a\x10\x00\x00\x00c\
    allerid=/talkerd\x00\x00\x00\x04\x00\x00\x00op=\x06\x08\x00\x00\x00ver=\x01\x00\x00\x00\x12\x00\
    \x00\x00chunk_pos=Z\x00\x00\x00\x00\x00\x00\x00\x13\x00\x00\x00start_time=\x00\xf1Se\x00\x00\x00\
    \x00\x11\x00\x00\x00end_time=\x00\xf1Se\x00\x00\x00\x00\x0a\x00\x00\x00count=\x01\x00\x00\x00\
    \x08\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00d\x00\x00\x00\x04\x00\x00\x00op=\x06\x08\x00\x00\
    \x00ver=\x01\x00\x00\x00\x12\x00\x00\x00chunk_pos=\xad\x01\x00\x00\x00\x00\x00\x00\x13\x00\x00\
    \x00start_time=\x00\xf1Se\x01\xe1\xf5\x05\x11\x00\x00\x00end_time=\x00\xf1Se\x01\xe1\xf5\x05\x0a\
    \x00\x00\x00count=\x01\x00\x00\x00\x08\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00d\x00\x00\x00\
    \x04\x00\x00\x00op=\x06\x08\x00\x00\x00ver=\x01\x00\x00\x00\x12\x00\x00\x00chunk_pos=\x01\x03\
    \x00\x00\x00\x00\x00\x00\x13\x00\x00\x00start_time=\x00\xf1Se\x02\xc2\xeb\x0b\x11\x00\x00\x00end\
    _time=\x00\xf1Se\x03\xa3\xe1\x11\x0a\x00\x00\x00count=\x02\x00\x00\x00\x10\x00\x00\x00\x00\x00\
    \x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00d\x00\x00\x00\x04\x00\x00\x00op=\x06\x08\
    \x00\x00\x00ver=\x01\x00\x00\x00\x12\x00\x00\x00chunk_pos=\x18\x04\x00\x00\x00\x00\x00\x00\x13\
    \x00\x00\x00start_time=\x00\xf1Se\x04\x84\xd7\x17\x11\x00\x00\x00end_time=\x00\xf1Se\x05e\xcd\
    \x1d\x0a\x00\x00\x00count=\x02\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\
    \x00\x00\x00\x01\x00\x00\x00";

#[test]
fn fuzz_crash_index_data_past_eof() {
    for input in [CRASH_INDEX_DATA_PAST_EOF, CRASH_INDEX_DATA_PAST_EOF_2] {
        let (read, _reindex) = replay_bag(input);
        assert!(read.is_err(), "a chunk whose data runs past the end of the file must be an error");
    }
}

/// Crash 1 minimised by hand: a valid one-message bag whose chunk's data length field is
/// patched to run past the end of the file. Opening works (the index is intact); asking for
/// the topic periods must fail, not panic.
#[test]
fn fuzz_crash_index_data_past_eof_minimal() {
    let mut bag = one_message_bag(None, true);
    let first = MAGIC.len() + bag_header_len() as usize;
    let hl = u32::from_le_bytes(bag[first..first + 4].try_into().unwrap()) as usize;
    let data_len_at = first + 4 + hl;
    for data_len in [bag.len() as u32, 0xFFFF_001B, u32::MAX] {
        bag[data_len_at..data_len_at + 4].copy_from_slice(&data_len.to_le_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("past-eof.bag");
        std::fs::write(&path, &bag).unwrap();
        let reader = Ros1Reader::open(&path).unwrap();
        assert!(reader.median_periods().is_err(), "data length {data_len}");
        assert!(reader.messages(&Filter::default()).unwrap().any(|m| m.is_err()), "data length {data_len}");
        assert!(read_all(&path).is_err());
    }
}

// Crash 2, found by hand while seeding the fuzzer, not by mutation (a 1.5 KB bz2 stream that
// inflates to 2 GiB is beyond what mutation finds): a decompression bomb. An unindexed bag
// (index_pos 0) of 1660 bytes holding one bz2 chunk whose `size` field says 2 GiB (then exactly
// Limits::max_data_len), with 1522 bytes of bz2 data that inflate to 2 GiB of zeros.
// `Ros1Reader::open` scanned it and compression.rs `decompress` (read_to_end up to size + 1)
// allocated and filled 2 GiB: libFuzzer (ASan, -rss_limit_mb=2048 -timeout=10) reported a
// timeout in compression.rs:35 (decompress) <- scan.rs:101 (scan_record) <- reader.rs
// (load_by_scan) <- Ros1Reader::open, RSS past 1 GB after 10 s; without a sanitizer the replay
// took 14.5 s and 2.1 GB (open, then reindex's scan). Since e8ad057 max_data_len is 1 GiB, so
// this `size` is refused; but see BZ2_BOMB_1GIB below for the same bomb within the limit.
const BZ2_BOMB_2GIB: &[u8] =
    b"#ROSBAG V2.0\x0aE\x00\x00\x00\x10\x00\x00\x00chunk_count=\x00\x00\x00\x00\x0f\x00\x00\x00conn_co\
    unt=\x00\x00\x00\x00\x12\x00\x00\x00index_pos=\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00op\
    =\x03\x00\x00\x00\x00(\x00\x00\x00\x04\x00\x00\x00op=\x05\x0f\x00\x00\x00compression=bz2\x09\x00\
    \x00\x00size=\x00\x00\x00\x80\xf2\x05\x00\x00BZh91AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\
    \x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \
    \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80M\
    FB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\
    \xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\
    \x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971A\
    Y&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\
    \x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\
    \xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\
    \x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\
    \xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\
    \x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \
    \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80M\
    FB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\
    \xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\
    \x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971A\
    Y&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\
    \x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\
    \xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\
    \x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\
    \xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\
    \x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \
    \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80M\
    FB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\
    \xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\
    \x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971A\
    Y&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\
    \x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\
    \xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\
    \x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\
    \xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\
    \x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \
    \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80M\
    FB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\
    \xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\
    \x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971A\
    Y&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\
    \x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\
    \xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\
    \x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\
    \xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\
    \x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \
    \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x80\xb0\xe8\x0c\x01\x14\xa5@\x80\xc0\x00\x00\x04\x00\x08\
    \x20\x000\xcc\x05)\xa6H\x91!\xb1H\x91!\xe2\xeeH\xa7\x0a\x12\x1bse3@";

/// A torn bz2 chunk that inflates to gigabytes: salvaging it once allocated 2 GiB (the fuzzer's
/// RSS limit caught it). Salvage now stops at `Limits::salvage_limit` (64 MiB here), so both
/// the reader and reindex keep what decodes within it and succeed.
#[test]
fn fuzz_crash_bz2_bomb_claims_2gib() {
    let (read, reindexed) = replay_bag(BZ2_BOMB_2GIB);
    assert!(read.is_ok(), "{read:?}");
    assert!(reindexed.is_ok(), "{reindexed:?}");
    assert_eq!(rbag_storage::ros1::Limits::default().salvage_limit(BZ2_BOMB_2GIB.len()), 64 << 20);
}

// Crash 2 again, within the 1 GiB limit (fixed in b6b382d by a ratio limit, since replaced by
// streamed decoding under the memory budget): 924 bytes, an unindexed bag with one bz2
// chunk whose `size` says 1 GiB (= Limits::default().max_data_len) and whose 786 bytes of
// bz2 data inflate to 1 GiB + 1 MiB of zeros. The chunk is not torn, so `salvage_limit` does
// not apply: scan.rs:105 called compression.rs `decompress`, which trusted `size` and inflated
// (read_to_end, compression.rs:36) up to size + 1 bytes before finding the size wrong. The
// replay (open, then reindex, which scans again) took 9.7 s and 1.08 GB of RSS with no
// sanitizer. The ASan fuzz binary reported `libFuzzer: timeout` inside the first inflation:
// compression.rs:36 (decompress) <- scan.rs:105 (scan_record) <- scan.rs:57 (scan)
// <- reader.rs:186 (load_by_scan) <- Ros1Reader::open. An indexed
// bag did the same at the first `messages`/`nth` (reader.rs:337). (Lines as of e8ad057.)
const BZ2_BOMB_1GIB: &[u8] =
    b"#ROSBAG V2.0\x0aE\x00\x00\x00\x10\x00\x00\x00chunk_count=\x00\x00\x00\x00\x0f\x00\x00\x00conn_co\
    unt=\x00\x00\x00\x00\x12\x00\x00\x00index_pos=\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00op\
    =\x03\x00\x00\x00\x00(\x00\x00\x00\x04\x00\x00\x00op=\x05\x0f\x00\x00\x00compression=bz2\x09\x00\
    \x00\x00size=\x00\x00\x00@\x12\x03\x00\x00BZh91AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\
    \x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\
    \x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\
    \xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\
    \x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\
    \x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\
    \x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\
    \xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\
    \x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\
    \x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\
    \x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\
    \x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\
    \x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\
    \xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\
    \x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\
    \x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\
    \x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\
    \xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\
    \x01_\x8e@\x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\
    \x00\xc0\x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\
    \x00\x00\x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY\x0e\x09\xe2\xdf\x01_\x8e@\x00\xc0\x00\x00\
    \x08 \x000\x80MFB\xa0%\xa9\x0a\x80\x971AY&SY2t\xe19\x00\x92Z\xc4\x00\xc0\x00\x00\x04\x00\x08 \
    \x000\xcc\x05)\xa6\x92\x91\x11\xb0\xa5\"#\xc5\xdc\x91N\x14$# \x16\xbc\x80";

/// A 924-byte unindexed bag whose 786 bytes of bz2 claim (and would inflate to) 1 GiB: it
/// once cost 10 s and 1 GB RSS twice over. A high ratio alone is no longer refused (blank
/// images compress like this); the scan decodes the chunk as a stream, record by record, and
/// stops at its first record, which is not one: nothing is held, and nothing is kept.
#[test]
fn fuzz_crash_bz2_bomb_claims_1gib() {
    let started = std::time::Instant::now();
    let (read, reindexed) = replay_bag(BZ2_BOMB_1GIB);
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(read.is_ok(), "{read:?}");
    assert!(reindexed.is_ok(), "{reindexed:?}");
}

// ---------------------------------------------------------------------------------------------
// MCAP (fuzz target mcap_file).

/// What the `mcap_file` target does with one input.
fn replay_mcap(bytes: &[u8]) -> rbag_storage::Result<usize> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input.mcap");
    std::fs::write(&path, bytes).unwrap();
    let reader = rbag_storage::mcap::McapReader::open(&path)?;
    reader.info()?;
    reader.median_periods()?;
    let mut n = 0;
    for m in reader.messages(&Filter::default())? {
        m?;
        n += 1;
    }
    Ok(n)
}

fn mcap_record(op: u8, body: &[u8]) -> Vec<u8> {
    let mut r = vec![op];
    r.extend_from_slice(&(body.len() as u64).to_le_bytes());
    r.extend_from_slice(body);
    r
}

/// Ends a hand-built MCAP file: a Footer pointing at `summary_start` (no summary offsets, no
/// CRC) and the closing magic.
fn mcap_end(file: &mut Vec<u8>, summary_start: u64) {
    let mut footer = summary_start.to_le_bytes().to_vec();
    footer.extend_from_slice(&[0; 12]);
    file.extend(mcap_record(0x02, &footer));
    file.extend_from_slice(mcap::MAGIC);
}

/// Found by fuzzing: a summary Schema record whose name claims 4 GiB made the `mcap` crate
/// allocate that much before checking. rbag parses summary records itself, within bounds.
#[test]
fn mcap_summary_record_with_a_lying_string_length() {
    let mut file = mcap::MAGIC.to_vec();
    file.extend(mcap_record(0x01, &[0, 0, 0, 0, 0, 0, 0, 0]));
    file.extend(mcap_record(0x0F, &[0, 0, 0, 0]));
    let summary_start = file.len() as u64;
    let mut schema = 1u16.to_le_bytes().to_vec();
    schema.extend_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    schema.extend_from_slice(b"std_msgs/msg/String");
    file.extend(mcap_record(0x03, &schema));
    mcap_end(&mut file, summary_start);
    // The summary is refused, the file is scanned (it holds no messages), nothing allocates.
    assert_eq!(replay_mcap(&file).unwrap(), 0);
}

/// Found by fuzzing (`mcap_file`, 2026-11-27; three inputs, one bug): the per-channel message
/// counts a summary's Statistics record claims added up past `u64::MAX` in `info`'s sum, which
/// panics in a build with overflow checks. This file is the smallest the summary is read from:
/// an empty uncompressed chunk and its index, two channels, and Statistics claiming 2^63
/// messages on each. Counts a file claims are summed saturating.
#[test]
fn mcap_claimed_counts_that_overflow_when_summed() {
    let string = |out: &mut Vec<u8>, text: &str| {
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    };
    let mut file = mcap::MAGIC.to_vec();
    // Header: empty profile and library.
    file.extend(mcap_record(0x01, &[0; 8]));
    // An empty uncompressed Chunk: times, uncompressed size and CRC 0, compression "", no records.
    let chunk_start = file.len() as u64;
    let mut chunk = vec![0; 8 + 8 + 8 + 4];
    string(&mut chunk, "");
    chunk.extend_from_slice(&0u64.to_le_bytes());
    file.extend(mcap_record(0x06, &chunk));
    let chunk_length = file.len() as u64 - chunk_start;
    file.extend(mcap_record(0x0F, &[0; 4])); // DataEnd
    let summary_start = file.len() as u64;
    for id in [1u16, 2] {
        let mut channel = id.to_le_bytes().to_vec();
        channel.extend_from_slice(&0u16.to_le_bytes()); // no schema
        string(&mut channel, "/t");
        string(&mut channel, "cdr");
        channel.extend_from_slice(&0u32.to_le_bytes()); // no metadata
        file.extend(mcap_record(0x04, &channel));
    }
    // Statistics: u64::MAX messages, 2 channels, 1 chunk; per channel 2^63.
    let mut stats = u64::MAX.to_le_bytes().to_vec();
    stats.extend_from_slice(&0u16.to_le_bytes());
    stats.extend_from_slice(&2u32.to_le_bytes());
    stats.extend_from_slice(&[0; 8]); // attachments, metadata
    stats.extend_from_slice(&1u32.to_le_bytes());
    stats.extend_from_slice(&[0; 16]); // start, end
    stats.extend_from_slice(&20u32.to_le_bytes());
    for id in [1u16, 2] {
        stats.extend_from_slice(&id.to_le_bytes());
        stats.extend_from_slice(&(1u64 << 63).to_le_bytes());
    }
    file.extend(mcap_record(0x0B, &stats));
    // The chunk's ChunkIndex: no message indexes, sizes of an empty chunk.
    let mut index = vec![0; 16];
    index.extend_from_slice(&chunk_start.to_le_bytes());
    index.extend_from_slice(&chunk_length.to_le_bytes());
    index.extend_from_slice(&0u32.to_le_bytes()); // message index offsets
    index.extend_from_slice(&0u64.to_le_bytes()); // message index length
    string(&mut index, "");
    index.extend_from_slice(&[0; 16]); // compressed and uncompressed size
    file.extend(mcap_record(0x08, &index));
    mcap_end(&mut file, summary_start);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("counts.mcap");
    std::fs::write(&path, &file).unwrap();
    let reader = rbag_storage::mcap::McapReader::open(&path).unwrap();
    // The summary was read (not a scan of the empty data section), and the sum saturates.
    assert_eq!(reader.info().unwrap().message_count, u64::MAX);
    let _ = replay_mcap(&file);
}

/// Every prefix of a real MCAP file (chunked, zstd) opens or fails cleanly, and the messages a
/// prefix yields are a prefix of the whole file's.
#[test]
fn every_truncation_of_an_mcap_file_is_handled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("whole.mcap");
    let opts = rbag_storage::WriteOptions {
        compression: rbag_storage::Compression::Zstd,
        chunk_size: 512,
        ..Default::default()
    };
    let mut w = rbag_storage::create(&path, rbag_storage::Format::Mcap, &opts).unwrap();
    common::write(w.as_mut(), 10_000_000_000, 300_000_000).unwrap();
    w.finish().unwrap();
    let whole = std::fs::read(&path).unwrap();
    let total = replay_mcap(&whole).unwrap();
    let mut last = 0;
    for cut in (8..whole.len()).step_by(7) {
        if let Ok(n) = replay_mcap(&whole[..cut]) {
            assert!(n <= total);
            last = n;
        }
    }
    assert!(last > total / 2, "a file cut near its end keeps most messages ({last} of {total})");
}

/// Every single-byte corruption of a small MCAP file is an error or a read, never a panic.
#[test]
fn corrupted_mcap_bytes_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("whole.mcap");
    let mut w = rbag_storage::create(&path, rbag_storage::Format::Mcap, &Default::default()).unwrap();
    common::write(w.as_mut(), 10_000_000_000, 50_000_000).unwrap();
    w.finish().unwrap();
    let whole = std::fs::read(&path).unwrap();
    for at in 0..whole.len() {
        let mut bad = whole.clone();
        bad[at] ^= 0xA5;
        let _ = replay_mcap(&bad);
    }
}

// ---------------------------------------------------------------------------------------------
// metadata.yaml (fuzz target rosbag2_metadata).

#[test]
fn metadata_yaml_garbage_is_an_error() {
    use rbag_storage::rosbag2::metadata::BagMetadata;
    for text in ["", "rosbag2_bagfile_information: 5", "rosbag2_bagfile_information:\n  version: -1\n", "{{{{", "rosbag2_bagfile_information:\n  version: 9\n  topics_with_message_count:\n    - topic_metadata: {name: a, type: b, offered_qos_profiles: [{history: 99999999999999999999}]}\n"] {
        assert!(BagMetadata::parse(text, Path::new("m.yaml")).is_err(), "{text:?}");
    }
}
