//! A private ROS 2 (DDS) graph for one test: its own domain id, Cyclone confined to the loopback
//! interface, and a real Cyclone DDS peer (`peers/cyclone_peer.py`, Cyclone's Python binding in
//! the oracle venv) killed when it drops.
//!
//! Network safety: every DDS process a test starts, and the test process itself, uses
//! `CYCLONEDDS_URI=file://…/cyclonedds-loopback.xml` (unicast on `lo`, no multicast). Create a
//! [`Domain`] before any participant: it sets the variable for the test process.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use crate::ros1::tempfile_dir::Dir;
use crate::{repo_root, skip};

/// `crates/rbag-testkit/cyclonedds-loopback.xml`, absolute.
pub fn loopback_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cyclonedds-loopback.xml")
        .canonicalize()
        .expect("the loopback Cyclone config exists")
}

/// `CYCLONEDDS_URI` for the loopback config.
pub fn loopback_uri() -> String {
    format!("file://{}", loopback_config().display())
}

/// Points this process's Cyclone at the loopback config (once; before any participant exists,
/// since Cyclone reads the variable when it creates a domain).
pub fn use_loopback() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Edition 2021: set_var is safe; it runs before this process starts any DDS thread.
        std::env::set_var("CYCLONEDDS_URI", loopback_uri());
    });
}

/// `crates/rbag-testkit/peers/cyclone_peer.py`.
pub fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/cyclone_peer.py")
}

/// `crates/rbag-testkit/peers/graph_peer.py`: the `ros_discovery_info` half of `ros2 node list`.
pub fn graph_peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/graph_peer.py")
}

/// The oracle venv's Python if it imports Cyclone DDS's binding, or `None` after recording a
/// skip (a failure under CI).
pub fn available(test: &str) -> Option<PathBuf> {
    use_loopback();
    let python = repo_root().join(".peers/venv/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import cyclonedds.domain"])
        .env("CYCLONEDDS_URI", loopback_uri())
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some(python)
    } else {
        skip(
            test,
            &format!("Cyclone DDS's Python binding is missing from {} (run scripts/setup-peers.sh)", python.display()),
        );
        None
    }
}

/// The Fast DDS peer (`peers/fastdds_peer.cpp`) built with g++ against Debian's libfastrtps
/// into `dir`, or `None` after recording a skip (a failure under CI).
pub fn fastdds_peer(test: &str, dir: &Path) -> Option<PathBuf> {
    use_loopback();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/fastdds_peer.cpp");
    let exe = dir.join("fastdds_peer");
    let built = Command::new("g++")
        .args(["-O1", "-std=c++17", "-o"])
        .arg(&exe)
        .arg(&source)
        .args(["-lfastrtps", "-lfastcdr"])
        .stdin(Stdio::null())
        .output();
    match built {
        Ok(o) if o.status.success() => Some(exe),
        Ok(o) => {
            skip(
                test,
                &format!(
                    "the Fast DDS peer does not build (is libfastrtps-dev installed? run scripts/setup-peers.sh): {}",
                    String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("")
                ),
            );
            None
        }
        Err(e) => {
            skip(test, &format!("g++ did not run ({e}); run scripts/setup-peers.sh"));
            None
        }
    }
}

/// A DDS domain id no other test holds, for this value's lifetime: an exclusive lock on
/// `$TMPDIR/rbag-dds-domain-<id>.lock` (the kernel drops it when the process dies, so a killed
/// test leaves no stale claim). Ids are in 1..=200.
pub struct Domain {
    id: u32,
    _lock: File,
}

impl Domain {
    /// The first domain id tests draw from.
    pub const FIRST: u32 = 1;
    /// The last domain id tests draw from.
    pub const LAST: u32 = 200;

