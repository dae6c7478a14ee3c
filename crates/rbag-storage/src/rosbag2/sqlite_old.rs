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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rusqlite::types::ValueRef;
use rusqlite::{params_from_iter, ErrorCode, OpenFlags};

use super::{FileWriter, QOS_KEY, TYPE_HASH_KEY};
use crate::{
    Connection, ConnectionStats, Error, Filter, Message, MessageIter, Place, ReadOptions, ReadStats, Result,
    SqlitePreset, StorageInfo, StorageReader, StorageWriter, WriteOptions,
};

/// The schema version the writer produces (rosbag2 Iron and later).
pub const SCHEMA_VERSION: u32 = 4;

/// A producer thread hands over a batch once it holds this many messages...
const BATCH_MESSAGES: usize = 256;
/// ...or this many payload bytes, whichever comes first.
const BATCH_BYTES: usize = 4 << 20;
/// A `-wal` file shorter than its header holds no frames.
const WAL_HEADER_LEN: u64 = 32;
/// Batches in flight between a producer thread and its iterator.
const CHANNEL_DEPTH: usize = 4;

/// The writer inserts and commits the messages it gathered once it holds this many...
const COMMIT_MESSAGES: u64 = 10_000;
/// ...or this many payload bytes.
const COMMIT_BYTES: u64 = 16 << 20;
/// Per-row overhead assumed by [`FileWriter::bytes_written`] for rows not yet committed.
const ROW_OVERHEAD: u64 = 32;
/// SQLite's default `SQLITE_MAX_LENGTH` for one value, less room for the row's other columns.
const MAX_PAYLOAD: usize = 1_000_000_000 - 64;

/// rosbag2's DDL (`sqlite_storage.cpp`, `SqliteStorage::initialize`), byte for byte, in its order.
const CREATE_SCHEMA: &str = "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY,ros_distro TEXT NOT NULL);";
const CREATE_METADATA: &str =
    "CREATE TABLE metadata(id INTEGER PRIMARY KEY,metadata_version INTEGER NOT NULL,metadata TEXT NOT NULL);";
const CREATE_TOPICS: &str = "CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,serialization_format TEXT NOT NULL,offered_qos_profiles TEXT NOT NULL,type_description_hash TEXT NOT NULL);";
const CREATE_DEFINITIONS: &str = "CREATE TABLE message_definitions(id INTEGER PRIMARY KEY,topic_type TEXT NOT NULL,encoding TEXT NOT NULL,encoded_message_definition TEXT NOT NULL,type_description_hash TEXT NOT NULL);";
const CREATE_MESSAGES: &str =
    "CREATE TABLE messages(id INTEGER PRIMARY KEY,topic_id INTEGER NOT NULL,timestamp INTEGER NOT NULL, data BLOB NOT NULL);";
const CREATE_INDEX: &str = "CREATE INDEX timestamp_idx ON messages (timestamp ASC);";

const INSERT_SCHEMA: &str = "INSERT INTO schema (schema_version, ros_distro) VALUES (?, ?)";
/// SQLite's `application_id` in files rbag writes (`rbag` in ASCII). With it, `user_version`
/// is 0 while the file is written and 1 once it was closed.
const RBAG_APPLICATION_ID: i64 = 0x7262_6167;

const INSERT_METADATA: &str = "INSERT INTO metadata (metadata_version, metadata) VALUES (?, ?)";
const INSERT_TOPIC: &str = "INSERT INTO topics(name, type, serialization_format, offered_qos_profiles, type_description_hash) VALUES (?, ?, ?, ?, ?)";
const INSERT_DEFINITION: &str = "INSERT INTO message_definitions (topic_type, encoding, encoded_message_definition, type_description_hash) VALUES (?, ?, ?, ?)";
const INSERT_MESSAGE: &str = "INSERT INTO messages (timestamp, topic_id, data) VALUES (?, ?, ?);";
/// Messages per multi-row INSERT (3 parameters each, well under SQLite's 32766).
const ROWS_PER_INSERT: usize = 64;

/// [`INSERT_MESSAGE`] for [`ROWS_PER_INSERT`] rows; the rows get consecutive ids in order.
fn multi_row_insert() -> String {
    let mut sql = String::from("INSERT INTO messages (timestamp, topic_id, data) VALUES (?, ?, ?)");
    for _ in 1..ROWS_PER_INSERT {
        sql.push_str(",(?, ?, ?)");
    }
    sql
}

/// A `.db3` file opened for reading. Cheap to share between threads: each message stream runs
/// on its own SQLite connection.
pub struct SqliteReader {
    path: PathBuf,
    /// rbag wrote this file and never closed it (see [`RBAG_APPLICATION_ID`]).
    unfinished: bool,
    /// The URI every connection of this reader opens (immutable unless a `-wal` is present).
    uri: String,
    /// For metadata, `info`, `nth` and `median_periods`; a mutex because connections are not `Sync`.
    db: Mutex<rusqlite::Connection>,
    /// Size of the main file plus its `-wal`, at open.
    size_bytes: u64,
    schema_version: u32,
    ros_distro: Option<String>,
    bag_metadata: Option<String>,
    connections: Vec<Connection>,
    /// Ids the `topics` table declares, sorted.
    declared: Vec<u32>,
    options: ReadOptions,
    /// Lenient readers: messages per topic id that the `topics` table lacks, found at open
    /// (each has a stand-in connection). Strict readers find them when they read.
    undeclared: BTreeMap<u32, u64>,
    /// Payload bytes handed out, shared with the producer threads.
    bytes_read: Arc<AtomicU64>,
}

/// What `open` learns from the file before any message is read.
struct Loaded {
    schema_version: u32,
    ros_distro: Option<String>,
    bag_metadata: Option<String>,
    connections: Vec<Connection>,
}

impl SqliteReader {
    /// Opens `path` read-only and reads its schema, topics and definitions. Fails with an error
    /// naming the file when it is not an SQLite database or has no rosbag2 tables.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Opens `path` with `options` (see [`ReadOptions`]). A lenient reader looks for rows of
    /// undeclared topic ids at open, which costs one pass over the `messages` table.
    pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Self> {
        Self::open_inner(path, *options).map_err(|e| e.in_file(path))
    }

