//! `rbag record --ros2` flags of issue 19, each shown against a real Cyclone DDS peer on its
//! own domain: `/events/write_split` at splits and at the end, `--use-sim-time`,
//! `--storage-config-file`, the compression worker flags, `--max-cache-duration` and
//! `--static-topics-path`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rbag_testkit::ros2::{available, CyclonePeer, Domain};

#[path = "common/recorder.rs"]
mod recorder;
use recorder::{rbag_cmd, record, Rec, LONG};

/// `rbag record --ros2 ARGS` run to its end (a usage error, say): exit code and stderr.
fn record_once(domain: &Domain, args: &[&str]) -> (i32, String) {
    let out = rbag_cmd(env!("CARGO_BIN_EXE_rbag"), domain)
        .args(["record", "--ros2"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Publishes `count` messages of `kind` on `topic` at `rate` once a reader matched.
fn publisher(
    py: &Path,
    domain: &Domain,
    topic: &str,
    kind: &str,
    count: usize,
    rate: &str,
    extra: &[&str],
) -> CyclonePeer {
    let count = count.to_string();
    let mut args = vec!["--topic", topic, "--type", kind, "--count", &count, "--rate", rate, "--no-hex"];
    args.extend_from_slice(extra);
    CyclonePeer::spawn(py, domain, "pub", &args)
}

/// The storage files of a bag directory, sorted by split index.
fn storage_files(bag: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(bag)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    let index = |p: &PathBuf| -> u64 {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let stem = name.split('.').next().unwrap();
        stem.rsplit('_').next().unwrap().parse().unwrap()
    };
    files.sort_by_key(index);
    files
}

/// `rbag echo --json` of `topic` in `bag`: one JSON value per message (with its log time).
fn cat(bag: &Path, topic: &str) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_rbag")).args(["echo", "--json"]).arg(bag).arg(topic).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Waits until `peer` received `n` samples; returns them.
fn received(peer: &CyclonePeer, n: usize) -> Vec<serde_json::Value> {
    let start = Instant::now();
    loop {
        let got = peer.received();
        if got.len() >= n {
            return got;
        }
        assert!(start.elapsed() < LONG, "{} of {n} samples:\n{}", got.len(), peer.output());
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[test]
fn write_split_events_name_each_closed_and_opened_file() {
    let test = "write_split_events_name_each_closed_and_opened_file";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("split");
    let events = CyclonePeer::spawn(
        &py,
        &domain,
        "sub",
        &["--topic", "rt/events/write_split", "--type", "write_split", "--count", "99", "--timeout", "60"],
    );
    events.expect_line("READY", LONG);
    let rec = record(
        &domain,
        tmp.path(),
        &["--topics", "/blob", "-b", "1KiB", "--node-name", "my_recorder", "-o", bag.to_str().unwrap()],
    );
    rec.wait_log("Recording to");
    // The recorder's event writer matched the subscriber.
    events.expect_line("MATCHED", LONG);
    let mut p = publisher(&py, &domain, "rt/blob", "blob", 3, "20", &["--size", "2000"]);
    p.expect_line("DONE", LONG);
    p.wait_exit(LONG);
    rec.wait_log("Split:");
    let log = rec.stop();
    let files = storage_files(&bag, "mcap");
    assert!(files.len() >= 2, "{files:?}\n{log}");
    // One event per split and one at the end, with no opened file.
    let got = received(&events, files.len());
    assert_eq!(got.len(), files.len(), "{got:?}");
    for (i, e) in got.iter().enumerate() {
        assert_eq!(e["node_name"], "/my_recorder");
        assert_eq!(e["closed_file"], files[i].to_str().unwrap(), "{got:?}");
        let opened = files.get(i + 1).map_or("", |f| f.to_str().unwrap());
        assert_eq!(e["opened_file"], opened, "{got:?}");
    }
}

#[test]
fn use_sim_time_stamps_messages_with_clock_time_and_splits_by_it() {
    let test = "use_sim_time_stamps_messages_with_clock_time_and_splits_by_it";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("sim");
    let rec = record(
        &domain,
        tmp.path(),
        &["--topics", "/chatter", "--use-sim-time", "-d", "5", "-o", bag.to_str().unwrap()],
    );
    rec.wait_log("Waiting for the first /clock message");
    // /clock runs at 20 simulated seconds per wall second: sec = 0, 1, 2… at 20 Hz.
    let clock = publisher(&py, &domain, "rt/clock", "clock", 400, "20", &[]);
    clock.expect_line("MATCHED", LONG);
    // rbag subscribes to /chatter once /clock runs; the talker waits for that match.
    let mut talker = publisher(&py, &domain, "rt/chatter", "string", 40, "20", &["--linger", "0.5"]);
    talker.expect_line("DONE", LONG);
    talker.wait_exit(LONG);
    let log = rec.stop();
    let msgs = cat(&bag, "/chatter");
    assert!(!msgs.is_empty(), "{log}");
    for m in &msgs {
        // /clock's seconds, not the wall clock's ~1.7e18 ns.
        let t = m["log_time"].as_u64().unwrap();
        assert!(t < 400_000_000_000, "log time {t} is not /clock's\n{log}");
    }
    let first = msgs[0]["log_time"].as_u64().unwrap();
    let last = msgs[msgs.len() - 1]["log_time"].as_u64().unwrap();
    // -d 5 counts simulated seconds: the messages span more than 5 of them, so more than one file.
    assert!(last - first > 5_000_000_000, "{first}..{last}");
    assert!(storage_files(&bag, "mcap").len() >= 2, "{:?}\n{log}", storage_files(&bag, "mcap"));
}

#[test]
fn use_sim_time_with_no_discovery_is_a_usage_error() {
    let domain = Domain::new();
    let (code, err) =
        record_once(&domain, &["--topics", "/chatter", "--use-sim-time", "--no-discovery", "-o", "/nonexistent/x"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--no-discovery"), "{err}");
}

/// Publishes `n` strings on /chatter once rbag matched, and waits until done.
fn talk(py: &Path, domain: &Domain, n: usize) {
    let mut p = publisher(py, domain, "rt/chatter", "string", n, "100", &["--linger", "0.5"]);
    p.expect_line("DONE", LONG);
    p.wait_exit(LONG);
}

#[test]
fn storage_config_file_runs_sqlite_write_pragmas_on_the_bag() {
    let test = "storage_config_file_runs_sqlite_write_pragmas_on_the_bag";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("sqlite.yaml");
    std::fs::write(&cfg, "write:\n  pragmas: [\"page_size = 8192\", \"journal_mode = WAL\"]\n").unwrap();
    let bag = tmp.path().join("db");
    let rec = record(
        &domain,
        tmp.path(),
        &[
            "--topics",
            "/chatter",
            "-s",
            "sqlite3",
            "--storage-config-file",
            cfg.to_str().unwrap(),
            "-o",
            bag.to_str().unwrap(),
        ],
    );
    rec.wait_log("Recording to");
    talk(&py, &domain, 10);
    let log = rec.stop();
    assert_eq!(cat(&bag, "/chatter").len(), 10, "{log}");
    // The SQLite header: page size (big endian) at 16, file format versions 2 (WAL) at 18-19.
    let db = std::fs::read(&storage_files(&bag, "db3")[0]).unwrap();
    assert_eq!(u16::from_be_bytes([db[16], db[17]]), 8192);
    assert_eq!((db[18], db[19]), (2, 2));
}

#[test]
fn storage_config_file_sets_mcap_writer_options_over_the_preset() {
    let test = "storage_config_file_sets_mcap_writer_options_over_the_preset";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("mcap.yaml");
    std::fs::write(&cfg, "compression: Lz4\ncompressionLevel: Slowest\nchunkSize: 4096\nnoChunkCRC: true\n").unwrap();
    let bag = tmp.path().join("m");
    let rec = record(
        &domain,
        tmp.path(),
        &[
            "--topics",
            "/chatter",
            "--storage-preset-profile",
            "zstd_fast",
            "--storage-config-file",
            cfg.to_str().unwrap(),
            "-o",
            bag.to_str().unwrap(),
        ],
    );
    rec.wait_log("Recording to");
    talk(&py, &domain, 10);
    let log = rec.stop();
    assert_eq!(cat(&bag, "/chatter").len(), 10, "{log}");
    // The file's chunks say lz4 (the config), not the preset's zstd.
    let data = std::fs::read(&storage_files(&bag, "mcap")[0]).unwrap();
    let has = |needle: &[u8]| data.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"lz4") && !has(b"zstd"), "{log}");
}

#[test]
fn storage_config_file_errors_name_the_file_and_the_key() {
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("bad.yaml");
    std::fs::write(&cfg, "noChunkCrc: true\n").unwrap();
    let out = tmp.path().join("x");
    let (code, err) = record_once(
        &domain,
        &["--topics", "/chatter", "--storage-config-file", cfg.to_str().unwrap(), "-o", out.to_str().unwrap()],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("bad.yaml") && err.contains("noChunkCrc"), "{err}");
    std::fs::write(&cfg, "write:\n  pragmas: [\"journal_mode = WAL; DROP TABLE messages\"]\n").unwrap();
    let (code, err) = record_once(
        &domain,
        &[
            "--topics",
            "/c",
            "-s",
            "sqlite3",
            "--storage-config-file",
            cfg.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("bad.yaml") && err.contains("DROP TABLE"), "{err}");
    assert!(!out.exists());
}

#[test]
fn file_compression_runs_on_workers_and_every_split_ends_compressed() {
    let test = "file_compression_runs_on_workers_and_every_split_ends_compressed";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("z");
    let rec = record(
        &domain,
        tmp.path(),
        &[
            "--topics",
            "/blob",
            "-b",
            "1KiB",
            "--compression-mode",
            "file",
            "--compression-format",
            "zstd",
            "--compression-threads",
            "2",
            "--compression-queue-size",
            "0",
            "-o",
            bag.to_str().unwrap(),
        ],
    );
    rec.wait_log("Recording to");
    let mut p = publisher(&py, &domain, "rt/blob", "blob", 5, "20", &["--size", "2000", "--linger", "0.5"]);
    p.expect_line("DONE", LONG);
    p.wait_exit(LONG);
    let log = rec.stop();
    // Queue size 0 drops nothing: every file is compressed, and metadata.yaml names them so.
    let packed = storage_files(&bag, "zstd");
    assert!(packed.len() >= 2, "{packed:?}\n{log}");
    assert!(storage_files(&bag, "mcap").is_empty(), "{log}");
    let meta = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    for f in &packed {
        assert!(meta.contains(f.file_name().unwrap().to_str().unwrap()), "{meta}");
    }
    assert_eq!(cat(&bag, "/blob").len(), 5, "{log}");
}

#[test]
fn snapshot_ring_keeps_max_cache_duration_of_log_time() {
    let test = "snapshot_ring_keeps_max_cache_duration_of_log_time";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("snap");
    let rec = record(
        &domain,
        tmp.path(),
        &[
            "--topics",
            "/chatter",
            "--snapshot-mode",
            "--max-cache-size",
            "0",
            "--max-cache-duration",
            "1",
            "-o",
            bag.to_str().unwrap(),
        ],
    );
    rec.wait_log("Recording to");
    // 60 messages at 20 Hz span about 3 s of log time.
    let mut p = publisher(&py, &domain, "rt/chatter", "string", 60, "20", &["--linger", "0.5"]);
    p.expect_line("DONE", LONG);
    p.wait_exit(LONG);
    rec.signal("USR1");
    rec.wait_log("Snapshot");
    let log = rec.stop();
    let msgs = cat(&bag, "/chatter");
    assert!(!msgs.is_empty() && msgs.len() < 60, "{} messages\n{log}", msgs.len());
    let t = |m: &serde_json::Value| m["log_time"].as_u64().unwrap();
    assert!(t(&msgs[msgs.len() - 1]) - t(&msgs[0]) <= 1_000_000_000, "{log}");
}

#[test]
fn snapshot_mode_needs_a_cache_size_or_duration() {
    let domain = Domain::new();
    let (code, err) = record_once(
        &domain,
        &["-a", "--snapshot-mode", "--max-cache-size", "0", "--max-cache-duration", "0", "-o", "/nonexistent/x"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--max-cache-duration"), "{err}");
    let (code, err) = record_once(&domain, &["-a", "--max-cache-duration", "5000000000", "-o", "/nonexistent/x"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn static_topics_are_subscribed_without_discovery() {
    let test = "static_topics_are_subscribed_without_discovery";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let list = tmp.path().join("static.yaml");
    std::fs::write(&list, "static_topics_and_types_list:\n  - [/chatter, std_msgs/msg/String]\n").unwrap();
    let bag = tmp.path().join("st");
    let rec =
        record(&domain, tmp.path(), &["--static-topics-path", list.to_str().unwrap(), "-o", bag.to_str().unwrap()]);
    // Subscribed before any publisher exists: no discovery needed.
    rec.wait_log("Subscribed to topic '/chatter' (std_msgs/msg/String)");
    let mut other = publisher(&py, &domain, "rt/other", "string", 5, "50", &["--no-wait", "--linger", "0.5"]);
    talk(&py, &domain, 10);
    other.wait_exit(LONG);
    let log = rec.stop();
    assert_eq!(cat(&bag, "/chatter").len(), 10, "{log}");
    // Static topics alone: discovery is off, /other is not recorded.
    assert!(!log.contains("'/other'"), "{log}");
}

#[test]
fn a_bad_static_topics_file_names_its_line() {
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let list = tmp.path().join("static.yaml");
    std::fs::write(&list, "static_topics_and_types_list:\n  - [/chatter, std_msgs/msg/String]\n  - [/odd]\n").unwrap();
    let (code, err) = record_once(&domain, &["--static-topics-path", list.to_str().unwrap(), "-o", "/nonexistent/x"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("static.yaml") && err.contains("line 3"), "{err}");
}

/// The strings of a CDR message made only of strings (with its encapsulation header).
fn cdr_strings(data: &[u8]) -> Vec<String> {
    let (mut at, mut out) = (4, Vec::new());
    while at + 4 <= data.len() {
        at = 4 + (at - 4).div_ceil(4) * 4;
        let len = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        out.push(String::from_utf8_lossy(&data[at + 4..at + 4 + len - 1]).into_owned());
        at += 4 + len;
    }
    out
}

#[test]
fn write_split_events_reach_a_zenoh_listener() {
    use rbag_testkit::zenoh::{endpoint, free_port, rbag_env, spawn, zenoh_python};
    let test = "write_split_events_reach_a_zenoh_listener";
    let Some(py) = zenoh_python(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (port, domain) = (free_port(), Domain::new());
    let (e, d) = (endpoint(port), domain.id().to_string());
    let bag = tmp.path().join("zsplit");
    let log = tmp.path().join("rbag.log");
    let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
    rbag_env(&mut c, port, domain.id());
    c.args([
        "record",
        "--ros2",
        "--middleware",
        "zenoh",
        "--disable-keyboard-controls",
        "--topics",
        "/blob",
        "-b",
        "1KiB",
    ])
    .arg("-o")
    .arg(&bag)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(&log).unwrap());
    let rec = Rec { child: c.spawn().unwrap(), log };
    rec.wait_log("Recording to");
    let reg = rbag_msg::store::registry(rbag_msg::store::Distro::Jazzy);
    let hash = reg.rihs01("rosbag2_interfaces/msg/WriteSplitEvent").unwrap();
    let common = ["--connect", &e, "--domain", &d];
    let listen = [
        "--topic",
        "/events/write_split",
        "--dds-type",
        "rosbag2_interfaces::msg::dds_::WriteSplitEvent_",
        "--hash",
        &hash,
        "--count",
        "99",
        "--timeout",
        "60",
    ];
    let events = spawn(&py, "listener", &[&common[..], &listen[..]].concat());
    events.expect_line("READY", LONG);
    let blob_hash = reg.rihs01("sensor_msgs/msg/CompressedImage").unwrap();
    let talk = [
        "--topic",
        "/blob",
        "--dds-type",
        "sensor_msgs::msg::dds_::CompressedImage_",
        "--hash",
        &blob_hash,
        "--kind",
        "blob",
        "--size",
        "2000",
        "--count",
        "3",
        "--rate",
        "20",
        "--wait-sub",
        "30",
        "--linger",
        "0.5",
    ];
    let mut talker = spawn(&py, "talker", &[&common[..], &talk[..]].concat());
    talker.expect_line("DONE", LONG);
    talker.wait_exit(LONG);
    rec.wait_log("Split:");
    let log = rec.stop();
    let files = storage_files(&bag, "mcap");
    assert!(files.len() >= 2, "{files:?}\n{log}");
    let start = Instant::now();
    let got = loop {
        let got: Vec<Vec<String>> = events
            .lines()
            .iter()
            .filter_map(|l| l.strip_prefix("RECEIVED "))
            .map(|l| cdr_strings(&rbag_testkit::ros2::from_hex(l.split_whitespace().nth(1).unwrap())))
            .collect();
        if got.len() >= files.len() || start.elapsed() > LONG {
            break got;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    assert_eq!(got.len(), files.len(), "{got:?}\n{}", events.output());
    for (i, e) in got.iter().enumerate() {
        let opened = files.get(i + 1).map_or(String::new(), |f| f.display().to_string());
        assert_eq!(e, &[files[i].display().to_string(), opened, "/rosbag2_recorder".to_string()], "{got:?}");
    }
}
