//! The recording engine: raw messages in, bag files out, with `rosbag record`'s behaviour.
//!
//! The middleware hands over each message's bytes as they came off the wire, with the
//! connection (publisher) they came on; nothing is deserialised. The [`Recorder`] decides
//! where they go:
//! - the file being written is `NAME.bag.active` and becomes `NAME.bag` when closed, so an
//!   interrupted recording is recognisable (and `rbag reindex` recovers its complete chunks);
//!   MCAP and SQLite3 files are written under their final name;
//! - `--split` starts a new file when the current one reaches `--size` (checked before each
//!   message, so a file ends up to one message past it) or `--duration`. Whether a file ends,
//!   and which old files `--max-splits` deletes, is decided by the one rule rbag has for it,
//!   [`rbag_storage::Rosbag2Options::split_due`] and
//!   [`rbag_storage::Rosbag2Options::files_to_delete`], which the rosbag2 writer applies too.
//!   For [`Layout::Files`] duration periods are
//!   aligned as rosbag aligns them: file *k* covers log times up to `start + (k+1)·duration`,
//!   where `start` is the time given to [`Recorder::create`]. When a message arrives several
//!   periods later, rosbag writes one empty bag per skipped period; rbag starts one new file in
//!   the period of the message instead (a clock jump would otherwise create thousands of
//!   files). Calling [`Recorder::tick`] while idle splits on time without messages, as
//!   rosbag's writer thread does every 250 ms. For [`Layout::Rosbag2Dir`] a file's duration
//!   counts from its first message, as rosbag2 counts it, and a split is the rosbag2 writer's
//!   [`rbag_storage::StorageWriter::split_now`] (so metadata.yaml lists every file);
//! - [`Recorder::split_now`] splits on demand (rosbag2's `split_bagfile` service);
//! - `--size`/`--duration` without `--split` stop the recording ([`WriteOutcome::Stopped`]);
//! - `-l N` stores N messages per topic, then ignores the topic
//!   ([`WriteOutcome::LimitReached`], then [`WriteOutcome::AllLimitsReached`] once every known
//!   topic has its N);
//! - `--repeat-latched` keeps the last message of each latched publisher (by topic and
//!   callerid, as rosbag) and writes it at the head of each new split, stamped with the time
//!   of the split. rosbag also stores the message that triggered a split twice when it is
//!   latched; rbag does not. ROS 2's `--repeat-transient-local` is the same option: a
//!   connection whose offered QoS profiles are all transient-local keeps its last messages up
//!   to their depth;
//! - drops noted with [`Recorder::note_drops`] are written on [`DROPPED_TOPIC`] before
//!   each file closes (a `std_msgs/String` of `<topic>: <count>` lines) and returned in the
//!   [`RecordReport`];
//! - `--min-space` is checked before the first file is created (refusing to start) and while
//!   recording (stopping with [`StopReason::LowDiskSpace`], as rosbag stops with "Less than …
//!   of space free on disk … Disabling recording.").
//!
//! Durability: a SIGKILL should lose at most the open chunk. That needs the storage writer to
//! hand each closed chunk to the OS (flush its buffer) at once; the test
//! `closed_chunks_reach_the_os_before_the_bag_is_closed` checks it.

mod dropped;
mod error;
mod file;
mod naming;
mod options;

use rbag_storage::ros1::keys;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use rbag_storage::{Connection, Format, Rosbag2Options};

pub use dropped::{drops_yaml, DROPPED_TOPIC};
pub use error::RecordError;
pub use naming::{extension, local_stamp};
pub use options::{Layout, OutputName, RecordOptions, Split};

use crate::disk::{free_space, human, DiskGuard, Space, SpaceProbe};
pub use crate::key::ConnKey;
use crate::queue::Queued;
use file::{BagFile, DirBag, Output, Slot};
use naming::Naming;

