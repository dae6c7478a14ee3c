//! `rbag list|attachment|metadata` on MCAP attachments and metadata records, checked against
//! the `mcap` Python library (the reference writer and reader).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_clear_error, run, stderr};

/// The venv Python with the `mcap` library, or `None` after recording a skip.
fn mcap_python(test: &str) -> Option<PathBuf> {
    let python = rbag_testkit::oracle_python(test)?;
    let ok = Command::new(&python).args(["-c", "import mcap"]).output().is_ok_and(|o| o.status.success());
    if ok {
        Some(python)
    } else {
        rbag_testkit::skip(test, "the venv has no mcap module (run scripts/setup-peers.sh)");
        None
    }
}

fn python(py: &Path, script: &str, args: &[&Path]) -> String {
    let o = Command::new(py).arg("-c").arg(script).args(args).output().unwrap();
    assert!(o.status.success(), "python failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// An MCAP file written by the mcap library: 2 channels, 6 messages, 3 attachments (two named
/// alike) and 4 metadata records (two named alike), in chunks.
const WRITE: &str = r#"
import sys
from mcap.writer import Writer
with open(sys.argv[1], "wb") as f:
    w = Writer(f)
    w.start(profile="ros2", library="test")
    s = w.register_schema(name="std_msgs/msg/String", encoding="ros2msg", data=b"string data")
    chans = [w.register_channel(topic=t, message_encoding="cdr", schema_id=s) for t in ("/a", "/b")]
    for i in range(6):
        w.add_message(channel_id=chans[i % 2], log_time=1000 + i, publish_time=1000 + i, data=b"\x00\x01\x00\x00\x02\x00\x00\x00x\x00" + bytes(i))
    w.add_attachment(create_time=11, log_time=12, name="calib.yaml", media_type="application/yaml", data=b"fx: 525.0\nfy: 525.0\n")
    w.add_attachment(create_time=21, log_time=22, name="map.pgm", media_type="image/x-portable-graymap", data=bytes(range(256)) * 40)
    w.add_attachment(create_time=31, log_time=32, name="calib.yaml", media_type="application/yaml", data=b"fx: 600.0\n")
    w.add_metadata(name="robot", data={"id": "r2", "site": "lab"})
    w.add_metadata(name="run", data={"notes": "dry"})
    w.add_metadata(name="robot", data={"site": "field", "arm": "ur5"})
    w.add_metadata(name="empty", data={})
    w.finish()
"#;

/// What the mcap library reads back: attachments (name, media type, times, data hex),
/// metadata records, and the message count, as JSON.
const READ: &str = r#"
import sys, json
from mcap.reader import make_reader
with open(sys.argv[1], "rb") as f:
    r = make_reader(f)
    atts = [[a.name, a.media_type, a.log_time, a.create_time, a.data.hex()] for a in r.iter_attachments()]
    meta = [[m.name, m.metadata] for m in r.iter_metadata()]
    msgs = sum(1 for _ in r.iter_messages())
    s = r.get_summary()
    print(json.dumps({"attachments": atts, "metadata": meta, "messages": msgs,
                      "attachment_indexes": len(s.attachment_indexes), "metadata_indexes": len(s.metadata_indexes),
                      "stats": [s.statistics.attachment_count, s.statistics.metadata_count, s.statistics.message_count]}))
"#;

fn read_back(py: &Path, file: &Path) -> serde_json::Value {
    serde_json::from_str(&python(py, READ, &[file])).unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    assert!(o.status.success(), "rbag failed: {}", stderr(o));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn fixture(test: &str) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    let py = mcap_python(test)?;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("extras.mcap");
    python(&py, WRITE, &[&file]);
    Some((dir, file, py))
}

#[test]
fn list_shows_attachments_and_metadata() {
    let Some((_dir, file, _)) = fixture("list_shows_attachments_and_metadata") else { return };
    let text = stdout(&run(&[&"list", &"attachments", &file]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("name") && lines[0].contains("media type") && lines[0].contains("offset"), "{text}");
    assert!(lines[1].starts_with("calib.yaml") && lines[1].contains("application/yaml") && lines[1].contains(" 20 "));
    assert!(lines[2].starts_with("map.pgm") && lines[2].contains("10240"), "{text}");
    assert!(lines[3].starts_with("calib.yaml") && lines[3].contains("0.000000032"), "{text}");

    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&[&"list", &"attachments", &file, &"--json"]))).unwrap();
    let names: Vec<&str> = json.as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["calib.yaml", "map.pgm", "calib.yaml"]);
    assert_eq!(json[1]["data_size"], 10240);
    assert_eq!((json[0]["log_time"].as_u64(), json[0]["create_time"].as_u64()), (Some(12), Some(11)));

    let text = stdout(&run(&[&"list", &"metadata", &file]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[1].starts_with("robot") && lines[1].contains(r#"{"id":"r2","site":"lab"}"#), "{text}");
    assert!(lines[4].starts_with("empty") && lines[4].ends_with("{}"), "{text}");
    // The verbs' own `list` is the same listing.
    assert_eq!(stdout(&run(&[&"metadata", &"list", &file])), text);

    // Chunks, schemas and channels of the same file.
    let chunks = stdout(&run(&[&"list", &"chunks", &file]));
    assert!(chunks.starts_with("offset") && chunks.lines().count() >= 2, "{chunks}");
    let schemas = stdout(&run(&[&"list", &"schemas", &file]));
    assert!(schemas.lines().nth(1).unwrap().contains("std_msgs/msg/String"), "{schemas}");
    let channels = stdout(&run(&[&"list", &"channels", &file]));
    assert_eq!(channels.lines().count(), 3, "{channels}");
    assert!(channels.contains("/a") && channels.contains("/b") && channels.contains("cdr"), "{channels}");
}

#[test]
fn get_returns_identical_bytes_and_merged_metadata() {
    let Some((dir, file, _)) = fixture("get_returns_identical_bytes_and_merged_metadata") else { return };
    let out = dir.path().join("map.pgm");
    stdout(&run(&[&"attachment", &"get", &file, &"-n", &"map.pgm", &"-o", &out]));
    let want: Vec<u8> = (0..40).flat_map(|_| 0..=255u8).collect();
    assert_eq!(std::fs::read(&out).unwrap(), want);

    // Two share a name: an offset picks one; without it the error lists both offsets.
    let o = run(&[&"attachment", &"get", &file, &"-n", &"calib.yaml", &"-o", &out]);
    assert_clear_error(&o, &["calib.yaml", "--offset"]);
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&[&"list", &"attachments", &file, &"--json"]))).unwrap();
    let second = json[2]["offset"].as_u64().unwrap().to_string();
    // To stdout (a pipe here).
    let o = run(&[&"attachment", &"get", &file, &"-n", &"calib.yaml", &"--offset", &second]);
    assert_eq!(stdout(&o).as_bytes(), b"fx: 600.0\n");
    assert_clear_error(&run(&[&"attachment", &"get", &file, &"-n", &"nope"]), &["nope", "calib.yaml, map.pgm"]);

    // Records of one name merge in file order, as `mcap get metadata`.
    let got: serde_json::Value =
        serde_json::from_str(&stdout(&run(&[&"metadata", &"get", &file, &"-n", &"robot"]))).unwrap();
    assert_eq!(got, serde_json::json!({"id": "r2", "site": "field", "arm": "ur5"}));
    assert_clear_error(&run(&[&"metadata", &"get", &file, &"-n", &"nope"]), &["nope", "robot"]);
}

