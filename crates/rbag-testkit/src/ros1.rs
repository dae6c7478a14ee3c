//! A private ROS 1 graph for one test: its own master port, its own ROS_HOME/ROS_LOG_DIR, and
//! every process it starts killed when it drops (also when the test fails).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::skip;

/// A free TCP port on 127.0.0.1 (bound and released: good enough for tests).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free loopback port")
}

/// One test's ROS 1 environment.
pub struct Ros1Env {
    /// The port this environment's master listens on (free when the environment was made).
    pub port: u16,
    /// A directory of its own for `ROS_HOME` and the peers' logs.
    pub home: tempfile_dir::Dir,
    children: Vec<(String, Child)>,
}

/// Whether Debian's ROS 1 tools are installed; records a skip otherwise.
pub fn available(test: &str) -> bool {
    let needed = ["/usr/bin/rosmaster", "/usr/bin/rostopic", "/usr/bin/rosparam", "/usr/lib/rosbag/record"];
    match needed.iter().find(|p| !Path::new(p).exists()) {
        None => true,
        Some(missing) => {
            skip(test, &format!("Debian's ROS 1 is not installed: {missing} is missing (run scripts/setup-peers.sh)"));
            false
        }
    }
}

impl Ros1Env {
    /// An environment with a fresh master port and home, or `None` (after a skip) without ROS 1.
    pub fn new(test: &str) -> Option<Ros1Env> {
        if !available(test) {
            return None;
        }
        Some(Ros1Env { port: free_port(), home: tempfile_dir::Dir::new(test), children: Vec::new() })
    }

    /// `http://127.0.0.1:<port>/`, for `ROS_MASTER_URI`.
    pub fn master_uri(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// A command with this graph's environment (master, host, home, logs).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("ROS_MASTER_URI", self.master_uri())
            .env("ROS_HOSTNAME", "127.0.0.1")
            .env_remove("ROS_IP")
            .env_remove("ROS_NAMESPACE")
            .env("ROS_HOME", self.home.path())
            .env("ROS_LOG_DIR", self.home.path().join("log"))
            .env("PYTHONUNBUFFERED", "1");
        cmd
    }

    /// Starts `cmd` and keeps it to kill on drop; stdout/stderr go to files in the home.
    pub fn spawn(&mut self, name: &str, mut cmd: Command) -> &mut Child {
        let out = std::fs::File::create(self.log_path(name)).expect("log file");
        let err = out.try_clone().expect("log file");
        let child =
            cmd.stdin(Stdio::null()).stdout(out).stderr(err).spawn().unwrap_or_else(|e| panic!("starting {name}: {e}"));
        self.children.push((name.to_string(), child));
        &mut self.children.last_mut().expect("just pushed").1
    }

    /// Where `spawn` wrote a process's output.
    pub fn log_path(&self, name: &str) -> PathBuf {
        self.home.path().join(format!("{name}.log"))
    }

