//! Format detection and the entry points that pick a backend.

use std::io::Read;
use std::path::Path;

use crate::output::{self, Staged, StagedWriter};
use crate::rosbag2::{self, Rosbag2Reader, Rosbag2Writer};
use crate::{ros1, Error, OutputPolicy, ReindexReport, Result, StorageReader, StorageWriter, WriteOptions};

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
            reason: format!("ROS bag version {} (only V2.0 is supported)", String::from_utf8_lossy(&head[9..]).trim()),
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
/// storage file when `path` ends in `.db3`/`.mcap`). An existing output is an error.
///
/// The bag is written under a hidden temporary name beside `path` and renamed into place by
/// [`StorageWriter::finish`]; a writer dropped unfinished leaves nothing (see [`crate::output`]).
pub fn create(path: &Path, format: Format, options: &WriteOptions) -> Result<Box<dyn StorageWriter>> {
    create_with(path, format, options, &OutputPolicy::default())
}

/// [`create`] with the inputs the output must not touch, and whether an existing bag at `path`
/// is replaced (only once the new one is complete). See [`crate::output::check`].
pub fn create_with(
    path: &Path,
    format: Format,
    options: &WriteOptions,
    policy: &OutputPolicy,
) -> Result<Box<dyn StorageWriter>> {
    let staged = Staged::new(output::check(path, policy)?)?;
    let inner = create_at(staged.temp(), staged.target(), format, options)?;
    Ok(Box::new(StagedWriter::new(inner, staged)))
}

/// Creates the bag at `path` directly, named as `name` would be (a rosbag2 directory names its
/// files after it). Recorders use it for their `.active` files; everything else goes through
/// [`create`].
pub fn create_at(path: &Path, name: &Path, format: Format, options: &WriteOptions) -> Result<Box<dyn StorageWriter>> {
    match format {
        Format::Ros1 => Ok(Box::new(ros1::Ros1Writer::create(path, options.clone())?)),
        Format::Sqlite3 | Format::Mcap => Ok(Box::new(Rosbag2Writer::create_named(path, name, format, options)?)),
    }
}

/// Rebuilds the index of a bag that lost it, writing the repaired bag to `output` (and first
/// renaming the input to `backup` when repairing in place). The input is never modified when
/// this fails. An existing `output` is replaced only with `replace`, and only if it is a bag.
pub fn reindex(input: &Path, output: &Path, backup: Option<&Path>, replace: bool) -> Result<ReindexReport> {
    if input.is_dir() {
        // Not through `detect`: a broken metadata.yaml is what directory reindex repairs.
        return rosbag2::reindex(input);
    }
    match detect(input)? {
        Format::Ros1 => ros1::reindex(input, output, backup, replace).map_err(|e| e.in_file(input)),
        other => Err(Error::UnknownFormat {
            path: input.into(),
            reason: format!("a single {} file has its own index; reindex works on a bag directory", other.name()),
        }),
    }
}
