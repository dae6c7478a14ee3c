//! Live playback: bags published into a ROS 1 graph ([`ros1::play`]) or a ROS 2 DDS domain
//! ([`ros2::play`]), as `rosbag play` and `ros2 bag play` do.
//!
//! A front end builds a [`PlaySpec`] (the bags, what to select, the player's options, remaps)
//! plus the middleware's own options, joins the graph (a ROS 1 [`Node`](rbag_ros1::node::Node)
//! or a DDS [`Participant`](rbag_ros2::dds::Participant)), and calls `play` with the receiving
//! end of [`controls`]. The [`PlayHandle`] drives the run from other threads (keys, signals,
//! scripts): pause, resume, step, rate up and down, seek, stop. What the run has to say (a
//! topic left out, a status change) arrives as [`PlayEvent`]s; the result is a [`LiveReport`].
//!
//! Scheduling (rate, pause, loop, `/clock`) is `rbag_transport`'s [`Player`]; this module
//! plans each connection (converting ROS 1 ⇄ CDR where the bag's encoding is not the
//! middleware's), advertises it, and carries the middleware's own features: latching,
//! `--rate-control-topic`, rosbag's `~pause_playback`, rosbag2's control services and
//! `--publish-service-requests`.
//!
//! [`Player`]: rbag_transport::play::Player

#[cfg(feature = "ros2")]
pub mod action_client;
mod control;
mod plan;
mod rate_control;
pub mod ros1;
#[cfg(feature = "ros2")]
pub mod ros2;
#[cfg(feature = "ros2")]
mod service_requests;
#[cfg(feature = "ros2")]
pub mod services;
mod spec;

pub use control::{controls, PlayControls, PlayHandle};
pub use rbag_transport::play::{
    Control, MessageOrder, PlayOptions, ProgressBar, ProgressHook, ProgressState, RateStep,
};
pub use spec::{Error, Events, LiveReport, PlayEvent, PlaySpec, UserTypes};
