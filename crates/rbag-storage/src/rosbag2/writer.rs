//! Writing a rosbag2 bag: storage files named `<dir>_<n>.<ext>` as rosbag2 names them, split
//! by size or duration, optionally zstd-compressed per file or per message, with metadata.yaml
//! rewritten at every split so a crash leaves a readable bag. With `max_files` the oldest
//! file is deleted (circular logging). A single `.db3`/`.mcap` output gets no directory.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use super::metadata::{BagMetadata, FileInfo, TopicInfo};
use super::{qos, FileWriter, QOS_KEY};
use crate::mcap::McapWriter;
use crate::rosbag2::SqliteWriter;
use crate::{CompressionMode, Connection, Error, Format, Result, StorageWriter, WriteOptions};

/// A rosbag2 bag being written.
/// A message kept for repeating: log time, publish time, bytes.
type Kept = (u64, u64, Vec<u8>);

/// A rosbag2 bag being written: a directory of storage files with metadata.yaml, or one `.db3`/`.mcap` file.
pub struct Rosbag2Writer {
    /// The bag directory; `None` when writing one storage file.
    dir: Option<PathBuf>,
    /// The bag's name, which its files are named after.
    stem: String,
    single: Option<PathBuf>,
    format: Format,
    options: WriteOptions,
    connections: Vec<Connection>,
    current: Option<Box<dyn FileWriter>>,
    /// Our connection id - 1 → the current file's id for it (SQLite shares one per topic).
    file_ids: Vec<u32>,
    meta: BagMetadata,
    /// Per file in `meta.files`: messages per connection (index = id - 1), to recount topics
    /// when a file is deleted.
    file_counts: Vec<Vec<u64>>,
    next_index: usize,
    /// `repeat_transient_local`: the last messages (up to the QoS depth) of each
    /// transient-local connection, by connection slot, written again at the head of each new
    /// file.
    latched: BTreeMap<usize, (usize, VecDeque<Kept>)>,
    /// Log time of the first message written to the current file by `write`: its duration
    /// counts from there, not from the older stamps of the messages repeated at its head.
    period_start_ns: Option<u64>,
    poisoned: Option<String>,
    /// FILE compression of closed files, off this thread.
    compressor: Option<super::compressor::FileCompressor>,
    /// Files the full compression queue left uncompressed.
    left_uncompressed: Vec<PathBuf>,
    /// MESSAGE compression, off this thread.
    packer: Option<MessagePacker>,
}

/// Messages handed to the MESSAGE-mode compression workers and not yet stored. The writer
/// stores the oldest (waiting for it) before handing over one more, and never otherwise, so at
/// every point the same messages are in the storage file whatever the thread count: split
/// decisions, commits and so the output are the same for 1 or 16 threads. It is a constant,
/// not `compression_queue_size`: rosbag2's MESSAGE mode drops the oldest queued message when its
/// queue is full, and rbag drops none (the writer waits instead, and a recorder's
/// `max_cache_size` is where a slow disk shows). More threads than this go unused.
///
/// Memory: at most this many copies of payloads plus their compressed forms (zstd's bound,
/// the payload + 0.4% + 64 bytes) are held, i.e. about 128 of the largest message.
const MESSAGE_WINDOW: usize = 64;

/// Per-message bytes a stored message adds to its file beyond its payload, for the size check
/// (an SQLite row with its index entry; over-estimated on purpose, see `should_split`).
const STORED_OVERHEAD: u64 = 64;

/// MESSAGE mode's zstd compression on `compression_threads` workers, results taken back in
/// the order the messages came ([`crate::pool::Ordered`]).
struct MessagePacker {
    pool: crate::pool::Ordered<std::io::Result<Vec<u8>>>,
    /// The messages in the pool, oldest first: connection slot, log and publish time, payload length.
    waiting: VecDeque<(usize, u64, u64, usize)>,
    /// Payload bytes handed over and compressed bytes stored so far: the ratio estimates what
    /// the waiting messages will add to the file.
    raw_stored: u64,
    packed_stored: u64,
}