#[test]
fn add_is_read_back_by_the_mcap_library() {
    let Some((dir, file, py)) = fixture("add_is_read_back_by_the_mcap_library") else { return };
    let before = read_back(&py, &file);
    let urdf = dir.path().join("robot.urdf");
    std::fs::write(&urdf, b"<robot name=\"r2\"/>\n").unwrap();
    let o = run(&[
        &"attachment",
        &"add",
        &file,
        &"-f",
        &urdf,
        &"-n",
        &"robot.urdf",
        &"--content-type",
        &"application/xml",
        &"--log-time",
        &"5000",
        &"--creation-time",
        &"1.5",
    ]);
    stdout(&o);
    let o = run(&[&"metadata", &"add", &file, &"-n", &"calibration", &"-k", &"camera=front", &"-k", &"fx=525"]);
    stdout(&o);

    let after = read_back(&py, &file);
    let atts = after["attachments"].as_array().unwrap();
    assert_eq!(atts.len(), 4);
    assert_eq!(&atts[..3], &before["attachments"].as_array().unwrap()[..]);
    assert_eq!(
        atts[3],
        serde_json::json!(["robot.urdf", "application/xml", 5000, 1_500_000_000u64, hex(b"<robot name=\"r2\"/>\n")])
    );
    let meta = after["metadata"].as_array().unwrap();
    assert_eq!(meta.len(), 5);
    assert_eq!(meta[4], serde_json::json!(["calibration", {"camera": "front", "fx": "525"}]));
    // The summary indexes them and counts them; the messages are untouched.
    assert_eq!((after["attachment_indexes"].as_u64(), after["metadata_indexes"].as_u64()), (Some(4), Some(5)));
    assert_eq!(after["stats"], serde_json::json!([4, 5, 6]));
    assert_eq!(after["messages"], 6);
    // rbag reads them back too, CRC checked.
    let out = dir.path().join("back.urdf");
    stdout(&run(&[&"attachment", &"get", &file, &"-n", &"robot.urdf", &"-o", &out]));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&urdf).unwrap());
    // No temporary left beside it.
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains(".rbag-")), "{names:?}");
}

