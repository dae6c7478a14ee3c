//! Reindexing a rosbag2 directory: rebuild metadata.yaml from the storage files alone, as
//! `ros2 bag reindex` does, with per-file start, duration and count.

use std::collections::BTreeMap;
use std::path::Path;

use super::bag::storage_files;
use super::metadata::{BagMetadata, FileInfo, TopicInfo, FILE_NAME, LATEST_VERSION};
use super::Rosbag2Reader;
use crate::{Error, ReindexReport, Result, StorageReader};

/// Makes one storage file whole again after its writer was killed, so that every reader (not
/// only rbag's, which copes) opens it: an MCAP file without its summary is rewritten from the
/// complete messages it holds, and an SQLite3 file's write-ahead log is folded into it.
/// Returns what it did.
fn repair_file(path: &Path) -> Result<Option<String>> {
    let name = path.display();
    if path.extension().is_some_and(|e| e == "db3") {
        let wal = super::sqlite::sibling(path, "-wal");
        if !wal.exists() {
            return Ok(None);
        }
        let db = rusqlite::Connection::open(path).map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
        db.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| Error::Invalid(format!("{name}: folding in the write-ahead log: {e}")))?;
        drop(db);
        return Ok(Some(format!("{name}: folded its write-ahead log into the file")));
    }
    if path.extension().is_none_or(|e| e != "mcap") {
        return Ok(None);
    }
    let reader = crate::mcap::McapReader::open(path)?;
    if reader.warnings().is_empty() {
        return Ok(None);
    }
    let tmp = crate::output::staging_path(path, "repair");
    let mut writer: Box<dyn crate::StorageWriter> =
        Box::new(crate::mcap::McapWriter::create(&tmp, &crate::WriteOptions::default())?);
    let mut ids = BTreeMap::new();
    for c in reader.connections() {
        ids.insert(c.id, writer.add_connection(c)?);
    }
    let mut n = 0u64;
    for m in reader.messages(&crate::Filter::default())? {
        let m = m?;
        if let Some(&id) = ids.get(&m.connection) {
            writer.write(id, m.log_time, m.publish_time, &m.data)?;
            n += 1;
        }
    }
    writer.finish()?;
    drop(reader);
    std::fs::File::open(&tmp).and_then(|f| f.sync_all()).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
    Ok(Some(format!("{name}: rewrote it with an index from its {n} complete message(s)")))
}

/// Writes `<dir>/metadata.yaml` from what the storage files hold, after repairing files a
/// killed recorder left without their index (an MCAP file without its summary is rewritten,
/// an SQLite file's write-ahead log folded in).
pub fn reindex(dir: &Path) -> Result<ReindexReport> {
    reindex_as(dir, None)
}

/// [`reindex`], writing metadata.yaml as `distro`'s rosbag2 reads it (its version and name)
/// instead of keeping the old file's version.
pub fn reindex_as(dir: &Path, distro: Option<&str>) -> Result<ReindexReport> {
    let target = match distro {
        Some(d) => Some((
            super::metadata::version_for_distro(d).ok_or_else(|| {
                Error::Invalid(format!(
                    "unknown ROS 2 distro {d:?} (foxy, galactic, humble, iron, jazzy, kilted, rolling)"
                ))
            })?,
            d.to_string(),
        )),
        None => None,
    };
    let names = storage_files(dir)?;
    if names.iter().any(|n| n.ends_with(".zstd")) {
        return Err(Error::Invalid(format!(
            "{}: FILE-compressed bags keep their metadata.yaml; it cannot be rebuilt from .zstd files",
            dir.display()
        )));
    }
    // What the old metadata.yaml says that the files cannot (its version, compression,
    // custom data) is kept when it still parses; a broken one is no obstacle, it is the case
    // reindex exists for.
    let meta_path = dir.join(FILE_NAME);
    let old = std::fs::symlink_metadata(&meta_path).is_ok().then(|| BagMetadata::read(&meta_path).ok()).flatten();
    let mut meta = BagMetadata {
        version: old.as_ref().map_or(LATEST_VERSION, |m| m.version.clamp(1, LATEST_VERSION)),
        starting_time_ns: i64::MAX as u64,
        custom_data: old.as_ref().map(|m| m.custom_data.clone()).unwrap_or_default(),
        ros_distro: old.as_ref().map(|m| m.ros_distro.clone()).unwrap_or_default(),
        ..BagMetadata::default()
    };
    if let Some((version, name)) = target {
        meta.version = version;
        meta.ros_distro = name;
    }
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut start = None::<u64>;
    let mut end = None::<u64>;
    let mut repairs = Vec::new();
    for name in &names {
        let path = dir.join(name);
        repairs.extend(repair_file(&path)?);
        let reader = Rosbag2Reader::open(&path)?;
        let info = reader.info()?;
        meta.storage_identifier = info.format.into();
        if meta.ros_distro.is_empty() {
            if let Some(m) = reader.metadata() {
                meta.ros_distro = m.ros_distro.clone();
            }
        }
        for c in reader.connections() {
            let n = info.connections.get(&c.id).map_or(0, |s| s.message_count);
            *counts.entry(c.topic.clone()).or_default() += n;
            if !meta.topics.iter().any(|t| t.name == c.topic) {
                meta.topics.push(TopicInfo::from_connection(c));
            }
        }
        start = [start, info.start_ns].into_iter().flatten().min();
        end = [end, info.end_ns].into_iter().flatten().max();
        meta.files.push(FileInfo {
            path: name.clone(),
            starting_time_ns: info.start_ns.unwrap_or(i64::MAX as u64),
            duration_ns: info.end_ns.zip(info.start_ns).map_or(0, |(e, s)| e - s),
            message_count: info.message_count,
        });
        meta.message_count += info.message_count;
        meta.relative_file_paths.push(name.clone());
    }
    for t in &mut meta.topics {
        t.message_count = counts.get(&t.name).copied().unwrap_or(0);
    }
    if let (Some(s), Some(e)) = (start, end) {
        meta.starting_time_ns = s;
        meta.duration_ns = e - s;
    }
    if std::fs::symlink_metadata(&meta_path).is_ok() {
        // The old file is kept, never overwritten: metadata.orig.yaml (or .orig.1.yaml, …).
        let backup = crate::output::backup_path(&meta_path);
        std::fs::copy(&meta_path, &backup).map_err(|e| Error::io(&backup, e))?;
        repairs.push(format!("{}: the previous one is kept as {}", meta_path.display(), backup.display()));
    }
    meta.write(dir)?;
    Ok(ReindexReport {
        output: dir.join(FILE_NAME),
        messages_kept: meta.message_count,
        repairs,
        ..ReindexReport::default()
    })
}
