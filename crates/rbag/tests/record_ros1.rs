//! `rbag record --ros1` against a real ROS 1 graph: Debian's rosmaster, rospy publishers,
//! rostopic/rosnode, and Debian's C++ recorder (`/usr/lib/rosbag/record`) recording the same
//! graph side by side. Bags are read back with Debian's rosbag Python API (an oracle nobody on
//! this project wrote) and with rbag-storage.
//!
//! Every test has its own master port and home (`Ros1Env`), and everything it starts is
//! killed when it ends. No assertion depends on wall-clock speed: tests wait (with generous
//! timeouts) for the graph to reach a state, e.g. a publisher that counts its subscriber
//! connections before it publishes its counted messages.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use rbag_ros1::master_client::MasterClient;
use rbag_storage::Filter;
use rbag_testkit::ros1::Ros1Env;
use serde_json::Value;

/// How long to wait for anything the graph should do by itself.
const LONG: Duration = Duration::from_secs(120);
const STRING_MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";

fn peer(script: &str) -> String {
    format!("{}/tests/peers/{script}", env!("CARGO_MANIFEST_DIR"))
}

fn python(env: &Ros1Env, script: &str, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Command {
    let mut c = env.command("/usr/bin/python3");
    c.arg(peer(script));
    for a in args {
        c.arg(a);
    }
    c
}

/// The rbag binary in this graph's environment, run in the test's home.
fn rbag(env: &Ros1Env) -> Command {
    let mut c = env.command(env!("CARGO_BIN_EXE_rbag"));
    c.current_dir(env.home.path()).env_remove("ROS_VERSION");
    c
}

/// `rbag record --ros1 -L 1 ARGS…` (a low --min-space: the disk may be small).
fn record(env: &Ros1Env, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Command {
    let mut c = rbag(env);
    c.args(["record", "--ros1", "-L", "1"]);
    for a in args {
        c.arg(a);
    }
    c
}

/// Debian's C++ recorder, stopped later with SIGINT sent to this very binary.
fn rosbag_record(env: &Ros1Env, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Command {
    let mut c = env.command("/usr/lib/rosbag/record");
    c.current_dir(env.home.path()).arg("--min-space=1M");
    for a in args {
        c.arg(a);
    }
    c
}

fn logs(env: &Ros1Env, names: &[&str]) -> String {
    names.iter().map(|n| format!("----- {n} -----\n{}\n", env.log(n))).collect()
}

fn wait_for(env: &Ros1Env, name: &str, needle: &str, also: &[&str]) {
    if !env.wait_log(name, needle, LONG) {
        let mut all = vec![name];
        all.extend_from_slice(also);
        panic!("{name} never printed {needle:?} within {LONG:?}\n{}", logs(env, &all));
    }
}

fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("gave up waiting for {what} after {timeout:?}");
    cond()
}

/// SIGINT, then the exit status; panics with the logs when the process does not stop.
fn interrupt(env: &mut Ros1Env, name: &str, also: &[&str]) -> ExitStatus {
    match env.interrupt(name, Duration::from_secs(60)) {
        Some(st) => st,
        None => {
            let mut all = vec![name];
            all.extend_from_slice(also);
            panic!("{name} did not stop within 60 s of SIGINT\n{}", logs(env, &all))
        }
    }
}

fn master(env: &Ros1Env) -> MasterClient {
    MasterClient::new(&env.master_uri(), "/rbag_record_test").expect("master client")
}

/// The nodes the master lists as subscribers of `topic`.
fn subscribers(env: &Ros1Env, topic: &str) -> Vec<String> {
    let Ok(state) = master(env).system_state() else { return Vec::new() };
    state.subscribers.into_iter().find(|(t, _)| t == topic).map(|(_, n)| n).unwrap_or_default()
}

fn wait_subscribed(env: &Ros1Env, topic: &str, node_prefix: &str, also: &[&str]) {
    if !wait_until(&format!("{node_prefix} subscribed to {topic}"), LONG, || {
        subscribers(env, topic).iter().any(|n| n.starts_with(node_prefix))
    }) {
        panic!("{node_prefix} never subscribed to {topic}: {:?}\n{}", subscribers(env, topic), logs(env, also));
    }
}

/// Reads a bag with Debian's rosbag Python API (`record_read.py`).
fn read_with_rosbag(env: &Ros1Env, bag: &Path) -> Value {
    let (ok, out, err) = env.run(python(env, "record_read.py", &[&bag]), LONG);
    assert!(ok, "rosbag's Python API could not read {}: {err}\n{out}", bag.display());
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("record_read.py output: {e}: {out}"))
}

/// Per-topic message hex strings from `record_read.py`'s JSON, without the graph's own topics.
fn rosbag_msgs(v: &Value) -> BTreeMap<String, Vec<String>> {
    v["msgs"]
        .as_object()
        .expect("msgs")
        .iter()
        .filter(|(t, _)| !infrastructure(t))
        .map(|(t, l)| (t.clone(), l.as_array().unwrap().iter().map(|h| h.as_str().unwrap().to_string()).collect()))
        .collect()
}

/// The first connection header stored for `topic`.
fn rosbag_conn<'a>(v: &'a Value, topic: &str) -> &'a serde_json::Map<String, Value> {
    v["conns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["topic"] == topic)
        .and_then(|c| c["header"].as_object())
        .unwrap_or_else(|| panic!("no connection for {topic}: {v}"))
}

fn infrastructure(topic: &str) -> bool {
    topic == "/rosout" || topic == "/rosout_agg" || topic.starts_with("/rbag/")
}

/// A bag's messages read with rbag-storage: (topic, log time, bytes) in log-time order.
fn read_all(path: &Path) -> Vec<(String, u64, Vec<u8>)> {
    let r = rbag_storage::open(path).unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
    let v = r
        .messages(&Filter::default())
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (r.connection(m.connection).unwrap().topic.clone(), m.log_time, m.data.to_vec())
        })
        .collect();
    v
}

/// The payloads of `topic` as strings (std_msgs/String: a u32 length, then the text).
fn strings_of(msgs: &[(String, u64, Vec<u8>)], topic: &str) -> Vec<String> {
    msgs.iter()
        .filter(|(t, _, _)| t == topic)
        .map(|(_, _, d)| {
            let n = u32::from_le_bytes(d[..4].try_into().unwrap()) as usize;
            assert_eq!(n + 4, d.len(), "a std_msgs/String frame on {topic}");
            String::from_utf8(d[4..].to_vec()).unwrap()
        })
        .collect()
}

/// `record_talker.py`'s text for tick `i` on `topic` with `pad` x's.
fn talk(topic: &str, i: usize, pad: usize) -> String {
    format!("{topic} {i} {}", "x".repeat(pad))
}

fn rbag_info(env: &Ros1Env, path: &Path) -> String {
    let mut c = rbag(env);
    c.arg("info").arg(path);
    let (ok, out, err) = env.run(c, LONG);
    assert!(ok, "rbag info {} failed: {err}\n{out}", path.display());
    out
}

