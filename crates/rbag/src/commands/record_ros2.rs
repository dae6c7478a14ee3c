//! `rbag record --ros2`: record a live ROS 2 graph over DDS, with `ros2 bag record`'s flags.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rbag_ros2::qos::Overrides;
use rbag_ros2::record::{DefinitionHook, Log, Ros2RecordSpec, Ros2Recording};
use rbag_ros2::select::Ros2Selection;
use rbag_storage::rosbag2::{Rosbag2Writer, TYPE_HASH_KEY};
use rbag_storage::{Connection, Format, StorageWriter, WriteOptions};
use rbag_transport::snapshot::SnapshotBuffer;
use rbag_transport::{ConnKey, Popped, Queued, RecordQueue};

use super::middleware::MiddlewareArgs;
use super::rosbag2_args::Rosbag2Args;
use super::{control_services, keyboard, ros2, signals};
use crate::units::parse_size;
use crate::{Outcome, UsageError};

/// Record topics and services of a live ROS 2 graph into a rosbag2 bag, as `ros2 bag record`.
///
/// rbag joins the DDS domain ROS_DOMAIN_ID (Cyclone DDS, configured by CYCLONEDDS_URI; with
/// ROS_LOCALHOST_ONLY=1 or ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST it stays on this host),
/// discovers publishers as they appear, and stores every sample's serialized bytes as they
/// arrive: any type is recorded, known or not. Subscriptions ask for what all publishers of a
/// topic offer (reliable / transient-local only when all offer it). Ctrl-C (SIGINT), SIGTERM or
/// SIGHUP closes the bag and writes metadata.yaml. rosbag2's recorder services are served:
/// `/rosbag2_recorder/{pause,resume,is_paused,snapshot,split_bagfile}` (`--node-name` renames
/// the node).
#[derive(clap::Parser, Debug)]
#[command(
    name = "rbag record --ros2",
    after_help = "Exit codes: 0 ok, 1 error, 2 usage error, 3 recorded but messages were dropped (--max-cache-size)."
)]
pub struct Args {
    #[command(flatten)]
    pub middleware: MiddlewareArgs,
    /// Topics to record (as --topics).
    #[arg(value_name = "TOPIC")]
    pub positional: Vec<String>,
    /// Record every topic and service (not hidden ones).
    #[arg(short, long)]
    pub all: bool,
    /// Record every topic.
    #[arg(long)]
    pub all_topics: bool,
    /// Record every service (their `/_service_event` topics).
    #[arg(long)]
    pub all_services: bool,
    /// Topics to record.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// Services to record.
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub services: Vec<String>,
    /// Record only topics of these types (`pkg/msg/Type`).
    #[arg(long, num_args = 1.., value_name = "TYPE")]
    pub topic_types: Vec<String>,
    /// Record topics and services whose whole name matches this regular expression.
    #[arg(short = 'e', long, value_name = "REGEX")]
    pub regex: Option<String>,
    /// Leave out topics and services whose name matches this regular expression.
    #[arg(short = 'x', long, value_name = "REGEX")]
    pub exclude_regex: Option<String>,
    /// Leave out these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub exclude_topics: Vec<String>,
    /// Leave out topics of these types.
    #[arg(long, num_args = 1.., value_name = "TYPE")]
    pub exclude_topic_types: Vec<String>,
    /// Leave out these services.
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub exclude_services: Vec<String>,
    /// Also record topics that only have subscribers.
    #[arg(long)]
    pub include_unpublished_topics: bool,
    /// Leave out topics nobody subscribes to (recorded once a subscriber appears).
    #[arg(long)]
    pub ignore_leaf_topics: bool,
    /// The recorder's node name: its control services are /NAME/pause, /NAME/snapshot, ….
    #[arg(long, value_name = "NAME", default_value = "rosbag2_recorder")]
    pub node_name: String,
    /// Also record hidden topics (a name token starting with `_`).
    #[arg(long)]
    pub include_hidden_topics: bool,
    /// Bag directory to create (default: rosbag2_YYYY_MM_DD-HH_MM_SS).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Storage: mcap (default) or sqlite3.
    #[arg(short, long, value_name = "mcap|sqlite3", default_value = "mcap")]
    pub storage: String,
    /// Serialization format; only cdr is on the wire.
    #[arg(short = 'f', long, value_name = "cdr", default_value = "cdr")]
    pub serialization_format: String,
    /// Only record the topics present at start-up (discovery runs once).
    #[arg(long)]
    pub no_discovery: bool,
    /// How often to look for new topics, in milliseconds.
    #[arg(short = 'p', long, value_name = "MS", default_value = "100")]
    pub polling_interval: u64,
    /// Memory between the network and the disk (bytes, units allowed); when full the oldest
    /// messages are dropped and counted. 0: unbounded.
    #[arg(long, value_name = "BYTES", default_value = "100MiB", value_parser = parse_size)]
    pub max_cache_size: u64,
    #[command(flatten)]
    pub rosbag2: Rosbag2Args,
    /// rosbag2 compression format (zstd is the only one).
    #[arg(long, value_name = "zstd")]
    pub compression_format: Option<String>,
    /// QoS per topic instead of the adapted one (YAML: `topic: {reliability: reliable, ...}`).
    #[arg(long, value_name = "FILE")]
    pub qos_profile_overrides_path: Option<PathBuf>,
    /// Extra `KEY=VALUE` pairs stored in metadata.yaml's custom_data.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub custom_data: Vec<String>,
    /// Message definitions for types the bundled store lacks ([PKG=]DIR, repeatable).
    #[arg(long = "msg-path", value_name = "[PKG=]DIR")]
    pub msg_paths: Vec<String>,
    /// Drop (and count) samples larger than this (bytes, units allowed).
    #[arg(long, value_name = "BYTES", default_value = "1GiB", value_parser = parse_size)]
    pub max_sample_size: u64,
    /// Keep the last --max-cache-size bytes in memory and write them into the bag only on a
    /// trigger: SIGUSR1, or `s` on a terminal (rosbag2's ~/snapshot service).
    #[arg(long)]
    pub snapshot_mode: bool,
    /// Write the last messages of transient-local topics (up to their QoS depth) again at the
    /// start of each split file.
    #[arg(long)]
    pub repeat_transient_local: bool,
    /// Start paused: nothing is written until space is pressed (on a terminal).
    #[arg(long)]
    pub start_paused: bool,
    /// Do not read keys from the terminal.
    #[arg(long)]
    pub disable_keyboard_controls: bool,
    /// Replace an existing output directory.
    #[arg(long)]
    pub force: bool,
    /// Print only errors and the final summary.
    #[arg(short, long)]
    pub quiet: bool,
}

