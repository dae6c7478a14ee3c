//! What a recording writes: names, format, splitting, limits, disk space.

use std::path::PathBuf;

use rbag_storage::{Format, WriteOptions};

use super::error::RecordError;
use super::naming::Naming;

/// How the bag is named (see [`crate::record`]'s naming rules, rosbag's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputName {
    /// `-O NAME`: `NAME.bag` (`.bag` added unless NAME ends with it), `NAME_<i>.bag` when split.
    Exact(PathBuf),
    /// `-o PREFIX`: `PREFIX_YYYY-MM-DD-HH-MM-SS.bag` in local time; an empty prefix gives the
    /// date alone, as `rosbag record` with neither option.
    Prefix(String),
}

/// What a recording writes its messages into.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Layout {
    /// One bag file per split (`rosbag record`): ROS 1 bags written as `NAME.bag.active` and
    /// renamed when closed, or single MCAP/SQLite3 files. Named by [`OutputName`]; duration
    /// periods are aligned to the start of the recording, as rosbag aligns them.
    #[default]
    Files,
    /// One rosbag2 directory (`ros2 bag record`) named by [`OutputName::Exact`], whose storage
    /// files and metadata.yaml the rosbag2 writer keeps; a split starts the next storage file.
    /// A file's duration counts from its first message, as rosbag2 counts it.
    Rosbag2Dir,
}

/// Bounds on a file: `--size` and `--duration`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Split {
    /// Bytes of the file (see [`crate::Recorder`] for how they are measured).
    pub max_bytes: Option<u64>,
    /// Log time since the file's period started.
    pub max_duration_ns: Option<u64>,
}

/// Everything `rosbag record` takes that concerns the bag rather than the network.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The file names (the directory's, for [`Layout::Rosbag2Dir`]).
    pub output: OutputName,
    /// Bag files, or one rosbag2 directory.
    pub layout: Layout,
    /// ROS 1 bag, or a single MCAP/SQLite3 file (MCAP with ros1-encoded connections is the
    /// MCAP `ros1` profile).
    pub format: Format,
    /// Chunk size and compression (`--chunksize`, `-j`, `--lz4`).
    pub write: WriteOptions,
    /// `--split` with `--size`/`--duration`: start a new file at these bounds.
    pub split: Option<Split>,
    /// `--size`/`--duration` without `--split`: stop recording once the bag passes them
    /// (bytes over every file written; log time since the recording started).
    pub stop_at: Option<Split>,
    /// `--max-splits N`: keep N closed split files (plus the one being written).
    pub max_splits: Option<usize>,
    /// `-l N`: store at most N messages per topic (`None` or 0: no limit).
    pub limit_per_topic: Option<u64>,
    /// `--repeat-latched` / `--repeat-transient-local`: start each split with the last message
    /// of each latched ROS 1 publisher, or the last messages (up to the QoS depth) of each
    /// transient-local ROS 2 topic.
    pub repeat_latched: bool,
    /// Topics whose last messages (up to the depth given) are repeated at the head of each
    /// new split whatever their QoS (`--repeat-transient-local TOPIC[=DEPTH]`).
    pub repeat_topics: std::collections::BTreeMap<String, usize>,
    /// Per topic, the least log time between two stored messages (`--throttle TOPIC=HZ`): a
    /// message sooner than that after the last one stored is not stored.
    pub throttle_ns: std::collections::BTreeMap<String, u64>,
    /// Store what the queue dropped on [`super::DROPPED_TOPIC`] before each file closes.
    pub drop_report: bool,
    /// `-L/--min-space` in bytes (rosbag's default is 1 GiB; 0 turns the check off).
    pub min_space: u64,
    /// Free space is measured again after this many bytes are written (and at least every
    /// [`crate::DISK_CHECK_INTERVAL_NS`] of log time).
    pub disk_check_bytes: u64,
    /// Replace files that already have a name the recording uses (`--force`). Without it such
    /// a file is an error, even for a later split.
    pub overwrite: bool,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            output: OutputName::Prefix(String::new()),
            layout: Layout::Files,
            format: Format::Ros1,
            write: WriteOptions::default(),
            split: None,
            stop_at: None,
            max_splits: None,
            limit_per_topic: None,
            repeat_latched: false,
            repeat_topics: std::collections::BTreeMap::new(),
            throttle_ns: std::collections::BTreeMap::new(),
            drop_report: true,
            min_space: 1 << 30,
            disk_check_bytes: 16 << 20,
            overwrite: false,
        }
    }
}

impl RecordOptions {
    /// The final name of split `index` (0 when not splitting) if it is opened at `wall_ns`:
    /// the CLI uses it to refuse or replace existing outputs before recording starts.
    pub fn file_name(&self, index: usize, wall_ns: u64) -> Result<PathBuf, RecordError> {
        Ok(Naming::new(&self.output, self.format, self.split.is_some())?.target(index, wall_ns))
    }
}
