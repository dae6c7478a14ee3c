//! rosbag2's recorder services (`/rosbag2_recorder/snapshot` and the rest), with
//! rosbag2_interfaces' types, so scripts that drive `ros2 bag record` with `ros2 service call`
//! drive rbag too; the player's are in [`crate::play::services`]. Carried as rmw_cyclonedds
//! carries services (see `rbag_ros2::service`).

use std::sync::Arc;

use rbag_ros2::graph::GraphError;
use rbag_ros2::record::Log;
use rbag_ros2::service::{reply, Fields, Handler, ServiceHost};

use crate::interfaces::{is_lyrical, type_hash};

/// Services being served; dropping them stops serving.
pub type Served = Vec<Box<dyn Send>>;

/// What the recorder's services act on: the pause switch, snapshot and split triggers, and the
/// recorder's life between recordings ([`crate::record::RecorderSession`]).
pub trait RecorderControl: Send + Sync {
    /// Sets paused; returns whether it was paused before.
    fn set_paused(&self, paused: bool) -> bool;
    /// Whether recording is paused.
    fn paused(&self) -> bool;
    /// Asks for a snapshot write (snapshot mode).
    fn snapshot(&self);
    /// Asks for the current file to be closed and a new one begun; false when not recording.
    fn split(&self) -> bool;
    /// Whether a recording runs (and was not asked to stop).
    fn recording(&self) -> bool;
    /// Ends the running recording (its bag is closed); false when none runs.
    fn stop(&self) -> bool;
    /// Starts a recording into `uri` (empty: the last bag's name, made unique); false when one
    /// runs already.
    fn record(&self, uri: &str) -> bool;
    /// Turns discovery of new topics on or off; returns whether it was on.
    fn set_discovery(&self, on: bool) -> bool;
    /// Whether new topics are being discovered.
    fn discovery(&self) -> bool;
}

/// Serves `services` (name, rosbag2_interfaces type, handler) under `node` on `host`.
pub(crate) fn serve(
    host: &dyn ServiceHost,
    node: &str,
    services: Vec<(&str, &str, Handler)>,
    log: &Log,
) -> Result<Served, GraphError> {
    services
        .into_iter()
        .map(|(name, ty, handler)| {
            host.serve(
                &format!("{node}/{name}"),
                &format!("rosbag2_interfaces/srv/{ty}"),
                &type_hash(ty),
                handler,
                log.clone(),
            )
        })
        .collect()
}

/// Runs `f` at `at_ns` (wall time, ns since the epoch) on a thread of its own, or now when
/// that has passed: rosbag2's delayed resume, split and record at node time.
fn at_time(at_ns: u64, f: impl FnOnce() + Send + 'static) {
    let wait = at_ns.saturating_sub(crate::record::now_ns());
    if wait == 0 {
        return f();
    }
    let _ = std::thread::Builder::new().name("delayed-service".into()).spawn(move || {
        std::thread::sleep(std::time::Duration::from_nanos(wait));
        f()
    });
}

/// A Lyrical timed request (`Resume`, `SplitBagfile`): time, mode and tracking topic. rbag acts
/// at node time (mode 0, the wall clock) only; `Err` is the response for anything else.
fn node_time(f: &Fields, invalid_mode: i32, unsupported: i32) -> Result<u64, Vec<u8>> {
    let (at, mode) = (f.time_ns_at(0).unwrap_or(0), f.i32_at(8).unwrap_or(0));
    match mode {
        0 => Ok(at),
        1 | 2 if at == 0 => Ok(0),
        1 | 2 => Err(reply::code(
            unsupported,
            "rbag acts at node time only (mode 0); publish and receive time modes are not supported",
        )),
        m => Err(reply::code(invalid_mode, &format!("invalid mode {m}"))),
    }
}

/// Carries out `act` for a `Resume` or `SplitBagfile` request (`srv`): now for Jazzy's layout
/// (an empty response), at the request's node time for Lyrical's (return codes
/// `invalid_mode`/`unsupported` for what rbag does not do).
fn timed(srv: &str, f: &Fields, invalid_mode: i32, unsupported: i32, act: impl FnOnce() + Send + 'static) -> Vec<u8> {
    if !is_lyrical(srv, f.type_hash()) {
        act();
        return reply::empty();
    }
    match node_time(f, invalid_mode, unsupported) {
        Ok(at) => {
            at_time(at, act);
            reply::code(0, "")
        }
        Err(response) => response,
    }
}

/// Pauses or resumes, saying so when that changed anything.
fn set_paused(c: &dyn RecorderControl, paused: bool, log: &Log) {
    if c.set_paused(paused) != paused {
        log(if paused { "Recording paused." } else { "Recording resumed." }.into());
    }
}

/// Splits the running recording, saying so.
fn split(c: &dyn RecorderControl, log: &Log) {
    if c.split() {
        log("Splitting: the next messages go to a new file.".into());
    }
}

