//! rosbag2's compression worker flags of issue 19: `--compression-mode message` on
//! `--compression-threads` workers (the same rows for any thread count), and
//! `--compression-threads-priority` (the nice value of the compression threads, read from
//! `/proc/<pid>/task`). Each test has its own DDS domain and temp dir.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rbag_storage::{Connection, Format};
use rbag_testkit::ros2::{available, CyclonePeer, Domain};

#[path = "common/recorder.rs"]
mod recorder;
use recorder::{rbag_cmd, record, Rec, LONG};

/// Name and nice value of every thread of process `pid`.
fn threads(pid: u32) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return out };
    for task in tasks.flatten() {
        let (Ok(comm), Ok(stat)) =
            (std::fs::read_to_string(task.path().join("comm")), std::fs::read_to_string(task.path().join("stat")))
        else {
            continue; // the thread ended meanwhile
        };
        // `tid (comm) state ...`: comm may hold spaces, so count from the last `)`; nice is
        // field 19, the 17th after it.
        let rest = &stat[stat.rfind(')').unwrap() + 1..];
        let nice: i64 = rest.split_whitespace().nth(16).unwrap().parse().unwrap();
        out.push((comm.trim().to_string(), nice));
    }
    out
}

/// Waits until process `pid` has `n` compression threads; returns all its threads.
fn with_compression_threads(rec: &Rec, n: usize) -> Vec<(String, i64)> {
    let start = Instant::now();
    loop {
        let all = threads(rec.child.id());
        if all.iter().filter(|(name, _)| name.starts_with("rbag-compress")).count() >= n {
            return all;
        }
        assert!(start.elapsed() < LONG, "{all:?}\n{}", rec.log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The recording arguments of each compression mode (message mode needs SQLite3).
fn mode_args(mode: &str, bag: &Path) -> Vec<String> {
    let mut args: Vec<String> =
        ["--topics", "/chatter", "--compression-mode", mode, "--compression-format", "zstd"].map(String::from).to_vec();
    if mode == "message" {
        args.extend(["-s", "sqlite3"].map(String::from));
    }
    args.extend(["-o".to_string(), bag.to_str().unwrap().to_string()]);
    args
}

#[test]
fn compression_threads_run_at_the_nice_value_asked_for() {
    for mode in ["file", "message"] {
        let domain = Domain::new();
        let tmp = tempfile::tempdir().unwrap();
        let bag = tmp.path().join("bag");
        let mut args = mode_args(mode, &bag);
        args.extend(["--compression-threads", "2", "--compression-threads-priority", "10"].map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let rec = record(&domain, tmp.path(), &args);
        rec.wait_log("Recording to");
        let all = with_compression_threads(&rec, 2);
        let (workers, others): (Vec<_>, Vec<_>) = all.iter().partition(|(name, _)| name.starts_with("rbag-compress"));
        assert_eq!(workers.len(), 2, "{mode}: {all:?}");
        assert!(workers.iter().all(|(_, nice)| *nice == 10), "{mode}: {all:?}");
        assert!(!others.is_empty() && others.iter().all(|(_, nice)| *nice == 0), "{mode}: {all:?}");
        let log = rec.stop();
        assert!(!log.contains("nice value"), "{mode}: {log}");
    }
}

#[test]
fn a_priority_the_system_refuses_is_a_warning_and_recording_goes_on() {
    // Without CAP_SYS_NICE (dropped from the bounding set, as root too), a negative nice value
    // is refused with EACCES.
    if !Command::new("setpriv").args(["--bounding-set=-sys_nice", "true"]).status().is_ok_and(|s| s.success()) {
        eprintln!("skipped: setpriv cannot drop CAP_SYS_NICE here");
        return;
    }
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("bag");
    let log = tmp.path().join("rbag.log");
    let mut args = mode_args("message", &bag);
    args.extend(["--compression-threads", "2", "--compression-threads-priority", "-5"].map(String::from));
    let child = rbag_cmd("setpriv", &domain)
        .args(["--bounding-set=-sys_nice", "--", env!("CARGO_BIN_EXE_rbag"), "record", "--ros2"])
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // setpriv execs rbag: the pid is rbag's.
    let rec = Rec { child, log };
    rec.wait_log("Recording to");
    rec.wait_log("could not set the nice value of the compression threads to -5");
    let all = with_compression_threads(&rec, 2);
    assert!(all.iter().all(|(_, nice)| *nice == 0), "{all:?}");
    let log = rec.stop();
    assert!(log.contains("Permission denied"), "{log}");
    assert_eq!(log.matches("could not set the nice value").count(), 1, "one warning, not one per thread:\n{log}");
}

#[test]
fn priority_out_of_range_is_a_usage_error() {
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let out = rbag_cmd(env!("CARGO_BIN_EXE_rbag"), &domain)
        .args(["record", "--ros2", "--topics", "/c", "--compression-threads-priority", "20", "-o"])
        .arg(tmp.path().join("x"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--compression-threads-priority") && err.contains("20"), "{err}");
}

/// Payloads of varied sizes and compressibility.
fn payload(i: u64) -> Vec<u8> {
    let len = (i * 7919 % 2000) as usize + 1;
    match i % 3 {
        0 => format!("message {i} ").repeat(len / 12 + 1).into_bytes(),
        1 => vec![(i % 251) as u8; len],
        _ => {
            let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        }
    }
}

/// The `messages` rows (topic id, timestamp, data) of every `.db3` file in `dir`, in file and
/// id order.
fn rows(dir: &Path) -> Vec<(i64, i64, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "db3"))
        .collect();
    files.sort_by_key(|p| p.file_stem().unwrap().to_string_lossy().rsplit('_').next().unwrap().parse::<u64>().unwrap());
    let mut out = Vec::new();
    for f in files {
        let db = rusqlite::Connection::open(&f).unwrap();
        let mut stmt = db.prepare("SELECT topic_id, timestamp, data FROM messages ORDER BY id").unwrap();
        let r = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap();
        out.extend(r.map(Result::unwrap));
    }
    out
}

#[test]
fn message_mode_output_is_the_same_for_one_and_two_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.mcap");
    let mut w = rbag_storage::create(&input, Format::Mcap, &Default::default()).unwrap();
    let c = Connection {
        topic: "/blob".into(),
        message_type: "std_msgs/msg/String".into(),
        encoding: "cdr".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros2msg".into(),
        ..Connection::default()
    };
    let id = w.add_connection(&c).unwrap();
    let given: Vec<Vec<u8>> = (0..1500).map(payload).collect();
    for (i, data) in given.iter().enumerate() {
        let t = 1_700_000_000_000_000_000 + i as u64 * 1_000_000;
        w.write(id, t, t, data).unwrap();
    }
    w.finish().unwrap();
    let convert = |threads: &str| -> PathBuf {
        let out = tmp.path().join(threads).join("bag");
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_rbag"))
            .arg("convert")
            .arg(&input)
            .args(["-s", "sqlite3", "--compression-mode", "message", "-b", "100KiB", "--compression-threads", threads])
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let (one, two) = (convert("1"), convert("2"));
    let files = |d: &Path| {
        let mut n: Vec<String> =
            std::fs::read_dir(d).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        n.sort();
        n
    };
    assert!(files(&one).len() > 2, "split into several files: {:?}", files(&one));
    assert_eq!(files(&one), files(&two));
    let (r1, r2) = (rows(&one), rows(&two));
    assert!(r1 == r2, "the rows differ between 1 and 2 threads");
    assert_eq!(
        std::fs::read_to_string(one.join("metadata.yaml")).unwrap(),
        std::fs::read_to_string(two.join("metadata.yaml")).unwrap()
    );
    let back: Vec<Vec<u8>> = r1.iter().map(|(_, _, d)| zstd::decode_all(&d[..]).unwrap()).collect();
    assert!(back == given, "the stored messages decompress to the input's, in order");
    assert!(r1.iter().zip(&given).filter(|((_, _, d), g)| d.len() < g.len()).count() > 500);
}

#[test]
fn message_mode_recording_stores_each_message_compressed() {
    let test = "message_mode_recording_stores_each_message_compressed";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("bag");
    let mut args = mode_args("message", &bag);
    args.extend(["--compression-threads", "2"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let rec = record(&domain, tmp.path(), &args);
    rec.wait_log("Recording to");
    let count = "30";
    let mut p = CyclonePeer::spawn(
        &py,
        &domain,
        "pub",
        &[
            "--topic",
            "rt/chatter",
            "--type",
            "string",
            "--count",
            count,
            "--rate",
            "100",
            "--no-hex",
            "--linger",
            "0.5",
        ],
    );
    p.expect_line("DONE", LONG);
    p.wait_exit(LONG);
    let log = rec.stop();
    let stored = rows(&bag);
    assert_eq!(stored.len(), 30, "{log}");
    // Each row is a zstd frame of a CDR std_msgs/String, in the order published.
    let texts: Vec<String> = stored
        .iter()
        .map(|(_, _, d)| {
            let cdr = zstd::decode_all(&d[..]).unwrap();
            let len = u32::from_le_bytes(cdr[4..8].try_into().unwrap()) as usize;
            String::from_utf8_lossy(&cdr[8..8 + len - 1]).into_owned()
        })
        .collect();
    let times: Vec<i64> = stored.iter().map(|r| r.1).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert_eq!(texts.iter().collect::<std::collections::BTreeSet<_>>().len(), 30, "{texts:?}");
    let meta = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    assert!(meta.contains("compression_mode: MESSAGE"), "{meta}");
}

#[test]
fn message_mode_recording_splits_by_size_with_messages_in_flight() {
    let test = "message_mode_recording_splits_by_size_with_messages_in_flight";
    let Some(py) = available(test) else { return };
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("bag");
    let rec = record(
        &domain,
        tmp.path(),
        &[
            "--topics",
            "/blob",
            "-s",
            "sqlite3",
            "--compression-mode",
            "message",
            "--compression-threads",
            "2",
            "-b",
            "86016",
            "-o",
            bag.to_str().unwrap(),
        ],
    );
    rec.wait_log("Recording to");
    // 40 blobs of 60 kB that zstd shrinks to about 4 kB each: about 170 kB stored.
    let mut p = CyclonePeer::spawn(
        &py,
        &domain,
        "pub",
        &[
            "--topic", "rt/blob", "--type", "blob", "--count", "40", "--rate", "50", "--size", "60000", "--linger",
            "0.5",
        ],
    );
    p.expect_line("DONE", LONG);
    p.wait_exit(LONG);
    let log = rec.stop();
    let db3 = std::fs::read_dir(&bag).unwrap().flatten().filter(|e| e.path().extension().is_some_and(|x| x == "db3"));
    assert!(db3.count() >= 2, "split into several files:\n{log}");
    let stored = rows(&bag);
    assert_eq!(stored.len(), 40, "{log}");
    for (_, _, d) in &stored {
        assert!(d.len() < 20_000, "stored compressed: {} bytes", d.len());
        assert!(zstd::decode_all(&d[..]).unwrap().len() >= 60_000);
    }
    let meta = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    assert!(meta.contains("message_count: 40"), "{meta}");
}