/// What happened to a message given to [`Recorder::write`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Stored.
    Written,
    /// Stored, and it was the topic's last under `-l`: the middleware can unsubscribe it.
    LimitReached,
    /// Stored, and every topic now has its `-l` messages: stop recording.
    AllLimitsReached,
    /// Not stored: the topic already has its `-l` messages.
    Ignored,
    /// Not stored: `--throttle` keeps the topic below its rate.
    Throttled,
    /// Not stored: recording has ended for this reason; call [`Recorder::finish`].
    Stopped(StopReason),
}

/// Why recording ended before it was asked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// `--size` without `--split`.
    MaxSize {
        /// The bound, over every file written.
        bytes: u64,
    },
    /// `--duration` without `--split`.
    MaxDuration {
        /// The bound, in log time since the recording started.
        ns: u64,
    },
    /// Free space fell under `--min-space` (rosbag exits with code 1 then).
    LowDiskSpace {
        /// The directory the bag is written in.
        dir: PathBuf,
        /// Bytes free when measured.
        free: u64,
        /// The minimum asked for.
        required: u64,
    },
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::MaxSize { bytes } => write!(f, "the bag reached its maximum size ({})", human(*bytes)),
            StopReason::MaxDuration { ns } => {
                write!(f, "the recording reached its maximum duration ({} s)", *ns as f64 / 1e9)
            }
            StopReason::LowDiskSpace { dir, free, required } => {
                write!(
                    f,
                    "less than {} of space free on disk with {} ({} left); recording disabled",
                    human(*required),
                    dir.display(),
                    human(*free)
                )
            }
        }
    }
}

/// Things worth telling the user, in order; the caller prints them (rosbag's INFO/WARN lines).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// "Recording to 'NAME.bag'." (the final name; `-p` publishes it on `begin_write`).
    Opened(PathBuf),
    /// "Closing 'NAME.bag'."
    Closed(PathBuf),
    /// `--max-splits` deleted this split.
    Deleted(PathBuf),
    /// Free space is under five times `--min-space`.
    LowSpace {
        /// The directory the bag is written in.
        dir: PathBuf,
        /// Bytes free when measured.
        free: u64,
        /// The minimum asked for.
        required: u64,
    },
    /// A rosbag2 directory went on in a new storage file (by size, duration or on demand):
    /// the storage file closed and the one opened, as rosbag2's `/events/write_split` names them.
    Split {
        /// The storage file finished.
        closed: PathBuf,
        /// The storage file recording goes on in.
        opened: PathBuf,
    },
    /// The last storage file of a rosbag2 directory was closed with the bag (rosbag2 then
    /// publishes a write_split event with no opened file).
    FileClosed(PathBuf),
    /// Something failed that does not stop recording (a split that could not be deleted,
    /// free space that could not be measured).
    Warning(String),
}

/// What a recording wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordReport {
    /// Files on disk, in the order they were written.
    pub files: Vec<PathBuf>,
    /// Splits deleted by `--max-splits`.
    pub deleted: Vec<PathBuf>,
    /// Messages stored per topic (every known topic, 0 included; repeated latched copies and
    /// the drop report not counted).
    pub messages: BTreeMap<String, u64>,
    /// Messages dropped before reaching the bag, per topic (topics with drops only).
    pub drops: BTreeMap<String, u64>,
    /// Why recording ended on its own, if it did.
    pub stopped: Option<StopReason>,
    /// Snapshot triggers carried out (snapshot mode).
    pub snapshots: u64,
}

impl RecordReport {
    /// Messages dropped over every topic.
    pub fn total_drops(&self) -> u64 {
        self.drops.values().sum()
    }
}

struct ConnState {
    conn: Connection,
    topic: usize,
    /// What `--repeat-latched` keeps of this connection: under which name (ROS 1: topic and
    /// callerid, as rosbag; ROS 2: the connection) and how many messages (its QoS depth).
    latch: Option<(LatchId, usize)>,
}

/// Names what a latched publisher or transient-local topic keeps for repeating.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum LatchId {
    /// ROS 1: (topic, callerid).
    Publisher(String, String),
    /// ROS 2: the connection.
    Key(ConnKey),
}

