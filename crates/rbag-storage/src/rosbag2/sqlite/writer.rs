//! Writing a `.db3` file, schema version 4, as rosbag2's sqlite3 plugin does.

use std::collections::{BTreeMap, HashSet};
use std::ffi::{c_int, CStr};
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use rusqlite::{ffi, OpenFlags};

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
/// 16 MiB, as rosbag2 writes its message cache: commits are what cost time. The batch goes
/// through one prepared multi-row statement (`RawInsert`) that binds the payloads where they
/// lie, without a statement-cache lookup or a copy per message. [`StorageWriter::finish`]
/// must be called; dropping the writer commits what it holds but stores no bag metadata.
/// After the first SQLite error (a full disk, say) every call fails with [`Error::Poisoned`];
/// the batches committed before it stay in the file.
pub struct SqliteWriter {
    path: PathBuf,
    /// The message INSERTs, prepared on first use. Declared before `db`: they are finalized
    /// before the connection closes.
    inserts: Inserts,
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
        let db = if coalesce::register() == ffi::SQLITE_OK {
            rusqlite::Connection::open_with_flags_and_vfs(path, flags, coalesce::VFS_NAME)
        } else {
            rusqlite::Connection::open_with_flags(path, flags)
        };
        let db = db.map_err(sql_err)?;
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
        // Gathering page writes is safe where a commit's pages are visible only once the lock
        // is released: not in WAL mode, and not with a journal file on disk, whose deletion is
        // the commit and must come after the pages are in the file.
        let journal: String = db.query_row("PRAGMA journal_mode", [], |r| r.get(0)).map_err(sql_err)?;
        if journal.eq_ignore_ascii_case("memory") || journal.eq_ignore_ascii_case("off") {
            coalesce::enable(&db);
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
            inserts: Inserts::default(),
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
        let Some(db) = self.db.as_ref() else {
            return Err(Error::Invalid(format!("{}: the writer is closed", self.path.display())));
        };
        let inserts = &mut self.inserts;
        let inserted = (|| -> rusqlite::Result<u64> {
            db.execute_batch("BEGIN TRANSACTION;")?;
            // Full groups go through one multi-row INSERT, the rest one row at a time. A row
            // per statement would open and close the cursors for each message, where a group
            // keeps them on the last page of the table and index and appends there.
            let groups = rows.chunks_exact(ROWS_PER_INSERT);
            let rest = groups.remainder();
            let mut start = 0;
            if rows.len() >= ROWS_PER_INSERT {
                let many = Inserts::get(&mut inserts.many, db, ROWS_PER_INSERT)?;
                let run = groups.into_iter().try_for_each(|group| many.run(db, group, data, &mut start));
                // No binding may outlive `data` (a large message is the caller's buffer).
                many.clear();
                run?;
            }
            if !rest.is_empty() {
                let one = Inserts::get(&mut inserts.one, db, 1)?;
                let run = rest.chunks(1).try_for_each(|row| one.run(db, row, data, &mut start));
                one.clear();
                run?;
            }
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
        // Statements first: SQLite refuses to close a connection with unfinalized statements.
        self.inserts = Inserts::default();
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

/// The writer's two message INSERTs: [`ROWS_PER_INSERT`] rows, and one row for a batch's rest.
#[derive(Default)]
struct Inserts {
    many: Option<RawInsert>,
    one: Option<RawInsert>,
}

impl Inserts {
    /// The statement in `slot`, prepared for `rows` rows if it was not yet.
    fn get<'a>(
        slot: &'a mut Option<RawInsert>,
        db: &rusqlite::Connection,
        rows: usize,
    ) -> rusqlite::Result<&'a mut RawInsert> {
        if slot.is_none() {
            *slot = Some(RawInsert::prepare(db, rows)?);
        }
        Ok(slot.as_mut().expect("just prepared"))
    }
}

/// A message INSERT of a fixed number of rows ([`multi_row_insert`]), prepared with SQLite's C
/// API so that payloads are bound `SQLITE_STATIC` (rusqlite binds blobs `SQLITE_TRANSIENT`:
/// SQLite would allocate and copy every payload before copying it again into the row).
///
/// It belongs to the connection that prepared it, is only used with that connection, and must
/// be dropped (finalized) before the connection closes.
struct RawInsert {
    stmt: NonNull<ffi::sqlite3_stmt>,
    rows: usize,
}

// SAFETY: the statement is used only together with its connection, which is `Send`, by
// whoever owns the `SqliteWriter` holding both; SQLite is built thread-safe and the connection is
// opened NO_MUTEX, i.e. usable from any one thread at a time.
unsafe impl Send for RawInsert {}

impl RawInsert {
    fn prepare(db: &rusqlite::Connection, rows: usize) -> rusqlite::Result<Self> {
        let sql = multi_row_insert(rows);
        let len = c_int::try_from(sql.len()).map_err(|_| failure(ffi::SQLITE_TOOBIG, None))?;
        let mut stmt = ptr::null_mut();
        // SAFETY: `db` is an open connection; `sql` is valid for `len` bytes; `stmt` is written.
        let rc = unsafe {
            ffi::sqlite3_prepare_v3(
                db.handle(),
                sql.as_ptr().cast(),
                len,
                ffi::SQLITE_PREPARE_PERSISTENT,
                &mut stmt,
                ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            // SAFETY: `db` is open; a failed prepare leaves `stmt` NULL.
            return Err(unsafe { last_error(db, rc) });
        }
        let stmt = NonNull::new(stmt).ok_or_else(|| failure(ffi::SQLITE_MISUSE, Some("empty INSERT".into())))?;
        Ok(RawInsert { stmt, rows })
    }

    /// Binds `rows` (`rows.len()` must be the statement's row count; payload k is
    /// `data[start..end_k]`, `start` advancing to each end) and runs the statement once.
    fn run(
        &mut self,
        db: &rusqlite::Connection,
        rows: &[(i64, u32, usize)],
        data: &[u8],
        start: &mut usize,
    ) -> rusqlite::Result<()> {
        if rows.len() != self.rows {
            return Err(failure(
                ffi::SQLITE_RANGE,
                Some(format!("{} rows for a {}-row INSERT", rows.len(), self.rows)),
            ));
        }
        let stmt = self.stmt.as_ptr();
        for (k, &(timestamp, topic, end)) in rows.iter().enumerate() {
            let payload = data.get(*start..end).unwrap_or_default();
            *start = end;
            // At most ROWS_PER_INSERT × 3 parameters, prepared with the statement.
            let i = 3 * k as c_int;
            // SAFETY: `stmt` is live and not running (reset after every step); the parameter
            // indexes exist. The payload is bound SQLITE_STATIC: it stays valid and unchanged
            // until the step below has copied it into the row, and `clear` drops the binding
            // before `data` goes (`insert_batch`).
            let rc = unsafe {
                let mut rc = ffi::sqlite3_bind_int64(stmt, i + 1, timestamp);
                if rc == ffi::SQLITE_OK {
                    rc = ffi::sqlite3_bind_int64(stmt, i + 2, i64::from(topic));
                }
                if rc == ffi::SQLITE_OK {
                    rc = if payload.is_empty() {
                        // As rusqlite binds an empty blob: a zero-length BLOB, not NULL.
                        ffi::sqlite3_bind_zeroblob(stmt, i + 3, 0)
                    } else {
                        ffi::sqlite3_bind_blob64(
                            stmt,
                            i + 3,
                            payload.as_ptr().cast(),
                            payload.len() as u64,
                            ffi::SQLITE_STATIC(),
                        )
                    };
                }
                rc
            };
            if rc != ffi::SQLITE_OK {
                // SAFETY: `db` is the statement's open connection.
                return Err(unsafe { last_error(db, rc) });
            }
        }
        // SAFETY: as above; reset makes the statement ready for the next run, keeping bindings.
        unsafe {
            let rc = ffi::sqlite3_step(stmt);
            let result = if rc == ffi::SQLITE_DONE { Ok(()) } else { Err(last_error(db, rc)) };
            ffi::sqlite3_reset(stmt);
            result
        }
    }

    /// Drops every binding (payloads bound in place must not outlive their buffer).
    fn clear(&mut self) {
        // SAFETY: the statement is live and not running.
        unsafe {
            ffi::sqlite3_clear_bindings(self.stmt.as_ptr());
        }
    }
}

impl Drop for RawInsert {
    fn drop(&mut self) {
        // SAFETY: the statement is live and dropped once; its connection is still open
        // (`SqliteWriter` declares `inserts` before `db`, and `close` drops them first).
        unsafe {
            ffi::sqlite3_finalize(self.stmt.as_ptr());
        }
    }
}

fn failure(code: c_int, message: Option<String>) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), message)
}

