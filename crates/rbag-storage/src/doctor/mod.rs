//! Structural checks of bag files, for `rbag doctor`: every record read and bounds-checked, every
//! CRC, the index against the data (counts, offsets, chunk time ranges), message order, and for
//! a rosbag2 directory `metadata.yaml` against its storage files.
//!
//! Nothing here decodes a message: the checks that need definitions (MD5 and RIHS01 sums,
//! decoding each payload) are made by a [`Visitor`] the caller passes (rbag-bag's doctor), which
//! sees every connection once and, when it asks, every message payload, in the same pass.
//!
//! Damage never panics and never stops the check early when more of the file can be read: each
//! problem is a [`Finding`] naming the file, the byte offset and the record.

mod mcap;
mod ros1;
mod rosbag2;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::{Connection, Error, Result};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something worth knowing that is not wrong (a check that could not be made).
    Info,
    /// Readers cope, but the bag is not as its format says (messages out of order, a stored
    /// definition that does not fit its messages when the bundled one does).
    Warning,
    /// Data is damaged, or an index or summary disagrees with it: readers may lose or misread
    /// messages.
    Error,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Kind {
    /// The file's layout: magic, record framing, a record that does not parse, a record where
    /// it may not be, a record that is missing.
    Structure,
    /// A CRC that does not match the bytes it covers.
    Crc,
    /// A chunk that does not decompress, or not to the size its header says.
    Decompress,
    /// An index or summary (ROS 1 bag header, chunk info, index data; MCAP chunk index, message
    /// index, statistics, chunk header times) that disagrees with the data.
    Index,
    /// Messages out of log-time order inside one chunk (or between top-level records).
    MessageOrder,
    /// A chunk whose messages are older than those of a chunk before it.
    ChunkOrder,
    /// A connection (ROS 1 connection record, MCAP channel or schema) that contradicts an
    /// earlier record of the same id, or a message on a connection never declared.
    Connection,
    /// A message definition that does not parse or lacks a type it uses.
    Definition,
    /// An MD5 sum (ROS 1) or RIHS01 type hash (ROS 2) that does not match its definition.
    Hash,
    /// A payload that does not decode against its definition, or leaves bytes over.
    Decode,
    /// The stored definition does not fit the messages, but the bundled one does.
    DefinitionMismatch,
    /// A rosbag2 `metadata.yaml` that disagrees with its storage files.
    Metadata,
    /// A check that was not made (and why).
    NotChecked,
}

impl Kind {
    /// The snake_case name used in text and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Structure => "structure",
            Kind::Crc => "crc",
            Kind::Decompress => "decompress",
            Kind::Index => "index",
            Kind::MessageOrder => "message_order",
            Kind::ChunkOrder => "chunk_order",
            Kind::Connection => "connection",
            Kind::Definition => "definition",
            Kind::Hash => "hash",
            Kind::Decode => "decode",
            Kind::DefinitionMismatch => "definition_mismatch",
            Kind::Metadata => "metadata",
            Kind::NotChecked => "not_checked",
        }
    }
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// How bad it is.
    pub severity: Severity,
    /// What it is about.
    pub kind: Kind,
    /// The file it is in (a storage file, or a rosbag2 directory's metadata.yaml).
    pub file: PathBuf,
    /// Byte offset of the record in the file, when the file has offsets (SQLite does not).
    pub offset: Option<u64>,
    /// The record: `MCAP chunk`, `ROS 1 chunk info`, `metadata.yaml`, ...
    pub record: String,
    /// The topic, where one is concerned.
    pub topic: Option<String>,
    /// What is wrong, with the values that disagree.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}] {}", self.severity.name(), self.kind.name(), self.file.display())?;
        if let Some(o) = self.offset {
            write!(f, " @{o}")?;
        }
        write!(f, " ({})", self.record)?;
        if let Some(t) = &self.topic {
            write!(f, " topic {t}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl Finding {
    /// A finding with no topic.
    pub fn new(
        severity: Severity,
        kind: Kind,
        file: &Path,
        offset: Option<u64>,
        record: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            severity,
            kind,
            file: file.into(),
            offset,
            record: record.into(),
            topic: None,
            message: message.into(),
        }
    }

    /// The same finding, about `topic`.
    pub fn topic(mut self, topic: impl Into<String>) -> Self {
        self.topic = Some(topic.into());
        self
    }
}