/// Whether `conn` is repeated at each split, under which name and how many of its messages:
/// a ROS 1 publisher whose header says `latching: 1` (its last message), or a ROS 2 connection
/// whose offered profiles are all transient-local (its last messages up to their depth).
fn latch_of(key: ConnKey, conn: &Connection) -> Option<(LatchId, usize)> {
    let depth = conn.latched_depth()?;
    if conn.metadata.get(keys::LATCHING).map(String::as_str) == Some("1") {
        let callerid = conn.metadata.get(keys::CALLERID).cloned().unwrap_or_default();
        return Some((LatchId::Publisher(conn.topic.clone(), callerid), depth));
    }
    Some((LatchId::Key(key), depth))
}

struct TopicState {
    name: String,
    /// Log time of the last message stored, for `--throttle`.
    last_stored: Option<u64>,
    written: u64,
    drops: u64,
    done: bool,
}

/// Writes a recording. Single-threaded: the writer thread owns it and feeds it from the
/// [`crate::RecordQueue`].
pub struct Recorder {
    opts: RecordOptions,
    naming: Naming,
    /// The split and retention rule's bounds (`--split`, `--max-splits`).
    policy: Rosbag2Options,
    /// Split files closed by splitting, oldest first, for `--max-splits` ([`Layout::Files`]).
    closed: VecDeque<PathBuf>,
    disk: DiskGuard,
    file: Option<Output>,
    split_index: usize,
    /// rosbag's `start_time_`: where the current duration period starts.
    period_start_ns: u64,
    start_ns: u64,
    next_key: u32,
    conns: BTreeMap<ConnKey, ConnState>,
    topics: Vec<TopicState>,
    topic_index: HashMap<String, usize>,
    latched: BTreeMap<LatchId, (ConnKey, VecDeque<Vec<u8>>)>,
    /// Drops per topic since the current file was opened.
    file_drops: BTreeMap<String, u64>,
    /// Drops noted for keys not added yet (the queue counted them before the writer saw the
    /// connection).
    orphan_drops: BTreeMap<ConnKey, u64>,
    /// Encoding of the first connection, used for the drop report.
    encoding: Option<String>,
    files: Vec<PathBuf>,
    deleted: Vec<PathBuf>,
    closed_bytes: u64,
    stopped: Option<StopReason>,
    notices: Vec<Notice>,
}

impl Recorder {
    /// Checks free space and opens the first file. `now_ns` is the current time in the clock
    /// the log times use (wall time when live): duration periods start there and `-o` names
    /// take their date from it.
    pub fn create(opts: RecordOptions, now_ns: u64) -> Result<Recorder, RecordError> {
        Self::create_with_probe(opts, now_ns, Box::new(free_space))
    }

    /// [`Recorder::create`] measuring free space with `probe` instead of statvfs.
    pub fn create_with_probe(opts: RecordOptions, now_ns: u64, probe: SpaceProbe) -> Result<Recorder, RecordError> {
        let naming = Naming::new(&opts.output, opts.format, opts.split.is_some())?;
        let first = match (&opts.layout, &opts.output) {
            (Layout::Rosbag2Dir, OutputName::Exact(dir)) => dir.clone(),
            (Layout::Rosbag2Dir, OutputName::Prefix(_)) => return Err(RecordError::EmptyName),
            (Layout::Files, _) => naming.target(0, now_ns),
        };
        let dir = match first.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut disk = DiskGuard::new(dir.clone(), opts.min_space, opts.disk_check_bytes, probe, now_ns);
        let mut notices = Vec::new();
        match disk.measure().map_err(|e| RecordError::io(&dir, e))? {
            Space::TooLow { free } => return Err(RecordError::LowDiskSpace { dir, free, required: opts.min_space }),
            Space::Low { free } => notices.push(Notice::LowSpace { dir, free, required: opts.min_space }),
            Space::Enough | Space::Unknown(_) => {}
        }
        let split = opts.split.unwrap_or_default();
        let policy = Rosbag2Options {
            max_file_size: split.max_bytes,
            max_file_duration_ns: split.max_duration_ns,
            max_files: opts.max_splits.filter(|&m| m > 0),
            ..Rosbag2Options::default()
        };
        let mut r = Recorder {
            policy,
            closed: VecDeque::new(),
            naming,
            disk,
            file: None,
            split_index: 0,
            period_start_ns: now_ns,
            start_ns: now_ns,
            next_key: 0,
            conns: BTreeMap::new(),
            topics: Vec::new(),
            topic_index: HashMap::new(),
            latched: BTreeMap::new(),
            file_drops: BTreeMap::new(),
            orphan_drops: BTreeMap::new(),
            encoding: None,
            files: Vec::new(),
            deleted: Vec::new(),
            closed_bytes: 0,
            stopped: None,
            notices,
            opts,
        };
        r.open(now_ns)?;
        Ok(r)
    }