/// Serves the recorder's services under node `node` (rosbag2's `rosbag2_recorder` unless the
/// user names another), in the layout each client's type hash names (see
/// `rbag-live/src/interfaces.rs`):
/// - `pause`, `resume`, `is_paused` act on the pause switch (Lyrical's `resume` at a later node
///   time too);
/// - `snapshot` writes the cache in snapshot mode (and fails otherwise, as in rosbag2);
/// - `split_bagfile` closes the current file and goes on in a new one;
/// - `stop` closes the bag and keeps the node up; `record` starts a new bag;
/// - `start_discovery`, `stop_discovery`, `is_discovery_running` switch the discovery of new
///   topics (subscriptions made stay).
///
/// Serving stops when the returned servers drop.
pub fn recorder(
    host: &dyn ServiceHost,
    node: &str,
    controls: Arc<dyn RecorderControl>,
    snapshot_mode: bool,
    log: &Log,
) -> Result<Served, GraphError> {
    // Each handler gets its own handle on the controls and the log.
    let with = |f: fn(&dyn RecorderControl, &Fields, &Log) -> Vec<u8>| -> Handler {
        let (c, log) = (controls.clone(), log.clone());
        Box::new(move |fields: &Fields| f(c.as_ref(), fields, &log))
    };
    let (c, l) = (controls.clone(), log.clone());
    let resume: Handler = Box::new(move |f: &Fields| {
        let (c, l) = (c.clone(), l.clone());
        timed("Resume", f, 1, 3, move || set_paused(c.as_ref(), false, &l))
    });
    let (c, l) = (controls.clone(), log.clone());
    let split: Handler = Box::new(move |f: &Fields| {
        if is_lyrical("SplitBagfile", f.type_hash()) && !c.recording() {
            return reply::code(1, "Recorder is not recording.");
        }
        let (c, l) = (c.clone(), l.clone());
        timed("SplitBagfile", f, 2, 4, move || split(c.as_ref(), &l))
    });
    let (c, l) = (controls.clone(), log.clone());
    let record: Handler = Box::new(move |f: &Fields| {
        let uri = f.string_at(0);
        let start = match (&uri, is_lyrical("Record", f.type_hash())) {
            (Some((_, end)), true) => f.time_ns_at(end.div_ceil(4) * 4).unwrap_or(0),
            _ => 0,
        };
        let uri = uri.map(|u| u.0).unwrap_or_default();
        if c.recording() {
            return reply::code(1, "Recorder is already recording.");
        }
        let (c, l) = (c.clone(), l.clone());
        at_time(start, move || {
            if !c.record(&uri) {
                l("warning: record requested while already recording; ignored".into());
            }
        });
        reply::code(0, "")
    });
    let services: Vec<(&str, &str, Handler)> = vec![
        (
            "pause",
            "Pause",
            with(|c, _, log| {
                set_paused(c, true, log);
                reply::empty()
            }),
        ),
        ("resume", "Resume", resume),
        ("is_paused", "IsPaused", with(|c, _, _| reply::bool(c.paused()))),
        (
            "snapshot",
            "Snapshot",
            if snapshot_mode {
                with(|c, _, log| {
                    c.snapshot();
                    log("Snapshot: writing the cache into the bag.".into());
                    reply::bool(true)
                })
            } else {
                with(|_, _, _| reply::bool(false))
            },
        ),
        ("split_bagfile", "SplitBagfile", split),
        ("record", "Record", record),
        (
            "stop",
            "Stop",
            with(|c, f, log| {
                let stopped = c.stop();
                if stopped {
                    log("Stopping the recording (the node stays up: call record to start another).".into());
                } else {
                    log("warning: stop requested while not recording; ignored".into());
                }
                match (is_lyrical("Stop", f.type_hash()), stopped) {
                    (false, _) => reply::empty(),
                    (true, true) => reply::code(0, ""),
                    (true, false) => reply::code(1, "Recorder is already stopped."),
                }
            }),
        ),
        (
            "start_discovery",
            "StartDiscovery",
            with(|c, _, log| {
                if !c.recording() {
                    reply::code(1, "Recorder is not currently recording.")
                } else if c.set_discovery(true) {
                    reply::code(1, "Discovery is already running.")
                } else {
                    log("Discovery of new topics started.".into());
                    reply::code(0, "")
                }
            }),
        ),
        (
            "stop_discovery",
            "StopDiscovery",
            with(|c, _, log| {
                if !c.set_discovery(false) {
                    reply::code(1, "Discovery is not running.")
                } else {
                    log("Discovery of new topics stopped.".into());
                    reply::code(0, "")
                }
            }),
        ),
        ("is_discovery_running", "IsDiscoveryRunning", with(|c, _, _| reply::bool(c.discovery()))),
    ];
    serve(host, &format!("/{}", node.trim_start_matches('/')), services, log)
}