    /// Claims a free domain id and points Cyclone at the loopback config.
    pub fn new() -> Domain {
        use_loopback();
        let span = Self::LAST - Self::FIRST + 1;
        // Start somewhere different in every process so parallel tests rarely contend.
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let start = (std::process::id().wrapping_mul(7919) ^ nanos) % span;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            for k in 0..span {
                let id = Self::FIRST + (start + k) % span;
                let path = std::env::temp_dir().join(format!("rbag-dds-domain-{id}.lock"));
                let Ok(file) = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path) else {
                    continue;
                };
                if file.try_lock().is_ok() {
                    return Domain { id, _lock: file };
                }
            }
            assert!(Instant::now() < deadline, "no free DDS domain id in {}..={} for 60 s", Self::FIRST, Self::LAST);
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The domain id, for `ROS_DOMAIN_ID`.
    pub fn id(&self) -> u32 {
        self.id
    }
}

impl Default for Domain {
    fn default() -> Domain {
        Domain::new()
    }
}

/// Waits up to `timeout` for `child` to exit, remembering its status in `status` (a child is
/// reaped once); `None` if it still runs.
pub fn wait_child(child: &mut Child, status: &mut Option<ExitStatus>, timeout: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if status.is_none() {
            *status = child.try_wait().ok().flatten();
        }
        if status.is_some() || start.elapsed() > timeout {
            return *status;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One run of `cyclone_peer.py`; killed on drop. Its stdout and stderr go to files in a temp
/// directory (kept with `RBAG_KEEP_TEST_DIRS`).
pub struct CyclonePeer {
    child: Child,
    dir: Dir,
    status: Option<ExitStatus>,
}

impl CyclonePeer {
    /// Starts `cyclone_peer.py <sub> --domain <id> <args…>` (`sub` is `pub` or `sub`).
    pub fn spawn(python: &Path, domain: &Domain, sub: &str, args: &[&str]) -> CyclonePeer {
        Self::spawn_script(python, &peer_script(), domain, sub, args)
    }

    /// Starts another Cyclone peer script of `peers/` (`graph_peer.py`) the same way.
    pub fn spawn_script(python: &Path, script: &Path, domain: &Domain, sub: &str, args: &[&str]) -> CyclonePeer {
        let mut c = Command::new(python);
        c.arg(script)
            .arg(sub)
            .args(["--domain", &domain.id().to_string()])
            .args(args)
            .env("CYCLONEDDS_URI", loopback_uri())
            .env_remove("ROS_DOMAIN_ID")
            .env_remove("CYCLONEDDS_HOME");
        Self::spawn_command(c, &format!("cyclone-peer-{sub}"))
    }

    /// Starts `command` (a peer script with its arguments) with its output in files of a temp
    /// directory named after `label`.
    pub(crate) fn spawn_command(mut command: Command, label: &str) -> CyclonePeer {
        let dir = Dir::new(label);
        let out = File::create(dir.path().join("stdout")).expect("peer stdout file");
        let err = File::create(dir.path().join("stderr")).expect("peer stderr file");
        let child = command
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {label} ({:?}): {e}", command.get_program()));
        CyclonePeer { child, dir, status: None }
    }

    /// The peer's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Complete stdout lines so far (a line still being written is left out).
    pub fn lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.path().join("stdout")).unwrap_or_default();
        let complete = match text.rfind('\n') {
            Some(end) => &text[..end],
            None => "",
        };
        complete.lines().map(str::to_string).collect()
    }

    /// Waits up to `timeout` for a complete stdout line containing `needle`; returns it.
    pub fn wait_line(&self, needle: &str, timeout: Duration) -> Option<String> {
        let start = Instant::now();
        loop {
            if let Some(l) = self.lines().into_iter().find(|l| l.contains(needle)) {
                return Some(l);
            }
            if start.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// [`CyclonePeer::wait_line`], panicking with the peer's output when the line never comes.
    pub fn expect_line(&self, needle: &str, timeout: Duration) -> String {
        self.wait_line(needle, timeout)
            .unwrap_or_else(|| panic!("the Cyclone peer printed no {needle:?} within {timeout:?}:\n{}", self.output()))
    }

    /// Waits up to `timeout` for the peer to exit; `None` if it still runs.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        wait_child(&mut self.child, &mut self.status, timeout)
    }

    /// Kills the peer now and reaps it.
    pub fn kill(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }

    /// Everything it printed: stdout, then stderr (for failure messages).
    pub fn output(&self) -> String {
        let read = |name: &str| std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
        let clip = |s: String| {
            if s.len() <= 20_000 {
                return s;
            }
            let mut end = 20_000;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}… ({} bytes)\n", &s[..end], s.len())
        };
        format!("--- stdout ---\n{}--- stderr ---\n{}", clip(read("stdout")), clip(read("stderr")))
    }

    /// The `PUBLISHED <i> <hex>` lines as (i, bytes), in order.
    pub fn published(&self) -> Vec<(usize, Vec<u8>)> {
        self.lines()
            .iter()
            .filter_map(|l| {
                let mut parts = l.strip_prefix("PUBLISHED ")?.splitn(2, ' ');
                let i = parts.next()?.parse().ok()?;
                Some((i, from_hex(parts.next()?)))
            })
            .collect()
    }

    /// The `RECEIVED <json>` lines, parsed, in order.
    pub fn received(&self) -> Vec<serde_json::Value> {
        self.lines()
            .iter()
            .filter_map(|l| l.strip_prefix("RECEIVED "))
            .map(|j| serde_json::from_str(j).unwrap_or_else(|e| panic!("bad RECEIVED json {j:?}: {e}")))
            .collect()
    }

    /// The `RECEIVED_HEX <hex>` lines as bytes, in order.
    pub fn received_hex(&self) -> Vec<Vec<u8>> {
        self.lines().iter().filter_map(|l| l.strip_prefix("RECEIVED_HEX ")).map(from_hex).collect()
    }
}

