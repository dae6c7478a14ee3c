//! Format detection and the entry points that pick a backend.

use std::io::Read;
use std::path::Path;

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

/// Recognises a bag by its first bytes (a directory is a rosbag2 bag).
pub fn detect(path: &Path) -> Result<Format> {
    if path.is_dir() {
        return Err(Error::UnknownFormat {
            path: path.into(),
            reason: "rosbag2 directories are not supported yet".into(),
        });
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
        other => Err(Error::UnknownFormat {
            path: path.into(),
            reason: format!("the {} backend is not built yet", other.name()),
        }),
    }
}

/// Creates a bag for writing in `format`. An existing file is replaced only when the caller
/// removed it first; rbag never truncates a bag it did not create.
pub fn create(path: &Path, format: Format, options: &WriteOptions) -> Result<Box<dyn StorageWriter>> {
    match format {
        Format::Ros1 => Ok(Box::new(ros1::Ros1Writer::create(path, options.clone())?)),
        other => Err(Error::UnknownFormat {
            path: path.into(),
            reason: format!("writing {} is not built yet", other.name()),
        }),
    }
}

/// Rebuilds the index of a bag that lost it, writing the repaired bag to `output` (and first
/// renaming the input to `backup` when repairing in place). The input is never modified when
/// this fails.
pub fn reindex(input: &Path, output: &Path, backup: Option<&Path>) -> Result<ReindexReport> {
    match detect(input)? {
        Format::Ros1 => ros1::reindex(input, output, backup).map_err(|e| e.in_file(input)),
        other => Err(Error::UnknownFormat { path: input.into(), reason: format!("reindexing {} is not built yet", other.name()) }),
    }
}
