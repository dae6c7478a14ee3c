//! rosbag2's storage plugin config file (`--storage-config-file`): SQLite3 pragmas
//! (`write: pragmas: [...]`, `read: pragmas: [...]`) and MCAP's `McapWriterOptions` keys,
//! overlaid on the preset. A key rbag's writers cannot honour is refused, naming the file and
//! the key, rather than silently ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::Format;

/// Why a storage config file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageConfigError {
    /// The file cannot be read.
    #[error("storage config file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not YAML of the expected shape.
    #[error("storage config file {}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the parser said (with the line).
        message: String,
    },
    /// A key the storage plugin does not know, or rbag cannot honour.
    #[error("storage config file {}: key {key:?}: {reason}", path.display())]
    Key {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
        /// Why it is refused.
        reason: String,
    },
    /// A pragma rosbag2 refuses (it holds `'`, `;` or `"`).
    #[error("storage config file {}: pragma {entry:?} holds ', ; or \" (refused, as rosbag2 does)", path.display())]
    Pragma {
        /// The file.
        path: PathBuf,
        /// The entry.
        entry: String,
    },
}

/// MCAP writer settings from a config file: each `Some` overrides the preset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McapConfig {
    /// `noChunkCRC`.
    pub no_chunk_crc: Option<bool>,
    /// `noAttachmentCRC`.
    pub no_attachment_crc: Option<bool>,
    /// `enableDataCRC`.
    pub enable_data_crc: Option<bool>,
    /// `noSummaryCRC`.
    pub no_summary_crc: Option<bool>,
    /// `noChunking`.
    pub no_chunking: Option<bool>,
    /// `noMessageIndex`.
    pub no_message_index: Option<bool>,
    /// `noSummary`.
    pub no_summary: Option<bool>,
    /// `chunkSize` (bytes).
    pub chunk_size: Option<u64>,
    /// `compression`: `None`, `Lz4` or `Zstd` (`Some(None)` is no compression).
    pub compression: Option<Option<crate::Compression>>,
    /// `compressionLevel` as the `mcap` crate's level for the chosen compression.
    pub compression_level: Option<McapLevel>,
    /// `noRepeatedSchemas`.
    pub no_repeated_schemas: Option<bool>,
    /// `noRepeatedChannels`.
    pub no_repeated_channels: Option<bool>,
    /// `noAttachmentIndex`.
    pub no_attachment_index: Option<bool>,
    /// `noMetadataIndex`.
    pub no_metadata_index: Option<bool>,
    /// `noChunkIndex`.
    pub no_chunk_index: Option<bool>,
    /// `noStatistics`.
    pub no_statistics: Option<bool>,
    /// `noSummaryOffsets`.
    pub no_summary_offsets: Option<bool>,
}

/// `compressionLevel`, as the C++ MCAP writer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McapLevel {
    /// `Fastest`.
    Fastest,
    /// `Fast`.
    Fast,
    /// `Default`.
    Default,
    /// `Slow`.
    Slow,
    /// `Slowest`.
    Slowest,
}

impl McapLevel {
    /// The `mcap` crate's level. The C++ writer uses zstd -5, -3, 1, 5, 19 and lz4 fast, 0, 0,
    /// HC 9, HC 12; the crate takes no negative zstd level, so Fastest and Fast write level 1.
    pub fn level(self, compression: Option<crate::Compression>) -> u32 {
        match compression {
            Some(crate::Compression::Lz4) => match self {
                McapLevel::Fastest | McapLevel::Fast | McapLevel::Default => 0,
                McapLevel::Slow => 9,
                McapLevel::Slowest => 12,
            },
            _ => match self {
                McapLevel::Fastest | McapLevel::Fast | McapLevel::Default => 1,
                McapLevel::Slow => 5,
                McapLevel::Slowest => 19,
            },
        }
    }
}

/// What a config file sets for one storage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageConfig {
    /// SQLite3 `write: pragmas:`, each run as `PRAGMA <entry>;` after the preset's.
    pub write_pragmas: Vec<String>,
    /// SQLite3 `read: pragmas:`, run on each file opened for reading.
    pub read_pragmas: Vec<String>,
    /// MCAP writer keys.
    pub mcap: McapConfig,
}

