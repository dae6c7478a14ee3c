//! Opening a bag for reading with [`ReadOptions`].

use std::path::Path;

use crate::rosbag2::Rosbag2Reader;
use crate::{detect, ros1, Format, ReadOptions, Result, StorageReader};

/// Opens a bag for reading, whatever its format, with `options` ([`crate::open`] uses the
/// defaults: a message on an undeclared connection fails the read).
pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Box<dyn StorageReader>> {
    match detect(path)? {
        Format::Ros1 => Ok(Box::new(ros1::Ros1Reader::open_with(path, options)?)),
        Format::Sqlite3 | Format::Mcap => Ok(Box::new(Rosbag2Reader::open_with(path, options)?)),
    }
}

/// What a lenient reader says about the messages it reads on stand-in connections.
pub(crate) fn undeclared_warnings(kind: &str, undeclared: &std::collections::BTreeMap<u32, u64>) -> Vec<String> {
    undeclared
        .iter()
        .map(|(id, n)| {
            let s = if *n == 1 { "" } else { "s" };
            format!(
                "{n} message{s} on {kind} {id}, which the bag never declares: read as topic {}{id}, with no type",
                crate::UNDECLARED_TOPIC_PREFIX
            )
        })
        .collect()
}