/// The connection's last error, with SQLite's message, for result code `rc`.
///
/// # Safety
/// `db` must be open.
unsafe fn last_error(db: &rusqlite::Connection, rc: c_int) -> rusqlite::Error {
    // SAFETY: the caller's; sqlite3_errmsg returns a NUL-terminated string owned by SQLite.
    let message = unsafe {
        let m = ffi::sqlite3_errmsg(db.handle());
        (!m.is_null()).then(|| CStr::from_ptr(m).to_string_lossy().into_owned())
    };
    failure(rc, message)
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

/// Write coalescing for the writer's database file: an SQLite VFS (`rbag-coalesce`) over the
/// default one whose main database files gather contiguous page writes into one write of up to
/// 64 KiB. SQLite writes a commit's pages one 4 KiB `pwrite` each, in page
/// order; the kernel's per-call and per-page work for those (a third of the writer's CPU time
/// for 100 B messages) shrinks with larger writes. The file's bytes are the same.
///
/// Only enabled on a file with [`enable`] (the writer does for `journal_mode` MEMORY or OFF);
/// otherwise every call goes straight through. Gathered bytes reach the file before anything
/// can look at it: before any read, size, truncate, sync, lock change, file control (the
/// commit's `SQLITE_FCNTL_SYNC`, issued even with `synchronous=OFF`, so a failed write fails the
/// commit), mapping or close. A failed deferred write is sticky: every later call returns it.
/// Shared memory (WAL mode) turns coalescing off for good.
mod coalesce {
    use std::ffi::{c_int, c_void, CStr};
    use std::ptr;
    use std::sync::atomic::{AtomicPtr, Ordering};
    use std::sync::OnceLock;

    use rusqlite::ffi;

    pub(super) const VFS_NAME: &CStr = c"rbag-coalesce";
    /// The file control [`enable`] sends (SQLite's own opcodes are small numbers; others' VFSes
    /// answer SQLITE_NOTFOUND).
    const FCNTL_COALESCE: c_int = 0x7262_0001;
    /// Largest write gathered: 64 KiB cuts the kernel's time for a commit to about a third of
    /// 4 KiB writes here, and the unix VFS writes at most 128 KiB - 1 bytes per call (it masks
    /// the length to 17 bits).
    const CAPACITY: usize = 64 << 10;
    /// Where the default VFS's file object starts in ours.
    const REAL_OFFSET: usize = std::mem::size_of::<File>().next_multiple_of(16);

    /// Our file object; the default VFS's follows at [`REAL_OFFSET`].
    #[repr(C)]
    struct File {
        base: ffi::sqlite3_file,
        real: *mut ffi::sqlite3_file,
        /// Gathered bytes, for the file from `offset` on; null while not coalescing.
        buf: *mut Vec<u8>,
        offset: i64,
        /// The error of a failed deferred write, or SQLITE_OK.
        failed: c_int,
    }

    static REAL_VFS: AtomicPtr<ffi::sqlite3_vfs> = AtomicPtr::new(ptr::null_mut());

    /// Registers the VFS (once; not as the default). SQLITE_OK if it can be used.
    pub(super) fn register() -> c_int {
        static REGISTERED: OnceLock<c_int> = OnceLock::new();
        *REGISTERED.get_or_init(|| {
            // SAFETY: sqlite3_vfs_find initialises SQLite and returns a VFS that lives as long
            // as the process; the copy we register is leaked, so it does too.
            unsafe {
                let real = ffi::sqlite3_vfs_find(ptr::null());
                if real.is_null() {
                    return ffi::SQLITE_ERROR;
                }
                REAL_VFS.store(real, Ordering::Release);
                // Every other method is the default VFS's, called with a copy of its fields.
                let mut vfs = *real;
                vfs.szOsFile = (REAL_OFFSET + (*real).szOsFile as usize) as c_int;
                vfs.pNext = ptr::null_mut();
                vfs.zName = VFS_NAME.as_ptr();
                vfs.xOpen = Some(x_open);
                ffi::sqlite3_vfs_register(Box::into_raw(Box::new(vfs)), 0)
            }
        })
    }

    /// Turns coalescing on for `db`'s main file if it was opened through this VFS.
    pub(super) fn enable(db: &rusqlite::Connection) {
        let mut on: c_int = 1;
        // SAFETY: `db` is open; an unknown opcode is answered SQLITE_NOTFOUND.
        unsafe {
            ffi::sqlite3_file_control(db.handle(), c"main".as_ptr(), FCNTL_COALESCE, (&raw mut on).cast());
        }
    }

    const fn methods(version: c_int) -> ffi::sqlite3_io_methods {
        ffi::sqlite3_io_methods {
            iVersion: version,
            xClose: Some(x_close),
            xRead: Some(x_read),
            xWrite: Some(x_write),
            xTruncate: Some(x_truncate),
            xSync: Some(x_sync),
            xFileSize: Some(x_file_size),
            xLock: Some(x_lock),
            xUnlock: Some(x_unlock),
            xCheckReservedLock: Some(x_check_reserved_lock),
            xFileControl: Some(x_file_control),
            xSectorSize: Some(x_sector_size),
            xDeviceCharacteristics: Some(x_device_characteristics),
            xShmMap: Some(x_shm_map),
            xShmLock: Some(x_shm_lock),
            xShmBarrier: Some(x_shm_barrier),
            xShmUnmap: Some(x_shm_unmap),
            xFetch: Some(x_fetch),
            xUnfetch: Some(x_unfetch),
        }
    }
    /// Ours for each version of the default VFS's methods (SQLite calls only what the version
    /// has, and so do we).
    static METHODS: [ffi::sqlite3_io_methods; 3] = [methods(1), methods(2), methods(3)];

    unsafe extern "C" fn x_open(
        _vfs: *mut ffi::sqlite3_vfs,
        name: ffi::sqlite3_filename,
        file: *mut ffi::sqlite3_file,
        flags: c_int,
        out_flags: *mut c_int,
    ) -> c_int {
        let real_vfs = REAL_VFS.load(Ordering::Acquire);
        // SAFETY (whole function): SQLite hands over `file` of szOsFile bytes, ours; the default
        // VFS's object fits after our header.
        unsafe {
            let Some(open) = (*real_vfs).xOpen else { return ffi::SQLITE_ERROR };
            if flags & ffi::SQLITE_OPEN_MAIN_DB == 0 {
                // Journals and temporary files: the default VFS's object, in place.
                return open(real_vfs, name, file, flags, out_flags);
            }
            let real = file.cast::<u8>().add(REAL_OFFSET).cast::<ffi::sqlite3_file>();
            let f = file.cast::<File>();
            f.write(File {
                base: ffi::sqlite3_file { pMethods: ptr::null() },
                real,
                buf: ptr::null_mut(),
                offset: 0,
                failed: ffi::SQLITE_OK,
            });
            (*real).pMethods = ptr::null();
            let rc = open(real_vfs, name, real, flags, out_flags);
            let methods = (*real).pMethods;
            if rc != ffi::SQLITE_OK {
                // SQLite calls xClose only if pMethods is set: ours stays null.
                if let Some(close) = methods.as_ref().and_then(|m| m.xClose) {
                    close(real);
                }
                return rc;
            }
            let version = (*methods).iVersion.clamp(1, 3);
            (*f).base.pMethods = &METHODS[version as usize - 1];
            ffi::SQLITE_OK
        }
    }

    /// The default VFS's file object and methods under `file`.
    ///
    /// # Safety
    /// `file` must be one of ours, open.
    unsafe fn real(file: *mut ffi::sqlite3_file) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
        // SAFETY: the caller's; the default VFS's methods are static.
        unsafe {
            let real = (*file.cast::<File>()).real;
            (real, &*(*real).pMethods)
        }
    }

    /// Writes the gathered bytes.
    ///
    /// # Safety
    /// `file` must be one of ours, open.
    unsafe fn flush(file: *mut ffi::sqlite3_file) -> c_int {
        // SAFETY: the caller's.
        unsafe {
            let f = file.cast::<File>();
            if (*f).failed != ffi::SQLITE_OK {
                return (*f).failed;
            }
            let Some(buf) = (*f).buf.as_mut() else { return ffi::SQLITE_OK };
            if buf.is_empty() {
                return ffi::SQLITE_OK;
            }
            let (real, m) = real(file);
            let Some(write) = m.xWrite else { return ffi::SQLITE_IOERR_WRITE };
            let rc = write(real, buf.as_ptr().cast(), buf.len() as c_int, (*f).offset);
            buf.clear();
            if rc != ffi::SQLITE_OK {
                (*f).failed = rc;
            }
            rc
        }
    }

    /// Flushes and stops coalescing.
    ///
    /// # Safety
    /// `file` must be one of ours, open.
    unsafe fn stop(file: *mut ffi::sqlite3_file) -> c_int {
        // SAFETY: the caller's; `buf` came from Box::into_raw.
        unsafe {
            let rc = flush(file);
            let f = file.cast::<File>();
            if !(*f).buf.is_null() {
                drop(Box::from_raw((*f).buf));
                (*f).buf = ptr::null_mut();
            }
            rc
        }
    }

    /// Flushes, then calls the default VFS's method.
    macro_rules! flushed {
        ($file:ident, $method:ident $(, $arg:expr)*) => {{
            // SAFETY: SQLite calls a method only on an open file of ours.
            unsafe {
                let rc = flush($file);
                if rc != ffi::SQLITE_OK {
                    return rc;
                }
                let (real, m) = real($file);
                match m.$method {
                    Some(f) => f(real $(, $arg)*),
                    None => ffi::SQLITE_MISUSE,
                }
            }
        }};
    }
    /// Calls the default VFS's method as it is.
    macro_rules! through {
        ($file:ident, $method:ident, $none:expr $(, $arg:expr)*) => {{
            // SAFETY: SQLite calls a method only on an open file of ours.
            unsafe {
                let (real, m) = real($file);
                match m.$method {
                    Some(f) => f(real $(, $arg)*),
                    None => $none,
                }
            }
        }};
    }

    unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
        // SAFETY: SQLite closes an open file of ours once.
        unsafe {
            let rc = stop(file);
            let (real, m) = real(file);
            let closed = m.xClose.map_or(ffi::SQLITE_OK, |close| close(real));
            if rc != ffi::SQLITE_OK {
                rc
            } else {
                closed
            }
        }
    }

    unsafe extern "C" fn x_read(file: *mut ffi::sqlite3_file, out: *mut c_void, amount: c_int, offset: i64) -> c_int {
        flushed!(file, xRead, out, amount, offset)
    }

    unsafe extern "C" fn x_write(
        file: *mut ffi::sqlite3_file,
        data: *const c_void,
        amount: c_int,
        offset: i64,
    ) -> c_int {
        // SAFETY: SQLite calls with an open file of ours and `amount` readable bytes at `data`.
        unsafe {
            let f = file.cast::<File>();
            if (*f).failed != ffi::SQLITE_OK {
                return (*f).failed;
            }
            let n = usize::try_from(amount).unwrap_or(0);
            if !(*f).buf.is_null() {
                let bytes = std::slice::from_raw_parts(data.cast::<u8>(), n);
                {
                    let buf = &mut *(*f).buf;
                    let end = (*f).offset + buf.len() as i64;
                    if !buf.is_empty() && offset == end && buf.len() + n <= CAPACITY {
                        buf.extend_from_slice(bytes);
                        return ffi::SQLITE_OK;
                    }
                }
                let rc = flush(file);
                if rc != ffi::SQLITE_OK {
                    return rc;
                }
                if n < CAPACITY {
                    (*(*f).buf).extend_from_slice(bytes);
                    (*f).offset = offset;
                    return ffi::SQLITE_OK;
                }
            }
            let (real, m) = real(file);
            match m.xWrite {
                Some(write) => write(real, data, amount, offset),
                None => ffi::SQLITE_IOERR_WRITE,
            }
        }
    }

    unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
        flushed!(file, xTruncate, size)
    }

    unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
        flushed!(file, xSync, flags)
    }

    unsafe extern "C" fn x_file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
        flushed!(file, xFileSize, size)
    }

    unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
        through!(file, xLock, ffi::SQLITE_OK, level)
    }

    unsafe extern "C" fn x_unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
        // Nothing gathered may be left when another connection can look.
        // SAFETY: SQLite calls a method only on an open file of ours.
        let rc = unsafe { flush(file) };
        let unlocked = through!(file, xUnlock, ffi::SQLITE_OK, level);
        if rc != ffi::SQLITE_OK {
            rc
        } else {
            unlocked
        }
    }

    unsafe extern "C" fn x_check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
        through!(file, xCheckReservedLock, ffi::SQLITE_OK, out)
    }

    unsafe extern "C" fn x_file_control(file: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
        if op == FCNTL_COALESCE {
            // SAFETY: our opcode's argument is a c_int (see `enable`); the file is ours.
            unsafe {
                let f = file.cast::<File>();
                if *arg.cast::<c_int>() == 0 {
                    return stop(file);
                }
                if (*f).buf.is_null() {
                    (*f).buf = Box::into_raw(Box::new(Vec::with_capacity(CAPACITY)));
                }
                return ffi::SQLITE_OK;
            }
        }
        flushed!(file, xFileControl, op, arg)
    }

    unsafe extern "C" fn x_sector_size(file: *mut ffi::sqlite3_file) -> c_int {
        through!(file, xSectorSize, 4096)
    }

    unsafe extern "C" fn x_device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
        through!(file, xDeviceCharacteristics, 0)
    }

    unsafe extern "C" fn x_shm_map(
        file: *mut ffi::sqlite3_file,
        page: c_int,
        size: c_int,
        extend: c_int,
        out: *mut *mut c_void,
    ) -> c_int {
        // WAL mode: readers find committed pages through shared memory, not locks; no
        // coalescing from here on.
        // SAFETY: SQLite calls a method only on an open file of ours.
        let rc = unsafe { stop(file) };
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        through!(file, xShmMap, ffi::SQLITE_IOERR_SHMMAP, page, size, extend, out)
    }

    unsafe extern "C" fn x_shm_lock(file: *mut ffi::sqlite3_file, offset: c_int, n: c_int, flags: c_int) -> c_int {
        flushed!(file, xShmLock, offset, n, flags)
    }

    unsafe extern "C" fn x_shm_barrier(file: *mut ffi::sqlite3_file) {
        // SAFETY: SQLite calls a method only on an open file of ours.
        unsafe {
            flush(file);
            let (real, m) = real(file);
            if let Some(barrier) = m.xShmBarrier {
                barrier(real);
            }
        }
    }

    unsafe extern "C" fn x_shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
        flushed!(file, xShmUnmap, delete)
    }

    unsafe extern "C" fn x_fetch(
        file: *mut ffi::sqlite3_file,
        offset: i64,
        amount: c_int,
        out: *mut *mut c_void,
    ) -> c_int {
        flushed!(file, xFetch, offset, amount, out)
    }

    unsafe extern "C" fn x_unfetch(file: *mut ffi::sqlite3_file, offset: i64, p: *mut c_void) -> c_int {
        through!(file, xUnfetch, ffi::SQLITE_OK, offset, p)
    }
}