impl StorageConfig {
    /// Reads `path` as `format`'s plugin config, as rosbag2's plugin would.
    pub fn load(path: &Path, format: Format) -> Result<StorageConfig, StorageConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| StorageConfigError::Io { path: path.into(), source })?;
        Self::parse(&text, path, format)
    }

    /// Reads `path` for a player (`rbag play --ros2 --storage-config-file`), where the bags'
    /// storage decides: a file of only `read:`/`write:` sections is SQLite3's, any other
    /// MCAP's. Returns the storage it was read as, and what it says to do when reading.
    pub fn load_for_reading(path: &Path) -> Result<(Format, StorageConfig), StorageConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| StorageConfigError::Io { path: path.into(), source })?;
        let doc: BTreeMap<String, Value> = if text.trim().is_empty() {
            BTreeMap::new()
        } else {
            serde_saphyr::from_str(&text)
                .map_err(|e| StorageConfigError::Parse { path: path.into(), message: e.to_string() })?
        };
        let format = if !doc.is_empty() && doc.keys().all(|k| k == "read" || k == "write") {
            Format::Sqlite3
        } else {
            Format::Mcap
        };
        Ok((format, Self::parse(&text, path, format)?))
    }

    /// [`StorageConfig::load`] on text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path, format: Format) -> Result<StorageConfig, StorageConfigError> {
        let parse = |message: String| StorageConfigError::Parse { path: path.into(), message };
        if text.trim().is_empty() {
            return Ok(StorageConfig::default());
        }
        let doc: BTreeMap<String, Value> = serde_saphyr::from_str(text).map_err(|e| parse(e.to_string()))?;
        let key = |key: &str, reason: String| StorageConfigError::Key { path: path.into(), key: key.into(), reason };
        let mut out = StorageConfig::default();
        match format {
            Format::Sqlite3 => {
                for (k, v) in &doc {
                    let pragmas = match k.as_str() {
                        "write" => &mut out.write_pragmas,
                        "read" => &mut out.read_pragmas,
                        _ => return Err(key(k, "not a SQLite3 storage setting (write, read)".into())),
                    };
                    let Value::Map(section) = v else {
                        return Err(key(k, "expected a map holding `pragmas: [...]`".into()));
                    };
                    for (sk, sv) in section {
                        if sk != "pragmas" {
                            return Err(key(&format!("{k}.{sk}"), "not a SQLite3 setting (pragmas)".into()));
                        }
                        let Value::List(items) = sv else {
                            return Err(key(&format!("{k}.pragmas"), "expected a list of pragmas".into()));
                        };
                        for item in items {
                            let entry =
                                item.scalar().ok_or_else(|| key(&format!("{k}.pragmas"), "expected text".into()))?;
                            if entry.contains(['\'', ';', '"']) {
                                return Err(StorageConfigError::Pragma { path: path.into(), entry });
                            }
                            pragmas.push(entry);
                        }
                    }
                }
            }
            Format::Mcap => {
                for (k, v) in &doc {
                    let flag = || -> Result<Option<bool>, StorageConfigError> {
                        match v.scalar().as_deref() {
                            Some("true" | "True" | "TRUE") => Ok(Some(true)),
                            Some("false" | "False" | "FALSE") => Ok(Some(false)),
                            _ => Err(key(k, "expected true or false".into())),
                        }
                    };
                    let m = &mut out.mcap;
                    match k.as_str() {
                        "noChunkCRC" => m.no_chunk_crc = flag()?,
                        "noAttachmentCRC" => m.no_attachment_crc = flag()?,
                        "enableDataCRC" => m.enable_data_crc = flag()?,
                        "noSummaryCRC" => m.no_summary_crc = flag()?,
                        "noChunking" => m.no_chunking = flag()?,
                        "noMessageIndex" => m.no_message_index = flag()?,
                        "noSummary" => m.no_summary = flag()?,
                        "noRepeatedSchemas" => m.no_repeated_schemas = flag()?,
                        "noRepeatedChannels" => m.no_repeated_channels = flag()?,
                        "noAttachmentIndex" => m.no_attachment_index = flag()?,
                        "noMetadataIndex" => m.no_metadata_index = flag()?,
                        "noChunkIndex" => m.no_chunk_index = flag()?,
                        "noStatistics" => m.no_statistics = flag()?,
                        "noSummaryOffsets" => m.no_summary_offsets = flag()?,
                        // The Rust writer always keeps the compressed chunk: true is what it
                        // does; false (store a chunk raw when compression does not pay) it cannot.
                        "forceCompression" => {
                            if flag()? == Some(false) {
                                return Err(key(
                                    k,
                                    "rbag's MCAP writer always stores compressed chunks: only true can be honoured"
                                        .into(),
                                ));
                            }
                        }
                        "chunkSize" => {
                            m.chunk_size = Some(
                                v.scalar()
                                    .and_then(|s| s.parse::<u64>().ok())
                                    .ok_or_else(|| key(k, "expected a size in bytes".into()))?,
                            )
                        }
                        "compression" => {
                            m.compression = Some(match v.scalar().as_deref() {
                                Some("None" | "none" | "") => None,
                                Some("Lz4" | "lz4" | "LZ4") => Some(crate::Compression::Lz4),
                                Some("Zstd" | "zstd" | "ZSTD") => Some(crate::Compression::Zstd),
                                _ => return Err(key(k, "expected None, Lz4 or Zstd".into())),
                            })
                        }
                        "compressionLevel" => {
                            m.compression_level = Some(match v.scalar().as_deref() {
                                Some("Fastest") => McapLevel::Fastest,
                                Some("Fast") => McapLevel::Fast,
                                Some("Default") => McapLevel::Default,
                                Some("Slow") => McapLevel::Slow,
                                Some("Slowest") => McapLevel::Slowest,
                                _ => return Err(key(k, "expected Fastest, Fast, Default, Slow or Slowest".into())),
                            })
                        }
                        "profile" | "library" => {
                            return Err(key(k, "rosbag2's MCAP plugin sets it itself (not a config key)".into()))
                        }
                        _ => return Err(key(k, "not an McapWriterOptions key rosbag2 takes".into())),
                    }
                }
            }
            Format::Ros1 => {
                if let Some(k) = doc.keys().next() {
                    return Err(key(k, "a ROS 1 bag has no storage plugin settings".into()));
                }
            }
        }
        Ok(out)
    }
}

