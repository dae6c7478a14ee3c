//! `rbag filter`: the same messages as Debian's `rosbag filter` with the same expressions on the
//! corpus, read back by Debian's rosbag; the unmatched-topic rule; malicious expressions refused
//! quickly with a clear error.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{read_all, run, stderr};
use rbag_testkit::{corpus, ros_env, rosbag_cli, rosbag_python};

/// Lists (topic, time ns, MD5 of the bytes) of every message, read by Debian's rosbag, which
/// also deserialises each one with the definitions the bag carries.
const LIST: &str = r#"
import hashlib, json, sys, rosbag
bag = rosbag.Bag(sys.argv[1])
out = [[topic, t.to_nsec(), hashlib.md5(raw[1]).hexdigest()] for topic, raw, t in bag.read_messages(raw=True)]
sum(1 for _ in bag.read_messages())
json.dump(out, sys.stdout)
"#;

fn rosbag_list(python: &Path, bag: &Path, home: &Path) -> Vec<(String, u64, String)> {
    let mut cmd = Command::new(python);
    cmd.arg("-c").arg(LIST).arg(bag);
    ros_env(&mut cmd, home);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "rosbag reading {}: {}", bag.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Expressions valid for every message of the corpus bag in Python (rosbag filter stops at the
/// first exception), covering fields, nesting, arrays, strings, regex, topic and time.
const EXPRESSIONS: &[&str] = &[
    "topic == '/chatter' and m.data.endswith('5')",
    "topic == '/imu' and m.angular_velocity.z > 0.5",
    "topic == '/tf' and m.transforms[1].child_frame_id == 'laser' and m.transforms[0].transform.translation.x > 1.0",
    "topic == '/camera/image_raw' and m.data[0] % 20 == 0 and len(m.data) == 9216",
    "topic in ['/pose', '/odom'] and t.to_sec() < 1795300117.0",
    "t.secs == 1795300116 and t.nsecs < 500000000",
    "topic == '/array' and m.data[-1] < -150 and len(m.layout.dim) == 1",
    "topic == '/diagnostics' and int(m.status[0].values[0].value) % 2 == 0",
    "topic == '/rosout' and 'Subscribing' in m.msg and m.level == 2",
    "topic.startswith('/c') or (topic == '/odom' and abs(m.twist.twist.angular.z) > 0.2)",
    "topic == '/imu' and (t - m.header.stamp).to_nsec() > 400000",
    r"topic == '/chatter' and __import__('re').match(r'hello \d*7$', m.data) is not None",
    "topic == '/robot_description' or (topic == '/odom' and m.pose.covariance[35] == 35.0 and max(m.pose.covariance) >= 35)",
    "topic == '/imu' and m.header.seq % 50 == 1 and m.header.frame_id[:3] == 'imu'",
    "topic == '/pose' and 0.5 < m.pose.position.x <= 1.5",
    "m._type == 'std_msgs/String' and not topic.endswith('description')",
    "topic != '/camera/image_raw' and t.to_nsec() % 3 == 0 or topic == '/tf' and len(m.transforms) == 2 and m.transforms[0].header.stamp.secs == t.secs",
];

#[test]
fn filter_keeps_what_rosbag_filter_keeps() {
    let test = "filter_keeps_what_rosbag_filter_keeps";
    let (Some(dir), Some(rosbag), Some(python)) = (corpus(test, "ros1"), rosbag_cli(test), rosbag_python(test)) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut nonempty = 0;
    for (i, expr) in EXPRESSIONS.iter().enumerate() {
        for input in ["multi_none.bag", "multi_lz4.bag"] {
            let bag = dir.join(input);
            let ours = tmp.path().join(format!("ours_{i}_{input}"));
            let theirs = tmp.path().join(format!("theirs_{i}_{input}"));
            let o = run(&[&"filter", &bag, &"-o", &ours, expr]);
            assert!(o.status.success(), "rbag filter {expr:?}: {}", stderr(&o));
            let mut cmd = Command::new(&rosbag);
            cmd.arg("filter").arg(&bag).arg(&theirs).arg(expr);
            ros_env(&mut cmd, tmp.path());
            let t = cmd.output().unwrap();
            assert!(t.status.success(), "rosbag filter {expr:?}: {}", String::from_utf8_lossy(&t.stderr));
            let want = rosbag_list(&python, &theirs, tmp.path());
            let got = rosbag_list(&python, &ours, tmp.path());
            assert_eq!(got, want, "{expr} on {input}");
            if input == "multi_none.bag" {
                assert!(want.len() < 750, "{expr} keeps everything");
                nonempty += usize::from(!want.is_empty());
            }
        }
    }
    assert!(nonempty >= 15, "only {nonempty} expressions keep any message");
}

/// The messages of `out`, once the run `o` that wrote it is seen to have succeeded.
fn kept(o: &std::process::Output, out: &Path) -> Vec<(String, u64, Vec<u8>)> {
    assert!(o.status.success(), "{}", stderr(o));
    read_all(out)
}

#[test]
fn rosbag_argument_order_and_convert_options() {
    let test = "rosbag_argument_order_and_convert_options";
    let Some(dir) = corpus(test, "ros1") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let bag = dir.join("multi_none.bag");
    // IN OUT EXPR, as rosbag filter takes them.
    let out = tmp.path().join("a.bag");
    let o = run(&[&"filter", &bag, &out, &"topic == '/chatter' and m.data.endswith('0')"]);
    let got = kept(&o, &out);
    assert_eq!(got.len(), 30);
    assert!(stderr(&o).contains("kept 30 of 750 messages (720 left out)"), "{}", stderr(&o));
    // Several inputs, MCAP output, convert's topic and time options.
    let mcap = tmp.path().join("b.mcap");
    let o = run(&[
        &"filter",
        &bag,
        &dir.join("multi_lz4.bag"),
        &"-o",
        &mcap,
        &"--topics",
        &"/imu",
        &"/chatter",
        &"--compression",
        &"zstd",
        &"--",
        &"m.header.seq % 10 == 0 if topic == '/imu' else m.data == 'hello 3'",
    ]);
    let got = kept(&o, &mcap);
    // 30 + 29 Imu messages with a seq divisible by 10; "hello 3" only in the first bag.
    assert_eq!(got.len(), 30 + 29 + 1, "{}", stderr(&o));
    assert!(got.iter().all(|(t, _, _)| t == "/imu" || t == "/chatter"));
    // rosbag2 input (MCAP, CDR): ROS 2 messages, the same language.
    if let Some(talker) = corpus(test, "ros2/mcap/talker") {
        let out = tmp.path().join("talker.mcap");
        let o = run(&[&"filter", &talker, &"-o", &out, &"topic == '/topic' and m.data.endswith('1')"]);
        let got = kept(&o, &out);
        assert_eq!(got.len(), 1, "{}", stderr(&o));
        assert!(got[0].2.ends_with(b"Hello, world! 1\0"), "{:?}", got[0].2);
    }
    // No output given.
    let o = run(&[&"filter", &bag, &"topic == '/x'"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("give the output bag"), "{}", stderr(&o));
}

#[test]
fn unmatched_topics_are_dropped_kept_or_fatal() {
    let test = "unmatched_topics_are_dropped_kept_or_fatal";
    let Some(dir) = corpus(test, "ros1") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let bag = dir.join("multi_none.bag");
    // /chatter, /robot_description, /array and /camera/image_raw have a `data` field; the other
    // topics do not.
    let expr = "m.data == 'hello 5'";
    let out = tmp.path().join("drop.bag");
    let o = run(&[&"filter", &bag, &"-o", &out, &expr]);
    let got = kept(&o, &out);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].2[4..], b"hello 5"[..]);
    let err = stderr(&o);
    assert!(err.contains("unmatched: /imu: 300 message(s) left out"), "{err}");
    assert!(err.contains("sensor_msgs/Imu has no field data"), "{err}");
    assert!(err.contains("unmatched: /rosout: 9 message(s)"), "{err}");
    assert!(!err.contains("/chatter:"), "{err}");

    let out = tmp.path().join("keep.bag");
    let o = run(&[&"filter", &bag, &"-o", &out, &"--keep-unmatched", &expr]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Everything but /chatter, /robot_description, /array and the images, plus 'hello 5'.
    assert_eq!(read_all(&out).len(), 750 - 300 - 1 - 20 - 29 + 1);
    assert!(stderr(&o).contains("/imu: 300 message(s) kept"), "{}", stderr(&o));

    // --strict stops at the first, as rosbag filter's Python exception does, and writes nothing.
    let out = tmp.path().join("strict.bag");
    let o = run(&[&"filter", &bag, &"-o", &out, &"--strict", &expr]);
    common::assert_clear_error(&o, &["topic /rosout", "rosgraph_msgs/Log has no field data", "`m.data`"]);
    assert!(!out.exists());
}

/// Runs `rbag filter` with `expr` and checks a quick, clear refusal.
fn refused(bag: &Path, out: &Path, expr: &str, what: &[&str], code: i32) {
    let start = Instant::now();
    let o = common::rbag()
        .args(["filter".as_ref(), bag.as_os_str(), "-o".as_ref(), out.as_os_str(), expr.as_ref()])
        .env("RBAG_REPORT_PEAK_RSS", "1")
        .output()
        .unwrap();
    let err = stderr(&o);
    let rss_kb: u64 = err
        .split("peak RSS ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS reported: {err}"));
    assert!(rss_kb < 200_000, "{}: peak RSS {rss_kb} kB", &expr[..expr.len().min(80)]);
    assert_eq!(o.status.code(), Some(code), "{}: {err}", &expr[..expr.len().min(80)]);
    assert!(!err.contains("panicked at"), "{err}");
    for w in what {
        assert!(err.contains(w), "{}: should say {w:?}: {err}", &expr[..expr.len().min(80)]);
    }
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
    assert!(!out.exists());
}

#[test]
fn malicious_expressions_get_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let bag = common::sample_bag(tmp.path(), "in.bag", 2);
    let out = tmp.path().join("out.bag");
    let deep = format!("{}1{}", "(".repeat(50_000), ")".repeat(50_000));
    refused(&bag, &out, &deep, &["longer than 10000 bytes", "column 10001"], 2);
    let deep = format!("{}1{}", "(".repeat(3000), ")".repeat(3000));
    refused(&bag, &out, &deep, &["nests deeper than 64 levels", "column 66"], 2);
    let nots = format!("{}True", "not ".repeat(500));
    refused(&bag, &out, &nots, &["nests deeper"], 2);
    let huge = format!("topic == '{}'", "x".repeat(9000));
    refused(&bag, &out, &huge, &["string literal longer than 4096 bytes", "column 10"], 2);
    refused(&bag, &out, &format!("t.secs > {}", "9".repeat(70)), &["number literal longer"], 2);
    refused(&bag, &out, "re.search('(x{1000}){1000}', topic)", &["regular expression compiles to more than"], 2);
    refused(&bag, &out, "re.search(r'(a)\\1', topic)", &["bad regular expression", "backreferences"], 2);
    refused(&bag, &out, "__import__('os').system('touch /tmp/x')", &["only the re module can be imported"], 2);
    // A failure that does not come from the message is the expression's, whatever the topic.
    refused(&bag, &out, "t > 5", &["'>' is not supported between Time and int", "t.to_sec()"], 1);
    refused(&bag, &out, "len(topic * 10 ** 12) > 0", &["string larger than 1048576 bytes", "topic * 10 ** 12"], 1);
    let wide = format!("[{}]", vec!["topic * 100000"; 500].join(", "));
    refused(&bag, &out, &wide, &["units of work or memory on one message"], 1);
    refused(&bag, &out, "2 ** 1000 > t.secs", &["beyond ±2**127"], 1);
    // A pattern that is exponential for backtracking engines is linear here.
    let o = run(&[&"filter", &bag, &"-o", &out, &"re.match('(a|aa)+$', 'a' * 5000 + 'b') is None"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
