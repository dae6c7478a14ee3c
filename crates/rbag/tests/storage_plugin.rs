//! The storage seam as a user meets it: the JSON Lines example backend (crate
//! rbag-storage-jsonl), registered once by the binary, is listed by `rbag list`, written by
//! `rbag convert` and read by `rbag info`/`rbag echo` like any built-in storage.

mod common;

use std::path::Path;

use common::*;
use rbag_storage::{Filter, OutputPolicy, StorageOptions, WriteOptions};
use rbag_testkit::corpus;

/// `rbag info --json` without what depends on the storage (path, size, chunks, version).
fn info_facts(bag: &Path) -> serde_json::Value {
    let o = run(&[&"info", &"--json", &bag]);
    assert!(o.status.success(), "rbag info {}: {}", bag.display(), stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let topics: Vec<serde_json::Value> = v["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            serde_json::json!([
                t["name"],
                t["message_type"],
                t["message_count"],
                t["connections"],
                t["encoding"],
                t["frequency_hz"]
            ])
        })
        .collect();
    serde_json::json!({
        "message_count": v["message_count"],
        "start_ns": v["start_ns"],
        "end_ns": v["end_ns"],
        "types": v["types"],
        "topics": topics,
    })
}

fn echo(bag: &Path, json: bool) -> String {
    let o = if json { run(&[&"echo", &"--json", &bag]) } else { run(&[&"echo", &bag]) };
    assert!(o.status.success(), "rbag echo {}: {}", bag.display(), stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// Copies `src` into a JSON Lines bag through the library, as `rbag convert` would.
fn copy_to_jsonl(src: &Path, out: &Path) {
    rbag_storage_jsonl::register();
    let r = rbag_storage::open(src).unwrap();
    let mut w = rbag_storage::create_named(
        out,
        "jsonl",
        &WriteOptions::default(),
        &StorageOptions::default(),
        &OutputPolicy::default(),
    )
    .unwrap();
    let mut ids = std::collections::HashMap::new();
    for c in r.connections() {
        ids.insert(c.id, w.add_connection(c).unwrap());
    }
    for m in r.messages(&Filter::default()).unwrap() {
        let m = m.unwrap();
        w.write(ids[&m.connection], m.log_time, m.publish_time, &m.data).unwrap();
    }
    w.finish().unwrap();
}

fn assert_same_bag(src: &Path, jsonl: &Path) {
    assert_eq!(info_facts(jsonl), info_facts(src));
    let (a, b) = (echo(src, true), echo(jsonl, true));
    assert!(a.lines().count() > 100, "{a}");
    assert_eq!(b, a);
    assert_eq!(echo(jsonl, false), echo(src, false));
}

#[test]
fn rbag_list_names_every_registered_backend() {
    let o = run(&[&"list", &"storage", &"--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["storage"].as_array().unwrap().iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ros1", "sqlite3", "mcap", "jsonl"]);
    let jsonl = &v["storage"][3];
    assert_eq!((jsonl["read"].as_bool(), jsonl["write"].as_bool()), (Some(true), Some(true)));
    assert_eq!(jsonl["extensions"][0], "jsonl");
    assert_eq!(jsonl["options"][0]["key"], "payload");

    let o = run(&[&"list"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && text.lines().any(|l| l.trim_start().starts_with("jsonl ")), "{text}");
}

/// `rbag info` and `rbag echo` read a JSON Lines bag (made by the library from a corpus bag)
/// exactly as they read the source: same topics, types, counts, times and messages.
#[test]
fn info_and_echo_read_a_jsonl_bag_like_its_source() {
    let Some(src) = corpus("info_and_echo_read_a_jsonl_bag_like_its_source", "ros1/multi_lz4.bag") else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.jsonl");
    copy_to_jsonl(&src, &out);
    assert_same_bag(&src, &out);
}

/// `rbag convert BAG -o x.jsonl -s jsonl` writes the registered backend's bag, and so does the
/// `.jsonl` extension alone (the registry maps it to the backend).
#[test]
fn convert_writes_jsonl_by_name_and_by_extension() {
    let Some(src) = corpus("convert_writes_jsonl_by_name_and_by_extension", "ros1/multi_lz4.bag") else { return };
    let dir = tempfile::tempdir().unwrap();
    let by_name = dir.path().join("by_name.jsonl");
    let o = run(&[&"convert", &src, &"-o", &by_name, &"-s", &"jsonl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_bag(&src, &by_name);
    let by_ext = dir.path().join("by_ext.jsonl");
    let o = run(&[&"convert", &src, &"-o", &by_ext]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&by_ext).unwrap(), std::fs::read(&by_name).unwrap());
}

/// A damaged JSON Lines bag is a clear error naming the file and the line, not a panic.
#[test]
fn a_bad_jsonl_bag_is_an_error_naming_file_and_line() {
    let Some(src) = corpus("a_bad_jsonl_bag_is_an_error_naming_file_and_line", "ros1/multi_lz4.bag") else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bad.jsonl");
    copy_to_jsonl(&src, &out);
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let n = lines.len() - 2;
    lines[n] = "{\"message\":{\"connection\":1,\"log_time\":12";
    std::fs::write(&out, lines.join("\n") + "\n").unwrap();
    for verb in ["info", "echo"] {
        let o = run(&[&verb, &out]);
        let err = stderr(&o);
        assert!(!matches!(o.status.code(), Some(0) | Some(101) | None), "rbag {verb}: {:?} {err}", o.status);
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.contains("bad.jsonl") && err.contains(&format!("line {}", n + 1)), "rbag {verb}: {err}");
    }
}