    /// A process's output so far.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.log_path(name)).unwrap_or_default()
    }

    /// Starts Debian's rosmaster on this port and waits until it answers.
    pub fn start_rosmaster(&mut self) {
        let mut cmd = self.command("/usr/bin/rosmaster");
        cmd.args(["--core", "-p", &self.port.to_string()]);
        self.spawn("rosmaster", cmd);
        self.wait_master(Duration::from_secs(20));
    }

    /// Waits until something answers XML-RPC `getPid` on the master port.
    pub fn wait_master(&self, timeout: Duration) {
        let start = Instant::now();
        let body = "<?xml version=\"1.0\"?><methodCall><methodName>getPid</methodName><params><param><value>/t</value></param></params></methodCall>";
        while start.elapsed() < timeout {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read, Write};
                let req = format!("POST / HTTP/1.0\r\nContent-Length: {}\r\n\r\n{body}", body.len());
                let mut reply = String::new();
                let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                let answered = s.write_all(req.as_bytes()).is_ok() && s.read_to_string(&mut reply).is_ok();
                if answered && (reply.contains("<i4>1</i4>") || reply.contains("<int>1</int>")) {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("no ROS master answered on port {} within {timeout:?}", self.port);
    }

    /// Runs `cmd` to completion with a timeout, returning (success, stdout, stderr).
    pub fn run(&self, mut cmd: Command, timeout: Duration) -> (bool, String, String) {
        let mut child =
            cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("command starts");
        // Drained while the child runs: a child writing more than a pipe holds would block.
        // A grandchild may keep a pipe open after the child exits: wait a little, not forever.
        fn drain(pipe: Option<impl std::io::Read + Send + 'static>) -> std::sync::mpsc::Receiver<Vec<u8>> {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_end(&mut buf);
                }
                let _ = tx.send(buf);
            });
            rx
        }
        let (out, err) = (drain(child.stdout.take()), drain(child.stderr.take()));
        let start = Instant::now();
        let status = loop {
            if let Ok(Some(st)) = child.try_wait() {
                break Some(st);
            }
            if start.elapsed() > timeout {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let grace = Duration::from_secs(5);
        let (out, err) = (out.recv_timeout(grace).unwrap_or_default(), err.recv_timeout(grace).unwrap_or_default());
        let ok = status.is_some_and(|s| s.success());
        (ok, String::from_utf8_lossy(&out).into(), String::from_utf8_lossy(&err).into())
    }

    /// Sends SIGINT to a spawned process and waits for it to exit (up to `timeout`).
    pub fn interrupt(&mut self, name: &str, timeout: Duration) -> Option<std::process::ExitStatus> {
        let (_, child) = self.children.iter_mut().find(|(n, _)| n == name)?;
        signal(child.id(), "INT");
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Ok(Some(st)) = child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Kills a spawned process with SIGKILL and reaps it.
    pub fn kill(&mut self, name: &str) {
        if let Some((_, child)) = self.children.iter_mut().find(|(n, _)| n == name) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends a signal by name (`USR1`, `INT`…) to a spawned process, without waiting.
    pub fn signal(&self, name: &str, sig: &str) {
        if let Some((_, child)) = self.children.iter().find(|(n, _)| n == name) {
            signal(child.id(), sig);
        }
    }

    /// Waits up to `timeout` for a spawned process to exit by itself; `None` if it still runs.
    pub fn wait_exit(&mut self, name: &str, timeout: Duration) -> Option<std::process::ExitStatus> {
        let (_, child) = self.children.iter_mut().find(|(n, _)| n == name)?;
        let start = Instant::now();
        loop {
            if let Ok(Some(st)) = child.try_wait() {
                return Some(st);
            }
            if start.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits up to `timeout` until a spawned process's output contains `needle`.
    pub fn wait_log(&self, name: &str, needle: &str, timeout: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.log(name).contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.log(name).contains(needle)
    }
}

/// Sends a signal by name with kill(1): tests need no libc.
pub fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status();
}

impl Drop for Ros1Env {
    fn drop(&mut self) {
        for (_, child) in self.children.iter_mut().rev() {
            if let Ok(None) = child.try_wait() {
                signal(child.id(), "TERM");
            }
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        for (_, child) in self.children.iter_mut().rev() {
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A temporary directory without a tempfile dependency in the testkit's public API.
pub mod tempfile_dir {
    use std::path::{Path, PathBuf};

    /// Removed on drop unless RBAG_KEEP_TEST_DIRS is set.
    pub struct Dir(PathBuf);

    impl Dir {
        /// A new empty directory named after `test`.
        pub fn new(test: &str) -> Dir {
            static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let name: String = test.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
            let p = std::env::temp_dir().join(format!("rbag-{name}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(p.join("log")).expect("temp dir");
            Dir(p)
        }

        /// Where it is.
        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            if std::env::var_os("RBAG_KEEP_TEST_DIRS").is_none() {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }
}
