//! rosbag2's recorder services (`/rosbag2_recorder/snapshot` and the rest), with
//! rosbag2_interfaces' types, so scripts that drive `ros2 bag record` with `ros2 service call`
//! drive rbag too; the player's are in [`crate::play::services`]. Carried as rmw_cyclonedds
//! carries services (see `rbag_ros2::service`).

use std::sync::Arc;

use rbag_ros2::graph::GraphError;
use rbag_ros2::record::Log;
use rbag_ros2::service::{reply, Fields, Handler, ServiceHost};

use crate::interfaces::type_hash;

/// Services being served; dropping them stops serving.
pub type Served = Vec<Box<dyn Send>>;

/// What the recorder's services act on: a recorder's pause switch and its snapshot and split
/// triggers. The recording side implements it on its own control block.
pub trait RecorderControl: Send + Sync {
    /// Sets paused; returns whether it was paused before.
    fn set_paused(&self, paused: bool) -> bool;
    /// Whether recording is paused.
    fn paused(&self) -> bool;
    /// Asks for a snapshot write (snapshot mode).
    fn snapshot(&self);
    /// Asks for the current file to be closed and a new one begun.
    fn split(&self);
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

/// Serves the recorder's services under node `node` (rosbag2's `rosbag2_recorder` unless the
/// user names another): pause, resume and is_paused act on the recorder's pause switch;
/// snapshot triggers a snapshot write in snapshot mode (and fails otherwise, as in rosbag2);
/// split_bagfile closes the current file and goes on in a new one. Serving stops when the
/// returned servers drop.
pub fn recorder(
    host: &dyn ServiceHost,
    node: &str,
    controls: Arc<dyn RecorderControl>,
    snapshot_mode: bool,
    log: &Log,
) -> Result<Served, GraphError> {
    let pause = |paused: bool| -> Handler {
        let (c, log) = (controls.clone(), log.clone());
        Box::new(move |_: &Fields| {
            if c.set_paused(paused) != paused {
                log(if paused { "Recording paused." } else { "Recording resumed." }.into());
            }
            reply::empty()
        })
    };
    let (c1, c2, c3, log2, log3) = (controls.clone(), controls.clone(), controls.clone(), log.clone(), log.clone());
    let services: Vec<(&str, &str, Handler)> = vec![
        ("pause", "Pause", pause(true)),
        ("resume", "Resume", pause(false)),
        ("is_paused", "IsPaused", Box::new(move |_: &Fields| reply::bool(c1.paused()))),
        (
            "snapshot",
            "Snapshot",
            Box::new(move |_: &Fields| {
                if snapshot_mode {
                    c2.snapshot();
                    log2("Snapshot: writing the cache into the bag.".into());
                }
                reply::bool(snapshot_mode)
            }),
        ),
        // Jazzy's SplitBagfile has no fields either way.
        (
            "split_bagfile",
            "SplitBagfile",
            Box::new(move |_: &Fields| {
                c3.split();
                log3("Splitting: the next messages go to a new file.".into());
                reply::empty()
            }),
        ),
    ];
    serve(host, &format!("/{}", node.trim_start_matches('/')), services, log)
}
