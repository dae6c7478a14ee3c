//! One file of a recording: written under its active name, renamed when closed, with the
//! connections registered lazily and its size tracked for `--size`.
//!
//! Connections are added to a file with their first message in it, as rosbag does, so a
//! publisher that sent nothing while a split was open does not appear in that split.
//!
//! Size: rosbag splits when the bag's write offset passes `--size`. Without compression rbag
//! counts the bytes of the records it has written (message and connection records, index
//! entries, the file header), which is what the offset would be. With compression (or for
//! SQLite3) that cannot be known before a chunk is compressed, so the size is the file's
//! length on disk, measured every 64 KiB written: a file then passes `--size` by up to the
//! open chunk plus what the writer still buffers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rbag_storage::{Compression, Connection, Format, McapPreset, StorageWriter, WriteOptions};

use super::{ConnKey, RecordError};
use crate::split::active_path;

/// Which connection of the file a message goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Slot {
    Conn(ConnKey),
    /// The recorder's own `/rbag/dropped` report.
    Dropped,
}

/// Bytes written between two measures of the file on disk.
const MEASURE_EVERY: u64 = 64 << 10;

pub(crate) struct BagFile {
    writer: Option<Box<dyn StorageWriter>>,
    pub(crate) target: PathBuf,
    active: PathBuf,
    format: Format,
    ids: HashMap<Slot, u32>,
    on_disk: bool,
    /// Counted bytes (or the last measured length when `on_disk`).
    size: u64,
    unmeasured: u64,
    pub(crate) last_time: Option<u64>,
}

impl BagFile {
    /// Creates the file under its active name. An existing file with either name is an error
    /// unless `overwrite`, which removes it.
    pub(crate) fn create(
        target: PathBuf,
        format: Format,
        options: &WriteOptions,
        overwrite: bool,
    ) -> Result<Self, RecordError> {
        let active = active_path(&target, format);
        for path in [&target, &active] {
            let checked = rbag_storage::output::check(
                path,
                &rbag_storage::OutputPolicy { inputs: Vec::new(), replace: overwrite },
            )
            .map_err(|e| match e {
                rbag_storage::Error::OutputExists { .. } => RecordError::OutputExists { path: path.clone() },
                e => e.into(),
            })?;
            // A recording cannot be staged and renamed at the end (its partial file must stay
            // visible for recovery), so what --force replaces goes first; only a bag does.
            rbag_storage::output::discard(checked)?;
        }
        // Written in place under its active name: a killed recorder leaves `X.bag.active`.
        let writer = rbag_storage::create_at(&active, &target, format, options).map_err(|e| e.in_file(&active))?;
        let on_disk = match format {
            Format::Ros1 => options.compression != Compression::None,
            Format::Mcap => {
                options.compression != Compression::None
                    || matches!(options.rosbag2.mcap_preset, McapPreset::ZstdFast | McapPreset::ZstdSmall)
            }
            Format::Sqlite3 => true,
        };
        let size = if on_disk { 0 } else { header_bytes(format) };
        Ok(BagFile {
            writer: Some(writer),
            target,
            active,
            format,
            ids: HashMap::new(),
            on_disk,
            size,
            unmeasured: 0,
            last_time: None,
        })
    }

    /// Writes one message, registering its connection first if this file has not seen it.
    /// Returns the bytes counted for it.
    pub(crate) fn write(&mut self, slot: Slot, conn: &Connection, time: u64, data: &[u8]) -> Result<u64, RecordError> {
        let writer = self.writer.as_mut().ok_or(RecordError::Closed)?;
        let mut bytes = data.len() as u64 + message_overhead(self.format);
        let id = match self.ids.get(&slot) {
            Some(&id) => id,
            None => {
                let id = writer.add_connection(conn).map_err(|e| e.in_file(&self.active))?;
                self.ids.insert(slot, id);
                bytes += connection_bytes(self.format, conn);
                id
            }
        };
        writer.write(id, time, time, data).map_err(|e| e.in_file(&self.active))?;
        self.last_time = Some(self.last_time.map_or(time, |t| t.max(time)));
        if self.on_disk {
            self.unmeasured += bytes;
        } else {
            self.size += bytes;
        }
        Ok(bytes)
    }

    /// The file's size as `--size` compares it.
    pub(crate) fn size(&mut self) -> u64 {
        if self.on_disk && self.unmeasured >= MEASURE_EVERY {
            self.unmeasured = 0;
            if let Ok(m) = std::fs::metadata(&self.active) {
                self.size = m.len();
            }
        }
        self.size
    }

    /// Finishes the bag (index, header) and gives it its final name. Returns that name and
    /// the file's length.
    pub(crate) fn close(mut self) -> Result<(PathBuf, u64), RecordError> {
        let writer = self.writer.take().ok_or(RecordError::Closed)?;
        writer.finish().map_err(|e| e.in_file(&self.active))?;
        if self.active != self.target {
            std::fs::rename(&self.active, &self.target).map_err(|e| RecordError::io(&self.active, e))?;
        }
        let len = file_len(&self.target);
        Ok((self.target.clone(), len))
    }
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Bytes a fresh file starts with: the ROS 1 magic and its 4 KiB bag header record; the MCAP
/// magic and header.
fn header_bytes(format: Format) -> u64 {
    match format {
        Format::Ros1 => 13 + 4104,
        Format::Mcap => 64,
        Format::Sqlite3 => 0,
    }
}

/// Bytes a message costs besides its payload: the ROS 1 record header (op, conn, time) and its
/// index entry; the MCAP message record and its message-index entry.
fn message_overhead(format: Format) -> u64 {
    match format {
        Format::Ros1 => 46 + 12,
        Format::Mcap => 31 + 16,
        Format::Sqlite3 => 40,
    }
}

/// Bytes of a connection record (ROS 1) or schema and channel records (MCAP).
fn connection_bytes(format: Format, conn: &Connection) -> u64 {
    let meta: usize = conn.metadata.iter().map(|(k, v)| 5 + k.len() + v.len()).sum();
    let text = conn.topic.len() + conn.message_type.len() + conn.definition.len();
    let fixed = match format {
        Format::Ros1 => 86 + conn.topic.len(),
        Format::Mcap => 60,
        Format::Sqlite3 => 100,
    };
    (fixed + text + meta) as u64
}
