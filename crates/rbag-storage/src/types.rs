//! The data the storage API moves: connections, messages, summaries and options.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// One publisher-topic pairing. A topic may have several (ROS 1 connections, MCAP channels),
/// but all of a topic's connections share one message encoding.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Connection {
    /// Id unique within the bag; messages refer to it.
    pub id: u32,
    /// Topic name.
    pub topic: String,
    /// Message type as the bag names it (`std_msgs/String`, `std_msgs/msg/String`).
    pub message_type: String,
    /// Serialization of the payload: `ros1` or `cdr`.
    pub encoding: String,
    /// Definition text, opaque here.
    pub definition: String,
    /// Dialect of `definition`: `ros1msg`, `ros2msg`, `ros2idl`, or empty when unknown.
    pub definition_encoding: String,
    /// Middleware-specific fields (ROS 1 `md5sum`, `callerid`, `latching`; ROS 2
    /// `offered_qos_profiles` as rosbag2 stores it in the file, `type_description_hash`), kept as text so storage stays ROS-agnostic.
    pub metadata: BTreeMap<String, String>,
}

/// Topics of the connections a lenient reader makes up for messages whose connection the bag
/// never declares start with this, followed by the connection's id.
pub const UNDECLARED_TOPIC_PREFIX: &str = "/rbag/undeclared/";

impl Connection {
    /// The stand-in a lenient reader yields messages on when their connection (ROS 1
    /// connection, MCAP channel, rosbag2 topic id) is never declared: no type or definition,
    /// so its messages can only be copied raw.
    pub fn undeclared(id: u32, encoding: &str) -> Self {
        Connection {
            id,
            topic: format!("{UNDECLARED_TOPIC_PREFIX}{id}"),
            encoding: encoding.into(),
            ..Connection::default()
        }
    }
}

/// How a reader treats damage it can read past, and storage settings for reading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Messages on a connection the bag never declares are read on a stand-in connection
    /// ([`Connection::undeclared`]) and counted in the reader's warnings, instead of failing
    /// the read with [`crate::Error::UndeclaredConnection`].
    pub lenient: bool,
    /// A remote file that can only be read by scanning it (an MCAP file without a summary) is
    /// downloaded whole, instead of refused with [`crate::Error::Remote`].
    pub allow_remote_scan: bool,
    /// Threads that decompress chunks ahead of the one being read (0: one per core; 1: the
    /// reading thread decompresses each chunk when it gets to it). What they hold is paid for
    /// from [`crate::budget`].
    pub threads: usize,
    /// SQLite3 pragmas run (as `PRAGMA <entry>;`) on every connection that reads a `.db3`
    /// file, after rbag's own: rosbag2's `read: pragmas:` of `--storage-config-file`. With
    /// any, files are opened read-only but not `immutable`, as rosbag2 opens them, so that
    /// locking pragmas act. An entry holding `'`, `;` or `"` is refused, as rosbag2 refuses it.
    pub sqlite_read_pragmas: Vec<String>,
}

/// One stored message. `data` shares the buffer it was read into, so handing messages out does
/// not copy payloads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Id of the [`Connection`] it arrived on.
    pub connection: u32,
    /// Receive time, nanoseconds since the epoch.
    pub log_time: u64,
    /// Send time; formats that store one time (ROS 1) repeat `log_time`.
    pub publish_time: u64,
    /// The serialized message, never interpreted here.
    pub data: bytes::Bytes,
}

/// Per-connection numbers from the index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConnectionStats {
    /// Messages on the connection.
    pub message_count: u64,
    /// Sum of payload sizes, where the storage knows it without reading payloads.
    pub data_bytes: Option<u64>,
    /// Where `data_bytes` is unknown: the sum estimated from chunk sizes and per-chunk counts
    /// in the summary (ROS 1 and MCAP; see `rbag du` for the per-message figure).
    pub estimated_bytes: Option<u64>,
}