    /// Adds a connection under the next free key. `metadata["latching"] == "1"` marks a
    /// latched publisher.
    pub fn add_connection(&mut self, conn: Connection) -> Result<ConnKey, RecordError> {
        let key = ConnKey(self.next_key);
        self.add_connection_with_key(key, conn)?;
        Ok(key)
    }

    /// Adds a connection under a key chosen elsewhere (by [`crate::RecordQueue::register`]).
    pub fn add_connection_with_key(&mut self, key: ConnKey, conn: Connection) -> Result<(), RecordError> {
        if self.conns.contains_key(&key) {
            return Err(RecordError::KeyInUse { key, topic: conn.topic });
        }
        if self.opts.format == Format::Ros1 {
            if let Some(other) =
                self.conns.values().find(|c| c.conn.topic == conn.topic && c.conn.message_type != conn.message_type)
            {
                return Err(RecordError::TypeConflict {
                    topic: conn.topic,
                    message_type: conn.message_type,
                    existing: other.conn.message_type.clone(),
                });
            }
        }
        let topic = match self.topic_index.get(&conn.topic) {
            Some(&i) => i,
            None => {
                self.topics.push(TopicState {
                    name: conn.topic.clone(),
                    last_stored: None,
                    written: 0,
                    drops: 0,
                    done: false,
                });
                self.topic_index.insert(conn.topic.clone(), self.topics.len() - 1);
                self.topics.len() - 1
            }
        };
        let latch = match self.opts.repeat_topics.get(&conn.topic) {
            Some(&depth) => Some((LatchId::Key(key), depth.max(1))),
            None if self.opts.repeat_latched => latch_of(key, &conn),
            None => None,
        };
        self.encoding.get_or_insert_with(|| conn.encoding.clone());
        if let Some(file) = self.file.as_mut() {
            file.announce(Slot::Conn(key), &conn)?;
        }
        self.conns.insert(key, ConnState { conn, topic, latch });
        self.next_key = self.next_key.max(key.0.saturating_add(1));
        if let Some(n) = self.orphan_drops.remove(&key) {
            self.note_drops(key, n);
        }
        Ok(())
    }

    /// Stores one message received at `log_time_ns` on `key`.
    pub fn write(&mut self, key: ConnKey, log_time_ns: u64, data: &[u8]) -> Result<WriteOutcome, RecordError> {
        if let Some(r) = &self.stopped {
            return Ok(WriteOutcome::Stopped(r.clone()));
        }
        let c = self.conns.get(&key).ok_or(RecordError::UnknownConnection { key })?;
        let (topic, latch) = (c.topic, c.latch.clone());
        if self.topics[topic].done {
            return Ok(WriteOutcome::Ignored);
        }
        if let Some(&period) = self.opts.throttle_ns.get(&self.topics[topic].name) {
            let last = &mut self.topics[topic].last_stored;
            if last.is_some_and(|l| log_time_ns.saturating_sub(l) < period) {
                return Ok(WriteOutcome::Throttled);
            }
            *last = Some(log_time_ns);
        }
        if let Some(stop) = self.check_bounds(log_time_ns, true)? {
            return Ok(self.stop(stop));
        }
        if let Some(stop) = self.check_disk(log_time_ns) {
            return Ok(self.stop(stop));
        }
        self.store(key, log_time_ns, data)?;
        if let Some((id, depth)) = latch {
            let (kept_key, kept) = self.latched.entry(id).or_insert_with(|| (key, VecDeque::new()));
            *kept_key = key;
            if kept.len() >= depth {
                kept.pop_front();
            }
            kept.push_back(data.to_vec());
        }
        let t = &mut self.topics[topic];
        t.written += 1;
        match self.opts.limit_per_topic.filter(|&l| l > 0) {
            Some(limit) if t.written >= limit => {
                t.done = true;
                if self.topics.iter().all(|t| t.done) {
                    Ok(WriteOutcome::AllLimitsReached)
                } else {
                    Ok(WriteOutcome::LimitReached)
                }
            }
            _ => Ok(WriteOutcome::Written),
        }
    }

