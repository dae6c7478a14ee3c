//! The recording engine against real files: bags are written to temporary directories and read
//! back with `rbag_storage::open`. Every time is a parameter; nothing reads the clock.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use rbag_storage::{Compression, Connection, Filter, Format, WriteOptions};
use rbag_transport::{
    ConnKey, Notice, OutputName, Popped, RecordError, RecordOptions, RecordQueue, Recorder, SnapshotBuffer, Split,
    StopReason, WriteOutcome, DROPPED_TOPIC,
};

const T0: u64 = 1_700_000_000_000_000_000;
const SEC: u64 = 1_000_000_000;
const STRING_MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";

fn conn(topic: &str, callerid: &str, latched: bool) -> Connection {
    Connection {
        id: 0,
        topic: topic.into(),
        message_type: "std_msgs/String".into(),
        encoding: "ros1".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros1msg".into(),
        metadata: BTreeMap::from([
            ("callerid".to_string(), callerid.to_string()),
            ("latching".to_string(), if latched { "1" } else { "0" }.to_string()),
            ("md5sum".to_string(), STRING_MD5.to_string()),
        ]),
    }
}

/// A ROS 1 std_msgs/String, as it comes off the wire (without the TCPROS length prefix).
fn string_msg(text: &str) -> Vec<u8> {
    let mut v = (text.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(text.as_bytes());
    v
}

fn text_of(data: &[u8]) -> String {
    String::from_utf8(data[4..].to_vec()).unwrap()
}

fn opts(dir: &Path, name: &str) -> RecordOptions {
    RecordOptions { output: OutputName::Exact(dir.join(name)), min_space: 0, ..RecordOptions::default() }
}

/// (topic, log time, text) of every message of a bag, in log-time order.
fn read(path: &Path) -> Vec<(String, u64, String)> {
    let reader = rbag_storage::open(path).unwrap();
    let mut out = Vec::new();
    for m in reader.messages(&Filter::default()).unwrap() {
        let m = m.unwrap();
        let topic = reader.connection(m.connection).unwrap().topic.clone();
        out.push((topic, m.log_time, text_of(&m.data)));
    }
    out
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn names(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
}

#[test]
fn active_file_is_renamed_at_finish() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recorder::create(opts(dir.path(), "run"), T0).unwrap();
    let k = rec.add_connection(conn("/chatter", "/talker", false)).unwrap();
    for i in 0..3 {
        assert_eq!(rec.write(k, T0 + i * SEC, &string_msg(&format!("hello {i}"))).unwrap(), WriteOutcome::Written);
    }
    assert_eq!(files_in(dir.path()), ["run.bag.active"]);
    assert_eq!(rec.current_file(), Some(dir.path().join("run.bag").as_path()));
    let notices = rec.take_notices();
    assert_eq!(notices, [Notice::Opened(dir.path().join("run.bag"))]);
    let report = rec.finish().unwrap();
    assert_eq!(files_in(dir.path()), ["run.bag"]);
    assert_eq!(report.files, [dir.path().join("run.bag")]);
    assert_eq!(report.messages, BTreeMap::from([("/chatter".to_string(), 3)]));
    assert!(report.drops.is_empty() && report.stopped.is_none());

    let msgs = read(&dir.path().join("run.bag"));
    assert_eq!(msgs, (0..3).map(|i| ("/chatter".to_string(), T0 + i * SEC, format!("hello {i}"))).collect::<Vec<_>>());
    // The publisher's header is the bag's connection header.
    let reader = rbag_storage::open(&dir.path().join("run.bag")).unwrap();
    let c = &reader.connections()[0];
    assert_eq!(c.metadata.get("callerid").map(String::as_str), Some("/talker"));
    assert_eq!(c.metadata.get("md5sum").map(String::as_str), Some(STRING_MD5));
}

#[test]
fn prefix_names_carry_the_local_date() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("pre").to_string_lossy().into_owned();
    let o = RecordOptions { output: OutputName::Prefix(prefix), min_space: 0, ..RecordOptions::default() };
    let expected = o.file_name(0, T0).unwrap();
    let rec = Recorder::create(o, T0).unwrap();
    let report = rec.finish().unwrap();
    assert_eq!(report.files, std::slice::from_ref(&expected));
    let name = expected.file_name().unwrap().to_string_lossy().into_owned();
    let re = regex::Regex::new(r"^pre_\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.bag$").unwrap();
    assert!(re.is_match(&name), "{name}");
}