fn selection(args: &Args) -> Result<Ros2Selection> {
    let abs = |v: &[String]| -> BTreeSet<String> {
        v.iter().map(|t| if t.starts_with('/') { t.clone() } else { format!("/{t}") }).collect()
    };
    let mut topics = abs(&args.topics);
    topics.extend(abs(&args.positional));
    let sel = Ros2Selection {
        all_topics: args.all || args.all_topics,
        all_services: args.all || args.all_services,
        topics,
        services: abs(&args.services),
        exclude_topics: abs(&args.exclude_topics),
        exclude_services: abs(&args.exclude_services),
        include_hidden: args.include_hidden_topics,
        ..Ros2Selection::default()
    };
    let sel = sel
        .with_regex(args.regex.as_deref())
        .and_then(|s| s.with_exclude_regex(args.exclude_regex.as_deref()))
        .map_err(|e| UsageError(e.to_string()))?;
    if sel.is_empty() {
        return Err(UsageError(
            "rbag record --ros2: name topics (--topics, --services) or use -a, --all-topics, --all-services or -e"
                .into(),
        )
        .into());
    }
    Ok(sel)
}

/// rosbag2's default name: `rosbag2_YYYY_MM_DD-HH_MM_SS` in local time (rosbag's stamp,
/// punctuated as rosbag2 does).
fn default_output() -> PathBuf {
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let stamp = rbag_transport::record::local_stamp(wall);
    let p: Vec<&str> = stamp.split('-').collect();
    match p.as_slice() {
        [y, mo, d, h, mi, s] => PathBuf::from(format!("rosbag2_{y}_{mo}_{d}-{h}_{mi}_{s}")),
        _ => PathBuf::from(format!("rosbag2_{stamp}")),
    }
}

