//! Copying messages between bags: merge several inputs in time order, filter, rechunk,
//! recompress; and rewrite messages into another encoding (ROS 1 ⇄ CDR) or a newer definition
//! where the output needs it (see [`transcode`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use std::sync::Arc;

use rbag_storage::{Backend, Connection, Filter, Message, OutputPolicy, StorageOptions, StorageWriter, WriteOptions};

use crate::decode::{Decoders, TypeSources};
use crate::transcode::{self, ConnectionPlan, Targets};
use crate::{Bag, Error, Result};

/// How to convert.
#[derive(Default)]
pub struct ConvertOptions {
    /// Which messages are copied (topics, time window).
    pub filter: Filter,
    /// Keep only connections of these message types (`pkg/msg/Type` or `pkg/Type`: either
    /// spelling matches both). Empty: every type.
    pub topic_types: Vec<String>,
    /// Drop connections of these message types.
    pub exclude_topic_types: Vec<String>,
    /// What a cut with a start time does with latched state from before it.
    pub before_start: BeforeStart,
    /// Per topic, the highest rate (Hz) to keep: a message is kept when at least 1/Hz of log
    /// time has passed since the last one kept.
    pub throttle: BTreeMap<String, f64>,
    /// Chunking, compression and rosbag2 settings of the output.
    pub write: WriteOptions,
    /// The output backend's own settings (`key=value`, checked against its options).
    pub storage: StorageOptions,
    /// The serialization of MCAP output (`ros1` for the ros1 profile); `None` is `cdr`, as
    /// rosbag2 writes. ROS 1 bags hold `ros1` and SQLite3 `cdr` whatever this says.
    pub encoding: Option<String>,
    /// Where input types come from when the bag lacks them (for rewriting messages).
    pub types: TypeSources,
    /// Output types: standard definitions per dialect, and newer ones to migrate to.
    pub targets: Targets,
    /// Replace an existing output, if it is provably a bag, once the new one is complete.
    pub overwrite: bool,
    /// Leave MCAP attachments out (they are carried where the output holds them).
    pub exclude_attachments: bool,
    /// Leave MCAP metadata records out.
    pub exclude_metadata: bool,
}

/// What a conversion with a start time writes from before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BeforeStart {
    /// For each latched (ROS 1 `latching=1`) or transient-local connection, its newest
    /// messages before the start (up to its QoS depth), stamped with their own times: a cut
    /// without `/tf_static` or `/robot_description` cannot be used (ros2/rosbag2#1302).
    #[default]
    KeepLatched,
    /// Nothing: exactly the window.
    Drop,
}

impl ConvertOptions {
    /// Whether connection `c` is written at all (topic and type selection).
    pub fn accepts(&self, c: &Connection) -> bool {
        let ty = type_key(&c.message_type);
        self.filter.accepts_topic(&c.topic)
            && (self.topic_types.is_empty() || self.topic_types.iter().any(|t| type_key(t) == ty))
            && !self.exclude_topic_types.iter().any(|t| type_key(t) == ty)
    }
}

/// A type name with ROS 2's `/msg/` removed, so `pkg/msg/Type` and `pkg/Type` compare equal.
fn type_key(name: &str) -> String {
    name.replacen("/msg/", "/", 1)
}

/// One output of [`convert_many`].
pub struct Output {
    /// The bag to write.
    pub path: PathBuf,
    /// Its storage (see [`storage_for`](crate::storage_for)).
    pub storage: Arc<dyn Backend>,
    /// What goes into it, and how.
    pub options: ConvertOptions,
}

/// The encoding a connection's messages get in `storage`: the one asked for where the storage
/// holds it, else the storage's default (its first: ROS 1 bags ros1, SQLite3 and MCAP cdr, as
/// rosbag2 writes); a storage that holds any encoding keeps the input's.
fn output_encoding(storage: &dyn Backend, wanted: Option<&str>, input: &str) -> String {
    let held = storage.capabilities().encodings;
    match wanted {
        Some(w) if held.is_empty() || held.contains(&w) => w.to_string(),
        _ => held.first().copied().unwrap_or(input).to_string(),
    }
}

/// A topic left out of the output, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The topic.
    pub topic: String,
    /// Why it could not be written.
    pub reason: String,
    /// Messages left out.
    pub messages: u64,
}

