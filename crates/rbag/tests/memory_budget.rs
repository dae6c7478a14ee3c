//! Issue 13, D4: memory is bounded per process, not per chunk. Bags crafted here (never kept)
//! hold gigabytes of zeros in a few kilobytes; rbag runs under `ulimit -v 2000000` at the
//! default budget (512 MiB) and must either finish with the right output or fail clearly (exit
//! 1, naming the file and the budget; never a panic or an abort), with a peak RSS of at most
//! 512 + 64 MiB. These tests run one at a time (nextest group `memory`).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use rbag_storage::ros1::record::{time_to_bytes, write_record};

/// The peak RSS the tests allow: the default budget plus 64 MiB.
const RSS_LIMIT_KIB: u64 = (512 + 64) << 10;
const MIB: u64 = 1 << 20;

/// Runs rbag under `ulimit -v 2000000` (about 1.9 GiB of address space) with the default
/// memory budget; returns its output and peak RSS in KiB.
fn run_limited(args: &[&dyn AsRef<std::ffi::OsStr>]) -> (Output, u64) {
    let mut c = Command::new("bash");
    c.arg("-c").arg(r#"ulimit -v 2000000; exec "$0" "$@""#).arg(env!("CARGO_BIN_EXE_rbag"));
    for a in args {
        c.arg(a);
    }
    let o = c.env("RBAG_REPORT_PEAK_RSS", "1").env_remove("RBAG_MEMORY_BUDGET").output().unwrap();
    let err = stderr(&o);
    let kib = err
        .lines()
        .find_map(|l| l.strip_prefix("rbag: peak RSS "))
        .and_then(|v| v.trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS report (exit {:?}): {err}", o.status.code()));
    (o, kib)
}

/// Exit 0 within the RSS limit; returns stdout.
fn assert_ok(what: &str, (o, kib): (Output, u64)) -> String {
    let err = stderr(&o);
    eprintln!("{what}: exit {:?}, peak RSS {} MiB", o.status.code(), kib >> 10);
    assert!(!err.contains("panicked at"), "{what}: {err}");
    assert_eq!(o.status.code(), Some(0), "{what}: {err}");
    assert!(kib <= RSS_LIMIT_KIB, "{what}: peak RSS {} MiB", kib >> 10);
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A definition whose messages are `seq` then a byte array: YAML output truncates the array.
const BLOB_DEF: &str = "uint32 seq\nuint8[] data\n";

/// A ROS 1 connection record for /blob.
fn blob_connection(out: &mut Vec<u8>) {
    let mut body = Vec::new();
    for (k, v) in [("topic", "/blob"), ("type", "rbag_test/Blob"), ("md5sum", "*"), ("message_definition", BLOB_DEF)] {
        body.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
        body.extend_from_slice(k.as_bytes());
        body.push(b'=');
        body.extend_from_slice(v.as_bytes());
    }
    write_record(out, &[("op", &[0x07]), ("conn", &0u32.to_le_bytes()), ("topic", b"/blob")], &body);
}

/// Writes the records of `messages` /blob messages of `zeros` zero bytes each (at `time`) into
/// `w`, streaming: no buffer of that size is built. Returns (uncompressed size, entry offsets).
fn blob_records(w: &mut dyn Write, messages: u32, zeros: u64, time: u64) -> (u64, Vec<u32>) {
    let zero = vec![0u8; MIB as usize];
    let mut at = 0u64;
    let mut offsets = Vec::new();
    for seq in 0..messages {
        let mut head = Vec::new();
        write_record(
            &mut head,
            &[("op", &[0x02]), ("conn", &0u32.to_le_bytes()), ("time", &time_to_bytes(time).unwrap())],
            &[],
        );
        let n = head.len();
        head[n - 4..].copy_from_slice(&((8 + zeros) as u32).to_le_bytes());
        head.extend_from_slice(&seq.to_le_bytes());
        head.extend_from_slice(&(zeros as u32).to_le_bytes());
        w.write_all(&head).unwrap();
        let mut left = zeros;
        while left > 0 {
            let k = left.min(MIB) as usize;
            w.write_all(&zero[..k]).unwrap();
            left -= k as u64;
        }
        offsets.push(at as u32);
        at += head.len() as u64 + zeros;
    }
    (at, offsets)
}

/// A ROS 1 bag of `chunks` bz2 chunks that all hold the same `messages` /blob messages of
/// `zeros` bytes at one instant (so every chunk overlaps every other). With `indexed` false,
/// the bag has no index (its recorder was killed) and is read by scanning.
fn ros1_bz2_bag(path: &Path, chunks: usize, messages: u32, zeros: u64, indexed: bool) -> u64 {
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    let (size, offsets) = blob_records(&mut enc, messages, zeros, START);
    let compressed = enc.finish().unwrap();
    let mut file = rbag_storage::ros1::MAGIC.to_vec();
    let bag_header = |index_pos: u64| {
        let fields: [(&str, &[u8]); 4] = [
            ("op", &[0x03]),
            ("index_pos", &index_pos.to_le_bytes()),
            ("conn_count", &1u32.to_le_bytes()),
            ("chunk_count", &(if indexed { chunks as u32 } else { 0 }).to_le_bytes()),
        ];
        let mut h = Vec::new();
        write_record(&mut h, &fields, &[]);
        let pad = 4104 - h.len();
        h.clear();
        write_record(&mut h, &fields, &vec![b' '; pad]);
        h
    };
    let header_at = file.len();
    file.extend_from_slice(&bag_header(0));
    let mut positions = Vec::new();
    for k in 0..chunks {
        positions.push(file.len() as u64);
        if !indexed && k == 0 {
            // An unindexed bag declares its connection inside the chunk area.
            blob_connection(&mut file);
            positions[0] = file.len() as u64;
        }
        write_record(
            &mut file,
            &[("op", &[0x05]), ("compression", b"bz2"), ("size", &(size as u32).to_le_bytes())],
            &compressed,
        );
        let mut data = Vec::new();
        for off in &offsets {
            data.extend_from_slice(&time_to_bytes(START).unwrap());
            data.extend_from_slice(&off.to_le_bytes());
        }
        write_record(
            &mut file,
            &[
                ("op", &[0x04]),
                ("ver", &1u32.to_le_bytes()),
                ("conn", &0u32.to_le_bytes()),
                ("count", &messages.to_le_bytes()),
            ],
            &data,
        );
    }
    if indexed {
        let index_pos = file.len() as u64;
        blob_connection(&mut file);
        for pos in positions {
            let mut counts = 0u32.to_le_bytes().to_vec();
            counts.extend_from_slice(&messages.to_le_bytes());
            write_record(
                &mut file,
                &[
                    ("op", &[0x06]),
                    ("ver", &1u32.to_le_bytes()),
                    ("chunk_pos", &pos.to_le_bytes()),
                    ("start_time", &time_to_bytes(START).unwrap()),
                    ("end_time", &time_to_bytes(START).unwrap()),
                    ("count", &1u32.to_le_bytes()),
                ],
                &counts,
            );
        }
        let h = bag_header(index_pos);
        file[header_at..header_at + h.len()].copy_from_slice(&h);
    }
    std::fs::write(path, &file).unwrap();
    eprintln!(
        "{}: {} bytes, {chunks} chunks of {} MiB in {} bytes of bz2",
        path.display(),
        file.len(),
        size >> 20,
        compressed.len()
    );
    size / compressed.len() as u64
}

/// MCAP records, as `op | u64 length | body`.
fn mcap_record(out: &mut Vec<u8>, op: u8, body: &[u8]) {
    out.push(op);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
}

fn mcap_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn mcap_schema_channel(out: &mut Vec<u8>) {
    let mut schema = 1u16.to_le_bytes().to_vec();
    mcap_str(&mut schema, "rbag_test/msg/Blob");
    mcap_str(&mut schema, "ros2msg");
    mcap_str(&mut schema, BLOB_DEF);
    mcap_record(out, 0x03, &schema);
    let mut channel = 1u16.to_le_bytes().to_vec();
    channel.extend_from_slice(&1u16.to_le_bytes());
    mcap_str(&mut channel, "/blob");
    mcap_str(&mut channel, "cdr");
    channel.extend_from_slice(&0u32.to_le_bytes());
    mcap_record(out, 0x04, &channel);
}

/// How the crafted MCAP files end.
#[derive(Clone, Copy, PartialEq)]
enum Tail {
    /// Message indexes and a summary with statistics and chunk indexes, as rosbag2 writes.
    Indexed,
    /// A summary with statistics and chunk indexes, but no message indexes.
    NoMessageIndex,
    /// Nothing after the chunks (a crashed recorder): read by scanning.
    None,
}

/// An MCAP file of `chunks` zstd chunks, each holding `messages` CDR messages on /blob of
/// `zeros` zero bytes, all at one instant. Returns the compression ratio of a chunk.
fn mcap_zstd(path: &Path, chunks: usize, messages: u32, zeros: u64, tail: Tail) -> u64 {
    let mut records = Vec::new();
    mcap_schema_channel(&mut records);
    let prefix = records.len() as u64;
    let record_len = 9 + 22 + 12 + zeros;
    let size = prefix + messages as u64 * record_len;
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    enc.set_pledged_src_size(Some(size)).unwrap();
    enc.include_contentsize(true).unwrap();
    enc.write_all(&records).unwrap();
    let zero = vec![0u8; MIB as usize];
    let mut index = Vec::new();
    for seq in 0..messages {
        index.extend_from_slice(&START.to_le_bytes());
        index.extend_from_slice(&(prefix + seq as u64 * record_len).to_le_bytes());
        let mut head = vec![0x05];
        head.extend_from_slice(&(22 + 12 + zeros).to_le_bytes());
        head.extend_from_slice(&1u16.to_le_bytes());
        head.extend_from_slice(&seq.to_le_bytes());
        head.extend_from_slice(&START.to_le_bytes());
        head.extend_from_slice(&START.to_le_bytes());
        // CDR: encapsulation header, seq, then the array's length.
        head.extend_from_slice(&[0, 1, 0, 0]);
        head.extend_from_slice(&seq.to_le_bytes());
        head.extend_from_slice(&(zeros as u32).to_le_bytes());
        enc.write_all(&head).unwrap();
        let mut left = zeros;
        while left > 0 {
            let k = left.min(MIB) as usize;
            enc.write_all(&zero[..k]).unwrap();
            left -= k as u64;
        }
    }
    let compressed = enc.finish().unwrap();

    let mut file = b"\x89MCAP0\r\n".to_vec();
    let mut header = Vec::new();
    mcap_str(&mut header, "ros2");
    mcap_str(&mut header, "rbag-test");
    mcap_record(&mut file, 0x01, &header);
    let mut chunk_indexes = Vec::new();
    for _ in 0..chunks {
        let start = file.len() as u64;
        let mut body = Vec::new();
        body.extend_from_slice(&START.to_le_bytes());
        body.extend_from_slice(&START.to_le_bytes());
        body.extend_from_slice(&size.to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes());
        mcap_str(&mut body, "zstd");
        body.extend_from_slice(&(compressed.len() as u64).to_le_bytes());
        body.extend_from_slice(&compressed);
        mcap_record(&mut file, 0x06, &body);
        let chunk_len = file.len() as u64 - start;
        let mut index_offsets = Vec::new();
        let mi_start = file.len() as u64;
        if tail == Tail::Indexed {
            let mut mi = 1u16.to_le_bytes().to_vec();
            mi.extend_from_slice(&(index.len() as u32).to_le_bytes());
            mi.extend_from_slice(&index);
            index_offsets.extend_from_slice(&1u16.to_le_bytes());
            index_offsets.extend_from_slice(&(file.len() as u64).to_le_bytes());
            mcap_record(&mut file, 0x07, &mi);
        }
        let mi_len = file.len() as u64 - mi_start;
        let mut ci = Vec::new();
        ci.extend_from_slice(&START.to_le_bytes());
        ci.extend_from_slice(&START.to_le_bytes());
        ci.extend_from_slice(&start.to_le_bytes());
        ci.extend_from_slice(&chunk_len.to_le_bytes());
        ci.extend_from_slice(&(index_offsets.len() as u32).to_le_bytes());
        ci.extend_from_slice(&index_offsets);
        ci.extend_from_slice(&mi_len.to_le_bytes());
        mcap_str(&mut ci, "zstd");
        ci.extend_from_slice(&(compressed.len() as u64).to_le_bytes());
        ci.extend_from_slice(&size.to_le_bytes());
        chunk_indexes.push(ci);
    }
    if tail != Tail::None {
        mcap_record(&mut file, 0x0F, &0u32.to_le_bytes());
        let summary_start = file.len() as u64;
        mcap_schema_channel(&mut file);
        let total = messages as u64 * chunks as u64;
        let mut stats = total.to_le_bytes().to_vec();
        stats.extend_from_slice(&1u16.to_le_bytes());
        stats.extend_from_slice(&1u32.to_le_bytes());
        stats.extend_from_slice(&0u32.to_le_bytes());
        stats.extend_from_slice(&0u32.to_le_bytes());
        stats.extend_from_slice(&(chunks as u32).to_le_bytes());
        stats.extend_from_slice(&START.to_le_bytes());
        stats.extend_from_slice(&START.to_le_bytes());
        stats.extend_from_slice(&10u32.to_le_bytes());
        stats.extend_from_slice(&1u16.to_le_bytes());
        stats.extend_from_slice(&total.to_le_bytes());
        mcap_record(&mut file, 0x0B, &stats);
        for ci in &chunk_indexes {
            mcap_record(&mut file, 0x08, ci);
        }
        let mut footer = summary_start.to_le_bytes().to_vec();
        footer.extend_from_slice(&0u64.to_le_bytes());
        footer.extend_from_slice(&0u32.to_le_bytes());
        mcap_record(&mut file, 0x02, &footer);
        file.extend_from_slice(b"\x89MCAP0\r\n");
    }
    std::fs::write(path, &file).unwrap();
    eprintln!(
        "{}: {} bytes, {chunks} chunks of {} MiB in {} bytes of zstd",
        path.display(),
        file.len(),
        size >> 20,
        compressed.len()
    );
    size / compressed.len() as u64
}

/// How many YAML messages `echo` printed.
fn yaml_messages(out: &str) -> usize {
    out.lines().filter(|l| l.starts_with("seq: ")).count()
}

#[test]
fn overlapping_bz2_chunks_of_a_ros1_bag_are_read_within_the_budget() {
    // The defect: 16 chunks of 64 MB of zeros at one instant, 12 KB on disk; `echo -n 1`
    // peaked at 1.0 GB.
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("overlap.bag");
    ros1_bz2_bag(&bag, 16, 1, 64_000_000, true);
    assert!(std::fs::metadata(&bag).unwrap().len() < 16 << 10);
    let out = assert_ok("info", run_limited(&[&"info", &bag]));
    assert!(out.contains("messages:     16"), "{out}");
    let out = assert_ok("echo -n 1", run_limited(&[&"echo", &"-n", &"1", &bag]));
    assert_eq!(yaml_messages(&out), 1);
    let out = assert_ok("echo", run_limited(&[&"echo", &bag]));
    assert_eq!(yaml_messages(&out), 16);
    let copy = dir.path().join("copy.mcap");
    assert_ok(
        "convert",
        run_limited(&[&"convert", &bag, &"-o", &copy, &"--encoding", &"ros1", &"--compression", &"zstd"]),
    );
    let info = rbag_storage::open(&copy).unwrap().info().unwrap();
    assert_eq!(info.message_count, 16);
}

#[test]
fn a_ros1_bag_of_48_overlapping_64mb_chunks_does_not_abort_under_ulimit() {
    // The defect: under `ulimit -v 2000000`, "memory allocation of 64000211 bytes failed"
    // (SIGABRT, exit 134).
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("many.bag");
    ros1_bz2_bag(&bag, 48, 1, 64_000_000, true);
    assert!(std::fs::metadata(&bag).unwrap().len() < 40 << 10);
    let out = assert_ok("echo -n 3", run_limited(&[&"echo", &"-n", &"3", &bag]));
    assert_eq!(yaml_messages(&out), 3);
    assert_ok("info", run_limited(&[&"info", &bag]));
    // The same bag with no index: the scan decodes every chunk, as a stream.
    let scanned = dir.path().join("many.bag.active");
    ros1_bz2_bag(&scanned, 48, 1, 64_000_000, false);
    let out = assert_ok("info (scan)", run_limited(&[&"info", &scanned]));
    assert!(out.contains("messages:     48"), "{out}");
    let out = assert_ok("echo -n 2 (scan)", run_limited(&[&"echo", &"-n", &"2", &scanned]));
    assert_eq!(yaml_messages(&out), 2);
}

#[test]
fn an_mcap_chunk_of_1gib_is_summarised_without_decompressing_and_read_as_a_stream() {
    // The defect: a 31 KB MCAP with one zstd chunk declaring 1 GB; `info` peaked at 0.99 GB.
    let dir = tempfile::tempdir().unwrap();
    let mcap = dir.path().join("one.mcap");
    mcap_zstd(&mcap, 1, 1024, MIB, Tail::Indexed);
    let (o, kib) = run_limited(&[&"info", &mcap]);
    let out = assert_ok("info", (o, kib));
    assert!(out.contains("messages:     1024"), "{out}");
    assert!(kib < 64 << 10, "info decompressed the chunk: peak RSS {} MiB", kib >> 10);
    let out = assert_ok("echo -n 2", run_limited(&[&"echo", &"-n", &"2", &mcap]));
    assert_eq!(yaml_messages(&out), 2);
    let out = assert_ok("echo", run_limited(&[&"echo", &mcap]));
    assert_eq!(yaml_messages(&out), 1024);

    // No message indexes: the frequencies come from a streamed pass over the chunk.
    let bare = dir.path().join("bare.mcap");
    mcap_zstd(&bare, 1, 1024, MIB, Tail::NoMessageIndex);
    let out = assert_ok("info (no message index)", run_limited(&[&"info", &bare]));
    assert!(out.contains("messages:     1024"), "{out}");
    // No summary at all: the scan streams the chunk.
    let torn = dir.path().join("crashed.mcap");
    mcap_zstd(&torn, 1, 1024, MIB, Tail::None);
    let out = assert_ok("info (scan)", run_limited(&[&"info", &torn]));
    assert!(out.contains("messages:     1024"), "{out}");
    let out = assert_ok("echo -n 1 (scan)", run_limited(&[&"echo", &"-n", &"1", &torn]));
    assert_eq!(yaml_messages(&out), 1);
}

#[test]
fn three_overlapping_1gib_mcap_chunks_stay_within_the_budget() {
    // The defect: three such chunks in 95 KB took 2.9 GB.
    let dir = tempfile::tempdir().unwrap();
    for tail in [Tail::Indexed, Tail::NoMessageIndex] {
        let mcap = dir.path().join("three.mcap");
        let _ = std::fs::remove_file(&mcap);
        mcap_zstd(&mcap, 3, 1024, MIB, tail);
        assert!(std::fs::metadata(&mcap).unwrap().len() < 200 << 10);
        let out = assert_ok("info", run_limited(&[&"info", &mcap]));
        assert!(out.contains("messages:     3072"), "{out}");
        let out = assert_ok("echo -n 5", run_limited(&[&"echo", &"-n", &"5", &mcap]));
        assert_eq!(yaml_messages(&out), 5);
    }
    let mcap = dir.path().join("three.mcap");
    let copy = dir.path().join("copy.mcap");
    assert_ok("convert", run_limited(&[&"convert", &mcap, &"-o", &copy, &"--compression", &"zstd"]));
    assert_eq!(rbag_storage::open(&copy).unwrap().info().unwrap().message_count, 3072);
}

#[test]
fn a_message_larger_than_the_budget_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mcap = dir.path().join("huge_message.mcap");
    mcap_zstd(&mcap, 1, 1, 600 * MIB, Tail::Indexed);
    let (o, kib) = run_limited(&[&"echo", &"-n", &"1", &mcap]);
    let err = stderr(&o);
    eprintln!("echo: exit {:?}, peak RSS {} MiB: {err}", o.status.code(), kib >> 10);
    assert_clear_error(&o, &[&mcap.display().to_string(), "memory budget of 512 MiB", "RBAG_MEMORY_BUDGET", "600"]);
    assert!(kib <= RSS_LIMIT_KIB, "peak RSS {} MiB", kib >> 10);
    // A larger budget reads it.
    let (o, kib) = run_limited(&[&"--memory-budget", &"1GiB", &"echo", &"-n", &"1", &mcap]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(yaml_messages(&String::from_utf8_lossy(&o.stdout)), 1);
    assert!(kib < 1100 << 10, "peak RSS {} MiB", kib >> 10);
    // A budget that is not a size is a usage error.
    let o = Command::new(env!("CARGO_BIN_EXE_rbag"))
        .args(["info"])
        .arg(&mcap)
        .env("RBAG_MEMORY_BUDGET", "lots")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("RBAG_MEMORY_BUDGET"), "{}", stderr(&o));
}

/// All zeros, of `len` bytes: what a message of the crafted bags holds after its header.
fn zero_payload(data: &[u8], header: usize, len: u64) -> bool {
    data.len() as u64 == header as u64 + len && data[header..].iter().all(|&b| b == 0)
}

#[test]
fn blank_images_at_extreme_ratios_read_fully() {
    // A high ratio alone is never an error: blank images compress 850,000:1 with bz2 and
    // 28,000:1 with zstd, and must read in full.
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("blank.bag");
    let ratio = ros1_bz2_bag(&bag, 1, 4, 200 * MIB, true);
    eprintln!("bz2 ratio {ratio}:1");
    assert!(ratio >= 850_000, "bz2 ratio {ratio}");
    let out = assert_ok("echo", run_limited(&[&"echo", &bag]));
    assert_eq!(yaml_messages(&out), 4);
    let r = rbag_storage::open(&bag).unwrap();
    let mut n = 0;
    for m in r.messages(&Default::default()).unwrap() {
        let m = m.unwrap();
        assert!(zero_payload(&m.data, 8, 200 * MIB), "message {n}");
        assert_eq!(u32::from_le_bytes(m.data[..4].try_into().unwrap()), n);
        n += 1;
    }
    assert_eq!(n, 4);

    let mcap = dir.path().join("blank.mcap");
    let ratio = mcap_zstd(&mcap, 1, 4, 100 * MIB, Tail::Indexed);
    eprintln!("zstd ratio {ratio}:1");
    assert!(ratio >= 25_000, "zstd ratio {ratio}");
    let out = assert_ok("echo", run_limited(&[&"echo", &mcap]));
    assert_eq!(yaml_messages(&out), 4);
    let r = rbag_storage::open(&mcap).unwrap();
    let mut n = 0;
    for m in r.messages(&Default::default()).unwrap() {
        let m = m.unwrap();
        assert!(zero_payload(&m.data, 12, 100 * MIB), "message {n}");
        n += 1;
    }
    assert_eq!(n, 4);
}

/// A rosbag2 directory with one small storage file and the given metadata.yaml.
fn bag_dir(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    let src = dir.join("src.mcap");
    std::fs::create_dir_all(&dir).unwrap();
    let mut w = rbag_storage::create(&src, rbag_storage::Format::Mcap, &Default::default()).unwrap();
    let c = rbag_storage::Connection {
        topic: "/t".into(),
        message_type: "std_msgs/msg/Empty".into(),
        encoding: "cdr".into(),
        ..Default::default()
    };
    let id = w.add_connection(&c).unwrap();
    w.write(id, START, START, &[0, 1, 0, 0]).unwrap();
    w.finish().unwrap();
    std::fs::rename(&src, dir.join("d_0.mcap")).unwrap();
    dir
}

fn metadata_listing(name: &str, times: usize) -> String {
    let mut s = String::from("rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: mcap\n  duration:\n    nanoseconds: 0\n  starting_time:\n    nanoseconds_since_epoch: 0\n  message_count: 1\n  topics_with_message_count: []\n  compression_format: \"\"\n  compression_mode: \"\"\n  relative_file_paths:\n");
    for _ in 0..times {
        s.push_str(&format!("    - {name}\n"));
    }
    s
}

#[test]
fn metadata_yaml_is_a_bounded_regular_file_listing_each_file_once() {
    let root = tempfile::tempdir().unwrap();
    // One file 20,000 times: once read 20,000 times (400,000 messages, 587 MB).
    let dir = bag_dir(root.path(), "repeated");
    std::fs::write(dir.join("metadata.yaml"), metadata_listing("d_0.mcap", 20_000)).unwrap();
    let (o, kib) = run_limited(&[&"info", &dir]);
    assert_clear_error(&o, &["metadata.yaml", "d_0.mcap", "more than once"]);
    assert!(kib < 64 << 10, "peak RSS {} MiB", kib >> 10);
    // Once is fine.
    std::fs::write(dir.join("metadata.yaml"), metadata_listing("d_0.mcap", 1)).unwrap();
    let out = assert_ok("info", run_limited(&[&"info", &dir]));
    assert!(out.contains("messages:     1"), "{out}");
    // Two names of one file.
    std::os::unix::fs::symlink("d_0.mcap", dir.join("d_1.mcap")).unwrap();
    let mut yaml = metadata_listing("d_0.mcap", 1);
    yaml.push_str("    - d_1.mcap\n");
    std::fs::write(dir.join("metadata.yaml"), yaml).unwrap();
    let (o, _) = run_limited(&[&"info", &dir]);
    assert_clear_error(&o, &["d_0.mcap", "d_1.mcap", "same file"]);

    // A link to /dev/zero: once read without end.
    let dir = bag_dir(root.path(), "zero");
    std::os::unix::fs::symlink("/dev/zero", dir.join("metadata.yaml")).unwrap();
    let (o, kib) = run_limited(&[&"info", &dir]);
    assert_clear_error(&o, &["metadata.yaml", "not a regular file"]);
    assert!(kib < 64 << 10, "peak RSS {} MiB", kib >> 10);

    // A FIFO: once waited on forever. `timeout` ends the test's rbag if it blocks (exit 124).
    let dir = bag_dir(root.path(), "fifo");
    let fifo = dir.join("metadata.yaml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = Command::new("timeout").arg("20").arg(env!("CARGO_BIN_EXE_rbag")).arg("info").arg(&dir).output().unwrap();
    assert_ne!(o.status.code(), Some(124), "rbag blocked on the FIFO");
    assert_clear_error(&o, &["metadata.yaml", "FIFO"]);

    // Larger than any real one (16 MiB): refused before it is parsed.
    let dir = bag_dir(root.path(), "huge");
    let mut yaml = metadata_listing("d_0.mcap", 1);
    yaml.push_str(&format!("  custom_data:\n    pad: \"{}\"\n", "x".repeat(20 << 20)));
    std::fs::write(dir.join("metadata.yaml"), yaml).unwrap();
    let (o, kib) = run_limited(&[&"info", &dir]);
    assert_clear_error(&o, &["metadata.yaml", "over the limit"]);
    assert!(kib < 96 << 10, "peak RSS {} MiB", kib >> 10);
}