fn output_dir(args: &Args) -> Result<PathBuf> {
    let out = args.output.clone().unwrap_or_else(default_output);
    // A recording is written in place (a killed recorder's files must stay visible for
    // `rbag reindex`), so what --force replaces goes first: only a bag rbag could have written.
    let checked =
        rbag_storage::output::check(&out, &rbag_storage::OutputPolicy { inputs: Vec::new(), replace: args.force })
            .map_err(|e| match e {
                rbag_storage::Error::OutputExists { .. } => {
                    anyhow::anyhow!("output folder {} already exists; pass --force to replace it", out.display())
                }
                e => e.into(),
            })?;
    rbag_storage::output::discard(checked).with_context(|| format!("cannot replace {}", out.display()))?;
    Ok(out)
}

fn custom_data(args: &Args) -> Result<BTreeMap<String, String>> {
    args.custom_data
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| UsageError(format!("--custom-data {kv:?}: expected KEY=VALUE")).into())
        })
        .collect()
}

/// Definitions for recorded types: `--msg-path`, then the bundled store. An unknown type is
/// recorded without a definition.
fn definition_hook(msg_paths: &[String]) -> Result<DefinitionHook> {
    let (_, mut reg) = super::load_msg_dirs(msg_paths, "--msg-path")?;
    reg.fill_from(&super::store_ros2(rbag_msg::store::Distro::Jazzy));
    Ok(Box::new(move |conn: &mut Connection| {
        let schema = match rbag_msg::Schema::compile(&reg, &conn.message_type) {
            Ok(s) => s,
            Err(_) => {
                return Some(format!(
                    "type {} is unknown to rbag; recorded without a definition (give one with --msg-path when reading)",
                    conn.message_type
                ))
            }
        };
        conn.definition = rbag_msg::dialect::concatenated(&schema, &reg, &|_| None);
        conn.definition_encoding = "ros2msg".into();
        if !conn.metadata.contains_key(TYPE_HASH_KEY) {
            if let Ok(h) = reg.rihs01(&conn.message_type) {
                conn.metadata.insert(TYPE_HASH_KEY.into(), h);
            }
        }
        None
    }))
}

struct Written {
    messages: BTreeMap<String, u64>,
    drops: BTreeMap<String, u64>,
    snapshots: u64,
}

/// How often the writer hands what it wrote to the OS (closes the MCAP chunk, commits the
/// SQLite batch).
const CHECKPOINT: Duration = Duration::from_secs(1);

/// What the main loop tells the writer: `--start-paused` and the keyboard's pause, and
/// snapshot triggers (`--snapshot-mode`: SIGUSR1 or `s`).
#[derive(Default)]
pub(super) struct Controls {
    pub(super) paused: AtomicBool,
    pub(super) snapshots: AtomicU64,
    /// `~/split_bagfile` requests not yet carried out.
    pub(super) splits: AtomicU64,
}

