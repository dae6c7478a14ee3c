//! `rbag play --ros2 --storage-config-file`: rosbag2's SQLite3 `read: pragmas:` run on the
//! reader's connections, shown by their effect (`locking_mode = EXCLUSIVE` keeps another
//! process from writing the bag while it is played), and a bad pragma is an error naming the
//! config file, the bag file and the pragma. Each test has its own DDS domain and temp dir.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rbag_storage::{Connection, Format};
use rbag_testkit::ros2::{cdr, loopback_uri, Domain};

const LONG: Duration = Duration::from_secs(30);

/// A single-file SQLite3 bag of a few strings on `/chatter` (rollback journal, as rbag and
/// rosbag2 leave their files by default).
fn bag(dir: &Path) -> PathBuf {
    let path = dir.join("talk.db3");
    let mut w = rbag_storage::create(&path, Format::Sqlite3, &Default::default()).unwrap();
    let c = Connection {
        topic: "/chatter".into(),
        message_type: "std_msgs/msg/String".into(),
        encoding: "cdr".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros2msg".into(),
        ..Connection::default()
    };
    let id = w.add_connection(&c).unwrap();
    for i in 0..5u64 {
        let t = 1_700_000_000_000_000_000 + i * 100_000_000;
        w.write(id, t, t, &cdr::string_msg(&format!("hello {i}"))).unwrap();
    }
    w.finish().unwrap();
    path
}

fn rbag(domain: &Domain) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
    c.env("ROS_DOMAIN_ID", domain.id().to_string())
        .env("CYCLONEDDS_URI", loopback_uri())
        .env_remove("ROS_LOCALHOST_ONLY");
    c
}

/// `rbag play --ros2 --start-paused`, which opens the bag and then waits; killed on drop.
struct Paused {
    child: Child,
    log: PathBuf,
}

impl Paused {
    fn start(domain: &Domain, dir: &Path, bag: &Path, config: &Path) -> Paused {
        let log = dir.join("play.log");
        let child = rbag(domain)
            .args(["play", "--ros2", "--disable-keyboard-controls", "--start-paused", "--storage-config-file"])
            .arg(config)
            .arg(bag)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let p = Paused { child, log };
        // Waits until rbag holds the bag open.
        let start = Instant::now();
        let target = bag.canonicalize().unwrap();
        loop {
            let open = std::fs::read_dir(format!("/proc/{}/fd", p.child.id()))
                .map(|fds| fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == target)))
                .unwrap_or(false);
            if open {
                return p;
            }
            assert!(start.elapsed() < LONG, "rbag never opened the bag:\n{}", p.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Another process's write to `bag` (a table created and committed): `Err` with SQLite's
/// message when it cannot get the lock at once.
fn write_from_elsewhere(bag: &Path, n: usize) -> Result<(), String> {
    let db = rusqlite::Connection::open(bag).unwrap();
    db.busy_timeout(Duration::ZERO).unwrap();
    db.execute_batch(&format!("CREATE TABLE probe_{n} (x); INSERT INTO probe_{n} VALUES (1);"))
        .map_err(|e| e.to_string())
}

#[test]
fn read_pragmas_run_on_the_connection_that_reads_the_bag() {
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = bag(tmp.path());
    let config = tmp.path().join("sqlite.yaml");
    std::fs::write(&config, "read:\n  pragmas: [\"locking_mode = EXCLUSIVE\"]\n").unwrap();
    let play = Paused::start(&domain, tmp.path(), &bag, &config);
    // Once rbag has read the file in EXCLUSIVE locking mode it keeps its lock: a write from
    // another process is refused. (A write may slip in between the open and the first read.)
    let start = Instant::now();
    let mut n = 0;
    let refused = loop {
        n += 1;
        match write_from_elsewhere(&bag, n) {
            Err(e) => break e,
            Ok(()) => assert!(start.elapsed() < LONG, "writes still go through:\n{}", play.log()),
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(refused.contains("database is locked"), "{refused}");
    // Held, not a read in passing.
    std::thread::sleep(Duration::from_millis(300));
    assert!(write_from_elsewhere(&bag, n + 1).is_err(), "{}", play.log());
    let log = play.log();
    assert!(!log.contains("not run") && !log.contains("panicked"), "{log}");
}

#[test]
fn without_read_pragmas_the_bag_stays_writable_while_played() {
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = bag(tmp.path());
    let config = tmp.path().join("sqlite.yaml");
    std::fs::write(&config, "write:\n  pragmas: [\"locking_mode = EXCLUSIVE\"]\n").unwrap();
    let play = Paused::start(&domain, tmp.path(), &bag, &config);
    std::thread::sleep(Duration::from_millis(500));
    for n in 0..5 {
        write_from_elsewhere(&bag, n).unwrap_or_else(|e| panic!("{e}\n{}", play.log()));
        std::thread::sleep(Duration::from_millis(50));
    }
    // A file with write pragmas only says they are for recording.
    assert!(play.log().contains("write pragmas apply to recording only"), "{}", play.log());
}

/// `rbag play --ros2 --storage-config-file CONFIG BAG`, run to its end.
fn play_with(domain: &Domain, config: &Path, bag: &Path) -> std::process::Output {
    rbag(domain)
        .args(["play", "--ros2", "--disable-keyboard-controls", "--storage-config-file"])
        .arg(config)
        .arg(bag)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_bad_read_pragma_names_the_config_file_the_bag_and_the_pragma() {
    let domain = Domain::new();
    let tmp = tempfile::tempdir().unwrap();
    let bag = bag(tmp.path());
    let config = tmp.path().join("bad-pragmas.yaml");
    std::fs::write(&config, "read:\n  pragmas: [\"locking_mode EXCLUSIVE\"]\n").unwrap();
    let out = play_with(&domain, &config, &bag);
    let err = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    assert!(code != 0 && code != 101, "exit {code}: {err}");
    assert!(!err.contains("panicked at"), "{err}");
    for needle in ["bad-pragmas.yaml", "talk.db3", "locking_mode EXCLUSIVE", "syntax error"] {
        assert!(err.contains(needle), "no {needle:?} in: {err}");
    }
    // A pragma rosbag2 refuses is refused when the file is read, before any bag is opened.
    std::fs::write(&config, "read:\n  pragmas: [\"cache_size = 10; DROP TABLE messages\"]\n").unwrap();
    let out = play_with(&domain, &config, &bag);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("bad-pragmas.yaml") && err.contains("DROP TABLE"), "{err}");
    let db = rusqlite::Connection::open(&bag).unwrap();
    let n: i64 = db.query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 5);
}