fn files_in(dir: &Path, pred: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&pred))
        .collect();
    v.sort();
    v
}

fn no_panic(log: &str) {
    assert!(!log.contains("panicked"), "rbag panicked:\n{log}");
}

// ---------------------------------------------------------------------------------------------
// 1. Side by side with rosbag record
// ---------------------------------------------------------------------------------------------

/// rbag and Debian's C++ recorder record the same graph at the same time: several types, a
/// latched topic published before either starts, and a topic that appears late. Per topic,
/// both bags hold exactly what rospy published, in order; rbag's connection headers carry what
/// the publishers sent; Debian's `rosbag info` and genpy read rbag's bag.
#[test]
fn records_the_same_bytes_as_rosbag_record() {
    const T: &str = "records_the_same_bytes_as_rosbag_record";
    let Some(mut env) = Ros1Env::new(T) else { return };
    if rbag_testkit::rosbag_python(T).is_none() {
        return;
    }
    env.start_rosmaster();
    let dir = env.home.path().to_path_buf();
    let (main_json, late_json) = (dir.join("main.json"), dir.join("late.json"));
    let (a, b) = (dir.join("A.bag"), dir.join("B.bag"));
    let all = ["pub", "late", "rbag", "rosbag"];

    // The latched message goes out before either recorder runs.
    let publisher = python(&env, "record_pub.py", &[&main_json, &"main", &"150", &"50", &"2"]);
    env.spawn("pub", publisher);
    wait_for(&env, "pub", "READY", &all);

    let rbag_rec = record(&env, &[&"-a", &"-O", &a]);
    let rosbag_rec = rosbag_record(&env, &[&"-a", &"-O", &b]);
    env.spawn("rbag", rbag_rec);
    env.spawn("rosbag", rosbag_rec);
    // The publisher starts its counted messages once both recorders hold a connection.
    wait_for(&env, "pub", "DONE", &all);

    // A topic that appears while both are recording.
    let late = python(&env, "record_pub.py", &[&late_json, &"late", &"40", &"20", &"2"]);
    env.spawn("late", late);
    wait_for(&env, "late", "DONE", &all);
    // Loopback delivers in well under this; it only covers a loaded machine.
    std::thread::sleep(Duration::from_secs(3));

    let st_rbag = interrupt(&mut env, "rbag", &all);
    let st_rosbag = interrupt(&mut env, "rosbag", &all);
    let rbag_log = env.log("rbag");
    no_panic(&rbag_log);
    assert_eq!(st_rbag.code(), Some(0), "rbag record exit status\n{}", logs(&env, &all));
    assert!(a.exists() && !dir.join("A.bag.active").exists(), "A.bag closed\n{rbag_log}");
    assert!(b.exists(), "rosbag record wrote B.bag (status {st_rosbag:?})\n{}", env.log("rosbag"));

    let mut truth: BTreeMap<String, Vec<String>> =
        serde_json::from_str(&std::fs::read_to_string(&main_json).unwrap()).unwrap();
    let late_truth: BTreeMap<String, Vec<String>> =
        serde_json::from_str(&std::fs::read_to_string(&late_json).unwrap()).unwrap();
    truth.extend(late_truth);
    assert_eq!(truth.keys().collect::<Vec<_>>(), ["/chatter", "/imu", "/latched", "/late", "/pose"]);
    assert_eq!(truth["/chatter"].len(), 150);
    assert_eq!(truth["/late"].len(), 40);

    let ja = read_with_rosbag(&env, &a);
    let jb = read_with_rosbag(&env, &b);
    let (ma, mb) = (rosbag_msgs(&ja), rosbag_msgs(&jb));
    for (topic, want) in &truth {
        let got_b = mb.get(topic).cloned().unwrap_or_default();
        assert_eq!(&got_b, want, "rosbag record's {topic} differs from what was published (the oracle itself)");
        let got_a = ma.get(topic).cloned().unwrap_or_default();
        assert_eq!(got_a.len(), want.len(), "rbag's {topic}: {} of {} messages\n{rbag_log}", got_a.len(), want.len());
        assert_eq!(&got_a, want, "rbag's {topic}: same bytes in the same order as published and as rosbag record");
    }
    assert_eq!(ma.keys().collect::<Vec<_>>(), mb.keys().collect::<Vec<_>>(), "the same topics in both bags");

    // Connection headers: what the publisher replied, as rosbag record stores it.
    for topic in truth.keys() {
        let (ca, cb) = (rosbag_conn(&ja, topic), rosbag_conn(&jb, topic));
        for key in ["topic", "type", "md5sum", "message_definition", "callerid", "latching"] {
            assert!(ca.contains_key(key), "rbag's {topic} connection lacks {key}: {ca:?}");
            assert_eq!(ca.get(key), cb.get(key), "{topic} connection field {key}");
        }
        let latching = if topic == "/latched" { "1" } else { "0" };
        assert_eq!(ca["latching"], latching, "{topic} latching");
        let caller = if topic == "/late" { "/record_pub_late" } else { "/record_pub_main" };
        assert_eq!(ca["callerid"], caller);
        assert!(!ca["message_definition"].as_str().unwrap().is_empty());
    }
    assert_eq!(rosbag_conn(&ja, "/chatter")["md5sum"], STRING_MD5);
    assert_eq!(rosbag_conn(&ja, "/imu")["type"], "sensor_msgs/Imu");
    assert_eq!(rosbag_conn(&ja, "/pose")["type"], "geometry_msgs/PoseStamped");
    assert_eq!(rosbag_conn(&ja, "/late")["type"], "nav_msgs/Odometry");

    // genpy deserialises every message of rbag's bag, and re-serialises it to the same bytes.
    let total: usize = ja["msgs"].as_object().unwrap().values().map(|l| l.as_array().unwrap().len()).sum();
    assert_eq!(ja["decoded"].as_u64(), Some(total as u64), "genpy read every message");
    assert_eq!(ja["roundtrip_errors"].as_array().unwrap().len(), 0, "{}", ja["roundtrip_errors"]);

    // Debian's rosbag info reads rbag's bag.
    let mut info = env.command("/usr/bin/rosbag");
    info.arg("info").arg(&a);
    let (ok, out, err) = env.run(info, LONG);
    assert!(ok, "rosbag info A.bag: {err}\n{out}");
    for (topic, ty) in [
        ("/chatter", "std_msgs/String"),
        ("/imu", "sensor_msgs/Imu"),
        ("/pose", "geometry_msgs/PoseStamped"),
        ("/late", "nav_msgs/Odometry"),
        ("/latched", "std_msgs/String"),
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(&format!("{topic} ")))
            .unwrap_or_else(|| panic!("rosbag info lists {topic}:\n{out}"));
        assert!(line.contains(ty), "{line}");
    }
    let rbag_out = rbag_info(&env, &a);
    assert!(rbag_out.contains("/late"), "{rbag_out}");
}

// ---------------------------------------------------------------------------------------------
// 2. Signals
// ---------------------------------------------------------------------------------------------