/// Moves queued samples into the bag until the queue closes. In snapshot mode they go to a
/// ring of `snapshot_bytes` instead, written into the bag on each trigger.
fn write_loop(
    mut writer: Box<dyn StorageWriter>,
    queue: &RecordQueue,
    controls: &Controls,
    snapshot_bytes: Option<u64>,
) -> Result<Written> {
    let mut ids: BTreeMap<ConnKey, (u32, String)> = BTreeMap::new();
    let mut messages: BTreeMap<String, u64> = BTreeMap::new();
    let mut ring = snapshot_bytes.map(|b| SnapshotBuffer::new(None, Some(b)));
    let mut snapshots = 0;
    let mut write = |writer: &mut Box<dyn StorageWriter>,
                     ids: &BTreeMap<ConnKey, (u32, String)>,
                     key: ConnKey,
                     t: u64,
                     data: &[u8]|
     -> Result<()> {
        if let Some((id, topic)) = ids.get(&key) {
            writer.write(*id, t, t, data).with_context(|| format!("writing a message on {topic}"))?;
            *messages.entry(topic.clone()).or_default() += 1;
        }
        Ok(())
    };
    // Everything received more than CHECKPOINT ago is in the OS's hands, even after a quiet
    // spell: a crash then costs at most that much.
    let mut last_checkpoint = Instant::now();
    let mut dirty = false;
    loop {
        let popped = queue.pop(Duration::from_millis(100));
        if dirty && last_checkpoint.elapsed() >= CHECKPOINT {
            writer.checkpoint().context("handing the recording to the OS")?;
            (last_checkpoint, dirty) = (Instant::now(), false);
        }
        if controls.splits.swap(0, Ordering::SeqCst) > 0 {
            writer.split_now().context("splitting the bag")?;
        }
        if let Some(r) = ring.as_mut() {
            let due = controls.snapshots.swap(0, Ordering::SeqCst);
            if due > 0 {
                snapshots += due;
                for (key, t, data) in r.take() {
                    write(&mut writer, &ids, key, t, &data)?;
                    dirty = true;
                }
            }
        }
        match popped {
            Popped::Item(Queued::Connection { key, connection }) => {
                let id =
                    writer.add_connection(&connection).with_context(|| format!("adding topic {}", connection.topic))?;
                ids.insert(key, (id, connection.topic));
            }
            Popped::Item(Queued::Message { key, receive_time_ns, data }) => match ring.as_mut() {
                Some(r) => {
                    r.push(key, receive_time_ns, data);
                }
                None if controls.paused.load(Ordering::SeqCst) => {}
                None => {
                    write(&mut writer, &ids, key, receive_time_ns, &data)?;
                    dirty = true;
                }
            },
            Popped::Timeout => {}
            Popped::Closed => break,
        }
    }
    writer.finish().context("closing the bag")?;
    let drops = queue.drops().into_iter().filter_map(|(k, n)| ids.get(&k).map(|(_, t)| (t.clone(), n))).collect();
    Ok(Written { messages, drops, snapshots })
}

