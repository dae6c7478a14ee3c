//! Writing a `.db3` file, schema version 4, as rosbag2's sqlite3 plugin does.

use std::collections::{BTreeMap, HashSet};

use std::path::{Path, PathBuf};

use rusqlite::OpenFlags;

use super::super::{FileWriter, QOS_KEY, TYPE_HASH_KEY};
use crate::{Connection, Error, Result, SqlitePreset, StorageWriter, WriteOptions};

use super::schema::*;

/// The writer inserts and commits the messages it gathered once it holds this many...
const COMMIT_MESSAGES: u64 = 10_000;
/// ...or this many payload bytes.
pub(super) const COMMIT_BYTES: u64 = 16 << 20;
/// Per-row overhead assumed by [`FileWriter::bytes_written`] for rows not yet committed.
const ROW_OVERHEAD: u64 = 32;
/// SQLite's default `SQLITE_MAX_LENGTH` for one value, less room for the row's other columns.
const MAX_PAYLOAD: usize = 1_000_000_000 - 64;

/// Writes one `.db3` file, schema version 4, as rosbag2's sqlite3 plugin does.
///
/// Messages are gathered in memory and inserted in one transaction per 10 000 messages or
/// 16 MiB, as rosbag2 writes its message cache: commits are what cost time, and one statement
/// run over a batch avoids a statement-cache lookup per message. [`StorageWriter::finish`]
/// must be called; dropping the writer commits what it holds but stores no bag metadata.
/// After the first SQLite error (a full disk, say) every call fails with [`Error::Poisoned`];
/// the batches committed before it stay in the file.
pub struct SqliteWriter {
    path: PathBuf,
    /// `None` once closed.
    db: Option<rusqlite::Connection>,
    /// By id: topic name and type.
    topics: BTreeMap<u32, (String, String)>,
    /// Types that already have a `message_definitions` row.
    defined: HashSet<String>,
    /// Messages not yet inserted: (timestamp, topic id, end of the payload in `pending_data`).
    pending: Vec<(i64, u32, usize)>,
    pending_data: Vec<u8>,
    /// Payload plus [`ROW_OVERHEAD`] per message since the last commit.
    pending_bytes: u64,
    /// Database size (pages × page size) at the last commit.
    committed_bytes: u64,
    bag_metadata: Option<String>,
    metadata_version: u32,
    poisoned: Option<String>,
    finished: bool,
}

