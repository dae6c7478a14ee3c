//! Why recording failed. Each error names the file, directory or topic it is about.

use std::path::PathBuf;

use crate::key::ConnKey;
use crate::disk::human;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The storage writer failed; the error names the file.
    #[error(transparent)]
    Storage(#[from] rbag_storage::Error),

    /// Renaming, deleting or measuring a file failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// `--min-space` is not met when recording would start.
    #[error("{}: {} free on disk, less than the minimum of {} (--min-space); not recording", dir.display(), human(*free), human(*required))]
    LowDiskSpace { dir: PathBuf, free: u64, required: u64 },

    /// A file or directory the recording would write already exists (and is not to be replaced).
    #[error("{}: output exists", path.display())]
    OutputExists { path: PathBuf },

    /// `-O ""` without `--split`: rosbag's "Bag filename is empty".
    #[error("the bag file name is empty (give a name, a prefix or --split)")]
    EmptyName,

    #[error("connection {key} was never added to the recorder")]
    UnknownConnection { key: ConnKey },

    #[error("connection {key} is added twice (topic {topic})")]
    KeyInUse { key: ConnKey, topic: String },

    /// A ROS 1 bag holds one type per topic.
    #[error("topic {topic}: type {message_type} conflicts with {existing} already recorded on it")]
    TypeConflict { topic: String, message_type: String, existing: String },

    /// An earlier error closed the bag; only `finish` is left to do.
    #[error("the recorder has no open bag (an earlier error closed it)")]
    Closed,
}

impl RecordError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        RecordError::Io { path: path.into(), source }
    }
}
