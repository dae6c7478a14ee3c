//! What the Zenoh CLI tests share (`zenoh_live.rs`, `zenoh_flags.rs`): a running `rbag` watched
//! through its stderr, and the eclipse-zenoh router and talker peers.
#![allow(dead_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rbag_testkit::zenoh::{endpoint, rbag_env, spawn, ZenohPeer};

/// How long any one wait may take.
pub const LONG: Duration = Duration::from_secs(60);

/// RIHS01 of a bundled ROS 2 type.
pub fn hash_of(ty: &str) -> String {
    let reg = rbag_msg::store::registry(rbag_msg::store::Distro::Jazzy);
    reg.rihs01(ty).unwrap_or_else(|e| panic!("{ty}: {e}"))
}

/// One running rbag (record or play) with its stderr in a file; killed on drop.
pub struct Rbag {
    child: Child,
    log: PathBuf,
}

impl Rbag {
    pub fn start(dir: &Path, name: &str, port: u16, domain: u32, args: &[&str]) -> Rbag {
        Self::start_env(dir, name, port, domain, args, &[])
    }

    /// [`Rbag::start`] with `env` on top (`None` removes a variable).
    pub fn start_env(
        dir: &Path,
        name: &str,
        port: u16,
        domain: u32,
        args: &[&str],
        env: &[(&str, Option<&str>)],
    ) -> Rbag {
        let log = dir.join(format!("{name}.err"));
        let mut c = Command::new(env!("CARGO_BIN_EXE_rbag"));
        rbag_env(&mut c, port, domain);
        for (k, v) in env {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(File::create(&log).unwrap());
        Rbag { child: c.spawn().expect("rbag starts"), log }
    }

    /// `rbag record --ros2 --middleware zenoh --disable-keyboard-controls ARGS`, its stderr in
    /// `DIR/record.err`.
    pub fn record(dir: &Path, port: u16, domain: u32, args: &[&str]) -> Rbag {
        let mut all = vec!["record", "--ros2", "--middleware", "zenoh", "--disable-keyboard-controls"];
        all.extend_from_slice(args);
        Self::start(dir, "record", port, domain, &all)
    }

    /// SIGINT, then the exit: code 0 and no panic; returns stderr.
    pub fn stop(&mut self) -> String {
        let code = self.finish(true);
        let log = self.stderr();
        assert_eq!(code, Some(0), "{log}");
        log
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn expect_err(&mut self, needle: &str) {
        let start = Instant::now();
        while !self.stderr().contains(needle) {
            let exited = self.child.try_wait().ok().flatten();
            assert!(
                exited.is_none() && start.elapsed() < LONG,
                "rbag printed no {needle:?} ({exited:?}):\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits for the exit (after SIGINT when `interrupt`); checks no panic.
    pub fn finish(&mut self, interrupt: bool) -> Option<i32> {
        if interrupt {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        }
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().ok().flatten() {
                break s;
            }
            assert!(start.elapsed() < LONG, "rbag did not exit:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(25));
        };
        assert!(!self.stderr().contains("panicked at"), "{}", self.stderr());
        status.code()
    }
}

impl Drop for Rbag {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A router (eclipse-zenoh) listening on `port`, once it is up.
pub fn router(py: &Path, port: u16) -> ZenohPeer {
    let r = spawn(py, "router", &["--listen", &endpoint(port)]);
    r.expect_line("READY", LONG);
    r
}

/// A `zenoh_peer.py talker` on `topic` (`ty`, `hash`) with `extra` options.
pub fn talker(py: &Path, port: u16, domain: u32, topic: &str, ty: &str, hash: &str, extra: &[&str]) -> ZenohPeer {
    let (e, d) = (endpoint(port), domain.to_string());
    let mut args = vec!["--connect", &e, "--domain", &d, "--topic", topic, "--dds-type", ty, "--hash", hash];
    args.extend_from_slice(extra);
    spawn(py, "talker", &args)
}

/// Waits for the peer's exit with status 0.
pub fn exit_ok(peer: &mut ZenohPeer) {
    let st = peer.wait_exit(LONG);
    assert!(st.is_some_and(|s| s.success()), "peer failed ({st:?}):\n{}", peer.output());
}