/// `ros2 service call SERVICE rosbag2_interfaces/srv/SRV` as an rmw_cyclonedds client makes
/// it (the peer's `call`), with `value` as SetRate's rate or Seek's time in decimal seconds
/// (exact to the ns); the response's fields.
pub fn call_service(python: &Path, domain: &Domain, service: &str, srv: &str, value: &str) -> serde_json::Value {
    call_service_as(python, domain, service, srv, value, None)
}

/// [`call_service`] by a client built with Lyrical's layout of `srv`, whose type hash is
/// `lyrical_hash` (`None`: Jazzy's layout, no hash named).
pub fn call_service_as(
    python: &Path,
    domain: &Domain,
    service: &str,
    srv: &str,
    value: &str,
    lyrical_hash: Option<&str>,
) -> serde_json::Value {
    let mut args = vec!["--service", service, "--srv", srv, "--value", value];
    if let Some(h) = lyrical_hash {
        args.extend(["--type-hash", h]);
    }
    let mut peer = CyclonePeer::spawn(python, domain, "call", &args);
    let line = peer.expect_line("RESPONSE", Duration::from_secs(30));
    peer.wait_exit(Duration::from_secs(5));
    let json = line.trim_start_matches("RESPONSE ");
    serde_json::from_str(json).unwrap_or_else(|e| panic!("bad RESPONSE json {json:?}: {e}"))
}

impl Drop for CyclonePeer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Bytes from lowercase or uppercase hex (panics on anything else).
pub fn from_hex(s: &str) -> Vec<u8> {
    let s = s.trim();
    assert!(s.len().is_multiple_of(2), "odd-length hex ({} digits)", s.len());
    let digit = |c: u8| match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => panic!("not a hex digit: {:?}", c as char),
    };
    s.as_bytes().chunks(2).map(|p| digit(p[0]) << 4 | digit(p[1])).collect()
}

/// Whether two serialized samples are the same up to Cyclone's wire padding: Cyclone pads
/// payloads to a multiple of 4 and does not flag it, so one may carry up to 3 extra zero bytes.
pub fn same_payload(a: &[u8], b: &[u8]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long.len() - short.len() < 4 && long.starts_with(short) && long[short.len()..].iter().all(|&x| x == 0)
}