#[test]
fn existing_output_is_refused_unless_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    // --force replaces only a bag: a file that is not one is refused, overwrite or not.
    std::fs::write(dir.path().join("run.bag"), b"old").unwrap();
    let err = Recorder::create(RecordOptions { overwrite: true, ..opts(dir.path(), "run.bag") }, T0).err().unwrap();
    assert!(err.to_string().contains("not a bag"), "{err}");
    assert_eq!(std::fs::read(dir.path().join("run.bag")).unwrap(), b"old");
    std::fs::write(dir.path().join("run.bag"), b"#ROSBAG V2.0\nold").unwrap();
    let err = Recorder::create(opts(dir.path(), "run.bag"), T0).err().unwrap();
    assert!(matches!(&err, RecordError::OutputExists { path } if path == &dir.path().join("run.bag")), "{err}");
    let rec = Recorder::create(RecordOptions { overwrite: true, ..opts(dir.path(), "run.bag") }, T0).unwrap();
    rec.finish().unwrap();
    assert_eq!(read(&dir.path().join("run.bag")), []);
}

#[test]
fn split_by_size_keeps_every_message_once() {
    let dir = tempfile::tempdir().unwrap();
    let max = 10_000;
    let o = RecordOptions {
        split: Some(Split { max_bytes: Some(max), max_duration_ns: None }),
        ..opts(dir.path(), "run.bag")
    };
    let mut rec = Recorder::create(o, T0).unwrap();
    let a = rec.add_connection(conn("/a", "/pa", false)).unwrap();
    let b = rec.add_connection(conn("/b", "/pb", false)).unwrap();
    let pad = "x".repeat(990);
    for i in 0..40u64 {
        let key = if i % 2 == 0 { a } else { b };
        assert_eq!(rec.write(key, T0 + i * 1000, &string_msg(&format!("{i:03}{pad}"))).unwrap(), WriteOutcome::Written);
    }
    let report = rec.finish().unwrap();
    let n = report.files.len();
    assert!(n >= 4, "{:?}", report.files);
    assert_eq!(names(&report.files), (0..n).map(|i| format!("run_{i}.bag")).collect::<Vec<_>>());
    assert_eq!(files_in(dir.path()), {
        let mut v = names(&report.files);
        v.sort();
        v
    });
    let mut seen = Vec::new();
    for (i, f) in report.files.iter().enumerate() {
        let msgs = read(f);
        assert!(!msgs.is_empty(), "{} is empty", f.display());
        if i + 1 < n {
            // Split once the file passed the size, before the next message.
            assert!(std::fs::metadata(f).unwrap().len() >= max, "{} is under {max} bytes", f.display());
        }
        seen.extend(msgs.into_iter().map(|(_, t, text)| (t, text[..3].to_string())));
    }
    assert_eq!(seen, (0..40u64).map(|i| (T0 + i * 1000, format!("{i:03}"))).collect::<Vec<_>>());
    assert_eq!(report.messages, BTreeMap::from([("/a".to_string(), 20), ("/b".to_string(), 20)]));
}

/// Messages at T0 + 0..35 s with 10 s periods: (T0, T0+10] … as rosbag's `t - start > duration`.
fn record_by_duration(dir: &Path, max_splits: Option<usize>) -> rbag_transport::RecordReport {
    let o = RecordOptions {
        split: Some(Split { max_bytes: None, max_duration_ns: Some(10 * SEC) }),
        max_splits,
        ..opts(dir, "run.bag")
    };
    let mut rec = Recorder::create(o, T0).unwrap();
    let k = rec.add_connection(conn("/chatter", "/talker", false)).unwrap();
    for i in 0..35 {
        rec.write(k, T0 + i * SEC, &string_msg(&format!("{i}"))).unwrap();
    }
    rec.finish().unwrap()
}

