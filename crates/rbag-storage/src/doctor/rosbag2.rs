//! rosbag2: each storage file checked by its own format (MCAP here, SQLite3 by its integrity
//! check and a read of every row), and `metadata.yaml` against what the files hold: the file
//! list, message counts per topic and per file, topic types, the start and the duration.

use std::collections::BTreeMap;
use std::path::Path;

use super::{FileSummary, Finding, Kind, Place, Report, Severity, Visitor};
use crate::rosbag2::metadata::BagMetadata;
use crate::{Filter, Result, StorageReader};

const META: &str = "metadata.yaml";

/// Checks the SQLite3 storage file `path`: SQLite's own `quick_check`, then every row read
/// through the rosbag2 reader.
pub(super) fn check_sqlite(
    path: &Path,
    file_index: usize,
    report: &mut Report,
    visitor: &mut dyn Visitor,
    own_file: bool,
) -> FileSummary {
    let mut summary = FileSummary::default();
    let db = rusqlite::Connection::open_with_flags(
        crate::rosbag2::immutable_uri(path),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
            | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    );
    let add = |report: &mut Report, sev, kind, record: &str, msg: String| {
        report.push(Finding::new(sev, kind, path, None, record, msg));
    };
    let quick: std::result::Result<Vec<String>, rusqlite::Error> = db.and_then(|db| {
        let mut st = db.prepare("PRAGMA quick_check(20)")?;
        let rows = st.query_map([], |r| r.get::<_, String>(0))?.collect();
        rows
    });
    match quick {
        Ok(lines) if lines.len() == 1 && lines[0] == "ok" => {}
        Ok(lines) => add(
            report,
            Severity::Error,
            Kind::Structure,
            "SQLite database",
            format!("quick_check: {}", lines.join("; ")),
        ),
        Err(e) => add(report, Severity::Error, Kind::Structure, "SQLite database", e.to_string()),
    }
    let reader = match crate::rosbag2::SqliteReader::open(path) {
        Ok(r) => r,
        Err(e) => {
            add(report, Severity::Error, Kind::Structure, "SQLite database", e.to_string());
            return summary;
        }
    };
    let wants = visitor.wants_messages();
    for c in reader.connections() {
        report.checked.connections += 1;
        let at = Place { file: path, file_index, offset: None, record: "SQLite topics row" };
        visitor.connection(&at, c, report);
    }
    let messages = match reader.messages(&Filter::default()) {
        Ok(m) => m,
        Err(e) => {
            add(report, Severity::Error, Kind::Structure, "SQLite messages table", e.to_string());
            return summary;
        }
    };
    let mut counts = std::collections::HashMap::new();
    for m in messages {
        let m = match m {
            Ok(m) => m,
            Err(e) => {
                add(report, Severity::Error, Kind::Structure, "SQLite messages row", e.to_string());
                break;
            }
        };
        report.checked.messages += 1;
        let Some(c) = reader.connection(m.connection) else {
            add(
                report,
                Severity::Error,
                Kind::Connection,
                "SQLite messages row",
                format!("a message of topic id {}, which the topics table lacks", m.connection),
            );
            continue;
        };
        summary.time(m.log_time);
        *counts.entry(m.connection).or_insert(0u64) += 1;
        if wants {
            let at = Place { file: path, file_index, offset: None, record: "SQLite messages row" };
            visitor.message(&at, c, m.log_time, &m.data, report);
        }
    }
    for (id, n) in counts {
        if let Some(c) = reader.connection(id) {
            summary.topic(&c.topic, &c.message_type, n);
        }
    }
    if own_file {
        report.checked.files = 1;
    }
    summary
}

/// Checks a rosbag2 directory: its storage files, then metadata.yaml against them.
pub(super) fn check_dir(dir: &Path, report: &mut Report, visitor: &mut dyn Visitor) -> Result<()> {
    let meta_path = dir.join(META);
    let meta_finding =
        |severity, message: String| Finding::new(severity, Kind::Metadata, &meta_path, None, META, message);
    let meta = if meta_path.exists() {
        match BagMetadata::read(&meta_path) {
            Ok(m) => Some(m),
            Err(e) => {
                report.push(meta_finding(Severity::Error, e.to_string()));
                None
            }
        }
    } else {
        report.push(meta_finding(
            Severity::Warning,
            "the directory has no metadata.yaml; `rbag reindex` writes one".to_string(),
        ));
        None
    };
    let on_disk = crate::rosbag2::storage_files(dir)?;
    let names = match &meta {
        Some(m) => {
            for n in on_disk.iter().filter(|n| !m.relative_file_paths.contains(n)) {
                report.push(meta_finding(
                    Severity::Warning,
                    format!("{n} is in the directory but not in relative_file_paths: readers skip it"),
                ));
            }
            m.relative_file_paths.clone()
        }
        None => on_disk,
    };
    if names.is_empty() {
        return Err(crate::Error::UnknownFormat {
            path: dir.into(),
            reason: "the directory holds no .db3 or .mcap files".into(),
        });
    }
    let message_compressed = meta.as_ref().is_some_and(|m| m.compression_mode.eq_ignore_ascii_case("message"));
    let mut skip_messages = SkipMessages { inner: visitor };
    let visitor: &mut dyn Visitor = if message_compressed {
        report.push(Finding::new(
            Severity::Info,
            Kind::NotChecked,
            &meta_path,
            None,
            META,
            "messages are compressed one by one (compression_mode MESSAGE): payloads are not decoded".to_string(),
        ));
        &mut skip_messages
    } else {
        skip_messages.inner
    };
    let mut summaries: Vec<(String, Option<FileSummary>)> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let path = dir.join(name);
        let md = match std::fs::metadata(&path) {
            Ok(md) if md.is_file() => md,
            other => {
                let what = if other.is_ok() { "not a regular file" } else { "missing" };
                report.push(meta_finding(Severity::Error, format!("lists {name}, which is {what}")));
                summaries.push((name.clone(), None));
                continue;
            }
        };
        report.checked.files += 1;
        report.checked.bytes += md.len();
        let s = if name.ends_with(".zstd") {
            report.push(Finding::new(
                Severity::Info,
                Kind::NotChecked,
                &path,
                None,
                "storage file",
                "a zstd-compressed storage file: not checked (decompress it first)".to_string(),
            ));
            None
        } else if name.ends_with(".db3") {
            Some(check_sqlite(&path, i, report, visitor, false))
        } else {
            let buf = super::load(&path)?;
            Some(super::mcap::check(&path, i, &buf, report, visitor))
        };
        summaries.push((name.clone(), s));
    }
    if let Some(meta) = &meta {
        compare(&meta_path, meta, &summaries, report);
    }
    Ok(())
}

