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

use rbag_storage::rosbag2::Rosbag2Writer;
use rbag_storage::{Compression, Connection, Format, McapPreset, StorageWriter, WriteOptions};

use super::naming::active_path;
use super::{ConnKey, RecordError};

/// Which connection of the file a message goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Slot {
    Conn(ConnKey),
    /// The recorder's own `/rbag/dropped` report.
    Dropped,
}

/// Bytes written between two measures of the file on disk.
const MEASURE_EVERY: u64 = 64 << 10;

/// Where a recording's messages go: a bag file per split, or one rosbag2 directory whose
/// writer starts a new storage file on each split.
// One per recording, so the size difference of the variants does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Output {
    File(BagFile),
    Dir(DirBag),
}

impl Output {
    /// Writes one message (see [`BagFile::write`]); returns the bytes counted for it.
    pub(crate) fn write(&mut self, slot: Slot, conn: &Connection, time: u64, data: &[u8]) -> Result<u64, RecordError> {
        match self {
            Output::File(f) => f.write(slot, conn, time, data),
            Output::Dir(d) => d.write(slot, conn, time, data),
        }
    }

    /// A connection the recording learned of. A rosbag2 directory lists it at once (topics with
    /// no message yet are in metadata.yaml, as rosbag2 lists them); a bag file registers it with
    /// its first message, as rosbag does.
    pub(crate) fn announce(&mut self, slot: Slot, conn: &Connection) -> Result<(), RecordError> {
        match self {
            Output::File(_) => Ok(()),
            Output::Dir(d) => d.register(slot, conn).map(|_| ()),
        }
    }

    /// The current file's size as `--size` compares it.
    pub(crate) fn size(&mut self) -> u64 {
        match self {
            Output::File(f) => f.size(),
            Output::Dir(d) => d.writer.as_ref().map_or(0, Rosbag2Writer::current_file_bytes),
        }
    }

    /// Log time of the last message in the current file.
    pub(crate) fn last_time(&self) -> Option<u64> {
        match self {
            Output::File(f) => f.last_time,
            Output::Dir(d) => d.last_time,
        }
    }

    /// Log time of the first message in the current file, if it has one.
    pub(crate) fn first_time(&self) -> Option<u64> {
        match self {
            Output::File(f) => f.first_time,
            Output::Dir(d) => d.first_time,
        }
    }

    /// Hands what was written to the OS (see [`StorageWriter::checkpoint`]).
    pub(crate) fn checkpoint(&mut self) -> Result<(), RecordError> {
        let (writer, path): (Option<&mut dyn StorageWriter>, &Path) = match self {
            Output::File(f) => (f.writer.as_deref_mut().map(|w| w as &mut dyn StorageWriter), &f.active),
            Output::Dir(d) => (d.writer.as_mut().map(|w| w as &mut dyn StorageWriter), &d.path),
        };
        let writer = writer.ok_or(RecordError::Closed)?;
        writer.checkpoint().map_err(|e| e.in_file(path))?;
        Ok(())
    }
}

/// A rosbag2 directory being recorded. Its writer splits only when told to
/// ([`StorageWriter::split_now`]): the recorder decides when.
pub(crate) struct DirBag {
    writer: Option<Rosbag2Writer>,
    pub(crate) path: PathBuf,
    ids: HashMap<Slot, u32>,
    first_time: Option<u64>,
    last_time: Option<u64>,
    /// Of the writer's files left uncompressed, how many were reported.
    uncompressed_seen: usize,
}

impl DirBag {
    /// Creates the directory. An existing one is an error unless `overwrite`, which replaces
    /// it when it is a bag rbag could have written. The writer gets no size or duration bound:
    /// the recorder applies them (with the same rule) and splits through `split_now`.
    pub(crate) fn create(
        path: PathBuf,
        format: Format,
        options: &WriteOptions,
        overwrite: bool,
    ) -> Result<Self, RecordError> {
        check_output(&path, overwrite)?;
        let mut options = options.clone();
        options.rosbag2.max_file_size = None;
        options.rosbag2.max_file_duration_ns = None;
        options.rosbag2.repeat_transient_local = false;
        let writer = Rosbag2Writer::create(&path, format, &options).map_err(|e| e.in_file(&path))?;
        Ok(DirBag {
            writer: Some(writer),
            path,
            ids: HashMap::new(),
            first_time: None,
            last_time: None,
            uncompressed_seen: 0,
        })
    }

