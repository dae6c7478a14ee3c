//! Why recording failed. Each error names the file, directory or topic it is about.

use std::path::PathBuf;

use crate::disk::human;
use crate::key::ConnKey;

/// Why a recording failed. Messages name the file, directory or topic, never a command-line
/// flag: front ends add such hints.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The storage writer failed; the error names the file.
    #[error(transparent)]
    Storage(#[from] rbag_storage::Error),

    /// Renaming, deleting or measuring a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },

    /// Less than the minimum free space when recording would start (front ends name their
    /// option for it).
    #[error("{}: {} free on disk, less than the minimum of {}; not recording", dir.display(), human(*free), human(*required))]
    LowDiskSpace {
        /// The directory the bag would be written in.
        dir: PathBuf,
        /// Bytes free.
        free: u64,
        /// The minimum asked for.
        required: u64,
    },

    /// A file or directory the recording would write already exists (and is not to be replaced).
    #[error("{}: output exists", path.display())]
    OutputExists {
        /// The existing file or directory.
        path: PathBuf,
    },

    /// `-O ""` without `--split`: rosbag's "Bag filename is empty"; or a rosbag2 directory
    /// given a prefix instead of a name.
    #[error("the bag file name is empty and the recording is not split")]
    EmptyName,

    /// A message came on a connection the recorder was never given.
    #[error("connection {key} was never added to the recorder")]
    UnknownConnection {
        /// Its key.
        key: ConnKey,
    },

    /// Two connections came with the same key.
    #[error("connection {key} is added twice (topic {topic})")]
    KeyInUse {
        /// The key.
        key: ConnKey,
        /// The topic of the second one.
        topic: String,
    },

    /// A ROS 1 bag holds one type per topic.
    #[error("topic {topic}: type {message_type} conflicts with {existing} already recorded on it")]
    TypeConflict {
        /// The topic.
        topic: String,
        /// The new connection's type.
        message_type: String,
        /// The type already recorded on the topic.
        existing: String,
    },

    /// An earlier error closed the bag; only `finish` is left to do.
    #[error("the recorder has no open bag (an earlier error closed it)")]
    Closed,
}

impl RecordError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        RecordError::Io { path: path.into(), source }
    }
}
