//! The rosbag API: one view of any bag, whatever its storage. Programs, the CLI, and the Python
//! and C bindings come in through here.
//!
//! - [`Bag`] opens a bag (ROS 1, a rosbag2 directory, a single `.db3`/`.mcap`, or any format a
//!   registered backend reads) and reads its [`info`](Bag::info) and raw
//!   [`messages`](Bag::messages); [`decode::Decoders`] turns their bytes into values.
//! - [`Writer`] writes a bag of any storage, from raw bytes or decoded values.
//! - [`convert`] copies messages from bags into a new one: merged in time order, filtered,
//!   rechunked, recompressed, rewritten into another encoding or a newer definition.
//! - [`reindex`] repairs a bag whose recorder died.
//!
//! Write a bag, then read it back decoded:
//!
//! ```
//! use rbag_bag::decode::Decoders;
//! use rbag_bag::{Bag, Connection, Filter, Format, WriteOptions, Writer};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("chatter.mcap");
//! let mut w = Writer::create(&path, Format::Mcap, &WriteOptions::default())?;
//! let conn = Connection {
//!     topic: "/chatter".into(),
//!     message_type: "std_msgs/msg/String".into(),
//!     encoding: "cdr".into(),
//!     definition: "string data".into(),
//!     definition_encoding: "ros2msg".into(),
//!     ..Connection::default()
//! };
//! let id = w.add_connection(&conn)?;
//! // CDR: encapsulation header, string length 3 (with its NUL), "hi\0".
//! w.write(id, 1_000, 1_000, b"\x00\x01\x00\x00\x03\x00\x00\x00hi\x00")?;
//! w.finish()?;
//!
//! let bag = Bag::open(&path)?;
//! assert_eq!(bag.info()?.message_count, 1);
//! let mut decoders = Decoders::new(rbag_bag::types::sources_for(&bag.storage_info()?.properties, &[])?);
//! for msg in bag.messages(&Filter::default())? {
//!     let msg = msg?;
//!     let conn = bag.connection(msg.connection).expect("every message has its connection");
//!     let (_schema, value) = decoders.decode(conn, msg.log_time, &msg.data)?;
//!     assert_eq!(format!("{value:?}"), r#"Message([String([104, 105])])"#);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod attachments;
mod bag;
pub mod compress;
mod convert;
pub mod decode;
pub mod doctor;
pub mod du;
mod error;
pub mod expr;
pub mod extras;
mod info;
mod info_text;
pub mod options_yaml;
pub mod read;
pub mod text;
pub mod transcode;
pub mod types;
pub mod units;
mod writer;

pub use bag::{merged, Bag, OpenOptions};
pub use convert::{
    convert, convert_many, convert_selecting, BeforeStart, ConvertOptions, ConvertReport, Output, Progress, Select,
    SelectAll, Skipped,
};
pub use error::{Error, Result};
pub use info::{
    BagInfo, CompressionInfo, DefinitionInfo, InfoOptions, QosInfo, TopicInfo, TopicSort, TypeInfo, UndeclaredInfo,
};
pub use writer::Writer;

// What programs need from the storage layer, named here so the front door is one crate.
pub use rbag_storage::Error as StorageError;
pub use rbag_storage::StorageReader;

/// Safe outputs for front ends that write files of their own (exports): checked against the
/// inputs, staged under a temporary name, renamed into place when complete.
pub mod output {
    pub use rbag_storage::output::{check, check_with, CheckedOutput, OutputPolicy, Staged};
}

/// rosbag2's metadata versions, for front ends that take a distro or version to write.
pub mod rosbag2 {
    pub use rbag_storage::rosbag2::metadata::{version_for_distro, LATEST_VERSION};
}
/// rosbag2's storage plugin config file (`--storage-config-file`).
pub use rbag_storage::storage_config;
pub use rbag_storage::{
    backend, backends, detect_backend, summaries, with_storage_options, Backend, BackendSummary, Capabilities,
    IntoBackend, OptionSpec, StorageOptions,
};
pub use rbag_storage::{
    budget, pool, Attachment, ChunkInfo, Compression, CompressionMode, Connection, DirectIo, Filter, Format,
    IndexedSizes, McapPreset, Message, MessageIter, MetadataRecord, OutputPolicy, ReadStats, ReindexReport,
    Rosbag2Options, SchemaInfo, SqlitePreset, StorageInfo, StorageWriter, TimeMerge, WriteOptions,
    UNDECLARED_TOPIC_PREFIX,
};

/// Repairs a bag whose index was never written (a recorder that was killed), or rebuilds a
/// rosbag2 directory's metadata.yaml from its storage files. The repaired bag goes to `output`
/// (a directory is repaired in place); with `backup`, the original is kept there. An existing
/// output is replaced only under `replace`, and only once the repaired bag is complete.
pub fn reindex(
    input: &std::path::Path,
    output: &std::path::Path,
    backup: Option<&std::path::Path>,
    replace: bool,
) -> Result<ReindexReport> {
    Ok(rbag_storage::reindex(input, output, backup, replace)?)
}

/// Rebuilds a rosbag2 directory's metadata.yaml from its storage files, written as `distro`'s
/// rosbag2 reads it (`None`: the old file's version, or the latest).
pub fn reindex_rosbag2(dir: &std::path::Path, distro: Option<&str>) -> Result<ReindexReport> {
    Ok(rbag_storage::rosbag2::reindex_as(dir, distro)?)
}

/// Where [`reindex`] puts a repaired ROS 1 file by default, and the backup of the original:
/// `X.bag.active` becomes `X.bag`; `X.bag` is repaired in place with the original kept as
/// `X.orig.bag` (never overwriting an earlier backup).
pub fn reindex_target(input: &std::path::Path) -> (std::path::PathBuf, Option<std::path::PathBuf>) {
    rbag_storage::ros1::default_output(input)
}

/// The storage a new bag at `output` is written in: the backend named `name` when given, else
/// the first that claims `output`'s extension (`.bag` ROS 1, `.db3` SQLite3, `.mcap` MCAP, or a
/// registered backend's), else MCAP (a rosbag2 directory).
pub fn storage_for(output: &std::path::Path, name: Option<&str>) -> Result<std::sync::Arc<dyn Backend>> {
    let known = || rbag_storage::backends().iter().map(|b| b.name().to_string()).collect::<Vec<_>>().join(", ");
    match name {
        Some(n) => rbag_storage::backend(n)
            .ok_or_else(|| Error::Storage(StorageError::UnknownStorage { name: n.into(), known: known() })),
        None => Ok(output
            .extension()
            .and_then(|e| e.to_str())
            .and_then(rbag_storage::backend_for_extension)
            .unwrap_or_else(|| Format::Mcap.backend())),
    }
}
