//! `info` on bags with many chunks reads a bounded part of them (`periods::sampled` for the
//! frequencies, the worked-out sizes of uncompressed ROS 1 chunks): what it reports must be what
//! reading every chunk gives.

use std::path::Path;

use rbag_storage::{Compression, Connection, Format, StorageReader, WriteOptions};

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

/// 1500 chunks of about 1 KiB: `/fast` every 10 ms in every chunk, `/slow` every 70 ms, and
/// `/late` (every 30 ms) only in the second half, so chunks hold one, two or three connections.
fn write(path: &Path, format: Format, compression: Compression) {
    let options = WriteOptions { compression, chunk_size: 1024, ..WriteOptions::default() };
    let mut w = rbag_storage::create(path, format, &options).unwrap();
    let fast = w.add_connection(&conn("/fast")).unwrap();
    let slow = w.add_connection(&conn("/slow")).unwrap();
    let mut late = None;
    for i in 0..6000u64 {
        let t = START + i * 10_000_000;
        w.write(fast, t, t, &[(i % 251) as u8; 300]).unwrap();
        if i % 7 == 0 {
            w.write(slow, t + 1, t + 1, &[1; 100]).unwrap();
        }
        if i >= 3000 && i % 3 == 0 {
            let id = match late {
                Some(id) => id,
                None => *late.insert(w.add_connection(&conn("/late")).unwrap()),
            };
            w.write(id, t + 2, t + 2, &[2; 50]).unwrap();
        }
    }
    w.finish().unwrap();
}

fn open(path: &Path) -> Box<dyn StorageReader> {
    rbag_storage::open(path).unwrap()
}

#[test]
fn chunk_sizes_of_a_plain_ros1_bag_are_what_every_header_says() {
    for compression in [Compression::None, Compression::Lz4] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.bag");
        write(&path, Format::Ros1, compression);
        let r = open(&path);
        let chunks = r.chunks().unwrap();
        assert!(chunks.len() > 1000, "{} chunks", chunks.len());
        let info = r.info().unwrap();
        let stats = &info.compression[compression.name()];
        assert_eq!(stats.chunks, chunks.len() as u64);
        assert_eq!(stats.compressed_bytes, chunks.iter().map(|c| c.compressed_size).sum::<u64>(), "{compression:?}");
        assert_eq!(
            stats.uncompressed_bytes,
            chunks.iter().map(|c| c.uncompressed_size).sum::<u64>(),
            "{compression:?}"
        );
    }
}

#[test]
fn frequencies_of_many_chunks_are_the_exact_ones() {
    for (name, format) in [("many.bag", Format::Ros1), ("many.mcap", Format::Mcap)] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        write(&path, format, Compression::None);
        let periods = open(&path).median_periods().unwrap();
        assert_eq!(periods["/fast"], 10_000_000, "{name}");
        assert_eq!(periods["/slow"], 70_000_000, "{name}");
        assert_eq!(periods["/late"], 30_000_000, "{name}");
    }
}