impl MessagePacker {
    fn new(threads: usize, priority: i32) -> Result<Self> {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let hook = super::compressor::priority_hook(priority);
        let pool = crate::pool::Ordered::with_start(
            super::compressor::THREAD_NAME,
            threads.min(MESSAGE_WINDOW),
            MESSAGE_WINDOW,
            hook,
        )
        .map_err(|e| Error::Invalid(format!("starting the compression workers: {e}")))?;
        Ok(MessagePacker { pool, waiting: VecDeque::new(), raw_stored: 0, packed_stored: 0 })
    }

    /// An upper bound of what the waiting messages add to the file once stored (zstd's bound
    /// of each payload): below it, a size split cannot be due.
    fn bound(&self) -> u64 {
        self.waiting.iter().map(|w| zstd::zstd_safe::compress_bound(w.3) as u64 + STORED_OVERHEAD).sum()
    }

    /// What the waiting messages will likely add, at the compression ratio seen so far.
    fn estimate(&self) -> u64 {
        let raw: u64 = self.waiting.iter().map(|w| w.3 as u64).sum();
        let packed = match self.raw_stored {
            0 => raw,
            n => (raw as u128 * self.packed_stored as u128 / n as u128) as u64,
        };
        packed + self.waiting.len() as u64 * STORED_OVERHEAD
    }
}

impl Rosbag2Writer {
    /// Creates a bag directory at `path` (which must not exist), or a single storage file when
    /// `path` ends in `.db3` or `.mcap`.
    pub fn create(path: &Path, format: Format, options: &WriteOptions) -> Result<Self> {
        Self::create_named(path, path, format, options)
    }

    /// [`Rosbag2Writer::create`] at `path`, laid out and named as `name` would be: its
    /// extension decides between one file and a directory, and a directory's files are
    /// `<name>_<n>.<ext>` (so a bag staged under a temporary name keeps its final names).
    pub fn create_named(path: &Path, name: &Path, format: Format, options: &WriteOptions) -> Result<Self> {
        let ext = name.extension().and_then(|e| e.to_str()).unwrap_or("");
        let single = matches!((format, ext), (Format::Sqlite3, "db3") | (Format::Mcap, "mcap"));
        let r2 = &options.rosbag2;
        if !(1..=super::metadata::LATEST_VERSION).contains(&r2.metadata_version) {
            return Err(Error::Invalid(format!("metadata version {} cannot be written (1 to 9)", r2.metadata_version)));
        }
        if single
            && (r2.max_file_size.is_some()
                || r2.max_file_duration_ns.is_some()
                || r2.compression_mode == CompressionMode::File)
        {
            return Err(Error::Invalid(format!(
                "{}: splitting and file compression need a bag directory, not a single file",
                path.display()
            )));
        }
        if format == Format::Mcap && r2.compression_mode == CompressionMode::Message {
            // rosbag2's own MCAP plugin refuses message mode; MCAP has chunk compression.
            return Err(Error::Invalid("MCAP bags compress whole chunks (zstd or lz4), not single messages: message compression mode applies to SQLite3 only".into()));
        }
        r2.check_split(format)?;
        if !single {
            if path.exists() {
                return Err(Error::OutputExists { path: path.into() });
            }
            std::fs::create_dir_all(path).map_err(|e| Error::io(path, e))?;
        }
        let meta = BagMetadata {
            version: r2.metadata_version,
            storage_identifier: format.name().into(),
            starting_time_ns: i64::MAX as u64,
            compression_format: if r2.compression_mode == CompressionMode::None {
                String::new()
            } else {
                "zstd".into()
            },
            compression_mode: match r2.compression_mode {
                CompressionMode::None => String::new(),
                CompressionMode::File => "FILE".into(),
                CompressionMode::Message => "MESSAGE".into(),
            },
            ros_distro: r2.ros_distro.clone(),
            custom_data: r2.custom_data.clone(),
            ..BagMetadata::default()
        };
        let mut w = Rosbag2Writer {
            stem: name.file_name().and_then(|n| n.to_str()).unwrap_or("bag").to_string(),
            dir: (!single).then(|| path.to_path_buf()),
            single: single.then(|| path.to_path_buf()),
            format,
            options: options.clone(),
            connections: Vec::new(),
            current: None,
            file_ids: Vec::new(),
            meta,
            file_counts: Vec::new(),
            next_index: 0,
            latched: BTreeMap::new(),
            period_start_ns: None,
            poisoned: None,
            compressor: None,
            left_uncompressed: Vec::new(),
            packer: None,
        };
        if w.dir.is_some() && r2.compression_mode == CompressionMode::File {
            let job: super::compressor::Job = std::sync::Arc::new(|plain: &Path| zstd_file(plain));
            let pool = super::compressor::FileCompressor::new(
                r2.compression_threads,
                r2.compression_queue_size,
                r2.compression_threads_priority,
                job,
            )
            .map_err(|e| Error::Invalid(format!("starting the compression workers: {e}")))?;
            w.compressor = Some(pool);
        }
        if r2.compression_mode == CompressionMode::Message {
            w.packer = Some(MessagePacker::new(r2.compression_threads, r2.compression_threads_priority)?);
        }
        w.open_next()?;
        Ok(w)
    }