/// Counts of what was read.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Checked {
    /// Storage files read.
    pub files: u64,
    /// Bytes of those files.
    pub bytes: u64,
    /// Chunks decompressed and walked.
    pub chunks: u64,
    /// Message records met.
    pub messages: u64,
    /// Connections (ROS 1 connections, MCAP channels, rosbag2 topics).
    pub connections: u64,
}

/// What the checks found in one bag.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Report {
    /// The bag checked.
    pub path: PathBuf,
    /// `ros1`, `mcap`, `sqlite3` or `rosbag2`.
    pub format: String,
    /// What was read.
    pub checked: Checked,
    /// Problems, in the order found.
    pub findings: Vec<Finding>,
    /// Findings left out per kind and file, past [`MAX_PER_KIND`] of each.
    #[serde(skip)]
    per_kind: BTreeMap<(PathBuf, Kind), u64>,
}

/// Findings of one kind listed per file; more are counted, and summed in one finding at the end.
pub const MAX_PER_KIND: u64 = 20;

impl Report {
    fn new(path: &Path, format: &str) -> Self {
        Report { path: path.into(), format: format.into(), ..Default::default() }
    }

    /// Adds a finding (past [`MAX_PER_KIND`] of its kind in its file, only counts it).
    pub fn push(&mut self, f: Finding) {
        let n = self.per_kind.entry((f.file.clone(), f.kind)).or_default();
        *n += 1;
        if *n <= MAX_PER_KIND {
            self.findings.push(f);
        }
    }

    /// Adds the "and N more" findings of kinds that went past [`MAX_PER_KIND`]; call once, at
    /// the end.
    pub fn finish(&mut self) {
        let over: Vec<_> = std::mem::take(&mut self.per_kind).into_iter().filter(|(_, n)| *n > MAX_PER_KIND).collect();
        for ((file, kind), n) in over {
            let worst = self.findings.iter().filter(|f| f.kind == kind && f.file == file).map(|f| f.severity).max();
            self.findings.push(Finding::new(
                worst.unwrap_or(Severity::Error),
                kind,
                &file,
                None,
                "summary",
                format!("{} more {} finding(s) in this file not listed", n - MAX_PER_KIND, kind.name()),
            ));
        }
    }

    /// Findings of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == severity).count()
    }

    /// The worst severity found, `None` when nothing was.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// Whether a finding of `kind` was made.
    pub fn has(&self, kind: Kind) -> bool {
        self.findings.iter().any(|f| f.kind == kind)
    }
}

/// Where a connection or message is, for findings a [`Visitor`] makes.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The storage file.
    pub file: &'a Path,
    /// Which storage file of the bag (connection ids are unique within one).
    pub file_index: usize,
    /// The record's file offset (for a message in a chunk, the chunk's).
    pub offset: Option<u64>,
    /// The record.
    pub record: &'static str,
}

impl Place<'_> {
    /// A finding at this place.
    pub fn finding(&self, severity: Severity, kind: Kind, message: impl Into<String>) -> Finding {
        Finding::new(severity, kind, self.file, self.offset, self.record, message)
    }
}

/// The checks above storage: called for each connection once (per storage file) and, when
/// [`Visitor::wants_messages`], for each message in file order.
pub trait Visitor {
    /// A connection, the first time its id is met in a file.
    fn connection(&mut self, _at: &Place<'_>, _conn: &Connection, _out: &mut Report) {}
    /// Whether [`Visitor::message`] is to be called.
    fn wants_messages(&self) -> bool {
        false
    }
    /// One message of connection `conn`.
    fn message(&mut self, _at: &Place<'_>, _conn: &Connection, _log_time: u64, _data: &[u8], _out: &mut Report) {}
}

/// A visitor with no checks of its own.
pub struct NoVisitor;

impl Visitor for NoVisitor {}

/// What the checks of one storage file share, whatever its format: the file, the report its
/// findings go to, the visitor, and the summary of its messages.
struct Sink<'a> {
    path: &'a Path,
    file_index: usize,
    report: &'a mut Report,
    visitor: &'a mut dyn Visitor,
    wants_messages: bool,
    summary: FileSummary,
}

impl<'a> Sink<'a> {
    fn new(path: &'a Path, file_index: usize, report: &'a mut Report, visitor: &'a mut dyn Visitor) -> Self {
        let wants_messages = visitor.wants_messages();
        Sink { path, file_index, report, visitor, wants_messages, summary: FileSummary::default() }
    }

