//! Errors of the storage layer. Each names what failed and where (file offset, record, op).

use std::path::PathBuf;

/// A result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A storage failure, with the position in the file where it was found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file (or directory) concerned.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },

    /// A remote object could not be read: the URL, and the server's or client's reason (with
    /// the HTTP status where there is one).
    #[error("{url}: {reason}")]
    Remote {
        /// The object's URL.
        url: String,
        /// What failed.
        reason: String,
    },
    /// A remote file has no index to read it by (an MCAP file without a summary): reading it
    /// means fetching all of it, which [`crate::ReadOptions::allow_remote_scan`] allows.
    #[error("{url}: {why}: reading it means scanning it, which fetches all {size} bytes")]
    RemoteScan {
        /// The object's URL.
        url: String,
        /// Why it has no usable index.
        why: String,
        /// Its size in bytes.
        size: u64,
    },

    /// Any other error, with the file it happened in.
    #[error("{path}: {inner}")]
    InFile {
        /// The file (or directory) concerned.
        path: PathBuf,
        /// The error itself.
        inner: Box<Error>,
    },

    /// No backend recognises the bag, or it is of a version this build does not read.
    #[error("{path}: not a bag this build can read ({reason})")]
    UnknownFormat {
        /// The file (or directory) concerned.
        path: PathBuf,
        /// Why.
        reason: String,
    },

    /// The output exists and replacing it was not asked for.
    #[error("{path}: output exists")]
    OutputExists {
        /// The file (or directory) concerned.
        path: PathBuf,
    },

    /// Direct I/O was required and the output's filesystem refuses it.
    #[error("{path}: the filesystem refuses direct I/O ({reason})")]
    DirectIoRefused {
        /// The file being created.
        path: PathBuf,
        /// What refused it.
        reason: String,
    },

    /// An output that would overwrite, contain or sit inside an input.
    #[error("{output}: refused as the output: {how} ({input})")]
    OutputIsInput {
        /// The output asked for.
        output: PathBuf,
        /// The input it collides with.
        input: PathBuf,
        /// How the two collide.
        how: &'static str,
    },

    /// An output rbag will not write to or replace (a link, a device, something not a bag).
    #[error("{path}: refused as the output: {reason}")]
    UnsafeOutput {
        /// The file (or directory) concerned.
        path: PathBuf,
        /// Why.
        reason: String,
    },

    /// The file ends inside a record.
    #[error("offset {offset}: file ends inside {what}{}", if *needed == u64::MAX { format!(" ({available} bytes left)") } else { format!(": needs {needed} bytes, {available} left") })]
    Truncated {
        /// File offset where it was found.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// Bytes it needs.
        needed: u64,
        /// Bytes the file still has.
        available: u64,
    },

    /// The bag header points past the end of the file: the index was cut off. The complete
    /// chunks are still there ([`Error::needs_reindex`]).
    #[error(
        "file is truncated: the bag header puts the index at offset {index_pos}, but the file has {file_len} bytes"
    )]
    TruncatedBag {
        /// Where the bag header puts the index.
        index_pos: u64,
        /// The file's length.
        file_len: u64,
    },

    /// The index records at the end of the bag do not parse ([`Error::needs_reindex`]).
    #[error("the index at the end of the bag is damaged ({inner})")]
    BadIndex {
        /// The error itself.
        inner: Box<Error>,
    },

    /// A length field over what rbag accepts for it (hostile or corrupt input).
    #[error("offset {offset}: {what} claims {len} bytes, over the limit of {limit}")]
    TooLarge {
        /// File offset where it was found.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// The length the file claims.
        len: u64,
        /// The limit.
        limit: u64,
    },

    /// A record or field that does not parse.
    #[error("offset {offset}: malformed {what}: {reason}")]
    Malformed {
        /// File offset where it was found.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// Why.
        reason: String,
    },

    /// A ROS 1 record of an op this format does not have.
    #[error("offset {offset}: unknown record op 0x{op:02x}")]
    UnknownOp {
        /// File offset where it was found.
        offset: u64,
        /// The op byte.
        op: u8,
    },

    /// A ROS 1 chunk compressed with something else than none, lz4, bz2.
    #[error("offset {offset}: chunk compression {name:?} is not supported (none, lz4, bz2)")]
    UnsupportedCompression {
        /// File offset where it was found.
        offset: u64,
        /// The name found.
        name: String,
    },

    /// A chunk whose compressed data is damaged.
    #[error("offset {offset}: {compression} chunk does not decompress: {reason}")]
    Decompress {
        /// File offset where it was found.
        offset: u64,
        /// The compression.
        compression: &'static str,
        /// Why.
        reason: String,
    },

    /// The bag was never closed, so it has no index ([`Error::needs_reindex`]).
    #[error("bag has no index (the recorder did not close it)")]
    Unindexed,

    /// A write on a connection id the writer never gave out.
    #[error("connection {id} is not known to this bag")]
    UnknownConnection {
        /// The connection id.
        id: u32,
    },

    /// A message names a connection (ROS 1 connection, MCAP channel, rosbag2 topic id) that the
    /// bag never declares: its topic and type are unknown, so it cannot be read as data.
    #[error("{at}: message on {kind} {id}, which the bag never declares")]
    UndeclaredConnection {
        /// Where the message is.
        at: Place,
        /// What the format calls a connection (`connection`, `channel`, `topic id`).
        kind: &'static str,
        /// Its id.
        id: u32,
    },

    /// More decompressed data than the memory budget has free (see [`crate::budget`]): only for
    /// what cannot be decoded in a bounded way, such as one message larger than the budget.
    #[error("offset {offset}: {what} needs {}, over the memory budget of {}{} (RBAG_MEMORY_BUDGET sets it)", crate::budget::mib(*needed), crate::budget::mib(*limit), if *in_use > 0 { format!(" with {} of it in use", crate::budget::mib(*in_use)) } else { String::new() })]
    OverBudget {
        /// File offset where it was found.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// Bytes it needs.
        needed: u64,
        /// Bytes of the budget in use already.
        in_use: u64,
        /// The budget.
        limit: u64,
    },

    /// The system refused memory that the budget allowed (a `ulimit -v`, an overcommitted host).
    #[error("offset {offset}: out of memory: {what} needs {}", crate::budget::mib(*needed))]
    OutOfMemory {
        /// File offset where it was found.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// Bytes it needs.
        needed: u64,
    },

    /// Anything else, said in full (an argument a backend refuses, an SQLite error).
    #[error("{0}")]
    Invalid(String),

    /// An SQLite3 pragma asked for (rosbag2's storage config `read: pragmas:`) that is
    /// refused or that SQLite fails to run; the file it was run on is added around it.
    #[error("SQLite3 pragma {pragma:?}: {reason}")]
    Pragma {
        /// The entry, as given (without `PRAGMA`).
        pragma: String,
        /// Why it failed: SQLite's message, or why it was refused before running.
        reason: String,
    },

    /// No registered backend has this name ([`crate::backend`]).
    #[error("unknown storage {name:?} (registered: {known})")]
    UnknownStorage {
        /// The name found.
        name: String,
        /// The names registered, comma-separated.
        known: String,
    },

    /// The backend does not do this (a read-only backend asked to write, a reindex that the
    /// storage does not need).
    #[error("the {backend} storage does not support {what}")]
    Unsupported {
        /// The backend's name.
        backend: String,
        /// What was being read.
        what: &'static str,
    },

    /// A registered backend's own error, kept typed: match it and `downcast_ref` to the
    /// backend's error type. It names its file and place itself.
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync + 'static>),

    /// A backend option ([`crate::StorageOptions`]) that the backend refuses.
    #[error("{backend} storage option {key:?}: {reason}")]
    BadOption {
        /// The backend's name.
        backend: String,
        /// The option's key.
        key: String,
        /// Why.
        reason: String,
    },

    /// A writer that failed once refuses every later call.
    #[error("the writer failed earlier and is closed: {0}")]
    Poisoned(String),

    /// The file got shorter while it was mapped and read (another process truncated it): what
    /// was read from `offset` on is lost. Always wrapped in [`Error::InFile`] with the path.
    #[error("the file shrank to {len} bytes while it was being read (offset {offset})")]
    Shrank {
        /// The file's length now.
        len: u64,
        /// File offset where it was found.
        offset: u64,
    },
}

