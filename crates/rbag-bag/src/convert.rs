//! Copying messages between bags: merge several inputs in time order, filter, rechunk,
//! recompress; and rewrite messages into another encoding (ROS 1 ⇄ CDR) or a newer definition
//! where the output needs it (see [`transcode`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use std::sync::Arc;

use rbag_storage::{Backend, Connection, Filter, Message, OutputPolicy, StorageOptions, WriteOptions};

use crate::decode::{Decoders, TypeSources};
use crate::transcode::{self, ConnectionPlan, Targets};
use crate::{Bag, Error, Result};

/// How to convert.
#[derive(Default)]
pub struct ConvertOptions {
    /// Which messages are copied (topics, time window).
    pub filter: Filter,
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
}

/// Progress of a running conversion, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Messages written so far.
    pub messages_done: u64,
    /// Messages the filter may select, from the inputs' indexes (an upper bound).
    pub messages_total: u64,
}

/// Decides, message by message, which messages a conversion writes (`rbag filter`'s
/// expression). Called in log-time order, after the topic and time filters.
pub trait Select {
    /// Whether to write `msg`, read from `inputs[input]` (which is `bag`) on `connection`.
    fn select(&mut self, input: usize, bag: &Bag, connection: &Connection, msg: &Message) -> Result<bool>;
}

/// Writes every message.
struct All;

impl Select for All {
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
    convert_selecting(inputs, output, storage, options, &mut All, progress)
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
    // Refuse an output that is, holds or sits inside an input before any work is done; the
    // writer checks again when it creates the output.
    let policy =
        OutputPolicy { inputs: inputs.iter().map(|b| b.path().to_path_buf()).collect(), replace: options.overwrite };
    rbag_storage::output::check(output, &policy)?;
    let mut total = 0;
    // Per input: the stand-in connections a lenient reader made for undeclared ones.
    let mut stand_ins: Vec<std::collections::BTreeSet<u32>> = Vec::with_capacity(inputs.len());
    for r in inputs {
        let info = r.storage_info()?;
        stand_ins.push(info.undeclared.keys().copied().filter(|&id| r.connection(id).is_some()).collect());
        for c in r.connections() {
            if options.filter.accepts_topic(&c.topic) {
                total += info.connections.get(&c.id).map_or(0, |s| s.message_count);
            }
        }
    }
    // Decide per connection before creating the output, so a type that cannot be converted
    // fails without leaving a half-written bag.
    let mut decoders: Vec<Decoders> = inputs.iter().map(|_| Decoders::new(options.types.clone())).collect();
    let mut plans: HashMap<(usize, u32), ConnectionPlan> = HashMap::new();
    for (i, r) in inputs.iter().enumerate() {
        for c in r.connections().iter().filter(|c| options.filter.accepts_topic(&c.topic)) {
            if stand_ins[i].contains(&c.id) {
                // No type to decode with: copied raw where the output takes a message with no
                // type (rosbag2); a ROS 1 bag needs one.
                let plan = if storage.capabilities().encodings == ["ros1"] {
                    ConnectionPlan::Skip(
                        "its connection is undeclared in the input, and a ROS 1 bag needs a message type".into(),
                    )
                } else {
                    ConnectionPlan::Copy
                };
                plans.insert((i, c.id), plan);
                continue;
            }
            let out_encoding = output_encoding(storage.as_ref(), options.encoding.as_deref(), &c.encoding);
            let first = if out_encoding != c.encoding || options.targets.migrates() {
                crate::decode::first_message(r.reader(), c)?
            } else {
                None
            };
            let plan = transcode::plan(c, &out_encoding, first.as_deref(), &mut decoders[i], &options.targets)
                .map_err(|source| Error::decode_in(r.path(), source))?;
            plans.insert((i, c.id), plan);
        }
    }
    let mut writer = rbag_storage::create_named(output, storage, &options.write, &options.storage, &policy)?;
    let mut ids: HashMap<(usize, u32), u32> = HashMap::new();
    let mut written: Vec<(Connection, u32)> = Vec::new();
    let mut skipped: BTreeMap<String, Skipped> = BTreeMap::new();
    for (i, r) in inputs.iter().enumerate() {
        for c in r.connections().iter().filter(|c| options.filter.accepts_topic(&c.topic)) {
            let out = match &plans[&(i, c.id)] {
                ConnectionPlan::Copy => c,
                ConnectionPlan::Rewrite(rw) => &rw.target,
                ConnectionPlan::Skip(reason) => {
                    skipped.entry(c.topic.clone()).or_insert_with(|| Skipped {
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
            ids.insert((i, c.id), id);
        }
    }

    let (mut done, mut rewritten) = (0u64, 0u64);
    let mut buf = Vec::new();
    for item in crate::merged(inputs, &options.filter)? {
        let (i, msg) = item?;
        let Some(conn) = inputs[i].connection(msg.connection) else {
            return Err(rbag_storage::Error::UnknownConnection { id: msg.connection }.into());
        };
        if !select.select(i, &inputs[i], conn, &msg)? {
            continue;
        }
        match plans.get(&(i, msg.connection)) {
            Some(ConnectionPlan::Rewrite(rw)) => {
                rw.apply(&mut decoders[i], msg.log_time, &msg.data, &mut buf)
                    .map_err(|source| Error::decode_in(inputs[i].path(), source))?;
                let id = ids[&(i, msg.connection)];
                writer.write(id, msg.log_time, msg.publish_time, &buf)?;
                rewritten += 1;
            }
            Some(ConnectionPlan::Skip(_)) => {
                if let Some(c) = inputs[i].connection(msg.connection) {
                    if let Some(s) = skipped.get_mut(&c.topic) {
                        s.messages += 1;
                    }
                }
                continue;
            }
            _ => {
                let id = *ids
                    .get(&(i, msg.connection))
                    .ok_or(rbag_storage::Error::UnknownConnection { id: msg.connection })?;
                writer.write(id, msg.log_time, msg.publish_time, &msg.data)?;
            }
        }
        done += 1;
        if done.is_multiple_of(1024) {
            progress(Progress { messages_done: done, messages_total: total });
        }
    }
    writer.finish()?;
    progress(Progress { messages_done: done, messages_total: total.max(done) });
    Ok(ConvertReport {
        output: output.to_path_buf(),
        messages_written: done,
        connections_written: written.len() as u64,
        messages_rewritten: rewritten,
        skipped: skipped.into_values().collect(),
    })
}