/// What a conversion did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConvertReport {
    /// The bag written.
    pub output: PathBuf,
    /// Messages written.
    pub messages_written: u64,
    /// Connections written (identical ones from several inputs count once).
    pub connections_written: u64,
    /// Messages decoded and re-encoded (another encoding, or a migrated definition).
    pub messages_rewritten: u64,
    /// Topics left out, and why.
    pub skipped: Vec<Skipped>,
    /// Latched messages from before the start time written (see [`BeforeStart`]).
    pub latched_kept: u64,
    /// Messages left out by `throttle`.
    pub throttled: u64,
    /// The files of a ROS 1 output split into several (`NAME_0.bag`, `NAME_1.bag`...); empty
    /// when `output` is the one file or directory written.
    pub files: Vec<PathBuf>,
    /// Messages left out by the [`Select`] (a filter expression).
    pub deselected: u64,
    /// Attachments carried into the output.
    pub attachments_written: u64,
    /// Metadata records carried into the output.
    pub metadata_written: u64,
    /// Attachments the output's storage cannot hold.
    pub attachments_dropped: u64,
    /// Metadata records the output's storage cannot hold.
    pub metadata_dropped: u64,
}

/// Progress of a running conversion, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Messages read so far.
    pub messages_done: u64,
    /// Messages the filter may select, from the inputs' indexes (an upper bound).
    pub messages_total: u64,
    /// Payload bytes read so far.
    pub bytes_done: u64,
    /// Payload bytes of the messages the filter may select, from the inputs' indexes (exact
    /// for SQLite3, estimated for ROS 1 and MCAP); 0 when an input cannot tell (a remote ROS 1
    /// bag). A window makes it an upper bound, as `messages_total`.
    pub bytes_total: u64,
}

/// Decides, message by message, which messages a conversion writes (`rbag filter`'s
/// expression). Called in log-time order, after the topic and time filters.
pub trait Select {
    /// Whether to write `msg`, read from `inputs[input]` (which is `bag`) on `connection`.
    fn select(&mut self, input: usize, bag: &Bag, connection: &Connection, msg: &Message) -> Result<bool>;
}

/// Writes every message.
pub struct SelectAll;

impl Select for SelectAll {
    fn select(&mut self, _: usize, _: &Bag, _: &Connection, _: &Message) -> Result<bool> {
        Ok(true)
    }
}

