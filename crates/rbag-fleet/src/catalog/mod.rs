//! Catalogs: one row per bag and topic, from each bag's summary only.
//!
//! [`find`] lists the bags under the inputs; [`update`] reads the summaries of those that are
//! new or changed, in parallel, and keeps the rows of an earlier catalog for the others;
//! [`catalog`] does both. [`schema`] is the table's fixed Arrow schema, and with the `parquet`
//! feature `write` and `read` store it as Parquet.
//!
//! **Columns** (see [`schema`]): `url`, `size`, `version`, `storage`, `start`, `end`, `topic`,
//! `type`, `type_hash`, `message_count`, `frequency_hz`.
//!
//! **What is read.** Each bag is opened and only its summary is asked for:
//! `Bag::storage_info` (a ROS 1 bag's index section, an MCAP file's summary, a rosbag2
//! directory's metadata and files' summaries) and its connections. `Bag::info` is not called:
//! its per-topic frequencies read every chunk's index. `frequency_hz` here is the mean rate
//! over the bag: the topic's message count divided by the bag's duration.
//!
//! **Updates.** A bag whose URL, size and version equal those of rows of the previous catalog
//! keeps those rows and is not opened (for a bag in a bucket, no request is made). A bag with
//! no known version (a single object given by URL) is always read again. Rows of bags that lie
//! under an input but are gone are dropped; rows of bags outside every input are kept, so a
//! catalog can be built one prefix at a time.

mod find;
mod table;

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rbag_bag::{Bag, Connection, OpenOptions};

pub use find::find;
pub use table::{from_batch, schema, to_batch, CATALOG_VERSION, METADATA_KEY};
#[cfg(feature = "parquet")]
pub use table::{is_catalog, read, write, write_to};

use crate::{Error, Result};

/// Workers reading summaries at once by default: reading a summary mostly waits on the disk
/// or the network, so more workers than cores pay.
pub const DEFAULT_THREADS: usize = 16;

/// A bag found under an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its URL (a rosbag2 prefix ends in `/`), or its absolute local path.
    pub url_or_path: String,
    /// Its size in bytes: of the file or object, or the sum of a rosbag2 directory's files.
    pub size: u64,
    /// What changes when it is rewritten: the ETag (or else the last-modified time) of a
    /// remote object, the modification time in ns of a local file; for a rosbag2 directory
    /// its files' versions joined with `,` in path order. Empty when unknown.
    pub version: String,
}

/// One row of a catalog: a bag's topic, or a bag with no topics (`topic` `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The bag's URL or absolute local path (column `url`).
    pub url: String,
    /// The bag's size in bytes ([`Found::size`]).
    pub size: u64,
    /// The bag's version ([`Found::version`]).
    pub version: String,
    /// The storage: `ros1`, `mcap`, `sqlite3` (or a registered backend's name).
    pub storage: String,
    /// The bag's first log time, ns since the epoch; `None` for an empty bag.
    pub start: Option<u64>,
    /// The bag's last log time, ns since the epoch; `None` for an empty bag.
    pub end: Option<u64>,
    /// The topic; `None` in the one row of a bag with no topics.
    pub topic: Option<String>,
    /// The topic's message type as the bag names it (column `type`), of its first connection.
    pub message_type: Option<String>,
    /// The type's hash: ROS 1's `md5sum`, or rosbag2's RIHS01 `type_description_hash`; `None`
    /// when the bag has neither.
    pub type_hash: Option<String>,
    /// Messages on the topic, over all its connections (0 for a bag with no topics).
    pub message_count: u64,
    /// The topic's mean rate: `message_count` over the bag's duration (`end - start`) in
    /// seconds, from the summary. `None` when the duration is 0 (one message, or none).
    pub frequency_hz: Option<f64>,
}

/// What an update did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Bags whose summaries were read.
    pub read: usize,
    /// Bags whose rows were taken from the previous catalog, unopened.
    pub reused: usize,
    /// Bags that could not be read: the URL or path, and why. They have no rows.
    pub failed: Vec<(String, String)>,
    /// Bags of the previous catalog outside every input, kept as they were.
    pub kept: usize,
    /// Bags of the previous catalog under an input but no longer there, dropped.
    pub removed: usize,
}