impl SqliteWriter {
    /// Creates `path`, which must not exist (rosbag2 refuses too: it never appends to a bag),
    /// with the tables and the `schema` row. The preset picks rosbag2's pragmas: `Default`
    /// (`journal_mode=MEMORY`, `synchronous=OFF`) or `Resilient` (`WAL`, `NORMAL`).
    pub fn create(path: &Path, options: &WriteOptions) -> Result<Self> {
        // create_new: refuse an existing file without a window for someone else to create it.
        match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(Error::OutputExists { path: path.into() })
            }
            Err(e) => return Err(Error::io(path, e)),
        }
        let result = Self::init(path, options);
        if result.is_err() {
            // The file is empty or half-initialised, and ours.
            let _ = std::fs::remove_file(path);
            let _ = std::fs::remove_file(sibling(path, "-wal"));
            let _ = std::fs::remove_file(sibling(path, "-shm"));
        }
        result.map_err(|e| e.in_file(path))
    }

    fn init(path: &Path, options: &WriteOptions) -> Result<Self> {
        // No URI flag: the plain path is used as is, whatever characters it holds.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let db = rusqlite::Connection::open_with_flags(path, flags).map_err(sql_err)?;
        let pragmas = match options.rosbag2.sqlite_preset {
            SqlitePreset::Default => "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;",
            SqlitePreset::Resilient => "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        };
        db.execute_batch(pragmas).map_err(sql_err)?;
        // The config file's pragmas go after the preset's, as rosbag2 applies them (checked
        // for quotes and semicolons when the file was read).
        for entry in &options.rosbag2.storage_config.write_pragmas {
            db.execute_batch(&format!("PRAGMA {entry};")).map_err(sql_err)?;
        }
        // The "complete" mark: rbag's files say who wrote them, and are marked finished only at
        // close; other tools' files carry neither and are never flagged.
        db.execute_batch(&format!("PRAGMA application_id = {RBAG_APPLICATION_ID}; PRAGMA user_version = 0;"))
            .map_err(sql_err)?;
        let ddl = [CREATE_SCHEMA, CREATE_METADATA, CREATE_TOPICS, CREATE_DEFINITIONS, CREATE_MESSAGES, CREATE_INDEX];
        let setup = || -> rusqlite::Result<()> {
            db.execute_batch("BEGIN")?;
            for stmt in ddl {
                db.execute_batch(stmt)?;
            }
            db.execute(INSERT_SCHEMA, rusqlite::params![SCHEMA_VERSION, options.rosbag2.ros_distro])?;
            db.execute_batch("COMMIT")
        };
        setup().map_err(sql_err)?;
        let committed_bytes = db_size(&db).map_err(sql_err)?;
        Ok(SqliteWriter {
            path: path.into(),
            db: Some(db),
            topics: BTreeMap::new(),
            defined: HashSet::new(),
            pending: Vec::new(),
            pending_data: Vec::new(),
            pending_bytes: 0,
            committed_bytes,
            bag_metadata: None,
            metadata_version: options.rosbag2.metadata_version,
            poisoned: None,
            finished: false,
        })
    }

    fn check(&self) -> Result<()> {
        match (&self.poisoned, self.finished) {
            (Some(e), _) => Err(Error::Poisoned(e.clone())),
            (None, true) => Err(Error::Invalid(format!("{}: the writer is closed", self.path.display()))),
            (None, false) => Ok(()),
        }
    }

    /// Records an SQLite failure: this and every later call fail.
    fn poison(&mut self, e: rusqlite::Error) -> Error {
        let err = sql_err(e).in_file(&self.path);
        self.poisoned = Some(err.to_string());
        err
    }

    fn db(&self) -> Result<&rusqlite::Connection> {
        self.db.as_ref().ok_or_else(|| Error::Invalid(format!("{}: the writer is closed", self.path.display())))
    }

    fn insert_topic(&mut self, conn: &Connection) -> Result<u32> {
        if let Some((&id, (_, ty))) = self.topics.iter().find(|(_, (name, _))| *name == conn.topic) {
            // rosbag2 keeps one row per topic name: a second connection shares it.
            if *ty != conn.message_type {
                return Err(Error::Invalid(format!(
                    "topic {}: type {} conflicts with {ty} already on it",
                    conn.topic, conn.message_type
                )));
            }
            return Ok(id);
        }
        let meta = |key: &str| conn.metadata.get(key).map_or("", String::as_str);
        let encoding = if conn.encoding.is_empty() { "cdr" } else { conn.encoding.as_str() };
        // rosbag2 stores a type it has no definition for as encoding "unknown" with empty text;
        // rosbags (0.11) fails to open such a file, and both read a missing row as "none", so
        // no row is written instead.
        let has_definition = !conn.definition.is_empty() || !conn.definition_encoding.is_empty();
        let needs_definition =
            has_definition && !conn.message_type.is_empty() && !self.defined.contains(&conn.message_type);
        let db = self.db()?;
        let inserted = (|| -> rusqlite::Result<i64> {
            db.prepare_cached(INSERT_TOPIC)?.execute(rusqlite::params![
                conn.topic,
                conn.message_type,
                encoding,
                meta(QOS_KEY),
                meta(TYPE_HASH_KEY)
            ])?;
            let id = db.last_insert_rowid();
            if needs_definition {
                let def_encoding =
                    if conn.definition_encoding.is_empty() { "unknown" } else { conn.definition_encoding.as_str() };
                db.prepare_cached(INSERT_DEFINITION)?.execute(rusqlite::params![
                    conn.message_type,
                    def_encoding,
                    conn.definition,
                    meta(TYPE_HASH_KEY)
                ])?;
            }
            Ok(id)
        })();
        let id = inserted.map_err(|e| self.poison(e))?;
        let id = u32::try_from(id).map_err(|_| Error::Invalid(format!("topic id {id} is outside 0..2^32")))?;
        if needs_definition {
            self.defined.insert(conn.message_type.clone());
        }
        self.topics.insert(id, (conn.topic.clone(), conn.message_type.clone()));
        Ok(id)
    }

    fn insert_message(&mut self, conn: u32, log_time: u64, data: &[u8]) -> Result<()> {
        if !self.topics.contains_key(&conn) {
            return Err(Error::UnknownConnection { id: conn });
        }
        let timestamp = i64::try_from(log_time).map_err(|_| {
            Error::Invalid(format!("log time {log_time} ns is past the largest SQLite timestamp (2^63-1)"))
        })?;
        if data.len() > MAX_PAYLOAD {
            return Err(Error::Invalid(format!("message of {} bytes is over SQLite's 1 GB value limit", data.len())));
        }
        if data.len() as u64 >= COMMIT_BYTES {
            // A large message is inserted straight from the caller's buffer, not copied.
            self.flush()?;
            return self.insert_batch(&[(timestamp, conn, data.len())], data);
        }
        self.pending_data.extend_from_slice(data);
        self.pending.push((timestamp, conn, self.pending_data.len()));
        self.pending_bytes += data.len() as u64 + ROW_OVERHEAD;
        if self.pending.len() as u64 >= COMMIT_MESSAGES || self.pending_data.len() as u64 >= COMMIT_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Inserts and commits the gathered messages.
    pub(super) fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.pending);
        let data = std::mem::take(&mut self.pending_data);
        let result = self.insert_batch(&rows, &data);
        // The buffers keep their capacity for the next batch.
        (self.pending, self.pending_data) = (rows, data);
        self.pending.clear();
        self.pending_data.clear();
        result
    }

    /// Inserts `rows` (payloads end at the offsets they give into `data`) in one transaction and
    /// measures the file. On failure the transaction stays open, to be rolled back at close: what
    /// earlier commits stored is kept.
    fn insert_batch(&mut self, rows: &[(i64, u32, usize)], data: &[u8]) -> Result<()> {
        let db = self.db()?;
        let inserted = (|| -> rusqlite::Result<u64> {
            db.execute_batch("BEGIN TRANSACTION;")?;
            // Full groups go through one multi-row INSERT, the rest one row at a time. A row
            // per statement would open and close the cursors for each message, where a group
            // keeps them on the last page of the table and index and appends there.
            let groups = rows.chunks_exact(ROWS_PER_INSERT);
            let rest = groups.remainder();
            let mut start = 0;
            let mut insert = |stmt: &mut rusqlite::CachedStatement<'_>, group: &[(i64, u32, usize)]| {
                for (k, &(timestamp, topic, end)) in group.iter().enumerate() {
                    let payload = data.get(start..end).unwrap_or_default();
                    stmt.raw_bind_parameter(3 * k + 1, timestamp)?;
                    stmt.raw_bind_parameter(3 * k + 2, topic)?;
                    stmt.raw_bind_parameter(3 * k + 3, payload)?;
                    start = end;
                }
                stmt.raw_execute()
            };
            if rows.len() >= ROWS_PER_INSERT {
                let mut stmt = db.prepare_cached(&multi_row_insert())?;
                for group in groups {
                    insert(&mut stmt, group)?;
                }
            }
            let mut stmt = db.prepare_cached(INSERT_MESSAGE)?;
            for row in rest.chunks(1) {
                insert(&mut stmt, row)?;
            }
            drop(stmt);
            db.execute_batch("COMMIT;")?;
            db_size(db)
        })();
        match inserted {
            Ok(size) => {
                self.committed_bytes = size;
                self.pending_bytes = 0;
                Ok(())
            }
            Err(e) => Err(self.poison(e)),
        }
    }

    fn close(&mut self) -> Result<()> {
        self.check()?;
        self.flush()?;
        if let Some(yaml) = self.bag_metadata.take() {
            let stored = unwrap_bag_metadata(&yaml);
            let version = metadata_version(&stored).unwrap_or(self.metadata_version);
            let db = self.db()?;
            let inserted = db.execute(INSERT_METADATA, rusqlite::params![version, stored]).and_then(|_| db_size(db));
            match inserted {
                Ok(size) => self.committed_bytes = size,
                Err(e) => return Err(self.poison(e)),
            }
        }
        if let Err(e) = self.db()?.execute_batch("PRAGMA user_version = 1") {
            return Err(self.poison(e));
        }
        if let Some(db) = self.db.take() {
            // The last connection closing checkpoints a WAL and removes the -wal and -shm files.
            if let Err((_, e)) = db.close() {
                return Err(self.poison(e));
            }
        }
        self.finished = true;
        Ok(())
    }
}