    fn file_name(&self, index: usize) -> String {
        let stem = &self.stem;
        let ext = if self.format == Format::Mcap { "mcap" } else { "db3" };
        format!("{stem}_{index}.{ext}")
    }

    fn open_next(&mut self) -> Result<()> {
        let (path, name) = match (&self.dir, &self.single) {
            (Some(dir), _) => {
                let name = self.file_name(self.next_index);
                (dir.join(&name), name)
            }
            (None, Some(p)) => (p.clone(), self.stem.clone()),
            (None, None) => return Err(Error::Invalid("no output".into())),
        };
        self.next_index += 1;
        let mut file: Box<dyn FileWriter> = match self.format {
            Format::Mcap => Box::new(McapWriter::create(&path, &self.options)?),
            Format::Sqlite3 => Box::new(SqliteWriter::create(&path, &self.options)?),
            Format::Ros1 => return Err(Error::Invalid("a rosbag2 bag stores SQLite3 or MCAP files".into())),
        };
        self.file_ids.clear();
        for c in &self.connections {
            self.file_ids.push(file.add_connection(c)?);
        }
        self.current = Some(file);
        self.meta.files.push(FileInfo { path: name.clone(), starting_time_ns: i64::MAX as u64, ..FileInfo::default() });
        self.meta.relative_file_paths.push(name);
        self.file_counts.push(Vec::new());
        Ok(())
    }

    /// Closes the current file: stores the bag metadata in it, compresses it in FILE mode,
    /// deletes the oldest file past `max_files`, and rewrites metadata.yaml.
    fn close_current(&mut self) -> Result<()> {
        self.store_packed()?;
        let Some(mut file) = self.current.take() else { return Ok(()) };
        self.refresh_totals();
        file.set_bag_metadata(&self.meta.to_yaml(false));
        let file: Box<dyn StorageWriter> = file;
        file.finish()?;
        if let (Some(dir), Some(pool)) = (&self.dir, &self.compressor) {
            if let Some(last) = self.meta.relative_file_paths.last() {
                pool.submit(dir.join(last));
            }
        }
        let deleting = self.options.rosbag2.files_to_delete(self.meta.files.len());
        if deleting > 0 {
            // A file still being compressed is deleted once its worker is done with it.
            if let Some(pool) = &self.compressor {
                pool.wait_idle();
            }
        }
        self.apply_compressed()?;
        if let Some(dir) = &self.dir {
            for _ in 0..deleting {
                let name = self.meta.relative_file_paths.remove(0);
                self.meta.files.remove(0);
                self.file_counts.remove(0);
                let path = dir.join(&name);
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            }
        }
        self.refresh_totals();
        self.write_metadata()
    }

