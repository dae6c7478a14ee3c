//! `rbag catalog`, run as a user runs it: a catalog written, updated in place without
//! `--force`, a file that is not a catalog never replaced, and a damaged bag named on stderr
//! with exit code 1 while the others are cataloged.

use std::path::Path;
use std::process::Output;

use rbag_fleet::catalog;

mod common;
use common::*;

fn json(o: &Output) -> serde_json::Value {
    assert!(!stderr(o).contains("panicked at"), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn bags(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        sample_bag(dir, &format!("run_{i}.bag"), 1 + i as u64);
    }
}

#[test]
fn a_catalog_is_written_then_updated_in_place_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    bags(&runs, 3);
    // Inside the directory it catalogs: the catalog is no bag, and no bag is inside it.
    let out = runs.join("catalog.parquet");
    let o = run(&[&"catalog", &runs, &"-o", &out, &"--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!((v["read"].as_u64(), v["reused"].as_u64()), (Some(3), Some(0)), "{v}");
    let rows = catalog::read(&out).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), rows.len());
    // The sample bag has 4 topics.
    assert_eq!(rows.len(), 12);
    let first = &v["rows"][0];
    for key in ["url", "size", "version", "storage", "start", "end", "topic", "type", "type_hash", "message_count"] {
        assert!(!first[key].is_null(), "{key}: {first}");
    }
    assert_eq!(first["storage"], "ros1");
    let leftovers: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Again, with one more bag: no --force needed, the three are not read again.
    sample_bag(&runs, "run_3.bag", 2);
    let o = run(&[&"catalog", &runs, &"-o", &out, &"--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!((v["read"].as_u64(), v["reused"].as_u64()), (Some(1), Some(3)), "{v}");
    assert_eq!(catalog::read(&out).unwrap().len(), 16);

    // The text summary.
    let o = run(&[&"catalog", &runs, &"-o", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("4 bag(s), 16 row(s)") && text.contains("0 read, 4 unchanged"), "{text}");
}

#[test]
fn a_file_that_is_not_a_catalog_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    bags(&runs, 2);
    for (name, bytes) in [("notes.txt", &b"my thesis, no backup\n"[..]), ("other.parquet", &b"PAR1 not ours"[..])] {
        let out = dir.path().join(name);
        std::fs::write(&out, bytes).unwrap();
        let o = run(&[&"catalog", &runs, &"-o", &out]);
        assert_clear_error(&o, &[name]);
        assert!(stderr(&o).contains("not an rbag catalog"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&out).unwrap(), bytes, "{name} was touched");
        // Not even with --force: rbag replaces only what it could have written.
        let o = run(&[&"catalog", &runs, &"-o", &out, &"--force"]);
        assert_clear_error(&o, &[name, "not an rbag catalog"]);
        assert_eq!(std::fs::read(&out).unwrap(), bytes, "{name} was touched under --force");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 3, "temporaries left: {names:?}");
    // A bag at OUT is an input: refused, whatever the flags.
    let bag = runs.join("run_0.bag");
    let before = std::fs::read(&bag).unwrap();
    let o = run(&[&"catalog", &runs, &"-o", &bag, &"--force"]);
    assert_clear_error(&o, &["run_0.bag"]);
    assert_eq!(std::fs::read(&bag).unwrap(), before);
}

#[test]
fn a_damaged_bag_is_named_and_exits_1_after_the_others_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    bags(&runs, 2);
    std::fs::write(runs.join("broken.bag"), b"#ROSBAG V2.0\ngarbage").unwrap();
    let out = dir.path().join("catalog.parquet");
    let o = run(&[&"catalog", &runs, &"-o", &out, &"--threads", &"2"]);
    assert_clear_error(&o, &["broken.bag", "1 bag(s) could not be read"]);
    let rows = catalog::read(&out).unwrap();
    assert_eq!(rows.len(), 8);
    assert!(rows.iter().all(|r| !r.url.ends_with("broken.bag")));

    assert_eq!(run(&[&"catalog", &runs, &"-o", &out, &"--threads", &"0"]).status.code(), Some(2));
    assert_eq!(run(&[&"catalog", &"-o", &out]).status.code(), Some(2));
}
