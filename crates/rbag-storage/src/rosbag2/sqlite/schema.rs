//! rosbag2's SQLite3 schema (its DDL and statements, byte for byte) and the SQLite helpers
//! reader and writer share.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::{ErrorCode, OpenFlags};

use crate::{Error, Result};

/// The schema version the writer produces (rosbag2 Iron and later).
pub const SCHEMA_VERSION: u32 = 4;

/// rosbag2's DDL (`sqlite_storage.cpp`, `SqliteStorage::initialize`), byte for byte, in its order.
pub(super) const CREATE_SCHEMA: &str =
    "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY,ros_distro TEXT NOT NULL);";
pub(super) const CREATE_METADATA: &str =
    "CREATE TABLE metadata(id INTEGER PRIMARY KEY,metadata_version INTEGER NOT NULL,metadata TEXT NOT NULL);";
pub(super) const CREATE_TOPICS: &str = "CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,serialization_format TEXT NOT NULL,offered_qos_profiles TEXT NOT NULL,type_description_hash TEXT NOT NULL);";
pub(super) const CREATE_DEFINITIONS: &str = "CREATE TABLE message_definitions(id INTEGER PRIMARY KEY,topic_type TEXT NOT NULL,encoding TEXT NOT NULL,encoded_message_definition TEXT NOT NULL,type_description_hash TEXT NOT NULL);";
pub(super) const CREATE_MESSAGES: &str =
    "CREATE TABLE messages(id INTEGER PRIMARY KEY,topic_id INTEGER NOT NULL,timestamp INTEGER NOT NULL, data BLOB NOT NULL);";
pub(super) const CREATE_INDEX: &str = "CREATE INDEX timestamp_idx ON messages (timestamp ASC);";

pub(super) const INSERT_SCHEMA: &str = "INSERT INTO schema (schema_version, ros_distro) VALUES (?, ?)";
/// SQLite's `application_id` in files rbag writes (`rbag` in ASCII). With it, `user_version`
/// is 0 while the file is written and 1 once it was closed.
pub(super) const RBAG_APPLICATION_ID: i64 = 0x7262_6167;

pub(super) const INSERT_METADATA: &str = "INSERT INTO metadata (metadata_version, metadata) VALUES (?, ?)";
pub(super) const INSERT_TOPIC: &str = "INSERT INTO topics(name, type, serialization_format, offered_qos_profiles, type_description_hash) VALUES (?, ?, ?, ?, ?)";
pub(super) const INSERT_DEFINITION: &str = "INSERT INTO message_definitions (topic_type, encoding, encoded_message_definition, type_description_hash) VALUES (?, ?, ?, ?)";
pub(super) const INSERT_MESSAGE: &str = "INSERT INTO messages (timestamp, topic_id, data) VALUES (?, ?, ?);";
/// Messages per multi-row INSERT (3 parameters each, well under SQLite's 32766). Measured on
/// 1M × 100 B: 64 and 256 rows were alike, 1024 and more no faster.
pub(super) const ROWS_PER_INSERT: usize = 256;

/// The writer's INSERT for `rows` messages: [`INSERT_MESSAGE`]'s row `rows` times; the rows get
/// consecutive ids in order. `OR FAIL` stores the same rows (nothing bound can break a
/// constraint: `id` is assigned, the rest is never NULL) but spares SQLite the statement journal
/// that a multi-row `INSERT` aborting on conflict needs inside a transaction, which copied the
/// last page of the table and of the index for every statement.
pub(super) fn multi_row_insert(rows: usize) -> String {
    let one = INSERT_MESSAGE.trim_end_matches(';');
    let mut sql = one.replacen("INSERT INTO", "INSERT OR FAIL INTO", 1);
    for _ in 1..rows {
        sql.push_str(",(?, ?, ?)");
    }
    sql
}

/// `path` with `suffix` appended to its file name (`x.db3` → `x.db3-wal`).
pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// An SQLite URI for `path`. Every byte but unreserved characters and `/` is percent-encoded,
/// so `?`, `#` and `%` in file names survive; an absolute path gets an empty authority
/// (`file:///…`) so a path starting with `//` is not read as a host.
pub(super) fn uri_for(path: &Path, immutable: bool) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let mut uri = String::with_capacity(bytes.len() + 24);
    uri.push_str(if bytes.first() == Some(&b'/') { "file://" } else { "file:" });
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(b as char);
        } else {
            let _ = write!(uri, "%{b:02X}");
        }
    }
    if immutable {
        uri.push_str("?immutable=1");
    }
    uri
}

pub(super) fn open_read(uri: &str) -> Result<rusqlite::Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = rusqlite::Connection::open_with_flags(uri, flags).map_err(sql_err)?;
    // No memory map: SQLite's own map of a file another process truncates would kill rbag with
    // SIGBUS (rbag's guard only knows its own maps); read(2) returns an error or short data
    // instead. A larger page cache for the index walk. Both are read-side only.
    db.execute_batch("PRAGMA mmap_size=0; PRAGMA cache_size=-65536;").map_err(sql_err)?;
    Ok(db)
}

/// Column names of `table`.
pub(super) fn columns(db: &rusqlite::Connection, table: &str) -> Result<HashSet<String>> {
    let mut stmt = db.prepare(&format!("PRAGMA table_info(\"{table}\")")).map_err(sql_err)?;
    let names = stmt.query_map([], |r| r.get::<_, String>(1)).map_err(sql_err)?;
    names.collect::<rusqlite::Result<_>>().map_err(sql_err)
}

/// A column as text, whatever SQLite holds there: writers other than rosbag2 have left NULLs
/// and blobs in text columns.
pub(super) fn text(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<String> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => String::new(),
        ValueRef::Integer(v) => v.to_string(),
        ValueRef::Real(v) => v.to_string(),
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
    })
}

/// An SQLite error as a storage error (the caller adds the file name).
pub(super) fn sql_err(e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => Error::Malformed {
            offset: 0,
            what: "SQLite database",
            reason: "not an SQLite database (SQLite: file is not a database)".into(),
        },
        Some(ErrorCode::DatabaseCorrupt) => Error::Malformed {
            offset: 0,
            what: "SQLite database",
            reason: format!("the database is damaged (SQLite: {e})"),
        },
        _ => Error::Invalid(format!("SQLite: {e}")),
    }
}
