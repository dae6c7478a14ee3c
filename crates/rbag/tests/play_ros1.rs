//! `rbag play --ros1` in a real ROS 1 graph: Debian's rosmaster, rospy subscribers
//! (`tests/peers/play_sub.py`, raw bytes through `rospy.AnyMsg`) and `rostopic echo` receive what
//! rbag plays from real bags, and Debian's rosbag says what the bags hold
//! (`tests/peers/play_expect.py`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rbag_storage::{Connection, Filter, Format};
use rbag_testkit::ros1::{free_port, Ros1Env};
use rbag_testkit::{corpus, digest, rosbag_python};
use serde_json::Value;

mod common;

const PEERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers");
/// How long anything may take on a loaded 2-core machine before a test gives up.
const LONG: Duration = Duration::from_secs(90);
const STRING_MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";

/// `rbag play --ros1` in this graph.
fn rbag_play(env: &Ros1Env) -> Command {
    let mut c = env.command(env!("CARGO_BIN_EXE_rbag"));
    c.env_remove("ROS_VERSION").args(["play", "--ros1"]);
    c
}

/// Runs `rbag play --ros1 ARGS` as process `name` to its end; (exit code, output).
fn play(env: &mut Ros1Env, name: &str, args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = rbag_play(env);
    cmd.args(args);
    env.spawn(name, cmd);
    let status = env
        .wait_exit(name, LONG)
        .unwrap_or_else(|| panic!("{name} did not finish within {LONG:?}:\n{}", env.log(name)));
    (status.code(), env.log(name))
}

/// Starts `rbag play --ros1 ARGS` as process `name` and returns at once.
fn play_bg(env: &mut Ros1Env, name: &str, args: &[&str]) {
    let mut cmd = rbag_play(env);
    cmd.args(args);
    env.spawn(name, cmd);
}

/// A running `play_sub.py`.
struct Sub {
    name: String,
    dir: PathBuf,
}

/// Starts `play_sub.py ARGS` as process `name` and waits until it is registered.
fn subscriber(env: &mut Ros1Env, name: &str, args: &[&str]) -> Sub {
    let dir = env.home.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = env.command("/usr/bin/python3");
    cmd.arg(format!("{PEERS}/play_sub.py")).arg(&dir).args(args);
    env.spawn(name, cmd);
    let sub = Sub { name: name.into(), dir };
    let start = Instant::now();
    while !sub.dir.join("ready").exists() {
        assert!(start.elapsed() < LONG, "{name} never got ready:\n{}", env.log(name));
        std::thread::sleep(Duration::from_millis(50));
    }
    sub
}

impl Sub {
    /// (messages received so far, topics with a publisher connection).
    fn state(&self) -> (usize, usize) {
        let s = std::fs::read_to_string(self.dir.join("count")).unwrap_or_default();
        let mut it = s.split_whitespace().map(|x| x.parse().unwrap_or(0));
        (it.next().unwrap_or(0), it.next().unwrap_or(0))
    }

