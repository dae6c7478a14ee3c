//! The bundled type store and `--msg-path`: the store's ROS 1 MD5 sums equal genpy's, every
//! distro parses and resolves within itself, its ROS 2 RIHS01 hashes equal rosbags', and
//! Debian's ROS 2 test interface files load from disk.

use std::path::{Path, PathBuf};
use std::process::Command;

use rbag_msg::store::{self, Distro};
use rbag_msg::{msg_path, Dialect, Registry};
use rbag_testkit::{oracle_python, repo_root, rosbag_python, skip};

fn store_dir() -> PathBuf {
    repo_root().join("crates/rbag-msg/store")
}

/// Runs an oracle script and parses the JSON object it prints.
fn oracle(python: &Path, script: &str, args: &[PathBuf]) -> serde_json::Map<String, serde_json::Value> {
    let out = Command::new(python)
        .arg(repo_root().join("tests/oracle").join(script))
        .args(args)
        .output()
        .expect("oracle runs");
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("oracle prints JSON")
}

#[test]
fn distro_names_round_trip() {
    for d in Distro::ALL {
        assert_eq!(d.to_string().parse::<Distro>().unwrap(), d);
    }
    assert_eq!("Humble".parse::<Distro>().unwrap(), Distro::Humble);
    let e = "rolling".parse::<Distro>().unwrap_err().to_string();
    assert!(e.contains("rolling") && e.contains("kilted"), "{e}");
}

/// Every type of every distro parses, and every nested type it names is in the same distro.
#[test]
fn every_distro_parses_and_resolves_within_itself() {
    for d in Distro::ALL {
        let reg = store::registry(d);
        assert_eq!(reg.dialect(), d.dialect());
        for name in store::types(d) {
            for field in &reg.get(name).unwrap().fields {
                if !field.ty.is_primitive() {
                    let nested = reg.resolve(&field.ty.base, name);
                    assert!(reg.contains(&nested), "{d}: {name}.{} needs {nested}", field.name);
                }
            }
            assert!(store::text(d, name).is_some(), "{d}: {name}");
        }
        eprintln!("{d}: {} types", reg.len());
    }
    // What the store is for: the common types, in each dialect's names.
    assert!(store::registry(Distro::Noetic).contains("sensor_msgs/Imu"));
    assert!(store::registry(Distro::Noetic).contains("tf2_msgs/TFMessage"));
    assert!(store::registry(Distro::Humble).contains("sensor_msgs/msg/PointCloud2"));
    assert!(store::registry(Distro::Humble).contains("rosbag2_interfaces/msg/WriteSplitEvent"));
    assert!(!store::registry(Distro::Humble).contains("service_msgs/msg/ServiceEventInfo"));
    for later in [Distro::Iron, Distro::Jazzy, Distro::Kilted] {
        assert!(store::registry(later).contains("service_msgs/msg/ServiceEventInfo"), "{later}");
        assert!(store::registry(later).len() > store::registry(Distro::Humble).len(), "{later}");
    }
}

/// A later distro is humble with its overlay: a type changed in jazzy is jazzy's there, humble's
/// in humble; the text lookup follows the same rule.
#[test]
fn overlays_replace_humble_types() {
    let fields = |d| store::registry(d).get("rosbag2_interfaces/msg/WriteSplitEvent").unwrap().fields.len();
    assert_eq!(fields(Distro::Humble), 2);
    assert_eq!(fields(Distro::Jazzy), 3);
    assert!(store::text(Distro::Jazzy, "rosbag2_interfaces/WriteSplitEvent").unwrap().contains("node_name"));
    assert!(!store::text(Distro::Humble, "rosbag2_interfaces/msg/WriteSplitEvent").unwrap().contains("node_name"));
    assert!(store::text(Distro::Noetic, "std_msgs/msg/Header").unwrap().contains("# sequence ID"));
}

fn ros1_store_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for pkg in std::fs::read_dir(store_dir().join("ros1_noetic")).unwrap() {
        for f in std::fs::read_dir(pkg.unwrap().path().join("msg")).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    files.sort();
    files
}

