//! Read-ahead (docs/threads.md): compressed chunks decompressed on worker threads give the same
//! messages, in the same order, with the same errors, as the reading thread alone, and stay
//! within the memory budget. The small-budget test runs in a child process of its own
//! (`RBAG_MEMORY_BUDGET` is read once per process).

use std::path::Path;
use std::process::Command;

use rbag_storage::{budget, Compression, Connection, Filter, Format, ReadOptions, StorageReader, WriteOptions};

const START: u64 = 1_700_000_000_000_000_000;

/// The variable that makes `child_reads_everything_within_a_small_budget` do its work.
const CHILD: &str = "RBAG_READAHEAD_TEST_CHILD";

fn conn(topic: &str) -> Connection {
    Connection {
        topic: topic.into(),
        message_type: "sensor_msgs/Image".into(),
        encoding: "ros1".into(),
        definition: "uint8[] data\n".into(),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    }
}

/// A camera-like payload: a gradient with a little noise (compressible, not trivially).
fn image(i: u64, len: usize) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|k| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((k % 640) as u64 / 3 + i + (x & 7)) as u8
        })
        .collect()
}

/// About 5 MB on three topics in chunks of 64 KiB (about 80 chunks); every 25th message is
/// 30 ms early, so some chunks overlap in time and the merge reads them out of file order.
fn write(path: &Path, format: Format, compression: Compression) {
    let options = WriteOptions { compression, chunk_size: 64 << 10, ..WriteOptions::default() };
    let mut w = rbag_storage::create(path, format, &options).unwrap();
    let ids: Vec<u32> = ["/cam", "/cam2", "/imu"].iter().map(|t| w.add_connection(&conn(t)).unwrap()).collect();
    for i in 0..600u64 {
        let t = START + i * 10_000_000 - if i % 25 == 24 { 30_000_000 } else { 0 };
        let (id, len) = match i % 3 {
            0 => (ids[0], 12_000 + (i as usize * 377) % 4_000),
            1 => (ids[1], 9_000),
            _ => (ids[2], 48),
        };
        w.write(id, t, t, &image(i, len)).unwrap();
    }
    w.finish().unwrap();
}

type Read = Vec<(u32, u64, Vec<u8>)>;

fn open(path: &Path, threads: usize) -> Box<dyn StorageReader> {
    rbag_storage::open_with(path, &ReadOptions { threads, ..ReadOptions::default() }).unwrap()
}

