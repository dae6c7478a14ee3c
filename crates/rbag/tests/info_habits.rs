//! `rbag info` habits from `rosbag info` and `ros2 bag info` (issue 18): `-y`/`-k`, `--json`
//! for several bags, `-t`/`--sort`, `-v`, and what the JSON carries.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use rbag_testkit::{corpus, ros_env, rosbag_cli};

mod common;
use common::*;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok(o: Output) -> String {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    stdout(&o)
}

/// The keys of a `rosbag info -y` document: top-level ones, and `list.key` for the keys of
/// list items.
fn yaml_keys(text: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut list = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let body = line.trim_start().trim_start_matches("- ");
        let Some((key, _)) = body.split_once(':') else { continue };
        if line.starts_with(' ') {
            keys.insert(format!("{list}.{key}"));
        } else {
            list = key.to_string();
            keys.insert(key.to_string());
        }
    }
    keys
}

fn rosbag(bin: &Path, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut c = Command::new(bin);
    ros_env(&mut c, home.path());
    for a in args {
        c.arg(a);
    }
    c.output().unwrap()
}

#[test]
fn info_yaml_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 3);
    let yaml = ok(run(&[&"info", &"-y", &bag]));
    for key in ["path", "version", "duration", "start", "end", "size", "messages", "indexed", "compression"] {
        assert!(yaml.lines().any(|l| l.starts_with(&format!("{key}: "))), "{key} in {yaml}");
    }
    assert!(yaml.contains("types:\n    - type: ") && yaml.contains("\n      md5: "), "{yaml}");
    assert!(yaml.contains("topics:\n    - topic: ") && yaml.contains("\n      messages: "), "{yaml}");
    assert!(yaml.contains("      frequency: 100.0000"), "{yaml}");
    assert_eq!(ok(run(&[&"info", &"-y", &"-k", &"version", &bag])), "2.0\n");
    let duration = ok(run(&[&"info", &"-y", &"-k", &"duration", &bag]));
    assert!((duration.trim().parse::<f64>().unwrap() - 3.0).abs() < 0.02, "{duration}");
    assert_eq!(ok(run(&[&"info", &"-y", &"-k", &"indexed", &bag])), "True\n");
    assert_eq!(ok(run(&[&"info", &"-k", &"topics[0].topic", &bag])), "/chatter\n", "-k implies -y");
    let topics = ok(run(&[&"info", &"-y", &"-k", &"topics", &bag]));
    assert!(topics.starts_with("- topic: /chatter\n  type: std_msgs/String\n  messages: 300\n"), "{topics}");
    // Several bags: `---` between the documents, as rosbag prints them.
    let two = ok(run(&[&"info", &"-y", &bag, &bag]));
    assert_eq!(two, format!("{yaml}---\n{yaml}"));
    // A key the summary lacks is a usage error naming the keys there are.
    let o = run(&[&"info", &"-y", &"-k", &"nope", &bag]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("\"nope\"") && stderr(&o).contains("topics"), "{}", stderr(&o));
    assert_eq!(run(&[&"info", &"-y", &"--json", &bag]).status.code(), Some(2));

    // The real tool on a real bag: the same keys, and the same values but frequencies (whose
    // medians are computed differently).
    let name = "info_yaml_and_key";
    let Some(ros1) = corpus(name, "ros1") else { return };
    let Some(cli) = rosbag_cli(name) else { return };
    let multi = ros1.join("multi_none.bag");
    let theirs = rosbag(&cli, &[&"info", &"-y", &"--freq", &multi]);
    assert!(theirs.status.success(), "rosbag: {}", stderr(&theirs));
    let (theirs, ours) = (stdout(&theirs), ok(run(&[&"info", &"-y", &multi])));
    assert_eq!(yaml_keys(&ours), yaml_keys(&theirs), "ours:\n{ours}\ntheirs:\n{theirs}");
    for expected in ["path", "types", "topics"] {
        assert!(yaml_keys(&ours).contains(expected));
    }
    let strip = |t: &str| t.lines().filter(|l| !l.contains("frequency:")).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&ours), strip(&theirs));
    for key in ["duration", "start", "end", "size", "compression", "topics[0].type", "types[-1].md5"] {
        let theirs = rosbag(&cli, &[&"info", &"-y", &"-k", &key, &multi]);
        assert_eq!(ok(run(&[&"info", &"-y", &"-k", &key, &multi])), stdout(&theirs), "-k {key}");
    }
    // A compressed bag adds `uncompressed` and `compressed`, as rosbag does.
    let bz2 = ros1.join("multi_bz2.bag");
    let theirs = rosbag(&cli, &[&"info", &"-y", &bz2]);
    assert_eq!(strip(&ok(run(&[&"info", &"-y", &bz2]))), strip(&stdout(&theirs)));
}