/// SIGINT and SIGTERM during a recording (the second one chosen by ROS_VERSION=1) both close
/// the bag: exit 0, an indexed NAME.bag that
/// `rbag info` and rosbag read, no NAME.bag.active, and every message from the first one in
/// order.
#[test]
fn sigint_and_sigterm_close_a_valid_bag() {
    const T: &str = "sigint_and_sigterm_close_a_valid_bag";
    let Some(mut env) = Ros1Env::new(T) else { return };
    env.start_rosmaster();
    let dir = env.home.path().to_path_buf();
    let all = ["talker", "int", "term"];
    let int = record(&env, &[&"/chatter", &"-O", &"int.bag"]);
    // ROS_VERSION=1 chooses ROS 1 without --ros1, as in a sourced ROS shell.
    let mut term = rbag(&env);
    term.env("ROS_VERSION", "1").args(["record", "-L", "1", "/chatter", "-O", "term"]);
    env.spawn("int", int);
    env.spawn("term", term);
    // Publishes forever, from the moment both recorders are connected.
    let talker = python(&env, "record_talker.py", &[&"/chatter", &"0", &"50", &"2"]);
    env.spawn("talker", talker);
    wait_for(&env, "talker", "SUBSCRIBED", &all);
    std::thread::sleep(Duration::from_secs(2));

    for (name, sig) in [("int", "INT"), ("term", "TERM")] {
        env.signal(name, sig);
        let st = env
            .wait_exit(name, Duration::from_secs(60))
            .unwrap_or_else(|| panic!("{name} ignored SIG{sig}\n{}", logs(&env, &all)));
        let log = env.log(name);
        no_panic(&log);
        assert_eq!(st.code(), Some(0), "exit status after SIG{sig}\n{log}");
        let bag = dir.join(format!("{name}.bag"));
        assert!(bag.exists(), "{name}.bag\n{log}");
        assert!(!dir.join(format!("{name}.bag.active")).exists(), "no {name}.bag.active left");
        let info = rbag_info(&env, &bag);
        assert!(info.contains("/chatter"), "{info}");
        let msgs = strings_of(&read_all(&bag), "/chatter");
        assert!(!msgs.is_empty(), "{name}.bag has /chatter messages\n{log}");
        for (i, m) in msgs.iter().enumerate() {
            assert_eq!(m, &talk("/chatter", i, 0), "{name}.bag: message {i} in order, none lost");
        }
        assert!(log.contains(&format!("/chatter: {} message(s)", msgs.len())), "the summary counts them\n{log}");
        if rbag_testkit::rosbag_python(T).is_some() {
            let v = read_with_rosbag(&env, &bag);
            assert_eq!(rosbag_msgs(&v)["/chatter"].len(), msgs.len());
        }
    }
}

/// SIGKILL leaves NAME.bag.active; `rbag reindex` repairs it into NAME.bag, which holds a prefix
/// of what was published, uncorrupted, losing at most the open chunk (--chunksize 1 KB).
#[test]
fn sigkill_loses_at_most_the_open_chunk_after_reindex() {
    sigkill_then_reindex("sigkill_loses_at_most_the_open_chunk_after_reindex", &[]);
}

/// The same with `--direct-io=require` (and bz2 chunks, compressed on workers): closed chunks
/// are padded to whole blocks and written with O_DIRECT, so they are on disk when the recorder
/// dies.
#[test]
fn sigkill_with_direct_io_loses_at_most_the_open_chunk_after_reindex() {
    sigkill_then_reindex(
        "sigkill_with_direct_io_loses_at_most_the_open_chunk_after_reindex",
        &["--direct-io=require", "--bz2", "--threads", "2"],
    );
}

fn sigkill_then_reindex(test: &str, extra: &[&str]) {
    let Some(mut env) = Ros1Env::new(test) else { return };
    env.start_rosmaster();
    let dir = env.home.path().to_path_buf();
    let all = ["talker", "rbag"];
    const N: usize = 300;
    const PAD: usize = 100;
    let mut rec = record(&env, &[&"/chatter", &"--chunksize", &"1", &"-O", &"killed"]);
    rec.args(extra);
    env.spawn("rbag", rec);
    let talker = python(&env, "record_talker.py", &[&"/chatter", &N.to_string(), &"100", &"1", &PAD.to_string()]);
    env.spawn("talker", talker);
    wait_for(&env, "talker", "DONE", &all);
    // Every message has long crossed loopback and left the queue when the recorder dies.
    std::thread::sleep(Duration::from_secs(3));
    env.kill("rbag");

    let active = dir.join("killed.bag.active");
    let bag = dir.join("killed.bag");
    assert!(active.exists(), "SIGKILL leaves killed.bag.active\n{}", env.log("rbag"));
    assert!(!bag.exists());
    let mut reindex = rbag(&env);
    reindex.arg("reindex").arg(&active);
    let out = reindex.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0) | Some(3)), "rbag reindex: {:?}\n{err}", out.status);
    no_panic(&err);
    assert!(bag.exists(), "reindex wrote killed.bag: {err}");

    let msgs = strings_of(&read_all(&bag), "/chatter");
    for (i, m) in msgs.iter().enumerate() {
        assert_eq!(m, &talk("/chatter", i, PAD), "recovered message {i}: in order, intact");
    }
    // Each message record is larger than its payload, so the open chunk (< 1 KB of records)
    // holds fewer than 1024 / payload messages.
    let payload = 4 + talk("/chatter", N - 1, PAD).len();
    let open_chunk = 1024 / payload + 1;
    eprintln!("recovered {} of {N} (the open chunk holds at most {open_chunk})", msgs.len());
    assert!(msgs.len() <= N);
    assert!(
        msgs.len() + open_chunk >= N,
        "recovered {} of {N}: more than the open chunk ({open_chunk} messages) was lost\n{err}",
        msgs.len()
    );
    let info = rbag_info(&env, &bag);
    assert!(info.contains(&format!("/chatter {} msgs", msgs.len())), "{info}");
    if rbag_testkit::rosbag_python(test).is_some() {
        let v = read_with_rosbag(&env, &bag);
        assert_eq!(v["decoded"].as_u64(), Some(msgs.len() as u64), "genpy reads the repaired bag");
    }
}

/// A small ext4 filesystem on a loop device (tmpfs handles O_DIRECT and ENOSPC differently),
/// unmounted and removed on drop. `None` (a skip, or a failure under CI) without root or loop
/// devices.
struct LoopFs {
    mount: PathBuf,
    image: PathBuf,
}

impl LoopFs {
    fn new(test: &str, dir: &Path, mib: u64) -> Option<LoopFs> {
        let image = dir.join("fs.img");
        let mount = dir.join("mnt");
        std::fs::create_dir_all(&mount).unwrap();
        std::fs::File::create(&image).unwrap().set_len(mib << 20).unwrap();
        let ok = |c: &mut Command| c.output().is_ok_and(|o| o.status.success());
        if !ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image))
            || !ok(Command::new("mount").args(["-o", "loop"]).arg(&image).arg(&mount))
        {
            let why = "cannot make and loop-mount an ext4 image (needs root, mkfs.ext4 and loop devices)";
            assert!(std::env::var("CI").is_err(), "{test}: {why}");
            rbag_testkit::skip(test, why);
            return None;
        }
        Some(LoopFs { mount, image })
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).output();
        let _ = std::fs::remove_file(&self.image);
    }
}

