//! A storage backend for rbag that keeps a bag as JSON Lines, written only against
//! rbag-storage's public API to show the storage seam: [`register`] it once and
//! `rbag_storage::open`, `create_named("jsonl")`, `rbag info/echo/convert` and `rbag list`
//! find it.
//!
//! The file is text, one JSON object per line:
//!
//! ```text
//! {"rbag_jsonl":1,"payload":"base64"}
//! {"connection":{"id":1,"topic":"/chatter","type":"std_msgs/String","encoding":"ros1","definition":"string data\n","definition_encoding":"ros1msg","metadata":{"md5sum":"992ce8a1687cec8c8bd883ec73ca41d1"}}}
//! {"message":{"connection":1,"log_time":1000,"publish_time":1000,"data":"BQAAAGhlbGxv"}}
//! ```
//!
//! The header line comes first and carries the magic `{"rbag_jsonl":` that detection looks
//! for (the `.jsonl` extension alone is not enough), and how payloads are written (`base64`,
//! or `hex` with the `payload=hex` storage option). A connection line comes before the first
//! message on it. Messages are written in the order they arrive and read back in log-time
//! order. Every line is bounded ([`MAX_LINE`]); a bad line is an error naming the file and the
//! line number ([`JsonlError`]).
//!
//! ```
//! use rbag_storage::{Connection, Filter, OutputPolicy, StorageOptions, WriteOptions};
//! rbag_storage_jsonl::register();
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("x.jsonl");
//! let mut w = rbag_storage::create_named(
//!     &path, "jsonl", &WriteOptions::default(), &StorageOptions::default(), &OutputPolicy::default())?;
//! let conn = Connection { topic: "/chatter".into(), encoding: "ros1".into(), ..Connection::default() };
//! let id = w.add_connection(&conn)?;
//! w.write(id, 1_000, 1_000, b"hello")?;
//! w.finish()?;
//! let r = rbag_storage::open(&path)?;
//! let m = r.messages(&Filter::default())?.next().unwrap()?;
//! assert_eq!((&m.data[..], m.log_time), (&b"hello"[..], 1_000));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod line;
mod reader;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rbag_storage::{
    Backend, Capabilities, OptionSpec, ReadOptions, StorageOptions, StorageReader, StorageWriter, WriteOptions,
};

pub use line::Payload;
pub use reader::JsonlReader;
pub use writer::JsonlWriter;

/// The backend's name, as users select it (`-s jsonl`).
pub const NAME: &str = "jsonl";
/// What every file starts with: the start of the header line.
pub const MAGIC: &[u8] = b"{\"rbag_jsonl\":";
/// The format version this crate writes and reads.
pub const VERSION: u32 = 1;
/// The longest line read or written, in bytes (with its newline): a message payload of up to
/// 96 MiB in base64, 64 MiB in hex.
pub const MAX_LINE: usize = 128 << 20;

/// What went wrong with a JSON Lines bag, and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JsonlError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The bag file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A line that is not what the format allows there.
    #[error("{path}: line {line}: {reason}")]
    BadLine {
        /// The bag file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// A line longer than [`MAX_LINE`].
    #[error("{path}: line {line}: longer than the limit of {limit} bytes")]
    LineTooLong {
        /// The bag file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// [`MAX_LINE`].
        limit: usize,
    },
    /// A message to write that would make a line over [`MAX_LINE`].
    #[error(
        "{path}: a {len}-byte message on connection {connection} does not fit in one line ({limit} bytes at most)"
    )]
    MessageTooLarge {
        /// The bag file.
        path: PathBuf,
        /// The connection it was written on.
        connection: u32,
        /// Its payload size.
        len: usize,
        /// [`MAX_LINE`].
        limit: usize,
    },
}

impl From<JsonlError> for rbag_storage::Error {
    fn from(e: JsonlError) -> Self {
        rbag_storage::Error::Backend(Box::new(e))
    }
}

/// The JSON Lines backend. [`register`] adds it to rbag-storage's registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonlBackend;

const OPTIONS: &[OptionSpec] =
    &[OptionSpec { key: "payload", values: "base64|hex", doc: "how message payloads are written (base64 by default)" }];

impl Backend for JsonlBackend {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "JSON Lines (.jsonl; one line per connection and message, payloads in base64 or hex)"
    }

    fn extensions(&self) -> &[&str] {
        &["jsonl"]
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { read: true, write: true, ..Capabilities::default() }
    }

    fn options(&self) -> &[OptionSpec] {
        OPTIONS
    }

    fn detect(&self, path: &Path, head: &[u8]) -> rbag_storage::Result<bool> {
        Ok(!path.is_dir() && head.starts_with(MAGIC))
    }

    fn open(&self, path: &Path, options: &ReadOptions) -> rbag_storage::Result<Box<dyn StorageReader>> {
        Ok(Box::new(JsonlReader::open_with(path, options)?))
    }

    fn create(
        &self,
        path: &Path,
        _name: &Path,
        options: &WriteOptions,
        storage: &StorageOptions,
    ) -> rbag_storage::Result<Box<dyn StorageWriter>> {
        if options.compression != rbag_storage::Compression::None {
            return Err(rbag_storage::Error::Unsupported { backend: NAME.into(), what: "chunk compression" });
        }
        let payload = match storage.get("payload") {
            None => Payload::Base64,
            Some(v) => v.parse().map_err(|reason| rbag_storage::Error::BadOption {
                backend: NAME.into(),
                key: "payload".into(),
                reason,
            })?,
        };
        Ok(Box::new(JsonlWriter::create(path, payload)?))
    }
}

/// Adds the JSON Lines backend to rbag-storage's registry (again is harmless).
pub fn register() {
    rbag_storage::register(Arc::new(JsonlBackend));
}