/// How to read bags.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Workers reading summaries at once (at least 1).
    pub threads: usize,
    /// How bags are opened (`allow_remote_scan` lets a remote MCAP file without a summary be
    /// downloaded whole).
    pub open: OpenOptions,
}

impl Default for Options {
    fn default() -> Self {
        Options { threads: DEFAULT_THREADS, open: OpenOptions::default() }
    }
}

/// Finds the bags under `inputs` and catalogs them, reusing the rows of `previous` for bags
/// that did not change. Rows are sorted by (`url`, `topic`). Fails only when an input cannot
/// be walked or listed; a bag that cannot be read is a [`Report::failed`] entry.
pub fn catalog(inputs: &[String], previous: Option<Vec<Row>>, threads: usize) -> Result<(Vec<Row>, Report)> {
    let found = find(inputs)?;
    let options = Options { threads, ..Options::default() };
    Ok(update(inputs, found, previous, &options, &|_| {}))
}

/// The bags of `found` that must be read, given the previous catalog (see [`update`]): those
/// without rows there, or whose size or version changed.
pub fn to_read<'a>(found: &'a [Found], previous: Option<&[Row]>) -> Vec<&'a Found> {
    let previous = by_bag(previous.unwrap_or_default().iter());
    found
        .iter()
        .filter(|f| !previous.get(f.url_or_path.as_str()).is_some_and(|r| reusable(f, r.iter().copied())))
        .collect()
}

fn by_bag<'a>(rows: impl Iterator<Item = &'a Row>) -> BTreeMap<&'a str, Vec<&'a Row>> {
    let mut map: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        map.entry(r.url.as_str()).or_default().push(r);
    }
    map
}

/// Whether `rows` (a bag's rows in the previous catalog) still describe `found`.
fn reusable<'a>(found: &Found, rows: impl IntoIterator<Item = &'a Row>) -> bool {
    let mut any = false;
    for r in rows {
        if r.size != found.size || r.version != found.version {
            return false;
        }
        any = true;
    }
    any && !found.version.is_empty()
}

/// Catalogs the bags of `found` (from [`find`] on `inputs`): rows of `previous` are reused for
/// bags whose URL, size and version match and kept for bags outside every input; the others
/// are opened and summarised by `options.threads` workers. `progress` is told of each bag read
/// (from the workers). Rows are sorted by (`url`, `topic`).
pub fn update(
    inputs: &[String],
    found: Vec<Found>,
    previous: Option<Vec<Row>>,
    options: &Options,
    progress: &(dyn Fn(&Found) + Sync),
) -> (Vec<Row>, Report) {
    let mut report = Report::default();
    let mut rows = Vec::new();
    let mut previous: BTreeMap<String, Vec<Row>> = {
        let mut map: BTreeMap<String, Vec<Row>> = BTreeMap::new();
        for r in previous.unwrap_or_default() {
            map.entry(r.url.clone()).or_default().push(r);
        }
        map
    };
    let mut wanted = Vec::new();
    for f in found {
        let old = previous.remove(&f.url_or_path);
        match old {
            Some(old) if reusable(&f, &old) => {
                report.reused += 1;
                rows.extend(old);
            }
            _ => wanted.push(f),
        }
    }
    let scopes: Vec<String> = inputs.iter().map(|i| find::scope(i)).collect();
    for (url, old) in previous {
        if scopes.iter().any(|s| find::in_scope(&url, s)) {
            report.removed += 1;
        } else {
            report.kept += 1;
            rows.extend(old);
        }
    }
    for (f, result) in wanted.iter().zip(read_all(&wanted, options, progress)) {
        match result {
            Ok(r) => {
                report.read += 1;
                rows.extend(r);
            }
            Err(reason) => report.failed.push((f.url_or_path.clone(), reason)),
        }
    }
    rows.sort_by(|a, b| (&a.url, &a.topic).cmp(&(&b.url, &b.topic)));
    report.failed.sort();
    (rows, report)
}