/// CDR (little endian, XCDR1) builders for the samples tests send, with the encapsulation header.
pub mod cdr {
    /// A little-endian CDR buffer; alignment counts from after the 4-byte header.
    #[derive(Debug, Clone)]
    pub struct Buf(pub Vec<u8>);

    impl Default for Buf {
        fn default() -> Buf {
            Buf::new()
        }
    }

    impl Buf {
        /// An empty CDR buffer with its little-endian encapsulation header.
        pub fn new() -> Buf {
            Buf(vec![0, 1, 0, 0])
        }
        fn align(&mut self, n: usize) {
            while !(self.0.len() - 4).is_multiple_of(n) {
                self.0.push(0);
            }
        }
        /// Appends a `uint32`, aligned.
        pub fn u32(&mut self, v: u32) -> &mut Buf {
            self.align(4);
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        }
        /// Appends an `int32`, aligned.
        pub fn i32(&mut self, v: i32) -> &mut Buf {
            self.align(4);
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        }
        /// Appends a `float64`, aligned.
        pub fn f64(&mut self, v: f64) -> &mut Buf {
            self.align(8);
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        }
        /// Appends a `string` (length with its NUL, bytes, NUL).
        pub fn string(&mut self, s: &str) -> &mut Buf {
            self.u32(s.len() as u32 + 1);
            self.0.extend_from_slice(s.as_bytes());
            self.0.push(0);
            self
        }
        /// Appends a `uint8[]` sequence.
        pub fn bytes(&mut self, b: &[u8]) -> &mut Buf {
            self.u32(b.len() as u32);
            self.0.extend_from_slice(b);
            self
        }
        /// The serialized message.
        pub fn finish(&mut self) -> Vec<u8> {
            std::mem::take(&mut self.0)
        }
    }

    /// `std_msgs/msg/String`.
    pub fn string_msg(data: &str) -> Vec<u8> {
        Buf::new().string(data).finish()
    }

    /// `sensor_msgs/msg/CompressedImage` as the peer's `blob` type builds it for sample `i`.
    pub fn blob_msg(i: u32, size: usize) -> Vec<u8> {
        Buf::new().i32(i as i32).u32(0).string("blob").string("raw").bytes(&blob_data(i, size)).finish()
    }

    /// The peer's blob data: `i` as u32 LE, then byte k = k % 251.
    pub fn blob_data(i: u32, size: usize) -> Vec<u8> {
        let mut d: Vec<u8> = (0..size).map(|k| (k % 251) as u8).collect();
        let head = i.to_le_bytes();
        let n = size.min(4);
        d[..n].copy_from_slice(&head[..n]);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_compare_up_to_padding() {
        assert!(same_payload(&[0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0], &[0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0, 0]));
        assert!(!same_payload(&[0, 1, 0, 0, 3], &[0, 1, 0, 0, 3, 1]));
        assert!(!same_payload(&[0, 1], &[0, 1, 0, 0, 0, 0]));
        assert_eq!(from_hex("00ff1A"), vec![0, 255, 26]);
    }

    #[test]
    fn cdr_matches_the_python_peer() {
        // What cyclone_peer.py printed for `hello 0` and for a 16-byte blob 0.
        assert_eq!(cdr::string_msg("hello 0"), from_hex("000100000800000068656c6c6f203000"));
        assert_eq!(cdr::blob_msg(0, 16), from_hex("00010000000000000000000005000000626c6f6200000000040000007261770010000000000000000405060708090a0b0c0d0e0f"));
    }

    #[test]
    fn domains_are_exclusive() {
        let a = Domain::new();
        let b = Domain::new();
        assert_ne!(a.id(), b.id());
        assert!((Domain::FIRST..=Domain::LAST).contains(&a.id()));
    }
}
