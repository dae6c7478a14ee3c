//! Format detection and the entry points that pick a backend.

use std::io::Read;
use std::path::Path;

use crate::rosbag2::{self, Rosbag2Reader, Rosbag2Writer};
use crate::{ros1, Error, ReindexReport, Result, StorageReader, StorageWriter, WriteOptions};

/// A storage format rbag recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// ROS 1 bag v2.0.
    Ros1,
    /// rosbag2 SQLite3 (`.db3`).
    Sqlite3,
    /// MCAP.
    Mcap,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Ros1 => "ros1",
            Format::Sqlite3 => "sqlite3",
            Format::Mcap => "mcap",
        }
    }
}

/// Recognises a bag by its first bytes; a directory is a rosbag2 bag, recognised by its
/// metadata.yaml or its first storage file.
pub fn detect(path: &Path) -> Result<Format> {
    if path.is_dir() {
        return rosbag2::detect_dir(path);
    }
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    let head = &head[..n];
    if head.starts_with(ros1::MAGIC) {
        Ok(Format::Ros1)
    } else if head.starts_with(b"\x89MCAP") {
        Ok(Format::Mcap)
    } else if head.starts_with(b"SQLite format 3\0") {
        Ok(Format::Sqlite3)
    } else if head.starts_with(b"#ROSBAG V") {
        Err(Error::UnknownFormat {
            path: path.into(),
            reason: format!(
                "ROS bag version {} (only V2.0 is supported)",
                String::from_utf8_lossy(&head[9..]).trim()
            ),
        })
    } else {
        Err(Error::UnknownFormat { path: path.into(), reason: "unrecognised magic bytes".into() })
    }
}

/// Opens a bag for reading, whatever its format.
pub fn open(path: &Path) -> Result<Box<dyn StorageReader>> {
    match detect(path)? {
        Format::Ros1 => Ok(Box::new(ros1::Ros1Reader::open(path)?)),
        Format::Sqlite3 | Format::Mcap => Ok(Box::new(Rosbag2Reader::open(path)?)),
    }
}

/// Creates a bag for writing in `format`: a ROS 1 file, or a rosbag2 directory (a single
/// storage file when `path` ends in `.db3`/`.mcap`). rbag never overwrites: an existing
/// output is an error, and the caller removes it first.
pub fn create(path: &Path, format: Format, options: &WriteOptions) -> Result<Box<dyn StorageWriter>> {
    match format {
        Format::Ros1 => Ok(Box::new(ros1::Ros1Writer::create(path, options.clone())?)),
        Format::Sqlite3 | Format::Mcap => Ok(Box::new(Rosbag2Writer::create(path, format, options)?)),
    }
}

/// Rebuilds the index of a bag that lost it, writing the repaired bag to `output` (and first
/// renaming the input to `backup` when repairing in place). The input is never modified when
/// this fails.
pub fn reindex(input: &Path, output: &Path, backup: Option<&Path>) -> Result<ReindexReport> {
    match detect(input)? {
        Format::Ros1 => ros1::reindex(input, output, backup).map_err(|e| e.in_file(input)),
        Format::Sqlite3 | Format::Mcap if input.is_dir() => rosbag2::reindex(input),
        other => Err(Error::UnknownFormat { path: input.into(), reason: format!("a single {} file has its own index; reindex works on a bag directory", other.name()) }),
    }
}