/// Chunk compression of a storage file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    #[default]
    /// Uncompressed.
    None,
    /// LZ4 (frame format).
    Lz4,
    /// bzip2 (ROS 1 only).
    Bz2,
    /// Zstandard.
    Zstd,
}

impl serde::Serialize for Compression {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl Compression {
    /// Every compression rbag writes, besides none.
    pub const ALL: [Compression; 3] = [Compression::Lz4, Compression::Bz2, Compression::Zstd];

    /// Where it applies, as a listing says it.
    pub fn applies_to(self) -> &'static str {
        match self {
            Compression::None => "everywhere",
            Compression::Lz4 => "ROS 1 chunks, MCAP chunks",
            Compression::Bz2 => "ROS 1 chunks",
            Compression::Zstd => "MCAP chunks; rosbag2 file and message modes",
        }
    }

    /// The name the formats use on disk.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Bz2 => "bz2",
            Compression::Zstd => "zstd",
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Compression::None),
            "lz4" => Ok(Compression::Lz4),
            "bz2" => Ok(Compression::Bz2),
            "zstd" => Ok(Compression::Zstd),
            other => Err(format!("unknown compression {other:?} (none, lz4, bz2, zstd)")),
        }
    }
}

/// A summary read from index data only.
#[derive(Debug, Clone, Default)]
pub struct StorageInfo {
    /// Storage format name: `ros1`, `sqlite3`, `mcap`.
    pub format: &'static str,
    /// Format version, e.g. `2.0` for ROS 1 bags.
    pub version: String,
    /// The storage files the bag is made of.
    pub files: Vec<PathBuf>,
    /// Total size of those files.
    pub size_bytes: u64,
    /// False when the bag lost its index and was scanned; `reindex` repairs it.
    pub indexed: bool,
    /// Every message, declared connections or not.
    pub message_count: u64,
    /// First and last log time; `None` for an empty bag.
    pub start_ns: Option<u64>,
    /// Last log time; `None` for an empty bag.
    pub end_ns: Option<u64>,
    /// Chunks in the files (0 for storages without chunks).
    pub chunk_count: u64,
    /// Chunks per compression (e.g. `lz4` → 3), with compressed and uncompressed bytes.
    pub compression: BTreeMap<String, CompressionStats>,
    /// Keyed by connection id.
    pub connections: BTreeMap<u32, ConnectionStats>,
    /// Messages on connections the bag never declares, by connection id (counted in
    /// `message_count`; absent from `connections` unless a lenient reader made stand-ins).
    pub undeclared: BTreeMap<u32, u64>,
    /// Format-specific facts worth showing (MCAP `profile`, rosbag2 `ros_distro`).
    pub properties: BTreeMap<String, String>,
}

impl StorageInfo {
    /// Sets `message_count` from the per-connection counts and the undeclared ones (a lenient
    /// reader's stand-ins are in both; they are counted once).
    pub(crate) fn count_messages(&mut self) {
        let declared: u64 = self
            .connections
            .iter()
            .filter(|(id, _)| !self.undeclared.contains_key(id))
            .map(|(_, c)| c.message_count)
            .sum();
        self.message_count = declared + self.undeclared.values().sum::<u64>();
    }
}

/// Chunk counts and sizes for one compression.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompressionStats {
    /// Chunks with this compression.
    pub chunks: u64,
    /// Their bytes on disk.
    pub compressed_bytes: u64,
    /// Their bytes once decompressed.
    pub uncompressed_bytes: u64,
}

/// I/O counters of a reader.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Chunks whose data was read from the file.
    pub chunks_read: u64,
    /// Chunks that were decompressed (uncompressed chunks are not counted).
    pub chunks_decompressed: u64,
    /// Bytes read from the file.
    pub bytes_read: u64,
    /// Requests made to a remote object (0 for a local file), the opening `HEAD` included.
    pub requests: u64,
    /// Bytes those requests fetched.
    pub bytes_fetched: u64,
}

