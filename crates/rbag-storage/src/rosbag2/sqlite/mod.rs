//! rosbag2's SQLite3 storage: one `.db3` file per split, with the topics in a `topics` table and
//! every message a row of `messages(id, topic_id, timestamp, data)`, indexed by timestamp.
//!
//! The reader understands schema versions 1–4 (dashing through rolling); columns are chosen by
//! what the file has, as rosbag2 does, not by the version number. Files are opened read-only
//! with `immutable=1`, so reading a bag (WAL-mode files included) never creates `-wal`/`-shm`
//! files beside it, even in a read-only directory. The exception is a file whose `-wal` is
//! still there and not empty (a live or crashed `resilient` recording): it is opened read-only
//! without `immutable`, so the WAL content is seen (SQLite then needs a `-shm` beside it).
//!
//! `rusqlite::Connection` is `Send` but not `Sync`, while [`StorageReader`] must be `Sync` and
//! its message iterators `Send`: metadata queries go through one connection behind a mutex, and
//! each message stream opens its own connection, owned by a producer thread that hands batches
//! over a bounded channel. The stream therefore never holds more than a few batches in memory.
//!
//! The writer produces schema version 4 with rosbag2's own DDL and pragmas, so rosbag2 (Jazzy,
//! Rolling) and rosbags read its files.

mod reader;
mod schema;
mod writer;

/// The URI that opens `path` read-only as immutable: SQLite then creates no `-shm`/`-wal`
/// beside a WAL database (rosbag2's own are WAL), which read-only data must not get.
pub(crate) fn immutable_uri(path: &std::path::Path) -> String {
    schema::uri_for(path, true)
}

pub use reader::SqliteReader;
pub(crate) use schema::sibling;
pub use writer::SqliteWriter;

#[cfg(test)]
mod tests;