#[test]
fn info_json_one_object_per_bag() {
    let dir = tempfile::tempdir().unwrap();
    let a = sample_bag(dir.path(), "a.bag", 2);
    let b = sample_bag(dir.path(), "b.bag", 3);
    // One bag: one (pretty) object, as before.
    let one: serde_json::Value = serde_json::from_str(&ok(run(&[&"info", &"--json", &a]))).unwrap();
    assert!(one.is_object() && one["path"] == a.display().to_string());
    // Several: one compact object per line.
    let out = ok(run(&[&"info", &"--json", &a, &b]));
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["path"], a.display().to_string());
    assert_eq!(lines[1]["path"], b.display().to_string());
    assert!(lines[1]["message_count"].as_u64() > lines[0]["message_count"].as_u64());
    assert_eq!(lines[0]["topics"], one["topics"]);
}

#[test]
fn info_topic_names_and_sort() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 3);
    let names = ok(run(&[&"info", &"-t", &bag]));
    let mut sorted: Vec<&str> = names.lines().collect();
    sorted.sort();
    assert_eq!(names.lines().collect::<Vec<_>>(), sorted, "by name by default");
    assert!(names.lines().all(|l| l.starts_with('/') && !l.contains(' ')), "{names}");
    assert!(names.contains("/chatter\n"), "{names}");
    assert_eq!(ok(run(&[&"info", &"--topic-name", &bag, &bag])), format!("{names}{names}"));

    let json: serde_json::Value = serde_json::from_str(&ok(run(&[&"info", &"--json", &bag]))).unwrap();
    let topics = json["topics"].as_array().unwrap();
    let by = |key: &str| {
        let out = ok(run(&[&"info", &"-t", &"--sort", &key, &bag]));
        out.lines().map(String::from).collect::<Vec<_>>()
    };
    let count = |name: &str| topics.iter().find(|t| t["name"] == name).unwrap()["message_count"].as_u64().unwrap();
    let by_count = by("count");
    assert!(by_count.windows(2).all(|w| count(&w[0]) >= count(&w[1])), "most messages first: {by_count:?}");
    let ty = |name: &str| topics.iter().find(|t| t["name"] == name).unwrap()["type"].as_str().unwrap().to_string();
    let by_type = by("type");
    assert!(by_type.windows(2).all(|w| ty(&w[0]) <= ty(&w[1])), "{by_type:?}");
    assert_eq!(by("size").len(), topics.len());
    // The order holds in the text and the JSON too.
    let text = ok(run(&[&"info", &"--sort", &"count", &bag]));
    let first = text.lines().find(|l| l.starts_with("topics:")).unwrap();
    assert!(first.contains(&by_count[0]), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(run(&[&"info", &"--json", &"--sort", &"type", &bag]))).unwrap();
    let order: Vec<String> =
        json["topics"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().into()).collect();
    assert_eq!(order, by_type);
    assert_eq!(run(&[&"info", &"--sort", &"colour", &bag]).status.code(), Some(2));
}

#[test]
fn info_verbose_qos_definitions_services() {
    let name = "info_verbose_qos_definitions_services";
    let Some(ros2) = corpus(name, "ros2") else { return };
    for storage in ["mcap", "sqlite3"] {
        let bag = ros2.join(storage).join("bag_with_topics_and_service_events");
        let plain = ok(run(&[&"info", &bag]));
        assert!(!plain.contains("qos:") && !plain.contains("requests:"), "{plain}");
        let text = ok(run(&[&"info", &"-v", &bag]));
        assert!(text.contains("                qos: reliable, volatile"), "{storage}: {text}");
        assert!(text.contains("                qos: reliable, transient_local"), "{storage}: {text}");
        // Each service: one request and one response event per call, two calls.
        let service = text.split("/test_service1 ").nth(1).unwrap();
        assert!(service.lines().nth(1).unwrap().trim() == "requests: 2, responses: 2", "{storage}: {text}");
        assert!(
            text.contains("definitions:  ")
                && text.contains(
                    "test_msgs/msg/Strings                  [ros2msg] \
                     RIHS01_eee55533636293ac7c94c62432eedb5777eb849847d2a17b4dcead8c4a20ab32"
                ),
            "{storage}: {text}"
        );
    }
    // ROS 1: no QoS, the MD5 sums as hashes.
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 1);
    let text = ok(run(&[&"info", &"--verbose", &bag]));
    assert!(!text.contains("qos:") && text.contains("hash: 992ce8a1687cec8c8bd883ec73ca41d1"), "{text}");
    assert!(text.contains("std_msgs/String") && text.contains("[ros1msg] 992ce8a1687cec8c8bd883ec73ca41d1"), "{text}");
}

