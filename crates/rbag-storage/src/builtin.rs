//! The backends this crate brings: ROS 1 bags, and rosbag2 bags in SQLite3 or MCAP storage.

use std::path::Path;
use std::sync::Arc;

use crate::registry::{Backend, Capabilities, OptionSpec};
use crate::rosbag2::{self, Rosbag2Reader, Rosbag2Writer};
use crate::sniff::{self, Rosbag2Storage};
use crate::{
    ros1, Compression, Error, Format, McapPreset, ReadOptions, ReindexReport, Result, SqlitePreset, StorageOptions,
    StorageReader, StorageWriter, WriteOptions,
};

/// The built-ins, in registration order.
pub(crate) fn all() -> Vec<Arc<dyn Backend>> {
    vec![Arc::new(Builtin(Format::Ros1)), Arc::new(Builtin(Format::Sqlite3)), Arc::new(Builtin(Format::Mcap))]
}

/// One built-in storage.
struct Builtin(Format);

const SQLITE_OPTIONS: &[OptionSpec] = &[OptionSpec {
    key: "preset",
    values: "default|resilient",
    doc: "rosbag2 storage preset: `resilient` is WAL journaling with synchronous=NORMAL",
}];

const MCAP_OPTIONS: &[OptionSpec] = &[OptionSpec {
    key: "preset",
    values: "default|fastwrite|zstd_fast|zstd_small",
    doc: "rosbag2's MCAP writer preset",
}];

/// `options` with what `storage` sets for `format` folded into the rosbag2 settings: how a
/// built-in backend reads its [`StorageOptions`] (a bad key or value names the backend).
pub fn with_storage_options(format: Format, options: &WriteOptions, storage: &StorageOptions) -> Result<WriteOptions> {
    let mut o = options.clone();
    let bad = |key: &str, value: &str, expected: &str| Error::BadOption {
        backend: format.name().into(),
        key: key.into(),
        reason: format!("{value:?} is not one of {expected}"),
    };
    for (key, value) in storage.iter() {
        match (format, key) {
            (Format::Sqlite3, "preset") => {
                o.rosbag2.sqlite_preset = match value {
                    "" | "none" | "default" => SqlitePreset::Default,
                    "resilient" => SqlitePreset::Resilient,
                    _ => return Err(bad(key, value, SQLITE_OPTIONS[0].values)),
                }
            }
            (Format::Mcap, "preset") => {
                o.rosbag2.mcap_preset =
                    value.parse::<McapPreset>().map_err(|_| bad(key, value, MCAP_OPTIONS[0].values))?
            }
            _ => {
                return Err(Error::BadOption {
                    backend: format.name().into(),
                    key: key.into(),
                    reason: "not an option of this storage".into(),
                })
            }
        }
    }
    Ok(o)
}

impl Backend for Builtin {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn description(&self) -> &str {
        match self.0 {
            Format::Ros1 => "ROS 1 bag v2.0 (.bag)",
            Format::Sqlite3 => "rosbag2 SQLite3 (.db3, schema 1-4 read, 4 written)",
            Format::Mcap => "MCAP (.mcap; ros2 and ros1 profiles)",
        }
    }

    fn extensions(&self) -> &[&str] {
        match self.0 {
            Format::Ros1 => &["bag"],
            Format::Sqlite3 => &["db3"],
            Format::Mcap => &["mcap"],
        }
    }

    fn capabilities(&self) -> Capabilities {
        match self.0 {
            Format::Ros1 => Capabilities {
                read: true,
                write: true,
                reindex: true,
                compressions: &[Compression::Bz2, Compression::Lz4],
                encodings: &["ros1"],
                ..Capabilities::default()
            },
            Format::Sqlite3 => Capabilities {
                read: true,
                write: true,
                reindex: true,
                compressions: &[],
                splits: true,
                directory: true,
                encodings: &["cdr"],
            },
            Format::Mcap => Capabilities {
                read: true,
                write: true,
                reindex: true,
                compressions: &[Compression::Zstd, Compression::Lz4],
                splits: true,
                directory: true,
                // rosbag2 writes cdr; MCAP's ros1 profile on request.
                encodings: &["cdr", "ros1"],
            },
        }
    }

    fn options(&self) -> &[OptionSpec] {
        match self.0 {
            Format::Ros1 => &[],
            Format::Sqlite3 => SQLITE_OPTIONS,
            Format::Mcap => MCAP_OPTIONS,
        }
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Result<bool> {
        if path.is_dir() {
            if self.0 == Format::Ros1 {
                return Ok(false);
            }
            return match sniff::rosbag2_dir(path)? {
                Some(Rosbag2Storage::Builtin(f)) => Ok(f == self.0),
                Some(Rosbag2Storage::Other(id)) => Err(Error::UnknownFormat {
                    path: path.join(rosbag2::metadata::FILE_NAME),
                    reason: format!("storage_identifier {id:?} (sqlite3, mcap)"),
                }),
                None => Ok(false),
            };
        }
        Ok(sniff::file_format(path, head)? == Some(self.0))
    }

    fn open(&self, path: &Path, options: &ReadOptions) -> Result<Box<dyn StorageReader>> {
        match self.0 {
            Format::Ros1 => Ok(Box::new(ros1::Ros1Reader::open_with(path, options)?)),
            Format::Sqlite3 | Format::Mcap => Ok(Box::new(Rosbag2Reader::open_with(path, options)?)),
        }
    }

    fn create(
        &self,
        path: &Path,
        name: &Path,
        options: &WriteOptions,
        storage: &StorageOptions,
    ) -> Result<Box<dyn StorageWriter>> {
        let options = with_storage_options(self.0, options, storage)?;
        match self.0 {
            Format::Ros1 => Ok(Box::new(ros1::Ros1Writer::create(path, options)?)),
            Format::Sqlite3 | Format::Mcap => Ok(Box::new(Rosbag2Writer::create_named(path, name, self.0, &options)?)),
        }
    }

    fn reindex(&self, input: &Path, output: &Path, backup: Option<&Path>, replace: bool) -> Result<ReindexReport> {
        if input.is_dir() {
            return rosbag2::reindex(input);
        }
        match self.0 {
            Format::Ros1 => ros1::reindex(input, output, backup, replace),
            Format::Mcap => crate::mcap::reindex(input, output, backup, replace),
            other => Err(Error::UnknownFormat {
                path: input.into(),
                reason: format!(
                    "a single {} file keeps its index in its tables; reindex works on a bag directory \
                     (`rbag convert` copies what it can read into a new file)",
                    other.name()
                ),
            }),
        }
    }
}
