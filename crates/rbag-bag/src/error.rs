//! The rosbag API's error: what failed and where (file, topic, offset), never which flag of a
//! front end would help; front ends add their own hints by matching the variants.

use std::path::PathBuf;

use crate::decode::DecodeError;

/// Anything the rosbag API can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The storage layer failed: the message names the file, offset and record.
    #[error(transparent)]
    Storage(#[from] rbag_storage::Error),
    /// A message of `path` could not be decoded, re-encoded or migrated.
    #[error("{}: {source}", path.display())]
    Decode {
        /// The bag the message came from.
        path: PathBuf,
        /// What went wrong, naming the topic and message.
        source: Box<DecodeError>,
    },
    /// A value could not be written: its connection, type or encoding does not fit.
    #[error(transparent)]
    Message(Box<DecodeError>),
    /// A topic asked for is not in the bag.
    #[error("{}: no topic {topic} (the bag has: {known})", path.display())]
    NoTopic {
        /// The bag.
        path: PathBuf,
        /// The topic asked for.
        topic: String,
        /// The topics the bag has, comma-separated.
        known: String,
    },
    /// A topic name (relative, or with a `/`-separated field path) fits several topics.
    #[error("{}: {arg} fits several topics: {}", path.display(), topics.join(", "))]
    AmbiguousTopic {
        /// The bag.
        path: PathBuf,
        /// The name as given.
        arg: String,
        /// The topics it fits.
        topics: Vec<String>,
    },
    /// A field path does not name a field of the topic's type.
    #[error("{}: topic {topic}: {source}", path.display())]
    Path {
        /// The bag.
        path: PathBuf,
        /// The topic.
        topic: String,
        /// What the path names that does not exist.
        source: Box<rbag_msg::PathError>,
    },
    /// A directory given as a source of message definitions holds none.
    #[error("{}: no .msg files found", path.display())]
    NoDefinitions {
        /// The directory.
        path: PathBuf,
    },
    /// A directory of definitions parses neither as ROS 1 nor as ROS 2 ones.
    #[error("{}: not ROS 1 definitions ({ros1}) nor ROS 2 ones ({ros2})", path.display())]
    Definitions {
        /// The directory.
        path: PathBuf,
        /// Why the ROS 1 parser refused it.
        ros1: Box<rbag_msg::Error>,
        /// Why the ROS 2 parser refused it.
        ros2: Box<rbag_msg::Error>,
    },
    /// A filter expression does not parse, or cannot be evaluated on a message (`rbag filter`).
    #[error(transparent)]
    Expr(Box<crate::expr::ExprError>),
    /// A rosbag2 input- or output-options YAML file could not be read, or holds a key or
    /// value rbag does not take.
    #[error("{}: {reason}", path.display())]
    Options {
        /// The YAML file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A file of migration rules could not be read or parsed.
    #[error("{}: {reason}", path.display())]
    Rules {
        /// The rules file.
        path: PathBuf,
        /// What is wrong, with the line where known.
        reason: String,
    },
}

impl Error {
    /// The storage error underneath, if this is one: front ends match it to add hints
    /// (an existing output, an unindexed bag).
    pub fn storage(&self) -> Option<&rbag_storage::Error> {
        match self {
            Error::Storage(e) => Some(e),
            _ => None,
        }
    }

    /// The decoding error underneath, if this is one (an unknown type, a message that does not
    /// fit its definition).
    pub fn decode(&self) -> Option<&DecodeError> {
        match self {
            Error::Decode { source, .. } | Error::Message(source) => Some(source),
            _ => None,
        }
    }
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Self {
        Error::Message(Box::new(e))
    }
}

impl Error {
    /// A decoding error in the bag at `path`.
    pub fn decode_in(path: &std::path::Path, source: DecodeError) -> Self {
        Error::Decode { path: path.into(), source: Box::new(source) }
    }
}

/// The rosbag API's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