impl std::ops::AddAssign for ReadStats {
    /// Sums the counters of several readers (a rosbag2 bag's files, a reader of many bags).
    fn add_assign(&mut self, o: ReadStats) {
        self.chunks_read += o.chunks_read;
        self.chunks_decompressed += o.chunks_decompressed;
        self.bytes_read += o.bytes_read;
        self.requests += o.requests;
        self.bytes_fetched += o.bytes_fetched;
    }
}

/// Options for creating a bag.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// Chunk compression: ROS 1 bz2/lz4, MCAP zstd/lz4. rosbag2's own zstd modes are in
    /// [`Rosbag2Options::compression_mode`].
    pub compression: Compression,
    /// A chunk is flushed once its uncompressed size reaches this (ROS 1 default 768 KiB).
    pub chunk_size: u64,
    /// A chunk is also flushed once the log times it holds span this many nanoseconds.
    pub chunk_interval_ns: Option<u64>,
    /// Settings that only rosbag2 bags (SQLite3, MCAP) use.
    pub rosbag2: Rosbag2Options,
    /// Chunk compression workers (0: one per core; 1: the writing thread compresses). Chunks
    /// are written in order whatever the count, so the file is byte-identical for any value.
    pub threads: usize,
    /// Whether ROS 1 and MCAP files bypass the page cache (`O_DIRECT`).
    pub direct_io: DirectIo,
}

/// Writing with `O_DIRECT`, as rosbag_direct_write does: aligned blocks, no page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirectIo {
    /// Through the page cache.
    #[default]
    Off,
    /// `O_DIRECT` where the filesystem allows it; buffered (with a warning) where it refuses.
    On,
    /// `O_DIRECT` or an error.
    Require,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression: Compression::None,
            chunk_size: 768 * 1024,
            chunk_interval_ns: None,
            rosbag2: Rosbag2Options::default(),
            threads: 0,
            direct_io: DirectIo::Off,
        }
    }
}

/// rosbag2's zstd compression: whole files once they are closed, or each message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompressionMode {
    #[default]
    /// No rosbag2 compression.
    None,
    /// Each storage file is zstd-compressed once closed (`.db3.zstd`).
    File,
    /// Each message payload is zstd-compressed.
    Message,
}

/// rosbag2 SQLite3 storage presets (`--storage-preset-profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SqlitePreset {
    /// `journal_mode=MEMORY`, `synchronous=OFF`: fastest; a crash can corrupt the file.
    #[default]
    Default,
    /// `journal_mode=WAL`, `synchronous=NORMAL`: survives a crash.
    Resilient,
}

/// rosbag2's MCAP writer presets (`--storage-preset-profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum McapPreset {
    /// Chunks of `chunk_size` with the chosen compression, chunk CRCs on.
    #[default]
    Default,
    /// No chunks and no message indexes: the least work per message.
    Fastwrite,
    /// zstd at its fastest level.
    ZstdFast,
    /// zstd at its strongest level in 4 MiB chunks.
    ZstdSmall,
}

impl std::str::FromStr for McapPreset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "" | "none" | "default" => Ok(McapPreset::Default),
            "fastwrite" => Ok(McapPreset::Fastwrite),
            "zstd_fast" => Ok(McapPreset::ZstdFast),
            "zstd_small" => Ok(McapPreset::ZstdSmall),
            other => Err(format!("unknown MCAP preset {other:?} (fastwrite, zstd_fast, zstd_small)")),
        }
    }
}