/// A bag's rows, or why it could not be read.
type Outcome = std::result::Result<Vec<Row>, String>;

/// Reads the summaries of `bags` with a pool of workers: each bag's rows, or why not.
fn read_all(bags: &[Found], options: &Options, progress: &(dyn Fn(&Found) + Sync)) -> Vec<Outcome> {
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; bags.len()]);
    let next = AtomicUsize::new(0);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(f) = bags.get(i) else { break };
        // A reader that panics on a damaged bag is a bug; it must not cost the other bags.
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| summarise(f, &options.open))).unwrap_or_else(|_| {
            Err(Error::Summary {
                bag: f.url_or_path.clone(),
                reason: "rbag failed reading it (a bug: it panicked)".into(),
            })
        });
        let result = result.map_err(|e| reason(&f.url_or_path, &e));
        lock(&results)[i] = Some(result);
        progress(f);
    };
    let workers = options.threads.max(1).min(bags.len());
    std::thread::scope(|s| {
        let mut started = 0;
        for n in 0..workers {
            let builder = std::thread::Builder::new().name(format!("rbag-catalog-{n}"));
            if builder.spawn_scoped(s, work).is_ok() {
                started += 1;
            }
        }
        // No thread could be made: read on this one.
        if started == 0 {
            work();
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.into_iter().map(|r| r.unwrap_or_else(|| Err("not read".into()))).collect()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An error as a report's reason: without the bag's name in front, which the report gives.
fn reason(bag: &str, e: &Error) -> String {
    let text = e.to_string();
    match text.strip_prefix(bag).and_then(|t| t.strip_prefix(": ")) {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

/// A log time as the catalog stores it: it must fit Arrow's signed timestamp.
fn fits(bag: &str, what: &str, t: Option<u64>) -> Result<Option<u64>> {
    match t {
        Some(t) if i64::try_from(t).is_err() => Err(Error::Summary {
            bag: bag.into(),
            reason: format!("its {what} time, {t} ns, lies past the year 2262, beyond a timestamp column"),
        }),
        t => Ok(t),
    }
}

/// The type hash a connection carries: ROS 1's `md5sum`, else rosbag2's RIHS01 hash.
fn type_hash(c: &Connection) -> Option<String> {
    let md5 = c.metadata.get("md5sum").filter(|h| !h.is_empty() && h.as_str() != "*");
    let rihs = c.metadata.get(rbag_storage::rosbag2::TYPE_HASH_KEY).filter(|h| !h.is_empty());
    md5.or(rihs).cloned()
}

/// Opens one bag and makes its rows from its summary.
fn summarise(found: &Found, open: &OpenOptions) -> Result<Vec<Row>> {
    let name = found.url_or_path.as_str();
    let bag = Bag::open_with(name, open)?;
    let info = bag.storage_info()?;
    let start = fits(name, "first", info.start_ns)?;
    let end = fits(name, "last", info.end_ns)?;
    let seconds = match (start, end) {
        (Some(s), Some(e)) if e > s => Some((e - s) as f64 / 1e9),
        _ => None,
    };
    let mut topics: BTreeMap<&str, (u64, &Connection)> = BTreeMap::new();
    for c in bag.connections() {
        let n = info.connections.get(&c.id).map_or(0, |s| s.message_count);
        let entry = topics.entry(c.topic.as_str()).or_insert((0, c));
        entry.0 = entry.0.saturating_add(n);
    }
    let row = |topic: Option<&str>, count: u64, c: Option<&Connection>| Row {
        url: found.url_or_path.clone(),
        size: found.size,
        version: found.version.clone(),
        storage: info.format.to_string(),
        start,
        end,
        topic: topic.map(str::to_string),
        message_type: c.map(|c| c.message_type.clone()).filter(|t| !t.is_empty()),
        type_hash: c.and_then(type_hash),
        message_count: count,
        frequency_hz: topic.and(seconds).map(|s| count as f64 / s),
    };
    let mut rows: Vec<Row> = topics.iter().map(|(t, (n, c))| row(Some(t), *n, Some(c))).collect();
    if rows.is_empty() {
        rows.push(row(None, 0, None));
    }
    Ok(rows)
}