#[test]
fn info_json_carries_qos_and_definitions() {
    let name = "info_json_carries_qos_and_definitions";
    let Some(ros2) = corpus(name, "ros2") else { return };
    let bag = ros2.join("mcap/bag_with_topics_and_service_events");
    let v: serde_json::Value = serde_json::from_str(&ok(run(&[&"info", &"--json", &bag]))).unwrap();
    let topic = |v: &serde_json::Value, n: &str| {
        v["topics"].as_array().unwrap().iter().find(|t| t["name"] == n).cloned().unwrap()
    };
    let t = topic(&v, "/test_topic1");
    assert_eq!(t["qos"][0]["reliability"], "reliable");
    assert_eq!(t["qos"][0]["durability"], "volatile");
    assert_eq!(t["qos"][0]["deadline_ns"], i64::MAX);
    // The older form of "infinite" (2147483651 s 294967295 ns) reads as infinite too.
    let old: serde_json::Value =
        serde_json::from_str(&ok(run(&[&"info", &"--json", &ros2.join("mcap/talker")]))).unwrap();
    let rosout = topic(&old, "/rosout");
    assert_eq!(
        (rosout["qos"][0]["deadline_ns"].as_i64(), rosout["qos"][0]["lifespan_ns"].as_i64()),
        (Some(i64::MAX), Some(10_000_000_000))
    );
    let text = ok(run(&[&"info", &"-v", &ros2.join("mcap/talker")]));
    assert!(text.contains("qos: reliable, transient_local, history unknown, lifespan 10.0s\n"), "{text}");
    assert_eq!(t["definition_hashes"][0], "RIHS01_eee55533636293ac7c94c62432eedb5777eb849847d2a17b4dcead8c4a20ab32");
    let defs = v["definitions"].as_array().unwrap();
    let strings = defs.iter().find(|d| d["name"] == "test_msgs/msg/Strings").unwrap();
    assert_eq!(strings["encoding"], "ros2msg");
    assert!(strings["hash"].as_str().unwrap().starts_with("RIHS01_"));
    assert!(strings["length"].as_u64().unwrap() > 0);
    assert!(strings.get("text").is_none(), "text only with -v");
    assert!(topic(&v, "/test_service1/_service_event").get("service_requests").is_none());
    // -v adds the text and the service counts.
    let v: serde_json::Value = serde_json::from_str(&ok(run(&[&"info", &"--json", &"-v", &bag]))).unwrap();
    let strings = v["definitions"].as_array().unwrap().iter().find(|d| d["name"] == "test_msgs/msg/Strings").unwrap();
    let text = strings["text"].as_str().unwrap();
    assert_eq!(text.len() as u64, strings["length"].as_u64().unwrap());
    assert!(text.contains("string"), "{text}");
    let s = topic(&v, "/test_service1/_service_event");
    assert_eq!((s["service_requests"].as_u64(), s["service_responses"].as_u64()), (Some(2), Some(2)));
    // A ROS 1 bag: MD5 sums, no QoS.
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 1);
    let v: serde_json::Value = serde_json::from_str(&ok(run(&[&"info", &"--json", &bag]))).unwrap();
    let chatter = topic(&v, "/chatter");
    assert_eq!(chatter["qos"], serde_json::json!([]));
    assert_eq!(chatter["definition_hashes"][0], "992ce8a1687cec8c8bd883ec73ca41d1");
    let d = v["definitions"].as_array().unwrap().iter().find(|d| d["name"] == "std_msgs/String").unwrap();
    assert_eq!(
        (d["encoding"].as_str(), d["hash"].as_str()),
        (Some("ros1msg"), Some("992ce8a1687cec8c8bd883ec73ca41d1"))
    );
}

/// Per-topic size for ROS 1 and MCAP, not only SQLite3: estimated from chunk sizes and counts
/// (labelled), close to `du --exact`'s figure, for one chunk and for many.
#[test]
fn info_per_topic_size_for_ros1_and_mcap() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample_bag(dir.path(), "s.bag", 4);
    for (name, chunk) in [("one.bag", "64MiB"), ("many.bag", "16KiB"), ("one.mcap", "64MiB"), ("many.mcap", "16KiB")] {
        let out = dir.path().join(name);
        ok(run(&[&"convert", &src, &"-o", &out, &"--chunk-size", &chunk]));
        let info: serde_json::Value = serde_json::from_str(&ok(run(&[&"info", &"--json", &out]))).unwrap();
        let du: serde_json::Value = serde_json::from_str(&ok(run(&[&"du", &"--exact", &"--json", &out]))).unwrap();
        let total = du["total_bytes"].as_u64().unwrap() as f64;
        for t in du["topics"].as_array().unwrap() {
            let topic = t["topic"].as_str().unwrap();
            let got = info["topics"].as_array().unwrap().iter().find(|i| i["name"] == topic).unwrap();
            assert_eq!(got["size_estimated"], true, "{name} {topic}");
            let (est, exact) = (got["size_bytes"].as_u64().unwrap(), t["bytes"].as_u64().unwrap());
            // Within 2% of the bag's payload, and within 10% of the topic's own.
            let off = est.abs_diff(exact) as f64;
            assert!(off <= 0.02 * total && off <= 0.1 * exact as f64 + 64.0, "{name} {topic}: {est} vs {exact}");
        }
        let text = ok(run(&[&"info", &out]));
        assert!(text.contains("sizes:        ~ estimated from chunk sizes"), "{text}");
        assert!(text.lines().any(|l| l.contains(" : ") && l.contains(" ~")), "{text}");
    }
}
