//! ROS 1 bag format v2.0: reader, writer and reindexer.
//!
//! Layout: the magic line, a bag header record padded to 4 KiB (patched at close with the
//! index position), then chunks, each followed by one index-data record per connection it holds,
//! and at the end every connection record and one chunk-info record per chunk.

mod chunk;
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

/// The first chunk starts here: magic (13 bytes) + bag header record (4104 bytes).
pub const FIRST_RECORD: u64 = 13 + 4104;
