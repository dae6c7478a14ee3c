//! ROS-agnostic bag storage.
//!
//! This crate moves bytes: it stores binary messages with the metadata of the connection they
//! arrived on, and reads them back through each format's index. It never interprets a message;
//! a message definition is an opaque string with an encoding name. ROS-specific connection
//! fields (ROS 1 md5sum, callerid, latching; ROS 2 QoS, type hash) ride in
//! [`Connection::metadata`].
//!
//! ```no_run
//! use rbag_storage::{open, Filter};
//! let reader = rbag_storage::open("in.bag".as_ref())?;
//! for msg in reader.messages(&Filter::default())? {
//!     let msg = msg?;
//!     println!("{} {} bytes", msg.log_time, msg.data.len());
//! }
//! # Ok::<(), rbag_storage::Error>(())
//! ```

#![warn(missing_docs)]

pub mod budget;
mod builtin;
pub mod doctor;
pub use builtin::with_storage_options;
pub mod direct;
mod error;
mod filter;
mod latched;
pub mod mcap;
mod mmap;
pub mod notice;
mod open;
pub mod output;
mod periods;
pub mod pool;
mod readahead;
mod reading;
pub mod registry;
pub mod ros1;
pub mod rosbag2;
mod size_estimate;
mod sniff;
pub mod source;
pub mod storage_config;
mod time_merge;
mod types;
mod writeback;

pub use error::{Error, Place, Result};
pub use filter::Filter;
pub use open::{create, create_at, create_named, create_with, detect, open, open_with, reindex, Format};
pub use output::OutputPolicy;
pub use registry::{
    backend, backend_for_extension, backends, detect_backend, register, summaries, Backend, BackendSummary,
    Capabilities, IntoBackend, OptionSpec,
};
pub use time_merge::TimeMerge;
pub use types::{
    Attachment, ChunkInfo, Compression, CompressionMode, CompressionStats, Connection, ConnectionStats, DirectIo,
    IndexedSizes, McapPreset, Message, MetadataRecord, ReadOptions, ReadStats, ReindexReport, Rosbag2Options,
    SchemaInfo, SqlitePreset, StorageInfo, StorageOptions, WriteOptions, UNDECLARED_TOPIC_PREFIX,
};

/// A bag opened for reading. Every backend implements it, so the layers above never know
/// which format they read.
pub trait StorageReader: Send + Sync {
    /// Every connection in the bag, ordered by id.
    fn connections(&self) -> &[Connection];

    /// A summary built from index/summary data only: no message payload is read.
    fn info(&self) -> Result<StorageInfo>;