#[test]
fn split_by_duration_follows_rosbag_periods() {
    let dir = tempfile::tempdir().unwrap();
    let report = record_by_duration(dir.path(), None);
    assert_eq!(names(&report.files), ["run_0.bag", "run_1.bag", "run_2.bag", "run_3.bag"]);
    let per_file: Vec<Vec<u64>> =
        report.files.iter().map(|f| read(f).into_iter().map(|(_, t, _)| (t - T0) / SEC).collect()).collect();
    assert_eq!(per_file, [(0..=10).collect::<Vec<_>>(), (11..=20).collect(), (21..=30).collect(), (31..35).collect()]);
}

#[test]
fn duration_gap_opens_one_file_in_the_period_of_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let o = RecordOptions {
        split: Some(Split { max_bytes: None, max_duration_ns: Some(10 * SEC) }),
        ..opts(dir.path(), "run.bag")
    };
    let mut rec = Recorder::create(o, T0).unwrap();
    let k = rec.add_connection(conn("/chatter", "/talker", false)).unwrap();
    for s in [1, 55, 59, 61] {
        rec.write(k, T0 + s * SEC, &string_msg(&s.to_string())).unwrap();
    }
    let report = rec.finish().unwrap();
    let per_file: Vec<Vec<String>> = report.files.iter().map(|f| read(f).into_iter().map(|m| m.2).collect()).collect();
    // 55 lands in the period (50, 60]; 61 starts (60, 70].
    assert_eq!(per_file, [vec!["1"], vec!["55", "59"], vec!["61"]]);
}

#[test]
fn tick_splits_on_time_while_idle() {
    let dir = tempfile::tempdir().unwrap();
    let o = RecordOptions {
        split: Some(Split { max_bytes: None, max_duration_ns: Some(10 * SEC) }),
        ..opts(dir.path(), "run.bag")
    };
    let mut rec = Recorder::create(o, T0).unwrap();
    assert_eq!(rec.tick(T0 + 10 * SEC).unwrap(), None);
    assert!(rec.current_file().unwrap().ends_with("run_0.bag"));
    assert_eq!(rec.tick(T0 + 10 * SEC + 1).unwrap(), None);
    assert!(rec.current_file().unwrap().ends_with("run_1.bag"));
    let report = rec.finish().unwrap();
    assert_eq!(names(&report.files), ["run_0.bag", "run_1.bag"]);
}

#[test]
fn max_splits_deletes_the_oldest_closed_split() {
    let dir = tempfile::tempdir().unwrap();
    let report = record_by_duration(dir.path(), Some(2));
    // rosbag keeps N closed splits besides the one being written.
    assert_eq!(names(&report.deleted), ["run_0.bag"]);
    assert_eq!(names(&report.files), ["run_1.bag", "run_2.bag", "run_3.bag"]);
    assert_eq!(files_in(dir.path()), ["run_1.bag", "run_2.bag", "run_3.bag"]);
    assert_eq!(read(&dir.path().join("run_1.bag"))[0].2, "11");
}

#[test]
fn repeat_latched_writes_the_last_latched_message_at_each_split_head() {
    for repeat in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let o = RecordOptions {
            split: Some(Split { max_bytes: None, max_duration_ns: Some(10 * SEC) }),
            repeat_latched: repeat,
            ..opts(dir.path(), "run.bag")
        };
        let mut rec = Recorder::create(o, T0).unwrap();
        let map = rec.add_connection(conn("/map", "/mapper", true)).unwrap();
        let chatter = rec.add_connection(conn("/chatter", "/talker", false)).unwrap();
        rec.write(map, T0, &string_msg("map-0")).unwrap();
        rec.write(map, T0 + SEC, &string_msg("map-1")).unwrap();
        for s in 2..26 {
            rec.write(chatter, T0 + s * SEC, &string_msg(&s.to_string())).unwrap();
        }
        let report = rec.finish().unwrap();
        assert_eq!(report.files.len(), 3);
        assert_eq!(report.messages["/map"], 2, "repeated copies are not counted");
        let first = read(&report.files[0]);
        assert_eq!(first.iter().filter(|m| m.0 == "/map").count(), 2);
        for (f, split_time) in report.files[1..].iter().zip([T0 + 11 * SEC, T0 + 21 * SEC]) {
            let msgs = read(f);
            let maps: Vec<_> = msgs.iter().filter(|m| m.0 == "/map").collect();
            if repeat {
                assert_eq!(maps, [&("/map".to_string(), split_time, "map-1".to_string())], "{}", f.display());
                assert_eq!(msgs[0].0, "/map", "the latched copy heads {}", f.display());
                let reader = rbag_storage::open(f).unwrap();
                let c = reader.connections().iter().find(|c| c.topic == "/map").unwrap();
                assert_eq!(c.metadata.get("latching").map(String::as_str), Some("1"));
            } else {
                assert!(maps.is_empty());
            }
        }
    }
}

