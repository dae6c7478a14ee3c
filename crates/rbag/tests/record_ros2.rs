//! `rbag record --ros2` against real Cyclone DDS publishers (`crates/rbag-testkit/peers/
//! cyclone_peer.py`, Cyclone's own Python binding, speaking ROS 2 topic and type names). Bags are
//! read back with third-party readers: rosbags (`rosbags.rosbag2.Reader`), the `mcap` Python
//! library, and ruamel.yaml for metadata.yaml (`tests/peers/ros2_read.py`,
//! `tests/oracle/ros2_dump.py`); every payload is compared with the bytes the publisher printed
//! (`PUBLISHED <i> <hex>`), up to Cyclone's padding to a multiple of 4. Transient-local graphs
//! use `tests/peers/ros2_acked_pub.py`, which says when every recorder acknowledged its history.
//!
//! Every test has its own DDS domain (`Domain`) and temp directory, and every process it starts
//! gets `ROS_DOMAIN_ID` and `CYCLONEDDS_URI` (the loopback-only Cyclone config): nothing leaves
//! the loopback interface. No assertion depends on speed: tests wait, with generous timeouts,
//! for a state (a publisher's `DONE` after its reliable samples were acknowledged, the recorder's
//! `Subscribed to topic` line, or the messages showing up in the bag being written).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use rbag_storage::Filter;
use rbag_testkit::ros1::tempfile_dir::Dir;
use rbag_testkit::ros2::{available, loopback_uri, same_payload, CyclonePeer, Domain};
use rbag_testkit::{oracle_python, ros2_dump};
use serde_json::Value;

/// How long to wait for anything that should happen by itself.
const LONG: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The Cyclone peer's Python (with the rosbags and mcap oracles in the same venv), or `None`
/// after recording a skip (a failure under CI).
fn setup(test: &str) -> Option<PathBuf> {
    let py = available(test)?;
    oracle_python(test)?;
    Some(py)
}

/// The rbag binary on `domain`, loopback only.
fn rbag(domain: &Domain) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
    c.env("ROS_DOMAIN_ID", domain.id().to_string())
        .env("CYCLONEDDS_URI", loopback_uri())
        .env_remove("ROS_VERSION")
        .env_remove("ROS_LOCALHOST_ONLY")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("CYCLONEDDS_HOME")
        .stdin(Stdio::null());
    c
}