    /// A finding at `offset` of the file.
    fn add(&mut self, severity: Severity, kind: Kind, offset: u64, record: &str, message: String) {
        self.report.push(Finding::new(severity, kind, self.path, Some(offset), record, message));
    }

    /// A finding at `offset` of the file, about `topic`.
    fn add_topic(&mut self, severity: Severity, kind: Kind, offset: u64, record: &str, topic: String, message: String) {
        self.report.push(Finding::new(severity, kind, self.path, Some(offset), record, message).topic(topic));
    }

    fn place(&self, offset: u64, record: &'static str) -> Place<'a> {
        Place { file: self.path, file_index: self.file_index, offset: Some(offset), record }
    }

    /// A connection met for the first time: counted, handed to the visitor.
    fn connection(&mut self, conn: &Connection, offset: u64, record: &'static str) {
        self.report.checked.connections += 1;
        let at = self.place(offset, record);
        self.visitor.connection(&at, conn, self.report);
    }

    /// A message record: counted and timed, and handed to the visitor when its connection is
    /// declared (`conn`; the caller reports one that is not).
    fn message(&mut self, conn: Option<&Connection>, log_time: u64, data: &[u8], offset: u64, record: &'static str) {
        self.report.checked.messages += 1;
        self.summary.time(log_time);
        if let Some(conn) = conn.filter(|_| self.wants_messages) {
            let at = self.place(offset, record);
            self.visitor.message(&at, conn, log_time, data, self.report);
        }
    }
}

/// A chunk's records decompressed (`what` names the chunk in a budget error).
fn decompress(
    compression: crate::Compression,
    data: &[u8],
    size: u64,
    offset: u64,
    what: &'static str,
) -> Result<bytes::Bytes> {
    crate::budget::reserve(size, offset, what)
        .and_then(|r| crate::ros1::compression::decompress(compression, data, size, offset, r, false))
}

/// How an index's entries (`(time, offset)`) disagree with the messages a chunk holds, both
/// sorted here; `None` when they agree. `whose`: `channel 3`; `chunk`: `before it`; `time`:
/// what the times are called.
fn index_mismatch<T: Ord + std::fmt::Display>(
    listed: &mut [(u64, T)],
    found: &mut [(u64, T)],
    whose: &str,
    chunk: &str,
    time: &str,
) -> Option<String> {
    listed.sort_unstable();
    found.sort_unstable();
    if listed.len() != found.len() {
        return Some(format!(
            "lists {} message(s) of {whose} for the chunk {chunk}, which holds {}",
            listed.len(),
            found.len()
        ));
    }
    let (l, f) = listed.iter().zip(found.iter()).find(|(l, f)| l != f)?;
    Some(format!(
        "entry ({time} {}, offset {}) does not match the chunk's message ({time} {}, offset {})",
        l.0, l.1, f.0, f.1
    ))
}

/// What one storage file holds, for comparing with a rosbag2 metadata.yaml.
#[derive(Debug, Default, Clone)]
pub(crate) struct FileSummary {
    /// Messages and type per topic.
    pub topics: BTreeMap<String, (String, u64)>,
    pub messages: u64,
    pub start: Option<u64>,
    pub end: Option<u64>,
}

impl FileSummary {
    /// One message at `log_time` (its topic is counted by the caller, see [`FileSummary::topic`]).
    fn time(&mut self, log_time: u64) {
        self.messages += 1;
        self.start = Some(self.start.map_or(log_time, |s| s.min(log_time)));
        self.end = Some(self.end.map_or(log_time, |e| e.max(log_time)));
    }