#[test]
fn limit_per_topic_stops_each_topic_then_all() {
    let dir = tempfile::tempdir().unwrap();
    let o = RecordOptions { limit_per_topic: Some(3), ..opts(dir.path(), "run.bag") };
    let mut rec = Recorder::create(o, T0).unwrap();
    let a = rec.add_connection(conn("/a", "/pa", false)).unwrap();
    let a2 = rec.add_connection(conn("/a", "/pa2", false)).unwrap();
    let b = rec.add_connection(conn("/b", "/pb", false)).unwrap();
    let mut outcomes = Vec::new();
    let mut t = T0;
    for (key, text) in [(a, "a0"), (a2, "a1"), (b, "b0"), (a, "a2"), (a2, "a3"), (b, "b1"), (b, "b2"), (b, "b3")] {
        t += 1;
        outcomes.push(rec.write(key, t, &string_msg(text)).unwrap());
    }
    use WriteOutcome::*;
    assert_eq!(outcomes, [Written, Written, Written, LimitReached, Ignored, Written, AllLimitsReached, Ignored]);
    let report = rec.finish().unwrap();
    assert_eq!(report.messages, BTreeMap::from([("/a".to_string(), 3), ("/b".to_string(), 3)]));
    let texts: Vec<String> = read(&report.files[0]).into_iter().map(|m| m.2).collect();
    assert_eq!(texts, ["a0", "a1", "b0", "a2", "b1", "b2"]);
}

#[test]
fn drops_are_stored_on_rbag_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recorder::create(opts(dir.path(), "run.bag"), T0).unwrap();
    let a = rec.add_connection(conn("/a", "/pa", false)).unwrap();
    let b = rec.add_connection(conn("/b", "/pb", false)).unwrap();
    rec.write(a, T0 + SEC, &string_msg("x")).unwrap();
    rec.note_drops(a, 5);
    rec.note_drops(b, 2);
    rec.note_drops(a, 1);
    let report = rec.finish().unwrap();
    assert_eq!(report.drops, BTreeMap::from([("/a".to_string(), 6), ("/b".to_string(), 2)]));
    assert_eq!(report.total_drops(), 8);
    let path = &report.files[0];
    let reader = rbag_storage::open(path).unwrap();
    let c = reader.connections().iter().find(|c| c.topic == DROPPED_TOPIC).unwrap();
    assert_eq!(c.message_type, "std_msgs/String");
    assert_eq!(c.metadata.get("md5sum").map(String::as_str), Some(STRING_MD5));
    let msgs = read(path);
    assert_eq!(msgs.last().unwrap(), &(DROPPED_TOPIC.to_string(), T0 + SEC, "/a: 6\n/b: 2\n".to_string()));
}

#[test]
fn no_drops_no_drop_report_and_drops_go_to_the_file_they_happened_in() {
    let dir = tempfile::tempdir().unwrap();
    let o = RecordOptions {
        split: Some(Split { max_bytes: None, max_duration_ns: Some(10 * SEC) }),
        ..opts(dir.path(), "run.bag")
    };
    let mut rec = Recorder::create(o, T0).unwrap();
    let a = rec.add_connection(conn("/a", "/pa", false)).unwrap();
    rec.write(a, T0 + SEC, &string_msg("0")).unwrap();
    rec.note_drops(a, 4);
    rec.write(a, T0 + 11 * SEC, &string_msg("1")).unwrap();
    rec.write(a, T0 + 21 * SEC, &string_msg("2")).unwrap();
    rec.note_drops(a, 3);
    let report = rec.finish().unwrap();
    let dropped: Vec<Vec<String>> = report
        .files
        .iter()
        .map(|f| read(f).into_iter().filter(|m| m.0 == DROPPED_TOPIC).map(|m| m.2).collect())
        .collect();
    assert_eq!(dropped, [vec!["/a: 4\n".to_string()], vec![], vec!["/a: 3\n".to_string()]]);
    assert_eq!(report.drops["/a"], 7);
}

