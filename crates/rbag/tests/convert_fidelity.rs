//! Nothing lost in convert: MCAP attachments and metadata, latched state across a time cut and
//! at each split, encodings rbag cannot decode, and rosbag2's output-options YAML, which must
//! give the same bags as the equivalent separate `rbag convert` runs.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::*;

const T0: u64 = 1_700_000_000;
const NS: u64 = 1_000_000_000;

/// A ROS 1 bag written by Debian's rosbag: a latched `/tf_static` (tf2_msgs/TFMessage) at
/// T0 + 5 ns and `/chatter` at 10 Hz for 10 s.
const TF_BAG: &str = r#"
import sys, rosbag, rospy
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from geometry_msgs.msg import TransformStamped
T0 = 1_700_000_000
with rosbag.Bag(sys.argv[1], 'w') as b:
    st = TFMessage()
    t = TransformStamped(); t.header.frame_id = 'base_link'; t.child_frame_id = 'laser'
    t.transform.rotation.w = 1.0
    st.transforms.append(t)
    b.write('/tf_static', st, rospy.Time(T0, 5), connection_header={
        'latching': '1', 'callerid': '/static_tf', 'topic': '/tf_static', 'type': 'tf2_msgs/TFMessage',
        'md5sum': TFMessage._md5sum, 'message_definition': TFMessage._full_text})
    for i in range(100):
        b.write('/chatter', String(data='hello %d' % i), rospy.Time(T0 + i // 10, (i % 10) * 100_000_000))
"#;

fn tf_bag(test: &str, dir: &Path) -> Option<PathBuf> {
    let python = rbag_testkit::rosbag_python(test)?;
    let path = dir.join("in.bag");
    let o = Command::new(python).args(["-c", TF_BAG]).arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(path)
}

fn ok(args: &[&dyn AsRef<std::ffi::OsStr>]) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stderr(&o)
}

fn topics_of(messages: &[(String, u64, Vec<u8>)], topic: &str) -> Vec<u64> {
    messages.iter().filter(|m| m.0 == topic).map(|m| m.1).collect()
}

#[test]
fn a_cut_keeps_the_latched_tf_static_message() {
    let dir = tempfile::tempdir().unwrap();
    let Some(input) = tf_bag("a_cut_keeps_the_latched_tf_static_message", dir.path()) else { return };
    let start = format!("{}", T0 + 4);
    let end = format!("{}", T0 + 6);
    let mcap = dir.path().join("full.mcap");
    ok(&[&"convert", &input, &"-o", &mcap]);
    let cases: [(&str, &Path, PathBuf, &[&str]); 3] = [
        ("ROS 1 -> ROS 1", &input, dir.path().join("cut.bag"), &[]),
        ("MCAP -> MCAP", &mcap, dir.path().join("cut.mcap"), &[]),
        ("ROS 1 -> rosbag2", &input, dir.path().join("cut_dir"), &["-s", "sqlite3"]),
    ];
    for (what, from, to, extra) in cases {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> =
            vec![&"convert", &from, &"-o", &to, &"--start", &start, &"--end", &end];
        args.extend(extra.iter().map(|e| e as &dyn AsRef<std::ffi::OsStr>));
        let err = ok(&args);
        assert!(err.contains("1 latched from before --start"), "{what}: {err}");
        let got = read_all(&to);
        assert_eq!(topics_of(&got, "/tf_static"), [T0 * NS + 5], "{what}: stamped with its own time");
        assert_eq!(got[0].0, "/tf_static", "{what}: written first");
        let chatter = topics_of(&got, "/chatter");
        assert_eq!(chatter.len(), 20, "{what}");
        assert!(chatter.iter().all(|t| ((T0 + 4) * NS..(T0 + 6) * NS).contains(t)), "{what}");
        // --no-keep-latched: exactly the window.
        let exact = dir.path().join(format!("exact_{}", to.file_name().unwrap().to_string_lossy()));
        args[3] = &exact;
        args.push(&"--no-keep-latched");
        ok(&args);
        assert!(topics_of(&read_all(&exact), "/tf_static").is_empty(), "{what}");
    }
    // Debian's rosbag reads the ROS 1 cut, latched connection and all.
    let python = rbag_testkit::rosbag_python("a_cut_keeps_the_latched_tf_static_message").unwrap();
    let check = r#"
import sys, rosbag
b = rosbag.Bag(sys.argv[1])
tf = [(c.topic, c.header.get('latching')) for c in b._connections.values() if c.topic == '/tf_static']
msgs = [(t, s.to_nsec()) for t, m, s in b.read_messages(topics=['/tf_static'])]
print(tf, msgs)
"#;
    let o = Command::new(python).args(["-c", check]).arg(dir.path().join("cut.bag")).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(out.trim(), format!("[('/tf_static', b'1')] [('/tf_static', {})]", T0 * NS + 5));
}

/// The storage files of a rosbag2 directory, in order.
fn split_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort_by_key(|p| {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        stem.rsplit('_').next().unwrap().parse::<u32>().unwrap()
    });
    files
}

