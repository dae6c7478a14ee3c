//! The MCAP writer compresses chunks on worker threads (`WriteOptions::threads`) and writes them
//! in order: the file is byte-identical for any thread count, buffered or with direct I/O, and
//! it is valid MCAP as the `mcap` crate, rbag's reader and Foxglove's `mcap doctor` see it,
//! under every McapWriterOptions overlay and preset.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rbag_storage::mcap::McapWriter;
use rbag_storage::storage_config::McapConfig;
use rbag_storage::{
    Attachment, Compression, Connection, DirectIo, Filter, McapPreset, MetadataRecord, StorageWriter, WriteOptions,
};

const START: u64 = 1_700_000_000_000_000_000;

/// As `rbag_testkit::skip`: a missing peer is a skip, except under CI, where it is a failure.
fn skip(test: &str, reason: &str) {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false") {
        panic!("{test}: {reason} (CI is set: a missing corpus or peer is a failure)");
    }
    eprintln!("SKIPPED {test}: {reason}");
}

/// Foxglove's `mcap` CLI, built into `.peers/mcap` by scripts/setup-peers.sh.
fn mcap_cli(test: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.peers/mcap/bin/mcap");
    if p.exists() {
        Some(p)
    } else {
        skip(test, "the mcap CLI is not built (run scripts/setup-peers.sh)");
        None
    }
}

/// `mcap doctor` reports no errors (warnings are allowed).
fn doctor(mcap: &Path, file: &Path, label: &str) {
    let o = Command::new(mcap).arg("doctor").arg(file).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{label}: mcap doctor failed:\n{text}");
    assert!(!text.to_lowercase().contains("error"), "{label}: mcap doctor:\n{text}");
}

fn conn(topic: &str, ty: &str, definition: &str) -> Connection {
    let mut c = Connection {
        topic: topic.into(),
        message_type: ty.into(),
        encoding: "cdr".into(),
        definition: definition.into(),
        definition_encoding: "ros2msg".into(),
        ..Connection::default()
    };
    c.metadata.insert("offered_qos_profiles".into(), "- history: keep_last\n  depth: 10\n".into());
    c.metadata.insert(rbag_storage::rosbag2::TYPE_HASH_KEY.into(), "RIHS01_abc".into());
    c
}

/// Compressible, not trivially: letters from a xorshift stream.
fn payload(state: &mut u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            if j % 7 == 0 {
                b'a' + (*state % 26) as u8
            } else {
                b'a' + (*state % 4) as u8
            }
        })
        .collect()
}

type Written = Vec<(String, u64, Vec<u8>)>;

/// Three channels (two of one type: one schema), `count` messages of 10 B to 40 KB, an
/// attachment and a metadata record; a checkpoint part way.
fn write(path: &Path, options: &WriteOptions, count: u64) -> Written {
    let mut w = McapWriter::create(path, options).unwrap();
    let conns = [
        conn("/camera", "sensor_msgs/msg/Image", "uint32 height\nuint8[] data\n"),
        conn("/chatter", "std_msgs/msg/String", "string data\n"),
        conn("/other", "std_msgs/msg/String", "string data\n"),
    ];
    let ids: Vec<u32> = conns.iter().map(|c| w.add_connection(c).unwrap()).collect();
    assert_eq!(ids, [1, 2, 3]);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut written = Vec::new();
    for i in 0..count {
        let k = (i % 5).min(2) as usize;
        let len = if k == 0 { 1000 + (i as usize * 7919) % 40_000 } else { 10 + i as usize % 90 };
        let data = payload(&mut state, len);
        let t = START + i * 10_000_000;
        w.write(ids[k], t, t + 1, &data).unwrap();
        written.push((conns[k].topic.clone(), t, data));
        if i == count / 3 {
            w.checkpoint().unwrap();
        }
    }
    w.add_attachment(&Attachment {
        name: "calibration.yaml".into(),
        media_type: "application/yaml".into(),
        log_time: START,
        create_time: START - 1,
        data: bytes::Bytes::from_static(b"camera_matrix: [1, 0, 0]\n"),
        ..Attachment::default()
    })
    .unwrap();
    w.add_metadata(&MetadataRecord {
        name: "robot".into(),
        metadata: BTreeMap::from([("id".into(), "r2".into())]),
        ..MetadataRecord::default()
    })
    .unwrap();
    Box::new(w).finish().unwrap();
    written
}