#[test]
fn queue_to_recorder_pipeline_counts_what_the_queue_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let queue = RecordQueue::new(Some(30));
    let a = queue.register(conn("/a", "/pa", false));
    let b = queue.register(conn("/b", "/pb", false));
    for i in 0..6u64 {
        // 10-byte payloads: the queue holds three.
        let key = if i % 2 == 0 { a } else { b };
        queue.push(key, T0 + i, Bytes::from(string_msg(&format!("msg-{i:02}"))[..10].to_vec()));
    }
    queue.close();
    let mut rec = Recorder::create(opts(dir.path(), "run.bag"), T0).unwrap();
    loop {
        for (key, n) in queue.take_drops() {
            rec.note_drops(key, n);
        }
        match queue.pop(std::time::Duration::ZERO) {
            Popped::Item(item) => {
                rec.apply(item).unwrap();
            }
            Popped::Timeout => unreachable!("the queue is closed"),
            Popped::Closed => break,
        }
    }
    let report = rec.finish().unwrap();
    assert_eq!(report.drops, BTreeMap::from([("/a".to_string(), 2), ("/b".to_string(), 1)]));
    let msgs = read(&report.files[0]);
    let texts: Vec<&str> = msgs.iter().map(|m| m.2.as_str()).collect();
    assert_eq!(texts, ["msg-03", "msg-04", "msg-05", "/a: 2\n/b: 1\n"]);
}

#[test]
fn drops_noted_before_the_connection_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recorder::create(opts(dir.path(), "run.bag"), T0).unwrap();
    rec.note_drops(ConnKey(7), 2);
    rec.add_connection_with_key(ConnKey(7), conn("/late", "/p", false)).unwrap();
    let report = rec.finish().unwrap();
    assert_eq!(report.drops, BTreeMap::from([("/late".to_string(), 2)]));
}

#[test]
fn min_space_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let o = RecordOptions { min_space: u64::MAX, ..opts(dir.path(), "run.bag") };
    let err = Recorder::create(o, T0).err().expect("refused");
    match &err {
        RecordError::LowDiskSpace { dir: d, free, required } => {
            assert_eq!(d, dir.path());
            assert_eq!(*required, u64::MAX);
            assert!(*free < u64::MAX);
        }
        other => panic!("{other}"),
    }
    let text = err.to_string();
    assert!(text.contains(&dir.path().display().to_string()) && text.contains("less than the minimum"), "{text}");
    assert!(!text.contains("--"), "a library error names no CLI flag: {text}");
    assert!(files_in(dir.path()).is_empty(), "no file is created");
}

#[test]
fn min_space_stops_recording_cleanly_when_the_disk_fills() {
    let dir = tempfile::tempdir().unwrap();
    let free = Arc::new(AtomicU64::new(100 << 30));
    let probe_free = free.clone();
    let o = RecordOptions { min_space: 1 << 30, disk_check_bytes: 1000, ..opts(dir.path(), "run.bag") };
    let mut rec = Recorder::create_with_probe(o, T0, Box::new(move |_| Ok(probe_free.load(Ordering::SeqCst)))).unwrap();
    let k = rec.add_connection(conn("/a", "/pa", false)).unwrap();
    let big = "y".repeat(600);
    assert_eq!(rec.write(k, T0 + 1, &string_msg(&big)).unwrap(), WriteOutcome::Written);
    free.store(3 << 30, Ordering::SeqCst); // under 5 × min: a warning
    assert_eq!(rec.write(k, T0 + 2, &string_msg(&big)).unwrap(), WriteOutcome::Written);
    assert_eq!(rec.write(k, T0 + 3, &string_msg(&big)).unwrap(), WriteOutcome::Written);
    assert!(rec.take_notices().iter().any(|n| matches!(n, Notice::LowSpace { free, .. } if *free == 3 << 30)));
    free.store(1 << 20, Ordering::SeqCst);
    rec.write(k, T0 + 4, &string_msg(&big)).unwrap();
    let outcome = rec.write(k, T0 + 5, &string_msg(&big)).unwrap();
    let WriteOutcome::Stopped(StopReason::LowDiskSpace { free: f, required, .. }) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!((f, required), (1 << 20, 1 << 30));
    // Everything after the stop is refused, and the bag closes normally.
    assert!(matches!(rec.write(k, T0 + 6, &string_msg("z")).unwrap(), WriteOutcome::Stopped(_)));
    let report = rec.finish().unwrap();
    assert!(matches!(report.stopped, Some(StopReason::LowDiskSpace { .. })));
    let n = read(&report.files[0]).len() as u64;
    assert_eq!(n, report.messages["/a"]);
    assert!((3..=4).contains(&n), "{n}");
}