    /// Applies one entry taken from the [`crate::RecordQueue`]: adds a connection or writes a
    /// message (returning its outcome).
    pub fn apply(&mut self, item: Queued) -> Result<Option<WriteOutcome>, RecordError> {
        match item {
            Queued::Connection { key, connection } => self.add_connection_with_key(key, connection).map(|()| None),
            Queued::Message { key, receive_time_ns, data } => self.write(key, receive_time_ns, &data).map(Some),
        }
    }

    /// Periodic work while no message arrives: duration splits and stops, disk checks.
    /// Returns the reason when recording has ended.
    pub fn tick(&mut self, now_ns: u64) -> Result<Option<StopReason>, RecordError> {
        if self.stopped.is_none() {
            if let Some(stop) = self.check_bounds(now_ns, false)? {
                self.stop(stop);
            } else if let Some(stop) = self.check_disk(now_ns) {
                self.stop(stop);
            }
        }
        Ok(self.stopped.clone())
    }

    /// Closes the current file and goes on in the next one now (rosbag2's `split_bagfile`
    /// service), repeating latched messages at its head; `now_ns` stamps them and names the
    /// file. A file with nothing in it yet is kept: returns false then.
    pub fn split_now(&mut self, now_ns: u64) -> Result<bool, RecordError> {
        if self.stopped.is_some() || self.file.as_ref().and_then(Output::first_time).is_none() {
            return Ok(false);
        }
        self.rotate(now_ns)?;
        Ok(true)
    }

    /// Hands everything written so far to the OS (closes the open chunk, commits the open
    /// transaction), so a crash loses none of it. The pipeline calls it about once a second.
    pub fn checkpoint(&mut self) -> Result<(), RecordError> {
        match self.file.as_mut() {
            Some(f) => f.checkpoint(),
            None => Ok(()),
        }
    }

    /// Counts `n` messages of `key` dropped before reaching the recorder.
    pub fn note_drops(&mut self, key: ConnKey, n: u64) {
        if n == 0 {
            return;
        }
        match self.conns.get(&key) {
            Some(c) => {
                let t = &mut self.topics[c.topic];
                t.drops += n;
                *self.file_drops.entry(t.name.clone()).or_default() += n;
            }
            None => *self.orphan_drops.entry(key).or_default() += n,
        }
    }

    /// Closes the last file (writing the drop report) and leaves the notices of that
    /// ([`Notice::Closed`], [`Notice::FileClosed`]) to [`Recorder::take_notices`]; what
    /// [`Recorder::finish`] then reports is the same.
    pub fn close(&mut self) -> Result<(), RecordError> {
        self.close_current(false)
    }

    /// Closes the last file (writing the drop report) and says what was recorded.
    pub fn finish(mut self) -> Result<RecordReport, RecordError> {
        self.close_current(false)?;
        let mut drops: BTreeMap<String, u64> =
            self.topics.iter().filter(|t| t.drops > 0).map(|t| (t.name.clone(), t.drops)).collect();
        let orphans: u64 = self.orphan_drops.values().sum();
        if orphans > 0 {
            *drops.entry("(unknown connection)".into()).or_default() += orphans;
        }
        Ok(RecordReport {
            files: self.files,
            deleted: self.deleted,
            messages: self.topics.iter().map(|t| (t.name.clone(), t.written)).collect(),
            drops,
            stopped: self.stopped,
            snapshots: 0,
        })
    }