/// Database size in bytes: what rosbag2 measures for splitting (WAL content included).
fn db_size(db: &rusqlite::Connection) -> rusqlite::Result<u64> {
    let pages: i64 = db.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let page_size: i64 = db.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok((pages.max(0) as u64).saturating_mul(page_size.max(0) as u64))
}

/// rosbag2 stores the BagMetadata map without metadata.yaml's `rosbag2_bagfile_information:`
/// wrapper; a wrapped text is unwrapped and dedented.
pub(super) fn unwrap_bag_metadata(yaml: &str) -> String {
    let mut lines = yaml.lines();
    let Some(first) = lines.by_ref().find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')) else {
        return yaml.to_string();
    };
    if first.trim_end() != "rosbag2_bagfile_information:" {
        return yaml.to_string();
    }
    let rest: Vec<&str> = lines.collect();
    let indent = rest.iter().find(|l| !l.trim().is_empty()).map_or(0, |l| l.len() - l.trim_start_matches(' ').len());
    let mut out = String::with_capacity(yaml.len());
    for line in rest {
        let strip = line.len() - line.trim_start_matches(' ').len();
        out.push_str(&line[strip.min(indent)..]);
        out.push('\n');
    }
    out
}

/// The top-level `version:` of a BagMetadata YAML.
pub(super) fn metadata_version(yaml: &str) -> Option<u32> {
    yaml.lines().find_map(|l| l.strip_prefix("version:")).and_then(|v| v.trim().parse().ok())
}

impl StorageWriter for SqliteWriter {
    fn add_connection(&mut self, conn: &Connection) -> Result<u32> {
        self.check()?;
        self.insert_topic(conn).map_err(|e| e.in_file(&self.path))
    }

    fn write(&mut self, conn: u32, log_time: u64, _publish_time: u64, data: &[u8]) -> Result<()> {
        self.check()?;
        self.insert_message(conn, log_time, data).map_err(|e| e.in_file(&self.path))
    }

    fn checkpoint(&mut self) -> Result<()> {
        self.check()?;
        self.flush().map_err(|e| e.in_file(&self.path))
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.close()
    }
}

impl FileWriter for SqliteWriter {
    fn bytes_written(&self) -> u64 {
        self.committed_bytes + self.pending_bytes
    }

    fn set_bag_metadata(&mut self, yaml: &str) {
        self.bag_metadata = Some(yaml.to_string());
    }
}

impl Drop for SqliteWriter {
    fn drop(&mut self) {
        // Best effort: dropping a connection rolls its transaction back, losing what was written.
        if !self.finished && self.poisoned.is_none() {
            let _ = self.flush();
        }
    }
}