#[test]
fn size_and_duration_without_split_stop_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let o = RecordOptions {
        stop_at: Some(Split { max_bytes: None, max_duration_ns: Some(5 * SEC) }),
        ..opts(dir.path(), "d.bag")
    };
    let mut rec = Recorder::create(o, T0).unwrap();
    let k = rec.add_connection(conn("/a", "/pa", false)).unwrap();
    assert_eq!(rec.write(k, T0 + 5 * SEC, &string_msg("in")).unwrap(), WriteOutcome::Written);
    assert_eq!(
        rec.write(k, T0 + 5 * SEC + 1, &string_msg("out")).unwrap(),
        WriteOutcome::Stopped(StopReason::MaxDuration { ns: 5 * SEC })
    );
    let report = rec.finish().unwrap();
    assert_eq!(read(&report.files[0]).len(), 1);

    let o = RecordOptions {
        stop_at: Some(Split { max_bytes: Some(6000), max_duration_ns: None }),
        ..opts(dir.path(), "s.bag")
    };
    let mut rec = Recorder::create(o, T0).unwrap();
    let k = rec.add_connection(conn("/a", "/pa", false)).unwrap();
    let mut written = 0;
    for i in 0..10 {
        match rec.write(k, T0 + i, &string_msg(&"z".repeat(500))).unwrap() {
            WriteOutcome::Written => written += 1,
            WriteOutcome::Stopped(StopReason::MaxSize { bytes: 6000 }) => break,
            other => panic!("{other:?}"),
        }
    }
    let report = rec.finish().unwrap();
    assert!(written > 0 && written < 10);
    assert_eq!(report.files.len(), 1);
    assert_eq!(read(&report.files[0]).len(), written);
}

#[test]
fn a_second_type_on_a_topic_is_refused_for_ros1() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recorder::create(opts(dir.path(), "run.bag"), T0).unwrap();
    rec.add_connection(conn("/a", "/p", false)).unwrap();
    let mut other = conn("/a", "/q", false);
    other.message_type = "std_msgs/Int32".into();
    let err = rec.add_connection(other).unwrap_err();
    assert!(err.to_string().contains("/a"), "{err}");
    assert!(matches!(
        rec.add_connection_with_key(ConnKey(0), conn("/b", "/p", false)),
        Err(RecordError::KeyInUse { .. })
    ));
    rec.finish().unwrap();
}

#[test]
fn compressed_bags_record_and_split() {
    let dir = tempfile::tempdir().unwrap();
    for compression in [Compression::Lz4, Compression::Bz2] {
        let name = format!("{}.bag", compression.name());
        let o = RecordOptions {
            write: WriteOptions { compression, chunk_size: 4096, ..WriteOptions::default() },
            ..opts(dir.path(), &name)
        };
        let mut rec = Recorder::create(o, T0).unwrap();
        let k = rec.add_connection(conn("/a", "/pa", false)).unwrap();
        for i in 0..200 {
            rec.write(k, T0 + i, &string_msg(&format!("message {i}"))).unwrap();
        }
        let report = rec.finish().unwrap();
        assert_eq!(read(&report.files[0]).len(), 200);
    }
}

