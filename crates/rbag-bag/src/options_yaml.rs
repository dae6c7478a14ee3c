//! rosbag2's input- and output-options YAML (`ros2 bag convert --input-options
//! --output-options`): several outputs, each with its own topics, time window, storage,
//! splitting and compression, written in one pass over the inputs.
//!
//! The keys are rosbag2's (`StorageOptions` + `RecordOptions`). The compression workers'
//! keys (`compression_threads`, `compression_queue_size`, `compression_threads_priority`) apply
//! to the output, as rosbag2's writer takes them. Keys that only make sense while recording
//! (`include_unpublished_topics`, ...) are accepted and have no effect; a key rosbag2 does not have is an error naming it, so a typo does not
//! silently write everything. Where rosbag2 and rbag differ, the YAML follows rosbag2:
//! `end_time_ns` is inclusive (rbag's `--end` is exclusive), and an output with no topic
//! selection (`all_topics`, `topics`, `regex`, ...) is empty, as rosbag2 writes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex::Regex;
use serde::Deserialize;

use crate::{CompressionMode, ConvertOptions, Error, Result};

/// One bag of `input_bags:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputBag {
    /// The bag.
    pub uri: PathBuf,
    /// The storage named for it (rbag detects it; a mismatch is not an error).
    pub storage_id: Option<String>,
    /// Only messages at or after this time (ns).
    pub start_time_ns: Option<u64>,
    /// Only messages at or before this time (ns, inclusive as in rosbag2).
    pub end_time_ns: Option<u64>,
}