/// Every bundled ROS 1 type's MD5 equals the `_md5sum` of Debian's generated Python class.
#[test]
fn ros1_store_md5_equals_genpy() {
    let test = "ros1_store_md5_equals_genpy";
    let Some(python) = rosbag_python(test) else { return };
    let files = ros1_store_files();
    assert_eq!(files.len(), store::types(Distro::Noetic).count());
    let genpy = oracle(&python, "ros1_md5.py", &files);
    let reg = store::registry(Distro::Noetic);
    let mut missing = std::collections::BTreeSet::new();
    let mut compared = 0;
    for name in store::types(Distro::Noetic) {
        match genpy.get(name).and_then(|v| v.as_str()) {
            Some(want) => {
                assert_eq!(reg.md5(name).unwrap(), want, "{name}");
                compared += 1;
            }
            None => {
                missing.insert(format!("python3-{}", name.split('/').next().unwrap().replace('_', "-")));
            }
        }
    }
    if !missing.is_empty() {
        skip(test, &format!("genpy modules missing: {}", missing.into_iter().collect::<Vec<_>>().join(" ")));
    }
    assert!(compared > 0);
    eprintln!("{compared} bundled ROS 1 MD5 sums equal genpy's");
}

/// Every bundled ROS 2 type's RIHS01 hash equals rosbags' for that distro (with `char` fields
/// described as `uint8`, as rosidl does and rosbags does not: see the oracle script).
#[test]
fn ros2_store_rihs01_equals_rosbags() {
    let Some(python) = oracle_python("ros2_store_rihs01_equals_rosbags") else { return };
    for d in [Distro::Humble, Distro::Iron, Distro::Jazzy, Distro::Kilted] {
        let want = oracle(&python, "store_rihs01.py", &[d.name().into()]);
        let reg = store::registry(d);
        for name in store::types(d) {
            let want =
                want.get(name).and_then(|v| v.as_str()).unwrap_or_else(|| panic!("rosbags' {d} store lacks {name}"));
            assert_eq!(reg.rihs01(name).unwrap(), want, "{d}: {name}");
        }
        eprintln!("{d}: {} RIHS01 hashes equal rosbags'", reg.len());
    }
}