    /// Renames the compressed files in the metadata; a failed compression fails the bag.
    fn apply_compressed(&mut self) -> Result<()> {
        let Some(pool) = &self.compressor else { return Ok(()) };
        let done = pool.take_done();
        self.apply_done(done)
    }

    fn apply_done(&mut self, done: Vec<super::compressor::Done>) -> Result<()> {
        use super::compressor::Done;
        let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for d in done {
            match d {
                Done::Compressed { plain, .. } => {
                    let plain = name(&plain);
                    if let Some(entry) = self.meta.relative_file_paths.iter_mut().find(|p| **p == plain) {
                        entry.push_str(".zstd");
                    }
                }
                Done::Dropped(plain) => self.left_uncompressed.push(plain),
                Done::Failed { plain, error } => {
                    return Err(Error::io(&plain, std::io::Error::other(error)));
                }
            }
        }
        Ok(())
    }

    /// Closed files the full compression queue (`compression_queue_size`) left uncompressed.
    pub fn left_uncompressed(&self) -> &[PathBuf] {
        &self.left_uncompressed
    }

    /// Whether closed files are still being compressed.
    pub fn compressing(&self) -> bool {
        self.compressor.as_ref().is_some_and(|c| c.busy())
    }

    /// Waits for the compression workers, then names the compressed files in metadata.yaml.
    fn finish_compression(&mut self) -> Result<()> {
        let Some(pool) = self.compressor.take() else { return Ok(()) };
        let done = pool.finish();
        self.apply_done(done)?;
        self.refresh_totals();
        self.write_metadata()
    }

    fn write_metadata(&self) -> Result<()> {
        match &self.dir {
            Some(dir) => self.meta.write(dir),
            None => Ok(()),
        }
    }

    /// Recomputes the bag-level counts and times from the per-file ones.
    fn refresh_totals(&mut self) {
        let files = &self.meta.files;
        let start = files.iter().filter(|f| f.message_count > 0).map(|f| f.starting_time_ns).min();
        let end = files.iter().filter(|f| f.message_count > 0).map(|f| f.starting_time_ns + f.duration_ns).max();
        self.meta.starting_time_ns = start.unwrap_or(i64::MAX as u64);
        self.meta.duration_ns = match (start, end) {
            (Some(s), Some(e)) => e - s,
            _ => 0,
        };
        self.meta.message_count = files.iter().map(|f| f.message_count).sum();
        let mut per_topic: BTreeMap<&str, u64> = BTreeMap::new();
        for counts in &self.file_counts {
            for (c, n) in self.connections.iter().zip(counts) {
                *per_topic.entry(c.topic.as_str()).or_default() += n;
            }
        }
        for t in &mut self.meta.topics {
            t.message_count = per_topic.get(t.name.as_str()).copied().unwrap_or(0);
        }
    }

    /// Whether the file ends before a message at `log_time`. With messages still being
    /// compressed, their largest possible size is counted first; only when that could reach the
    /// split are they stored and the file's exact size compared, so the decision never depends
    /// on how far the workers got.
    fn should_split(&mut self, log_time: u64) -> Result<bool> {
        let Some(file) = &self.current else { return Ok(false) };
        if self.dir.is_none() {
            return Ok(false);
        }
        let waiting = self.packer.as_ref().map_or(0, MessagePacker::bound);
        let r2 = &self.options.rosbag2;
        if !r2.split_due(file.bytes_written() + waiting, self.period_start_ns, log_time) {
            return Ok(false);
        }
        if waiting == 0 {
            return Ok(true);
        }
        self.store_packed()?;
        let written = self.current.as_ref().map_or(0, |f| f.bytes_written());
        Ok(self.options.rosbag2.split_due(written, self.period_start_ns, log_time))
    }

