//! `metadata.yaml`: read every version rosbag2 has written (1–9), write any of them.
//! Field history and shapes: `docs/rosbag2-formats.md` §1–2.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::qos::{self, QosField, QosProfile};
use crate::{Error, Result};

/// The newest version rbag reads and the one it writes by default.
pub const LATEST_VERSION: u32 = 9;

/// The file name inside a bag directory.
pub const FILE_NAME: &str = "metadata.yaml";

/// A bag's metadata, whatever version it came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BagMetadata {
    /// metadata.yaml format version (1 to 9).
    pub version: u32,
    /// `sqlite3` or `mcap`.
    pub storage_identifier: String,
    /// Nanoseconds from the first to the last message.
    pub duration_ns: u64,
    /// rosbag2 writes `i64::MAX` for an empty bag.
    pub starting_time_ns: u64,
    /// Messages in the whole bag.
    pub message_count: u64,
    /// Every topic with its message count.
    pub topics: Vec<TopicInfo>,
    /// `zstd` or empty.
    pub compression_format: String,
    /// `FILE`, `MESSAGE` or empty (read case-insensitively).
    pub compression_mode: String,
    /// Bare file names, as stored on disk (with `.zstd` in file compression mode).
    pub relative_file_paths: Vec<String>,
    /// Per storage file: start, duration and count (version 5 and later).
    pub files: Vec<FileInfo>,
    /// `custom_data` (version 6 and later).
    pub custom_data: BTreeMap<String, String>,
    /// `ros_distro` (version 7 and later).
    pub ros_distro: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
/// One entry of `topics_with_message_count`.
pub struct TopicInfo {
    /// Topic name.
    pub name: String,
    /// Message type (`std_msgs/msg/String`).
    pub message_type: String,
    /// Serialization format (`cdr`).
    pub serialization_format: String,
    /// The offered QoS profiles.
    pub qos: Vec<QosProfile>,
    /// RIHS01 type hash (version 8 and later), or empty.
    pub type_description_hash: String,
    /// Messages on the topic.
    pub message_count: u64,
}