#[test]
fn a_split_repeats_transient_local_messages_in_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let Some(input) = tf_bag("a_split_repeats_transient_local_messages_in_each_file", dir.path()) else { return };
    for (storage, ext, flags) in [
        ("mcap", "mcap", vec!["--repeat-all-transient-local"]),
        ("sqlite3", "db3", vec!["--repeat-transient-local", "/tf_static=1"]),
        ("mcap", "mcap", vec![]),
    ] {
        let out = dir.path().join(format!("split_{storage}_{}", flags.len()));
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> =
            vec![&"convert", &input, &"-o", &out, &"-s", &storage, &"--max-bag-duration", &"2"];
        args.extend(flags.iter().map(|f| f as &dyn AsRef<std::ffi::OsStr>));
        ok(&args);
        let files = split_files(&out, ext);
        assert_eq!(files.len(), 5, "{storage} {flags:?}: a file per 2 s of the 10 s bag");
        let mut chatter = 0;
        for (n, f) in files.iter().enumerate() {
            let got = read_all(f);
            let repeated = topics_of(&got, "/tf_static");
            if flags.is_empty() && n > 0 {
                assert!(repeated.is_empty(), "{storage}: repeated without being asked");
            } else {
                assert_eq!(repeated, [T0 * NS + 5], "{storage} {flags:?}: file {n} holds /tf_static");
            }
            chatter += topics_of(&got, "/chatter").len();
        }
        assert_eq!(chatter, 100, "{storage} {flags:?}: every message once");
        // The directory as a whole reads the repeats too; metadata.yaml counts them.
        let all = read_all(&out);
        let expected = if flags.is_empty() { 1 } else { 5 };
        assert_eq!(topics_of(&all, "/tf_static").len(), expected, "{storage} {flags:?}");
    }
}

/// An MCAP file written by the mcap Python library: a JSON channel (an encoding rbag does not
/// decode), 3 attachments and 4 metadata records.
const EXTRAS_MCAP: &str = r#"
import sys
from mcap.writer import Writer
with open(sys.argv[1], 'wb') as f:
    w = Writer(f)
    w.start(profile='', library='rbag-test')
    s = w.register_schema(name='Pose', encoding='jsonschema', data=b'{"type": "object"}')
    c = w.register_channel(topic='/pose', message_encoding='json', schema_id=s, metadata={'k': 'v'})
    for i in range(50):
        w.add_message(channel_id=c, log_time=1_700_000_000_000_000_000 + i * 10_000_000,
                      publish_time=1_700_000_000_000_000_000 + i * 10_000_000, data=b'{"x": %d}' % i, sequence=i)
    w.add_attachment(create_time=1, log_time=1_700_000_000_000_000_000, name='calib.yaml', media_type='application/yaml', data=b'k: [1, 2, 3]\n')
    w.add_attachment(create_time=2, log_time=1_700_000_000_100_000_000, name='map.png', media_type='image/png', data=bytes(range(256)) * 40)
    w.add_attachment(create_time=3, log_time=1_700_000_000_200_000_000, name='empty', media_type='', data=b'')
    w.add_metadata(name='robot', data={'id': 'r2', 'site': 'lab'})
    w.add_metadata(name='calibration', data={'camera': 'ok'})
    w.add_metadata(name='empty', data={})
    w.add_metadata(name='robot', data={'id': 'r2', 'run': '7'})
    w.finish()