    /// The path of the storage file being written (`None` once closed): what rosbag2's
    /// `/events/write_split` names as the closed and the opened file.
    pub fn current_file_path(&self) -> Option<PathBuf> {
        self.current.as_ref()?;
        match (&self.dir, &self.single) {
            (Some(dir), _) => self.meta.relative_file_paths.last().map(|n| dir.join(n)),
            (None, single) => single.clone(),
        }
    }

    /// Bytes of the storage file being written (an estimate while buffers are unflushed): what
    /// [`crate::Rosbag2Options::split_due`] compares with `max_file_size` when a recorder drives the
    /// splits through [`StorageWriter::split_now`].
    ///
    /// In MESSAGE mode the messages still being compressed (at most 64, `MESSAGE_WINDOW`) are
    /// counted at the compression ratio seen so far.
    pub fn current_file_bytes(&self) -> u64 {
        let waiting = self.packer.as_ref().map_or(0, MessagePacker::estimate);
        self.current.as_ref().map_or(0, |f| f.bytes_written() + waiting)
    }

    fn check(&self) -> Result<()> {
        match &self.poisoned {
            Some(p) => Err(Error::Poisoned(p.clone())),
            None => Ok(()),
        }
    }

    fn poison<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            self.poisoned.get_or_insert_with(|| e.to_string());
        }
        r
    }
}

/// The one rule of rbag for when a file of a multi-file output ends and which old files go. The
/// rosbag2 writer applies it to its own files (`rbag convert --max-bag-size`, `--max-bag-files`),
/// and `rbag_transport`'s recorder applies it to every live recording (ROS 1 split bags and
/// rosbag2 directories alike, which it then splits with [`StorageWriter::split_now`]), so size,
/// duration and keep-N behave the same everywhere.
impl crate::Rosbag2Options {
    /// Whether the file being written ends before a message logged at `log_time`: it holds
    /// `file_bytes` and its period began at `period_start_ns` (`None` for a file with nothing
    /// in it yet, which never ends: an empty file would be all a split could make). The file
    /// ends once it reaches `max_file_size`, or once `log_time` is more than
    /// `max_file_duration_ns` past its start, as rosbag and rosbag2 both compare.
    pub fn split_due(&self, file_bytes: u64, period_start_ns: Option<u64>, log_time: u64) -> bool {
        let Some(start) = period_start_ns else { return false };
        self.max_file_size.is_some_and(|max| file_bytes >= max)
            || self.max_file_duration_ns.is_some_and(|max| max > 0 && log_time.saturating_sub(start) > max)
    }

    /// Refuses a split size rosbag2 refuses: an empty SQLite3 file alone is ~20 KiB, so
    /// smaller splits would write one message per file.
    pub fn check_split(&self, format: Format) -> Result<()> {
        let min_split = if format == Format::Sqlite3 { 86_016 } else { 1024 };
        match self.max_file_size.filter(|&m| m < min_split) {
            Some(max) => Err(Error::Invalid(format!(
                "a split size of {max} bytes is under the {} minimum of {min_split} bytes",
                format.name()
            ))),
            None => Ok(()),
        }
    }

    /// How many of the oldest files to delete when `files` exist (circular logging with
    /// `max_files`: the newest N stay; N is at least 1).
    pub fn files_to_delete(&self, files: usize) -> usize {
        self.max_files.map_or(0, |max| files.saturating_sub(max.max(1)))
    }
}

/// Compresses a closed storage file to `<file>.zstd` and removes the original, as rosbag2's
/// file compression does.
fn zstd_file(plain: &Path) -> std::io::Result<PathBuf> {
    let packed = PathBuf::from(format!("{}.zstd", plain.display()));
    let run = || -> std::io::Result<()> {
        let input = std::fs::File::open(plain)?;
        let out = std::fs::File::options().write(true).create_new(true).open(&packed)?;
        let mut enc = zstd::stream::write::Encoder::new(out, 1)?;
        enc.include_contentsize(false)?;
        std::io::copy(&mut std::io::BufReader::with_capacity(1 << 20, input), &mut enc)?;
        enc.finish()?.sync_all()
    };
    run()?;
    std::fs::remove_file(plain)?;
    Ok(packed)
}