/// A full filesystem during a `--direct-io` recording: the recorder stops with a clear error
/// naming the file and the cause, and the bag it leaves reindexes into the messages of its
/// closed chunks, intact and in order.
#[test]
fn a_full_filesystem_during_a_direct_io_recording_is_a_clear_error_and_the_bag_reindexes() {
    const T: &str = "a_full_filesystem_during_a_direct_io_recording_is_a_clear_error_and_the_bag_reindexes";
    let Some(mut env) = Ros1Env::new(T) else { return };
    let Some(fs) = LoopFs::new(T, env.home.path(), 8) else { return };
    env.start_rosmaster();
    let all = ["talker", "rbag"];
    // 400 messages of 40 KB: 16 MB, twice what the filesystem holds.
    const N: usize = 400;
    const PAD: usize = 40_000;
    let out = fs.mount.join("full");
    // -L 0: no free-space guard, so the disk really fills.
    let mut rec = rbag(&env);
    rec.args(["record", "--ros1", "-L", "0", "/chatter", "--direct-io=require", "--chunksize", "256", "-O"]).arg(&out);
    env.spawn("rbag", rec);
    let talker = python(&env, "record_talker.py", &[&"/chatter", &N.to_string(), &"200", &"1", &PAD.to_string()]);
    env.spawn("talker", talker);
    wait_for(&env, "talker", "DONE", &all);
    let status = env.wait_exit("rbag", LONG);
    let log = env.log("rbag");
    no_panic(&log);
    assert!(status.is_some_and(|s| s.code() == Some(1)), "the recorder fails: {status:?}\n{log}");
    assert!(log.contains("full.bag.active") && log.contains("No space left"), "names the file and the cause: {log}");

    let active = fs.mount.join("full.bag.active");
    assert!(active.exists(), "{log}");
    let repaired = env.home.path().join("repaired.bag");
    let mut reindex = rbag(&env);
    reindex.arg("reindex").arg(&active).arg("-o").arg(&repaired);
    let o = reindex.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    no_panic(&err);
    assert!(matches!(o.status.code(), Some(0) | Some(3)), "rbag reindex: {:?}\n{err}", o.status);
    let msgs = strings_of(&read_all(&repaired), "/chatter");
    assert!(msgs.len() > 50 && msgs.len() < N, "recovered {} of {N}\n{err}", msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        assert_eq!(m, &talk("/chatter", i, PAD), "recovered message {i}: in order, intact");
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Bad peers
// ---------------------------------------------------------------------------------------------

/// Lines `TAG rest…` of a peer's log.
fn tagged<'a>(log: &'a str, tag: &str) -> Vec<&'a str> {
    log.lines().filter_map(|l| l.strip_prefix(tag).and_then(|r| r.strip_prefix(' '))).collect()
}

