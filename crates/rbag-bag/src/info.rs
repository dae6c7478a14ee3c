//! The summary `rbag info` prints, built from index data only.

use std::collections::BTreeMap;
use std::path::Path;

use rbag_storage::StorageReader;

use crate::Result;
use serde::Serialize;

/// What `rbag info` reports, in the units the JSON output uses.
#[derive(Debug, Clone, Serialize)]
pub struct BagInfo {
    /// The path the bag was opened from.
    pub path: String,
    /// The storage files (one, or a rosbag2 bag's splits).
    pub files: Vec<String>,
    /// The storage backend's name (`ros1`, `sqlite3`, `mcap`, ...).
    pub storage: &'static str,
    /// The format version (`2.0`, rosbag2 metadata version, MCAP profile version).
    pub version: String,
    /// False for a bag whose index was never written (its recorder did not close it); a
    /// reindex repairs it.
    pub indexed: bool,
    /// Bytes on disk, every file together.
    pub size_bytes: u64,
    /// Messages in the bag, declared connections and undeclared ones.
    pub message_count: u64,
    /// Log time of the first message, in ns since the epoch.
    pub start_ns: Option<u64>,
    /// Log time of the last message.
    pub end_ns: Option<u64>,
    /// `end_ns - start_ns`, 0 for an empty bag.
    pub duration_ns: u64,
    /// Chunks (ROS 1, MCAP); 0 for storages without them.
    pub chunk_count: u64,
    /// Chunk compression in use, per algorithm.
    pub compression: Vec<CompressionInfo>,
    /// Format facts: MCAP `profile`/`library`, rosbag2 `ros_distro`, `metadata_version`,
    /// `compression` (rosbag2 file or message mode).
    pub properties: BTreeMap<String, String>,
    /// Message types, sorted by name.
    pub types: Vec<TypeInfo>,
    /// Topics, sorted by name.
    pub topics: Vec<TopicInfo>,
    /// Messages on connections the bag never declares (counted in `message_count`): their
    /// topic and type are unknown.
    pub undeclared: Vec<UndeclaredInfo>,
}

/// Messages whose connection (ROS 1 connection, MCAP channel, rosbag2 topic id) the bag never
/// declares.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct UndeclaredInfo {
    /// The connection id the messages refer to.
    pub connection: u32,
    /// How many messages refer to it.
    pub message_count: u64,
}

/// Chunks compressed with one algorithm.
#[derive(Debug, Clone, Serialize)]
pub struct CompressionInfo {
    /// `none`, `lz4`, `bz2`, `zstd`.
    pub name: String,
    /// Chunks compressed so.
    pub chunks: u64,
    /// Their bytes on disk.
    pub compressed_bytes: u64,
    /// Their bytes once decompressed.
    pub uncompressed_bytes: u64,
}

/// A message type in the bag.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct TypeInfo {
    /// Its full name (`sensor_msgs/Imu`, `sensor_msgs/msg/Imu`).
    pub name: String,
    /// ROS 1 MD5 sum, when the bag records one.
    pub md5sum: Option<String>,
}

/// One topic: its type and counts over all its connections.
#[derive(Debug, Clone, Serialize)]
pub struct TopicInfo {
    /// The topic name.
    pub name: String,
    /// Its message type.
    #[serde(rename = "type")]
    pub message_type: String,
    /// Messages on it.
    pub message_count: u64,
    /// Connections (publishers, channels) carrying it.
    pub connections: u64,
    /// Serialization format: `ros1` or `cdr`.
    pub encoding: String,
    /// Bytes of payload on this topic, where the storage knows it without reading payloads.
    pub size_bytes: Option<u64>,
    /// 1 / median period between messages, as `rosbag info` computes it.
    pub frequency_hz: Option<f64>,
}

/// Summarises an open bag. Reads only index and summary data.
pub(crate) fn info(path: &Path, reader: &dyn StorageReader) -> Result<BagInfo> {
    let s = reader.info()?;
    let periods = reader.median_periods()?;
    let mut topics: BTreeMap<&str, TopicInfo> = BTreeMap::new();
    let mut types = std::collections::BTreeSet::new();
    for c in reader.connections() {
        let t = topics.entry(&c.topic).or_insert_with(|| TopicInfo {
            name: c.topic.clone(),
            message_type: c.message_type.clone(),
            message_count: 0,
            connections: 0,
            encoding: c.encoding.clone(),
            size_bytes: Some(0),
            frequency_hz: periods.get(&c.topic).map(|&p| 1e9 / p as f64),
        });
        t.connections += 1;
        let stats = s.connections.get(&c.id);
        t.message_count += stats.map_or(0, |x| x.message_count);
        t.size_bytes = t.size_bytes.zip(stats.and_then(|x| x.data_bytes)).map(|(a, b)| a + b);
        if !c.message_type.is_empty() {
            types.insert(TypeInfo {
                name: c.message_type.clone(),
                md5sum: c.metadata.get(rbag_storage::ros1::keys::MD5SUM).cloned(),
            });
        }
    }
    Ok(BagInfo {
        path: path.display().to_string(),
        files: s.files.iter().map(|f| f.display().to_string()).collect(),
        storage: s.format,
        version: s.version,
        indexed: s.indexed,
        size_bytes: s.size_bytes,
        message_count: s.message_count,
        start_ns: s.start_ns,
        end_ns: s.end_ns,
        duration_ns: match (s.start_ns, s.end_ns) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        },
        chunk_count: s.chunk_count,
        compression: s
            .compression
            .into_iter()
            .map(|(name, c)| CompressionInfo {
                name,
                chunks: c.chunks,
                compressed_bytes: c.compressed_bytes,
                uncompressed_bytes: c.uncompressed_bytes,
            })
            .collect(),
        properties: s.properties,
        types: types.into_iter().collect(),
        topics: topics.into_values().collect(),
        undeclared: s
            .undeclared
            .iter()
            .map(|(&connection, &message_count)| UndeclaredInfo { connection, message_count })
            .collect(),
    })
}