impl StorageWriter for Rosbag2Writer {
    fn add_connection(&mut self, conn: &Connection) -> Result<u32> {
        self.check()?;
        let version = self.options.rosbag2.metadata_version;
        let mut c = Connection { id: self.connections.len() as u32 + 1, ..conn.clone() };
        if let Some(q) = c.metadata.get_mut(QOS_KEY) {
            *q = qos::convert_text(q, version);
        }
        if !self.meta.topics.iter().any(|t| t.name == c.topic) {
            self.meta.topics.push(TopicInfo::from_connection(&c));
        }
        let r = match self.current.as_mut() {
            Some(f) => f.add_connection(&c),
            None => Err(Error::Poisoned("the bag is closed".into())),
        };
        let id = self.poison(r)?;
        self.file_ids.push(id);
        let repeat = &self.options.rosbag2;
        let depth = match repeat.repeat_topics.get(&c.topic) {
            Some(&depth) => Some(depth.max(1)),
            None if repeat.repeat_transient_local => c.latched_depth(),
            None => None,
        };
        if let Some(depth) = depth {
            self.latched.insert(self.connections.len(), (depth, VecDeque::new()));
        }
        self.connections.push(c);
        Ok(self.connections.len() as u32)
    }

    fn write(&mut self, conn: u32, log_time: u64, publish_time: u64, data: &[u8]) -> Result<()> {
        self.check()?;
        let slot = (conn as usize).wrapping_sub(1);
        if slot >= self.connections.len() {
            return Err(Error::UnknownConnection { id: conn });
        }
        let due = self.should_split(log_time);
        if self.poison(due)? {
            self.next_file()?;
        }
        self.period_start_ns.get_or_insert(log_time);
        if let Some((depth, msgs)) = self.latched.get_mut(&slot) {
            if msgs.len() == *depth {
                msgs.pop_front();
            }
            msgs.push_back((log_time, publish_time, data.to_vec()));
        }
        self.write_here(slot, log_time, publish_time, data)
    }

    fn checkpoint(&mut self) -> Result<()> {
        self.check()?;
        let stored = self.store_packed();
        self.poison(stored)?;
        let r = match self.current.as_mut() {
            Some(f) => f.checkpoint(),
            None => Ok(()),
        };
        self.poison(r)
    }

    fn split_now(&mut self) -> Result<bool> {
        self.check()?;
        if self.dir.is_none() {
            return Ok(false);
        }
        // The messages being compressed came before the split: they count in this file.
        let stored = self.store_packed();
        self.poison(stored)?;
        if self.meta.files.last().is_some_and(|f| f.message_count > 0) {
            self.next_file()?;
        }
        Ok(true)
    }

    // Attachments and metadata records go into the current file (the first one, when copied
    // before the messages); only MCAP files carry them.
    fn add_attachment(&mut self, attachment: &crate::Attachment) -> Result<bool> {
        self.check()?;
        let r = self.current.as_mut().map_or(Ok(false), |f| f.add_attachment(attachment));
        self.poison(r)
    }

    fn add_metadata(&mut self, record: &crate::MetadataRecord) -> Result<bool> {
        self.check()?;
        let r = self.current.as_mut().map_or(Ok(false), |f| f.add_metadata(record));
        self.poison(r)
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.check()?;
        self.close_current()?;
        self.finish_compression()
    }
}