    fn open_inner(path: &Path, options: ReadOptions) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            return Err(Error::Invalid("is a directory, not a .db3 file".into()));
        }
        let wal = sibling(path, "-wal");
        let wal_len = std::fs::metadata(&wal).ok().filter(|m| m.is_file()).map(|m| m.len());
        let attempt = |uri: String| -> Result<(String, rusqlite::Connection, Loaded)> {
            let db = open_read(&uri)?;
            let loaded = load(&db)?;
            Ok((uri, db, loaded))
        };
        let (uri, db, loaded) = match wal_len {
            // A live or crashed WAL recording: read through the WAL, or the messages it holds
            // would be missed. A `-wal` shorter than its 32-byte header holds none.
            Some(len) if len >= WAL_HEADER_LEN => attempt(uri_for(path, false)).map_err(|e| match e {
                Error::Invalid(reason) => Error::Invalid(format!(
                    "{reason} (the file has a {len}-byte -wal from an unfinished recording; SQLite reads it only \
                     where it can also open or create the -shm file, so copy the bag to a writable directory)"
                )),
                other => other,
            })?,
            _ => attempt(uri_for(path, true))?,
        };
        let unfinished = db
            .query_row("SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version)", [], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
            .is_ok_and(|(app, done)| app == RBAG_APPLICATION_ID && done == 0);
        let mut declared: Vec<u32> = loaded.connections.iter().map(|c| c.id).collect();
        declared.sort_unstable();
        let undeclared = if options.lenient { undeclared_rows(&db, &declared)? } else { BTreeMap::new() };
        let mut connections = loaded.connections;
        connections.extend(undeclared.keys().map(|&id| Connection::undeclared(id, "")));
        connections.sort_by_key(|c| c.id);
        Ok(SqliteReader {
            path: path.into(),
            unfinished,
            uri,
            db: Mutex::new(db),
            size_bytes: meta.len() + wal_len.unwrap_or(0),
            schema_version: loaded.schema_version,
            ros_distro: loaded.ros_distro,
            bag_metadata: loaded.bag_metadata,
            connections,
            declared,
            options,
            undeclared,
            bytes_read: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The db schema version: 1 (before Foxy), 2 (Foxy, Galactic), 3 (Humble), 4 (Iron and
    /// later). Decides which tables and columns can be expected.
    pub fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// The `ROS_DISTRO` of the recorder (schema 3 and later); `None` when the file has none or
    /// an empty one.
    pub fn ros_distro(&self) -> Option<String> {
        self.ros_distro.clone()
    }

    /// The last BagMetadata YAML stored in the file (rosbag2 Jazzy and later write it at open,
    /// at each split and at close): lets a bag whose `metadata.yaml` was lost be described.
    pub fn bag_metadata(&self) -> Option<String> {
        self.bag_metadata.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        // A panic while holding the lock leaves the connection usable: statements are reset.
        self.db.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ids of the connections of which `filter` accepts the topic.
    fn wanted(&self, filter: &Filter) -> Vec<u32> {
        self.connections.iter().filter(|c| filter.accepts_topic(&c.topic)).map(|c| c.id).collect()
    }

    fn summary(&self) -> Result<StorageInfo> {
        let mut info = StorageInfo {
            format: "sqlite3",
            version: self.schema_version.to_string(),
            files: vec![self.path.clone()],
            size_bytes: self.size_bytes,
            indexed: true,
            ..StorageInfo::default()
        };
        // Aggregated here rather than with GROUP BY topic_id: with no index on topic_id, SQLite
        // would sort every row first, which takes three times as long as this scan. LENGTH(data)
        // reads the blob's size from the record header, not the payload.
        let slot: HashMap<i64, usize> =
            self.connections.iter().enumerate().map(|(k, c)| (i64::from(c.id), k)).collect();
        // Per connection: count, payload bytes, first and last time.
        let mut totals = vec![(0u64, 0u64, u64::MAX, 0u64); self.connections.len()];
        // Rows of topic ids the `topics` table lacks (rosbag2 never shows them: it joins).
        let mut unknown: BTreeMap<u32, (u64, u64, u64)> = BTreeMap::new();
        {
            let db = self.lock();
            let mut stmt =
                db.prepare_cached("SELECT id, topic_id, timestamp, LENGTH(data) FROM messages").map_err(sql_err)?;
            let mut rows = stmt.query([]).map_err(sql_err)?;
            let mut last = (i64::MIN, None);
            while let Some(row) = rows.next().map_err(sql_err)? {
                let topic: i64 = row.get(1).map_err(sql_err)?;
                if topic != last.0 {
                    last = (topic, slot.get(&topic).copied());
                }
                let time = check_time(row.get(0).map_err(sql_err)?, row.get(2).map_err(sql_err)?)?;
                let Some(k) = last.1 else {
                    let id = topic_id(row.get(0).map_err(sql_err)?, topic)?;
                    let u = unknown.entry(id).or_insert((0, u64::MAX, 0));
                    (u.0, u.1, u.2) = (u.0 + 1, u.1.min(time), u.2.max(time));
                    continue;
                };
                let len: Option<i64> = row.get(3).map_err(sql_err)?;
                let t = &mut totals[k];
                t.0 += 1;
                t.1 += len.unwrap_or(0).max(0) as u64;
                t.2 = t.2.min(time);
                t.3 = t.3.max(time);
            }
        }
        for (c, (count, bytes, min, max)) in self.connections.iter().zip(totals) {
            info.connections.insert(c.id, ConnectionStats { message_count: count, data_bytes: Some(bytes) });
            if count > 0 {
                info.start_ns = Some(info.start_ns.map_or(min, |s| s.min(min)));
                info.end_ns = Some(info.end_ns.map_or(max, |e| e.max(max)));
            }
        }
        for (id, (count, min, max)) in unknown {
            info.undeclared.insert(id, count);
            info.start_ns = Some(info.start_ns.map_or(min, |s| s.min(min)));
            info.end_ns = Some(info.end_ns.map_or(max, |e| e.max(max)));
        }
        info.undeclared.extend(self.undeclared.iter().map(|(&id, &n)| (id, n)));
        info.count_messages();
        Ok(info)
    }

    fn stream(&self, filter: &Filter) -> Result<MessageIter<'static>> {
        let ids = self.wanted(filter);
        let empty = || Ok(Box::new(std::iter::empty()) as MessageIter<'static>);
        // A strict read of every topic also takes rows of undeclared topic ids, to fail on the
        // first one the filter selects instead of leaving them out unsaid.
        let undeclared = (!self.options.lenient && filter.may_accept_undeclared())
            .then(|| Undeclared { declared: self.declared.clone(), filter: filter.clone() });
        if ids.is_empty() && undeclared.is_none() {
            return empty();
        }
        let Some((sql, params)) = select_sql(&ids, undeclared.as_ref().map(|u| u.declared.as_slice()), filter) else {
            return empty();
        };

        let db = open_read(&self.uri)?;
        let interrupt = db.get_interrupt_handle();
        let (tx, rx) = sync_channel(CHANNEL_DEPTH);
        let path = self.path.clone();
        let bytes_read = Arc::clone(&self.bytes_read);
        std::thread::Builder::new()
            .name("rbag-sqlite-read".into())
            .spawn(move || produce(db, &sql, &params, undeclared.as_ref(), &tx, &bytes_read, &path))
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(Box::new(Batches { rx, current: Vec::new().into_iter(), interrupt }))
    }

    fn find_nth(&self, topic: &str, n: u64) -> Result<Option<Message>> {
        let ids: Vec<u32> = self.connections.iter().filter(|c| c.topic == topic).map(|c| c.id).collect();
        let Ok(offset) = i64::try_from(n) else { return Ok(None) };
        if ids.is_empty() {
            return Ok(None);
        }
        let mut sql = String::from("SELECT id, topic_id, timestamp, data FROM messages WHERE topic_id IN (");
        push_ids(&mut sql, &ids);
        sql.push_str(") ORDER BY timestamp, id LIMIT 1 OFFSET ?1");
        let db = self.lock();
        let mut stmt = db.prepare_cached(&sql).map_err(sql_err)?;
        let mut rows = stmt.query([offset]).map_err(sql_err)?;
        match rows.next().map_err(sql_err)? {
            Some(row) => {
                let msg = row_message(row)?;
                self.bytes_read.fetch_add(msg.data.len() as u64, Ordering::Relaxed);
                Ok(Some(msg))
            }
            None => Ok(None),
        }
    }

    fn periods(&self) -> Result<BTreeMap<String, u64>> {
        let slot: HashMap<i64, usize> =
            self.connections.iter().enumerate().map(|(k, c)| (i64::from(c.id), k)).collect();
        let mut times: Vec<Vec<u64>> = vec![Vec::new(); self.connections.len()];
        {
            let db = self.lock();
            // A plain table scan: no index covers topic_id, and sorting happens per topic below.
            let mut stmt = db.prepare_cached("SELECT id, topic_id, timestamp FROM messages").map_err(sql_err)?;
            let mut rows = stmt.query([]).map_err(sql_err)?;
            while let Some(row) = rows.next().map_err(sql_err)? {
                let topic: i64 = row.get(1).map_err(sql_err)?;
                let Some(&k) = slot.get(&topic) else { continue };
                let t = check_time(row.get(0).map_err(sql_err)?, row.get(2).map_err(sql_err)?)?;
                times[k].push(t);
            }
        }
        Ok(crate::periods::by_topic(self.connections.iter().map(|c| c.topic.as_str()).zip(times)))
    }
}

impl StorageReader for SqliteReader {
    fn connections(&self) -> &[Connection] {
        &self.connections
    }

    fn warnings(&self) -> Vec<String> {
        let mut out = if self.unfinished {
            vec![format!("{}: rbag was still writing this file when it stopped (a killed recording or conversion): it may lack its last messages", self.path.display())]
        } else {
            Vec::new()
        };
        out.extend(crate::reading::undeclared_warnings("topic id", &self.undeclared));
        out
    }

    fn info(&self) -> Result<StorageInfo> {
        self.summary().map_err(|e| e.in_file(&self.path))
    }

    fn messages<'a>(&'a self, filter: &Filter) -> Result<MessageIter<'a>> {
        self.stream(filter).map_err(|e| e.in_file(&self.path))
    }

    fn nth(&self, topic: &str, n: u64) -> Result<Option<Message>> {
        self.find_nth(topic, n).map_err(|e| e.in_file(&self.path))
    }

    fn median_periods(&self) -> Result<BTreeMap<String, u64>> {
        self.periods().map_err(|e| e.in_file(&self.path))
    }

    fn stats(&self) -> ReadStats {
        ReadStats { chunks_read: 0, chunks_decompressed: 0, bytes_read: self.bytes_read.load(Ordering::Relaxed) }
    }
}

/// The consumer side of a producer thread. Dropping it stops the thread: its next send fails,
/// and a query step that is scanning past unwanted rows is interrupted.
struct Batches {
    rx: Receiver<Result<Vec<Message>>>,
    current: std::vec::IntoIter<Message>,
    interrupt: rusqlite::InterruptHandle,
}

impl Iterator for Batches {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        loop {
            if let Some(m) = self.current.next() {
                return Some(Ok(m));
            }
            match self.rx.recv() {
                Ok(Ok(batch)) => self.current = batch.into_iter(),
                Ok(Err(e)) => return Some(Err(e)),
                // The producer is done (after an error it sends nothing more).
                Err(_) => return None,
            }
        }
    }
}

impl Drop for Batches {
    fn drop(&mut self) {
        self.interrupt.interrupt();
    }
}

/// How a strict stream treats rows of topic ids the `topics` table lacks.
struct Undeclared {
    /// The ids the `topics` table has, sorted.
    declared: Vec<u32>,
    filter: Filter,
}

/// Rows per topic id that the `topics` table lacks (`declared`, sorted).
fn undeclared_rows(db: &rusqlite::Connection, declared: &[u32]) -> Result<BTreeMap<u32, u64>> {
    let mut sql = String::from("SELECT topic_id, COUNT(*), MIN(id) FROM messages WHERE topic_id NOT IN (");
    push_ids(&mut sql, declared);
    sql.push_str(") GROUP BY topic_id");
    let mut stmt = db.prepare(&sql).map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    let mut out = BTreeMap::new();
    while let Some(row) = rows.next().map_err(sql_err)? {
        let id = topic_id(row.get(2).map_err(sql_err)?, row.get(0).map_err(sql_err)?)?;
        out.insert(id, row.get::<_, i64>(1).map_err(sql_err)?.max(0) as u64);
    }
    Ok(out)
}

/// A row's topic id as a connection id.
fn topic_id(row: i64, topic: i64) -> Result<u32> {
    u32::try_from(topic).map_err(|_| Error::Malformed {
        offset: 0,
        what: "message",
        reason: format!("message id {row} has topic id {topic}, outside 0..2^32"),
    })
}

/// The query that streams `ids`' messages in `filter`'s window, in (timestamp, id) order, with
/// its parameters; `None` when the window holds nothing a file can store. With `declared`, it
/// also streams the rows of every topic id not in it.
fn select_sql(ids: &[u32], declared: Option<&[u32]>, filter: &Filter) -> Option<(String, Vec<i64>)> {
    let mut sql = String::from("SELECT id, topic_id, timestamp, data FROM messages WHERE (topic_id IN (");
    push_ids(&mut sql, ids);
    sql.push(')');
    if let Some(declared) = declared {
        sql.push_str(" OR topic_id NOT IN (");
        push_ids(&mut sql, declared);
        sql.push(')');
    }
    sql.push(')');
    let mut params: Vec<i64> = Vec::new();
    if let Some(start) = filter.start {
        let Ok(start) = i64::try_from(start) else { return None };
        params.push(start);
        let _ = write!(sql, " AND timestamp >= ?{}", params.len());
    }
    if let Some(end) = filter.end {
        if filter.start.is_some_and(|s| end <= s) {
            return None;
        }
        // An end past i64::MAX bounds nothing a file can hold.
        if let Ok(end) = i64::try_from(end) {
            params.push(end);
            let _ = write!(sql, " AND timestamp < ?{}", params.len());
        }
    }
    sql.push_str(" ORDER BY timestamp, id");
    Some((sql, params))
}

/// Runs one query to the end on its own connection, sending batches until the receiver goes.
#[allow(clippy::too_many_arguments)]
fn produce(
    db: rusqlite::Connection,
    sql: &str,
    params: &[i64],
    undeclared: Option<&Undeclared>,
    tx: &SyncSender<Result<Vec<Message>>>,
    bytes_read: &AtomicU64,
    path: &Path,
) {
    let run = || -> Result<()> {
        let mut stmt = db.prepare(sql).map_err(sql_err)?;
        let mut rows = stmt.query(params_from_iter(params)).map_err(sql_err)?;
        // Payloads are copied into one buffer per batch, so a batch costs one allocation,
        // not one per message.
        let mut arena: Vec<u8> = Vec::new();
        let mut heads: Vec<(u32, u64, std::ops::Range<usize>)> = Vec::with_capacity(BATCH_MESSAGES);
        let flush = |arena: &mut Vec<u8>, heads: &mut Vec<(u32, u64, std::ops::Range<usize>)>| {
            bytes_read.fetch_add(arena.len() as u64, Ordering::Relaxed);
            let buf = Bytes::from(std::mem::take(arena));
            let batch: Vec<Message> = heads
                .drain(..)
                .map(|(connection, t, r)| Message { connection, log_time: t, publish_time: t, data: buf.slice(r) })
                .collect();
            tx.send(Ok(batch)).is_ok()
        };
        while let Some(row) = rows.next().map_err(sql_err)? {
            let (connection, time, data) = row_fields(row)?;
            if let Some(u) = undeclared.filter(|u| u.declared.binary_search(&connection).is_err()) {
                if !u.filter.accepts_undeclared(connection) {
                    continue;
                }
                // What came before it goes out first, then the error.
                if !heads.is_empty() && !flush(&mut arena, &mut heads) {
                    return Ok(());
                }
                let id: i64 = row.get(0).map_err(sql_err)?;
                return Err(Error::UndeclaredConnection {
                    at: Place::Row { table: "messages", id },
                    kind: "topic id",
                    id: connection,
                });
            }
            let start = arena.len();
            // A failed allocation (a row of a gigabyte under a memory limit) is an error, not an abort.
            arena.try_reserve(data.len()).map_err(|_| Error::OutOfMemory {
                offset: 0,
                what: "message row",
                needed: data.len() as u64,
            })?;
            arena.extend_from_slice(data);
            heads.push((connection, time, start..arena.len()));
            if (heads.len() >= BATCH_MESSAGES || arena.len() >= BATCH_BYTES) && !flush(&mut arena, &mut heads) {
                return Ok(());
            }
        }
        if !heads.is_empty() {
            flush(&mut arena, &mut heads);
        }
        Ok(())
    };
    if let Err(e) = run() {
        let _ = tx.send(Err(e.in_file(path)));
    }
}

/// A `SELECT id, topic_id, timestamp, data` row as a message.
fn row_message(row: &rusqlite::Row<'_>) -> Result<Message> {
    let (connection, time, data) = row_fields(row)?;
    let mut copy = Vec::new();
    copy.try_reserve_exact(data.len()).map_err(|_| Error::OutOfMemory {
        offset: 0,
        what: "message row",
        needed: data.len() as u64,
    })?;
    copy.extend_from_slice(data);
    Ok(Message { connection, log_time: time, publish_time: time, data: Bytes::from(copy) })
}

/// The connection, time and payload of a `SELECT id, topic_id, timestamp, data` row.
fn row_fields<'r>(row: &'r rusqlite::Row<'_>) -> Result<(u32, u64, &'r [u8])> {
    let id: i64 = row.get(0).map_err(sql_err)?;
    let topic: i64 = row.get(1).map_err(sql_err)?;
    let time = check_time(id, row.get(2).map_err(sql_err)?)?;
    let connection = topic_id(id, topic)?;
    let data = match row.get_ref(3).map_err(sql_err)? {
        ValueRef::Blob(b) | ValueRef::Text(b) => b,
        other => {
            return Err(Error::Malformed {
                offset: 0,
                what: "message",
                reason: format!("message id {id} holds {:?} data, not a blob", other.data_type()),
            })
        }
    };
    Ok((connection, time, data))
}