/// A visitor that passes connections on but not messages.
struct SkipMessages<'a> {
    inner: &'a mut dyn Visitor,
}

impl Visitor for SkipMessages<'_> {
    fn connection(&mut self, at: &Place<'_>, conn: &crate::Connection, out: &mut Report) {
        self.inner.connection(at, conn, out)
    }
}

/// metadata.yaml against the files' summaries (`None`: a file that could not be read).
fn compare(meta_path: &Path, meta: &BagMetadata, files: &[(String, Option<FileSummary>)], report: &mut Report) {
    let mut push = |sev, record: &str, topic: Option<&str>, msg: String| {
        let mut f = Finding::new(sev, Kind::Metadata, meta_path, None, record, msg);
        f.topic = topic.map(str::to_string);
        report.push(f);
    };
    // Per-file entries (metadata version 5 and later).
    for fi in &meta.files {
        let Some((_, Some(s))) = files.iter().find(|(n, _)| *n == fi.path) else { continue };
        if fi.message_count != s.messages {
            push(
                Severity::Error,
                "files",
                None,
                format!("{}: message_count {}, the file holds {}", fi.path, fi.message_count, s.messages),
            );
        }
        if let (Some(start), Some(end)) = (s.start, s.end) {
            if fi.starting_time_ns != start || fi.duration_ns != end - start {
                push(
                    Severity::Info,
                    "files",
                    None,
                    format!(
                        "{}: starting_time {} ns and duration {} ns, the file's messages start at {start} ns and span {} ns",
                        fi.path,
                        fi.starting_time_ns,
                        fi.duration_ns,
                        end - start
                    ),
                );
            }
        }
    }
    if files.iter().any(|(_, s)| s.is_none()) {
        // Totals cannot be compared with a file unread.
        return;
    }
    let mut topics: BTreeMap<&str, (&str, u64)> = BTreeMap::new();
    let (mut total, mut start, mut end) = (0u64, None::<u64>, None::<u64>);
    for s in files.iter().filter_map(|(_, s)| s.as_ref()) {
        for (t, (ty, n)) in &s.topics {
            topics.entry(t).or_insert((ty, 0)).1 += n;
        }
        total += s.messages;
        start = s.start.map(|s| start.map_or(s, |x: u64| x.min(s))).or(start);
        end = s.end.map(|e| end.map_or(e, |x: u64| x.max(e))).or(end);
    }
    if meta.message_count != total {
        push(
            Severity::Error,
            "message_count",
            None,
            format!("message_count {}, the files hold {total}", meta.message_count),
        );
    }
    for t in &meta.topics {
        let (ty, n) = topics.remove(t.name.as_str()).unwrap_or(("", 0));
        if t.message_count != n {
            push(
                Severity::Error,
                "topics_with_message_count",
                Some(&t.name),
                format!("message_count {}, the files hold {n}", t.message_count),
            );
        }
        if !ty.is_empty() && ty != t.message_type {
            push(
                Severity::Error,
                "topics_with_message_count",
                Some(&t.name),
                format!("type {}, the files say {ty}", t.message_type),
            );
        }
    }
    for (t, (_, n)) in topics {
        push(
            Severity::Error,
            "topics_with_message_count",
            Some(t),
            format!("{n} message(s) of this topic are in the files but it is not listed"),
        );
    }
    // rosbag2 itself writes times that differ from its messages' (rosbag2's own test bags do):
    // worth knowing, not damage.
    if let (Some(start), Some(end)) = (start, end) {
        if meta.starting_time_ns != start || meta.duration_ns != end - start {
            push(
                Severity::Info,
                "starting_time",
                None,
                format!(
                    "starting_time {} ns and duration {} ns, the messages start at {start} ns and span {} ns",
                    meta.starting_time_ns,
                    meta.duration_ns,
                    end - start
                ),
            );
        }
    }
}