/// A publisher that sends a garbage header, ASCII noise, a huge frame length, a torn frame, an
/// `error=` refusal, a header without md5sum/definition, or a wrong MD5 (`record_bad_pub.py`):
/// each is logged naming its topic and dropped, /chatter from a good rospy talker is recorded
/// in full, every good frame the bad peer completed is in the bag, and rbag never panics.
#[test]
fn bad_publishers_are_logged_and_dropped_while_recording_goes_on() {
    const T: &str = "bad_publishers_are_logged_and_dropped_while_recording_goes_on";
    let Some(mut env) = Ros1Env::new(T) else { return };
    env.start_rosmaster();
    let dir = env.home.path().to_path_buf();
    let all = ["bad", "talker", "rbag"];
    env.spawn("bad", python(&env, "record_bad_pub.py", &[]));
    wait_for(&env, "bad", "READY", &all);
    let rec = record(&env, &[&"-a", &"--tcpnodelay", &"-O", &"bad.bag"]);
    env.spawn("rbag", rec);
    const N: usize = 100;
    let talker = python(&env, "record_talker.py", &[&"/chatter", &N.to_string(), &"50", &"1"]);
    env.spawn("talker", talker);
    wait_for(&env, "talker", "DONE", &all);

    // Every bad topic has been tried and logged; the torn-frame peer at least twice (rbag
    // reconnects to a publisher that is still listed).
    let bad_topics =
        ["/bad_garbage", "/bad_noise", "/bad_huge", "/bad_midframe", "/bad_refuse", "/bad_nodef", "/bad_wrongmd5"];
    let logged = |log: &str, topic: &str| log.lines().any(|l| l.contains("warning") && l.contains(topic));
    let ok = wait_until("rbag's warnings about each bad topic", LONG, || {
        let log = env.log("rbag");
        ["/bad_garbage", "/bad_noise", "/bad_huge", "/bad_midframe", "/bad_refuse", "/bad_nodef"]
            .iter()
            .all(|t| logged(&log, t))
            && tagged(&env.log("bad"), "SENT").iter().filter(|l| l.starts_with("/bad_midframe")).count() >= 2
            && tagged(&env.log("bad"), "SENT").iter().filter(|l| !l.starts_with("/bad_midframe")).count() >= 6
    });
    assert!(ok, "{}", logs(&env, &all));

    // The bad peer dies; what it completed has arrived long before the recorder stops.
    env.kill("bad");
    std::thread::sleep(Duration::from_secs(2));
    let st = interrupt(&mut env, "rbag", &all);
    let log = env.log("rbag");
    let bad_log = env.log("bad");
    no_panic(&log);
    assert!(matches!(st.code(), Some(0) | Some(3)), "exit status {st:?}\n{log}");

    let bag = dir.join("bad.bag");
    let msgs = read_all(&bag);
    // The good talker: all of it, in order.
    let chatter = strings_of(&msgs, "/chatter");
    assert_eq!(chatter, (0..N).map(|i| talk("/chatter", i, 0)).collect::<Vec<_>>(), "/chatter complete\n{log}");

    // Every good frame the bad peer finished sending is in the bag, in order, and nothing else.
    let sent = tagged(&bad_log, "SENT");
    for topic in ["/bad_midframe", "/bad_nodef", "/bad_wrongmd5"] {
        let want: Vec<String> =
            sent.iter().filter_map(|l| l.strip_prefix(topic).map(|h| h.trim().to_string())).collect();
        let got: Vec<String> = msgs.iter().filter(|(t, _, _)| t == topic).map(|(_, _, d)| hex(d)).collect();
        assert!(!want.is_empty(), "{topic}: the peer sent good frames\n{bad_log}");
        assert_eq!(got, want, "{topic}: the bag holds exactly the complete frames, in order\n{log}");
    }
    for topic in ["/bad_garbage", "/bad_noise", "/bad_huge", "/bad_refuse"] {
        assert!(msgs.iter().all(|(t, _, _)| t != topic), "{topic} has no messages");
        assert!(logged(&log, topic), "a warning names {topic}\n{log}");
    }
    // A refusal is final (as roscpp): one connection, no retries.
    let subheaders = tagged(&bad_log, "SUBHEADER");
    let refused = subheaders.iter().filter(|h| h.contains("\"topic\": \"/bad_refuse\"")).count();
    assert_eq!(refused, 1, "rbag does not retry a publisher that refused it\n{bad_log}");
    // rbag subscribes like rosbag record: type=* md5sum=*, and --tcpnodelay asks for it.
    for h in &subheaders {
        let h: BTreeMap<String, String> = serde_json::from_str(h).unwrap();
        assert_eq!(h.get("md5sum").map(String::as_str), Some("*"), "{h:?}");
        assert_eq!(h.get("type").map(String::as_str), Some("*"), "{h:?}");
        assert_eq!(h.get("tcp_nodelay").map(String::as_str), Some("1"), "--tcpnodelay: {h:?}");
        assert!(h.get("callerid").is_some_and(|c| c.starts_with("/rbag_record_")), "{h:?}");
    }

    // The bag stores what the publisher claims: a wrong MD5 is kept; a missing one and the
    // missing definition are filled from the bundled std_msgs/String, with a warning.
    let r = rbag_storage::open(&bag).unwrap();
    let conn = |topic: &str| {
        r.connections().iter().find(|c| c.topic == topic).cloned().unwrap_or_else(|| panic!("a {topic} connection"))
    };
    let wrong = conn("/bad_wrongmd5");
    assert_eq!(wrong.metadata["md5sum"], "0123456789abcdef0123456789abcdef");
    assert_eq!(wrong.message_type, "std_msgs/String");
    assert_eq!(wrong.definition, "string data\n");
    // A publisher that reconnects with the same header keeps one connection (rosbag keys
    // connections by header).
    let midframe_conns = r.connections().iter().filter(|c| c.topic == "/bad_midframe").count();
    assert_eq!(
        midframe_conns,
        1,
        "{} reconnections, one connection",
        tagged(&bad_log, "SENT").iter().filter(|l| l.starts_with("/bad_midframe")).count()
    );
    let nodef = conn("/bad_nodef");
    assert_eq!(nodef.metadata["md5sum"], STRING_MD5);
    assert!(nodef.definition.contains("string data"), "{nodef:?}");
    let info = rbag_info(&env, &bag);
    assert!(info.contains("/chatter") && info.contains("/bad_wrongmd5"), "{info}");
    for t in bad_topics {
        assert!(log.contains(t), "rbag's log names {t}");
    }
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

// ---------------------------------------------------------------------------------------------
// 4. Flags end to end
// ---------------------------------------------------------------------------------------------

/// The tick numbers of `record_talker.py` messages on `topic`, checked to be consecutive (none
/// lost, none repeated, in order).
fn ticks(msgs: &[(String, u64, Vec<u8>)], topic: &str) -> Vec<usize> {
    let v: Vec<usize> = strings_of(msgs, topic)
        .iter()
        .map(|s| {
            s.strip_prefix(topic)
                .and_then(|r| r.trim().split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{s:?}"))
        })
        .collect();
    for w in v.windows(2) {
        assert_eq!(w[1], w[0] + 1, "{topic}: consecutive ticks {v:?}");
    }
    v
}

fn topics_of(msgs: &[(String, u64, Vec<u8>)]) -> BTreeSet<String> {
    msgs.iter().map(|(t, _, _)| t.clone()).filter(|t| !infrastructure(t)).collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Topic selection and self-stopping, several recorders on one graph: `-e` with `-x` and a
/// `__name:=` remap; explicit topics (one through a `chatter:=` remap) with `-l`, `-q`, `-b 0`
/// and a `-x` that explicit names override; `--node` with `--duration`; and `-l` over an
/// explicit topic that only appears after the others have their N messages.
#[test]
fn selects_topics_and_stops_by_itself() {
    const T: &str = "selects_topics_and_stops_by_itself";
    let Some(mut env) = Ros1Env::new(T) else { return };
    env.start_rosmaster();
    let dir = env.home.path().to_path_buf();
    let all = ["talker", "listener", "sel", "lim", "node", "limlate", "talker2"];
    env.spawn("talker", python(&env, "record_talker.py", &[&"/foo/x,/foo/y,/foo/skip,/bar", &"0", &"20", &"0"]));
    env.spawn("listener", python(&env, "record_listener.py", &[&"listener", &"/foo/y,/bar"]));
    wait_for(&env, "talker", "SUBSCRIBED", &all);
    wait_for(&env, "listener", "READY", &all);
    wait_subscribed(&env, "/bar", "/listener", &all);

    let sel = record(&env, &[&"-e", &"/foo/.*", &"-x", &"/foo/skip", &"-O", &"sel.bag", &"__name:=myrec"]);
    let lim = record(
        &env,
        &[&"-l", &"5", &"-q", &"-b", &"0", &"-x", &"/bar", &"/bar", &"chatter", &"chatter:=/foo/x", &"-O", &"lim.bag"],
    );
    let node = record(&env, &[&"--node", &"/listener", &"--duration", &"2", &"-O", &"node.bag"]);
    let limlate = record(&env, &[&"-l", &"3", &"/bar", &"/appears_later", &"-O", &"limlate.bag"]);
    env.spawn("sel", sel);
    env.spawn("lim", lim);
    env.spawn("node", node);
    env.spawn("limlate", limlate);

    // -l and --duration end the recording by themselves.
    for name in ["lim", "node"] {
        let st =
            env.wait_exit(name, LONG).unwrap_or_else(|| panic!("{name} did not stop by itself\n{}", logs(&env, &all)));
        assert_eq!(st.code(), Some(0), "{name}\n{}", env.log(name));
        no_panic(&env.log(name));
    }
    let lim_msgs = read_all(&dir.join("lim.bag"));
    assert_eq!(
        topics_of(&lim_msgs),
        set(&["/bar", "/foo/x"]),
        "explicit topics (chatter remapped to /foo/x); -x does not remove named ones"
    );
    for t in ["/bar", "/foo/x"] {
        assert_eq!(ticks(&lim_msgs, t).len(), 5, "-l 5 on {t}");
    }
    let lim_log = env.log("lim");
    assert!(!lim_log.contains("Subscribing") && !lim_log.contains("Recording to"), "-q prints no progress:\n{lim_log}");

    let node_msgs = read_all(&dir.join("node.bag"));
    assert_eq!(topics_of(&node_msgs), set(&["/bar", "/foo/y"]), "--node /listener: what it subscribes to");
    for t in ["/bar", "/foo/y"] {
        assert!(!ticks(&node_msgs, t).is_empty());
    }
    let times: Vec<u64> = node_msgs.iter().map(|m| m.1).collect();
    let span = times.iter().max().unwrap() - times.iter().min().unwrap();
    assert!(span <= 2_000_000_000, "--duration 2 keeps at most 2 s of messages, got {span} ns");

    // -l with an explicit topic that has no publisher yet: rosbag keeps recording until every
    // named topic has its N messages.
    assert!(
        env.wait_exit("limlate", Duration::from_secs(2)).is_none(),
        "-l 3 stopped before /appears_later had any message\n{}",
        env.log("limlate")
    );
    env.spawn("talker2", python(&env, "record_talker.py", &[&"/appears_later", &"0", &"20", &"1"]));
    let st = env
        .wait_exit("limlate", LONG)
        .unwrap_or_else(|| panic!("limlate did not stop by itself\n{}", logs(&env, &all)));
    assert_eq!(st.code(), Some(0), "{}", env.log("limlate"));
    let late_msgs = read_all(&dir.join("limlate.bag"));
    assert_eq!(topics_of(&late_msgs), set(&["/bar", "/appears_later"]));
    assert_eq!(ticks(&late_msgs, "/bar").len(), 3);
    assert_eq!(ticks(&late_msgs, "/appears_later").len(), 3);

    // __name:=myrec names the node in the graph.
    wait_subscribed(&env, "/foo/x", "/myrec", &all);
    let mut rosnode = env.command("/usr/bin/rosnode");
    rosnode.arg("list");
    let (ok, out, err) = env.run(rosnode, LONG);
    assert!(ok && out.lines().any(|l| l.trim() == "/myrec"), "rosnode list shows /myrec: {out}{err}");
    let subs: BTreeSet<String> = ["/foo/x", "/foo/y", "/foo/skip", "/bar"]
        .iter()
        .filter(|t| subscribers(&env, t).contains(&"/myrec".to_string()))
        .map(|t| t.to_string())
        .collect();
    assert_eq!(subs, set(&["/foo/x", "/foo/y"]), "-e /foo/.* -x /foo/skip");
    std::thread::sleep(Duration::from_secs(1));
    let st = interrupt(&mut env, "sel", &all);
    assert_eq!(st.code(), Some(0));
    let sel_msgs = read_all(&dir.join("sel.bag"));
    assert_eq!(topics_of(&sel_msgs), set(&["/foo/x", "/foo/y"]));
    ticks(&sel_msgs, "/foo/x");
    ticks(&sel_msgs, "/foo/y");
}

/// `[(index, path)]` of `PREFIX_YYYY-MM-DD-HH-MM-SS_N.bag` files, by index.
fn split_files(dir: &Path, prefix: &str) -> Vec<(usize, PathBuf)> {
    let re = regex::Regex::new(&format!(r"^{prefix}_\d{{4}}-\d\d-\d\d-\d\d-\d\d-\d\d_(\d+)\.bag$")).unwrap();
    let mut v: Vec<(usize, PathBuf)> = files_in(dir, |n| n.starts_with(prefix))
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            let caps = re.captures(&name).unwrap_or_else(|| panic!("{name} is not named {prefix}_DATE_N.bag"));
            (caps[1].parse().unwrap(), p)
        })
        .collect();
    v.sort();
    v
}

/// The split indexes `rostopic echo /begin_write` printed (`data: "pre_DATE_N.bag"`).
fn echoed_splits(log: &str) -> Vec<usize> {
    log.lines()
        .filter_map(|l| l.strip_prefix("data: \"")?.strip_suffix(".bag\"")?.rsplit('_').next()?.parse().ok())
        .collect()
}

/// Files, compression and storage: `--split --size` with `--max-splits`, `--lz4`,
/// `--chunksize`, `--repeat-latched`, `--output-prefix` naming and `-p` (begin_write heard by
/// rostopic echo); `-j` with `--size` stopping by itself and `-o` naming; `-s mcap`; `--force`.
#[test]
fn splits_compresses_names_and_publishes_begin_write() {
    const T: &str = "splits_compresses_names_and_publishes_begin_write";
    let Some(mut env) = Ros1Env::new(T) else { return };
    env.start_rosmaster();
    let dir = env.home.path().to_path_buf();
    let all = ["blob", "map", "split", "bz", "mcap", "echo"];
    env.spawn("blob", python(&env, "record_talker.py", &[&"/blob", &"0", &"50", &"0", &"r1000"]));
    env.spawn("map", python(&env, "record_talker.py", &[&"/map", &"1", &"10", &"0", &"0", &"latch"]));
    wait_for(&env, "blob", "SUBSCRIBED", &all);
    wait_for(&env, "map", "DONE", &all);

    let split = record(
        &env,
        &[
            &"/blob",
            &"/map",
            &"--split",
            &"--size",
            &"20KiB",
            &"--max-splits",
            &"2",
            &"--lz4",
            &"--chunksize",
            &"4",
            &"--repeat-latched",
            &"-p",
            &"--output-prefix",
            &"pre",
        ],
    );
    let bz = record(&env, &[&"/blob", &"-j", &"--chunksize", &"16", &"-o", &"jay", &"--size", &"30KiB"]);
    let mcap = record(&env, &[&"/blob", &"/map", &"-s", &"mcap", &"-o", &"m", &"--duration", &"3"]);
    env.spawn("split", split);
    env.spawn("bz", bz);
    env.spawn("mcap", mcap);

    // -p: begin_write carries each new file's name.
    let ok = wait_until("rbag advertising /begin_write", LONG, || {
        master(&env).system_state().is_ok_and(|s| {
            s.publishers.iter().any(|(t, n)| t == "/begin_write" && n.iter().any(|n| n.starts_with("/rbag_record_")))
        })
    });
    assert!(ok, "{}", logs(&env, &all));
    let mut echo = env.command("/usr/bin/rostopic");
    echo.args(["echo", "/begin_write"]);
    env.spawn("echo", echo);
    wait_for(&env, "echo", "data: ", &all);
    let first_heard = *echoed_splits(&env.log("echo")).first().unwrap();
    let until = format!("_{}.bag", (first_heard + 2).max(3));
    assert!(env.wait_log("split", &until, LONG), "split {until}\n{}", logs(&env, &all));

    // -j --size: stops by itself at the size, as rosbag without --split.
    let st = env
        .wait_exit("bz", LONG)
        .unwrap_or_else(|| panic!("--size without --split did not stop\n{}", logs(&env, &all)));
    assert_eq!(st.code(), Some(0), "{}", env.log("bz"));
    let jay = dir.join("jay.bag");
    let info = rbag_info(&env, &jay);
    assert!(info.contains("compression:  bz2"), "{info}");
    let jay_msgs = read_all(&jay);
    assert!(ticks(&jay_msgs, "/blob").len() >= 20, "at least 30 KiB of 1 KB messages");
    // Compressed files are measured on disk every 64 KiB written (rbag-transport's
    // record/file.rs): the stop comes within that, the open chunk and the index.
    let len = std::fs::metadata(&jay).unwrap().len();
    assert!(len <= (30 + 64 + 16 + 16) << 10, "--size 30KiB stopped at {len} bytes");
    let st = env.wait_exit("mcap", LONG).unwrap_or_else(|| panic!("--duration 3 did not stop\n{}", logs(&env, &all)));
    assert_eq!(st.code(), Some(0), "{}", env.log("mcap"));

    let st = interrupt(&mut env, "split", &all);
    let log = env.log("split");
    no_panic(&log);
    assert_eq!(st.code(), Some(0), "{log}");
    assert!(files_in(&dir, |n| n.ends_with(".active")).is_empty(), "no .active file left");
    let splits = split_files(&dir, "pre");
    let opened = log.matches("Recording to").count();
    assert!(opened >= 4, "{log}");
    assert_eq!(splits.len(), 3, "--max-splits 2: two closed splits and the last one\n{log}");
    let indexes: Vec<usize> = splits.iter().map(|(i, _)| *i).collect();
    assert_eq!(indexes, [opened - 3, opened - 2, opened - 1], "the newest splits are kept\n{log}");
    let mut last_tick = None;
    for (i, path) in &splits[..2] {
        let len = std::fs::metadata(path).unwrap().len();
        assert!(len <= (20 + 64 + 4 + 16) << 10, "--size 20KiB: split {i} has {len} bytes");
    }
    for (i, path) in &splits {
        let info = rbag_info(&env, path);
        assert!(info.contains("compression:  lz4"), "split {i}: {info}");
        let msgs = read_all(path);
        assert_eq!(strings_of(&msgs, "/map"), [talk("/map", 0, 0)], "--repeat-latched: /map opens split {i}");
        assert_eq!(msgs[0].0, "/map", "the latched message comes first in split {i}");
        let t = ticks(&msgs, "/blob");
        if let Some(prev) = last_tick {
            assert_eq!(t[0], prev + 1, "split {i} goes on where the previous one ended");
        }
        last_tick = t.last().copied();
    }
    // rostopic echo joined after a split opened: it hears every later one, by name.
    let echoed = env.log("echo");
    let heard = echoed_splits(&echoed);
    assert_eq!(heard, (first_heard..first_heard + heard.len()).collect::<Vec<_>>(), "{echoed}");
    assert!(heard.contains(&(opened - 2)), "begin_write for split {}: {echoed}", opened - 2);
    let (i, p) = &splits[1];
    let name = p.file_name().unwrap().to_str().unwrap();
    assert!(echoed.contains(&format!("data: \"{name}\"")), "begin_write carries split {i}'s name: {echoed}");

    // -s mcap: MCAP with ros1 messages, read by rbag info and rbag-storage.
    let m = dir.join("m.mcap");
    let info = rbag_info(&env, &m);
    assert!(info.contains("mcap") && info.contains("/blob"), "{info}");
    let r = rbag_storage::open(&m).unwrap();
    for c in r.connections() {
        assert_eq!(c.encoding, "ros1", "{c:?}");
    }
    let msgs = read_all(&m);
    assert!(!ticks(&msgs, "/blob").is_empty());
    assert_eq!(strings_of(&msgs, "/map"), [talk("/map", 0, 0)], "the latched /map");
    let venv = rbag_testkit::repo_root().join(".peers/venv/bin/python");
    if venv.exists() {
        let script = "import sys, json\nfrom mcap.reader import make_reader\nr = make_reader(open(sys.argv[1], 'rb'))\nn = 0\nenc = set()\nfor schema, channel, message in r.iter_messages():\n    n += 1\n    enc.add((schema.encoding, channel.message_encoding))\nprint(json.dumps({'n': n, 'enc': sorted(enc)}))\n";
        let mut c = Command::new(&venv);
        c.args(["-c", script]).arg(&m);
        let (ok, out, err) = env.run(c, LONG);
        assert!(ok, "the mcap library reads m.mcap: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["n"].as_u64(), Some(msgs.len() as u64), "{out}");
        assert_eq!(v["enc"], serde_json::json!([["ros1msg", "ros1"]]), "{out}");
    }

    // --force: an existing output is refused, then replaced.
    std::fs::write(dir.join("existing.bag"), b"not a bag").unwrap();
    let (ok, out, err) = env.run(record(&env, &[&"/blob", &"-o", &"existing.bag", &"-l", &"2"]), LONG);
    assert!(!ok && err.contains("existing.bag") && err.contains("--force"), "refuses to overwrite: {out}{err}");
    assert_eq!(std::fs::read(dir.join("existing.bag")).unwrap(), b"not a bag");
    // --force replaces only a bag (issue 13): a file that is not one stays.
    let (ok, out, err) = env.run(record(&env, &[&"/blob", &"-o", &"existing.bag", &"-l", &"2", &"--force"]), LONG);
    assert!(
        !ok && err.contains("existing.bag") && err.contains("not a bag"),
        "--force keeps a file that is not a bag: {out}{err}"
    );
    assert_eq!(std::fs::read(dir.join("existing.bag")).unwrap(), b"not a bag");
    std::fs::copy(dir.join("m.mcap"), dir.join("existing.bag")).unwrap();
    let (ok, out, err) = env.run(record(&env, &[&"/blob", &"-o", &"existing.bag", &"-l", &"2", &"--force"]), LONG);
    assert!(ok, "--force: {out}{err}");
    assert_eq!(ticks(&read_all(&dir.join("existing.bag")), "/blob").len(), 2);
}

/// The payload bytes of every message.
fn payload_bytes(msgs: &[(String, u64, Vec<u8>)]) -> usize {
    msgs.iter().map(|m| m.2.len()).sum()
}

/// `--snapshot`: nothing is written until SIGUSR1 or a message on `--snapshot-topic`, then the
/// ring (the last `--snapshot-duration`, or at most `--snapshot-size`) goes to a new bag and is
/// emptied.
#[test]
fn snapshot_writes_the_ring_on_sigusr1_and_on_a_trigger_topic() {
    const T: &str = "snapshot_writes_the_ring_on_sigusr1_and_on_a_trigger_topic";
    let Some(mut env) = Ros1Env::new(T) else { return };
    env.start_rosmaster();
    let dir = env.home.path().to_path_buf();
    let all = ["talker", "snap", "small"];
    const PAD: usize = 100;
    let snap = record(
        &env,
        &[
            &"--snapshot",
            &"--snapshot-duration",
            &"2",
            &"--snapshot-topic",
            &"/trigger",
            &"/snap_data",
            &"--output-prefix",
            &"snap",
        ],
    );
    let small =
        record(&env, &[&"--snapshot", &"--snapshot-size", &"2KiB", &"/snap_data", &"--output-prefix", &"small"]);
    env.spawn("snap", snap);
    env.spawn("small", small);
    env.spawn("talker", python(&env, "record_talker.py", &[&"/snap_data", &"0", &"20", &"2", &PAD.to_string()]));
    wait_for(&env, "talker", "SUBSCRIBED", &all);
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        files_in(&dir, |n| n.ends_with(".bag") || n.ends_with(".active")).is_empty(),
        "nothing written before a trigger"
    );

    env.signal("snap", "USR1");
    env.signal("small", "USR1");
    wait_for(&env, "snap", "snapshot written to", &all);
    wait_for(&env, "small", "snapshot written to", &all);
    let first = files_in(&dir, |n| n.starts_with("snap_") && n.ends_with(".bag"));
    assert_eq!(first.len(), 1, "{first:?}");
    let msgs = read_all(&first[0]);
    let t1 = ticks(&msgs, "/snap_data");
    assert!(t1[0] > 0, "the oldest messages left the 2 s ring: {t1:?}");
    let span = msgs.last().unwrap().1 - msgs[0].1;
    assert!(span <= 2_000_000_000, "--snapshot-duration 2: {span} ns");

    let small_bags = files_in(&dir, |n| n.starts_with("small_") && n.ends_with(".bag"));
    assert_eq!(small_bags.len(), 1);
    let small_msgs = read_all(&small_bags[0]);
    let ts = ticks(&small_msgs, "/snap_data");
    assert!(
        ts[0] > 0 && payload_bytes(&small_msgs) <= 2048,
        "--snapshot-size 2KiB: {} bytes, ticks {ts:?}",
        payload_bytes(&small_msgs)
    );

    // A message of any type on --snapshot-topic triggers the next one (a new second: a new name).
    std::thread::sleep(Duration::from_millis(1100));
    // Without `-1`, which exits 3 s after publishing, rostopic stays up with the message
    // latched: a slow connection still gets it.
    let mut trigger = env.command("/usr/bin/rostopic");
    trigger.args(["pub", "/trigger", "std_msgs/Empty", "{}"]);
    env.spawn("trigger", trigger);
    let ok = wait_until("a second snapshot", LONG, || env.log("snap").matches("snapshot written to").count() >= 2);
    env.kill("trigger");
    assert!(ok, "{}{}", logs(&env, &all), env.log("trigger"));
    let both = files_in(&dir, |n| n.starts_with("snap_") && n.ends_with(".bag"));
    assert_eq!(both.len(), 2, "{both:?}");
    let second = both.iter().find(|p| **p != first[0]).unwrap();
    let t2 = ticks(&read_all(second), "/snap_data");
    assert!(t2[0] > *t1.last().unwrap(), "the ring was emptied by the first snapshot: {t1:?} then {t2:?}");

    for name in ["snap", "small"] {
        let st = interrupt(&mut env, name, &all);
        no_panic(&env.log(name));
        assert_eq!(st.code(), Some(0), "{}", env.log(name));
    }
    assert_eq!(
        files_in(&dir, |n| n.ends_with(".bag") || n.ends_with(".active")).len(),
        3,
        "only the snapshots are written"
    );
}

/// Runs `cmd` with a timeout (a usage error must not start recording).
fn run_briefly(mut cmd: Command) -> (Option<i32>, String) {
    use std::process::Stdio;
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if let Ok(Some(_)) = child.try_wait() {
            let out = child.wait_with_output().unwrap();
            return (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    panic!("still running after 60 s: {}", String::from_utf8_lossy(&out.stderr));
}

/// Usage errors exit 2 before joining any graph: `--udp`, no topics, no middleware, bad
/// regexes, conflicting flags.
#[test]
fn usage_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    // A port where nothing listens: a usage error must not get as far as starting a master.
    let uri = format!("http://127.0.0.1:{}/", rbag_testkit::ros1::free_port());
    let cases: &[(&[&str], Option<&str>, &str)] = &[
        (&["--ros1", "--udp", "/x"], None, "--udp"),
        (&["--ros1"], None, "-a"),
        (&["--ros1", "-o", "x.bag"], None, "-a"),
        (&["/x"], None, "--ros1"),
        (&["/x"], Some("3"), "ROS_VERSION"),
        (&["--ros1", "-e", "(", "-o", "x"], None, "("),
        (&["--ros1", "-a", "-x", "[", "-o", "x"], None, "["),
        (&["--ros1", "-a", "-j", "--lz4"], None, "--lz4"),
        (&["--ros1", "-a", "-s", "mcap", "-j"], None, "bz2"),
        (&["--ros1", "-a", "-s", "sqlite3"], None, "sqlite3"),
        (&["--ros1", "-a", "--max-splits", "2"], None, "--split"),
        (&["--ros1", "-a", "--snapshot-topic", "/t"], None, "--snapshot"),
        (&["--ros1", "-a", "-o", "x", "--output-prefix", "y"], None, "--output-prefix"),
        (&["--ros1", "--ros2", "-a"], None, "--ros2"),
    ];
    for (args, ros_version, names) in cases {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
        c.current_dir(tmp.path()).env("ROS_MASTER_URI", &uri).env_remove("ROS_VERSION").arg("record").args(*args);
        if let Some(v) = ros_version {
            c.env("ROS_VERSION", v);
        }
        let (code, err) = run_briefly(c);
        assert_eq!(code, Some(2), "rbag record {args:?}: {err}");
        assert!(err.contains(names), "rbag record {args:?} names {names:?}: {err}");
        no_panic(&err);
        assert!(!err.contains("embedded master"), "{err}");
    }
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "nothing written");
}

/// With no master at ROS_MASTER_URI, rbag record starts an embedded one, says so, and Debian's
/// rostopic and rospy use it while rbag records.
#[test]
fn starts_an_embedded_master_when_none_runs() {
    const T: &str = "starts_an_embedded_master_when_none_runs";
    let Some(mut env) = Ros1Env::new(T) else { return };
    let dir = env.home.path().to_path_buf();
    let all = ["rbag", "talker"];
    let rec = record(&env, &[&"-a", &"-O", &"emb.bag"]);
    env.spawn("rbag", rec);
    wait_for(&env, "rbag", "started an embedded master", &all);
    env.wait_master(LONG);
    assert!(env.log("rbag").contains(&env.master_uri()), "it names the URI: {}", env.log("rbag"));
    // -L: a second recorder joins that master and refuses to start without 100 TB free.
    let mut greedy = rbag(&env);
    greedy.args(["record", "--ros1", "-a", "-L", "100000000", "-O", "nospace.bag"]);
    let (ok, out, err) = env.run(greedy, LONG);
    assert!(!ok && err.contains("free") && !err.contains("embedded"), "-L refuses: {out}{err}");
    assert!(!dir.join("nospace.bag").exists() && !dir.join("nospace.bag.active").exists());
    const N: usize = 40;
    env.spawn("talker", python(&env, "record_talker.py", &[&"/emb", &N.to_string(), &"20", &"1"]));
    let ok = wait_until("rostopic list showing /emb", LONG, || {
        let mut list = env.command("/usr/bin/rostopic");
        list.arg("list");
        let (ok, out, _) = env.run(list, LONG);
        ok && out.lines().any(|l| l.trim() == "/emb")
    });
    assert!(ok, "{}", logs(&env, &all));
    wait_for(&env, "talker", "DONE", &all);
    std::thread::sleep(Duration::from_secs(2));
    let st = interrupt(&mut env, "rbag", &all);
    no_panic(&env.log("rbag"));
    assert_eq!(st.code(), Some(0), "{}", env.log("rbag"));
    let msgs = read_all(&dir.join("emb.bag"));
    assert_eq!(ticks(&msgs, "/emb"), (0..N).collect::<Vec<_>>(), "every message, through the embedded master");
}