/// rosbag2 directory and file settings.
#[derive(Debug, Clone)]
pub struct Rosbag2Options {
    /// zstd applied by rosbag2 itself, on top of the storage.
    pub compression_mode: CompressionMode,
    /// Start a new file once the current one reaches this many bytes.
    pub max_file_size: Option<u64>,
    /// Start a new file once the current one spans this many nanoseconds.
    pub max_file_duration_ns: Option<u64>,
    /// Keep at most this many files, deleting the oldest (circular logging).
    pub max_files: Option<usize>,
    /// SQLite3 pragmas. Older home of the `preset` storage option: prefer `StorageOptions` `preset=resilient` with [`crate::create_named`].
    pub sqlite_preset: SqlitePreset,
    /// MCAP writer preset. Older home of the `preset` storage option: prefer `StorageOptions` `preset=...` with [`crate::create_named`].
    pub mcap_preset: McapPreset,
    /// metadata.yaml version to write (9 by default; 5 for Humble and Iron readers).
    pub metadata_version: u32,
    /// `ros_distro` recorded in metadata.yaml and the storage files.
    pub ros_distro: String,
    /// metadata.yaml's `custom_data` (`ros2 bag record --custom-data`).
    pub custom_data: std::collections::BTreeMap<String, String>,
    /// Write the last messages of every transient-local or latched connection again at the
    /// head of each new file, so every split file holds its latched state
    /// (`--repeat-all-transient-local`).
    pub repeat_transient_local: bool,
    /// Topics whose last messages (up to the depth given) are written again at the head of
    /// each new file, whatever their QoS (`--repeat-transient-local TOPIC[=DEPTH]`).
    pub repeat_topics: std::collections::BTreeMap<String, usize>,
    /// `--storage-config-file`: SQLite3 pragmas and MCAP writer keys, over the preset.
    pub storage_config: crate::storage_config::StorageConfig,
    /// Compression workers (`--compression-threads`; 0: one per core): closed files (FILE
    /// mode) or messages (MESSAGE mode) are compressed off the writer's thread.
    pub compression_threads: usize,
    /// FILE mode: closed files that may wait for a compression worker before the oldest
    /// waiting one is dropped from the queue, staying uncompressed (`--compression-queue-size`;
    /// 0: no limit). MESSAGE mode drops nothing (see the writer): the writer waits instead.
    pub compression_queue_size: usize,
    /// The nice value (-20..=19) of every compression worker thread
    /// (`--compression-threads-priority`), as rosbag2 sets it on POSIX; 0 leaves the threads at
    /// the process's own. A value the OS refuses is a warning, and the workers run as they are.
    pub compression_threads_priority: i32,
}

impl Rosbag2Options {
    /// Writes metadata.yaml as `distro`'s rosbag2 reads it (its metadata version and name).
    pub fn set_distro(&mut self, distro: &str) -> crate::Result<()> {
        self.metadata_version = crate::rosbag2::metadata::version_for_distro(distro).ok_or_else(|| {
            bad_setting(
                "ros_distro",
                format!("unknown ROS distro {distro:?} (foxy, galactic, humble, iron, jazzy, kilted, rolling)"),
            )
        })?;
        self.ros_distro = distro.into();
        Ok(())
    }

    /// Writes this metadata.yaml version instead of the distro's.
    pub fn set_metadata_version(&mut self, version: u32) -> crate::Result<()> {
        let latest = crate::rosbag2::metadata::LATEST_VERSION;
        if !(1..=latest).contains(&version) {
            return Err(bad_setting("metadata_version", format!("{version} is not a version from 1 to {latest}")));
        }
        self.metadata_version = version;
        Ok(())
    }

    /// Starts a new file once the current one spans `secs` seconds.
    pub fn set_max_file_duration_secs(&mut self, secs: f64) -> crate::Result<()> {
        if !(secs.is_finite() && secs > 0.0) {
            return Err(bad_setting("max_file_duration", format!("{secs} is not a positive number of seconds")));
        }
        self.max_file_duration_ns = Some((secs * 1e9) as u64);
        Ok(())
    }
}

fn bad_setting(key: &str, reason: String) -> crate::Error {
    crate::Error::BadOption { backend: "rosbag2".into(), key: key.into(), reason }
}

