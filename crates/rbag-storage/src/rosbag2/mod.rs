//! rosbag2 bags: a directory of storage files (SQLite3 `.db3` or MCAP) described by
//! `metadata.yaml`, split by size or duration and optionally zstd-compressed by rosbag2 itself.

pub mod actions;
mod bag;
mod compressor;
pub mod metadata;
pub mod qos;
mod reindex;
mod sqlite;
mod writer;

pub(crate) use bag::storage_files;
pub use bag::Rosbag2Reader;
pub use reindex::{reindex, reindex_as};
pub(crate) use sqlite::immutable_uri;
pub use sqlite::{SqliteReader, SqliteWriter};
pub use writer::Rosbag2Writer;

use crate::StorageWriter;

/// `Connection::metadata` key of a topic's QoS profiles, kept as rosbag2 stores them in the
/// storage file (a YAML string).
pub const QOS_KEY: &str = "offered_qos_profiles";
/// `Connection::metadata` key of a topic's RIHS01 type hash.
pub const TYPE_HASH_KEY: &str = "type_description_hash";

/// One storage file being written; the bag writer splits across several.
pub(crate) trait FileWriter: StorageWriter {
    /// Bytes the file holds so far (an estimate while buffers are unflushed).
    fn bytes_written(&self) -> u64;
    /// The bag's metadata.yaml text, stored inside the file as rosbag2 does (SQLite `metadata`
    /// table, MCAP `rosbag2` metadata record). Called before `finish`.
    fn set_bag_metadata(&mut self, yaml: &str);
}
