//! ROS 1 bag format v2.0: reader, writer and reindexer.
//!
//! Layout: the magic line, a bag header record padded to 4 KiB (patched at close with the
//! index position), then chunks, each followed by one index-data record per connection it holds,
//! and at the end every connection record and one chunk-info record per chunk.

pub(crate) mod chunk;
pub(crate) mod compression;
mod merge;
mod reader;
pub mod record;
mod reindex;
mod scan;
mod writer;

pub use reader::Ros1Reader;
pub use record::{Limits, MAGIC};
pub use reindex::{default_output, reindex, reindex_with_limits};
pub use writer::Ros1Writer;

/// The ROS 1 connection-header fields, as they ride in
/// [`Connection::metadata`](crate::Connection::metadata) (and on TCPROS, where the same names
/// are used): one spelling for every crate that reads or writes them.
pub mod keys {
    /// The MD5 sum of the message definition, or `*`.
    pub const MD5SUM: &str = "md5sum";
    /// The node that published (or recorded) the connection.
    pub const CALLERID: &str = "callerid";
    /// `1` for a latched publisher.
    pub const LATCHING: &str = "latching";
    /// The message type.
    pub const TYPE: &str = "type";
    /// The topic name.
    pub const TOPIC: &str = "topic";
    /// The full concatenated message definition.
    pub const MESSAGE_DEFINITION: &str = "message_definition";
}

/// The first chunk starts here: magic (13 bytes) + bag header record (4104 bytes).
pub const FIRST_RECORD: u64 = 13 + 4104;
