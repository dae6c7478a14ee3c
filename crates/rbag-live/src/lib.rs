//! Live recording and playback: what `rbag record` and `rbag play` do, as a library.
//!
//! A front end (the CLI, later Python and C) builds a recording or playback spec and runs it
//! here; the middleware (ROS 1 over TCPROS, ROS 2 over DDS) is chosen in one place. The
//! queue, split, snapshot and retention logic below the middleware is `rbag_transport`'s.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod graph;
mod interfaces;
pub mod middleware;
pub mod play;
pub mod record;

pub use middleware::Middleware;

/// The ROS 1 master `rbag master` runs (rosmaster's API and parameter server).
pub mod master {
    pub use rbag_ros1::master::{default_host, Master, MasterError};
}
#[cfg(feature = "ros2")]
pub mod services;