/// A timestamp as nanoseconds; negative ones (SQLite integers are signed) are refused.
fn check_time(id: i64, ts: i64) -> Result<u64> {
    u64::try_from(ts).map_err(|_| negative_time(id, ts))
}

fn negative_time(id: i64, ts: i64) -> Error {
    Error::Malformed {
        offset: 0,
        what: "message",
        reason: format!("message id {id} has a negative timestamp ({ts} ns)"),
    }
}

fn push_ids(sql: &mut String, ids: &[u32]) {
    for (k, id) in ids.iter().enumerate() {
        let _ = write!(sql, "{}{id}", if k == 0 { "" } else { "," });
    }
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
fn uri_for(path: &Path, immutable: bool) -> String {
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

fn open_read(uri: &str) -> Result<rusqlite::Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = rusqlite::Connection::open_with_flags(uri, flags).map_err(sql_err)?;
    // No memory map: SQLite's own map of a file another process truncates would kill rbag with
    // SIGBUS (rbag's guard only knows its own maps); read(2) returns an error or short data
    // instead. A larger page cache for the index walk. Both are read-side only.
    db.execute_batch("PRAGMA mmap_size=0; PRAGMA cache_size=-65536;").map_err(sql_err)?;
    Ok(db)
}

/// Fails, naming the first missing one, unless `have` holds every name in `names`.
fn require(have: &HashSet<String>, names: &[&str], missing: impl Fn(&str) -> String) -> Result<()> {
    match names.iter().find(|n| !have.contains(**n)) {
        Some(n) => Err(Error::Malformed { offset: 0, what: "rosbag2 database", reason: missing(n) }),
        None => Ok(()),
    }
}

/// Reads schema version, distro, stored metadata, topics and definitions.
fn load(db: &rusqlite::Connection) -> Result<Loaded> {
    // The first statement touches the file: this is where a non-database fails.
    let tables: HashSet<String> = {
        let mut stmt = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").map_err(sql_err)?;
        let names = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(sql_err)?;
        names.collect::<rusqlite::Result<_>>().map_err(sql_err)?
    };
    require(&tables, &["topics", "messages"], |t| {
        format!("an SQLite database without a `{t}` table, so not a rosbag2 .db3 file")
    })?;
    let topic_cols = columns(db, "topics")?;
    require(&topic_cols, &["id", "name", "type", "serialization_format"], |c| {
        format!("its `topics` table has no `{c}` column")
    })?;
    let message_cols = columns(db, "messages")?;
    require(&message_cols, &["id", "topic_id", "timestamp", "data"], |c| {
        format!("its `messages` table has no `{c}` column")
    })?;
    let has_qos = topic_cols.contains("offered_qos_profiles");
    let has_hash = topic_cols.contains("type_description_hash");

    // rosbag2's read_db_schema_version(): the `schema` table, else inferred from the columns.
    let mut schema_version = if has_qos { 2 } else { 1 };
    let mut ros_distro = None;
    if tables.contains("schema") {
        let cols = columns(db, "schema")?;
        let sql = if cols.contains("ros_distro") {
            "SELECT schema_version, ros_distro FROM schema LIMIT 1"
        } else {
            "SELECT schema_version, NULL FROM schema LIMIT 1"
        };
        let row = db.query_row(sql, [], |r| Ok((r.get::<_, i64>(0)?, text(r, 1)?)));
        match row {
            Ok((v, distro)) => {
                schema_version = u32::try_from(v).map_err(|_| Error::Malformed {
                    offset: 0,
                    what: "rosbag2 database",
                    reason: format!("schema version {v} is out of range"),
                })?;
                ros_distro = Some(distro).filter(|d| !d.is_empty());
            }
            Err(rusqlite::Error::QueryReturnedNoRows) => {}
            Err(e) => return Err(sql_err(e)),
        }
    }

    let bag_metadata = if tables.contains("metadata") && columns(db, "metadata")?.contains("metadata") {
        match db.query_row("SELECT metadata FROM metadata ORDER BY id DESC LIMIT 1", [], |r| text(r, 0)) {
            Ok(m) => Some(m),
            Err(rusqlite::Error::QueryReturnedNoRows) => None,
            Err(e) => return Err(sql_err(e)),
        }
    } else {
        None
    };

    // One definition per type; the first row wins, as in rosbag2's ordered read.
    let mut definitions: HashMap<String, (String, String)> = HashMap::new();
    if tables.contains("message_definitions") {
        let mut stmt = db
            .prepare("SELECT topic_type, encoding, encoded_message_definition FROM message_definitions ORDER BY id")
            .map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(r) = rows.next().map_err(sql_err)? {
            let (ty, encoding, text) =
                (text(r, 0).map_err(sql_err)?, text(r, 1).map_err(sql_err)?, text(r, 2).map_err(sql_err)?);
            // "unknown" is rosbag2's placeholder for a type whose definition it could not find.
            let def = if encoding == "unknown" { (String::new(), String::new()) } else { (text, encoding) };
            definitions.entry(ty).or_insert(def);
        }
    }

    let sql = format!(
        "SELECT id, name, type, serialization_format, {}, {} FROM topics ORDER BY id",
        if has_qos { "offered_qos_profiles" } else { "NULL" },
        if has_hash { "type_description_hash" } else { "NULL" },
    );
    let mut stmt = db.prepare(&sql).map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    let mut connections = Vec::new();
    while let Some(r) = rows.next().map_err(sql_err)? {
        let id: i64 = r.get(0).map_err(sql_err)?;
        let id = u32::try_from(id).map_err(|_| Error::Malformed {
            offset: 0,
            what: "topics table",
            reason: format!("topic id {id} is outside 0..2^32"),
        })?;
        let message_type = text(r, 2).map_err(sql_err)?;
        let mut metadata = BTreeMap::new();
        for (key, col) in [(QOS_KEY, 4), (TYPE_HASH_KEY, 5)] {
            let value = text(r, col).map_err(sql_err)?;
            if !value.is_empty() {
                metadata.insert(key.to_string(), value);
            }
        }
        // rosbag2 files a service event type (`pkg/srv/T_Event`) under its service (`pkg/srv/T`).
        let service = message_type.strip_suffix("_Event").filter(|t| t.contains("/srv/"));
        let (definition, definition_encoding) = definitions
            .get(&message_type)
            .or_else(|| service.and_then(|t| definitions.get(t)))
            .cloned()
            .unwrap_or_default();
        connections.push(Connection {
            id,
            topic: text(r, 1).map_err(sql_err)?,
            message_type,
            encoding: text(r, 3).map_err(sql_err)?,
            definition,
            definition_encoding,
            metadata,
        });
    }
    Ok(Loaded { schema_version, ros_distro, bag_metadata, connections })
}

/// Column names of `table`.
fn columns(db: &rusqlite::Connection, table: &str) -> Result<HashSet<String>> {
    let mut stmt = db.prepare(&format!("PRAGMA table_info(\"{table}\")")).map_err(sql_err)?;
    let names = stmt.query_map([], |r| r.get::<_, String>(1)).map_err(sql_err)?;
    names.collect::<rusqlite::Result<_>>().map_err(sql_err)
}

/// A column as text, whatever SQLite holds there: writers other than rosbag2 have left NULLs
/// and blobs in text columns.
fn text(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<String> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => String::new(),
        ValueRef::Integer(v) => v.to_string(),
        ValueRef::Real(v) => v.to_string(),
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
    })
}