/// The messages as the `mcap` crate reads them (checking chunk CRCs) and as rbag reads them,
/// against what was written; the summary's statistics agree.
fn check(path: &Path, written: &Written, label: &str) {
    let bytes = std::fs::read(path).unwrap();
    assert!(bytes.ends_with(b"\x89MCAP0\r\n"), "{label}: ends at the closing magic");
    let mut got = Vec::new();
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap_or_else(|e| panic!("{label}: the mcap crate: {e}"));
        got.push((m.channel.topic.clone(), m.log_time, m.data.to_vec()));
        assert_eq!(m.publish_time, m.log_time + 1);
        let hash = m.channel.metadata.get(rbag_storage::mcap::MCAP_TYPE_HASH_KEY).map(String::as_str);
        assert_eq!(hash, Some("RIHS01_abc"), "{label}: the type hash under MCAP's key");
    }
    assert_eq!(got.len(), written.len(), "{label}");
    assert!(got == *written, "{label}: the mcap crate reads other messages");
    if let Some(summary) = mcap::Summary::read(&bytes).unwrap_or_else(|e| panic!("{label}: summary: {e}")) {
        if let Some(stats) = summary.stats {
            assert_eq!(stats.message_count, written.len() as u64, "{label}");
            assert_eq!(stats.channel_count, 3, "{label}");
            assert_eq!(stats.schema_count, 2, "{label}: schemas are deduplicated");
            assert_eq!(stats.attachment_count, 1, "{label}");
            assert_eq!(stats.metadata_count, 1, "{label}");
        }
    }
    // rbag's reader takes channels from the summary when the file has one, and reads only the
    // chunks it needs: without repeated channels there, later chunks name channels it never
    // saw (as with the `mcap` crate's writer under the same option).
    if label == "no_repeated" {
        return;
    }
    let r = rbag_storage::open(path).unwrap_or_else(|e| panic!("{label}: rbag: {e}"));
    let mut ours: Written = r
        .messages(&Filter::default())
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (r.connection(m.connection).unwrap().topic.clone(), m.log_time, m.data.to_vec())
        })
        .collect();
    let mut want = written.clone();
    want.sort_by_key(|m| m.1);
    ours.sort_by_key(|m| m.1);
    assert!(ours == want, "{label}: rbag reads other messages");
}

fn options(compression: Compression, threads: usize) -> WriteOptions {
    WriteOptions { compression, threads, chunk_size: 128 << 10, ..WriteOptions::default() }
}

#[test]
fn thread_counts_write_byte_identical_valid_files() {
    const T: &str = "thread_counts_write_byte_identical_valid_files";
    let dir = tempfile::tempdir().unwrap();
    let mcap = mcap_cli(T);
    for compression in [Compression::Zstd, Compression::Lz4, Compression::None] {
        for direct_io in [DirectIo::Off, DirectIo::On] {
            for interval in [None, Some(50_000_000)] {
                let label = format!("{compression:?} {direct_io:?} interval {interval:?}");
                let mut files = Vec::new();
                let mut first = None;
                for threads in [1, 2, 3] {
                    let path =
                        dir.path().join(format!("{}-{direct_io:?}-{interval:?}-{threads}.mcap", compression.name()));
                    let mut o = options(compression, threads);
                    o.direct_io = direct_io;
                    o.chunk_interval_ns = interval;
                    let written = write(&path, &o, 600);
                    if threads == 1 {
                        check(&path, &written, &label);
                        if let Some(mcap) = &mcap {
                            doctor(mcap, &path, &label);
                        }
                        first = Some(written);
                    } else {
                        assert!(first.as_ref() == Some(&written));
                    }
                    files.push(std::fs::read(&path).unwrap());
                }
                let chunks = rbag_storage::open(
                    &dir.path().join(format!("{}-{direct_io:?}-{interval:?}-1.mcap", compression.name())),
                )
                .unwrap()
                .chunks()
                .unwrap()
                .len();
                assert!(chunks > 10, "{label}: {chunks} chunks");
                assert!(files[0] == files[1], "{label}: threads 1 and 2 wrote different files");
                assert!(files[0] == files[2], "{label}: threads 1 and 3 wrote different files");
            }
        }
    }
}