/// Where in a file a message is, for errors about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A file offset.
    Offset(u64),
    /// Inside the (decompressed) data of the chunk record at file offset `chunk`.
    InChunk {
        /// File offset of the chunk record.
        chunk: u64,
        /// Byte offset in the chunk's data.
        at: u64,
    },
    /// A row of an SQLite table.
    Row {
        /// The table.
        table: &'static str,
        /// The row id.
        id: i64,
    },
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Offset(o) => write!(f, "offset {o}"),
            Place::InChunk { chunk, at } => write!(f, "offset {chunk} (chunk), byte {at} of its data"),
            Place::Row { table, id } => write!(f, "table {table}, row id {id}"),
        }
    }
}

impl Error {
    /// Names `path` in the error unless it already does.
    pub fn in_file(self, path: &std::path::Path) -> Self {
        match self {
            Error::Io { .. }
            | Error::UnknownFormat { .. }
            | Error::InFile { .. }
            | Error::OutputExists { .. }
            | Error::DirectIoRefused { .. }
            | Error::OutputIsInput { .. }
            | Error::UnsafeOutput { .. }
            | Error::UnknownStorage { .. }
            | Error::BadOption { .. }
            | Error::Remote { .. }
            | Error::RemoteScan { .. }
            | Error::Backend(_) => self,
            other => Error::InFile { path: path.into(), inner: Box::new(other) },
        }
    }

    /// Whether the bag lost its index and rebuilding it (see [`crate::reindex`]) recovers what
    /// it holds: front ends add their repair hint for these.
    pub fn needs_reindex(&self) -> bool {
        match self {
            Error::TruncatedBag { .. } | Error::BadIndex { .. } | Error::Unindexed => true,
            Error::InFile { inner, .. } => inner.needs_reindex(),
            _ => false,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