"#;

const EXTRAS_DUMP: &str = r#"
import sys, json
from mcap.reader import make_reader
with open(sys.argv[1], 'rb') as f:
    r = make_reader(f)
    att = [[a.name, a.media_type, a.log_time, a.create_time, a.data.hex()] for a in r.iter_attachments()]
    meta = [[m.name, m.metadata] for m in r.iter_metadata()]
    msgs = [[c.topic, c.message_encoding, m.log_time, m.data.hex()] for s, c, m in r.iter_messages()]
print(json.dumps({'attachments': att, 'metadata': meta, 'messages': msgs}))
"#;

fn dump(python: &Path, file: &Path) -> serde_json::Value {
    let o = Command::new(python).args(["-c", EXTRAS_DUMP]).arg(file).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn mcap_to_mcap_keeps_attachments_metadata_and_unknown_encodings() {
    let Some(python) = rbag_testkit::oracle_python("mcap_to_mcap_keeps_attachments_metadata_and_unknown_encodings")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.mcap");
    let o = Command::new(&python).args(["-c", EXTRAS_MCAP]).arg(&input).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = dump(&python, &input);
    assert_eq!(before["attachments"].as_array().unwrap().len(), 3);
    assert_eq!(before["metadata"].as_array().unwrap().len(), 4);

    let out = dir.path().join("out.mcap");
    let err = ok(&[&"convert", &input, &"-o", &out, &"--compression", &"zstd"]);
    assert!(err.contains("carried 3 attachment(s) and 4 metadata record(s)"), "{err}");
    let mut after = dump(&python, &out);
    assert_eq!(after["attachments"], before["attachments"], "attachments byte-identical");
    // rbag writes MCAP as rosbag2 does, with its own `rosbag2` record describing the output;
    // every input record is there, unchanged and in order.
    let own = after["metadata"].as_array_mut().unwrap();
    assert_eq!(own.iter().filter(|m| m[0] == "rosbag2").count(), 1);
    own.retain(|m| m[0] != "rosbag2");
    assert_eq!(after["metadata"], before["metadata"], "metadata records identical");
    assert_eq!(after["messages"], before["messages"], "json messages copied as they are");

    let bare = dir.path().join("bare.mcap");
    ok(&[&"convert", &input, &"-o", &bare, &"--exclude-attachments", &"--exclude-metadata"]);
    let none = dump(&python, &bare);
    let names: Vec<&str> = none["metadata"].as_array().unwrap().iter().map(|m| m[0].as_str().unwrap()).collect();
    assert_eq!((none["attachments"].as_array().unwrap().len(), names), (0, vec!["rosbag2"]), "only rbag's own record");

    // SQLite3 holds any serialization format: the JSON messages are copied; what it cannot
    // carry is said.
    let db3 = dir.path().join("out.db3");
    let err = ok(&[&"convert", &input, &"-o", &db3]);
    assert!(err.contains("not carried: 3 attachment(s) and 4 metadata record(s)"), "{err}");
    let got = read_all(&db3);
    assert_eq!(got.len(), 50);
    assert_eq!(got[7].2, br#"{"x": 7}"#);
    // A ROS 1 bag cannot hold JSON messages: skipped and said, exit 3.
    let o = run(&[&"convert", &input, &"-o", &dir.path().join("out.bag")]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("skipped 50 messages on /pose"), "{}", stderr(&o));
}

#[test]
fn throttle_and_type_selection() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 4);
    let out = dir.path().join("thr.bag");
    let err =
        ok(&[&"convert", &input, &"-o", &out, &"--throttle", &"/chatter=5", &"--topic-types", &"std_msgs/msg/String"]);
    let got = read_all(&out);
    let chatter = topics_of(&got, "/chatter");
    // 100 Hz for 4 s kept at 5 Hz: one message each 200 ms.
    assert_eq!(chatter.len(), 20, "{err}");
    assert!(chatter.windows(2).all(|w| w[1] - w[0] >= 200_000_000));
    assert!(got.iter().all(|m| m.0 == "/chatter" || m.0 == "/robot_description"), "only String topics");
    assert!(err.contains("380 left out by --throttle"), "{err}");
    let o = run(&[&"convert", &input, &"-o", &dir.path().join("x.bag"), &"--throttle", &"/chatter=0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// rosbag2's README examples (merge, split, compress, a time fragment), each against the
/// separate `rbag convert` runs that should give the same bags.
#[test]
fn output_options_yaml_gives_the_same_bags_as_separate_converts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = sample_bag(d, "bag1.bag", 3);
    let b = d.join("bag2.bag");
    {
        let mut w = rbag_storage::create(&b, rbag_storage::Format::Ros1, &Default::default()).unwrap();
        rbag_testkit::sample::write(w.as_mut(), START + 1_500_000_000, 3 * NS).unwrap();
        w.finish().unwrap();
    }
    let yaml = d.join("out.yaml");
    let fragment_end = START + 2 * NS;
    std::fs::write(
        &yaml,
        format!(
            "output_bags:
- uri: {d}/merged_bag
  all_topics: true
  all_services: true
- uri: {d}/split1
  topics: [/chatter, /speed]
- uri: {d}/split2
  topics: [/point]
- uri: {d}/compressed
  all_topics: true
  all_services: true
  compression_mode: file
  compression_format: zstd
- uri: {d}/fragment_bag
  storage_id: mcap
  all_topics: true
  start_time_ns: {start}
  end_time_ns: {fragment_end}
- uri: {d}/nothing
  storage_id: sqlite3
",
            d = d.display(),
            start = START + NS,
        ),
    )
    .unwrap();
    // `ros2 bag convert -i bag1 -i bag2 -o out.yaml`: the YAML is read, and --force never
    // replaces it.
    let before = std::fs::read(&yaml).unwrap();
    ok(&[&"convert", &"-i", &a, &"-i", &b, &"ros1", &"-o", &yaml, &"--force"]);
    assert_eq!(std::fs::read(&yaml).unwrap(), before);

    let sep = |name: &str, extra: &[&str]| -> PathBuf {
        let out = d.join(format!("sep_{name}"));
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"convert", &a, &b, &"-o", &out];
        args.extend(extra.iter().map(|e| e as &dyn AsRef<std::ffi::OsStr>));
        ok(&args);
        out
    };
    let end_excl = format!("{}ns", fragment_end + 1);
    let start = format!("{}ns", START + NS);
    let pairs = [
        ("merged_bag", sep("merged", &["-s", "mcap"])),
        ("split1", sep("split1", &["-s", "mcap", "--topics", "/chatter", "/speed"])),
        ("split2", sep("split2", &["-s", "mcap", "--topics", "/point"])),
        ("compressed", sep("compressed", &["-s", "mcap", "--compression-mode", "file"])),
        ("fragment_bag", sep("fragment", &["-s", "mcap", "--start", &start, "--end", &end_excl])),
    ];
    for (name, separate) in &pairs {
        let from_yaml = read_all(&d.join(name));
        assert!(!from_yaml.is_empty(), "{name}");
        assert_eq!(from_yaml, read_all(separate), "{name}: the YAML output equals the separate convert");
    }
    assert!(d.join("compressed/compressed_0.mcap.zstd").exists());
    // end_time_ns is inclusive: a message at exactly that time is in the fragment.
    let fragment = read_all(&d.join("fragment_bag"));
    assert!(fragment.iter().any(|m| m.1 == fragment_end), "the message at end_time_ns is kept");
    // An output with no topic selection is empty, as rosbag2 writes it.
    assert!(read_all(&d.join("nothing")).is_empty());

    // A key rosbag2 does not have is refused, naming it.
    let bad = d.join("bad.yaml");
    std::fs::write(&bad, "output_bags:\n- uri: x\n  topicz: [/a]\n").unwrap();
    let o = run(&[&"convert", &a, &"--output-options", &bad]);
    assert_clear_error(&o, &["bad.yaml", "topicz"]);
}
