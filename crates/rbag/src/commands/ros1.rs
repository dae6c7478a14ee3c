//! Joining a ROS 1 graph from a live verb: `rbag_live::graph`, with the embedded master's note
//! printed.

use anyhow::Result;
use rbag_live::graph::Limits;
pub use rbag_live::graph::{anonymous, Graph};

/// Joins the graph as `default_name` (see [`rbag_live::graph::join_ros1`]), saying so when it
/// starts an embedded master (unless `quiet`).
pub fn join(default_name: &str, remap_args: &[String], limits: Limits, quiet: bool) -> Result<Graph> {
    Ok(rbag_live::graph::join_ros1(default_name, remap_args, limits, |uri| {
        if !quiet {
            note!("rbag: no ROS master at {uri}; started an embedded master there (it stops when rbag exits)");
        }
    })?)
}
