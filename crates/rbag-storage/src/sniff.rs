//! Recognising the built-in storages by their first bytes, and a rosbag2 directory by its
//! metadata.yaml or its storage files. Used by the built-in backends' `detect` and by the
//! rosbag2 reader for the files of a directory; nothing here picks a backend.

use std::io::Read;
use std::path::Path;

use crate::rosbag2::metadata::{BagMetadata, FILE_NAME};
use crate::{ros1, Error, Format, Result};

/// Up to `n` bytes from the start of the file at `path`.
pub(crate) fn head(path: &Path, n: usize) -> Result<Vec<u8>> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut head = vec![0u8; n];
    let mut got = 0;
    while got < n {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    head.truncate(got);
    Ok(head)
}

/// The built-in storage a file's first bytes name; an error for a ROS bag of another version.
pub(crate) fn file_format(path: &Path, head: &[u8]) -> Result<Option<Format>> {
    if head.starts_with(ros1::MAGIC) {
        Ok(Some(Format::Ros1))
    } else if head.starts_with(b"\x89MCAP") {
        Ok(Some(Format::Mcap))
    } else if head.starts_with(b"SQLite format 3\0") {
        Ok(Some(Format::Sqlite3))
    } else if head.starts_with(b"#ROSBAG V") {
        let version = head.get(9..).unwrap_or_default().split(|&b| b == b'\n').next().unwrap_or_default();
        Err(Error::UnknownFormat {
            path: path.into(),
            reason: format!("ROS bag version {} (only V2.0 is supported)", String::from_utf8_lossy(version).trim()),
        })
    } else {
        Ok(None)
    }
}

/// Which storage a rosbag2 directory holds: its metadata.yaml's `storage_identifier`, or else
/// the kind of its first storage file. `None` for a directory that is not a rosbag2 bag, and
/// the identifier itself when it is not a built-in one (a registered backend may claim it).
pub(crate) fn rosbag2_dir(dir: &Path) -> Result<Option<Rosbag2Storage>> {
    let meta = dir.join(FILE_NAME);
    if meta.exists() {
        return Ok(Some(match BagMetadata::read(&meta)?.storage_identifier.as_str() {
            "sqlite3" => Rosbag2Storage::Builtin(Format::Sqlite3),
            "mcap" => Rosbag2Storage::Builtin(Format::Mcap),
            other => Rosbag2Storage::Other(other.to_string()),
        }));
    }
    let first = crate::rosbag2::storage_files(dir)?.into_iter().next();
    Ok(match first.as_deref() {
        Some(n) if n.ends_with(".db3") || n.ends_with(".db3.zstd") => Some(Rosbag2Storage::Builtin(Format::Sqlite3)),
        Some(_) => Some(Rosbag2Storage::Builtin(Format::Mcap)),
        None => None,
    })
}

/// What a rosbag2 directory's storage is.
pub(crate) enum Rosbag2Storage {
    /// SQLite3 or MCAP.
    Builtin(Format),
    /// Another `storage_identifier`.
    Other(String),
}