impl Default for Rosbag2Options {
    fn default() -> Self {
        Rosbag2Options {
            compression_mode: CompressionMode::None,
            max_file_size: None,
            max_file_duration_ns: None,
            max_files: None,
            sqlite_preset: SqlitePreset::Default,
            mcap_preset: McapPreset::Default,
            metadata_version: 9,
            ros_distro: "rolling".into(),
            custom_data: Default::default(),
            repeat_transient_local: false,
            repeat_topics: std::collections::BTreeMap::new(),
            storage_config: Default::default(),
            compression_threads: 0,
            compression_queue_size: 1,
            compression_threads_priority: 0,
        }
    }
}

/// What `reindex` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReindexReport {
    /// The repaired bag (or the metadata.yaml written).
    pub output: PathBuf,
    /// Messages in the repaired bag.
    pub messages_kept: u64,
    /// Chunks written.
    pub chunks_written: u64,
    /// Bytes at the end of the input that held no complete record.
    pub bytes_dropped: u64,
    /// Message records that were started but torn.
    pub messages_dropped: u64,
    /// Files that were repaired, and how.
    pub repairs: Vec<String>,
    /// What could not be kept, where the format gives no byte or message count (a torn MCAP
    /// chunk).
    pub lost: Vec<String>,
}

/// Settings one backend owns, as `key=value` pairs (like rosbag2's storage config file): each
/// backend lists the keys it takes ([`crate::Backend::options`]) and parses the values itself,
/// refusing a bad one with [`crate::Error::BadOption`] naming the key. Passed to
/// [`crate::create_named`] beside the [`WriteOptions`] every backend shares.
///
/// The built-ins take `preset` (SQLite3 `resilient`; MCAP `fastwrite`, `zstd_fast`,
/// `zstd_small`), which wins over the older [`Rosbag2Options::sqlite_preset`] and
/// [`Rosbag2Options::mcap_preset`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageOptions(BTreeMap<String, String>);

impl StorageOptions {
    /// No settings: every backend's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `key=value` pairs separated by commas or newlines (`preset=resilient`); blank
    /// entries are skipped.
    pub fn parse(text: &str) -> crate::Result<Self> {
        let mut out = StorageOptions::default();
        for entry in text.split([',', '\n']).map(str::trim).filter(|e| !e.is_empty()) {
            let (key, value) = entry.split_once('=').ok_or_else(|| crate::Error::BadOption {
                backend: "any".into(),
                key: entry.into(),
                reason: "expected key=value".into(),
            })?;
            out.set(key.trim(), value.trim());
        }
        Ok(out)
    }

    /// Sets `key` to `value`, replacing an earlier value.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.0.insert(key.into(), value.into());
        self
    }

    /// [`StorageOptions::set`], by value, for building in one expression.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.set(key, value);
        self
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Every setting, ordered by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Refuses a key that `backend` does not list in `specs`.
    pub fn check(&self, backend: &str, specs: &[crate::OptionSpec]) -> crate::Result<()> {
        for key in self.0.keys() {
            if !specs.iter().any(|s| s.key == key) {
                let known: Vec<&str> = specs.iter().map(|s| s.key).collect();
                return Err(crate::Error::BadOption {
                    backend: backend.into(),
                    key: key.clone(),
                    reason: if known.is_empty() {
                        "this storage takes no options".into()
                    } else {
                        format!("not an option of this storage ({})", known.join(", "))
                    },
                });
            }
        }
        Ok(())
    }
}

/// A file carried inside a bag beside its messages (a calibration, a map, a URDF): MCAP's
/// Attachment record. Read with [`crate::StorageReader::attachments`], written with
/// [`crate::StorageWriter::add_attachment`]; storages without attachments have none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attachment {
    /// Name, usually the attached file's name; not unique (MCAP allows repeats).
    pub name: String,
    /// Media type of `data` (`application/octet-stream` when unknown).
    pub media_type: String,
    /// When it was attached, nanoseconds since the epoch.
    pub log_time: u64,
    /// When the attached data was made, nanoseconds since the epoch.
    pub create_time: u64,
    /// The attached bytes (a slice of the mapped file when read).
    pub data: bytes::Bytes,
    /// The CRC-32 stored with it; 0 means none was stored. Ignored when writing (the writer
    /// computes its own).
    pub crc: u32,
    /// The storage file it was read from (empty when built in memory): a rosbag2 directory
    /// has several.
    pub file: PathBuf,
    /// Where its record starts in `file`: names repeat, offsets tell attachments apart.
    pub offset: u64,
    /// Length of its record (op code and length prefix included).
    pub length: u64,
}