impl TopicInfo {
    /// The entry metadata.yaml lists for a connection's topic (count filled in later).
    pub fn from_connection(c: &crate::Connection) -> Self {
        TopicInfo {
            name: c.topic.clone(),
            message_type: c.message_type.clone(),
            serialization_format: c.encoding.clone(),
            qos: c.metadata.get(super::QOS_KEY).and_then(|q| qos::parse(q).ok()).unwrap_or_default(),
            type_description_hash: c.metadata.get(super::TYPE_HASH_KEY).cloned().unwrap_or_default(),
            message_count: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
/// One entry of `files`.
pub struct FileInfo {
    /// File name without the `.zstd` of file compression.
    pub path: String,
    /// Log time of its first message.
    pub starting_time_ns: u64,
    /// Nanoseconds from its first to its last message.
    pub duration_ns: u64,
    /// Messages it holds.
    pub message_count: u64,
}

#[derive(Deserialize)]
struct Root {
    rosbag2_bagfile_information: Raw,
}

#[derive(Deserialize)]
struct Raw {
    version: u32,
    #[serde(default)]
    storage_identifier: String,
    #[serde(default)]
    duration: Option<Nanos>,
    #[serde(default)]
    starting_time: Option<Since>,
    #[serde(default)]
    message_count: u64,
    #[serde(default)]
    topics_with_message_count: Option<Vec<RawTopicCount>>,
    #[serde(default)]
    compression_format: Option<String>,
    #[serde(default)]
    compression_mode: Option<String>,
    #[serde(default)]
    relative_file_paths: Option<Vec<String>>,
    #[serde(default)]
    files: Option<Vec<RawFile>>,
    #[serde(default)]
    custom_data: Option<BTreeMap<String, String>>,
    #[serde(default)]
    ros_distro: Option<String>,
}

#[derive(Deserialize)]
struct Nanos {
    nanoseconds: u64,
}

#[derive(Deserialize)]
struct Since {
    nanoseconds_since_epoch: i64,
}

#[derive(Deserialize)]
struct RawTopicCount {
    topic_metadata: RawTopic,
    #[serde(default)]
    message_count: u64,
}

#[derive(Deserialize)]
struct RawTopic {
    name: String,
    #[serde(rename = "type")]
    message_type: String,
    #[serde(default)]
    serialization_format: String,
    #[serde(default)]
    offered_qos_profiles: Option<QosField>,
    #[serde(default)]
    type_description_hash: Option<String>,
}

#[derive(Deserialize)]
struct RawFile {
    path: String,
    starting_time: Since,
    duration: Nanos,
    #[serde(default)]
    message_count: u64,
}

fn since(t: Option<Since>) -> u64 {
    t.map_or(0, |s| u64::try_from(s.nanoseconds_since_epoch).unwrap_or(0))
}

/// Basename of a path rosbag2 may have written with the bag directory in front (v ≤ 3).
fn base(p: &str) -> String {
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// The largest metadata.yaml rbag reads: real ones are kilobytes.
pub const MAX_FILE_LEN: u64 = 16 << 20;

impl BagMetadata {
    /// Parses metadata.yaml text, or the unwrapped copy storage files hold; `path` names the
    /// file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let bad = |reason: String| Error::InFile { path: path.into(), inner: Box::new(Error::Invalid(reason)) };
        // metadata.yaml has a root key; the copy inside storage files (SQLite `metadata` table,
        // MCAP `rosbag2` record) does not.
        let raw = match serde_saphyr::from_str::<Root>(text) {
            Ok(root) => root.rosbag2_bagfile_information,
            Err(e) => {
                serde_saphyr::from_str::<Raw>(text).map_err(|_| bad(format!("not a rosbag2 metadata file: {e}")))?
            }
        };
        if !(1..=LATEST_VERSION).contains(&raw.version) {
            return Err(bad(format!(
                "unknown metadata version {} (rbag reads versions 1 to {LATEST_VERSION})",
                raw.version
            )));
        }
        let mut topics = Vec::new();
        for t in raw.topics_with_message_count.unwrap_or_default() {
            let m = t.topic_metadata;
            let qos = match m.offered_qos_profiles {
                Some(q) => q.into_profiles().map_err(|e| bad(format!("topic {}: {e}", m.name)))?,
                None => Vec::new(),
            };
            topics.push(TopicInfo {
                name: m.name,
                message_type: m.message_type,
                serialization_format: m.serialization_format,
                qos,
                type_description_hash: m.type_description_hash.unwrap_or_default(),
                message_count: t.message_count,
            });
        }
        let relative_file_paths: Vec<String> =
            raw.relative_file_paths.unwrap_or_default().iter().map(|p| base(p)).collect();
        // Read twice, a file's messages would be read twice (and a long list of one small file
        // costs what the list says).
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = relative_file_paths.iter().find(|p| !seen.insert(p.as_str())) {
            return Err(bad(format!("relative_file_paths lists {dup} more than once")));
        }
        Ok(BagMetadata {
            version: raw.version,
            storage_identifier: raw.storage_identifier,
            duration_ns: raw.duration.map_or(0, |d| d.nanoseconds),
            starting_time_ns: since(raw.starting_time),
            message_count: raw.message_count,
            topics,
            compression_format: raw.compression_format.unwrap_or_default(),
            compression_mode: raw.compression_mode.unwrap_or_default().to_ascii_uppercase(),
            relative_file_paths,
            files: raw
                .files
                .unwrap_or_default()
                .into_iter()
                .map(|f| FileInfo {
                    path: base(&f.path),
                    starting_time_ns: since(Some(f.starting_time)),
                    duration_ns: f.duration.nanoseconds,
                    message_count: f.message_count,
                })
                .collect(),
            custom_data: raw.custom_data.unwrap_or_default(),
            ros_distro: raw.ros_distro.unwrap_or_default(),
        })
    }

    /// Reads `<dir>/metadata.yaml`: only a regular file (a link to one is fine), and at most
    /// [`MAX_FILE_LEN`] bytes of it.
    pub fn read(path: &Path) -> Result<Self> {
        use std::io::Read;
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let in_file = |inner: Error| Error::InFile { path: path.into(), inner: Box::new(inner) };
        // Non-blocking, so that opening a FIFO does not wait for a writer: it is refused below.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        let kind = meta.file_type();
        if !kind.is_file() {
            let what = if kind.is_dir() {
                "a directory"
            } else if kind.is_fifo() {
                "a FIFO"
            } else if kind.is_char_device() || kind.is_block_device() {
                "a device"
            } else if kind.is_socket() {
                "a socket"
            } else {
                "not a file"
            };
            return Err(in_file(Error::Invalid(format!("{FILE_NAME} is {what}, not a regular file"))));
        }
        // Real ones are kilobytes; more is not metadata and is not loaded.
        let mut text = Vec::new();
        (&file).take(MAX_FILE_LEN + 1).read_to_end(&mut text).map_err(|e| Error::io(path, e))?;
        if text.len() as u64 > MAX_FILE_LEN {
            return Err(in_file(Error::TooLarge {
                offset: 0,
                what: "metadata.yaml",
                len: meta.len().max(text.len() as u64),
                limit: MAX_FILE_LEN,
            }));
        }
        let text = String::from_utf8(text).map_err(|e| {
            in_file(Error::Invalid(format!("{FILE_NAME} is not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))
        })?;
        Self::parse(&text, path)
    }

    /// Whether rosbag2 compressed each message (`MESSAGE`) or each file (`FILE`).
    pub fn compression_mode(&self) -> crate::CompressionMode {
        match self.compression_mode.as_str() {
            "FILE" => crate::CompressionMode::File,
            "MESSAGE" => crate::CompressionMode::Message,
            _ => crate::CompressionMode::None,
        }
    }

    /// The YAML text for `version` (as `self.version` says), keys in the order rosbag2 emits.
    /// `wrapped` adds the `rosbag2_bagfile_information:` root of metadata.yaml; the copy stored
    /// inside storage files has none.
    pub fn to_yaml(&self, wrapped: bool) -> String {
        let v = self.version;
        let i = if wrapped { "  " } else { "" };
        let mut s = String::new();
        if wrapped {
            s.push_str("rosbag2_bagfile_information:\n");
        }
        push(&mut s, i, format!("version: {v}"));
        push(&mut s, i, format!("storage_identifier: {}", quote(&self.storage_identifier)));
        push(&mut s, i, "duration:");
        push(&mut s, i, format!("  nanoseconds: {}", self.duration_ns));
        push(&mut s, i, "starting_time:");
        push(&mut s, i, format!("  nanoseconds_since_epoch: {}", self.starting_time_ns));
        push(&mut s, i, format!("message_count: {}", self.message_count));
        if self.topics.is_empty() {
            push(&mut s, i, "topics_with_message_count: []");
        } else {
            push(&mut s, i, "topics_with_message_count:");
        }
        for t in &self.topics {
            push(&mut s, i, "  - topic_metadata:");
            push(&mut s, i, format!("      name: {}", quote(&t.name)));
            push(&mut s, i, format!("      type: {}", quote(&t.message_type)));
            push(&mut s, i, format!("      serialization_format: {}", quote(&t.serialization_format)));
            if v >= 4 {
                let value = qos::metadata_value(&t.qos, v, i.len() + 8);
                s.push_str(&format!("{i}      offered_qos_profiles:{value}"));
            }
            if v >= 7 {
                push(&mut s, i, format!("      type_description_hash: {}", quote(&t.type_description_hash)));
            }
            push(&mut s, i, format!("    message_count: {}", t.message_count));
        }
        if v >= 3 {
            push(&mut s, i, format!("compression_format: {}", quote(&self.compression_format)));
            push(&mut s, i, format!("compression_mode: {}", quote(&self.compression_mode)));
        }
        if self.relative_file_paths.is_empty() {
            push(&mut s, i, "relative_file_paths: []");
        } else {
            push(&mut s, i, "relative_file_paths:");
            for p in &self.relative_file_paths {
                push(&mut s, i, format!("  - {}", quote(p)));
            }
        }
        if v >= 5 {
            if self.files.is_empty() {
                push(&mut s, i, "files: []");
            } else {
                push(&mut s, i, "files:");
            }
            for f in &self.files {
                push(&mut s, i, format!("  - path: {}", quote(&f.path)));
                push(&mut s, i, "    starting_time:");
                push(&mut s, i, format!("      nanoseconds_since_epoch: {}", f.starting_time_ns));
                push(&mut s, i, "    duration:");
                push(&mut s, i, format!("      nanoseconds: {}", f.duration_ns));
                push(&mut s, i, format!("    message_count: {}", f.message_count));
            }
        }
        if v >= 6 {
            if self.custom_data.is_empty() {
                push(&mut s, i, "custom_data: ~");
            } else {
                push(&mut s, i, "custom_data:");
                for (k, val) in &self.custom_data {
                    push(&mut s, i, format!("  {}: {}", quote(k), quote(val)));
                }
            }
        }
        if v >= 8 {
            push(&mut s, i, format!("ros_distro: {}", quote(&self.ros_distro)));
        }
        s
    }

    /// Writes metadata.yaml atomically (temp file + rename), so a crash never leaves half a file.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(FILE_NAME);
        let tmp = dir.join(".metadata.yaml.tmp");
        std::fs::write(&tmp, self.to_yaml(true)).map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
    }
}

fn push(s: &mut String, indent: &str, text: impl AsRef<str>) {
    s.push_str(indent);
    s.push_str(text.as_ref());
    s.push('\n');
}

/// A YAML scalar for `s`: plain where that reads back as the same string, else double-quoted.
pub(crate) fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "_/.-+".contains(c))
        && !s.starts_with(['-', '.', '+'])
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n" | "~" | ".nan" | ".inf"
        )
        && s.parse::<f64>().is_err();
    if plain {
        return s.to_string();
    }
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            c if c.is_control() => q.push_str(&format!("\\u{:04x}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// The metadata version a distro's rosbag2 writes, for `--ros-distro`: what its reader accepts.
pub fn version_for_distro(distro: &str) -> Option<u32> {
    Some(match distro {
        "foxy" | "galactic" => 4,
        "humble" => 5,
        "iron" => 8,
        "jazzy" | "kilted" | "lyrical" | "rolling" => 9,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(version: u32) -> BagMetadata {
        let q = qos::parse("- history: 1\n  depth: 10\n  reliability: 1\n  durability: 1\n  deadline:\n    sec: 0\n    nsec: 0\n  lifespan:\n    sec: 0\n    nsec: 0\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n  avoid_ros_namespace_conventions: false").unwrap();
        BagMetadata {
            version,
            storage_identifier: "mcap".into(),
            duration_ns: 5,
            starting_time_ns: 1_700_000_000_000_000_000,
            message_count: 3,
            topics: vec![TopicInfo {
                name: "/a b".into(),
                message_type: "std_msgs/msg/String".into(),
                serialization_format: "cdr".into(),
                qos: q,
                type_description_hash: "RIHS01_00".into(),
                message_count: 3,
            }],
            compression_format: "zstd".into(),
            compression_mode: "FILE".into(),
            relative_file_paths: vec!["x_0.mcap.zstd".into()],
            files: vec![FileInfo {
                path: "x_0.mcap".into(),
                starting_time_ns: 1_700_000_000_000_000_000,
                duration_ns: 5,
                message_count: 3,
            }],
            custom_data: BTreeMap::from([("k".into(), "v: 1".into())]),
            ros_distro: "jazzy".into(),
        }
    }

    #[test]
    fn every_version_round_trips_the_keys_it_has() {
        for v in 1..=9 {
            let m = sample(v);
            let back = BagMetadata::parse(&m.to_yaml(true), Path::new("m.yaml")).unwrap();
            assert_eq!(back.version, v);
            assert_eq!(back.topics[0].name, "/a b");
            assert_eq!(back.topics[0].qos, if v >= 4 { m.topics[0].qos.clone() } else { vec![] }, "v{v}");
            assert_eq!(back.files, if v >= 5 { m.files.clone() } else { vec![] }, "v{v}");
            assert_eq!(back.custom_data, if v >= 6 { m.custom_data.clone() } else { BTreeMap::new() }, "v{v}");
            assert_eq!(back.ros_distro, if v >= 8 { "jazzy" } else { "" }, "v{v}");
            assert_eq!(back.relative_file_paths, m.relative_file_paths);
        }
        assert!(sample(9).to_yaml(true).contains("reliability: reliable"));
        assert!(sample(8).to_yaml(true).contains("offered_qos_profiles: \"- history: 1\\n"));
    }

    #[test]
    fn unknown_version_is_refused_by_name() {
        let e = BagMetadata::parse("rosbag2_bagfile_information:\n  version: 10\n", Path::new("/d/metadata.yaml"))
            .unwrap_err();
        assert!(
            e.to_string().contains("/d/metadata.yaml") && e.to_string().contains("unknown metadata version 10"),
            "{e}"
        );
    }

    #[test]
    fn corpus_metadata_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/ros2");
        for storage in ["sqlite3", "mcap"] {
            let Ok(dirs) = std::fs::read_dir(root.join(storage)) else { continue };
            for d in dirs.flatten() {
                let m = BagMetadata::read(&d.path().join(FILE_NAME)).unwrap();
                assert!(m.version >= 4 && !m.relative_file_paths.is_empty(), "{:?}", d.path());
            }
        }
    }
}