/// Each McapWriterOptions key and each preset, with workers: valid files with what was written.
#[test]
fn every_overlay_and_preset_writes_valid_mcap_with_workers() {
    const T: &str = "every_overlay_and_preset_writes_valid_mcap_with_workers";
    let dir = tempfile::tempdir().unwrap();
    let mcap = mcap_cli(T);
    let on = Some(true);
    let overlays: Vec<(&str, McapConfig)> = vec![
        ("none", McapConfig::default()),
        ("no_summary", McapConfig { no_summary: on, ..McapConfig::default() }),
        ("no_summary_no_offsets", McapConfig { no_summary: on, no_summary_offsets: on, ..McapConfig::default() }),
        ("no_chunk_crc", McapConfig { no_chunk_crc: on, ..McapConfig::default() }),
        ("no_attachment_crc", McapConfig { no_attachment_crc: on, ..McapConfig::default() }),
        ("enable_data_crc", McapConfig { enable_data_crc: on, ..McapConfig::default() }),
        ("no_summary_crc", McapConfig { no_summary_crc: on, ..McapConfig::default() }),
        ("no_chunking", McapConfig { no_chunking: on, ..McapConfig::default() }),
        ("no_message_index", McapConfig { no_message_index: on, ..McapConfig::default() }),
        ("no_repeated", McapConfig { no_repeated_schemas: on, no_repeated_channels: on, ..McapConfig::default() }),
        (
            "no_indexes",
            McapConfig {
                no_attachment_index: on,
                no_metadata_index: on,
                no_chunk_index: on,
                no_statistics: on,
                ..McapConfig::default()
            },
        ),
        ("no_summary_offsets", McapConfig { no_summary_offsets: on, ..McapConfig::default() }),
        ("chunk_size", McapConfig { chunk_size: Some(4096), ..McapConfig::default() }),
        ("lz4", McapConfig { compression: Some(Some(Compression::Lz4)), ..McapConfig::default() }),
        ("uncompressed", McapConfig { compression: Some(None), ..McapConfig::default() }),
        (
            "slowest",
            McapConfig {
                compression_level: Some(rbag_storage::storage_config::McapLevel::Slowest),
                ..McapConfig::default()
            },
        ),
    ];
    let presets = [McapPreset::Default, McapPreset::Fastwrite, McapPreset::ZstdFast, McapPreset::ZstdSmall];
    let mut cases = Vec::new();
    for (name, c) in overlays {
        cases.push((name.to_string(), McapPreset::Default, c));
    }
    for p in presets {
        cases.push((format!("preset {p:?}"), p, McapConfig::default()));
    }
    for (label, preset, config) in cases {
        let mut files = Vec::new();
        for threads in [1, 2] {
            let path = dir.path().join(format!("{}-{threads}.mcap", label.replace(' ', "_")));
            let mut o = options(Compression::Zstd, threads);
            o.rosbag2.mcap_preset = preset;
            o.rosbag2.storage_config.mcap = config.clone();
            let written = write(&path, &o, 120);
            check(&path, &written, &label);
            // Without repeated channels, chunk indexes and statistics name channels the summary
            // lacks: `mcap doctor` calls that an error whichever writer made the file.
            if let Some(mcap) = mcap.as_ref().filter(|_| label != "no_repeated") {
                doctor(mcap, &path, &label);
            }
            files.push(std::fs::read(&path).unwrap());
        }
        assert!(files[0] == files[1], "{label}: threads 1 and 2 wrote different files");
    }
}

/// With workers, a checkpoint returns once every closed chunk is in the file.
#[test]
fn checkpoint_puts_every_closed_chunk_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.mcap");
    let mut w = McapWriter::create(&path, &options(Compression::Zstd, 2)).unwrap();
    let id = w.add_connection(&conn("/camera", "sensor_msgs/msg/Image", "uint8[] data\n")).unwrap();
    let mut state = 1u64;
    for i in 0..40u64 {
        w.write(id, START + i, START + i, &payload(&mut state, 30_000)).unwrap();
    }
    w.checkpoint().unwrap();
    // Everything up to the open chunk (empty after the checkpoint) is in the file: the chunks
    // read back, though there is no summary yet.
    let bytes = std::fs::read(&path).unwrap();
    let n = mcap::MessageStream::new(&bytes).unwrap().take_while(|m| m.is_ok()).count();
    assert_eq!(n, 40);
    drop(w);
}