/// An SQLite error as a storage error (the caller adds the file name).
fn sql_err(e: rusqlite::Error) -> Error {
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
    fn flush(&mut self) -> Result<()> {
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
fn unwrap_bag_metadata(yaml: &str) -> String {
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
fn metadata_version(yaml: &str) -> Option<u32> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    fn conn(topic: &str, ty: &str) -> Connection {
        let mut metadata = BTreeMap::new();
        metadata.insert(QOS_KEY.to_string(), "- history: 3\n  depth: 0".to_string());
        metadata.insert(TYPE_HASH_KEY.to_string(), format!("RIHS01_{}", "ab".repeat(32)));
        Connection {
            id: 0,
            topic: topic.into(),
            message_type: ty.into(),
            encoding: "cdr".into(),
            definition: "string data".into(),
            definition_encoding: "ros2msg".into(),
            metadata,
        }
    }

    /// A bag with /a (even k) and /b (odd k) at time 1000 + 10 k.
    fn write_bag(path: &Path, n: u64, preset: SqlitePreset) -> Vec<(u32, u64, Vec<u8>)> {
        let mut options = WriteOptions::default();
        options.rosbag2.sqlite_preset = preset;
        options.rosbag2.ros_distro = "jazzy".into();
        let mut w = SqliteWriter::create(path, &options).unwrap();
        let a = w.add_connection(&conn("/a", "std_msgs/msg/String")).unwrap();
        let mut b_conn = conn("/b", "std_msgs/msg/Header");
        b_conn.metadata.clear();
        b_conn.definition.clear();
        b_conn.definition_encoding.clear();
        let b = w.add_connection(&b_conn).unwrap();
        assert_eq!((a, b), (1, 2));
        let mut written = Vec::new();
        for k in 0..n {
            let c = if k % 2 == 0 { a } else { b };
            let data: Vec<u8> = (0..(k % 50) as u8).collect();
            w.write(c, 1000 + 10 * k, 0, &data).unwrap();
            written.push((c, 1000 + 10 * k, data));
        }
        w.set_bag_metadata("rosbag2_bagfile_information:\n  version: 9\n  storage_identifier: sqlite3\n");
        Box::new(w).finish().unwrap();
        written
    }

    fn read_all(r: &SqliteReader, f: &Filter) -> Vec<(u32, u64, Vec<u8>)> {
        r.messages(f)
            .unwrap()
            .map(|m| m.map(|m| (m.connection, m.log_time, m.data.to_vec())))
            .collect::<Result<_>>()
            .unwrap()
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x_0.db3");
        let written = write_bag(&path, 1000, SqlitePreset::Default);
        let r = SqliteReader::open(&path).unwrap();
        assert_eq!(r.schema_version(), 4);
        assert_eq!(r.ros_distro().as_deref(), Some("jazzy"));
        assert_eq!(r.bag_metadata().as_deref(), Some("version: 9\nstorage_identifier: sqlite3\n"));
        let conns = r.connections();
        assert_eq!(conns.len(), 2);
        let mut expected = conn("/a", "std_msgs/msg/String");
        expected.id = 1;
        assert_eq!(conns[0], expected);
        assert_eq!((conns[1].id, conns[1].topic.as_str()), (2, "/b"));
        assert!(
            conns[1].metadata.is_empty() && conns[1].definition.is_empty() && conns[1].definition_encoding.is_empty()
        );

        assert_eq!(read_all(&r, &Filter::default()), written);
        let info = r.info().unwrap();
        assert_eq!((info.format, info.version.as_str(), info.indexed), ("sqlite3", "4", true));
        assert_eq!(info.message_count, 1000);
        assert_eq!((info.start_ns, info.end_ns), (Some(1000), Some(1000 + 10 * 999)));
        let a_bytes: u64 = written.iter().filter(|m| m.0 == 1).map(|m| m.2.len() as u64).sum();
        assert_eq!(info.connections[&1], ConnectionStats { message_count: 500, data_bytes: Some(a_bytes) });
        assert_eq!(info.connections[&2].message_count, 500);
        assert_eq!(info.size_bytes, std::fs::metadata(&path).unwrap().len());
        let total: u64 = written.iter().map(|m| m.2.len() as u64).sum();
        assert_eq!(r.stats().bytes_read, total);

        let periods = r.median_periods().unwrap();
        assert_eq!(periods.get("/a"), Some(&20));
        assert_eq!(periods.get("/b"), Some(&20));
        // The reader created nothing beside the file.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x_0.db3")]);
    }

    #[test]
    fn time_window_and_topics() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db3");
        let written = write_bag(&path, 1000, SqlitePreset::Default);
        let r = SqliteReader::open(&path).unwrap();
        let f = Filter { start: Some(1100), end: Some(1200), ..Filter::default() };
        let got = read_all(&r, &f);
        let want: Vec<_> = written.iter().filter(|m| (1100..1200).contains(&m.1)).cloned().collect();
        assert_eq!(got.len(), 10);
        assert_eq!(got, want);
        let f = Filter { topics: vec!["/b".into()], start: Some(5000), ..Filter::default() };
        let want: Vec<_> = written.iter().filter(|m| m.0 == 2 && m.1 >= 5000).cloned().collect();
        assert_eq!(read_all(&r, &f), want);
        let f =
            Filter { regex: Some(Regex::new("a").unwrap()), exclude_topics: vec!["/a".into()], ..Filter::default() };
        assert!(read_all(&r, &f).is_empty());
        let f = Filter { start: Some(u64::MAX), ..Filter::default() };
        assert!(read_all(&r, &f).is_empty());
        let f = Filter { end: Some(u64::MAX), ..Filter::default() };
        assert_eq!(read_all(&r, &f).len(), 1000);
        assert_eq!(r.seek(10_980).unwrap().count(), 2);
        // Dropping a stream early stops its thread.
        let mut it = r.messages(&Filter::default()).unwrap();
        assert!(it.next().is_some());
        drop(it);
    }

    #[test]
    fn equal_times_keep_write_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db3");
        let mut w = SqliteWriter::create(&path, &WriteOptions::default()).unwrap();
        let a = w.add_connection(&conn("/a", "t/msg/T")).unwrap();
        let b = w.add_connection(&conn("/b", "t/msg/T")).unwrap();
        let mut written = Vec::new();
        for k in 0..200u32 {
            let c = if k % 3 == 0 { a } else { b };
            let time = u64::from(k / 100);
            w.write(c, time, time, &k.to_le_bytes()).unwrap();
            written.push((c, time, k.to_le_bytes().to_vec()));
        }
        // A large message skips the buffer; it must still land after the buffered ones.
        w.write(a, 1, 1, &vec![1u8; COMMIT_BYTES as usize]).unwrap();
        written.push((a, 1, vec![1u8; COMMIT_BYTES as usize]));
        Box::new(w).finish().unwrap();
        let r = SqliteReader::open(&path).unwrap();
        assert_eq!(read_all(&r, &Filter::default()), written);
        // Only the type's first topic wrote its definition.
        let db = rusqlite::Connection::open(&path).unwrap();
        let n: i64 = db.query_row("SELECT COUNT(*) FROM message_definitions", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        drop(db);
        // A type without a definition gets no row at all (see `insert_topic`).
        let path = dir.path().join("y.db3");
        write_bag(&path, 1, SqlitePreset::Default);
        let db = rusqlite::Connection::open(&path).unwrap();
        let types: Vec<String> = db
            .prepare("SELECT topic_type FROM message_definitions")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(types, vec!["std_msgs/msg/String".to_string()]);
    }

    /// A time window walks `timestamp_idx` instead of scanning the table.
    #[test]
    fn time_windows_use_the_timestamp_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db3");
        write_bag(&path, 100, SqlitePreset::Default);
        let db = rusqlite::Connection::open(&path).unwrap();
        let filter = Filter { start: Some(10), end: Some(20), ..Filter::default() };
        // Also when a strict read takes the rows of undeclared topic ids too.
        for declared in [None, Some(&[1, 2][..])] {
            let (sql, params) = select_sql(&[1, 2], declared, &filter).unwrap();
            let mut stmt = db.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let plan: Vec<String> = stmt
                .query_map(params_from_iter(&params), |r| r.get::<_, String>(3))
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            assert!(plan.iter().any(|p| p.contains("timestamp_idx") && p.contains("timestamp>")), "{plan:?}");
        }
    }

    #[test]
    fn nth_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db3");
        let written = write_bag(&path, 1000, SqlitePreset::Default);
        let r = SqliteReader::open(&path).unwrap();
        let m = r.nth("/b", 7).unwrap().unwrap();
        let want = written.iter().filter(|m| m.0 == 2).nth(7).unwrap();
        assert_eq!((m.connection, m.log_time, m.data.to_vec()), want.clone());
        assert_eq!(m.publish_time, m.log_time);
        assert!(r.nth("/b", 500).unwrap().is_none());
        assert!(r.nth("/nope", 0).unwrap().is_none());
        assert!(r.nth("/a", u64::MAX).unwrap().is_none());
    }

    #[test]
    fn resilient_wal_is_read_while_recording() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db3");
        let mut options = WriteOptions::default();
        options.rosbag2.sqlite_preset = SqlitePreset::Resilient;
        let mut w = SqliteWriter::create(&path, &options).unwrap();
        let a = w.add_connection(&conn("/a", "t/msg/T")).unwrap();
        for k in 0..100 {
            w.write(a, k, k, b"xyz").unwrap();
        }
        w.flush().unwrap();
        assert!(w.bytes_written() > 0);
        assert!(sibling(&path, "-wal").exists());
        {
            let r = SqliteReader::open(&path).unwrap();
            assert_eq!(r.info().unwrap().message_count, 100);
            assert_eq!(r.messages(&Filter::default()).unwrap().count(), 100);
        }
        w.write(a, 100, 100, b"xyz").unwrap();
        Box::new(w).finish().unwrap();
        assert!(!sibling(&path, "-wal").exists());
        assert!(!sibling(&path, "-shm").exists());
        let r = SqliteReader::open(&path).unwrap();
        assert_eq!(r.info().unwrap().message_count, 101);
        assert!(r.bag_metadata().is_none());
        assert_eq!(r.ros_distro().as_deref(), Some("rolling"));
    }

    #[test]
    fn dropped_writer_keeps_messages_and_refuses_existing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db3");
        {
            let mut w = SqliteWriter::create(&path, &WriteOptions::default()).unwrap();
            let a = w.add_connection(&conn("/a", "t/msg/T")).unwrap();
            // A second connection on the same topic shares its row; another type is refused.
            assert_eq!(w.add_connection(&conn("/a", "t/msg/T")).unwrap(), a);
            assert!(w.add_connection(&conn("/a", "t/msg/U")).is_err());
            assert!(matches!(w.write(9, 0, 0, b""), Err(Error::InFile { .. })));
            assert!(w.write(a, u64::MAX, 0, b"").is_err());
            for k in 0..10 {
                w.write(a, k, k, b"x").unwrap();
            }
        }
        let r = SqliteReader::open(&path).unwrap();
        assert_eq!(r.info().unwrap().message_count, 10);
        match SqliteWriter::create(&path, &WriteOptions::default()) {
            Err(Error::OutputExists { path: p }) => assert_eq!(p, path),
            other => panic!("expected OutputExists, got {:?}", other.err()),
        }
    }

    #[test]
    fn empty_bag() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.db3");
        let w = SqliteWriter::create(&path, &WriteOptions::default()).unwrap();
        Box::new(w).finish().unwrap();
        let r = SqliteReader::open(&path).unwrap();
        let info = r.info().unwrap();
        assert_eq!((info.message_count, info.start_ns, info.end_ns), (0, None, None));
        assert_eq!(r.messages(&Filter::default()).unwrap().count(), 0);
        assert!(r.median_periods().unwrap().is_empty());
    }

    #[test]
    fn negative_timestamp_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.db3");
        write_bag(&path, 10, SqlitePreset::Default);
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute("UPDATE messages SET timestamp = -5 WHERE id = 4", []).unwrap();
        drop(db);
        let r = SqliteReader::open(&path).unwrap();
        let err = r.info().unwrap_err().to_string();
        assert!(err.contains("n.db3") && err.contains("message id 4") && err.contains("negative"), "{err}");
        let err = r.messages(&Filter::default()).unwrap().find_map(|m| m.err()).unwrap().to_string();
        assert!(err.contains("n.db3") && err.contains("message id 4"), "{err}");
        assert!(r.median_periods().is_err());
    }

    #[test]
    fn not_a_bag_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("garbage?#%.db3");
        std::fs::write(&garbage, vec![0x5au8; 10_000]).unwrap();
        let err = SqliteReader::open(&garbage).err().unwrap().to_string();
        assert!(err.contains("garbage?#%.db3") && err.contains("not an SQLite database"), "{err}");

        let other = dir.path().join("other.db3");
        let db = rusqlite::Connection::open(&other).unwrap();
        db.execute_batch("CREATE TABLE t(x)").unwrap();
        drop(db);
        let err = SqliteReader::open(&other).err().unwrap().to_string();
        assert!(err.contains("other.db3") && err.contains("`topics`"), "{err}");

        let missing = dir.path().join("missing.db3");
        let err = SqliteReader::open(&missing).err().unwrap().to_string();
        assert!(err.contains("missing.db3"), "{err}");

        let mut header = b"SQLite format 3\0".to_vec();
        header.resize(4096, 0xff);
        let damaged = dir.path().join("damaged.db3");
        std::fs::write(&damaged, header).unwrap();
        let err = SqliteReader::open(&damaged).err().unwrap().to_string();
        assert!(err.contains("damaged.db3"), "{err}");
    }

    #[test]
    fn uri_escapes() {
        assert_eq!(uri_for(Path::new("/a b/c?.db3"), true), "file:///a%20b/c%3F.db3?immutable=1");
        assert_eq!(uri_for(Path::new("rel/x%#.db3"), false), "file:rel/x%25%23.db3");
    }

    #[test]
    fn metadata_unwrapping() {
        let wrapped = "rosbag2_bagfile_information:\n  version: 5\n  files:\n    - path: a\n";
        let inner = unwrap_bag_metadata(wrapped);
        assert_eq!(inner, "version: 5\nfiles:\n  - path: a\n");
        assert_eq!(metadata_version(&inner), Some(5));
        assert_eq!(unwrap_bag_metadata("version: 9\n"), "version: 9\n");
    }

    #[test]
    fn corpus_files() {
        let root = Path::new("/work/shared/corpus/ros2/sqlite3");
        let Ok(dirs) = std::fs::read_dir(root) else { return };
        for dir in dirs.flatten() {
            let Ok(files) = std::fs::read_dir(dir.path()) else { continue };
            let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
            for file in files.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "db3")) {
                let r = SqliteReader::open(&file).unwrap_or_else(|e| panic!("{e}"));
                let info = r.info().unwrap();
                assert!(!r.connections().is_empty(), "{}", file.display());
                let n = r.messages(&Filter::default()).unwrap().collect::<Result<Vec<_>>>().unwrap().len() as u64;
                assert_eq!(n, info.message_count, "{}", file.display());
                if dir.file_name() == "empty_bag" {
                    assert_eq!(n, 0);
                } else {
                    assert!(n > 0, "{}", file.display());
                    let first = &r.connections()[0].topic;
                    let _ = r.nth(first, 0).unwrap();
                    r.median_periods().unwrap();
                }
                if r.schema_version() >= 4 {
                    assert!(r.connections().iter().all(|c| !c.definition.is_empty()), "{}", file.display());
                }
            }
            let after: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
            assert_eq!(before, after, "files appeared in {}", dir.path().display());
            for name in &after {
                let name = name.to_string_lossy();
                assert!(!name.ends_with("-wal") && !name.ends_with("-shm"), "{name}");
            }
        }
    }
}
