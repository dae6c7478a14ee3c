//! ROS 1 MD5 sums equal the real ones: every `.msg` Debian installs under `/usr/share/*/msg`
//! (the ROS 1 packages the test setup installs), against the `_md5sum` of Debian's generated
//! Python classes (genpy). `test_interface_files` holds ROS 2 definitions and is left out.

use std::path::PathBuf;
use std::process::Command;

use rbag_msg::Registry;
use rbag_testkit::{repo_root, rosbag_python};

fn ros1_msg_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for pkg in std::fs::read_dir("/usr/share").into_iter().flatten().flatten() {
        let dir = pkg.path().join("msg");
        if pkg.file_name() == "test_interface_files" || !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if f.path().extension().is_some_and(|e| e == "msg") {
                files.push(f.path());
            }
        }
    }
    files.sort();
    files
}

fn full_name(path: &std::path::Path) -> String {
    let pkg =
        path.parent().and_then(|p| p.parent()).and_then(|p| p.file_name()).unwrap().to_string_lossy().into_owned();
    let ty = path.file_stem().unwrap().to_string_lossy().into_owned();
    format!("{pkg}/{ty}")
}

#[test]
fn md5_of_every_installed_ros1_msg_equals_genpy() {
    let test = "md5_of_every_installed_ros1_msg_equals_genpy";
    let Some(python) = rosbag_python(test) else { return };
    let files = ros1_msg_files();
    assert!(files.len() >= 50, "expected Debian's ROS 1 .msg files, found {}", files.len());
    let mut reg = Registry::new(rbag_msg::Dialect::Ros1);
    for f in &files {
        reg.add(&full_name(f), &std::fs::read_to_string(f).unwrap()).unwrap();
    }
    let out = Command::new(python).arg(repo_root().join("tests/oracle/ros1_md5.py")).args(&files).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let genpy: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut compared = 0;
    for f in &files {
        let name = full_name(f);
        let Some(want) = genpy[&name].as_str() else { continue };
        assert_eq!(reg.md5(&name).unwrap(), want, "{name}");
        compared += 1;
    }
    assert!(compared * 10 >= files.len() * 9, "genpy knew only {compared} of {} types", files.len());
    eprintln!("{compared} ROS 1 MD5 sums equal genpy's");
}

/// Every connection of every corpus ROS 1 bag (recorded by Debian's rosbag): the MD5 computed
/// from the `message_definition` the bag carries equals the `md5sum` rosbag stored beside it.
#[test]
fn md5_from_bag_definitions_equals_the_recorded_md5() {
    let Some(root) = rbag_testkit::corpus("md5_from_bag_definitions_equals_the_recorded_md5", "ros1") else { return };
    let mut checked = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        let Ok(reader) = rbag_storage::open(&path) else { continue };
        for c in reader.connections() {
            let mut reg = Registry::new(rbag_msg::Dialect::Ros1);
            reg.add_concatenated(&c.message_type, &c.definition).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(reg.md5(&c.message_type).unwrap(), c.metadata["md5sum"], "{} {}", path.display(), c.topic);
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked}");
    eprintln!("{checked} connections' MD5 sums recomputed");
}