/// Converts `inputs` (already opened) into a new bag at `output` in `storage` (see
/// [`storage_for`](crate::storage_for)).
///
/// Messages from all inputs are merged by log time; ties keep input order, then each input's
/// own order. Identical connections from different inputs are written once.
pub fn convert(
    inputs: &[Bag],
    output: &Path,
    storage: &Arc<dyn Backend>,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<ConvertReport> {
    convert_selecting(inputs, output, storage, options, &mut SelectAll, progress)
}

/// [`convert`], writing only the messages `select` accepts.
pub fn convert_selecting(
    inputs: &[Bag],
    output: &Path,
    storage: &Arc<dyn Backend>,
    options: &ConvertOptions,
    select: &mut dyn Select,
    progress: &mut dyn FnMut(Progress),
) -> Result<ConvertReport> {
    let mut sinks = vec![Sink::plan(inputs, output, storage, options)?];
    run(inputs, &mut sinks, select, progress)?;
    Ok(sinks.pop().map(|s| s.report).unwrap_or_default())
}

/// Writes several outputs in one pass over `inputs` (rosbag2's output-options YAML), each
/// with its own selection and settings. Every output is checked and planned before any is
/// created; a failure leaves none of them behind.
pub fn convert_many(
    inputs: &[Bag],
    outputs: &[Output],
    select: &mut dyn Select,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<ConvertReport>> {
    for (i, a) in outputs.iter().enumerate() {
        if outputs[..i].iter().any(|b| b.path == a.path) {
            return Err(rbag_storage::Error::UnsafeOutput {
                path: a.path.clone(),
                reason: "it is named twice among the outputs".into(),
            }
            .into());
        }
    }
    let mut sinks =
        outputs.iter().map(|o| Sink::plan(inputs, &o.path, &o.storage, &o.options)).collect::<Result<Vec<_>>>()?;
    run(inputs, &mut sinks, select, progress)?;
    Ok(sinks.into_iter().map(|s| s.report).collect())
}

/// One output being written: its options, per-connection plans and ids, and counts.
struct Sink<'o> {
    options: &'o ConvertOptions,
    storage: &'o Arc<dyn Backend>,
    policy: OutputPolicy,
    plans: HashMap<(usize, u32), ConnectionPlan>,
    decoders: Vec<Decoders>,
    writer: Option<Box<dyn StorageWriter>>,
    ids: HashMap<(usize, u32), u32>,
    /// Per throttled topic: the least time between kept messages, and the last kept.
    throttle: HashMap<String, (u64, Option<u64>)>,
    skipped: BTreeMap<String, Skipped>,
    report: ConvertReport,
    buf: Vec<u8>,
    /// Payload bytes in the current file, and its first log time (ROS 1 splits).
    file_bytes: u64,
    file_start: Option<u64>,
    /// Per latched connection, its newest messages with their order, repeated at each ROS 1
    /// split.
    kept: HashMap<(usize, u32), VecDeque<(u64, Message)>>,
    kept_seq: u64,
}

impl<'o> Sink<'o> {
    /// Checks the output and decides per connection, before anything is created, so a type
    /// that cannot be converted fails without leaving a half-written bag.
    fn plan(inputs: &[Bag], output: &Path, storage: &'o Arc<dyn Backend>, options: &'o ConvertOptions) -> Result<Self> {
        // Refuse an output that is, holds or sits inside an input before any work is done; the
        // writer checks again when it creates the output.
        let policy = OutputPolicy {
            inputs: inputs.iter().map(|b| b.path().to_path_buf()).collect(),
            replace: options.overwrite,
        };
        rbag_storage::output::check(output, &policy)?;
        let mut decoders: Vec<Decoders> = inputs.iter().map(|_| Decoders::new(options.types.clone())).collect();
        let mut plans = HashMap::new();
        let ros1_only = storage.capabilities().encodings == ["ros1"];
        for (i, r) in inputs.iter().enumerate() {
            let info = r.storage_info()?;
            for c in r.connections().iter().filter(|c| options.accepts(c)) {
                let plan = if info.undeclared.contains_key(&c.id) {
                    // No type to decode with: copied raw where the output takes a message with
                    // no type (rosbag2); a ROS 1 bag needs one.
                    if ros1_only {
                        ConnectionPlan::Skip(
                            "its connection is undeclared in the input, and a ROS 1 bag needs a message type".into(),
                        )
                    } else {
                        ConnectionPlan::Copy
                    }
                } else if !matches!(c.encoding.as_str(), "ros1" | "cdr") {
                    // An encoding rbag cannot decode (protobuf, json...): storage-only
                    // conversion copies its bytes wherever the storage holds any encoding.
                    if ros1_only {
                        ConnectionPlan::Skip(format!("a ROS 1 bag holds only ros1 messages, not {:?}", c.encoding))
                    } else {
                        ConnectionPlan::Copy
                    }
                } else {
                    let out_encoding = output_encoding(storage.as_ref(), options.encoding.as_deref(), &c.encoding);
                    let first = if out_encoding != c.encoding || options.targets.migrates() {
                        crate::decode::first_message(r.reader(), c)?
                    } else {
                        None
                    };
                    transcode::plan(c, &out_encoding, first.as_deref(), &mut decoders[i], &options.targets)
                        .map_err(|source| Error::decode_in(r.path(), source))?
                };
                plans.insert((i, c.id), plan);
            }
        }
        let throttle =
            options.throttle.iter().map(|(topic, hz)| (topic.clone(), ((1e9 / hz).round() as u64, None))).collect();
        Ok(Sink {
            options,
            storage,
            policy,
            plans,
            decoders,
            writer: None,
            ids: HashMap::new(),
            throttle,
            skipped: BTreeMap::new(),
            report: ConvertReport { output: output.to_path_buf(), ..ConvertReport::default() },
            buf: Vec::new(),
            file_bytes: 0,
            file_start: None,
            kept: HashMap::new(),
            kept_seq: 0,
        })
    }

    /// Creates the output and adds its connections (identical ones from several inputs once).
    fn create(&mut self, inputs: &[Bag]) -> Result<()> {
        let o = self.options;
        if self.splits_ros1() {
            self.report.files.push(split_name(&self.report.output, 0));
        }
        let path = self.report.files.last().cloned().unwrap_or_else(|| self.report.output.clone());
        let mut writer = self.open_file(inputs, &path)?;
        let extras = crate::extras::ExtrasOptions {
            exclude_attachments: o.exclude_attachments,
            exclude_metadata: o.exclude_metadata,
        };
        let carried = crate::extras::copy(inputs, writer.as_mut(), &extras)?;
        self.report.attachments_written = carried.attachments_written;
        self.report.metadata_written = carried.metadata_written;
        self.report.attachments_dropped = carried.attachments_dropped;
        self.report.metadata_dropped = carried.metadata_dropped;
        self.writer = Some(writer);
        Ok(())
    }

    /// Creates one output file and adds its connections (identical ones from several inputs
    /// once), recording their ids.
    fn open_file(&mut self, inputs: &[Bag], path: &Path) -> Result<Box<dyn StorageWriter>> {
        let o = self.options;
        let mut writer = rbag_storage::create_named(path, self.storage, &o.write, &o.storage, &self.policy)?;
        let mut written: Vec<(Connection, u32)> = Vec::new();
        for (i, r) in inputs.iter().enumerate() {
            for c in r.connections().iter().filter(|c| o.accepts(c)) {
                let out = match &self.plans[&(i, c.id)] {
                    ConnectionPlan::Copy => c,
                    ConnectionPlan::Rewrite(rw) => &rw.target,
                    ConnectionPlan::Skip(reason) => {
                        self.skipped.entry(c.topic.clone()).or_insert_with(|| Skipped {
                            topic: c.topic.clone(),
                            reason: reason.clone(),
                            messages: 0,
                        });
                        continue;
                    }
                };
                let key = Connection { id: 0, ..out.clone() };
                let id = match written.iter().find(|(k, _)| *k == key) {
                    Some(&(_, id)) => id,
                    None => {
                        let id = writer.add_connection(out).map_err(|e| e.in_file(inputs[i].path()))?;
                        written.push((key, id));
                        id
                    }
                };
                self.ids.insert((i, c.id), id);
            }
        }
        self.report.connections_written = written.len() as u64;
        Ok(writer)
    }

    /// Whether this output is a ROS 1 bag split into several files (`-b`/`-d`): rbag splits
    /// those itself, as `rosbag record --split` does; rosbag2 writers split their own files.
    fn splits_ros1(&self) -> bool {
        let r = &self.options.write.rosbag2;
        self.storage.capabilities().encodings == ["ros1"]
            && (r.max_file_size.is_some() || r.max_file_duration_ns.is_some())
    }

    /// Before writing a message at `log_time`: ends the current ROS 1 file and starts the next
    /// when it is due, writing the kept latched messages at its head (`--repeat-latched`).
    fn split_if_due(&mut self, inputs: &[Bag], log_time: u64) -> Result<()> {
        if !self.splits_ros1() || !self.options.write.rosbag2.split_due(self.file_bytes, self.file_start, log_time) {
            return Ok(());
        }
        if let Some(w) = self.writer.take() {
            w.finish()?;
        }
        let path = split_name(&self.report.output, self.report.files.len());
        let writer = self.open_file(inputs, &path)?;
        self.report.files.push(path);
        self.writer = Some(writer);
        self.file_bytes = 0;
        self.file_start = None;
        let mut repeats: Vec<(u64, usize, Message)> =
            self.kept.iter().flat_map(|((i, _), q)| q.iter().map(move |(n, m)| (*n, *i, m.clone()))).collect();
        repeats.sort_by_key(|r| r.0);
        for (_, i, msg) in repeats {
            let conn = inputs[i].connection(msg.connection).expect("kept from its own bag").clone();
            self.write_here(inputs, i, &conn, &msg)?;
        }
        Ok(())
    }

    /// Keeps the newest messages of latched connections for repeating at each ROS 1 split.
    fn keep_latched(&mut self, i: usize, conn: &Connection, msg: &Message) {
        let r = &self.options.write.rosbag2;
        if !self.splits_ros1() {
            return;
        }
        let depth = match r.repeat_topics.get(&conn.topic) {
            Some(&d) => d.max(1),
            None if r.repeat_transient_local => match conn.latched_depth() {
                Some(d) => d,
                None => return,
            },
            None => return,
        };
        let n = self.kept_seq;
        self.kept_seq += 1;
        let q = self.kept.entry((i, msg.connection)).or_default();
        if q.len() == depth {
            q.pop_front();
        }
        q.push_back((n, msg.clone()));
    }

    /// The latched messages from before the start time that this output keeps, oldest first.
    fn latched_before_start(&self, inputs: &[Bag]) -> Result<Vec<(usize, Message)>> {
        let o = self.options;
        let Some(start) = o.filter.start.filter(|_| o.before_start == BeforeStart::KeepLatched) else {
            return Ok(Vec::new());
        };
        let mut depth: HashMap<(usize, u32), usize> = HashMap::new();
        let mut topics = BTreeSet::new();
        for (i, r) in inputs.iter().enumerate() {
            for c in r.connections().iter().filter(|c| o.accepts(c)) {
                if let (Some(d), Some(ConnectionPlan::Copy | ConnectionPlan::Rewrite(_))) =
                    (c.latched_depth(), self.plans.get(&(i, c.id)))
                {
                    depth.insert((i, c.id), d);
                    topics.insert(c.topic.clone());
                }
            }
        }
        if topics.is_empty() {
            return Ok(Vec::new());
        }
        let before = Filter { topics: topics.into_iter().collect(), end: Some(start), ..Filter::default() };
        let mut kept: HashMap<(usize, u32), VecDeque<(usize, Message)>> = HashMap::new();
        let mut order = 0usize;
        for item in crate::merged(inputs, &before)? {
            let (i, msg) = item?;
            let Some(&d) = depth.get(&(i, msg.connection)) else { continue };
            let q = kept.entry((i, msg.connection)).or_default();
            if q.len() == d {
                q.pop_front();
            }
            q.push_back((order, msg));
            order += 1;
        }
        let mut all: Vec<(usize, usize, Message)> =
            kept.into_iter().flat_map(|((i, _), q)| q.into_iter().map(move |(n, m)| (n, i, m))).collect();
        all.sort_by_key(|m| m.0);
        Ok(all.into_iter().map(|(_, i, m)| (i, m)).collect())
    }

    /// Whether the output takes `msg`'s topic and time.
    fn wants(&self, conn: &Connection, msg: &Message) -> bool {
        self.options.filter.accepts_time(msg.log_time) && self.options.accepts(conn)
    }

    /// Whether `throttle` leaves `msg` out (counted); otherwise it counts as the topic's last
    /// kept message.
    fn throttled(&mut self, conn: &Connection, msg: &Message) -> bool {
        let Some((period, last)) = self.throttle.get_mut(&conn.topic) else { return false };
        if last.is_some_and(|l| msg.log_time.saturating_sub(l) < *period) {
            self.report.throttled += 1;
            return true;
        }
        *last = Some(msg.log_time);
        false
    }

    /// Writes one message, rewritten where its plan says so, into the file it belongs in.
    fn write(&mut self, inputs: &[Bag], i: usize, conn: &Connection, msg: &Message) -> Result<()> {
        self.split_if_due(inputs, msg.log_time)?;
        // A file's duration counts from its first message, not the older repeated ones.
        self.file_start.get_or_insert(msg.log_time);
        if self.write_here(inputs, i, conn, msg)? {
            self.report.messages_written += 1;
        }
        self.keep_latched(i, conn, msg);
        Ok(())
    }

    /// Writes one message into the current file; false when its topic is skipped.
    fn write_here(&mut self, inputs: &[Bag], i: usize, conn: &Connection, msg: &Message) -> Result<bool> {
        self.file_bytes += msg.data.len() as u64;
        let writer = self.writer.as_mut().expect("created before writing");
        match self.plans.get(&(i, msg.connection)) {
            Some(ConnectionPlan::Rewrite(rw)) => {
                rw.apply(&mut self.decoders[i], msg.log_time, &msg.data, &mut self.buf)
                    .map_err(|source| Error::decode_in(inputs[i].path(), source))?;
                writer.write(self.ids[&(i, msg.connection)], msg.log_time, msg.publish_time, &self.buf)?;
                self.report.messages_rewritten += 1;
            }
            Some(ConnectionPlan::Skip(_)) => {
                if let Some(s) = self.skipped.get_mut(&conn.topic) {
                    s.messages += 1;
                }
                return Ok(false);
            }
            _ => {
                let id = *self
                    .ids
                    .get(&(i, msg.connection))
                    .ok_or(rbag_storage::Error::UnknownConnection { id: msg.connection })?;
                writer.write(id, msg.log_time, msg.publish_time, &msg.data)?;
            }
        }
        Ok(true)
    }

    fn finish(&mut self) -> Result<()> {
        if let Some(w) = self.writer.take() {
            w.finish()?;
        }
        self.report.skipped = std::mem::take(&mut self.skipped).into_values().collect();
        Ok(())
    }
}

/// The name of file `n` of a split ROS 1 output, as `rosbag record --split -O NAME.bag` names
/// them: `NAME_n.bag`.
fn split_name(output: &Path, n: usize) -> PathBuf {
    let stem = output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = output.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    output.with_file_name(format!("{stem}_{n}{ext}"))
}

/// The read every sink draws from: the union of their topics and time windows.
fn union_filter(inputs: &[Bag], sinks: &[Sink]) -> Option<Filter> {
    let mut topics = BTreeSet::new();
    let mut all = true;
    for r in inputs {
        for c in r.connections() {
            if sinks.iter().any(|s| s.options.accepts(c)) {
                topics.insert(c.topic.clone());
            } else {
                all = false;
            }
        }
    }
    if topics.is_empty() {
        return None;
    }
    let start =
        sinks.iter().map(|s| s.options.filter.start).collect::<Option<Vec<_>>>().and_then(|v| v.into_iter().min());
    let end = sinks.iter().map(|s| s.options.filter.end).collect::<Option<Vec<_>>>().and_then(|v| v.into_iter().max());
    let single =
        sinks.len() == 1 && sinks[0].options.topic_types.is_empty() && sinks[0].options.exclude_topic_types.is_empty();
    let topic_part = if single {
        // One output: its own filter keeps the undeclared stand-ins' treatment exact.
        let f = &sinks[0].options.filter;
        Filter {
            topics: f.topics.clone(),
            regex: f.regex.clone(),
            exclude_topics: f.exclude_topics.clone(),
            exclude_regex: f.exclude_regex.clone(),
            ..Filter::default()
        }
    } else if all {
        Filter::default()
    } else {
        Filter { topics: topics.into_iter().collect(), ..Filter::default() }
    };
    Some(Filter { start, end, ..topic_part })
}

/// Runs the sinks over the merged inputs.
fn run(inputs: &[Bag], sinks: &mut [Sink], select: &mut dyn Select, progress: &mut dyn FnMut(Progress)) -> Result<()> {
    let filter = union_filter(inputs, sinks);
    let mut at = Progress { messages_done: 0, messages_total: 0, bytes_done: 0, bytes_total: 0 };
    let mut sized = true;
    if filter.is_some() {
        for r in inputs {
            let info = r.storage_info()?;
            for c in r.connections() {
                if sinks.iter().any(|s| s.options.accepts(c)) {
                    let Some(s) = info.connections.get(&c.id) else { continue };
                    at.messages_total += s.message_count;
                    match s.data_bytes.or(s.estimated_bytes) {
                        Some(b) => at.bytes_total += b,
                        None => sized &= s.message_count == 0,
                    }
                }
            }
        }
    }
    if !sized {
        at.bytes_total = 0;
    }
    let latched = sinks.iter().map(|s| s.latched_before_start(inputs)).collect::<Result<Vec<_>>>()?;
    for s in sinks.iter_mut() {
        s.create(inputs)?;
    }
    for (s, kept) in sinks.iter_mut().zip(latched) {
        for (i, msg) in kept {
            let conn = inputs[i].connection(msg.connection).expect("read from its own bag");
            if select.select(i, &inputs[i], conn, &msg)? {
                s.write(inputs, i, conn, &msg)?;
                s.report.latched_kept += 1;
            } else {
                s.report.deselected += 1;
            }
        }
    }
    let mut reported = 0u64;
    if let Some(filter) = filter {
        for item in crate::merged(inputs, &filter)? {
            let (i, msg) = item?;
            let Some(conn) = inputs[i].connection(msg.connection) else {
                return Err(rbag_storage::Error::UnknownConnection { id: msg.connection }.into());
            };
            let mut chosen = None;
            for s in sinks.iter_mut() {
                if !s.wants(conn, &msg) {
                    continue;
                }
                let keep = match chosen {
                    Some(k) => k,
                    None => *chosen.insert(select.select(i, &inputs[i], conn, &msg)?),
                };
                if !keep {
                    s.report.deselected += 1;
                } else if !s.throttled(conn, &msg) {
                    s.write(inputs, i, conn, &msg)?;
                }
            }
            at.messages_done += 1;
            at.bytes_done += msg.data.len() as u64;
            // Every 1024 messages, or 16 MiB of large ones.
            if at.messages_done.is_multiple_of(1024) || at.bytes_done - reported >= 16 << 20 {
                reported = at.bytes_done;
                progress(at);
            }
        }
    }
    for s in sinks.iter_mut() {
        s.finish()?;
    }
    at.messages_total = at.messages_total.max(at.messages_done);
    if at.bytes_total > 0 {
        at.bytes_total = at.bytes_total.max(at.bytes_done);
    }
    progress(at);
    Ok(())
}