#[test]
fn mcap_output_uses_the_ros1_profile() {
    let dir = tempfile::tempdir().unwrap();
    let o = RecordOptions { format: Format::Mcap, ..opts(dir.path(), "run.mcap") };
    let mut rec = Recorder::create(o, T0).unwrap();
    let k = rec.add_connection(conn("/chatter", "/talker", true)).unwrap();
    for i in 0..3 {
        rec.write(k, T0 + i, &string_msg(&format!("m{i}"))).unwrap();
    }
    rec.note_drops(k, 1);
    let report = rec.finish().unwrap();
    assert_eq!(report.files, [dir.path().join("run.mcap")]);
    assert_eq!(files_in(dir.path()), ["run.mcap"]);
    let path = dir.path().join("run.mcap");
    assert_eq!(rbag_storage::detect(&path).unwrap(), Format::Mcap);
    let reader = rbag_storage::open(&path).unwrap();
    assert_eq!(reader.info().unwrap().properties.get("profile").map(String::as_str), Some("ros1"));
    let c = reader.connections().iter().find(|c| c.topic == "/chatter").unwrap();
    assert_eq!(c.encoding, "ros1");
    assert_eq!(c.metadata.get("latching").map(String::as_str), Some("1"));
    let texts: Vec<String> = read(&path).into_iter().map(|m| m.2).collect();
    assert_eq!(texts, ["m0", "m1", "m2", "/chatter: 1\n"]);
}

#[test]
fn mcap_split_names() {
    let dir = tempfile::tempdir().unwrap();
    let o = RecordOptions {
        format: Format::Mcap,
        split: Some(Split { max_bytes: None, max_duration_ns: Some(SEC) }),
        ..opts(dir.path(), "run.mcap")
    };
    let mut rec = Recorder::create(o, T0).unwrap();
    let k = rec.add_connection(conn("/chatter", "/talker", false)).unwrap();
    for i in 0..3 {
        rec.write(k, T0 + i * SEC + 1, &string_msg("m")).unwrap();
    }
    let report = rec.finish().unwrap();
    assert_eq!(names(&report.files), ["run_0.mcap", "run_1.mcap", "run_2.mcap"]);
    assert!(report.files.iter().all(|f| read(f).len() == 1));
}

/// A SIGKILL must lose at most the open chunk: once a chunk is closed its bytes are in the
/// file, not in a user-space buffer.
#[test]
fn closed_chunks_reach_the_os_before_the_bag_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let o = RecordOptions {
        write: WriteOptions { chunk_size: 1024, ..WriteOptions::default() },
        ..opts(dir.path(), "run.bag")
    };
    let mut rec = Recorder::create(o, T0).unwrap();
    let k = rec.add_connection(conn("/a", "/pa", false)).unwrap();
    for i in 0..20 {
        rec.write(k, T0 + i, &string_msg(&"c".repeat(500))).unwrap();
    }
    let len = std::fs::metadata(dir.path().join("run.bag.active")).unwrap().len();
    assert!(len > 4117 + 9000, "only {len} bytes reached the file");
    // Simulate the kill: the recorder is leaked, never finished nor dropped.
    std::mem::forget(rec);
}

#[test]
fn snapshot_ring_is_bounded_by_duration() {
    let mut snap = SnapshotBuffer::new(Some(10 * SEC), None);
    let k = snap.add_connection(conn("/a", "/pa", false));
    let mut evicted = 0;
    for s in 0..30 {
        evicted += snap.push(k, T0 + s * SEC, Bytes::from(string_msg(&s.to_string())));
    }
    // The newest is at 29 s: 19 s..29 s are within 10 s of it.
    assert_eq!(snap.len(), 11);
    assert_eq!(evicted, 19);
}