    /// Waits until at least `n` messages arrived (or `timeout`); returns how many did.
    fn wait_count(&self, n: usize, timeout: Duration) -> usize {
        let start = Instant::now();
        while self.state().0 < n && start.elapsed() < timeout {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.state().0
    }

    /// Waits until `n` topics have a publisher connection.
    fn wait_connected(&self, env: &Ros1Env, n: usize) {
        let start = Instant::now();
        while self.state().1 < n {
            assert!(
                start.elapsed() < LONG,
                "{} never connected to {n} publisher(s):\n{}",
                self.name,
                env.log(&self.name)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for `n` messages, then a little longer for any extra, stops the subscriber and
    /// returns what it received: `{topic: {digests, wall, header, values, connected_at}}`.
    fn collect(&self, env: &mut Ros1Env, n: usize) -> Value {
        self.wait_count(n, LONG);
        std::thread::sleep(Duration::from_millis(300));
        self.finish(env)
    }

    fn finish(&self, env: &mut Ros1Env) -> Value {
        std::fs::write(self.dir.join("stop"), "").unwrap();
        let path = self.dir.join("received.json");
        let start = Instant::now();
        while !path.exists() {
            assert!(start.elapsed() < LONG, "{} wrote no received.json:\n{}", self.name, env.log(&self.name));
            std::thread::sleep(Duration::from_millis(50));
        }
        env.wait_exit(&self.name, Duration::from_secs(10));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().map(|x| x.as_str().unwrap_or_default().to_string()).collect()).unwrap_or_default()
}

/// Digests a subscriber received on `topic`.
fn got(received: &Value, topic: &str) -> Vec<String> {
    strings(&received[topic]["digests"])
}

/// Asserts two digest sequences are equal, saying where they first differ.
fn assert_same(what: &str, got: &[String], want: &[String]) {
    if got == want {
        return;
    }
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    panic!(
        "{what}: received {} message(s), expected {}; first difference at index {:?}",
        got.len(),
        want.len(),
        first.or(Some(got.len().min(want.len())))
    );
}

/// What Debian's rosbag reads from a ROS 1 bag (`play_expect.py`), or `None` after a skip.
fn expect_ros1(test: &str, bag: &Path) -> Option<Value> {
    let python = rosbag_python(test)?;
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(python);
    cmd.arg(format!("{PEERS}/play_expect.py")).arg(bag);
    rbag_testkit::ros_env(&mut cmd, home.path());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "play_expect.py {}: {}", bag.display(), String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn total(expect: &Value) -> usize {
    expect["topics"].as_object().unwrap().values().map(|t| t["digests"].as_array().unwrap().len()).sum()
}

/// The `--stats` line of a play log.
fn stats(log: &str) -> Value {
    let line =
        log.lines().find(|l| l.starts_with("{\"published\"")).unwrap_or_else(|| panic!("no --stats line:\n{log}"));
    serde_json::from_str(line).unwrap()
}

/// (log time, digest) of every message on `topic` of a bag, read with rbag_storage.
fn bag_messages(bag: &Path, topic: &str) -> Vec<(u64, String)> {
    let r = rbag_storage::open(bag).unwrap();
    let filter = Filter { topics: vec![topic.into()], ..Filter::default() };
    r.messages(&filter).unwrap().map(|m| m.unwrap()).map(|m| (m.log_time, digest(&m.data))).collect()
}

fn string_msg(s: &str) -> Vec<u8> {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

fn string_connection(topic: &str, latching: bool) -> Connection {
    let mut c = Connection {
        topic: topic.into(),
        message_type: "std_msgs/String".into(),
        encoding: "ros1".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    };
    c.metadata.insert("md5sum".into(), STRING_MD5.into());
    c.metadata.insert("callerid".into(), "/test_writer".into());
    if latching {
        c.metadata.insert("latching".into(), "1".into());
    }
    c
}

/// Writes a ROS 1 bag of std_msgs/String messages: (topic, log time, text).
fn string_bag(path: &Path, msgs: &[(&str, u64, String)]) {
    let mut w = rbag_storage::create(path, Format::Ros1, &Default::default()).unwrap();
    let mut ids = BTreeMap::new();
    for (topic, t, text) in msgs {
        let id = match ids.get(topic) {
            Some(id) => *id,
            None => {
                let id = w.add_connection(&string_connection(topic, false)).unwrap();
                ids.insert(*topic, id);
                id
            }
        };
        w.write(id, *t, *t, &string_msg(text)).unwrap();
    }
    w.finish().unwrap();
}

// ---------------------------------------------------------------------------------------------
// 1. Payloads identical and in order.

#[test]
fn corpus_bags_reach_rospy_byte_identical_in_order() {
    let test = "corpus_bags_reach_rospy_byte_identical_in_order";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    env.start_rosmaster();
    // (bag, how fast): lz4 chunks at 10x, bz2 chunks with no waiting, 75 small chunks at 10x.
    let runs: [(&str, &[&str]); 3] =
        [("multi_lz4.bag", &["-r", "10"]), ("multi_bz2.bag", &["--immediate"]), ("small_chunks.bag", &["-r", "10"])];
    for (k, (name, speed)) in runs.iter().enumerate() {
        let bag = dir.join(name);
        let Some(expect) = expect_ros1(test, &bag) else { return };
        let topics: Vec<&str> = expect["topics"].as_object().unwrap().keys().map(String::as_str).collect();
        let sub = subscriber(&mut env, &format!("sub{k}"), &topics);
        let mut args = vec!["--wait-for-subscribers", "--queue", "100000", "--stats"];
        args.extend_from_slice(speed);
        let bag_arg = bag.to_str().unwrap();
        args.push(bag_arg);
        let (code, log) = play(&mut env, &format!("play{k}"), &args);
        assert_eq!(code, Some(0), "{name}: rbag play failed:\n{log}");
        let n = total(&expect);
        let received = sub.collect(&mut env, n);
        for (topic, want) in expect["topics"].as_object().unwrap() {
            assert_same(&format!("{name} {topic}"), &got(&received, topic), &strings(&want["digests"]));
            let h = &received[topic]["header"];
            assert_eq!(h["type"], want["type"], "{name} {topic}: {h}");
            assert_eq!(h["md5sum"], want["md5sum"], "{name} {topic}: {h}");
            assert_eq!(h["latching"], want["latching"], "{name} {topic}: {h}");
            assert!(h["message_definition"].as_str().is_some_and(|d| !d.is_empty()), "{name} {topic}: {h}");
        }
        let s = stats(&log);
        assert_eq!(s["published"], n as u64, "{name}: {s}");
        assert_eq!(s["dropped"], 0, "{name}: {s}");
        // Immediate mode sends without a schedule, so no message is measured against one.
        let scheduled = if speed.contains(&"--immediate") { 0 } else { n as u64 };
        assert_eq!(s["lateness_count"], scheduled, "{name}: {s}");
        assert!(log.contains(&format!("Done: {n} message(s) published")), "{log}");
    }
    // The latched topic was in the bags.
    assert!(expect_ros1(test, &dir.join("multi_lz4.bag")).unwrap()["topics"]["/robot_description"]["latching"] == "1");
}

#[test]
fn rostopic_echo_receives_a_played_message() {
    let test = "rostopic_echo_receives_a_played_message";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    env.start_rosmaster();
    let bag = dir.join("multi_none.bag");
    let mut echo = env.command("/usr/bin/rostopic");
    echo.args(["echo", "-n", "1", "/imu"]);
    env.spawn("echo", echo);
    // rostopic echo is the only subscriber: waiting for it means it gets the first message.
    let (code, log) =
        play(&mut env, "play", &[bag.to_str().unwrap(), "--wait-for-subscribers", "-r", "5", "--topics", "/imu"]);
    assert_eq!(code, Some(0), "{log}");
    let status = env.wait_exit("echo", LONG).expect("rostopic echo -n 1 ends");
    let out = env.log("echo");
    assert!(status.success(), "{out}");
    // The bag's first /imu message, as rbag echo decodes it.
    let first = common::run(&[&"echo", &"--json", &"-n", &"1", &bag, &"/imu"]);
    let first: Value = serde_json::from_slice(&first.stdout).unwrap();
    let h = &first["message"]["header"];
    for line in [
        format!("seq: {}", h["seq"]),
        format!("secs: {}", h["stamp"]["secs"]),
        format!("nsecs: {}", h["stamp"]["nsecs"]),
        format!("frame_id: {}", h["frame_id"]),
        format!("z: {}", first["message"]["linear_acceleration"]["z"]),
    ] {
        assert!(out.contains(&line), "rostopic echo should print {line:?}:\n{out}");
    }
}

// ---------------------------------------------------------------------------------------------
// 2. rosbag2 bags as ROS 1 messages.

/// rbag echo's ROS 2 time fields named as ROS 1's (`sec`/`nanosec` → `secs`/`nsecs`).
fn ros1_names(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let k = match k.as_str() {
                        "sec" => "secs",
                        "nanosec" => "nsecs",
                        k => k,
                    };
                    (k.to_string(), ros1_names(x))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(ros1_names).collect()),
        x => x.clone(),
    }
}

/// What `rbag echo --json` prints for a bag, per topic in order, with ROS 1 time field names.
fn echo_values(bag: &Path) -> BTreeMap<String, Vec<Value>> {
    let echo = common::run(&[&"echo", &"--json", &bag]);
    assert!(echo.status.success(), "{}", common::stderr(&echo));
    let mut want: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&echo.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        want.entry(v["topic"].as_str().unwrap().to_string()).or_default().push(ros1_names(&v["message"]));
    }
    want
}

/// Compares a value genpy decoded with one rbag echo printed: bools as 0/1 (genpy gives fixed
/// bool arrays as integers), floats to float32 precision, and `byte` fields as 8-bit patterns
/// (ROS 2's byte is unsigned, ROS 1's signed: the bytes on the wire are the same).
fn assert_values_match(path: &str, got: &Value, want: &Value) {
    let num = |v: &Value| match v {
        Value::Bool(b) => Some(*b as i64 as f64),
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            let (gk, wk): (Vec<_>, Vec<_>) = (g.keys().collect(), w.keys().collect());
            assert_eq!(gk, wk, "{path}: fields");
            for (k, gv) in g {
                assert_values_match(&format!("{path}.{k}"), gv, &w[k]);
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(g.len(), w.len(), "{path}: length");
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                assert_values_match(&format!("{path}[{i}]"), gv, wv);
            }
        }
        (Value::String(g), Value::String(w)) => assert_eq!(g, w, "{path}"),
        (Value::Number(g), Value::Number(w)) if g.is_f64() || w.is_f64() => {
            let (g, w) = (g.as_f64().unwrap(), w.as_f64().unwrap());
            assert!((g - w).abs() <= 1e-6 * w.abs().max(1e-30), "{path}: {g} != {w}");
        }
        (Value::Number(g), Value::Number(w)) if path.contains("byte_value") => {
            assert_eq!(g.as_i64().map(|x| x & 0xff), w.as_i64().map(|x| x & 0xff), "{path}: {g} != {w} as bytes");
        }
        (g, w) if num(g).is_some() && num(w).is_some() && (g.is_boolean() || w.is_boolean()) => {
            assert_eq!(num(g), num(w), "{path}: {g} != {w}");
        }
        (g, w) => assert_eq!(g, w, "{path}"),
    }
}

#[test]
fn rosbag2_bags_reach_rospy_as_ros1_messages() {
    let test = "rosbag2_bags_reach_rospy_as_ros1_messages";
    let Some(dir) = corpus(test, "ros2") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    env.start_rosmaster();
    for (k, store) in ["sqlite3", "mcap"].into_iter().enumerate() {
        let bag = dir.join(store).join("talker");
        let want = echo_values(&bag);
        assert_eq!(want["/topic"].len(), 10);
        assert_eq!(want["/rosout"].len(), 10);

        let sub = subscriber(&mut env, &format!("sub{k}"), &["--decode", "/topic", "/rosout"]);
        // A second, typed subscriber: rostopic checks the MD5 sum of Debian's std_msgs/String.
        // It subscribes only once the topic is advertised: -d 3 gives it time to.
        let mut typed = env.command("/usr/bin/rostopic");
        typed.args(["echo", "-n", "3", "/topic"]);
        env.spawn(&format!("echo{k}"), typed);
        let (code, log) = play(
            &mut env,
            &format!("play{k}"),
            &[bag.to_str().unwrap(), "--wait-for-subscribers", "-d", "3", "-r", "2", "--topics", "/topic", "/rosout"],
        );
        assert_eq!(code, Some(0), "{store}: {log}");
        let received = sub.collect(&mut env, 20);
        for (topic, values) in &want {
            let r = &received[topic.as_str()];
            assert_eq!(r["values"].as_array().unwrap(), values, "{store} {topic}");
        }
        let h = &received["/topic"]["header"];
        assert_eq!((h["type"].as_str(), h["md5sum"].as_str()), (Some("std_msgs/String"), Some(STRING_MD5)), "{h}");
        let h = &received["/rosout"]["header"];
        assert_eq!(h["type"], "rcl_interfaces/Log", "{h}");
        assert!(h["message_definition"].as_str().unwrap().contains("time stamp"), "ROS 1 time in the definition: {h}");
        // /rosout was recorded transient-local: it is played latched.
        assert_eq!(h["latching"], "1", "{h}");

        assert!(
            env.wait_exit(&format!("echo{k}"), LONG).is_some_and(|s| s.success()),
            "{}",
            env.log(&format!("echo{k}"))
        );
        let out = env.log(&format!("echo{k}"));
        assert_eq!(out.matches("data: \"Hello, world! ").count(), 3, "{out}");
    }
}

#[test]
fn rosbag2_test_msgs_of_every_basic_type_reach_rospy() {
    let test = "rosbag2_test_msgs_of_every_basic_type_reach_rospy";
    let Some(dir) = corpus(test, "ros2") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    env.start_rosmaster();
    for (k, store) in ["sqlite3", "mcap"].into_iter().enumerate() {
        // test_msgs/BasicTypes and test_msgs/Arrays: every primitive, fixed arrays, nested,
        // empty (Constants) and defaulted messages; rbag echo decodes them the ROS 2 way.
        let bag = dir.join(store).join("cdr_test");
        let want = echo_values(&bag);
        assert_eq!((want["/test_topic"].len(), want["/array_topic"].len()), (3, 4));
        let sub = subscriber(&mut env, &format!("sub{k}"), &["--decode", "/test_topic", "/array_topic"]);
        let (code, log) = play(
            &mut env,
            &format!("play{k}"),
            &[bag.to_str().unwrap(), "--wait-for-subscribers", "--queue", "1000", "-r", "10"],
        );
        assert_eq!(code, Some(0), "{store}: {log}");
        let received = sub.collect(&mut env, 7);
        for (topic, values) in &want {
            let got = received[topic.as_str()]["values"].as_array().unwrap();
            assert_eq!(got.len(), values.len(), "{store} {topic}");
            for (i, (g, w)) in got.iter().zip(values).enumerate() {
                assert_values_match(&format!("{store} {topic}[{i}]"), g, w);
            }
        }
        let h = &received["/array_topic"]["header"];
        assert_eq!(h["type"], "test_msgs/Arrays", "{h}");
        let def = h["message_definition"].as_str().unwrap();
        assert!(def.contains("\nMSG: test_msgs/BasicTypes\n") && def.contains("uint64[3] uint64_values"), "{def}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Latching.

#[test]
fn latched_message_reaches_a_late_subscriber_with_keep_alive() {
    let test = "latched_message_reaches_a_late_subscriber_with_keep_alive";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    let bag = dir.join("multi_none.bag");
    let Some(expect) = expect_ros1(test, &bag) else { return };
    let latched = strings(&expect["topics"]["/robot_description"]["digests"]);
    assert_eq!(expect["topics"]["/robot_description"]["latching"], "1", "the corpus bag recorded a latched connection");
    let chatter = strings(&expect["topics"]["/chatter"]["digests"]);
    env.start_rosmaster();

    let early = subscriber(&mut env, "early", &["/robot_description", "/chatter"]);
    play_bg(
        &mut env,
        "play",
        &[
            bag.to_str().unwrap(),
            "-k",
            "--wait-for-subscribers",
            "--queue",
            "10000",
            "-r",
            "10",
            "--topics",
            "/robot_description",
            "/chatter",
        ],
    );
    // Everything was published once the early subscriber has it all.
    let received = early.collect(&mut env, 1 + chatter.len());
    assert_same("early /robot_description", &got(&received, "/robot_description"), &latched);
    assert_same("early /chatter", &got(&received, "/chatter"), &chatter);

    // Playback is over and rbag keeps running: a late subscriber still gets the latched message
    // (and only that: /chatter is not latched).
    assert!(env.wait_exit("play", Duration::from_millis(500)).is_none(), "-k keeps rbag running:\n{}", env.log("play"));
    let late = subscriber(&mut env, "late", &["/robot_description", "/chatter"]);
    late.wait_connected(&env, 2);
    let received = late.collect(&mut env, 1);
    assert_same("late /robot_description", &got(&received, "/robot_description"), &latched);
    assert_eq!(received["/robot_description"]["header"]["latching"], "1");
    assert_same("late /chatter", &got(&received, "/chatter"), &[]);

    let mut echo = env.command("/usr/bin/rostopic");
    echo.args(["echo", "-n", "1", "/robot_description"]);
    let (ok, out, err) = env.run(echo, LONG);
    assert!(ok && out.contains("data: \""), "rostopic echo of the latched topic: {out}{err}");

    let status = env.interrupt("play", LONG).expect("rbag play ends on SIGINT");
    assert_eq!(status.code(), Some(0), "{}", env.log("play"));
}

// ---------------------------------------------------------------------------------------------
// 4. /clock.

#[test]
fn clock_carries_bag_time_in_range_and_non_decreasing() {
    let test = "clock_carries_bag_time_in_range_and_non_decreasing";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    let bag = dir.join("small_chunks.bag");
    let Some(expect) = expect_ros1(test, &bag) else { return };
    env.start_rosmaster();
    let sub = subscriber(&mut env, "sub", &["--decode", "/clock", "/chatter", "/imu", "/tf"]);
    let (code, log) = play(
        &mut env,
        "play",
        &["--clock", "--wait-for-subscribers", "--queue", "100000", "-r", "2", bag.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{log}");
    let n = total(&expect);
    // At least one tick per message, plus the ticks between.
    let received = sub.collect(&mut env, 2 * n);
    let h = &received["/clock"]["header"];
    assert_eq!(
        (h["type"].as_str(), h["md5sum"].as_str()),
        (Some("rosgraph_msgs/Clock"), Some("a9c97c1d230cfc112e270351a944ee47")),
        "{h}"
    );
    let clock: Vec<u64> = received["/clock"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["clock"]["secs"].as_u64().unwrap() * 1_000_000_000 + v["clock"]["nsecs"].as_u64().unwrap())
        .collect();
    assert!(clock.len() > n, "{} clock messages for {n} bag messages", clock.len());
    let (start, end) = (expect["start"].as_u64().unwrap(), expect["end"].as_u64().unwrap());
    for w in clock.windows(2) {
        assert!(w[0] <= w[1], "/clock went back from {} to {}", w[0], w[1]);
    }
    assert!(
        clock.iter().all(|&c| (start..=end).contains(&c)),
        "clock outside [{start}, {end}]: {:?}..{:?}",
        clock.first(),
        clock.last()
    );
    // Each message's own time goes out on /clock before it: every message time from the first
    // tick this subscriber saw on is there, up to the bag's end.
    let seen: std::collections::BTreeSet<u64> = clock.iter().copied().collect();
    let first = clock[0];
    for (topic, t) in expect["topics"].as_object().unwrap() {
        for time in t["times"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).filter(|&x| x >= first) {
            assert!(seen.contains(&time), "{topic}: message time {time} never on /clock");
        }
        assert_same(topic, &got(&received, topic), &strings(&t["digests"]));
    }
    assert_eq!(*clock.last().unwrap(), end);
}

// ---------------------------------------------------------------------------------------------
// 5. Selecting, renaming, timing.

#[test]
fn topics_plays_only_those_topics() {
    let test = "topics_plays_only_those_topics";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    let bag = dir.join("small_chunks.bag");
    let Some(expect) = expect_ros1(test, &bag) else { return };
    env.start_rosmaster();
    let sub = subscriber(&mut env, "sub", &["/chatter", "/imu", "/tf"]);
    let (code, log) = play(
        &mut env,
        "play",
        &[bag.to_str().unwrap(), "--wait-for-subscribers", "--queue", "10000", "-r", "10", "--topics", "/imu", "/tf"],
    );
    assert_eq!(code, Some(0), "{log}");
    let want_imu = strings(&expect["topics"]["/imu"]["digests"]);
    let want_tf = strings(&expect["topics"]["/tf"]["digests"]);
    let received = sub.collect(&mut env, want_imu.len() + want_tf.len());
    assert_same("/imu", &got(&received, "/imu"), &want_imu);
    assert_same("/tf", &got(&received, "/tf"), &want_tf);
    assert_same("/chatter (not selected)", &got(&received, "/chatter"), &[]);
    assert!(received["/chatter"]["connected_at"].is_null(), "/chatter was not even advertised");
}

#[test]
fn remap_and_prefix_rename_the_published_topics() {
    let test = "remap_and_prefix_rename_the_published_topics";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    let bag = dir.join("small_chunks.bag");
    let Some(expect) = expect_ros1(test, &bag) else { return };
    let chatter = strings(&expect["topics"]["/chatter"]["digests"]);
    let tf = strings(&expect["topics"]["/tf"]["digests"]);
    let b = bag.to_str().unwrap();
    env.start_rosmaster();
    let cases: [(&[&str], &str, &str); 3] = [
        // A remapping argument among the bags.
        (&["/chatter:=/talk", b], "/talk", "/tf"),
        // -p prefixes every topic.
        (&["-p", "/pre", b], "/pre/chatter", "/pre/tf"),
        // Remapped first, then prefixed.
        (&["--prefix", "pre2", b, "/chatter:=/talk"], "/pre2/talk", "/pre2/tf"),
    ];
    for (k, (extra, chatter_out, tf_out)) in cases.into_iter().enumerate() {
        let mut topics = vec![chatter_out, tf_out, "/chatter", "/tf"];
        topics.sort();
        topics.dedup();
        let sub = subscriber(&mut env, &format!("sub{k}"), &topics);
        let mut args = vec!["--wait-for-subscribers", "--queue", "10000", "-r", "10"];
        args.extend_from_slice(extra);
        // --topics takes every argument after it, as rosbag's does: it comes last.
        args.extend(["--topics", "/chatter", "/tf"]);
        let (code, log) = play(&mut env, &format!("play{k}"), &args);
        assert_eq!(code, Some(0), "{log}");
        let received = sub.collect(&mut env, chatter.len() + tf.len());
        assert_same(&format!("{extra:?} {chatter_out}"), &got(&received, chatter_out), &chatter);
        assert_same(&format!("{extra:?} {tf_out}"), &got(&received, tf_out), &tf);
        if tf_out != "/tf" {
            assert_same(&format!("{extra:?} /tf"), &got(&received, "/tf"), &[]);
        }
        assert_same(&format!("{extra:?} /chatter"), &got(&received, "/chatter"), &[]);
        assert_eq!(received[chatter_out]["header"]["topic"], chatter_out);
    }
}

#[test]
fn start_and_duration_select_exactly_the_messages_in_range() {
    let test = "start_and_duration_select_exactly_the_messages_in_range";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    let bag = dir.join("small_chunks.bag");
    let Some(expect) = expect_ros1(test, &bag) else { return };
    let start = expect["start"].as_u64().unwrap();
    let chatter: Vec<(u64, String)> = expect["topics"]["/chatter"]["times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap())
        .zip(strings(&expect["topics"]["/chatter"]["digests"]))
        .collect();
    let b = bag.to_str().unwrap();
    env.start_rosmaster();
    // (flags, first, last bag time played, inclusive). The offset counts from the bag's first
    // message on any topic.
    let cases: [(&[&str], u64, u64); 3] = [
        (&["-s", "0.5", "-u", "0.8"], start + 500_000_000, start + 1_300_000_000),
        (&["--start", "1.5"], start + 1_500_000_000, u64::MAX),
        (&["--duration", "0.25"], start, start + 250_000_000),
    ];
    for (k, (flags, from, to)) in cases.into_iter().enumerate() {
        let want: Vec<String> =
            chatter.iter().filter(|(t, _)| (from..=to).contains(t)).map(|(_, d)| d.clone()).collect();
        assert!(!want.is_empty() && want.len() < chatter.len(), "{flags:?}");
        let sub = subscriber(&mut env, &format!("sub{k}"), &["/chatter"]);
        let mut args = vec![b, "--wait-for-subscribers", "--queue", "10000", "-r", "4"];
        args.extend_from_slice(flags);
        args.extend(["--topics", "/chatter"]);
        let (code, log) = play(&mut env, &format!("play{k}"), &args);
        assert_eq!(code, Some(0), "{log}");
        let received = sub.collect(&mut env, want.len());
        assert_same(&format!("{flags:?}"), &got(&received, "/chatter"), &want);
        assert!(log.contains(&format!("Done: {} message(s) published", want.len())), "{log}");
    }
}

#[test]
fn loop_repeats_the_bag_until_interrupted() {
    let test = "loop_repeats_the_bag_until_interrupted";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    let bag = dir.join("small_chunks.bag");
    let Some(expect) = expect_ros1(test, &bag) else { return };
    let tf = strings(&expect["topics"]["/tf"]["digests"]);
    env.start_rosmaster();
    let sub = subscriber(&mut env, "sub", &["/tf"]);
    play_bg(&mut env, "play", &[bag.to_str().unwrap(), "-l", "--wait-for-subscribers", "-r", "4", "--topics", "/tf"]);
    let n = sub.wait_count(2 * tf.len() + 5, LONG);
    assert!(n > 2 * tf.len(), "only {n} /tf messages: {}", env.log("play"));
    let status = env.interrupt("play", LONG).expect("rbag play ends on SIGINT");
    let log = env.log("play");
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("loop(s)"), "{log}");
    let received = sub.collect(&mut env, 0);
    let got = got(&received, "/tf");
    // Pass after pass, the same sequence (the last pass cut short by the interrupt).
    let want: Vec<String> = tf.iter().cycle().take(got.len()).cloned().collect();
    assert!(got.len() > 2 * tf.len());
    assert_same("/tf looped", &got, &want);
}

#[test]
fn pause_publishes_nothing_and_sigint_exits_0() {
    let test = "pause_publishes_nothing_and_sigint_exits_0";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    let bag = dir.join("small_chunks.bag");
    env.start_rosmaster();
    let sub = subscriber(&mut env, "sub", &["/chatter"]);
    play_bg(&mut env, "play", &[bag.to_str().unwrap(), "--pause", "-d", "0", "--topics", "/chatter"]);
    sub.wait_connected(&env, 1);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(sub.state().0, 0, "paused playback published:\n{}", env.log("play"));
    assert!(
        env.wait_exit("play", Duration::from_millis(100)).is_none(),
        "paused rbag play ended:\n{}",
        env.log("play")
    );
    let status = env.interrupt("play", LONG).expect("rbag play ends on SIGINT");
    let log = env.log("play");
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("Done: 0 message(s) published"), "{log}");
    let received = sub.finish(&mut env);
    assert_same("/chatter", &got(&received, "/chatter"), &[]);
}

/// A process this test started itself (not through Ros1Env), killed on drop.
struct Owned(std::process::Child);

impl Drop for Owned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn keys_on_a_terminal_step_and_resume_a_paused_playback() {
    use std::io::Write;
    let test = "keys_on_a_terminal_step_and_resume_a_paused_playback";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    if !Path::new("/usr/bin/script").exists() {
        rbag_testkit::skip(test, "util-linux's script (a terminal for the keys) is not installed");
        return;
    }
    let bag = dir.join("small_chunks.bag");
    let Some(expect) = expect_ros1(test, &bag) else { return };
    let tf = strings(&expect["topics"]["/tf"]["digests"]);
    env.start_rosmaster();
    let sub = subscriber(&mut env, "sub", &["/tf"]);
    // script(1) runs rbag on a pseudo-terminal and forwards what we write to it as keys.
    let log = env.log_path("play");
    let inner = format!(
        "{} play --ros1 --pause --wait-for-subscribers {} --topics /tf",
        env!("CARGO_BIN_EXE_rbag"),
        bag.display()
    );
    let mut cmd = env.command("/usr/bin/script");
    cmd.args(["-qfec", &inner, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::process::Stdio::null());
    let mut play = Owned(cmd.spawn().unwrap());
    let mut keys = play.0.stdin.take().unwrap();
    let mut press = |k: &[u8]| {
        keys.write_all(k).unwrap();
        keys.flush().unwrap();
    };
    sub.wait_connected(&env, 1);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(sub.state().0, 0, "paused, nothing is published");
    // `s` steps one message at a time.
    for n in 1..=2 {
        press(b"s");
        assert_eq!(sub.wait_count(n, LONG), n, "after {n} step(s)");
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(sub.state().0, n, "a step sends one message");
    }
    // Up raises the rate (still paused: the new state is printed).
    press(b"\x1b[A");
    let start = Instant::now();
    while !std::fs::read_to_string(&log).unwrap_or_default().contains("[PAUSED ]") && start.elapsed() < LONG {
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    let rate: f64 = out
        .lines()
        .find(|l| l.contains("[PAUSED ]"))
        .and_then(|l| l.split("rate").nth(1))
        .and_then(|r| r.trim().parse().ok())
        .unwrap_or_else(|| panic!("no paused state line after Up:\n{out}"));
    assert!(rate > 1.0, "Up raised the rate to {rate}");
    // Space resumes: the rest follows, in order.
    press(b" ");
    let received = sub.collect(&mut env, tf.len());
    assert_same("/tf", &got(&received, "/tf"), &tf);
    let start = Instant::now();
    let status = loop {
        if let Some(st) = play.0.try_wait().unwrap() {
            break st;
        }
        assert!(
            start.elapsed() < LONG,
            "rbag play did not end:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(status.code(), Some(0), "{out}");
    assert!(out.contains("[RUNNING]") && out.contains(&format!("Done: {} message(s) published", tf.len())), "{out}");
}

#[test]
fn delay_waits_after_subscribers_connect() {
    let test = "delay_waits_after_subscribers_connect";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    let bag = dir.join("small_chunks.bag");
    let Some(expect) = expect_ros1(test, &bag) else { return };
    let tf = strings(&expect["topics"]["/tf"]["digests"]);
    env.start_rosmaster();
    let sub = subscriber(&mut env, "sub", &["/tf"]);
    let (code, log) = play(
        &mut env,
        "play",
        &[bag.to_str().unwrap(), "-d", "2", "--wait-for-subscribers", "-r", "10", "--topics", "/tf"],
    );
    assert_eq!(code, Some(0), "{log}");
    let received = sub.collect(&mut env, tf.len());
    assert_same("/tf", &got(&received, "/tf"), &tf);
    let connected = received["/tf"]["connected_at"].as_f64().unwrap();
    let first = received["/tf"]["wall"][0].as_f64().unwrap();
    // A lower bound only (a slow machine makes it later, never earlier); the default delay is
    // 0.2 s, so 1.5 s tells the 2 s delay apart with room for polling and scheduling.
    assert!(first - connected >= 1.5, "first message {:.3} s after the connection", first - connected);
}

#[test]
fn small_queue_with_a_stalled_subscriber_drops_and_exits_3() {
    let test = "small_queue_with_a_stalled_subscriber_drops_and_exits_3";
    let Some(mut env) = Ros1Env::new(test) else { return };
    // 96 MiB of 1 MiB strings: more than the loopback socket buffers hold.
    let bag = env.home.path().join("big.bag");
    let big = "x".repeat(1 << 20);
    let msgs: Vec<(&str, u64, String)> =
        (0..96u64).map(|i| ("/big", common::START + i * 1_000_000, format!("{i} {big}"))).collect();
    string_bag(&bag, &msgs);
    env.start_rosmaster();
    let sub = subscriber(&mut env, "sub", &["--stall", "/big", "/big"]);
    let (code, log) = play(
        &mut env,
        "play",
        &["--wait-for-subscribers", "--immediate", "--queue", "4", "--stats", bag.to_str().unwrap()],
    );
    assert_eq!(code, Some(3), "exit 3 when messages were dropped:\n{log}");
    assert!(log.contains("dropped") && log.contains("--queue 4"), "{log}");
    let s = stats(&log);
    assert_eq!(s["published"], 96);
    assert!(s["dropped"].as_u64().unwrap() > 0, "{s}");
    let received = sub.finish(&mut env);
    assert_eq!(got(&received, "/big").len(), 1, "the stalled subscriber took one message");
}

#[test]
fn input_flag_and_several_bags_merge_in_time_order() {
    let test = "input_flag_and_several_bags_merge_in_time_order";
    let Some(mut env) = Ros1Env::new(test) else { return };
    let t0 = common::START;
    let ms = 1_000_000;
    // Interleaved times, a tie at 100 ms (the earlier bag goes first), and a topic only in b.
    let mut a: Vec<(&str, u64, String)> = (0..5).map(|i| ("/chatter", t0 + 20 * i * ms, format!("a{i}"))).collect();
    a.push(("/chatter", t0 + 100 * ms, "a-tie".into()));
    let mut b: Vec<(&str, u64, String)> =
        (0..5).map(|i| ("/chatter", t0 + (20 * i + 10) * ms, format!("b{i}"))).collect();
    b.push(("/chatter", t0 + 100 * ms, "b-tie".into()));
    b.push(("/only_b", t0 + 55 * ms, "b-only".into()));
    let (pa, pb) = (env.home.path().join("a.bag"), env.home.path().join("b.bag"));
    string_bag(&pa, &a);
    string_bag(&pb, &b);
    let want: Vec<String> = ["a0", "b0", "a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4", "a-tie", "b-tie"]
        .iter()
        .map(|s| digest(&string_msg(s)))
        .collect();
    // rbag_storage reads back what was written.
    assert_eq!(bag_messages(&pa, "/chatter").len(), 6);
    env.start_rosmaster();

    // A positional bag plus -i.
    let sub = subscriber(&mut env, "sub0", &["/chatter", "/only_b"]);
    let (code, log) =
        play(&mut env, "play0", &["--wait-for-subscribers", pa.to_str().unwrap(), "-i", pb.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{log}");
    let received = sub.collect(&mut env, want.len() + 1);
    assert_same("merged /chatter", &got(&received, "/chatter"), &want);
    assert_same("/only_b", &got(&received, "/only_b"), &[digest(&string_msg("b-only"))]);
    let walls: Vec<f64> =
        received["/chatter"]["wall"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert!(walls.windows(2).all(|w| w[0] <= w[1]));

    // Only --bags (the alias of --input), no positional bag, and --input twice.
    for (k, args) in
        [vec!["--bags", pb.to_str().unwrap()], vec!["--input", pb.to_str().unwrap(), "--input", pa.to_str().unwrap()]]
            .into_iter()
            .enumerate()
    {
        let sub = subscriber(&mut env, &format!("sub{}", k + 1), &["/chatter"]);
        let mut all = vec!["--wait-for-subscribers"];
        all.extend(args);
        all.extend(["--topics", "/chatter"]);
        let (code, log) = play(&mut env, &format!("play{}", k + 1), &all);
        assert_eq!(code, Some(0), "{log}");
        let want: Vec<String> = if k == 0 {
            ["b0", "b1", "b2", "b3", "b4", "b-tie"].iter().map(|s| digest(&string_msg(s))).collect()
        } else {
            // b is the first bag now: it wins the tie.
            ["a0", "b0", "a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4", "b-tie", "a-tie"]
                .iter()
                .map(|s| digest(&string_msg(s)))
                .collect()
        };
        let received = sub.collect(&mut env, want.len());
        assert_same(&format!("run {}", k + 1), &got(&received, "/chatter"), &want);
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Errors and the embedded master.

#[test]
fn errors_have_clear_messages_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let bag = common::sample_bag(dir.path(), "s.bag", 1);
    let missing = dir.path().join("no_such.bag");
    let unused = format!("http://127.0.0.1:{}/", free_port());
    let run = |args: &[&str], ros_version: Option<&str>| {
        let mut c = common::rbag();
        c.env("ROS_MASTER_URI", &unused)
            .env("ROS_HOSTNAME", "127.0.0.1")
            .env("ROS_HOME", dir.path())
            .env("ROS_LOG_DIR", dir.path());
        match ros_version {
            Some(v) => c.env("ROS_VERSION", v),
            None => c.env_remove("ROS_VERSION"),
        };
        c.arg("play").args(args).output().unwrap()
    };
    let missing_s = missing.to_str().unwrap();
    // A missing bag: exit 1, the path named.
    let o = run(&["--ros1", missing_s], None);
    common::assert_clear_error(&o, &["no_such.bag"]);
    let o = run(&["--ros1", bag.to_str().unwrap(), missing_s], None);
    common::assert_clear_error(&o, &["no_such.bag"]);
    // ROS_VERSION=1 chooses ROS 1 as --ros1 does.
    let o = run(&[missing_s], Some("1"));
    common::assert_clear_error(&o, &["no_such.bag"]);
    // No bag at all: a usage error.
    let o = run(&["--ros1"], None);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("bag"), "{}", common::stderr(&o));
    // --topics takes every argument after it, the bag too: the error says to name bags first.
    let o = run(&["--ros1", "--topics", "/chatter", bag.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("--topics") && common::stderr(&o).contains("bags first"),
        "{}",
        common::stderr(&o)
    );
    let o = run(&["--ros1", "/chatter:=/talk"], None);
    assert_eq!(o.status.code(), Some(2), "a remapping is not a bag: {}", common::stderr(&o));
    // Neither --ros1/--ros2 nor ROS_VERSION, and no bag to say which: a usage error naming
    // the flags. (A bag that exists picks its own graph: tests/first_day.rs.)
    let o = run(&["missing.bag"], None);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("--ros1") && common::stderr(&o).contains("ROS_VERSION"),
        "{}",
        common::stderr(&o)
    );
    let o = run(&[bag.to_str().unwrap()], Some("3"));
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    // Both is a usage error too.
    let o = run(&["--ros1", "--ros2", bag.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    // Bad values: usage errors, refused before joining a graph (no master is started).
    for (bad, named) in [
        (&["--ros1", "-r", "0"][..], "rate"),
        (&["--ros1", "-u", "0"], "duration"),
        (&["--ros1", "--clock", "--hz", "0"], "clock rate"),
        (&["--ros1", "-r", "nan"], "rate"),
    ] {
        let mut args = bad.to_vec();
        args.push(bag.to_str().unwrap());
        let o = run(&args, None);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert!(err.contains(named) && !err.contains("panicked") && !err.contains("embedded master"), "{bad:?}: {err}");
    }
}

#[test]
fn without_a_master_play_starts_an_embedded_one() {
    let test = "without_a_master_play_starts_an_embedded_one";
    let Some(dir) = corpus(test, "ros1") else { return };
    let Some(mut env) = Ros1Env::new(test) else { return };
    let bag = dir.join("small_chunks.bag");
    let first = bag_messages(&bag, "/chatter")[0].1.clone();
    // No rosmaster: rbag starts one at ROS_MASTER_URI's port and says so.
    play_bg(&mut env, "play", &[bag.to_str().unwrap(), "--wait-for-subscribers", "-r", "10", "--topics", "/chatter"]);
    assert!(env.wait_log("play", "embedded master", LONG), "{}", env.log("play"));
    assert!(env.log("play").contains(&env.master_uri()), "{}", env.log("play"));
    // Real ROS 1 tools use it.
    let sub = subscriber(&mut env, "sub", &["/chatter"]);
    let status = env.wait_exit("play", LONG).expect("rbag play ends");
    assert_eq!(status.code(), Some(0), "{}", env.log("play"));
    let received = sub.collect(&mut env, 200);
    let got = got(&received, "/chatter");
    assert_eq!(got.len(), 200);
    assert_eq!(got[0], first);
}

#[test]
fn skip_empty_pause_topics_and_quiet() {
    let test = "skip_empty_pause_topics_and_quiet";
    let Some(mut env) = Ros1Env::new(test) else { return };
    const S: u64 = 1_000_000_000;
    let t0 = 1_700_000_000 * S;
    let bag = env.home.path().join("gap.bag");
    // A 10-minute hole between the second and third /a message, and a /b in the middle.
    let msgs = [
        ("/a", t0, "a0".to_string()),
        ("/a", t0 + S / 10, "a1".into()),
        ("/b", t0 + S / 5, "b0".into()),
        ("/a", t0 + 600 * S, "a2".into()),
    ];
    string_bag(&bag, &msgs);
    env.start_rosmaster();

    // --skip-empty 1: the 10-minute hole is skipped, so the run ends on its own (well within
    // the test's timeout); -q leaves only errors on stderr.
    let sub = subscriber(&mut env, "sub", &["/a", "/b"]);
    let (code, log) =
        play(&mut env, "skip", &[bag.to_str().unwrap(), "--skip-empty", "1", "--wait-for-subscribers", "-q"]);
    assert_eq!(code, Some(0), "{log}");
    assert!(!log.contains("Done:"), "-q printed the summary: {log}");
    let received = sub.collect(&mut env, 4);
    assert_same(
        "/a",
        &got(&received, "/a"),
        &[
            rbag_testkit::digest(&string_msg("a0")),
            rbag_testkit::digest(&string_msg("a1")),
            rbag_testkit::digest(&string_msg("a2")),
        ],
    );

    // --pause-topics /b: playback pauses before /b's message and stays paused.
    let sub = subscriber(&mut env, "sub2", &["/a", "/b"]);
    play_bg(
        &mut env,
        "pause",
        &[bag.to_str().unwrap(), "--pause-topics", "/b", "--wait-for-subscribers", "--skip-empty", "1"],
    );
    sub.wait_count(2, LONG);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(sub.state().0, 2, "published past the pause topic:\n{}", env.log("pause"));
    let status = env.interrupt("pause", LONG).expect("rbag play ends on SIGINT");
    assert_eq!(status.code(), Some(0), "{}", env.log("pause"));
    let received = sub.finish(&mut env);
    assert_same("/b", &got(&received, "/b"), &[]);
}

#[test]
fn rate_control_topic_holds_playback_until_its_stamp_allows() {
    let test = "rate_control_topic_holds_playback_until_its_stamp_allows";
    let Some(mut env) = Ros1Env::new(test) else { return };
    const S: u64 = 1_000_000_000;
    let bag = env.home.path().join("rc.bag");
    // /data at bag times 1000.0, 1000.1, … 1000.9 s.
    let msgs: Vec<(&str, u64, String)> = (0..10).map(|i| ("/data", 1000 * S + i * S / 10, format!("m{i}"))).collect();
    string_bag(&bag, &msgs);
    let digests =
        |r: std::ops::Range<usize>| r.map(|i| rbag_testkit::digest(&string_msg(&format!("m{i}")))).collect::<Vec<_>>();
    env.start_rosmaster();
    let sub = subscriber(&mut env, "sub", &["/data"]);
    play_bg(
        &mut env,
        "play",
        &[bag.to_str().unwrap(), "-d", "0", "--rate-control-topic", "/rc", "--rate-control-max-delay", "0.25"],
    );
    sub.wait_connected(&env, 1);
    // No stamp yet: nothing goes, as in rosbag.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(sub.state().0, 0, "played before any rate control message:\n{}", env.log("play"));
    // Debian's rostopic stamps 1000.45 s: messages up to 1000.7 s (0.25 s ahead) may go.
    let stamp = |env: &mut Ros1Env, name: &str, secs: u32, nsecs: u32| {
        let mut c = env.command("/usr/bin/rostopic");
        // Without `-1`, which exits 3 s after publishing, rostopic stays up with the message
        // latched: a slow connection still gets it.
        c.args([
            "pub",
            "/rc",
            "geometry_msgs/PointStamped",
            &format!("{{header: {{stamp: {{secs: {secs}, nsecs: {nsecs}}}}}}}"),
        ]);
        env.spawn(name, c);
    };
    stamp(&mut env, "rc1", 1000, 450_000_000);
    assert_eq!(sub.wait_count(8, LONG), 8, "{}", env.log("play"));
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(sub.state().0, 8, "played past the rate control stamp:\n{}", env.log("play"));
    stamp(&mut env, "rc2", 1001, 0);
    let received = sub.collect(&mut env, 10);
    assert_same("/data", &got(&received, "/data"), &digests(0..10));
    let status = env.wait_exit("play", LONG).expect("rbag play ends after the last message");
    assert_eq!(status.code(), Some(0), "{}", env.log("play"));
}

#[test]
fn pause_playback_service_pauses_and_resumes_as_rosbag_plays_does() {
    let test = "pause_playback_service_pauses_and_resumes_as_rosbag_plays_does";
    let Some(mut env) = Ros1Env::new(test) else { return };
    const S: u64 = 1_000_000_000;
    let bag = env.home.path().join("svc.bag");
    let msgs: Vec<(&str, u64, String)> = (0..10).map(|i| ("/data", 1000 * S + i * S / 20, format!("m{i}"))).collect();
    string_bag(&bag, &msgs);
    env.start_rosmaster();
    let sub = subscriber(&mut env, "sub", &["/data"]);
    play_bg(&mut env, "play", &[bag.to_str().unwrap(), "--pause", "-d", "0"]);
    sub.wait_connected(&env, 1);
    // Debian's rosservice finds the service through the master and calls it over TCPROS.
    let rosservice = |env: &mut Ros1Env, name: &str, args: &[&str]| -> String {
        let mut c = env.command("/usr/bin/rosservice");
        c.args(args);
        env.spawn(name, c);
        let status =
            env.wait_exit(name, LONG).unwrap_or_else(|| panic!("rosservice {args:?} hung:\n{}", env.log(name)));
        assert!(status.success(), "rosservice {args:?}:\n{}", env.log(name));
        env.log(name)
    };
    let list = rosservice(&mut env, "list", &["list"]);
    let service = list
        .split_whitespace()
        .find(|s| s.ends_with("/pause_playback"))
        .unwrap_or_else(|| panic!("no pause_playback service:\n{list}"))
        .to_string();
    let info = rosservice(&mut env, "info", &["info", &service]);
    assert!(info.contains("Type: std_srvs/SetBool"), "{info}");
    let answer = rosservice(&mut env, "call1", &["call", &service, "data: true"]);
    assert!(answer.contains("success: False") && answer.contains("already paused"), "{answer}");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(sub.state().0, 0, "published while paused:\n{}", env.log("play"));
    let answer = rosservice(&mut env, "call2", &["call", &service, "data: false"]);
    assert!(answer.contains("success: True") && answer.contains("resumed"), "{answer}");
    let received = sub.collect(&mut env, 10);
    let want: Vec<String> = (0..10).map(|i| rbag_testkit::digest(&string_msg(&format!("m{i}")))).collect();
    assert_same("/data", &got(&received, "/data"), &want);
    let status = env.wait_exit("play", LONG).expect("rbag play ends after the last message");
    assert_eq!(status.code(), Some(0), "{}", env.log("play"));
}
