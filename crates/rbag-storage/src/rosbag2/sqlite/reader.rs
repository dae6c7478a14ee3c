//! Reading a `.db3` file: metadata through one shared connection, each message stream on its
//! own connection and producer thread.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rusqlite::params_from_iter;
use rusqlite::types::ValueRef;

use super::super::{QOS_KEY, TYPE_HASH_KEY};
use crate::{
    Connection, ConnectionStats, Error, Filter, Message, MessageIter, Place, ReadOptions, ReadStats, Result,
    StorageInfo, StorageReader,
};

use super::schema::*;

/// A producer thread hands over a batch once it holds this many messages...
const BATCH_MESSAGES: usize = 256;
/// ...or this many payload bytes, whichever comes first.
const BATCH_BYTES: usize = 4 << 20;
/// A `-wal` file shorter than its header holds no frames.
const WAL_HEADER_LEN: u64 = 32;
/// Batches in flight between a producer thread and its iterator.
const CHANNEL_DEPTH: usize = 4;

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
        Self::open_inner(path, options.clone()).map_err(|e| e.in_file(path))
    }

    /// The reader of a downloaded copy, named (in its info and errors) as the original.
    pub(crate) fn shown_as(mut self, name: PathBuf) -> Self {
        self.path = name;
        self
    }

    fn open_inner(path: &Path, options: ReadOptions) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            return Err(Error::Invalid("is a directory, not a .db3 file".into()));
        }
        let wal = sibling(path, "-wal");
        let wal_len = std::fs::metadata(&wal).ok().filter(|m| m.is_file()).map(|m| m.len());
        let pragmas = &options.sqlite_read_pragmas;
        let attempt = |uri: String| -> Result<(String, rusqlite::Connection, Loaded)> {
            let db = open_read(&uri)?;
            run_pragmas(&db, pragmas)?;
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
            // Pragmas asked for by the user are run as rosbag2 runs them, on a file opened
            // read-only but not immutable: with `immutable` SQLite takes no locks at all, and a
            // locking pragma (`locking_mode = EXCLUSIVE`) would silently do nothing.
            _ => attempt(uri_for(path, pragmas.is_empty()))?,
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
            info.connections
                .insert(c.id, ConnectionStats { message_count: count, data_bytes: Some(bytes), estimated_bytes: None });
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
        run_pragmas(&db, &self.options.sqlite_read_pragmas)?;
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
        ReadStats { bytes_read: self.bytes_read.load(Ordering::Relaxed), ..ReadStats::default() }
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

/// Runs the user's read pragmas (rosbag2's `read: pragmas:`) on a reading connection, each as
/// `PRAGMA <entry>;` as rosbag2 runs them. An entry holding `'`, `;` or `"` is refused (it
/// could smuggle in another statement), as rosbag2 refuses it; a failure names the pragma.
fn run_pragmas(db: &rusqlite::Connection, pragmas: &[String]) -> Result<()> {
    for entry in pragmas {
        if entry.contains(['\'', ';', '"']) {
            return Err(Error::Pragma { pragma: entry.clone(), reason: "it holds ', ; or \" (refused)".into() });
        }
        db.execute_batch(&format!("PRAGMA {entry};"))
            .map_err(|e| Error::Pragma { pragma: entry.clone(), reason: format!("SQLite: {e}") })?;
    }
    Ok(())
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
pub(super) fn select_sql(ids: &[u32], declared: Option<&[u32]>, filter: &Filter) -> Option<(String, Vec<i64>)> {
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

/// Fails, naming the first missing one, unless `have` holds every name in `names`.
pub(super) fn require(have: &HashSet<String>, names: &[&str], missing: impl Fn(&str) -> String) -> Result<()> {
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