    /// Notices since the last call.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// The final name of the file being written (the directory, for a rosbag2 directory).
    pub fn current_file(&self) -> Option<&Path> {
        self.file.as_ref().map(|f| match f {
            Output::File(f) => f.target.as_path(),
            Output::Dir(d) => d.path.as_path(),
        })
    }

    /// Why recording ended, once it has.
    pub fn stopped(&self) -> Option<&StopReason> {
        self.stopped.as_ref()
    }

    /// Messages stored so far on `topic`.
    pub fn message_count(&self, topic: &str) -> u64 {
        self.topic_index.get(topic).map_or(0, |&i| self.topics[i].written)
    }

    fn stop(&mut self, reason: StopReason) -> WriteOutcome {
        self.stopped = Some(reason.clone());
        WriteOutcome::Stopped(reason)
    }

    /// Splits or stops at `--size`/`--duration` before a message at `t` (rosbag checks size
    /// first, then duration). `with_size` is false when idle: the size has not changed.
    fn check_bounds(&mut self, t: u64, with_size: bool) -> Result<Option<StopReason>, RecordError> {
        if self.opts.split.is_some() {
            let size = match (with_size, self.file.as_mut()) {
                (true, Some(f)) => f.size(),
                _ => 0,
            };
            let policy = Rosbag2Options {
                max_file_size: self.policy.max_file_size.filter(|_| with_size),
                ..self.policy.clone()
            };
            match self.opts.layout {
                // rosbag: periods aligned to the start of the recording, empty files split too.
                Layout::Files => {
                    if policy.split_due(size, Some(self.period_start_ns), t) {
                        if let Some(d) = policy.max_file_duration_ns.filter(|&d| d > 0) {
                            let elapsed = t.saturating_sub(self.period_start_ns);
                            if elapsed > d {
                                self.period_start_ns += (elapsed - 1) / d * d;
                            }
                        }
                        self.rotate(t)?;
                    }
                }
                // rosbag2: a file's duration counts from its first message; an empty one stays.
                Layout::Rosbag2Dir => {
                    if policy.split_due(size, self.file.as_ref().and_then(Output::first_time), t) {
                        self.rotate(t)?;
                    }
                }
            }
        }
        if let Some(stop) = self.opts.stop_at {
            if let Some(max) = stop.max_bytes.filter(|_| with_size) {
                if self.closed_bytes + self.file.as_mut().map_or(0, Output::size) > max {
                    return Ok(Some(StopReason::MaxSize { bytes: max }));
                }
            }
            if let Some(d) = stop.max_duration_ns.filter(|&d| d > 0) {
                if t.saturating_sub(self.start_ns) > d {
                    return Ok(Some(StopReason::MaxDuration { ns: d }));
                }
            }
        }
        Ok(None)
    }

    fn check_disk(&mut self, t: u64) -> Option<StopReason> {
        let required = self.opts.min_space;
        match self.disk.check_if_due(t)? {
            Space::Enough => None,
            Space::Low { free } => {
                self.notices.push(Notice::LowSpace { dir: self.disk.dir.clone(), free, required });
                None
            }
            Space::TooLow { free } => Some(StopReason::LowDiskSpace { dir: self.disk.dir.clone(), free, required }),
            Space::Unknown(e) => {
                self.notices.push(Notice::Warning(format!("free space not measured: {e}")));
                None
            }
        }
    }

    fn store(&mut self, key: ConnKey, t: u64, data: &[u8]) -> Result<(), RecordError> {
        let conn = &self.conns.get(&key).ok_or(RecordError::UnknownConnection { key })?.conn;
        let file = self.file.as_mut().ok_or(RecordError::Closed)?;
        let bytes = file.write(Slot::Conn(key), conn, t, data)?;
        self.disk.wrote(bytes);
        Ok(())
    }