impl Rosbag2Writer {
    /// Closes the current file and opens the next, repeating the transient-local messages
    /// (`--repeat-transient-local`) at its head.
    fn next_file(&mut self) -> Result<()> {
        let r = self.close_current().and_then(|_| self.open_next());
        self.poison(r)?;
        self.period_start_ns = None;
        let repeats: Vec<(usize, u64, u64, Vec<u8>)> = self
            .latched
            .iter()
            .flat_map(|(slot, (_, msgs))| msgs.iter().map(move |(t, p, d)| (*slot, *t, *p, d.clone())))
            .collect();
        for (slot, t, p, d) in repeats {
            self.write_here(slot, t, p, &d)?;
        }
        Ok(())
    }

    /// Writes one message into the current file (no split check); in MESSAGE mode hands it to
    /// the compression workers, storing the oldest waiting one first when [`MESSAGE_WINDOW`]
    /// are out.
    fn write_here(&mut self, slot: usize, log_time: u64, publish_time: u64, data: &[u8]) -> Result<()> {
        if self.packer.as_ref().is_some_and(|p| p.waiting.len() >= MESSAGE_WINDOW) {
            self.store_oldest()?;
        }
        if let Some(p) = self.packer.as_mut() {
            let owned = data.to_vec();
            if p.pool.submit(move || zstd::bulk::compress(&owned, 1)).is_err() {
                return self.poison(Err(Error::Invalid("the compression workers are gone".into())));
            }
            p.waiting.push_back((slot, log_time, publish_time, data.len()));
            return Ok(());
        }
        self.store(slot, log_time, publish_time, data)
    }

    /// Stores every message the compression workers hold, in order.
    fn store_packed(&mut self) -> Result<()> {
        while self.packer.as_ref().is_some_and(|p| !p.waiting.is_empty()) {
            self.store_oldest()?;
        }
        Ok(())
    }

    /// Waits for the oldest message given to the compression workers, and stores it.
    fn store_oldest(&mut self) -> Result<()> {
        let Some(p) = self.packer.as_mut() else { return Ok(()) };
        let Some((slot, log_time, publish_time, len)) = p.waiting.pop_front() else { return Ok(()) };
        let packed = match p.pool.next() {
            Some(Ok(packed)) => packed,
            Some(Err(e)) => return self.poison(Err(Error::Invalid(format!("zstd compression of a message: {e}")))),
            None => {
                return self
                    .poison(Err(Error::Invalid("zstd compression of a message failed (worker panicked)".into())))
            }
        };
        p.raw_stored += len as u64;
        p.packed_stored += packed.len() as u64;
        self.store(slot, log_time, publish_time, &packed)
    }

    /// Writes one message, as it is to be stored, into the current file and counts it.
    fn store(&mut self, slot: usize, log_time: u64, publish_time: u64, payload: &[u8]) -> Result<()> {
        let file_id = self.file_ids.get(slot).copied().unwrap_or(u32::MAX);
        let r = match self.current.as_mut() {
            Some(f) => f.write(file_id, log_time, publish_time, payload),
            None => Err(Error::Poisoned("the bag is closed".into())),
        };
        self.poison(r)?;
        if let Some(f) = self.meta.files.last_mut() {
            if f.message_count == 0 {
                f.starting_time_ns = log_time;
            }
            let start = f.starting_time_ns.min(log_time);
            let end = (f.starting_time_ns + f.duration_ns).max(log_time);
            f.starting_time_ns = start;
            f.duration_ns = end - start;
            f.message_count += 1;
        }
        if let Some(counts) = self.file_counts.last_mut() {
            if counts.len() <= slot {
                counts.resize(slot + 1, 0);
            }
            counts[slot] += 1;
        }
        Ok(())
    }
}

impl Drop for Rosbag2Writer {
    /// A writer dropped without `finish` (an error upstream) still closes its file and
    /// metadata.yaml, so what was written stays readable.
    fn drop(&mut self) {
        if self.current.is_some() && self.poisoned.is_none() {
            let _ = self.close_current();
        }
        let _ = self.finish_compression();
    }
}
