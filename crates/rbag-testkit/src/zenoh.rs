//! Zenoh peers for the live ROS 2 tests: `peers/zenoh_peer.py` (eclipse-zenoh, behaving as
//! rmw_zenoh_cpp on the wire), each on its own loopback port.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ros2::CyclonePeer;
use crate::{repo_root, skip};

/// A running `zenoh_peer.py` (the same process handle as the DDS peers').
pub type ZenohPeer = CyclonePeer;

/// `crates/rbag-testkit/peers/zenoh_peer.py`.
pub fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/zenoh_peer.py")
}

/// The venv Python if it imports eclipse-zenoh, or `None` after recording a skip (a failure
/// under CI).
pub fn zenoh_python(test: &str) -> Option<PathBuf> {
    let python = repo_root().join(".peers/venv/bin/python");
    let ok = Command::new(&python).args(["-c", "import zenoh"]).output().is_ok_and(|o| o.status.success());
    if ok {
        Some(python)
    } else {
        skip(test, &format!("eclipse-zenoh is missing from {} (run scripts/setup-peers.sh)", python.display()));
        None
    }
}

/// A TCP port on 127.0.0.1 nobody listens on now (the kernel's pick).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// The loopback endpoint of `port`, as Zenoh writes it.
pub fn endpoint(port: u16) -> String {
    format!("tcp/127.0.0.1:{port}")
}

/// Starts `zenoh_peer.py ROLE ARGS…`.
pub fn spawn(python: &Path, role: &str, args: &[&str]) -> ZenohPeer {
    let mut c = Command::new(python);
    c.arg(peer_script()).arg(role).args(args);
    CyclonePeer::spawn_command(c, &format!("zenoh-peer-{role}"))
}

/// The environment that points rbag's Zenoh session at `port` on loopback (rmw_zenoh's
/// `ZENOH_CONFIG_OVERRIDE`), with the checks of a rmw_zenoh session.
pub fn rbag_env(cmd: &mut Command, port: u16, domain: u32) {
    cmd.env(
        "ZENOH_CONFIG_OVERRIDE",
        format!("connect/endpoints=[\"{}\"];listen/endpoints=[\"tcp/127.0.0.1:0\"]", endpoint(port)),
    )
    .env("ROS_DOMAIN_ID", domain.to_string())
    .env_remove("ZENOH_SESSION_CONFIG_URI")
    .env_remove("ZENOH_ROUTER_CONFIG_URI")
    .env_remove("ZENOH_ROUTER_CHECK_ATTEMPTS")
    .env_remove("RMW_IMPLEMENTATION")
    .env_remove("ROS_VERSION");
}