pub fn run(args: Args) -> Result<Outcome> {
    let sel = selection(&args)?;
    let format = match args.storage.as_str() {
        "mcap" => Format::Mcap,
        "sqlite3" => Format::Sqlite3,
        other => return Err(UsageError(format!("unknown storage {other:?}: use mcap or sqlite3")).into()),
    };
    if args.serialization_format != "cdr" {
        return Err(UsageError(format!("serialization format {:?}: ROS 2 sends cdr", args.serialization_format)).into());
    }
    if let Some(f) = args.compression_format.as_deref().filter(|f| *f != "zstd") {
        return Err(UsageError(format!("compression format {f:?}: rosbag2 compresses with zstd")).into());
    }
    if args.snapshot_mode && args.max_cache_size == 0 {
        return Err(UsageError("--snapshot-mode keeps --max-cache-size bytes: it must not be 0".into()).into());
    }
    let overrides = match &args.qos_profile_overrides_path {
        Some(p) => Overrides::load(p)?,
        None => Overrides::default(),
    };
    let mut rosbag2 = args.rosbag2.options(format)?;
    rosbag2.custom_data = custom_data(&args)?;
    rosbag2.repeat_transient_local = args.repeat_transient_local;
    let hook = definition_hook(&args.msg_paths)?;
    let out = output_dir(&args)?;
    let quiet = args.quiet;
    let log: Log = Arc::new(move |m: String| {
        if !quiet || m.starts_with("error") || m.starts_with("warning") {
            note!("{m}");
        }
    });
    signals::install();
    let participant = Arc::new(ros2::participant()?);
    // The writer checkpoints every second (CHECKPOINT), so a killed recorder loses about that.
    let write = WriteOptions { rosbag2, ..WriteOptions::default() };
    let writer = Rosbag2Writer::create(&out, format, &write).with_context(|| format!("creating {}", out.display()))?;
    // In snapshot mode the cache is the ring, in the writer; the queue in front of it only
    // smooths bursts.
    let queue_bytes = if args.snapshot_mode { None } else { (args.max_cache_size > 0).then_some(args.max_cache_size) };
    let queue = Arc::new(RecordQueue::new(queue_bytes));
    let controls = Arc::new(Controls::default());
    controls.paused.store(args.start_paused, Ordering::SeqCst);
    let snapshot_bytes = args.snapshot_mode.then_some(args.max_cache_size);
    let writer_thread = {
        let queue = queue.clone();
        let controls = controls.clone();
        std::thread::Builder::new().name("bag-writer".into()).spawn(move || {
            let r = write_loop(Box::new(writer), &queue, &controls, snapshot_bytes);
            if r.is_err() {
                queue.close();
            }
            r
        })?
    };
    let spec = Ros2RecordSpec {
        selection: sel,
        overrides,
        no_discovery: args.no_discovery,
        include_unpublished: args.include_unpublished_topics,
        ignore_leaf_topics: args.ignore_leaf_topics,
        topic_types: args.topic_types.iter().cloned().collect(),
        exclude_topic_types: args.exclude_topic_types.iter().cloned().collect(),
        max_sample_bytes: usize::try_from(args.max_sample_size).unwrap_or(usize::MAX),
    };
    let mut recording = Ros2Recording::new(participant.clone(), spec, queue.clone(), hook, log.clone())?;
    let services = control_services::recorder(&participant, &args.node_name, &controls, args.snapshot_mode, &log)?;
    log(format!("Recording to '{}' (domain {}).", out.display(), participant.domain()));
    if args.start_paused {
        log("Recording is paused: press space to start.".into());
    }
    let (keys_tx, keys) = mpsc::channel();
    let _raw = if args.disable_keyboard_controls { None } else { keyboard::start(keys_tx) };
    let poll = Duration::from_millis(args.polling_interval.max(1));
    let mut next = Instant::now();
    while !signals::stop_requested() && !queue.is_closed() {
        if Instant::now() >= next {
            recording.poll();
            next = Instant::now() + poll;
        }
        let snapshot_key = keys.try_iter().fold(false, |snap, k| match k {
            keyboard::Key::Space => {
                let paused = !controls.paused.fetch_xor(true, Ordering::SeqCst);
                log(if paused { "Recording paused.".into() } else { "Recording resumed.".into() });
                snap
            }
            keyboard::Key::Char('s') => true,
            _ => snap,
        });
        if (signals::take_usr1() || snapshot_key) && args.snapshot_mode {
            controls.snapshots.fetch_add(1, Ordering::SeqCst);
            log("Snapshot: writing the cache into the bag.".into());
        }
        std::thread::sleep(Duration::from_millis(10).min(poll));
    }
    drop(services);
    drop(recording);
    queue.close();
    let written = writer_thread.join().map_err(|_| anyhow::anyhow!("the bag writer thread panicked"))??;
    drop(participant);
    summarise(&out, &written, quiet)
}

fn summarise(out: &Path, w: &Written, quiet: bool) -> Result<Outcome> {
    if !quiet {
        note!(
            "Recording stopped; wrote {}{}.",
            out.display(),
            if w.snapshots > 0 { format!(" ({} snapshot(s))", w.snapshots) } else { String::new() }
        );
        for (topic, n) in &w.messages {
            note!("  {topic}: {n} message(s)");
        }
    }
    if w.drops.is_empty() {
        return Ok(Outcome::Ok);
    }
    for (topic, n) in &w.drops {
        note!("warning: {topic}: {n} message(s) dropped (--max-cache-size full)");
    }
    Ok(Outcome::Dropped)
}
