//! ROS 1 ⇄ ROS 2 conversion and migration, checked against the real tools:
//! - a corpus ROS 1 bag converted to SQLite3 and MCAP opens in rosbags, and every message
//!   decodes to the values rosbags-convert produces from the same input;
//! - the corpus ROS 2 talker converted to a ROS 1 bag is read by Debian's rosbag Python API,
//!   whose genpy classes (built from the definitions rbag wrote) have the MD5 sums rbag stored;
//! - `--migrate` adds, drops and renames fields, and refuses a changed field type.

mod common;

use std::path::Path;
use std::process::Command;

use rbag_testkit::decoded::{assert_same, by_topic};
use rbag_testkit::{corpus, oracle_python, repo_root, rosbag_python};

fn rosbags(python: &Path, bag: &Path) -> Vec<u8> {
    let out = Command::new(python).arg(repo_root().join("tests/oracle/decode_rosbags.py")).arg(bag).output().unwrap();
    assert!(out.status.success(), "rosbags on {}: {}", bag.display(), String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn ok(o: &std::process::Output) {
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(o));
}

#[test]
fn ros1_bag_converts_like_rosbags_convert() {
    let test = "ros1_bag_converts_like_rosbags_convert";
    let (Some(root), Some(python)) = (corpus(test, "ros1"), oracle_python(test)) else { return };
    let input = root.join("multi_none.bag");
    let tmp = tempfile::tempdir().unwrap();
    let theirs_dir = tmp.path().join("rosbags");
    let convert = python.parent().unwrap().join("rosbags-convert");
    let out = Command::new(&convert).arg("--src").arg(&input).arg("--dst").arg(&theirs_dir).output().unwrap();
    assert!(out.status.success(), "rosbags-convert: {}", String::from_utf8_lossy(&out.stderr));
    let theirs = by_topic(&rosbags(&python, &theirs_dir));
    for storage in ["sqlite3", "mcap"] {
        let ours_dir = tmp.path().join(storage);
        let mut cmd = common::rbag();
        cmd.arg("convert").arg(&input).arg("-o").arg(&ours_dir).args(["-s", storage]);
        ok(&cmd.output().unwrap());
        let n = assert_same(storage, &by_topic(&rosbags(&python, &ours_dir)), &theirs);
        assert_eq!(n, 750, "{storage}");
    }
}

#[test]
fn ros2_talker_converts_to_a_bag_debians_rosbag_reads() {
    let test = "ros2_talker_converts_to_a_bag_debians_rosbag_reads";
    let (Some(root), Some(python)) = (corpus(test, "ros2"), rosbag_python(test)) else { return };
    let tmp = tempfile::tempdir().unwrap();
    // talker in both storages, and cdr_test (test_msgs: arrays, nested types, bool constants).
    for (storage, bag, count) in [("mcap", "talker", 20), ("sqlite3", "talker", 20), ("mcap", "cdr_test", 7)] {
        let out = tmp.path().join(format!("{storage}_{bag}.bag"));
        ok(&common::run(&[
            &"convert",
            &root.join(storage).join(bag),
            &"-o",
            &out,
            &"--msg-path",
            &"test_msgs=/usr/share/test_interface_files",
        ]));
        // genpy builds each class from the message_definition rbag wrote; its MD5 must equal the
        // md5sum rbag stored, and every message must deserialise.
        let script = r#"
import sys, rosbag, genpy.dynamic
bag = rosbag.Bag(sys.argv[1])
conns = {}
for c in bag._connections.values():
    cls = genpy.dynamic.generate_dynamic(c.datatype, c.msg_def)[c.datatype]
    assert cls._md5sum == c.md5sum, (c.topic, cls._md5sum, c.md5sum)
    conns[c.topic] = c.datatype
n = 0
for topic, msg, t in bag.read_messages():
    n += 1
    if topic == "/topic":
        assert msg.data.startswith("Hello, world! "), msg.data
    if topic == "/rosout":
        assert msg.stamp.secs > 0 and msg.name == "minimal_publisher", msg
print(n, sorted(conns.items()))
"#;
        let mut cmd = Command::new(&python);
        cmd.arg("-c").arg(script).arg(&out);
        rbag_testkit::ros_env(&mut cmd, tmp.path());
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{storage}: {}", String::from_utf8_lossy(&o.stderr));
        let printed = String::from_utf8_lossy(&o.stdout);
        assert!(printed.starts_with(&format!("{count} ")), "{storage} {bag}: {printed}");
        if bag == "talker" {
            assert!(printed.contains("('/topic', 'std_msgs/String')"), "{printed}");
        }
    }
}

/// A bag of `my_pkg/msg/Thing` v1 migrated to v2: `added` takes its default, `dropped` goes,
/// `old_name` becomes `new_name` by the rule file, and everything else is kept.
#[test]
fn migration_adds_drops_renames_and_refuses_type_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let v1 = "int32 keep\nstring dropped\nfloat64 old_name\ngeometry_msgs/Point p\n";
    let bag = tmp.path().join("v1.mcap");
    {
        let mut w = rbag_storage::create(&bag, rbag_storage::Format::Mcap, &Default::default()).unwrap();
        let id = w.add_connection(&rbag_testkit::sample::cdr::connection("/thing", "my_pkg/msg/Thing", v1)).unwrap();
        for i in 0..5u8 {
            let mut m = vec![0, 1, 0, 0];
            m.extend_from_slice(&(i as i32 * 10).to_le_bytes()); // keep
            m.extend_from_slice(&4u32.to_le_bytes());
            m.extend_from_slice(b"bye\0"); // dropped
            m.extend_from_slice(&[0; 4]); // align the float64 to 8 (after the 4-byte header)
            m.extend_from_slice(&(i as f64 + 0.5).to_le_bytes()); // old_name
            for x in [1.0f64, 2.0, 3.0] {
                m.extend_from_slice(&x.to_le_bytes());
            }
            w.write(id, 1_000 + i as u64, 1_000 + i as u64, &m).unwrap();
        }
        w.finish().unwrap();
    }
    let v2_dir = tmp.path().join("v2/my_pkg/msg");
    std::fs::create_dir_all(&v2_dir).unwrap();
    std::fs::write(
        v2_dir.join("Thing.msg"),
        "int32 keep\nfloat64 new_name\ngeometry_msgs/Point p\nuint8 added 7\nstring[] more\n",
    )
    .unwrap();
    let rules = tmp.path().join("rules.yaml");
    std::fs::write(&rules, "renames:\n  my_pkg/msg/Thing:\n    old_name: new_name\n").unwrap();
    let out = tmp.path().join("v2.mcap");
    let migrate = tmp.path().join("v2");
    ok(&common::run(&[&"convert", &bag, &"-o", &out, &"--migrate", &migrate, &"--migrate-rules", &rules]));
    let echo = common::run(&[&"echo", &out, &"--json"]);
    ok(&echo);
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&echo.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5);
    for (i, l) in lines.iter().enumerate() {
        let want = serde_json::json!({"keep": i as i32 * 10, "new_name": i as f64 + 0.5, "p": {"x": 1.0, "y": 2.0, "z": 3.0}, "added": 7, "more": []});
        assert_eq!(l["message"], want);
    }
    // The output carries the new definition and its hash.
    let r = rbag_storage::open(&out).unwrap();
    let c = &r.connections()[0];
    assert!(c.definition.starts_with("int32 keep\nfloat64 new_name\n"), "{}", c.definition);
    assert!(c.metadata.get(rbag_storage::rosbag2::TYPE_HASH_KEY).is_some_and(|h| h.starts_with("RIHS01_")));

    // A field whose type changed is refused, by name.
    std::fs::write(v2_dir.join("Thing.msg"), "string keep\n").unwrap();
    let o = common::run(&[&"convert", &bag, &"-o", &tmp.path().join("bad.mcap"), &"--migrate", &migrate]);
    common::assert_clear_error(&o, &["my_pkg/msg/Thing", "keep", "int32", "string"]);
    assert!(!tmp.path().join("bad.mcap").exists(), "a refused migration leaves no output");
}