impl Attachment {
    /// The CRC-32 of the record's fields before the CRC, computed from this attachment's
    /// fields (what the stored [`Attachment::crc`] must equal).
    pub fn computed_crc(&self) -> u32 {
        let mut h = crc32fast::Hasher::new();
        h.update(&self.log_time.to_le_bytes());
        h.update(&self.create_time.to_le_bytes());
        for s in [&self.name, &self.media_type] {
            h.update(&(s.len() as u32).to_le_bytes());
            h.update(s.as_bytes());
        }
        h.update(&(self.data.len() as u64).to_le_bytes());
        h.update(&self.data);
        h.finalize()
    }

    /// Whether the stored CRC matches the data: `None` when none was stored (CRC 0). Checked
    /// on demand, not at read, so that listing a bag does not hash every attachment.
    pub fn crc_ok(&self) -> Option<bool> {
        (self.crc != 0).then(|| self.crc == self.computed_crc())
    }
}

/// A named string map stored in a bag: MCAP's Metadata record. rosbag2 keeps its
/// metadata.yaml in one named `rosbag2`; users add their own (a robot id, a run's notes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataRecord {
    /// Record name; not unique.
    pub name: String,
    /// Its entries.
    pub metadata: BTreeMap<String, String>,
    /// The storage file it was read from (empty when built in memory).
    pub file: PathBuf,
    /// Where its record starts in `file` (0 when built in memory).
    pub offset: u64,
    /// Length of its record (op code and length prefix included).
    pub length: u64,
}

/// One chunk of a chunked storage file (ROS 1, MCAP), for listings: where it is, how it is
/// compressed and what it holds, all from the index.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChunkInfo {
    /// The storage file holding it.
    pub file: PathBuf,
    /// File offset of the chunk record.
    pub offset: u64,
    /// Length of the chunk record in the file.
    pub length: u64,
    /// Log time of its first and last message, nanoseconds since the epoch.
    pub start_ns: u64,
    /// See `start_ns`.
    pub end_ns: u64,
    /// Its compression as the file names it (`none`, `lz4`, `bz2`, `zstd`).
    pub compression: String,
    /// Bytes of (compressed) records in the file.
    pub compressed_size: u64,
    /// Bytes of its records once decompressed.
    pub uncompressed_size: u64,
    /// Messages in it, where the index says.
    pub message_count: Option<u64>,
    /// Bytes of the message index records after it (MCAP's `message_index_length`).
    pub message_index_length: Option<u64>,
}

/// A message schema as the storage keeps it: MCAP's Schema record; other storages give one
/// per distinct (type, definition) of their connections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaInfo {
    /// The storage's id (MCAP's schema id; elsewhere numbered from 1 in connection order).
    pub id: u32,
    /// Type name.
    pub name: String,
    /// Encoding of `data` (`ros1msg`, `ros2msg`, `ros2idl`, ...).
    pub encoding: String,
    /// The definition.
    pub data: bytes::Bytes,
    /// The connections that use it, by id.
    pub connections: Vec<u32>,
}

/// Payload bytes per connection worked out without reading payloads, and how good the figure
/// is: what `rbag du` prints when not asked for `--exact`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexedSizes {
    /// Payload bytes by connection id.
    pub bytes: BTreeMap<u32, u64>,
    /// Whether they are exact (SQLite3's `SUM(LENGTH(data))`), not estimates from record
    /// offsets in the index.
    pub exact: bool,
}