/// One bag of `output_bags:`, with what rbag needs to write it. The caller adds what the
/// YAML cannot say (where types come from, whether to overwrite).
pub struct OutputBag {
    /// The bag to write.
    pub uri: PathBuf,
    /// The storage (`sqlite3`, `mcap`, ...); `None`: from the uri, as for `rbag convert -o`.
    pub storage_id: Option<String>,
    /// `storage_preset_profile`, for the storage's `preset` option.
    pub preset: Option<String>,
    /// Selection, window, splitting and compression.
    pub options: ConvertOptions,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InputFile {
    input_bags: Vec<RawInput>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInput {
    uri: PathBuf,
    #[serde(default)]
    storage_id: String,
    start_time_ns: Option<u64>,
    end_time_ns: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputFile {
    output_bags: Vec<RawOutput>,
}

/// rosbag2's `StorageOptions` + `RecordOptions` keys; the recording-only ones are read so
/// that they are accepted, and not used.
#[allow(dead_code)]
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawOutput {
    uri: PathBuf,
    storage_id: String,
    max_bagfile_size: u64,
    max_bagfile_duration: u64,
    max_cache_size: u64,
    storage_preset_profile: String,
    storage_config_uri: String,
    start_time_ns: Option<u64>,
    end_time_ns: Option<u64>,
    all_topics: bool,
    /// rosbag2 before Jazzy: `all` selected topics and services.
    all: bool,
    topics: Vec<String>,
    topic_types: Vec<String>,
    all_services: bool,
    services: Vec<String>,
    all_actions: bool,
    actions: Vec<String>,
    input_serialization_format: String,
    output_serialization_format: String,
    rmw_serialization_format: String,
    regex: String,
    exclude_regex: String,
    exclude: String,
    exclude_topics: Vec<String>,
    exclude_topic_types: Vec<String>,
    exclude_services: Vec<String>,
    exclude_actions: Vec<String>,
    compression_mode: String,
    compression_format: String,
    compression_queue_size: Option<u64>,
    compression_threads: Option<u64>,
    compression_threads_priority: Option<i64>,
    include_hidden_topics: bool,
    include_unpublished_topics: bool,
    ignore_leaf_topics: bool,
    node_prefix: String,
    snapshot_mode: bool,
    snapshot_duration: serde::de::IgnoredAny,
    custom_data: BTreeMap<String, String>,
}

/// The topic rosbag2 records a service's events on.
fn service_topic(service: &str) -> String {
    format!("{}/_service_event", service.trim_end_matches('/'))
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::Options { path: path.into(), reason: e.to_string() })
}

/// Reads an input-options file (`input_bags:`).
pub fn read_inputs(path: &Path) -> Result<Vec<InputBag>> {
    let file: InputFile = serde_saphyr::from_str(&read(path)?)
        .map_err(|e| Error::Options { path: path.into(), reason: e.to_string() })?;
    Ok(file
        .input_bags
        .into_iter()
        .map(|r| InputBag {
            uri: r.uri,
            storage_id: (!r.storage_id.is_empty()).then_some(r.storage_id),
            start_time_ns: r.start_time_ns,
            end_time_ns: r.end_time_ns,
        })
        .collect())
}

/// Whether `path` is an output-options file: a YAML file whose top level has `output_bags`.
/// `ros2 bag convert -o X.yaml` habits rely on this: such a file is read, never written.
pub fn is_output_options(path: &Path) -> bool {
    path.is_file()
        && std::fs::read_to_string(path).is_ok_and(|t| {
            serde_saphyr::from_str::<BTreeMap<String, serde::de::IgnoredAny>>(&t)
                .is_ok_and(|m| m.contains_key("output_bags"))
        })
}

/// Reads an output-options file (`output_bags:`).
pub fn read_outputs(path: &Path) -> Result<Vec<OutputBag>> {
    let bad = |reason: String| Error::Options { path: path.into(), reason };
    let file: OutputFile = serde_saphyr::from_str(&read(path)?).map_err(|e| bad(e.to_string()))?;
    let mut out = Vec::new();
    for (n, raw) in file.output_bags.into_iter().enumerate() {
        let at = |what: String| bad(format!("output_bags[{n}]: {what}"));
        if raw.uri.as_os_str().is_empty() {
            return Err(at("uri is required".into()));
        }
        if !raw.storage_config_uri.is_empty() {
            return Err(at("storage_config_uri is not supported; use storage_preset_profile".into()));
        }
        out.push(output(raw).map_err(at)?);
    }
    Ok(out)
}

fn regex(text: &str, key: &str) -> std::result::Result<Option<Regex>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    Regex::new(text).map(Some).map_err(|e| format!("{key}: {e}"))
}

fn output(raw: RawOutput) -> std::result::Result<OutputBag, String> {
    let mut options = ConvertOptions::default();
    let all_topics = raw.all_topics || raw.all;
    let all_services = raw.all_services || raw.all;
    let f = &mut options.filter;
    f.start = raw.start_time_ns;
    // rosbag2's end is inclusive; rbag's is exclusive.
    f.end = raw.end_time_ns.map(|e| e.saturating_add(1));
    f.topics = raw.topics.clone();
    f.topics.extend(raw.services.iter().map(|s| service_topic(s)));
    f.exclude_topics = raw.exclude_topics.clone();
    f.exclude_topics.extend(raw.exclude_services.iter().map(|s| service_topic(s)));
    let include = regex(&raw.regex, "regex")?;
    let exclude = match (raw.exclude_regex.as_str(), raw.exclude.as_str()) {
        ("", e) => regex(e, "exclude")?,
        (e, _) => regex(e, "exclude_regex")?,
    };
    f.exclude_regex = exclude;
    // All topics, all services, or both: a pattern does it, keeping the exclusions.
    f.regex = match (all_topics, all_services) {
        (true, true) => Some(Regex::new("").expect("empty pattern")),
        (true, false) => {
            f.exclude_regex = Some(match &f.exclude_regex {
                Some(r) => Regex::new(&format!("(?:{})|/_service_event$", r.as_str())).map_err(|e| e.to_string())?,
                None => Regex::new("/_service_event$").expect("valid"),
            });
            Some(Regex::new("").expect("empty pattern"))
        }
        (false, true) => match include {
            Some(r) => Some(Regex::new(&format!("(?:{})|/_service_event$", r.as_str())).map_err(|e| e.to_string())?),
            None => Some(Regex::new("/_service_event$").expect("valid")),
        },
        (false, false) => include,
    };
    if f.topics.is_empty() && f.regex.is_none() {
        if raw.topic_types.is_empty() {
            // rosbag2 writes an empty bag when nothing is selected.
            f.topics = vec![String::new()];
        } else {
            // Only types: every topic of those types.
            f.regex = Some(Regex::new("").expect("empty pattern"));
        }
    }
    options.topic_types = raw.topic_types;
    options.exclude_topic_types = raw.exclude_topic_types;
    let w = &mut options.write;
    if raw.max_bagfile_size > 0 {
        w.rosbag2.max_file_size = Some(raw.max_bagfile_size);
    }
    if raw.max_bagfile_duration > 0 {
        w.rosbag2.max_file_duration_ns = Some(raw.max_bagfile_duration.saturating_mul(1_000_000_000));
    }
    w.rosbag2.custom_data = raw.custom_data;
    match (raw.compression_mode.to_ascii_lowercase().as_str(), raw.compression_format.as_str()) {
        ("" | "none", _) => {}
        (mode, "zstd" | "") => {
            w.rosbag2.compression_mode = match mode {
                "file" => CompressionMode::File,
                "message" => CompressionMode::Message,
                other => return Err(format!("compression_mode {other:?} (none, file, message)")),
            }
        }
        (_, other) => return Err(format!("compression_format {other:?}: rosbag2 compresses with zstd")),
    }
    if let Some(n) = raw.compression_threads {
        w.rosbag2.compression_threads = usize::try_from(n).map_err(|_| format!("compression_threads {n}: too many"))?;
    }
    if let Some(n) = raw.compression_queue_size {
        w.rosbag2.compression_queue_size =
            usize::try_from(n).map_err(|_| format!("compression_queue_size {n}: too large"))?;
    }
    if let Some(nice) = raw.compression_threads_priority {
        w.rosbag2.compression_threads_priority = i32::try_from(nice)
            .ok()
            .filter(|n| (-20..=19).contains(n))
            .ok_or_else(|| format!("compression_threads_priority {nice}: a nice value is -20 to 19"))?;
    }
    let format = raw.output_serialization_format;
    if !format.is_empty() {
        options.encoding = Some(format);
    }
    Ok(OutputBag {
        uri: raw.uri,
        storage_id: (!raw.storage_id.is_empty()).then_some(raw.storage_id),
        preset: (!raw.storage_preset_profile.is_empty()).then_some(raw.storage_preset_profile),
        options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_output(yaml: &str) -> std::result::Result<OutputBag, String> {
        let file: OutputFile = serde_saphyr::from_str(yaml).map_err(|e| e.to_string())?;
        output(file.output_bags.into_iter().next().expect("one output"))
    }

    #[test]
    fn compression_worker_keys_reach_the_writer() {
        let yaml = "output_bags:\n- uri: out\n  all_topics: true\n  compression_mode: message\n  \
                    compression_threads: 3\n  compression_queue_size: 0\n  compression_threads_priority: 7\n";
        let r2 = first_output(yaml).unwrap().options.write.rosbag2;
        assert_eq!(r2.compression_mode, CompressionMode::Message);
        assert_eq!((r2.compression_threads, r2.compression_queue_size, r2.compression_threads_priority), (3, 0, 7));
        // Absent keys keep rbag's defaults (rosbag2's: queue size 1).
        let r2 = first_output("output_bags:\n- uri: out\n  all_topics: true\n").unwrap().options.write.rosbag2;
        assert_eq!((r2.compression_threads, r2.compression_queue_size, r2.compression_threads_priority), (0, 1, 0));
        let e = first_output("output_bags:\n- uri: out\n  compression_threads_priority: -21\n").err().unwrap();
        assert!(e.contains("compression_threads_priority -21"), "{e}");
    }
}
