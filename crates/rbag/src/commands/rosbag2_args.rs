//! The rosbag2 output flags `ros2 bag record` and `ros2 bag convert` share: splitting,
//! rosbag2's zstd compression, storage presets and the metadata version to write.

use anyhow::{Context, Result};
use rbag_bag::units::parse_size;
use rbag_bag::{with_storage_options, CompressionMode, Format, Rosbag2Options, StorageOptions, WriteOptions};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Rosbag2Args {
    /// rosbag2 zstd compression of whole files or of each message, as `ros2 bag record
    /// --compression-mode`.
    #[arg(long, value_name = "none|file|message", default_value = "none", value_parser = parse_mode)]
    pub compression_mode: CompressionMode,
    /// Compression threads, off the writer's thread (0: one per core): closed files at once
    /// (file mode), or messages, stored in order (message mode; the output is the same for any
    /// count).
    #[arg(long, value_name = "N", default_value = "0")]
    pub compression_threads: usize,
    /// With --compression-mode file: closed files that may wait for compression; when one
    /// more comes the oldest waiting is dropped from the queue and stays uncompressed (0: no
    /// limit). Message mode drops no message: the writer waits when 64 are being compressed.
    #[arg(long, value_name = "N", default_value = "1")]
    pub compression_queue_size: usize,
    /// Nice value of the compression threads, as rosbag2 sets it: -20 (most CPU) to 19 (least);
    /// 0 leaves them at rbag's own. A value the system refuses (negative, unprivileged) is a
    /// warning, and recording goes on.
    #[arg(long, value_name = "NICE", default_value = "0", allow_hyphen_values = true,
          value_parser = clap::value_parser!(i32).range(-20..=19))]
    pub compression_threads_priority: i32,
    /// Start a new storage file once the current one reaches this size (rosbag2 directories;
    /// a ROS 1 output becomes NAME_0.bag, NAME_1.bag..., as `rosbag record --split`).
    #[arg(short = 'b', long, value_name = "BYTES", value_parser = parse_size)]
    pub max_bag_size: Option<u64>,
    /// Start a new storage file once the current one spans this many seconds.
    #[arg(short = 'd', long, value_name = "SECONDS")]
    pub max_bag_duration: Option<f64>,
    /// Keep only the newest N storage files, deleting older ones (circular logging).
    #[arg(long, value_name = "N")]
    pub max_bag_files: Option<usize>,
    /// rosbag2 storage preset: SQLite3 `resilient`; MCAP `fastwrite`, `zstd_fast`, `zstd_small`.
    #[arg(long, value_name = "PRESET")]
    pub storage_preset_profile: Option<String>,
    /// rosbag2's storage plugin config (YAML): SQLite3 `write: pragmas: ["journal_mode = WAL"]`,
    /// MCAP McapWriterOptions keys (noChunkCRC, chunkSize, compression, ...) over the preset. A
    /// key rbag cannot honour is an error.
    #[arg(long, value_name = "FILE")]
    pub storage_config_file: Option<std::path::PathBuf>,
    /// Write metadata.yaml (and QoS) as this distro's rosbag2 reads it: humble, iron, jazzy...
    #[arg(long, value_name = "DISTRO")]
    pub ros_distro: Option<String>,
    /// Write this metadata.yaml version (1-9) instead of the distro's.
    #[arg(long, value_name = "N")]
    pub metadata_version: Option<u32>,
    /// Write the last messages of TOPIC (up to DEPTH, default 1) again at the start of each
    /// split file, whatever its QoS; with no TOPIC, as --repeat-all-transient-local.
    #[arg(long, num_args = 0.., value_name = "TOPIC[=DEPTH]")]
    pub repeat_transient_local: Option<Vec<String>>,
    /// Write the last messages of every transient-local (ROS 2) or latched (ROS 1) topic, up
    /// to its QoS depth, again at the start of each split file.
    #[arg(long, visible_alias = "repeat-latched")]
    pub repeat_all_transient_local: bool,
}