fn run(mut c: Command) -> Output {
    c.output().expect("rbag runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn no_panic(what: &str, log: &str) {
    assert!(!log.contains("panicked at") && !log.contains("RUST_BACKTRACE"), "{what} panicked:\n{log}");
}

/// One running `rbag record --ros2 ARGS -o DIR/NAME`; its stderr goes to DIR/log/NAME.err.
/// Killed on drop.
struct Recorder {
    name: String,
    child: Child,
    out: PathBuf,
    log: PathBuf,
    status: Option<ExitStatus>,
}

fn record(domain: &Domain, dir: &Path, name: &str, args: &[&str]) -> Recorder {
    let out = dir.join(name);
    let log = dir.join("log").join(format!("{name}.err"));
    let mut c = rbag(domain);
    c.current_dir(dir).args(["record", "--ros2"]).args(args).arg("-o").arg(&out);
    c.stdout(File::create(dir.join("log").join(format!("{name}.out"))).unwrap()).stderr(File::create(&log).unwrap());
    let child = c.spawn().expect("starting rbag record --ros2");
    Recorder { name: name.to_string(), child, out, log, status: None }
}

impl Recorder {
    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn running(&mut self) -> bool {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status.is_none()
    }

    /// Waits for `needle` on stderr; false after `timeout` or when rbag exited without it.
    fn wait_err(&mut self, needle: &str, timeout: Duration) -> bool {
        let start = Instant::now();
        loop {
            if self.stderr().contains(needle) {
                return true;
            }
            if !self.running() || start.elapsed() > timeout {
                return self.stderr().contains(needle);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn expect_err(&mut self, needle: &str) {
        if !self.wait_err(needle, LONG) {
            panic!(
                "rbag record ({}) printed no {needle:?} within {LONG:?} (status {:?}):\n{}",
                self.name,
                self.status,
                self.stderr()
            );
        }
    }

    /// Waits for `Subscribed to topic 'TOPIC' (TYPE)`; an empty `ty` takes any type.
    fn expect_subscribed(&mut self, topic: &str, ty: &str) {
        if ty.is_empty() {
            self.expect_err(&format!("Subscribed to topic '{topic}' ("));
        } else {
            self.expect_err(&format!("Subscribed to topic '{topic}' ({ty})"));
        }
    }

    /// The topics it said it subscribed to.
    fn subscribed(&self) -> BTreeSet<String> {
        self.stderr()
            .lines()
            .filter_map(|l| l.strip_prefix("Subscribed to topic '"))
            .filter_map(|l| l.split('\'').next())
            .map(str::to_string)
            .collect()
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        while self.running() && start.elapsed() < timeout {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.status
    }

    /// Sends `sig`, waits for the exit, and checks nothing panicked.
    fn stop_with(&mut self, sig: i32) -> ExitStatus {
        assert!(self.running(), "rbag record ({}) exited by itself ({:?}):\n{}", self.name, self.status, self.stderr());
        self.signal(sig);
        let st = self.wait_exit(LONG).unwrap_or_else(|| {
            panic!("rbag record ({}) did not stop within {LONG:?} of signal {sig}:\n{}", self.name, self.stderr())
        });
        no_panic(&format!("rbag record ({})", self.name), &self.stderr());
        st
    }

    /// SIGINT; expects exit 0 and a metadata.yaml.
    fn stop(&mut self) {
        let st = self.stop_with(libc::SIGINT);
        assert_eq!(st.code(), Some(0), "rbag record ({}) exit status after SIGINT:\n{}", self.name, self.stderr());
        assert!(
            self.out.join("metadata.yaml").exists(),
            "no metadata.yaml in {} after SIGINT:\n{}",
            self.out.display(),
            self.stderr()
        );
    }

    fn kill9(&mut self) {
        assert!(self.running(), "rbag record ({}) exited by itself ({:?}):\n{}", self.name, self.status, self.stderr());
        self.signal(libc::SIGKILL);
        assert!(self.wait_exit(LONG).is_some(), "SIGKILL did not end rbag");
    }

    /// Messages of `topic` in the bag being written, as far as closed MCAP chunks show (a chunk
    /// closes when a message comes a second after its first, so this needs a steady stream; 0
    /// while nothing is readable yet). Only used to know when to stop waiting.
    fn live_count(&self, topic: &str) -> usize {
        let Ok(r) = rbag_storage::open(&self.out) else { return 0 };
        let ids: BTreeSet<u32> = r.connections().iter().filter(|c| c.topic == topic).map(|c| c.id).collect();
        let Ok(iter) = r.messages(&Filter::default()) else { return 0 };
        iter.filter_map(Result::ok).filter(|m| ids.contains(&m.connection)).count()
    }

    /// Waits until the bag being written shows `n` messages of `topic`.
    fn wait_recorded(&mut self, topic: &str, n: usize) {
        let start = Instant::now();
        loop {
            let got = self.live_count(topic);
            if got >= n {
                return;
            }
            assert!(self.running(), "rbag record ({}) exited ({:?}):\n{}", self.name, self.status, self.stderr());
            if start.elapsed() > LONG {
                panic!(
                    "rbag record ({}) had {got} of {n} messages of {topic} after {LONG:?}:\n{}",
                    self.name,
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if self.running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn publisher(py: &Path, domain: &Domain, topic: &str, ty: &str, extra: &[&str]) -> CyclonePeer {
    let mut args = vec!["--topic", topic, "--type", ty];
    args.extend_from_slice(extra);
    CyclonePeer::spawn(py, domain, "pub", &args)
}

/// The samples a peer published, in order (checks the indices run 0, 1, 2…).
fn published(peer: &CyclonePeer) -> Vec<Vec<u8>> {
    let p = peer.published();
    for (k, (i, _)) in p.iter().enumerate() {
        assert_eq!(*i, k, "the peer's PUBLISHED lines are out of order");
    }
    p.into_iter().map(|(_, b)| b).collect()
}

fn done(peer: &CyclonePeer) {
    peer.expect_line("DONE", LONG);
}

/// `tests/peers/ros2_acked_pub.py`: a reliable transient-local writer (keep-all, or keep-last
/// `depth`) that publishes `count` samples at once and prints `ACKED <n>` whenever at least
/// `readers` readers matched and acknowledged everything. Killed on drop.
struct AckedPub {
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

#[allow(clippy::too_many_arguments)] // one per flag of ros2_acked_pub.py
fn acked_pub(
    py: &Path,
    domain: &Domain,
    dir: &Path,
    topic: &str,
    ty: &str,
    count: usize,
    depth: usize,
    readers: usize,
) -> AckedPub {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("acked-{}-{k}", topic.replace('/', "_"));
    let (out, err) = (dir.join("log").join(format!("{name}.out")), dir.join("log").join(format!("{name}.err")));
    let child = Command::new(py)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ros2_acked_pub.py"))
        .args(["--domain", &domain.id().to_string(), "--topic", topic, "--type", ty])
        .args([
            "--count",
            &count.to_string(),
            "--depth",
            &depth.to_string(),
            "--readers",
            &readers.to_string(),
            "--size",
            "8000",
        ])
        .env("CYCLONEDDS_URI", loopback_uri())
        .env("PYTHONUNBUFFERED", "1")
        .env_remove("ROS_DOMAIN_ID")
        .env_remove("CYCLONEDDS_HOME")
        .stdin(Stdio::null())
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .spawn()
        .expect("starting ros2_acked_pub.py");
    AckedPub { child, out, err }
}

impl AckedPub {
    fn lines(&self) -> Vec<String> {
        let t = std::fs::read_to_string(&self.out).unwrap_or_default();
        let complete = t.rfind('\n').map_or("", |e| &t[..e]);
        complete.lines().map(str::to_string).collect()
    }

    fn output(&self) -> String {
        let clip = |t: String| if t.len() > 4000 { format!("…{}", &t[t.len() - 4000..]) } else { t };
        format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            clip(std::fs::read_to_string(&self.out).unwrap_or_default()),
            std::fs::read_to_string(&self.err).unwrap_or_default()
        )
    }

    /// Waits until `needle` began `times` lines.
    fn expect_lines(&self, needle: &str, times: usize) {
        let start = Instant::now();
        while self.lines().iter().filter(|l| l.starts_with(needle)).count() < times {
            assert!(
                start.elapsed() < LONG,
                "the acked publisher printed {needle:?} fewer than {times} times in {LONG:?}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn done(&self) {
        self.expect_lines("DONE", 1);
    }

    /// Waits for its `times`-th `ACKED` line: every matched reader has every sample.
    fn acked(&self, times: usize) {
        self.expect_lines("ACKED", times);
    }

    fn published(&self) -> Vec<Vec<u8>> {
        let v: Vec<(usize, Vec<u8>)> = self
            .lines()
            .iter()
            .filter_map(|l| {
                let mut p = l.strip_prefix("PUBLISHED ")?.splitn(2, ' ');
                Some((p.next()?.parse().ok()?, rbag_testkit::ros2::from_hex(p.next()?)))
            })
            .collect();
        for (k, (i, _)) in v.iter().enumerate() {
            assert_eq!(*i, k, "PUBLISHED lines out of order");
        }
        v.into_iter().map(|(_, b)| b).collect()
    }
}

impl Drop for AckedPub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A moment between "everything acknowledged" and stopping the recorder: a reader acknowledges
/// what its DDS layer holds, which reaches rbag's queue a moment later. Not an assertion.
fn settle() {
    std::thread::sleep(Duration::from_secs(1));
}

/// `tests/peers/ros2_read.py MODE PATH`.
fn read_py(py: &Path, mode: &str, path: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ros2_read.py");
    let out = Command::new(py).arg(script).arg(mode).arg(path).output().expect("ros2_read.py runs");
    assert!(out.status.success(), "ros2_read.py {mode} {}: {}", path.display(), text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("ros2_read.py output: {e}"))
}

/// The bag read with rosbags; panics when rosbags raised.
fn rosbags(py: &Path, dir: &Path) -> Value {
    let v = read_py(py, "rosbags", dir);
    assert!(v["error"].is_null(), "rosbags could not read {}: {}", dir.display(), v["error"]);
    v
}

/// Payloads of `topic` in a ros2_read.py dump, in the dump's order.
fn payloads(v: &Value, topic: &str) -> Vec<Vec<u8>> {
    v["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m[0] == topic)
        .map(|m| {
            let h = m[2].as_str().expect("hex");
            assert!(!h.starts_with("len:"), "{topic}: payload too big to compare ({h})");
            rbag_testkit::ros2::from_hex(h)
        })
        .collect()
}

/// Topics with at least one message in a ros2_read.py dump.
fn topics_with_messages(v: &Value) -> BTreeSet<String> {
    v["messages"].as_array().unwrap().iter().map(|m| m[0].as_str().unwrap().to_string()).collect()
}

fn hex_head(b: &[u8]) -> String {
    b.iter().take(40).map(|x| format!("{x:02x}")).collect::<String>() + if b.len() > 40 { "…" } else { "" }
}

/// `got` is `want`, sample by sample, up to Cyclone's padding.
fn assert_same(what: &str, got: &[Vec<u8>], want: &[Vec<u8>]) {
    assert_eq!(got.len(), want.len(), "{what}: {} of {} published samples recorded", got.len(), want.len());
    assert_prefix(what, got, want);
}

/// `got` is a prefix of `want`, up to Cyclone's padding.
fn assert_prefix(what: &str, got: &[Vec<u8>], want: &[Vec<u8>]) {
    assert!(got.len() <= want.len(), "{what}: {} recorded, only {} published", got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            same_payload(g, w),
            "{what}: sample {k} is {} bytes {}, the publisher sent {} bytes {}",
            g.len(),
            hex_head(g),
            w.len(),
            hex_head(w)
        );
    }
}

/// `got` is `want` with some samples missing (best effort), order kept.
fn assert_subsequence(what: &str, got: &[Vec<u8>], want: &[Vec<u8>]) {
    let mut it = want.iter();
    for (k, g) in got.iter().enumerate() {
        assert!(
            it.any(|w| same_payload(g, w)),
            "{what}: recorded sample {k} ({} bytes {}) is not among the published ones, in order",
            g.len(),
            hex_head(g)
        );
    }
}

/// metadata.yaml parsed by ruamel.yaml: its `rosbag2_bagfile_information`.
fn metadata(py: &Path, dir: &Path) -> Value {
    let v = ros2_dump(py, "metadata", &dir.join("metadata.yaml"));
    v["rosbag2_bagfile_information"].clone()
}

/// A topic's entry in metadata.yaml's topics_with_message_count.
fn topic_meta<'a>(meta: &'a Value, topic: &str) -> &'a Value {
    meta["topics_with_message_count"]
        .as_array()
        .expect("topics_with_message_count")
        .iter()
        .find(|t| t["topic_metadata"]["name"] == topic)
        .unwrap_or_else(|| panic!("metadata.yaml has no topic {topic}: {meta}"))
}

fn meta_topics(meta: &Value) -> BTreeSet<String> {
    meta["topics_with_message_count"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["topic_metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// offered_qos_profiles of a topic as (reliability, durability) pairs.
fn offered(meta: &Value, topic: &str) -> Vec<(String, String)> {
    // Metadata version 9 (rbag's default) stores a list.
    let q = &topic_meta(meta, topic)["topic_metadata"]["offered_qos_profiles"];
    q.as_array()
        .unwrap_or_else(|| panic!("offered_qos_profiles of {topic}: {q}"))
        .iter()
        .map(|p| {
            (p["reliability"].as_str().unwrap_or("?").to_string(), p["durability"].as_str().unwrap_or("?").to_string())
        })
        .collect()
}

fn s(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn storage_files(meta: &Value) -> Vec<String> {
    meta["relative_file_paths"]
        .as_array()
        .expect("relative_file_paths")
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 1. What -a records
// ---------------------------------------------------------------------------------------------

/// `-a` records a String and an Imu (nested) publisher: every sample, in order, byte for byte;
/// ROS type names; definitions stored; the publishers' offered QoS in metadata.yaml. rosbags
/// and the mcap library both read the bag.
#[test]
fn records_strings_and_imu_with_types_definitions_and_qos() {
    const T: &str = "records_strings_and_imu_with_types_definitions_and_qos";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let mut rec = record(&domain, dir.path(), "bag", &["-a"]);
    rec.expect_err("Recording to");
    // Each publisher waits until a reader (rbag's) matched before it publishes.
    let chatter = publisher(&py, &domain, "rt/chatter", "string", &["--count", "120", "--rate", "100", "--reliable"]);
    let imu = publisher(
        &py,
        &domain,
        "rt/imu",
        "imu",
        &["--count", "40", "--rate", "50", "--reliable", "--transient-local", "--depth", "50"],
    );
    rec.expect_subscribed("/chatter", "std_msgs/msg/String");
    rec.expect_subscribed("/imu", "sensor_msgs/msg/Imu");
    // DONE comes after the reliable samples were acknowledged by rbag's reader.
    done(&chatter);
    done(&imu);
    settle();
    rec.stop();
    let log = rec.stderr();
    assert!(
        log.contains("/chatter: 120 message(s)") && log.contains("/imu: 40 message(s)"),
        "the summary counts them:\n{log}"
    );
    let (want_chatter, want_imu) = (published(&chatter), published(&imu));

    // rosbags over the directory.
    let v = rosbags(&py, &rec.out);
    assert_same("rosbags /chatter", &payloads(&v, "/chatter"), &want_chatter);
    assert_same("rosbags /imu", &payloads(&v, "/imu"), &want_imu);
    assert_eq!(v["message_count"], 160);
    assert_eq!(topics_with_messages(&v), s(&["/chatter", "/imu"]));
    let t = &v["topics"];
    assert_eq!(t["/chatter"]["type"], "std_msgs/msg/String");
    assert_eq!(t["/imu"]["type"], "sensor_msgs/msg/Imu");
    assert_eq!((t["/chatter"]["count"].as_u64(), t["/imu"]["count"].as_u64()), (Some(120), Some(40)));
    assert_eq!(t["/chatter"]["msgdef_format"], "MSG");
    assert_eq!(t["/chatter"]["msgdef"].as_str().unwrap().trim(), "string data");
    let imu_def = t["/imu"]["msgdef"].as_str().unwrap();
    for part in [
        "std_msgs/Header header",
        "geometry_msgs/Quaternion orientation",
        "float64[9] orientation_covariance",
        "MSG: std_msgs/Header",
        "MSG: geometry_msgs/Vector3",
    ] {
        assert!(imu_def.contains(part), "the Imu definition lacks {part:?}:\n{imu_def}");
    }
    assert_eq!(t["/chatter"]["qos"], serde_json::json!([{"reliability": "reliable", "durability": "volatile"}]));
    assert_eq!(t["/imu"]["qos"], serde_json::json!([{"reliability": "reliable", "durability": "transient_local"}]));

    // metadata.yaml (ruamel.yaml).
    let meta = metadata(&py, &rec.out);
    assert_eq!(meta["storage_identifier"], "mcap");
    assert_eq!(meta["message_count"], 160);
    assert_eq!(topic_meta(&meta, "/chatter")["message_count"], 120);
    assert_eq!(topic_meta(&meta, "/imu")["message_count"], 40);
    assert_eq!(topic_meta(&meta, "/imu")["topic_metadata"]["type"], "sensor_msgs/msg/Imu");
    assert_eq!(topic_meta(&meta, "/chatter")["topic_metadata"]["serialization_format"], "cdr");
    assert_eq!(offered(&meta, "/chatter"), vec![("reliable".to_string(), "volatile".to_string())]);
    assert_eq!(offered(&meta, "/imu"), vec![("reliable".to_string(), "transient_local".to_string())]);
    let files = storage_files(&meta);
    assert_eq!(files.len(), 1, "{files:?}");

    // The mcap library over the one file.
    let m = read_py(&py, "mcap", &rec.out.join(&files[0]));
    assert!(m["error"].is_null(), "the mcap library: {}", m["error"]);
    assert_eq!(m["profile"], "ros2");
    assert_eq!(m["schemas"]["std_msgs/msg/String"]["encoding"], "ros2msg");
    assert_eq!(m["schemas"]["sensor_msgs/msg/Imu"]["encoding"], "ros2msg");
    assert!(
        m["schemas"]["sensor_msgs/msg/Imu"]["data"].as_str().unwrap().contains("MSG: geometry_msgs/Quaternion"),
        "{}",
        m["schemas"]
    );
    assert_eq!(m["channels"]["/chatter"]["message_encoding"], "cdr");
    assert_eq!(m["channels"]["/imu"]["schema"], "sensor_msgs/msg/Imu");
    assert_same("mcap /chatter", &payloads(&m, "/chatter"), &want_chatter);
    assert_same("mcap /imu", &payloads(&m, "/imu"), &want_imu);
}

/// A topic whose first publisher appears while rbag records is recorded too.
#[test]
fn records_a_topic_that_appears_later() {
    const T: &str = "records_a_topic_that_appears_later";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let mut rec = record(&domain, dir.path(), "bag", &["-a"]);
    rec.expect_err("Recording to");
    let first = publisher(&py, &domain, "rt/chatter", "string", &["--count", "30", "--rate", "50", "--reliable"]);
    rec.expect_subscribed("/chatter", "std_msgs/msg/String");
    done(&first);
    assert!(!rec.stderr().contains("/late"), "nothing knows /late yet");
    let late = publisher(&py, &domain, "rt/late", "imu", &["--count", "25", "--rate", "50", "--reliable"]);
    rec.expect_subscribed("/late", "sensor_msgs/msg/Imu");
    done(&late);
    settle();
    rec.stop();
    let v = rosbags(&py, &rec.out);
    assert_same("/chatter", &payloads(&v, "/chatter"), &published(&first));
    assert_same("/late", &payloads(&v, "/late"), &published(&late));
    let meta = metadata(&py, &rec.out);
    assert_eq!(topic_meta(&meta, "/late")["message_count"], 25);
}

/// A type rbag has no definition for is recorded raw, with a warning naming it.
#[test]
fn records_an_unknown_type_raw_with_a_warning() {
    const T: &str = "records_an_unknown_type_raw_with_a_warning";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let mut rec = record(&domain, dir.path(), "bag", &["-a"]);
    rec.expect_err("Recording to");
    let mystery = publisher(&py, &domain, "rt/mystery", "unknown", &["--count", "40", "--rate", "100", "--reliable"]);
    rec.expect_subscribed("/mystery", "rbag_test/msg/Mystery");
    done(&mystery);
    settle();
    rec.stop();
    let log = rec.stderr();
    let warning = log
        .lines()
        .find(|l| l.starts_with("warning") && l.contains("rbag_test/msg/Mystery"))
        .unwrap_or_else(|| panic!("no warning names the unknown type:\n{log}"));
    assert!(warning.contains("/mystery"), "{warning}");
    let want = published(&mystery);
    let v = rosbags(&py, &rec.out);
    assert_eq!(v["topics"]["/mystery"]["type"], "rbag_test/msg/Mystery");
    assert_same("rosbags /mystery", &payloads(&v, "/mystery"), &want);
    let meta = metadata(&py, &rec.out);
    assert_eq!(topic_meta(&meta, "/mystery")["topic_metadata"]["type"], "rbag_test/msg/Mystery");
    assert_eq!(topic_meta(&meta, "/mystery")["message_count"], 40);
    let m = read_py(&py, "mcap", &rec.out.join(&storage_files(&meta)[0]));
    assert!(m["error"].is_null(), "the mcap library: {}", m["error"]);
    assert_same("mcap /mystery", &payloads(&m, "/mystery"), &want);
}

// ---------------------------------------------------------------------------------------------
// 2. QoS
// ---------------------------------------------------------------------------------------------

/// A transient-local publisher that published before rbag started is recorded from its
/// history (depth 5 of 7 published: the last five), and rbag stores its offer.
#[test]
fn transient_local_history_from_before_the_recording_is_captured() {
    const T: &str = "transient_local_history_from_before_the_recording_is_captured";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let latched = acked_pub(&py, &domain, dir.path(), "rt/latched", "string", 7, 5, 1);
    latched.done();
    let mut rec = record(&domain, dir.path(), "bag", &["-a"]);
    rec.expect_subscribed("/latched", "std_msgs/msg/String");
    latched.acked(1);
    settle();
    rec.stop();
    let want = latched.published();
    assert_eq!(want.len(), 7);
    let v = rosbags(&py, &rec.out);
    assert_same("/latched (the writer's last 5)", &payloads(&v, "/latched"), &want[2..]);
    let meta = metadata(&py, &rec.out);
    assert_eq!(offered(&meta, "/latched"), vec![("reliable".to_string(), "transient_local".to_string())]);
}

/// A best-effort and a reliable publisher on one topic: rbag subscribes best effort (with
/// rosbag2's warning) so both match; both publishers' samples are recorded, in order, and both
/// offers are stored. The two publish blobs of different sizes, so their samples differ.
#[test]
fn best_effort_and_reliable_publishers_on_one_topic_are_both_recorded() {
    const T: &str = "best_effort_and_reliable_publishers_on_one_topic_are_both_recorded";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    // The first look at the graph comes at once (nothing there yet), the next after 15 s, by
    // which time both publishers exist even on a loaded machine (two Python interpreters
    // loading Cyclone): rbag sees both offers when it subscribes.
    let mut rec = record(&domain, dir.path(), "bag", &["-a", "-p", "15000"]);
    rec.expect_err("Recording to");
    let t0 = Instant::now();
    let be = publisher(
        &py,
        &domain,
        "rt/mixed",
        "blob",
        &["--count", "40", "--rate", "40", "--best-effort", "--size", "100", "--match-timeout", "60"],
    );
    let rel = publisher(
        &py,
        &domain,
        "rt/mixed",
        "blob",
        &["--count", "40", "--rate", "40", "--reliable", "--size", "200", "--match-timeout", "60"],
    );
    be.expect_line("READY", LONG);
    rel.expect_line("READY", LONG);
    let ready_after = t0.elapsed();
    rec.expect_subscribed("/mixed", "sensor_msgs/msg/CompressedImage");
    done(&be);
    done(&rel);
    // Best effort is not acknowledged: a moment for the last samples to cross loopback.
    std::thread::sleep(Duration::from_secs(2));
    rec.stop();
    let log = rec.stderr();
    assert!(
        log.contains("some, but not all, publishers on topic /mixed offer reliable"),
        "rbag did not see both offers when it subscribed (both publishers were up {ready_after:?} after rbag started, its second look was at 15 s):\n{log}"
    );
    let v = rosbags(&py, &rec.out);
    let got = payloads(&v, "/mixed");
    let (want_be, want_rel) = (published(&be), published(&rel));
    let from_be: Vec<Vec<u8>> = got.iter().filter(|p| want_be.iter().any(|w| same_payload(p, w))).cloned().collect();
    let from_rel: Vec<Vec<u8>> = got.iter().filter(|p| want_rel.iter().any(|w| same_payload(p, w))).cloned().collect();
    assert_eq!(from_be.len() + from_rel.len(), got.len(), "every recorded sample is one a publisher sent");
    eprintln!(
        "recorded {} of {} best-effort and {} of {} reliable samples",
        from_be.len(),
        want_be.len(),
        from_rel.len(),
        want_rel.len()
    );
    assert!(!from_be.is_empty(), "no sample of the best-effort publisher was recorded\n{log}");
    assert!(!from_rel.is_empty(), "no sample of the reliable publisher was recorded\n{log}");
    assert_subsequence("best-effort publisher", &from_be, &want_be);
    assert_subsequence("reliable publisher", &from_rel, &want_rel);
    let meta = metadata(&py, &rec.out);
    let mut offers = offered(&meta, "/mixed");
    offers.sort();
    assert_eq!(
        offers,
        vec![("best_effort".to_string(), "volatile".to_string()), ("reliable".to_string(), "volatile".to_string())]
    );
}

/// `--qos-profile-overrides-path`: a best-effort override still records a reliable publisher;
/// a transient-local override on a topic where only one of two publishers offers
/// transient-local gets that publisher's history, which the adapted (volatile) subscription of
/// a recorder without overrides does not.
#[test]
fn qos_profile_overrides_replace_the_adapted_profile() {
    const T: &str = "qos_profile_overrides_replace_the_adapted_profile";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let overrides = dir.path().join("overrides.yaml");
    std::fs::write(&overrides, "/chatter:\n  reliability: best_effort\n  history: keep_all\nlatched:\n  reliability: reliable\n  durability: transient_local\n  history: keep_last\n  depth: 10\n").unwrap();
    let ov = overrides.to_str().unwrap();
    // As in the mixed-QoS test: the second look at the graph (15 s) sees every publisher.
    let mut with = record(&domain, dir.path(), "with", &["-a", "-p", "15000", "--qos-profile-overrides-path", ov]);
    let mut without = record(&domain, dir.path(), "without", &["-a", "-p", "15000", "-x", "/chatter"]);
    with.expect_err("Recording to");
    without.expect_err("Recording to");
    let t0 = Instant::now();
    let latched = acked_pub(&py, &domain, dir.path(), "rt/latched", "string", 5, 5, 2);
    let volatile = publisher(
        &py,
        &domain,
        "rt/latched",
        "string",
        &["--count", "0", "--reliable", "--no-wait", "--linger", "600"],
    );
    latched.done();
    done(&volatile);
    let up_after = t0.elapsed();
    with.expect_subscribed("/latched", "std_msgs/msg/String");
    without.expect_subscribed("/latched", "std_msgs/msg/String");
    // Only `with` records /chatter; the publisher waits for its (best-effort) reader.
    let chatter = publisher(
        &py,
        &domain,
        "rt/chatter",
        "string",
        &["--count", "50", "--rate", "50", "--reliable", "--match-timeout", "60"],
    );
    with.expect_subscribed("/chatter", "std_msgs/msg/String");
    done(&chatter);
    // Both recorders acknowledged /latched (the volatile one without taking the history).
    latched.acked(1);
    // Best effort is not acknowledged: a moment for the last samples to cross loopback.
    std::thread::sleep(Duration::from_secs(2));
    with.stop();
    without.stop();

    let vw = rosbags(&py, &with.out);
    let got = payloads(&vw, "/chatter");
    eprintln!("the best-effort subscription recorded {} of 50", got.len());
    assert!(
        !got.is_empty(),
        "nothing of the reliable publisher was recorded through a best-effort override:\n{}",
        with.stderr()
    );
    assert_subsequence("overridden best-effort /chatter", &got, &published(&chatter));
    assert_same("overridden transient-local /latched", &payloads(&vw, "/latched"), &latched.published());
    let vo = rosbags(&py, &without.out);
    let log = without.stderr();
    if log.contains("some, but not all, publishers on topic /latched offer transient-local") {
        assert!(payloads(&vo, "/latched").is_empty(), "a volatile subscription got history:\n{log}");
    } else {
        panic!("the recorder without overrides did not see both /latched publishers at once (they were up {up_after:?} after it started, its second look was at 15 s):\n{log}");
    }
    assert!(!with.stderr().contains("some, but not all"), "overrides replace the adapted profile:\n{}", with.stderr());
}

// ---------------------------------------------------------------------------------------------
// 3. Selection
// ---------------------------------------------------------------------------------------------

/// The selection flags, one recorder per case, all on one graph of transient-local keep-all
/// publishers (so every recorder gets every sample whenever it subscribes).
#[test]
fn selection_flags_choose_the_topics() {
    const T: &str = "selection_flags_choose_the_topics";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    const N: usize = 10;
    let graph = [
        ("/chatter", "string"),
        ("/imu", "imu"),
        ("/other", "string"),
        ("/_hidden", "string"),
        ("/ns/deep", "unknown"),
    ];
    let all = ["/chatter", "/imu", "/other", "/ns/deep"];
    let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        ("topics", vec!["--topics", "/chatter", "imu"], vec!["/chatter", "/imu"]),
        ("positional", vec!["chatter", "/other"], vec!["/chatter", "/other"]),
        ("regex", vec!["-e", "/(ch|o).*"], vec!["/chatter", "/other"]),
        ("regex_long_whole_name", vec!["--regex", "chat|/ns/.*"], vec!["/ns/deep"]),
        ("all", vec!["-a"], all.to_vec()),
        ("all_topics", vec!["--all-topics"], all.to_vec()),
        (
            "include_hidden",
            vec!["-a", "--include-hidden-topics"],
            vec!["/chatter", "/imu", "/other", "/ns/deep", "/_hidden"],
        ),
        ("named_hidden", vec!["--topics", "/_hidden", "/chatter"], vec!["/_hidden", "/chatter"]),
        ("exclude_regex_short", vec!["-a", "-x", ".*e.*"], vec!["/imu"]),
        ("exclude_regex_long", vec!["-e", "/.*", "--exclude-regex", "/ns/.*"], vec!["/chatter", "/imu", "/other"]),
        ("exclude_topics", vec!["-a", "--exclude-topics", "/imu", "other"], vec!["/chatter", "/ns/deep"]),
        ("exclude_wins_over_named", vec!["--topics", "/chatter", "/imu", "--exclude-topics", "/imu"], vec!["/chatter"]),
        (
            "topic_types",
            vec!["-a", "--topic-types", "sensor_msgs/msg/Imu", "rbag_test/msg/Mystery"],
            vec!["/imu", "/ns/deep"],
        ),
        ("exclude_topic_types", vec!["-a", "--exclude-topic-types", "std_msgs/msg/String"], vec!["/imu", "/ns/deep"]),
    ];
    // Each publisher knows how many recorders should take its topic, and says when they all
    // have its N samples.
    let pubs: BTreeMap<&str, AckedPub> = graph
        .iter()
        .map(|(t, ty)| {
            let readers = cases.iter().filter(|(_, _, want)| want.contains(t)).count();
            (*t, acked_pub(&py, &domain, dir.path(), &format!("rt{t}"), ty, N, 0, readers))
        })
        .collect();
    for p in pubs.values() {
        p.done();
    }
    let mut recs: Vec<(Recorder, BTreeSet<String>, &str)> =
        cases.iter().map(|(name, args, want)| (record(&domain, dir.path(), name, args), s(want), *name)).collect();
    for (rec, want, _) in recs.iter_mut() {
        for t in want.iter() {
            rec.expect_subscribed(t, "");
        }
    }
    for p in pubs.values() {
        p.acked(1);
    }
    // Every recorder has long seen the whole graph: what it did not take by now, it left out.
    std::thread::sleep(Duration::from_secs(2));
    for (rec, _, _) in recs.iter_mut() {
        rec.stop();
    }
    // The other recorders' /events/write_split publishers are in the graph too (rosbag2's
    // `-a` takes them as well): not part of what the flags are tested on.
    let graph_only = |topics: BTreeSet<String>| -> BTreeSet<String> {
        topics.into_iter().filter(|t| t != "/events/write_split").collect()
    };
    for (rec, want, name) in &recs {
        let log = rec.stderr();
        assert_eq!(&graph_only(rec.subscribed()), want, "case {name}: subscribed topics\n{log}");
        let v = rosbags(&py, &rec.out);
        assert_eq!(&graph_only(topics_with_messages(&v)), want, "case {name}: topics in the bag\n{log}");
        let meta = metadata(&py, &rec.out);
        assert_eq!(&graph_only(meta_topics(&meta)), want, "case {name}: topics in metadata.yaml");
        for t in want {
            assert_same(&format!("case {name}: {t}"), &payloads(&v, t), &pubs[t.as_str()].published());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Storage and output flags
// ---------------------------------------------------------------------------------------------

/// Storage flags, one recorder each on one graph of transient-local keep-all publishers:
/// SQLite3 (plain and `resilient`), an MCAP preset, splitting with `-b`, zstd compression of
/// files and of messages, and `--custom-data`.
#[test]
fn storage_and_output_flags() {
    const T: &str = "storage_and_output_flags";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("sqlite", vec!["-s", "sqlite3"]),
        ("resilient", vec!["--storage", "sqlite3", "--storage-preset-profile", "resilient"]),
        ("zstd_fast", vec!["--storage-preset-profile", "zstd_fast"]),
        ("split", vec!["-b", "100000"]),
        ("split_long", vec!["--max-bag-size", "100KiB", "-s", "sqlite3"]),
        ("file_zstd", vec!["--compression-mode", "file", "--compression-format", "zstd"]),
        ("sqlite_message_zstd", vec!["-s", "sqlite3", "--compression-mode", "message", "--compression-format", "zstd"]),
        ("custom", vec!["--custom-data", "robot=r2", "mission=bags 1"]),
    ];
    let chatter = acked_pub(&py, &domain, dir.path(), "rt/chatter", "string", 50, 0, cases.len());
    let blob = acked_pub(&py, &domain, dir.path(), "rt/blob", "blob", 40, 0, cases.len());
    chatter.done();
    blob.done();
    let want: BTreeMap<&str, Vec<Vec<u8>>> =
        [("/chatter", chatter.published()), ("/blob", blob.published())].into_iter().collect();

    let mut recs: Vec<(Recorder, &str)> = cases
        .iter()
        .map(|(name, args)| {
            // The other recorders' split events (/events/write_split) are not what is tested.
            let mut a = vec!["-a", "-x", "/events/write_split"];
            a.extend_from_slice(args);
            (record(&domain, dir.path(), name, &a), *name)
        })
        .collect();
    for (rec, _) in recs.iter_mut() {
        rec.expect_subscribed("/chatter", "std_msgs/msg/String");
        rec.expect_subscribed("/blob", "sensor_msgs/msg/CompressedImage");
    }
    chatter.acked(1);
    blob.acked(1);
    settle();
    for (rec, _) in recs.iter_mut() {
        rec.stop();
    }
    for (rec, name) in &recs {
        let log = rec.stderr();
        let v = rosbags(&py, &rec.out);
        for (t, w) in &want {
            assert_same(&format!("case {name}: {t}"), &payloads(&v, t), w);
        }
        let meta = metadata(&py, &rec.out);
        assert_eq!(meta["message_count"], 90, "case {name}");
        let files = storage_files(&meta);
        for f in &files {
            assert!(rec.out.join(f).is_file(), "case {name}: metadata.yaml lists {f}, which is missing");
        }
        let sqlite = name.contains("sqlite") || *name == "resilient" || *name == "split_long";
        assert_eq!(meta["storage_identifier"], if sqlite { "sqlite3" } else { "mcap" }, "case {name}");
        let ext = if sqlite { ".db3" } else { ".mcap" };
        match *name {
            "split" | "split_long" => {
                assert!(files.len() >= 2, "case {name}: -b split the bag into {files:?}\n{log}");
                assert!(files.iter().all(|f| f.ends_with(ext)), "{files:?}");
                let listed: BTreeSet<String> =
                    meta["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
                assert_eq!(listed, files.iter().cloned().collect(), "case {name}: files and relative_file_paths agree");
                let per_file: u64 =
                    meta["files"].as_array().unwrap().iter().map(|f| f["message_count"].as_u64().unwrap()).sum();
                assert_eq!(per_file, 90, "case {name}: per-file counts add up");
            }
            "file_zstd" => {
                assert_eq!(meta["compression_format"], "zstd");
                assert_eq!(meta["compression_mode"].as_str().map(str::to_ascii_uppercase).as_deref(), Some("FILE"));
                assert!(files.iter().all(|f| f.ends_with(".mcap.zstd")), "case {name}: {files:?}");
                let raw = std::fs::read(rec.out.join(&files[0])).unwrap();
                assert_eq!(&raw[..4], &[0x28, 0xb5, 0x2f, 0xfd], "case {name}: a zstd frame");
            }
            "sqlite_message_zstd" => {
                assert_eq!(meta["compression_format"], "zstd");
                assert_eq!(meta["compression_mode"].as_str().map(str::to_ascii_uppercase).as_deref(), Some("MESSAGE"));
                assert!(files.iter().all(|f| f.ends_with(ext)), "case {name}: {files:?}");
                assert_eq!(v["compression_mode"], "message", "case {name}: rosbags decompressed each message");
            }
            _ => {
                assert_eq!(files.len(), 1, "case {name}: {files:?}");
                assert!(files[0].ends_with(ext), "case {name}: {files:?}");
                assert!(
                    meta["compression_mode"].as_str().unwrap_or("").is_empty()
                        || meta["compression_mode"] == "NONE"
                        || meta["compression_mode"] == "none",
                    "case {name}: {}",
                    meta["compression_mode"]
                );
            }
        }
        if *name == "custom" {
            assert_eq!(meta["custom_data"], serde_json::json!({"robot": "r2", "mission": "bags 1"}));
        }
        if !sqlite && *name != "file_zstd" {
            for f in &files {
                let m = read_py(&py, "mcap", &rec.out.join(f));
                assert!(m["error"].is_null(), "case {name}: the mcap library on {f}: {}", m["error"]);
                assert_eq!(m["profile"], "ros2");
            }
        }
    }
}

/// An existing output directory is refused without `--force` (exit 1, named, left alone);
/// `--force` replaces a bag directory; it will not delete a directory that is not a bag.
#[test]
fn existing_output_directory_needs_force() {
    const T: &str = "existing_output_directory_needs_force";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let latched = acked_pub(&py, &domain, dir.path(), "rt/chatter", "string", 3, 0, 1);
    latched.done();

    let mut first = record(&domain, dir.path(), "bag", &["-a"]);
    latched.acked(1);
    settle();
    first.stop();
    std::fs::write(first.out.join("marker"), "from before").unwrap();

    // Without --force: refused, nothing touched.
    let mut c = rbag(&domain);
    c.args(["record", "--ros2", "-a", "-o"]).arg(&first.out);
    let o = run(c);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    no_panic("rbag record", &err);
    assert!(err.contains(first.out.to_str().unwrap()), "the error names the directory: {err}");
    assert!(err.contains("--force"), "and says how to replace it: {err}");
    assert!(first.out.join("marker").exists() && first.out.join("metadata.yaml").exists());

    // A directory that is not a bag is not deleted, even with --force.
    let other = dir.path().join("not_a_bag");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("precious.txt"), "keep me").unwrap();
    let mut c = rbag(&domain);
    c.args(["record", "--ros2", "-a", "--force", "-o"]).arg(&other);
    let o = run(c);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(other.to_str().unwrap()), "{err}");
    assert!(other.join("precious.txt").exists(), "--force deleted a directory that is not a bag");

    // --force replaces only what is provably a bag (issue 13): the stray file is named, and
    // nothing is touched.
    let mut c = rbag(&domain);
    c.args(["record", "--ros2", "-a", "--force", "-o"]).arg(&first.out);
    let o = run(c);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("marker"), "the error names the stray file: {err}");
    assert!(first.out.join("marker").exists() && first.out.join("metadata.yaml").exists());
    std::fs::remove_file(first.out.join("marker")).unwrap();

    // With --force: the old bag is replaced by a new recording.
    let mut second = record(&domain, dir.path(), "bag", &["-a", "--force"]);
    second.expect_subscribed("/chatter", "std_msgs/msg/String");
    latched.acked(2);
    settle();
    second.stop();
    assert!(!second.out.join("marker").exists(), "--force replaced the directory");
    let v = rosbags(&py, &second.out);
    assert_same("/chatter after --force", &payloads(&v, "/chatter"), &latched.published());
}

/// Usage errors exit 2 and create nothing.
#[test]
fn usage_errors_exit_2() {
    const T: &str = "usage_errors_exit_2";
    let domain = Domain::new();
    let dir = Dir::new(T);
    let cases: &[(&str, &[&str], &str)] = &[
        ("no topics", &[], "-a"),
        ("bad regex", &["-e", "(unclosed"], "(unclosed"),
        ("bad exclude regex", &["-a", "-x", "[z-a]"], "[z-a]"),
        ("unknown storage", &["-a", "-s", "rosbag9"], "rosbag9"),
        ("unknown compression mode", &["-a", "--compression-mode", "everything"], "everything"),
        ("unknown flag", &["-a", "--no-such-flag"], "--no-such-flag"),
    ];
    for (what, args, needle) in cases {
        let out = dir.path().join("out");
        let mut c = rbag(&domain);
        c.args(["record", "--ros2"]).args(*args).arg("-o").arg(&out);
        let o = run(c);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: exit status\n{err}");
        no_panic(what, &err);
        assert!(err.contains(needle), "{what}: the message mentions {needle:?}: {err}");
        assert!(!out.exists(), "{what}: an output directory was created");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Signals
// ---------------------------------------------------------------------------------------------

/// SIGINT and SIGTERM both close a valid bag: exit 0, metadata.yaml, every sample.
#[test]
fn sigint_and_sigterm_close_a_valid_bag() {
    const T: &str = "sigint_and_sigterm_close_a_valid_bag";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    // One topic per recorder, so each publisher starts when its own recorder matched.
    let mut int = record(&domain, dir.path(), "int", &["--topics", "/chatter"]);
    let mut term = record(&domain, dir.path(), "term", &["/chatter2", "-s", "sqlite3"]);
    int.expect_err("Recording to");
    term.expect_err("Recording to");
    let p_int = publisher(&py, &domain, "rt/chatter", "string", &["--count", "100", "--rate", "50", "--reliable"]);
    let p_term = publisher(&py, &domain, "rt/chatter2", "string", &["--count", "100", "--rate", "50", "--reliable"]);
    done(&p_int);
    done(&p_term);
    settle();
    for (rec, sig, topic, p) in
        [(&mut int, libc::SIGINT, "/chatter", &p_int), (&mut term, libc::SIGTERM, "/chatter2", &p_term)]
    {
        let want = published(p);
        let st = rec.stop_with(sig);
        let log = rec.stderr();
        assert_eq!(st.code(), Some(0), "exit status after signal {sig}:\n{log}");
        assert!(rec.out.join("metadata.yaml").exists(), "metadata.yaml after signal {sig}:\n{log}");
        assert!(log.contains(&format!("{topic}: 100 message(s)")), "{log}");
        let v = rosbags(&py, &rec.out);
        assert_same(&format!("{topic} after signal {sig}"), &payloads(&v, topic), &want);
        assert_eq!(topics_with_messages(&v), s(&[topic]));
        let meta = metadata(&py, &rec.out);
        assert_eq!(meta["message_count"], 100);
    }
}

fn info_and_reindex(domain: &Domain, bag: &Path) -> (String, String) {
    let mut c = rbag(domain);
    c.arg("info").arg(bag);
    let o = run(c);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "rbag info on a killed recording failed ({:?}):\n{out}\n{err}", o.status);
    no_panic("rbag info", &err);
    let mut c = rbag(domain);
    c.arg("reindex").arg(bag);
    let o = run(c);
    let rerr = text(&o.stderr);
    assert!(matches!(o.status.code(), Some(0) | Some(3)), "rbag reindex: {:?}\n{rerr}", o.status);
    no_panic("rbag reindex", &rerr);
    assert!(bag.join("metadata.yaml").exists(), "rbag reindex wrote no metadata.yaml:\n{rerr}");
    (out, rerr)
}

/// Payloads of `topic` read with rbag-storage.
fn rbag_payloads(bag: &Path, topic: &str) -> Vec<Vec<u8>> {
    let r = rbag_storage::open(bag).unwrap_or_else(|e| panic!("opening {}: {e}", bag.display()));
    let ids: BTreeSet<u32> = r.connections().iter().filter(|c| c.topic == topic).map(|c| c.id).collect();
    r.messages(&Filter::default())
        .unwrap()
        .map(|m| m.unwrap())
        .filter(|m| ids.contains(&m.connection))
        .map(|m| m.data.to_vec())
        .collect()
}

/// SIGKILL while recording MCAP (the default): `rbag info` reads what is there, `rbag reindex`
/// writes metadata.yaml, and what survives (the chunks closed every second) is a prefix of
/// what was published, as rbag and the mcap library's record stream both read it.
#[test]
fn sigkill_mcap_recording_is_recovered_by_reindex() {
    const T: &str = "sigkill_mcap_recording_is_recovered_by_reindex";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let mut rec = record(&domain, dir.path(), "bag", &["-a"]);
    rec.expect_err("Recording to");
    let chatter = publisher(&py, &domain, "rt/chatter", "string", &["--count", "150", "--rate", "50", "--reliable"]);
    rec.expect_subscribed("/chatter", "std_msgs/msg/String");
    done(&chatter);
    rec.kill9();
    assert!(!rec.out.join("metadata.yaml").exists(), "a killed recorder wrote no metadata.yaml");
    let (info, _) = info_and_reindex(&domain, &rec.out);
    assert!(info.contains("/chatter"), "{info}");
    let want = published(&chatter);
    let got = rbag_payloads(&rec.out, "/chatter");
    eprintln!("recovered {} of {} after SIGKILL", got.len(), want.len());
    assert!(!got.is_empty(), "nothing survived the SIGKILL");
    assert_prefix("recovered /chatter (rbag)", &got, &want);
    let meta = metadata(&py, &rec.out);
    assert_eq!(meta["message_count"].as_u64(), Some(got.len() as u64), "metadata.yaml counts what is there");
    assert_eq!(topic_meta(&meta, "/chatter")["topic_metadata"]["type"], "std_msgs/msg/String");
    let files = storage_files(&meta);
    assert_eq!(files.len(), 1);
    // The mcap library reads the file's records up to the chunk the kill left open.
    let m = read_py(&py, "mcap-stream", &rec.out.join(&files[0]));
    assert_eq!(m["profile"], "ros2");
    assert_same("recovered /chatter (mcap record stream)", &payloads(&m, "/chatter"), &got);
}

/// Records `-s sqlite3 --storage-preset-profile resilient` while 150 samples go out at 50 Hz,
/// SIGKILLs it after they were all acknowledged, and runs `rbag info` and `rbag reindex`.
/// Returns the recorder and what was published.
fn killed_resilient_sqlite(py: &Path, domain: &Domain, dir: &Path) -> (Recorder, Vec<Vec<u8>>) {
    let mut rec = record(domain, dir, "bag", &["-a", "-s", "sqlite3", "--storage-preset-profile", "resilient"]);
    rec.expect_err("Recording to");
    let chatter = publisher(py, domain, "rt/chatter", "string", &["--count", "150", "--rate", "50", "--reliable"]);
    rec.expect_subscribed("/chatter", "std_msgs/msg/String");
    done(&chatter);
    // Well past a second after the last sample: what a resilient recorder has is on disk.
    std::thread::sleep(Duration::from_secs(3));
    rec.kill9();
    assert!(!rec.out.join("metadata.yaml").exists(), "a killed recorder wrote no metadata.yaml");
    let (info, _) = info_and_reindex(domain, &rec.out);
    assert!(info.contains("/chatter"), "{info}");
    (rec, published(&chatter))
}

/// SIGKILL while recording SQLite3 with the `resilient` preset: `rbag info` and `rbag reindex`
/// work, and what rbag reads back is a prefix of what was published.
#[test]
fn sigkill_resilient_sqlite_recording_is_reindexed() {
    const T: &str = "sigkill_resilient_sqlite_recording_is_reindexed";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let (rec, want) = killed_resilient_sqlite(&py, &domain, dir.path());
    let got = rbag_payloads(&rec.out, "/chatter");
    eprintln!("rbag reads {} of {} after SIGKILL", got.len(), want.len());
    assert_prefix("recovered /chatter (rbag)", &got, &want);
    let meta = metadata(&py, &rec.out);
    assert_eq!(meta["message_count"].as_u64(), Some(got.len() as u64), "metadata.yaml counts what is there");
    assert_eq!(meta["storage_identifier"], "sqlite3");
}

/// The same, asking what the resilient preset is for: the samples received seconds before the
/// kill survive, and rosbags reads the reindexed bag.
#[test]
fn sigkill_resilient_sqlite_recording_keeps_what_it_received() {
    const T: &str = "sigkill_resilient_sqlite_recording_keeps_what_it_received";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let (rec, want) = killed_resilient_sqlite(&py, &domain, dir.path());
    let v = rosbags(&py, &rec.out);
    let got = payloads(&v, "/chatter");
    eprintln!("rosbags reads {} of {} after SIGKILL", got.len(), want.len());
    assert!(!got.is_empty(), "nothing survived the SIGKILL, though the last sample came 3 s before it");
    assert_prefix("recovered /chatter (rosbags)", &got, &want);
    assert_eq!(v["message_count"].as_u64(), Some(got.len() as u64));
    assert_same("rbag and rosbags agree", &rbag_payloads(&rec.out, "/chatter"), &got);
}

/// MCAP chunks close at least every second, so a SIGKILL should lose about a second: samples
/// that arrived several seconds before the kill, with nothing after them, must survive.
#[test]
fn sigkill_after_a_quiet_spell_keeps_what_came_before() {
    const T: &str = "sigkill_after_a_quiet_spell_keeps_what_came_before";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let mut rec = record(&domain, dir.path(), "bag", &["-a"]);
    rec.expect_err("Recording to");
    let chatter = publisher(&py, &domain, "rt/chatter", "string", &["--count", "20", "--rate", "50", "--reliable"]);
    rec.expect_subscribed("/chatter", "std_msgs/msg/String");
    done(&chatter);
    // Three chunk intervals of silence.
    std::thread::sleep(Duration::from_secs(3));
    rec.kill9();
    info_and_reindex(&domain, &rec.out);
    let got = rbag_payloads(&rec.out, "/chatter");
    assert_same("/chatter received 3 s before SIGKILL", &got, &published(&chatter));
}

// ---------------------------------------------------------------------------------------------
// 6. Bad input
// ---------------------------------------------------------------------------------------------

/// A tiny xorshift PRNG: reproducible garbage without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A datagram that starts like RTPS (header, then submessages with plausible ids and lying
/// lengths), or plain noise.
fn garbage(rng: &mut Rng) -> Vec<u8> {
    match rng.below(4) {
        0 => {
            let n = 1 + rng.below(1400) as usize;
            rng.bytes(n)
        }
        _ => {
            let mut d = b"RTPS".to_vec();
            d.extend_from_slice(&[2, 1, 0x01, 0x10]);
            d.extend(rng.bytes(12)); // guid prefix
            for _ in 0..1 + rng.below(6) {
                // DATA, DATA_FRAG, HEARTBEAT, ACKNACK, GAP, INFO_TS, INFO_DST, or anything.
                let ids = [0x15u8, 0x16, 0x07, 0x06, 0x08, 0x09, 0x0e, 0x0c, 0x12, rng.next() as u8];
                d.push(ids[rng.below(ids.len() as u64) as usize]);
                d.push(rng.next() as u8 & 0x0f); // flags, often little endian
                let body = rng.below(120) as usize;
                let claimed = match rng.below(4) {
                    0 => 0xffffu16,
                    1 => rng.next() as u16,
                    _ => body as u16,
                };
                d.extend_from_slice(&claimed.to_le_bytes());
                d.extend(rng.bytes(body));
            }
            d
        }
    }
}

/// Garbage UDP datagrams to every DDS port of the domain on 127.0.0.1 (discovery and user data,
/// all participant indices) while rbag records: it keeps recording, every sample of the good
/// topic is kept, and it stops cleanly.
#[test]
fn garbage_datagrams_to_the_domain_ports_do_not_disturb_recording() {
    const T: &str = "garbage_datagrams_to_the_domain_ports_do_not_disturb_recording";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let base = 7400 + 250 * domain.id() as u16;
    let mut ports = vec![base, base + 1];
    for i in 0..=32u16 {
        ports.push(base + 10 + 2 * i);
        ports.push(base + 11 + 2 * i);
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut rec = record(&domain, dir.path(), "bag", &["-a"]);
    rec.expect_err("Recording to");
    let noise = {
        let (stop, sent, ports) = (stop.clone(), sent.clone(), ports.clone());
        std::thread::spawn(move || {
            let sock = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp socket");
            let mut rng = Rng(0x9e3779b97f4a7c15 ^ u64::from(ports[0]));
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for &p in &ports {
                    let d = garbage(&mut rng);
                    if sock.send_to(&d, ("127.0.0.1", p)).is_ok() {
                        sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    // Discovery and data both happen under the noise.
    let chatter = publisher(&py, &domain, "rt/chatter", "string", &["--count", "150", "--rate", "50", "--reliable"]);
    rec.expect_subscribed("/chatter", "std_msgs/msg/String");
    done(&chatter);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    noise.join().unwrap();
    settle();
    assert!(sent.load(std::sync::atomic::Ordering::Relaxed) > 1000, "the noise went out");
    rec.stop();
    let v = rosbags(&py, &rec.out);
    assert_same("/chatter under noise", &payloads(&v, "/chatter"), &published(&chatter));
    assert_eq!(topics_with_messages(&v), s(&["/chatter"]));
}

/// Samples over `--max-sample-size` are dropped with a warning naming the topic; the other
/// topic is recorded whole and the exit is still 0.
#[test]
fn samples_over_max_sample_size_are_dropped_with_a_warning() {
    const T: &str = "samples_over_max_sample_size_are_dropped_with_a_warning";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let mut rec = record(&domain, dir.path(), "bag", &["-a", "--max-sample-size", "1MiB"]);
    rec.expect_err("Recording to");
    let big =
        publisher(&py, &domain, "rt/big", "blob", &["--count", "3", "--size", "2000000", "--reliable", "--no-hex"]);
    let small = publisher(&py, &domain, "rt/small", "blob", &["--count", "5", "--size", "1000", "--reliable"]);
    let chatter = publisher(&py, &domain, "rt/chatter", "string", &["--count", "100", "--rate", "50", "--reliable"]);
    rec.expect_subscribed("/big", "sensor_msgs/msg/CompressedImage");
    rec.expect_subscribed("/chatter", "std_msgs/msg/String");
    done(&big);
    done(&small);
    done(&chatter);
    rec.expect_err("larger than the limit");
    settle();
    rec.stop();
    let log = rec.stderr();
    let warning = log.lines().find(|l| l.contains("larger than the limit")).unwrap();
    assert!(warning.starts_with("warning") && warning.contains("/big"), "{warning}");
    assert!(
        !log.lines().any(|l| l.contains("larger than the limit") && (l.contains("/chatter") || l.contains("/small"))),
        "{log}"
    );
    let v = rosbags(&py, &rec.out);
    assert_same("/chatter", &payloads(&v, "/chatter"), &published(&chatter));
    assert_same("/small (under the limit)", &payloads(&v, "/small"), &published(&small));
    assert!(payloads(&v, "/big").is_empty(), "an oversized sample was recorded");
}

/// A publisher SIGKILLed mid-stream: the other topic is recorded whole, the killed one's
/// received samples are kept (a prefix of what it published), and rbag stops cleanly.
#[test]
fn a_publisher_killed_mid_stream_keeps_its_samples() {
    const T: &str = "a_publisher_killed_mid_stream_keeps_its_samples";
    let Some(py) = setup(T) else { return };
    let domain = Domain::new();
    let dir = Dir::new(T);
    let mut rec = record(&domain, dir.path(), "bag", &["-a"]);
    rec.expect_err("Recording to");
    let mut victim =
        publisher(&py, &domain, "rt/victim", "string", &["--count", "100000", "--rate", "50", "--reliable"]);
    rec.expect_subscribed("/victim", "std_msgs/msg/String");
    let good = publisher(&py, &domain, "rt/good", "imu", &["--count", "150", "--rate", "30", "--reliable"]);
    rec.expect_subscribed("/good", "sensor_msgs/msg/Imu");
    // Killed once rbag holds some of its samples.
    rec.wait_recorded("/victim", 20);
    victim.kill();
    let want_victim = published(&victim);
    done(&good);
    settle();
    // The killed publisher's departure is noticed (lease expiry) while recording goes on.
    rec.stop();
    let log = rec.stderr();
    let v = rosbags(&py, &rec.out);
    assert_same("/good", &payloads(&v, "/good"), &published(&good));
    let got = payloads(&v, "/victim");
    eprintln!("kept {} of the killed publisher's {} printed samples", got.len(), want_victim.len());
    assert!(got.len() >= 20, "the killed publisher's received samples were lost: {}\n{log}", got.len());
    // It may have sent a sample or two whose PUBLISHED line it never printed.
    let printed = got.len().min(want_victim.len());
    assert_prefix("/victim", &got[..printed], &want_victim);
    assert!(
        got.len() <= want_victim.len() + 2,
        "more /victim samples than it published: {} > {}",
        got.len(),
        want_victim.len()
    );
}