    fn register(&mut self, slot: Slot, conn: &Connection) -> Result<u32, RecordError> {
        if let Some(&id) = self.ids.get(&slot) {
            return Ok(id);
        }
        let writer = self.writer.as_mut().ok_or(RecordError::Closed)?;
        let id = writer.add_connection(conn).map_err(|e| e.in_file(&self.path))?;
        self.ids.insert(slot, id);
        Ok(id)
    }

    fn write(&mut self, slot: Slot, conn: &Connection, time: u64, data: &[u8]) -> Result<u64, RecordError> {
        let id = self.register(slot, conn)?;
        let writer = self.writer.as_mut().ok_or(RecordError::Closed)?;
        writer.write(id, time, time, data).map_err(|e| e.in_file(&self.path))?;
        self.first_time = Some(self.first_time.map_or(time, |t| t.min(time)));
        self.last_time = Some(self.last_time.map_or(time, |t| t.max(time)));
        Ok(data.len() as u64)
    }

    /// Starts the next storage file; returns the closed and the opened file (rosbag2's
    /// write_split event), `None` when the current one holds nothing yet (kept).
    pub(crate) fn split(&mut self) -> Result<Option<(PathBuf, PathBuf)>, RecordError> {
        if self.first_time.is_none() {
            return Ok(None);
        }
        let writer = self.writer.as_mut().ok_or(RecordError::Closed)?;
        let closed = writer.current_file_path().unwrap_or_default();
        writer.split_now().map_err(|e| e.in_file(&self.path))?;
        let opened = writer.current_file_path().unwrap_or_default();
        (self.first_time, self.last_time) = (None, None);
        Ok(Some((closed, opened)))
    }

    /// Closed files the full compression queue left uncompressed since the last call.
    pub(crate) fn take_uncompressed(&mut self) -> Vec<PathBuf> {
        let Some(writer) = self.writer.as_ref() else { return Vec::new() };
        let all = writer.left_uncompressed();
        let new = all.get(self.uncompressed_seen..).unwrap_or_default().to_vec();
        self.uncompressed_seen = all.len();
        new
    }

    /// The storage file being written.
    pub(crate) fn current_file(&self) -> Option<PathBuf> {
        self.writer.as_ref().and_then(Rosbag2Writer::current_file_path)
    }

    /// Closes the last storage file and writes metadata.yaml; returns the directory and the
    /// bytes of its files.
    pub(crate) fn close(mut self) -> Result<(PathBuf, u64), RecordError> {
        let writer = self.writer.take().ok_or(RecordError::Closed)?;
        Box::new(writer).finish().map_err(|e| e.in_file(&self.path))?;
        let len = std::fs::read_dir(&self.path)
            .map(|d| d.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
            .unwrap_or(0);
        Ok((self.path.clone(), len))
    }
}

/// Refuses an existing output unless `overwrite`; with it, removes what may be replaced (only a
/// bag). A recording cannot be staged and renamed at the end (its partial file must stay
/// visible for recovery), so what is replaced goes first.
fn check_output(path: &Path, overwrite: bool) -> Result<(), RecordError> {
    let checked =
        rbag_storage::output::check(path, &rbag_storage::OutputPolicy { inputs: Vec::new(), replace: overwrite })
            .map_err(|e| match e {
                rbag_storage::Error::OutputExists { .. } => RecordError::OutputExists { path: path.to_path_buf() },
                e => e.into(),
            })?;
    rbag_storage::output::discard(checked)?;
    Ok(())
}

/// One bag file of a recording.
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
    pub(crate) first_time: Option<u64>,
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
            check_output(path, overwrite)?;
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
            first_time: None,
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
        self.first_time = Some(self.first_time.map_or(time, |t| t.min(time)));
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