/// `ROS_DISTRO`, when it names a ROS 2 distro whose rosbag2 rbag writes for (as a sourced
/// `setup.bash` sets it): rosbag2 output without `--ros-distro` is then written for it, and
/// said once. A ROS 1 or unknown value is ignored, with a note.
pub fn env_distro() -> Option<String> {
    use std::sync::atomic::{AtomicBool, Ordering};
    static SAID: AtomicBool = AtomicBool::new(false);
    let value = std::env::var("ROS_DISTRO").ok().map(|v| v.trim().to_lowercase()).filter(|v| !v.is_empty())?;
    let first = !SAID.swap(true, Ordering::Relaxed);
    match rbag_bag::rosbag2::version_for_distro(&value) {
        Some(version) => {
            if first {
                note!("note: writing rosbag2 metadata for {value} (version {version}), from ROS_DISTRO; --ros-distro overrides it");
            }
            Some(value)
        }
        None => {
            if first {
                note!(
                    "note: ROS_DISTRO={value} is not a ROS 2 distro rbag writes for; ignored (--ros-distro sets one)"
                );
            }
            None
        }
    }
}

fn parse_mode(s: &str) -> std::result::Result<CompressionMode, String> {
    match s.to_ascii_lowercase().as_str() {
        "none" | "" => Ok(CompressionMode::None),
        "file" => Ok(CompressionMode::File),
        "message" => Ok(CompressionMode::Message),
        other => Err(format!("unknown compression mode {other:?} (none, file, message)")),
    }
}

impl Rosbag2Args {
    /// Whether every transient-local / latched topic is repeated at each split.
    pub fn repeat_all(&self) -> bool {
        self.repeat_all_transient_local || self.repeat_transient_local.as_ref().is_some_and(|t| t.is_empty())
    }

    /// The topics named by `--repeat-transient-local TOPIC[=DEPTH]`, with their depth.
    pub fn repeat_topics(&self) -> Result<std::collections::BTreeMap<String, usize>> {
        let mut out = std::collections::BTreeMap::new();
        for spec in self.repeat_transient_local.iter().flatten() {
            let (topic, depth) = match spec.rsplit_once('=') {
                Some((t, d)) => {
                    let depth = d.parse::<usize>().ok().filter(|&d| d > 0).ok_or_else(|| {
                        anyhow::anyhow!("--repeat-transient-local {spec}: {d:?} is not a depth (1 or more)")
                    })?;
                    (t, depth)
                }
                None => (spec.as_str(), 1),
            };
            out.insert(topic.to_string(), depth);
        }
        Ok(out)
    }

    /// Whether the flags ask for something only a rosbag2 directory can do.
    pub fn splits_or_compresses(&self) -> bool {
        self.compression_mode != CompressionMode::None || self.max_bag_size.is_some() || self.max_bag_duration.is_some()
    }

    /// The rosbag2 settings the flags ask for; the preset goes through `format`'s storage
    /// options, as `-s NAME` would take it.
    pub fn options(&self, format: Format) -> Result<Rosbag2Options> {
        let mut o = Rosbag2Options {
            compression_mode: self.compression_mode,
            max_file_size: self.max_bag_size,
            max_files: self.max_bag_files,
            compression_threads: self.compression_threads,
            compression_queue_size: self.compression_queue_size,
            compression_threads_priority: self.compression_threads_priority,
            ..Rosbag2Options::default()
        };
        if let Some(secs) = self.max_bag_duration {
            o.set_max_file_duration_secs(secs).context("--max-bag-duration")?;
        }
        if let Some(distro) = &self.ros_distro {
            o.set_distro(distro).context("--ros-distro")?;
        } else if let Some(distro) = env_distro().filter(|_| format != Format::Ros1) {
            o.set_distro(&distro).context("ROS_DISTRO")?;
        }
        if let Some(v) = self.metadata_version {
            o.set_metadata_version(v).context("--metadata-version")?;
        }
        o.repeat_transient_local = self.repeat_all();
        o.repeat_topics = self.repeat_topics()?;
        if let Some(path) = &self.storage_config_file {
            o.storage_config = rbag_bag::storage_config::StorageConfig::load(path, format)?;
        }
        let Some(preset) = &self.storage_preset_profile else { return Ok(o) };
        let write = WriteOptions { rosbag2: o, ..WriteOptions::default() };
        let storage = StorageOptions::new().with("preset", preset.as_str());
        Ok(with_storage_options(format, &write, &storage).context("--storage-preset-profile")?.rosbag2)
    }
}
