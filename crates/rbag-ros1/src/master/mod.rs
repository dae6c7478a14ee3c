//! An embedded ROS 1 master that stands in for `roscore`: rosmaster's registrations, parameter
//! server and reply strings (docs/ros1-live-spike.md §2.2, §2.4, §4), served over XML-RPC.
//!
//! - [`MasterState`] is the whole API with no sockets: call it with [`Value`]s in tests.
//! - [`Master`] serves it on a TCP port, one thread per connection (at most
//!   [`MAX_CONNECTIONS`](crate::xmlrpc::MAX_CONNECTIONS), idle ones timed out and evicted first:
//!   [`Limits`](crate::xmlrpc::Limits); rosmaster has no such bounds), and calls nodes back
//!   (`publisherUpdate`, `paramUpdate`, `shutdown`) from one worker per node API.
//!
//! There is no `/rosout` node: nothing needs one (the spike ran rostopic, rosparam, rospy and
//! the C++ recorder and player without it).

mod api;
mod notify;
mod params;
mod registrations;

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

pub use api::{new_run_id, Callback, MasterState, Notification, Reply, MASTER_CALLER_ID};

use crate::xmlrpc::{Handler, Server, Value};
use notify::Notifier;

/// Why the master could not start.
#[derive(Debug, thiserror::Error)]
pub enum MasterError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// What the system said.
        source: std::io::Error,
    },
    /// The XML-RPC server could not start.
    #[error("cannot start the master's server on {addr}: {source}")]
    Start {
        /// The address.
        addr: SocketAddr,
        /// What the system said.
        source: std::io::Error,
    },
}

fn lock(state: &Mutex<MasterState>) -> MutexGuard<'_, MasterState> {
    // A panic while answering one call must not take the master down for every node.
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// Serves [`MasterState`]: notifications are queued under the state lock, so they go out in
/// the order the changes happened, but are sent by the notifier's workers.
struct MasterHandler {
    state: Arc<Mutex<MasterState>>,
    notifier: Notifier,
}

impl Handler for MasterHandler {
    fn call(&self, method: &str, params: Vec<Value>) -> Result<Value, (i32, String)> {
        let mut state = lock(&self.state);
        let (result, notes) = state.call(method, params);
        for n in notes {
            self.notifier.send(n);
        }
        result
    }
}

/// A running master.
pub struct Master {
    uri: String,
    addr: SocketAddr,
    state: Arc<Mutex<MasterState>>,
    notifier: Notifier,
    server: Server,
}

/// The host name other nodes should use for this machine, as rosgraph picks it:
/// `ROS_HOSTNAME`, then `ROS_IP`, then the system's host name.
pub fn default_host() -> String {
    for var in ["ROS_HOSTNAME", "ROS_IP"] {
        if let Ok(v) = std::env::var(var) {
            if !v.trim().is_empty() {
                return v.trim().to_string();
            }
        }
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

impl Master {
    /// Binds `bind` (port 0 = any free port) and serves in background threads. The URI names
    /// the bound IP, or [`default_host`] when bound to all interfaces.
    pub fn start(bind: SocketAddr) -> Result<Master, MasterError> {
        let host = if bind.ip().is_unspecified() { default_host() } else { bind.ip().to_string() };
        Master::start_as(bind, &host)
    }

    /// As [`Master::start`], advertising `host` in the URI (`http://host:port/`).
    pub fn start_as(bind: SocketAddr, host: &str) -> Result<Master, MasterError> {
        let listener = TcpListener::bind(bind).map_err(|source| MasterError::Bind { addr: bind, source })?;
        let addr = listener.local_addr().map_err(|source| MasterError::Bind { addr: bind, source })?;
        let host = if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.to_string() };
        let uri = format!("http://{host}:{}/", addr.port());
        let state = Arc::new(Mutex::new(MasterState::new(uri.clone())));
        let weak: Weak<Mutex<MasterState>> = Arc::downgrade(&state);
        let notifier = Notifier::new(Box::new(move |api, key| {
            if let Some(state) = weak.upgrade() {
                lock(&state).param_update_refused(api, key);
            }
        }));
        let handler = Arc::new(MasterHandler { state: state.clone(), notifier: notifier.clone() });
        let server = Server::start(listener, handler).map_err(|source| MasterError::Start { addr, source })?;
        Ok(Master { uri, addr, state, notifier, server })
    }

    /// `http://HOST:PORT/`: what nodes need in `ROS_MASTER_URI`.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The address the master listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections from nodes open now.
    pub fn connections(&self) -> usize {
        self.server.connections()
    }

    /// Whether a peer called the master's `shutdown` method (rosmaster then exits).
    pub fn shutdown_requested(&self) -> bool {
        lock(&self.state).shutdown_requested()
    }

    /// Answers a call directly, as if it came over XML-RPC (notifications are sent).
    pub fn call(&self, method: &str, params: Vec<Value>) -> Result<Value, (i32, String)> {
        MasterHandler { state: self.state.clone(), notifier: self.notifier.clone() }.call(method, params)
    }

    /// Stops accepting, closes the nodes' connections and drops queued notifications. Best
    /// effort: a notification being sent finishes on its own.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        self.notifier.stop();
        // The server stops when dropped next.
    }
}