    /// Messages accepted by `filter`, in log-time order (ties broken by file position).
    fn messages<'a>(&'a self, filter: &Filter) -> Result<MessageIter<'a>>;

    /// The `n`-th message (0-based, log-time order) of `topic`. Backends with an index find
    /// it there; the default reads the topic's messages up to it.
    fn nth(&self, topic: &str, n: u64) -> Result<Option<Message>> {
        let filter = Filter { topics: vec![topic.into()], ..Filter::default() };
        let Ok(n) = usize::try_from(n) else { return Ok(None) };
        self.messages(&filter)?.nth(n).transpose()
    }

    /// Messages from `time_ns` on, positioned through the index.
    fn seek<'a>(&'a self, time_ns: u64) -> Result<MessageIter<'a>> {
        self.messages(&Filter { start: Some(time_ns), ..Filter::default() })
    }

    /// Median period between consecutive messages of each topic (all its connections);
    /// `1 / period` is the frequency `rosbag info --freq` prints. Backends with an index read
    /// no payload; the default walks [`StorageReader::messages`] once, keeping only times.
    fn median_periods(&self) -> Result<std::collections::BTreeMap<String, u64>> {
        let mut times: std::collections::BTreeMap<u32, Vec<u64>> = std::collections::BTreeMap::new();
        for m in self.messages(&Filter::default())? {
            let m = m?;
            times.entry(m.connection).or_default().push(m.log_time);
        }
        Ok(periods::by_topic(times.into_iter().filter_map(|(id, t)| Some((self.connection(id)?.topic.as_str(), t)))))
    }

    /// Counters of the I/O done so far; tests use them to prove the index is used. The default
    /// is all zeros, for backends that do not count.
    fn stats(&self) -> ReadStats {
        ReadStats::default()
    }

    /// Problems found at open that did not stop reading (a missing summary that forced a
    /// scan, a damaged chunk that was skipped). Tools print them.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// What the file holds that cannot be read, one line each: a torn tail, a damaged chunk
    /// that was skipped. Also in [`StorageReader::warnings`]; verbs that copy or print messages
    /// report these as dropped.
    fn lost(&self) -> Vec<String> {
        Vec::new()
    }

    /// The files attached to the bag (MCAP Attachment records), in file order; storages
    /// without attachments have none. CRCs are not checked here: see [`Attachment::crc_ok`].
    fn attachments(&self) -> Result<Vec<Attachment>> {
        Ok(Vec::new())
    }

    /// The named metadata records of the bag (MCAP Metadata records, rosbag2's `rosbag2`
    /// among them), in file order; storages without them have none.
    fn metadata(&self) -> Result<Vec<MetadataRecord>> {
        Ok(Vec::new())
    }

    /// The chunks of a chunked storage (ROS 1, MCAP), in file order, from the index; none
    /// for storages without chunks.
    fn chunks(&self) -> Result<Vec<ChunkInfo>> {
        Ok(Vec::new())
    }

    /// The schemas of the bag's connections. MCAP overrides this with its Schema records; the
    /// default gives one per distinct (type, definition encoding, definition), numbered from 1
    /// in connection order, so that listings read the same for every storage.
    fn schemas(&self) -> Result<Vec<SchemaInfo>> {
        let mut out: Vec<SchemaInfo> = Vec::new();
        for c in self.connections().iter().filter(|c| !c.message_type.is_empty()) {
            let same = |s: &SchemaInfo| {
                s.name == c.message_type && s.encoding == c.definition_encoding && s.data == c.definition.as_bytes()
            };
            match out.iter_mut().find(|s| same(s)) {
                Some(s) => s.connections.push(c.id),
                None => out.push(SchemaInfo {
                    id: out.len() as u32 + 1,
                    name: c.message_type.clone(),
                    encoding: c.definition_encoding.clone(),
                    data: bytes::Bytes::from(c.definition.clone().into_bytes()),
                    connections: vec![c.id],
                }),
            }
        }
        Ok(out)
    }

    /// Payload bytes per connection without reading payloads (`rbag du`), where the storage
    /// can tell: exact from SQLite3, estimated from record offsets in ROS 1 and MCAP indexes.
    /// The default takes [`ConnectionStats::data_bytes`] when the summary has it for every
    /// connection; `None` otherwise (the caller then reads every message).
    fn indexed_sizes(&self) -> Result<Option<IndexedSizes>> {
        let info = self.info()?;
        let bytes: Option<std::collections::BTreeMap<u32, u64>> =
            info.connections.iter().map(|(&id, s)| s.data_bytes.map(|b| (id, b))).collect();
        Ok(bytes.map(|bytes| IndexedSizes { bytes, exact: true }))
    }

    /// The connection a message refers to.
    fn connection(&self, id: u32) -> Option<&Connection> {
        let conns = self.connections();
        match conns.binary_search_by_key(&id, |c| c.id) {
            Ok(i) => conns.get(i),
            Err(_) => None,
        }
    }
}

/// A fallible stream of messages borrowed from its reader.
pub type MessageIter<'a> = Box<dyn Iterator<Item = Result<Message>> + Send + 'a>;

/// A bag being written. `finish` must be called: dropping a writer leaves a bag that needs
/// `reindex`.
pub trait StorageWriter: Send {
    /// Registers a connection and returns the id to pass to [`StorageWriter::write`]. The
    /// `id` field of `conn` is ignored.
    fn add_connection(&mut self, conn: &Connection) -> Result<u32>;

    /// Appends one message. Fails forever after the first I/O error (the writer is poisoned).
    fn write(&mut self, conn: u32, log_time: u64, publish_time: u64, data: &[u8]) -> Result<()>;

    /// Hands everything written so far to the OS (closes the open chunk, commits the open
    /// batch), so that a crash afterwards loses none of it. Live recorders call it about once
    /// a second; it costs a smaller chunk or transaction. Storages that already do so on every
    /// chunk need nothing.
    fn checkpoint(&mut self) -> Result<()> {
        Ok(())
    }

    /// Closes the current file and goes on in a new one now (rosbag2's `split_bagfile`
    /// service); returns whether the storage splits at all. A file with no message yet is kept.
    fn split_now(&mut self) -> Result<bool> {
        Ok(false)
    }

    /// Stores an attachment (see [`Attachment`]; its `crc`, `file`, `offset` and `length` are
    /// ignored). `Ok(false)`: this storage cannot carry attachments, so that copying verbs can
    /// count what they drop instead of failing.
    fn add_attachment(&mut self, attachment: &Attachment) -> Result<bool> {
        let _ = attachment;
        Ok(false)
    }

    /// Stores a metadata record (its `file`, `offset` and `length` are ignored). `Ok(false)`:
    /// this storage cannot carry it.
    fn add_metadata(&mut self, record: &MetadataRecord) -> Result<bool> {
        let _ = record;
        Ok(false)
    }

    /// Flushes, writes the index and closes the bag.
    fn finish(self: Box<Self>) -> Result<()>;
}
