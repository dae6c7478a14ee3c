//! Errors of the storage layer. Each names what failed and where (file offset, record, op).

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A storage failure, with the position in the file where it was found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },

    /// Any other error, with the file it happened in.
    #[error("{path}: {inner}")]
    InFile { path: PathBuf, inner: Box<Error> },

    #[error("{path}: not a bag this build can read ({reason})")]
    UnknownFormat { path: PathBuf, reason: String },

    #[error("{path}: output exists (use --force to overwrite)")]
    OutputExists { path: PathBuf },

    #[error("offset {offset}: file ends inside {what}{}", if *needed == u64::MAX { format!(" ({available} bytes left)") } else { format!(": needs {needed} bytes, {available} left") })]
    Truncated { offset: u64, what: &'static str, needed: u64, available: u64 },

    #[error("file is truncated: the bag header puts the index at offset {index_pos}, but the file has {file_len} bytes (`rbag reindex` recovers its complete chunks)")]
    TruncatedBag { index_pos: u64, file_len: u64 },

    #[error("the index at the end of the bag is damaged ({inner}); `rbag reindex` rebuilds it")]
    BadIndex { inner: Box<Error> },

    #[error("offset {offset}: {what} claims {len} bytes, over the limit of {limit}")]
    TooLarge { offset: u64, what: &'static str, len: u64, limit: u64 },

    #[error("offset {offset}: malformed {what}: {reason}")]
    Malformed { offset: u64, what: &'static str, reason: String },

    #[error("offset {offset}: unknown record op 0x{op:02x}")]
    UnknownOp { offset: u64, op: u8 },

    #[error("offset {offset}: chunk compression {name:?} is not supported (none, lz4, bz2)")]
    UnsupportedCompression { offset: u64, name: String },

    #[error("offset {offset}: {compression} chunk does not decompress: {reason}")]
    Decompress { offset: u64, compression: &'static str, reason: String },

    #[error("bag has no index (the recorder did not close it); run `rbag reindex` to repair it")]
    Unindexed,

    #[error("connection {id} is not known to this bag")]
    UnknownConnection { id: u32 },

    #[error("{0}")]
    Invalid(String),

    #[error("the writer failed earlier and is closed: {0}")]
    Poisoned(String),
}

impl Error {
    /// Names `path` in the error unless it already does.
    pub fn in_file(self, path: &std::path::Path) -> Self {
        match self {
            Error::Io { .. } | Error::UnknownFormat { .. } | Error::InFile { .. } | Error::OutputExists { .. } => self,
            other => Error::InFile { path: path.into(), inner: Box::new(other) },
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