    /// `n` messages of `topic`.
    fn topic(&mut self, topic: &str, ty: &str, n: u64) {
        self.topics.entry(topic.to_string()).or_insert_with(|| (ty.to_string(), 0)).1 += n;
    }
}

/// The bytes of a storage file: mapped when it can be (guarded against the file shrinking),
/// read otherwise.
fn load(path: &Path) -> Result<bytes::Bytes> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    if let Some(map) = crate::mmap::Mapped::new(&file, path) {
        return Ok(map.slice(0..map.len()));
    }
    let mut v = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut v).map_err(|e| Error::io(path, e))?;
    Ok(v.into())
}

/// The magic of a SQLite database.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Checks the bag at `path` (a ROS 1 `.bag`, an MCAP or SQLite3 file, a rosbag2 directory or its
/// metadata.yaml), calling `visitor` for what lies above storage. Fails only when the bag cannot
/// be read at all (missing, unreadable, not a bag); damage is reported as findings.
pub fn check(path: &Path, visitor: &mut dyn Visitor) -> Result<Report> {
    if path.file_name().is_some_and(|n| n == "metadata.yaml") {
        return check(path.parent().unwrap_or(Path::new(".")), visitor);
    }
    let md = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let mut report;
    if md.is_dir() {
        report = Report::new(path, "rosbag2");
        rosbag2::check_dir(path, &mut report, visitor)?;
    } else {
        if !md.is_file() {
            return Err(Error::UnknownFormat { path: path.into(), reason: "not a regular file or directory".into() });
        }
        let buf = load(path)?;
        if buf.starts_with(crate::ros1::MAGIC) {
            report = Report::new(path, "ros1");
            ros1::check(path, 0, &buf, &mut report, visitor);
        } else if buf.starts_with(crate::mcap::records::MAGIC) {
            report = Report::new(path, "mcap");
            mcap::check(path, 0, &buf, &mut report, visitor);
        } else if buf.starts_with(SQLITE_MAGIC) {
            drop(buf);
            report = Report::new(path, "sqlite3");
            rosbag2::check_sqlite(path, 0, &mut report, visitor, true);
        } else {
            let partial = crate::ros1::MAGIC.starts_with(&buf[..buf.len().min(13)])
                || crate::mcap::records::MAGIC.starts_with(&buf[..buf.len().min(8)]);
            if partial || buf.is_empty() {
                report = Report::new(path, "unknown");
                report.push(Finding::new(
                    Severity::Error,
                    Kind::Structure,
                    path,
                    Some(0),
                    "file",
                    format!("{} bytes: too short to hold a bag's magic", buf.len()),
                ));
            } else {
                return Err(Error::UnknownFormat {
                    path: path.into(),
                    reason: "not a ROS 1 bag, an MCAP or SQLite3 file, or a rosbag2 directory".into(),
                });
            }
        }
        report.checked.files = 1;
        report.checked.bytes = md.len();
    }
    report.finish();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_past_the_cap_are_summed() {
        let mut r = Report::new(Path::new("x.bag"), "ros1");
        for i in 0..(MAX_PER_KIND + 5) {
            r.push(Finding::new(Severity::Warning, Kind::MessageOrder, Path::new("x.bag"), Some(i), "chunk", "late"));
        }
        r.finish();
        assert_eq!(r.findings.len() as u64, MAX_PER_KIND + 1);
        assert!(r.findings.last().unwrap().message.starts_with("5 more message_order"));
        assert_eq!(r.worst(), Some(Severity::Warning));
    }

    #[test]
    fn garbage_is_not_a_bag_and_short_magic_is_a_finding() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.bin");
        std::fs::write(&p, b"hello world, not a bag").unwrap();
        assert!(check(&p, &mut NoVisitor).is_err());
        std::fs::write(&p, b"#ROSBAG").unwrap();
        let r = check(&p, &mut NoVisitor).unwrap();
        assert_eq!(r.worst(), Some(Severity::Error));
    }
}