#[test]
fn throttle_stores_at_most_the_rate_asked_per_topic() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path(), "thr.bag");
    o.throttle_ns = BTreeMap::from([("/fast".to_string(), SEC / 4)]);
    let mut rec = Recorder::create(o, T0).unwrap();
    let fast = rec.add_connection(conn("/fast", "/p", false)).unwrap();
    let other = rec.add_connection(conn("/other", "/p", false)).unwrap();
    let mut outcomes = Vec::new();
    for i in 0..20u64 {
        // 10 Hz for 2 s; 4 Hz kept: one message every 300 ms (the first at or after 250 ms).
        outcomes.push(rec.write(fast, T0 + i * SEC / 10, &string_msg(&format!("f{i:02}"))).unwrap());
        rec.write(other, T0 + i * SEC / 10, &string_msg("o")).unwrap();
    }
    let report = rec.finish().unwrap();
    let kept: Vec<String> = read(&report.files[0]).into_iter().filter(|m| m.0 == "/fast").map(|m| m.2).collect();
    assert_eq!(kept, ["f00", "f03", "f06", "f09", "f12", "f15", "f18"]);
    assert_eq!(outcomes.iter().filter(|o| **o == WriteOutcome::Throttled).count(), 13);
    assert_eq!(report.messages["/other"], 20, "other topics are not throttled");
}

#[test]
fn snapshot_after_the_ring_wrapped_holds_the_latched_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut snap = SnapshotBuffer::new(Some(5 * SEC), None);
    let tf_static = snap.add_connection(conn("/tf_static", "/broadcaster", true));
    let a = snap.add_connection(conn("/a", "/pa", false));
    snap.push(tf_static, T0, Bytes::from(string_msg("static")));
    for s in 1..30 {
        snap.push(a, T0 + s * SEC, Bytes::from(string_msg(&format!("a{s:02}"))));
    }
    // The ring holds 24 s..29 s; the latched message left it long ago but is kept.
    assert_eq!((snap.len(), snap.latched_len()), (6, 1));
    let report = snap.write_to(opts(dir.path(), "wrapped.bag"), T0 + 40 * SEC).unwrap();
    let texts: Vec<String> = read(&report.files[0]).into_iter().map(|m| m.2).collect();
    let mut want = vec!["static".to_string()];
    want.extend((24..30).map(|s| format!("a{s:02}")));
    assert_eq!(texts, want);
    // It stays for the next snapshot, and is written once when the ring still holds it.
    snap.push(a, T0 + 50 * SEC, Bytes::from(string_msg("later")));
    let again = snap.write_to(opts(dir.path(), "again.bag"), T0 + 60 * SEC).unwrap();
    assert_eq!(read(&again.files[0]).into_iter().map(|m| m.2).collect::<Vec<_>>(), ["static", "later"]);
    let mut fresh = SnapshotBuffer::new(Some(5 * SEC), None);
    let tf = fresh.add_connection(conn("/tf_static", "/broadcaster", true));
    fresh.push(tf, T0, Bytes::from(string_msg("static")));
    assert_eq!(fresh.take().len(), 1);
}

#[test]
fn snapshot_ring_is_bounded_by_bytes_and_written_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    let mut snap = SnapshotBuffer::new(None, Some(100));
    let a = snap.add_connection(conn("/a", "/pa", false));
    let b = snap.add_connection(conn("/b", "/pb", false));
    for i in 0..20u64 {
        let key = if i % 2 == 0 { a } else { b };
        snap.push(key, T0 + i, Bytes::from(string_msg(&format!("snap{i:02}"))));
    }
    // 10-byte messages, 100 bytes: the last ten stay.
    assert_eq!((snap.len(), snap.bytes()), (10, 100));
    let report = snap.write_to(opts(dir.path(), "snap.bag"), T0 + 100).unwrap();
    assert!(snap.is_empty());
    let texts: Vec<String> = read(&report.files[0]).into_iter().map(|m| m.2).collect();
    assert_eq!(texts, (10..20).map(|i| format!("snap{i:02}")).collect::<Vec<_>>());
    assert_eq!(report.messages, BTreeMap::from([("/a".to_string(), 5), ("/b".to_string(), 5)]));
    // A second trigger writes what arrived since.
    snap.push(a, T0 + 200, Bytes::from(string_msg("later")));
    let again = snap.write_to(opts(dir.path(), "snap2.bag"), T0 + 300).unwrap();
    assert_eq!(read(&again.files[0]).into_iter().map(|m| m.2).collect::<Vec<_>>(), ["later"]);
}
