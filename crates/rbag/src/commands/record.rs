//! `rbag record`: record a live ROS graph into a bag, as `rosbag record` does.

use std::path::PathBuf;

use anyhow::Result;

use super::middleware::{Middleware, MiddlewareArgs};
use crate::units::{parse_duration, parse_size_in};
use crate::Outcome;

const MB: u64 = 1 << 20;
const KB: u64 = 1 << 10;

fn size_mb(s: &str) -> Result<u64, String> {
    parse_size_in(s, MB)
}

fn size_kb(s: &str) -> Result<u64, String> {
    parse_size_in(s, KB)
}

/// Record topics of a live ROS graph into a bag.
///
/// With `--ros1`, rbag joins the ROS 1 graph at ROS_MASTER_URI (starting an embedded master when
/// none answers, and saying so), subscribes to the selected topics and stores every message's
/// bytes as they arrive, with the publisher's connection header: nothing is deserialized.
/// Topics that appear later are picked up (`-a`, `-e`, `--node`). While recording, the bag is
/// `NAME.bag.active`; Ctrl-C (SIGINT), SIGTERM or SIGHUP closes it into a valid, indexed `NAME.bag`.
/// After a crash, `rbag reindex` repairs the `.active` file, losing at most the open chunk.
///
/// Sizes take units (`2GiB`); plain numbers are MB for --size/--buffsize/--min-space and KB for
/// --chunksize, as in rosbag. Durations take `s`, `m` or `h`. ROS remapping arguments
/// (`chatter:=/talk`, `__name:=rec`) are accepted among the topics.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "With --ros2 (or ROS_VERSION=2) the flags are ros2 bag record's: see `rbag record --ros2 --help`.\n\nExit codes: 0 ok, 1 error, 2 usage error, 3 recorded but messages were dropped (counted on stderr and stored on /rbag/dropped)."
)]
pub struct Args {
    #[command(flatten)]
    pub middleware: MiddlewareArgs,
    /// Topics to record, and ROS remapping arguments (`from:=to`).
    #[arg(value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// A topic to record (the C++ recorder's form; repeatable).
    #[arg(long = "topic", value_name = "TOPIC", hide = true)]
    pub topic_flags: Vec<String>,
    /// Record all topics, including ones that appear later.
    #[arg(short, long)]
    pub all: bool,
    /// The TOPICs are regular expressions (matched against whole names).
    #[arg(short = 'e', long)]
    pub regex: bool,
    /// Leave out topics matching this regular expression (subtracts from -a and -e).
    #[arg(short = 'x', long = "exclude", value_name = "REGEX")]
    pub exclude: Option<String>,
    /// Record every topic this node subscribes to.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
    /// The bag to write: NAME.bag (`.bag` is added unless NAME ends with it, as rosbag's -O),
    /// or NAME.mcap with `-s mcap` or a `.mcap` name (MCAP's ros1 profile).
    #[arg(short = 'o', long = "output", visible_short_alias = 'O', visible_alias = "output-name", value_name = "NAME")]
    pub output: Option<PathBuf>,
    /// Name the bag PREFIX_YYYY-MM-DD-HH-MM-SS.bag (rosbag's `-o`).
    #[arg(long, value_name = "PREFIX", conflicts_with = "output")]
    pub output_prefix: Option<String>,
    /// Storage of the bag: ros1 or mcap (default: from the name's extension, else ros1).
    #[arg(short = 's', long, value_name = "ros1|mcap")]
    pub storage: Option<String>,
    /// Split the bag when --size or --duration is reached (`--split=SIZE` sets the size, as the
    /// C++ recorder takes it).
    #[arg(long, value_name = "SIZE", num_args = 0..=1, require_equals = true, default_missing_value = "0", value_parser = size_mb)]
    pub split: Option<u64>,
    /// Maximum size of each bag (plain number: MB). Without --split, stop at this size.
    #[arg(long, value_name = "SIZE", value_parser = size_mb)]
    pub size: Option<u64>,
    /// Maximum duration of each bag (`30`, `5m`, `1h`). Without --split, stop after it.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<u64>,
    /// Keep only the newest N split files, deleting the oldest.
    #[arg(long, value_name = "N", requires = "split")]
    pub max_splits: Option<usize>,
    /// Internal buffer between the network and the disk (plain number: MB; 0 = unlimited).
    /// When it is full the oldest message is dropped and counted.
    #[arg(short = 'b', long, value_name = "SIZE", default_value = "256", value_parser = size_mb)]
    pub buffsize: u64,
    /// Chunk size (plain number: KB).
    #[arg(long, value_name = "SIZE", default_value = "768", value_parser = size_kb)]
    pub chunksize: u64,
    /// Record at most NUM messages per topic, then stop when every topic has them.
    #[arg(short = 'l', long, value_name = "NUM")]
    pub limit: Option<u64>,
    /// Refuse to start, and stop cleanly, when less than SIZE is free on the output's disk
    /// (plain number: MB).
    #[arg(short = 'L', long, value_name = "SIZE", default_value = "1024", value_parser = size_mb)]
    pub min_space: u64,
    /// Compress chunks with bz2.
    #[arg(short = 'j', long, conflicts_with = "lz4")]
    pub bz2: bool,
    /// Compress chunks with LZ4.
    #[arg(long)]
    pub lz4: bool,
    /// Publish the bag's name (std_msgs/String) on `begin_write` when each file is opened, as
    /// rosbag -p does.
    #[arg(short = 'p', long)]
    pub publish: bool,
    /// Ask publishers for TCP_NODELAY.
    #[arg(long)]
    pub tcpnodelay: bool,
    /// UDPROS transport hint: not supported (rbag records over TCPROS only).
    #[arg(long, hide = true)]
    pub udp: bool,
    /// Write the last message of each latched topic at the start of every split.
    #[arg(long)]
    pub repeat_latched: bool,
    /// Keep only the last --snapshot-duration/--snapshot-size in memory and write it to a new
    /// bag on a trigger: SIGUSR1, a message on --snapshot-topic, or `s` on a terminal.
    #[arg(long)]
    pub snapshot: bool,
    /// How much time the snapshot ring buffer holds.
    #[arg(long, value_name = "DURATION", default_value = "30", value_parser = parse_duration, requires = "snapshot")]
    pub snapshot_duration: u64,
    /// How many bytes the snapshot ring buffer holds (plain number: MB).
    #[arg(long, value_name = "SIZE", value_parser = size_mb, requires = "snapshot")]
    pub snapshot_size: Option<u64>,
    /// Any message on this topic triggers a snapshot.
    #[arg(long, value_name = "TOPIC", requires = "snapshot")]
    pub snapshot_topic: Option<String>,
    /// Replace existing files with the names the recording uses.
    #[arg(long)]
    pub force: bool,
    /// Print only errors and the final summary.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.middleware.choose("record")? {
        Middleware::Ros1 => super::record_ros1::run(args),
        Middleware::Ros2 => super::middleware::ros2_elsewhere("record"),
    }
}