/// Every message `filter` selects, up to and with the first error (as text).
fn read(path: &Path, threads: usize, filter: &Filter) -> (Read, Option<String>) {
    let r = open(path, threads);
    let mut out = Vec::new();
    let iter = match r.messages(filter) {
        Ok(it) => it,
        Err(e) => return (out, Some(e.to_string())),
    };
    for m in iter {
        match m {
            Ok(m) => out.push((m.connection, m.log_time, m.data.to_vec())),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
    (out, None)
}

fn same_for_any_thread_count(format: Format, compression: Compression, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    write(&path, format, compression);
    let chunks = open(&path, 1).chunks().unwrap();
    assert!(chunks.len() > 40, "{name}: {} chunks", chunks.len());
    let (one, err) = read(&path, 1, &Filter::default());
    assert_eq!(err, None);
    assert_eq!(one.len(), 600);
    assert!(one.windows(2).all(|w| w[0].1 <= w[1].1), "log-time order");
    for threads in [2, 3] {
        let (many, err) = read(&path, threads, &Filter::default());
        assert_eq!(err, None, "{name}, {threads} threads");
        assert!(many == one, "{name}: {threads} threads read other messages than one");
    }
    // Filtered (a topic, a time window) and the index-driven nth.
    let filter = Filter {
        topics: vec!["/cam".into()],
        start: Some(START + 1_000_000_000),
        end: Some(START + 4_000_000_000),
        ..Filter::default()
    };
    let (a, b) = (read(&path, 1, &filter), read(&path, 2, &filter));
    assert!(a.1.is_none() && !a.0.is_empty());
    assert!(a == b, "{name}: a filtered read differs with threads");
    let (r1, r2) = (open(&path, 1), open(&path, 2));
    for n in [0, 57, 199] {
        let (x, y) = (r1.nth("/cam2", n).unwrap().unwrap(), r2.nth("/cam2", n).unwrap().unwrap());
        assert_eq!((x.log_time, x.data), (y.log_time, y.data));
    }
    // Two reads of one reader, the second interrupted and restarted.
    let r = open(&path, 2);
    let first: Vec<u64> = r.messages(&Filter::default()).unwrap().take(250).map(|m| m.unwrap().log_time).collect();
    assert_eq!(first.len(), 250);
    let all: Vec<u64> = r.messages(&Filter::default()).unwrap().map(|m| m.unwrap().log_time).collect();
    assert_eq!(all, one.iter().map(|m| m.1).collect::<Vec<_>>());
    // The same chunks are read (and decompressed) whichever thread decompresses them.
    let (a, b) = (open(&path, 1), open(&path, 2));
    for r in [&a, &b] {
        assert_eq!(r.messages(&Filter::default()).unwrap().count(), 600);
    }
    assert_eq!(a.stats().chunks_decompressed, b.stats().chunks_decompressed);
    assert_eq!(a.stats().chunks_read, b.stats().chunks_read);
}

#[test]
fn ros1_bz2_reads_the_same_with_any_thread_count() {
    same_for_any_thread_count(Format::Ros1, Compression::Bz2, "x.bag");
}

#[test]
fn ros1_lz4_reads_the_same_with_any_thread_count() {
    same_for_any_thread_count(Format::Ros1, Compression::Lz4, "x.bag");
}

#[test]
fn mcap_zstd_reads_the_same_with_any_thread_count() {
    same_for_any_thread_count(Format::Mcap, Compression::Zstd, "x.mcap");
}

#[test]
fn mcap_lz4_reads_the_same_with_any_thread_count() {
    same_for_any_thread_count(Format::Mcap, Compression::Lz4, "x.mcap");
}

/// Garbles the middle of chunk `k`'s compressed data; its file offset.
fn corrupt_chunk(path: &Path, k: usize) -> u64 {
    let chunks = open(path, 1).chunks().unwrap();
    let c = &chunks[k];
    let data = c.offset + c.length - c.compressed_size;
    let mut bytes = std::fs::read(path).unwrap();
    let mid = (data + c.compressed_size / 2) as usize;
    for b in &mut bytes[mid..mid + 64] {
        *b ^= 0x5a;
    }
    std::fs::write(path, bytes).unwrap();
    c.offset
}

fn corrupt_chunk_same_error(format: Format, compression: Compression, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    write(&path, format, compression);
    let chunks = open(&path, 1).chunks().unwrap().len();
    let offset = corrupt_chunk(&path, chunks / 2);
    let (one, err) = read(&path, 1, &Filter::default());
    let err = err.unwrap_or_else(|| panic!("{name}: a garbled chunk reads without an error"));
    assert!(one.len() < 600);
    assert!(err.contains(name), "the error names the file: {err}");
    assert!(err.contains(&offset.to_string()), "the error names the chunk's offset {offset}: {err}");
    println!("{name}: {err}");
    for threads in [2, 4] {
        let (many, e) = read(&path, threads, &Filter::default());
        assert_eq!(e.as_deref(), Some(err.as_str()), "{name}, {threads} threads");
        assert!(many == one, "{name}: {threads} threads read other messages before the error");
    }
}

#[test]
fn ros1_bz2_corrupt_chunk_is_the_same_error_with_threads() {
    corrupt_chunk_same_error(Format::Ros1, Compression::Bz2, "bad.bag");
}

#[test]
fn ros1_lz4_corrupt_chunk_is_the_same_error_with_threads() {
    corrupt_chunk_same_error(Format::Ros1, Compression::Lz4, "bad.bag");
}

#[test]
fn mcap_zstd_corrupt_chunk_is_the_same_error_with_threads() {
    corrupt_chunk_same_error(Format::Mcap, Compression::Zstd, "bad.mcap");
}

#[test]
fn mcap_lz4_corrupt_chunk_is_the_same_error_with_threads() {
    corrupt_chunk_same_error(Format::Mcap, Compression::Lz4, "bad.mcap");
}

/// Runs `child_reads_everything_within_a_small_budget` in a process of its own with
/// `RBAG_MEMORY_BUDGET` set: the budget is process-wide.
#[test]
fn small_budgets_still_read_everything() {
    // 160 KiB holds a chunk (about 64 KiB) and its decoder, and no read-ahead; 1 MiB a few
    // read-ahead ROS 1 chunks (the window of 4 threads does not fit in its half), while MCAP
    // chunks over 1/16 of it are streamed, never read ahead; 4 MiB reads ahead everywhere.
    for limit in ["160KiB", "1MiB", "4MiB"] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["child_reads_everything_within_a_small_budget", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env(budget::ENV, limit)
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "budget {limit}: {text}");
        assert!(text.contains("child done"), "the child ran the reads (budget {limit}): {text}");
    }
}

/// The work of `small_budgets_still_read_everything`; does nothing unless run by it.
#[test]
fn child_reads_everything_within_a_small_budget() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let limit = budget::limit();
    assert!(limit <= 4 << 20, "the parent set the budget: {limit}");
    let dir = tempfile::tempdir().unwrap();
    for (format, compression, name) in [
        (Format::Ros1, Compression::Bz2, "x.bag"),
        (Format::Ros1, Compression::Lz4, "y.bag"),
        (Format::Mcap, Compression::Zstd, "x.mcap"),
        (Format::Mcap, Compression::Lz4, "y.mcap"),
    ] {
        let path = dir.path().join(name);
        write(&path, format, compression);
        let (one, err) = read(&path, 1, &Filter::default());
        assert_eq!(err, None, "{name}");
        assert_eq!(one.len(), 600, "{name}");
        assert_eq!(budget::used(), 0, "{name}: every reservation is returned");
        for threads in [2, 4] {
            // Watch the budget while reading: never over the limit.
            let r = open(&path, threads);
            let mut got = Vec::new();
            let (before, mut workers) = (process_threads(), 0);
            for m in r.messages(&Filter::default()).unwrap() {
                let m = m.unwrap_or_else(|e| panic!("{name}, {threads} threads, budget {limit}: {e}"));
                assert!(budget::used() <= limit);
                got.push((m.connection, m.log_time, m.data.to_vec()));
                if got.len() == 300 {
                    workers = process_threads() - before;
                }
            }
            let linux = cfg!(target_os = "linux");
            if linux && (limit >= 4 << 20 || limit >= 1 << 20 && format == Format::Ros1) {
                assert_eq!(workers, threads, "{name}: the read-ahead runs on {threads} threads mid-read");
            }
            drop(r);
            assert!(got == one, "{name}: {threads} threads read other messages within budget {limit}");
            assert_eq!(budget::used(), 0, "{name}: every reservation is returned, read-ahead ones too");
        }
    }
    println!("child done");
}

/// Threads of this process (Linux; 0 elsewhere): the child runs one test, so those started
/// during a read are its read-ahead workers.
fn process_threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |tasks| tasks.count())
}