/// Debian's `ros2-test-interface-files` (package `test_msgs`, installed under another name).
#[test]
fn msg_path_loads_debians_test_interface_files() {
    let dir = Path::new("/usr/share/test_interface_files");
    if !dir.join("msg").is_dir() {
        skip("msg_path_loads_debians_test_interface_files", "Debian's ros2-test-interface-files is not installed");
        return;
    }
    let mut reg = Registry::new(Dialect::Ros2);
    let n = msg_path::load_as(&mut reg, dir, "test_msgs").unwrap();
    assert_eq!(n, 16, "12 .msg, 3 .srv and 1 .action files");
    for ty in [
        "BasicTypes",
        "Arrays",
        "BoundedSequences",
        "UnboundedSequences",
        "Constants",
        "Defaults",
        "Strings",
        "WStrings",
        "Nested",
        "MultiNested",
        "Empty",
    ] {
        assert!(reg.contains(&format!("test_msgs/msg/{ty}")), "{ty}");
    }
    let basic = reg.get("test_msgs/msg/BasicTypes").unwrap();
    assert_eq!(basic.fields.len(), 13);
    let nested = reg.get("test_msgs/msg/Nested").unwrap();
    assert_eq!(reg.resolve(&nested.fields[0].ty.base, "test_msgs/msg/Nested"), "test_msgs/msg/BasicTypes");
    let defaults = reg.get("test_msgs/msg/Defaults").unwrap();
    assert_eq!(defaults.fields[0].default.as_deref(), Some("true"));
    // Services and actions come with the types rosidl derives from them.
    for ty in [
        "srv/BasicTypes_Request",
        "srv/BasicTypes_Response",
        "srv/BasicTypes_Event",
        "action/Fibonacci_Goal",
        "action/Fibonacci_FeedbackMessage",
    ] {
        assert!(reg.contains(&format!("test_msgs/{ty}")), "{ty}");
    }
    assert_eq!(reg.get("test_msgs/srv/BasicTypes_Request").unwrap().fields.len(), 14);

    // Without an override the package is named after the directory.
    let mut reg = Registry::new(Dialect::Ros2);
    msg_path::load(&mut reg, dir).unwrap();
    assert!(reg.contains("test_interface_files/msg/BasicTypes"));
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("rbag-msg-path-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn msg_path_accepts_each_layout() {
    let s = Scratch::new("layouts");
    s.write("prefix/share/a_msgs/msg/A.msg", "int32 x\n");
    s.write("prefix/share/a_msgs/msg/B.msg", "A a\n");
    s.write("prefix/share/a_msgs/msg/C.idl", "not read\n");
    s.write("prefix/share/b_msgs/msg/B.msg", "a_msgs/A a\n");
    s.write("prefix/share/not_a_package/README", "x\n");
    s.write("prefix/share/b_msgs/srv/S.srv", "int32 a\n---\nB b\n");
    s.write("flat_msgs/F.msg", "string s\n");
    s.write("flat_msgs/notes.txt", "x\n");

    // The types a service's derived types reference, added with it.
    let core = ["builtin_interfaces/msg/Time", "service_msgs/msg/ServiceEventInfo", "unique_identifier_msgs/msg/UUID"];
    let load = |rel: &str| {
        let mut reg = Registry::new(Dialect::Ros2);
        msg_path::load(&mut reg, &s.0.join(rel)).unwrap();
        reg.names().filter(|n| !core.contains(n)).map(str::to_string).collect::<Vec<_>>()
    };
    let all = [
        "a_msgs/msg/A",
        "a_msgs/msg/B",
        "b_msgs/msg/B",
        "b_msgs/srv/S",
        "b_msgs/srv/S_Event",
        "b_msgs/srv/S_Request",
        "b_msgs/srv/S_Response",
    ];
    assert_eq!(load("prefix"), all, "install prefix");
    assert_eq!(load("prefix/share"), all, "share directory");
    assert_eq!(load("prefix/share/b_msgs/srv"), all[3..], "srv directory");
    assert_eq!(load("prefix/share/a_msgs"), ["a_msgs/msg/A", "a_msgs/msg/B"], "package directory");
    assert_eq!(load("prefix/share/a_msgs/msg"), ["a_msgs/msg/A", "a_msgs/msg/B"], "msg directory");
    assert_eq!(load("flat_msgs"), ["flat_msgs/msg/F"], "flat directory");

    // ROS 1 reads only .msg files.
    let mut reg = Registry::new(Dialect::Ros1);
    assert_eq!(msg_path::load(&mut reg, &s.0.join("prefix")).unwrap(), 3);
    assert_eq!(msg_path::load_as(&mut reg, &s.0.join("flat_msgs"), "renamed_msgs").unwrap(), 1);
    assert_eq!(msg_path::load_as(&mut reg, &s.0.join("prefix/share/a_msgs"), "a_msgs").unwrap(), 2);
    assert!(reg.contains("renamed_msgs/F"));
    assert!(reg.md5("a_msgs/B").is_ok(), "B's nested A resolves in its package");
}

#[test]
fn msg_path_errors_name_the_file_and_line() {
    let s = Scratch::new("errors");
    s.write("bad_msgs/msg/Good.msg", "int32 x\n");
    s.write("bad_msgs/msg/Bad.msg", "# comment\nint32 x\nfloat64[x] y\n");
    let mut reg = Registry::new(Dialect::Ros2);
    let e = msg_path::load(&mut reg, &s.0.join("bad_msgs")).unwrap_err().to_string();
    assert!(e.contains("bad_msgs/msg/Bad.msg") && e.contains("line 3"), "{e}");

    s.write("bad_srvs/srv/Bad.srv", "int32 a\n---\nint32 b\nbad[ c\n");
    let e = msg_path::load(&mut reg, &s.0.join("bad_srvs")).unwrap_err().to_string();
    assert!(e.contains("bad_srvs/srv/Bad.srv") && e.contains("line 4"), "{e}");

    let missing = s.0.join("no_such_dir");
    let e = msg_path::load(&mut reg, &missing).unwrap_err().to_string();
    assert!(e.contains(&missing.display().to_string()), "{e}");
}

/// The bundled services (action_msgs' CancelGoal) parse against every ROS 2 distro, with the
/// derived types a bag of actions records.
#[test]
fn bundled_services_derive_their_event_types() {
    for d in [Distro::Humble, Distro::Iron, Distro::Jazzy, Distro::Kilted] {
        let mut reg = store::registry(d).clone();
        store::add_services(&mut reg).unwrap_or_else(|e| panic!("{d}: {e}"));
        for t in ["Request", "Response", "Event"] {
            assert!(reg.contains(&format!("action_msgs/srv/CancelGoal_{t}")), "{d}: {t}");
        }
        assert!(reg.rihs01("action_msgs/srv/CancelGoal_Event").is_ok(), "{d}");
    }
}