/// A YAML value, kept loose: the keys decide what a value must be.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
enum Value {
    Map(BTreeMap<String, Value>),
    List(Vec<Value>),
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    Null(()),
}

impl Value {
    fn scalar(&self) -> Option<String> {
        match self {
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Text(s) => Some(s.clone()),
            Value::Null(()) => Some(String::new()),
            Value::Map(_) | Value::List(_) => None,
        }
    }
}

/// Opens a bag for reading as [`crate::open_with`] does, with `config`'s reading settings: its
/// SQLite3 read pragmas run on every connection to a `.db3` file of the bag
/// ([`crate::ReadOptions::sqlite_read_pragmas`]); MCAP files have none.
pub fn open_for_reading(
    path: &Path,
    config: &StorageConfig,
    allow_remote_scan: bool,
) -> crate::Result<Box<dyn crate::StorageReader>> {
    let options = crate::ReadOptions {
        allow_remote_scan,
        sqlite_read_pragmas: config.read_pragmas.clone(),
        ..crate::ReadOptions::default()
    };
    crate::open_with(path, &options)
}

/// What a player does with a storage config file, in a line for the user, when it does less
/// than the file might suggest: SQLite3 read pragmas are run (see
/// [`crate::ReadOptions::sqlite_read_pragmas`]), so only a file without any gets a note, and
/// rosbag2's MCAP plugin has no settings for reading.
pub fn reading_note(format: Format, config: &StorageConfig) -> Option<String> {
    match format {
        Format::Sqlite3 if !config.read_pragmas.is_empty() => None,
        Format::Sqlite3 => {
            Some("note: --storage-config-file: no SQLite3 read pragmas; write pragmas apply to recording only".into())
        }
        _ => Some(
            "note: --storage-config-file: the MCAP plugin has no settings for reading (its keys apply to writing)"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, format: Format) -> Result<StorageConfig, StorageConfigError> {
        StorageConfig::parse(text, Path::new("cfg.yaml"), format)
    }

    #[test]
    fn sqlite_pragmas_for_writing_and_reading() {
        let c = parse("write:\n  pragmas: [\"journal_mode = WAL\", \"synchronous = FULL\"]\nread:\n  pragmas: [\"cache_size = 1000\"]\n", Format::Sqlite3).unwrap();
        assert_eq!(c.write_pragmas, ["journal_mode = WAL", "synchronous = FULL"]);
        assert_eq!(c.read_pragmas, ["cache_size = 1000"]);
    }

    #[test]
    fn a_pragma_with_a_quote_or_semicolon_is_refused_naming_the_file() {
        let e =
            parse("write:\n  pragmas: [\"journal_mode = WAL; DROP TABLE messages\"]\n", Format::Sqlite3).unwrap_err();
        assert!(matches!(e, StorageConfigError::Pragma { .. }), "{e}");
        assert!(e.to_string().contains("cfg.yaml"), "{e}");
        let e = parse("writ:\n  pragmas: []\n", Format::Sqlite3).unwrap_err();
        assert!(e.to_string().contains("\"writ\""), "{e}");
    }

    #[test]
    fn mcap_keys_are_read_and_unknown_or_unhonourable_ones_refused() {
        let c = parse(
            "noChunkCRC: true\nchunkSize: 4096\ncompression: Lz4\ncompressionLevel: Slowest\nnoSummaryOffsets: false\nforceCompression: true\n",
            Format::Mcap,
        )
        .unwrap();
        assert_eq!(c.mcap.no_chunk_crc, Some(true));
        assert_eq!(c.mcap.chunk_size, Some(4096));
        assert_eq!(c.mcap.compression, Some(Some(crate::Compression::Lz4)));
        assert_eq!(c.mcap.compression_level.map(|l| l.level(Some(crate::Compression::Lz4))), Some(12));
        assert_eq!(c.mcap.no_summary_offsets, Some(false));
        for bad in ["noChunkCrc: true\n", "profile: ros2\n", "forceCompression: false\n", "chunkSize: big\n"] {
            let e = parse(bad, Format::Mcap).unwrap_err();
            assert!(matches!(e, StorageConfigError::Key { .. }) && e.to_string().contains("cfg.yaml"), "{bad}: {e}");
        }
        let e = parse("noChunkCRC: [\n", Format::Mcap).unwrap_err();
        assert!(matches!(e, StorageConfigError::Parse { .. }), "{e}");
    }
}