    /// Opens the file for the current split index; with `--repeat-latched`, writes the latched
    /// messages first, stamped `now_ns`.
    fn open(&mut self, now_ns: u64) -> Result<(), RecordError> {
        let (file, target) = match (&self.opts.layout, &self.opts.output) {
            (Layout::Rosbag2Dir, OutputName::Exact(dir)) => {
                let mut write = self.opts.write.clone();
                write.rosbag2.max_files = self.policy.max_files;
                (Output::Dir(DirBag::create(dir.clone(), self.opts.format, &write, self.opts.overwrite)?), dir.clone())
            }
            (Layout::Rosbag2Dir, OutputName::Prefix(_)) => return Err(RecordError::EmptyName),
            (Layout::Files, _) => {
                let target = self.naming.target(self.split_index, now_ns);
                let file = BagFile::create(target.clone(), self.opts.format, &self.opts.write, self.opts.overwrite)?;
                (Output::File(file), target)
            }
        };
        self.file = Some(file);
        self.notices.push(Notice::Opened(target));
        Ok(())
    }

    /// Writes what `--repeat-latched` kept at the head of a new file, stamped `now_ns`.
    fn repeat_latched(&mut self, now_ns: u64) -> Result<(), RecordError> {
        let latched: Vec<(ConnKey, Vec<u8>)> =
            self.latched.values().flat_map(|(key, kept)| kept.iter().map(move |d| (*key, d.clone()))).collect();
        for (key, data) in latched {
            self.store(key, now_ns, &data)?;
        }
        Ok(())
    }

    /// Ends the current file and goes on in the next: a new bag file, or the rosbag2 writer's
    /// next storage file.
    fn rotate(&mut self, now_ns: u64) -> Result<(), RecordError> {
        if matches!(self.file, Some(Output::Dir(_))) {
            self.write_drop_report()?;
            let Some(Output::Dir(dir)) = self.file.as_mut() else { return Ok(()) };
            let Some((closed, opened)) = dir.split()? else { return Ok(()) };
            for f in dir.take_uncompressed() {
                self.notices.push(Notice::Warning(format!(
                    "compression queue full (--compression-queue-size): {} stays uncompressed",
                    f.display()
                )));
            }
            self.notices.push(Notice::Split { closed, opened });
        } else {
            self.close_current(true)?;
            self.split_index += 1;
            self.open(now_ns)?;
        }
        self.repeat_latched(now_ns)
    }

    /// Writes the drop report (what the queue dropped while this file was open) into the
    /// current file, if there is anything to report.
    fn write_drop_report(&mut self) -> Result<(), RecordError> {
        if self.file_drops.is_empty() || !self.opts.drop_report {
            return Ok(());
        }
        let Some(file) = self.file.as_mut() else { return Ok(()) };
        let encoding = self.encoding.as_deref().unwrap_or("ros1");
        let text = drops_yaml(&self.file_drops);
        let conn = dropped::connection(encoding);
        let time = file.last_time().unwrap_or(self.period_start_ns);
        file.write(Slot::Dropped, &conn, time, &dropped::string_message(encoding, &text))?;
        self.file_drops.clear();
        Ok(())
    }

    /// Writes the drop report, closes (and renames) the file; after a split, applies
    /// `--max-splits` to the closed bag files.
    fn close_current(&mut self, by_split: bool) -> Result<(), RecordError> {
        self.write_drop_report()?;
        self.file_drops.clear();
        let Some(file) = self.file.take() else { return Ok(()) };
        let (path, len) = match file {
            Output::File(f) => f.close()?,
            Output::Dir(d) => {
                let last = d.current_file();
                let closed = d.close()?;
                self.notices.extend(last.map(Notice::FileClosed));
                closed
            }
        };
        self.closed_bytes += len;
        self.files.push(path.clone());
        self.notices.push(Notice::Closed(path.clone()));
        if by_split {
            self.closed.push_back(path);
            for _ in 0..self.policy.files_to_delete(self.closed.len()) {
                let Some(old) = self.closed.pop_front() else { break };
                match std::fs::remove_file(&old) {
                    Ok(()) => {
                        self.files.retain(|f| f != &old);
                        self.notices.push(Notice::Deleted(old.clone()));
                        self.deleted.push(old);
                    }
                    Err(e) => self.notices.push(Notice::Warning(format!("unable to remove {}: {e}", old.display()))),
                }
            }
        }
        Ok(())
    }
}
