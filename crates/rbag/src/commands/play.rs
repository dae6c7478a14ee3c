//! `rbag play`: publish bags into a live ROS graph in time order, as `rosbag play` does.

use std::path::PathBuf;

use anyhow::Result;

use super::middleware::{Middleware, MiddlewareArgs};
use crate::units::parse_duration;
use crate::Outcome;

/// Publish the messages of one or more bags into a live ROS graph, in time order.
///
/// With `--ros1`, rbag joins the ROS 1 graph at ROS_MASTER_URI (starting an embedded master when
/// none answers, and saying so) and advertises every topic with the bag's type, MD5 sum and
/// definition; latched connections are republished latched. Several bags are merged in log-time
/// order, ties kept in a stable order, so every run sends the same sequence. rosbag2 bags with
/// CDR data are converted to ROS 1 on the fly.
///
/// On a terminal: space pauses and resumes, `s` steps one message while paused, the up/down
/// arrows raise and lower the rate. ROS remapping arguments (`/chatter:=/talk`) are accepted
/// among the bags.
#[derive(clap::Args, Debug)]
#[command(after_help = "With --ros2 (or ROS_VERSION=2) the flags are ros2 bag play's: see `rbag play --ros2 --help`.")]
pub struct Args {
    #[command(flatten)]
    pub middleware: MiddlewareArgs,
    /// Bags to play, and ROS remapping arguments (`from:=to`).
    #[arg(value_name = "BAG")]
    pub inputs: Vec<String>,
    /// More bags to play (rosbag's --bags).
    #[arg(short = 'i', long = "input", visible_alias = "bags", value_name = "BAG")]
    pub more_inputs: Vec<PathBuf>,
    /// Play every message without waiting (rosbag's `-i`).
    #[arg(long)]
    pub immediate: bool,
    /// Multiply the publish rate by FACTOR.
    #[arg(short, long, value_name = "FACTOR", default_value_t = 1.0)]
    pub rate: f64,
    /// Start SEC seconds into the bags.
    #[arg(short = 's', long = "start", visible_alias = "start-offset", value_name = "SEC", value_parser = parse_duration)]
    pub start: Option<u64>,
    /// Play only SEC seconds of the bags.
    #[arg(short = 'u', long, value_name = "SEC", value_parser = parse_duration)]
    pub duration: Option<u64>,
    /// Skip stretches of the bags with no messages for more than SEC seconds.
    #[arg(long, value_name = "SEC", value_parser = parse_duration)]
    pub skip_empty: Option<u64>,
    /// Loop playback.
    #[arg(short, long = "loop")]
    pub loop_: bool,
    /// Keep running after the end (so latched topics stay available).
    #[arg(short = 'k', long)]
    pub keep_alive: bool,
    /// Wait SEC seconds after advertising, so subscribers can connect.
    #[arg(short, long, value_name = "SEC", default_value = "0.2", value_parser = parse_duration)]
    pub delay: u64,
    /// Start paused.
    #[arg(long)]
    pub pause: bool,
    /// Publish the bag's time on /clock (rosgraph_msgs/Clock).
    #[arg(long)]
    pub clock: bool,
    /// Rate of /clock messages.
    #[arg(long = "hz", visible_alias = "clock-hz", value_name = "HZ", default_value_t = 100.0)]
    pub hz: f64,
    /// Play only these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// Pause when a message on one of these topics is reached.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub pause_topics: Vec<String>,
    /// Prefix every published topic.
    #[arg(short, long, value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Hold playback until a message with a Header on TOPIC stamps a bag time at most
    /// --rate-control-max-delay behind the next message (flow control by a downstream node).
    #[arg(long, value_name = "TOPIC")]
    pub rate_control_topic: Option<String>,
    /// How far (seconds) playback may run ahead of the rate control topic's stamp.
    #[arg(long, value_name = "SEC", default_value = "1", value_parser = parse_duration, requires = "rate_control_topic")]
    pub rate_control_max_delay: u64,
    /// Outgoing queue of each subscriber, in messages; the oldest is dropped when it is full.
    #[arg(long, value_name = "SIZE", default_value_t = 100)]
    pub queue: usize,
    /// Wait for at least one subscriber on each topic before publishing.
    #[arg(long)]
    pub wait_for_subscribers: bool,
    /// Accepted for rosbag compatibility; rbag reads bag version 2.0 only.
    #[arg(long, hide = true)]
    pub try_future_version: bool,
    /// Print a JSON line of playback statistics on stderr at the end: messages, and how late
    /// each was sent against its schedule (p50/p99/max ns), with the wall time playing started.
    #[arg(long)]
    pub stats: bool,
    #[command(flatten)]
    pub types: super::TypeArgs,
    /// Print only errors and the final summary.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.middleware.choose("play")? {
        Middleware::Ros1 => super::play_ros1::run(args),
        Middleware::Ros2 => super::middleware::ros2_elsewhere("play"),
    }
}