#[test]
fn add_to_a_file_that_is_not_a_closed_mcap_leaves_it_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let bag = common::sample_bag(dir.path(), "a.bag", 1);
    let before = std::fs::read(&bag).unwrap();
    let o = run(&[&"metadata", &"add", &bag, &"-n", &"x", &"-k", &"a=1"]);
    assert_clear_error(&o, &["a.bag", "MCAP"]);
    assert_eq!(std::fs::read(&bag).unwrap(), before);

    // A torn MCAP file (no footer): refused, unchanged, no temporary left.
    let Some((_d, file, _)) = fixture("add_to_a_file_that_is_not_a_closed_mcap_leaves_it_unchanged") else { return };
    let torn = dir.path().join("torn.mcap");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&torn, &bytes[..bytes.len() - 40]).unwrap();
    let note = dir.path().join("n.txt");
    std::fs::write(&note, b"x").unwrap();
    let o = run(&[&"attachment", &"add", &torn, &"-f", &note]);
    assert_clear_error(&o, &["torn.mcap", "reindex"]);
    assert_eq!(std::fs::read(&torn).unwrap(), &bytes[..bytes.len() - 40]);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
}

#[test]
fn a_damaged_attachment_fails_get_clearly() {
    let Some((dir, file, _)) = fixture("a_damaged_attachment_fails_get_clearly") else { return };
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&[&"list", &"attachments", &file, &"--json"]))).unwrap();
    let offset = json[1]["offset"].as_u64().unwrap() as usize;
    // op, length, log time, create time, name, media type, data length: then the data.
    let data_at = offset + 9 + 16 + 4 + "map.pgm".len() + 4 + "image/x-portable-graymap".len() + 8;
    let mut bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes[data_at..data_at + 4], [0, 1, 2, 3]);
    bytes[data_at + 100] ^= 0xff;
    let bad = dir.path().join("bad.mcap");
    std::fs::write(&bad, &bytes).unwrap();
    let out = dir.path().join("map.pgm");
    let o = run(&[&"attachment", &"get", &bad, &"-n", &"map.pgm", &"-o", &out]);
    assert_clear_error(&o, &["bad.mcap", "map.pgm", &format!("offset {offset}"), "CRC"]);
    assert!(!out.exists(), "no bytes are written for a damaged attachment");
    // The other attachments still read.
    let ok = run(&[&"attachment", &"get", &bad, &"-n", &"calib.yaml", &"--offset", &json[0]["offset"].to_string()]);
    assert_eq!(stdout(&ok), "fx: 525.0\nfy: 525.0\n");
}

#[test]
fn ros1_bags_list_chunks_and_connections() {
    let test = "ros1_bags_list_chunks_and_connections";
    let Some(dir) = rbag_testkit::corpus(test, "ros1") else { return };
    let bag = dir.join("multi_lz4.bag");
    let json: serde_json::Value = serde_json::from_str(&stdout(&run(&[&"list", &"chunks", &bag, &"--json"]))).unwrap();
    let chunks = json.as_array().unwrap();
    assert!(!chunks.is_empty());
    let info = rbag_storage::open(&bag).unwrap().info().unwrap();
    assert_eq!(chunks.len() as u64, info.chunk_count);
    let total: u64 = chunks.iter().map(|c| c["message_count"].as_u64().unwrap()).sum();
    assert_eq!(total, info.message_count);
    assert!(chunks
        .iter()
        .all(|c| c["compression"] == "lz4" && c["uncompressed_size"].as_u64() > c["compressed_size"].as_u64()));
    let text = stdout(&run(&[&"list", &"connections", &bag]));
    assert_eq!(text.lines().count(), 1 + rbag_storage::open(&bag).unwrap().connections().len(), "{text}");
    assert!(text.contains("/imu") && text.contains("md5sum"), "{text}");
    // A ROS 1 bag has no attachments: an empty listing, not an error.
    assert_eq!(stdout(&run(&[&"list", &"attachments", &bag])).lines().count(), 1);
}

#[test]
fn bare_list_still_lists_the_build() {
    let text = stdout(&run(&[&"list"]));
    assert!(text.contains("storage:") && text.contains("compressor:"), "{text}");
    let text = stdout(&run(&[&"list", &"storage"]));
    assert!(text.contains("mcap") && !text.contains("compressor:"), "{text}");
    let o = run(&[&"list", &"chunks"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
