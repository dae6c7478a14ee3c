//! `rbag record --ros2`: record a live ROS 2 graph over DDS, with `ros2 bag record`'s flags.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};
use rbag_bag::{Format, WriteOptions};
use rbag_live::record::{
    Layout, OutputName, Overrides, PipelineOptions, RecordOptions, RecordSpec, RecorderSession, Ros2Join,
    Ros2RecordSpec, Ros2Selection, Ros2Source, SimClock, SnapshotOptions, Source, Split,
};

use super::middleware::MiddlewareArgs;
use super::rosbag2_args::Rosbag2Args;
use crate::{Outcome, UsageError};
use rbag_bag::units::parse_size;

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
    after_help = "Examples:\n  rbag record --ros2 -a -o run\n  rbag record --ros2 /imu /tf -s mcap --storage-preset-profile zstd_fast\n  rbag record --ros2 -a -d 60 --repeat-all-transient-local --throttle /camera/image_raw=5\n  rbag record --ros2 -a --snapshot-mode --max-cache-size 100000000\n\nExit codes: 0 ok, 1 error, 2 usage error, 3 recorded but messages were dropped (--max-cache-size)."
)]
pub struct Args {
    #[command(flatten)]
    pub middleware: MiddlewareArgs,
    #[command(flatten)]
    pub rmw: super::middleware::Ros2MiddlewareArgs,
    /// Topics to record (as --topics).
    #[arg(value_name = "TOPIC")]
    pub positional: Vec<String>,
    /// Record every topic, service and action (not hidden topics; actions as from Kilted).
    #[arg(short, long)]
    pub all: bool,
    /// Record every topic.
    #[arg(long)]
    pub all_topics: bool,
    /// Record every service (their `/_service_event` topics).
    #[arg(long)]
    pub all_services: bool,
    /// Record every action via its internal topics and service event topics
    /// (`NAME/_action/{feedback,status}`, `NAME/_action/{send_goal,cancel_goal,get_result}/_service_event`).
    #[arg(long)]
    pub all_actions: bool,
    /// Topics to record.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// Services to record.
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub services: Vec<String>,
    /// Actions to record (their five topics each).
    #[arg(long, num_args = 1.., value_name = "ACTION")]
    pub actions: Vec<String>,
    /// Record only topics of these types (`pkg/msg/Type`).
    #[arg(long, num_args = 1.., value_name = "TYPE")]
    pub topic_types: Vec<String>,
    /// Record topics, services and actions whose whole name matches this regular expression.
    #[arg(short = 'e', long, value_name = "REGEX")]
    pub regex: Option<String>,
    /// Leave out topics, services and actions whose name matches this regular expression.
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
    /// Leave out these actions (with -a, --all-actions or -e).
    #[arg(long, num_args = 1.., value_name = "ACTION")]
    pub exclude_actions: Vec<String>,
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
    /// Stamp messages with /clock's time (rosgraph_msgs/msg/Clock) instead of the wall
    /// clock; nothing is subscribed, so nothing written, until the first /clock message.
    #[arg(long)]
    pub use_sim_time: bool,
    /// Topics subscribed at start without waiting for discovery, with their types (YAML:
    /// `static_topics_and_types_list: [[/topic, pkg/msg/Type], ...]`); with no other topic
    /// selection, discovery is off.
    #[arg(long, value_name = "FILE")]
    pub static_topics_path: Option<PathBuf>,
    /// How often to look for new topics, in milliseconds.
    #[arg(short = 'p', long, value_name = "MS", default_value = "100")]
    pub polling_interval: u64,
    /// Memory between the network and the disk (bytes, units allowed); when full the oldest
    /// messages are dropped and counted. 0: unbounded.
    #[arg(long, value_name = "BYTES", default_value = "100MiB", value_parser = parse_size)]
    pub max_cache_size: u64,
    /// Seconds of messages the cache holds (Lyrical). In --snapshot-mode the ring keeps this
    /// span of log time, evicting older messages; normally rbag writes messages as they come,
    /// so none waits that long anyway. 0: no bound.
    #[arg(long, value_name = "SECONDS", default_value = "0", value_parser = parse_cache_duration)]
    pub max_cache_duration: f64,
    #[command(flatten)]
    pub rosbag2: Rosbag2Args,
    #[command(flatten)]
    pub direct_io: super::direct_io::DirectIoArgs,
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
    /// Store at most HZ messages a second of TOPIC: a message is stored when at least 1/HZ of
    /// log time has passed since the last one stored (repeatable; also spelled as in
    /// rosbag2's open pull request, --topic-throttle-frequency).
    #[arg(long, visible_alias = "topic-throttle-frequency", value_name = "TOPIC=HZ", value_parser = super::convert::parse_throttle)]
    pub throttle: Vec<(String, f64)>,
    /// Keep the last --max-cache-size bytes in memory and write them into the bag only on a
    /// trigger: SIGUSR1, or `s` on a terminal (rosbag2's ~/snapshot service).
    #[arg(long)]
    pub snapshot_mode: bool,
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
    /// What to print, as a ROS 2 node's logger level: debug, info (default), warn (as -q),
    /// error, fatal.
    #[arg(long, value_name = "LEVEL", value_enum)]
    pub log_level: Option<super::middleware::LogLevel>,
}

fn selection(args: &Args) -> Result<Ros2Selection> {
    let abs = |v: &[String]| -> BTreeSet<String> {
        v.iter().map(|t| if t.starts_with('/') { t.clone() } else { format!("/{t}") }).collect()
    };
    let mut topics = abs(&args.topics);
    topics.extend(abs(&args.positional));
    let all_actions = args.all || args.all_actions;
    // As ros2bag's record verb: excluding actions needs something that takes them wholesale.
    if !args.exclude_actions.is_empty() && !all_actions && args.regex.is_none() {
        return Err(UsageError("--exclude-actions needs -a/--all, --all-actions or -e/--regex".into()).into());
    }
    if all_actions && !args.actions.is_empty() {
        eprintln!("warning: --all or --all-actions records every action: --actions is ignored");
    }
    let sel = Ros2Selection {
        all_topics: args.all || args.all_topics,
        all_services: args.all || args.all_services,
        all_actions,
        topics,
        services: abs(&args.services),
        actions: if all_actions { BTreeSet::new() } else { abs(&args.actions) },
        exclude_topics: abs(&args.exclude_topics),
        exclude_services: abs(&args.exclude_services),
        exclude_actions: abs(&args.exclude_actions),
        include_hidden: args.include_hidden_topics,
        ..Ros2Selection::default()
    };
    let sel = sel
        .with_regex(args.regex.as_deref())
        .and_then(|s| s.with_exclude_regex(args.exclude_regex.as_deref()))
        .map_err(|e| UsageError(e.to_string()))?;
    // Static topics alone are a selection (rosbag2 then turns discovery off).
    if sel.is_empty() && args.static_topics_path.is_none() {
        return Err(UsageError(
            "rbag record --ros2: name topics (--topics, --services, --actions) or use -a, --all-topics, --all-services, --all-actions or -e"
                .into(),
        )
        .into());
    }
    Ok(sel)
}

/// rosbag2 takes 0 to 4294967295 seconds.
fn parse_cache_duration(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=4_294_967_295.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds from 0 to 4294967295")),
    }
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
    if args.use_sim_time && args.no_discovery {
        return Err(UsageError(
            "--use-sim-time waits for /clock through discovery: it cannot go with --no-discovery".into(),
        )
        .into());
    }
    let static_topics = match &args.static_topics_path {
        Some(p) => rbag_live::record::load_static_topics(p)?,
        None => Vec::new(),
    };
    if args.snapshot_mode && args.max_cache_size == 0 && args.max_cache_duration == 0.0 {
        return Err(UsageError(
            "--snapshot-mode keeps --max-cache-size bytes or --max-cache-duration seconds: one of them must not be 0"
                .into(),
        )
        .into());
    }
    let overrides = match &args.qos_profile_overrides_path {
        Some(p) => Overrides::load(p)?,
        None => Overrides::default(),
    };
    let mut rosbag2 = args.rosbag2.options(format)?;
    // The recorder repeats latched messages at the splits it makes; the storage must not too.
    rosbag2.repeat_transient_local = false;
    rosbag2.repeat_topics.clear();
    rosbag2.custom_data = custom_data(&args)?;
    rosbag2.check_split(format)?;
    let (_, mut definitions) = super::load_msg_dirs(&args.msg_paths, "--msg-path")?;
    definitions.fill_from(&super::store_ros2(rbag_bag::types::Distro::Jazzy));
    let first = args.output.clone().unwrap_or_else(|| rbag_live::record::default_dir_name(rbag_live::record::now_ns()));
    // Checked before joining the graph: a refused output costs no network.
    if first.exists() && !args.force {
        bail!("starting the recording: {}: output exists (use --force to replace it)", first.display());
    }
    let repeat_topics = args.rosbag2.repeat_topics()?;
    let middleware = args.rmw.choose()?;
    let level = super::middleware::LogLevel::of(args.log_level, args.quiet);
    let log = super::record::level_log(level);
    // The node and its services outlive each recording: `~/stop` then `~/record` starts another.
    let session = RecorderSession::new(args.start_paused, true);
    let join = Ros2Join::open(middleware, &args.node_name, &log)?;
    let _served = rbag_live::services::recorder(
        join.services().as_ref(),
        &args.node_name,
        session.clone(),
        args.snapshot_mode,
        &log,
    )?;
    if args.start_paused {
        log("Recording is paused: press space to start.".into());
    }
    let mut last = first.clone();
    let spec = |uri: Option<&str>| -> Result<RecordSpec> {
        // A `record` request names a directory, or takes the last one's name; rosbag2 (Lyrical)
        // appends (1), (2)… to a name in use.
        let dir = match uri {
            None => first.clone(),
            Some(u) => rbag_live::record::unused_dir_name(if u.is_empty() { &last } else { Path::new(u) }),
        };
        last = dir.clone();
        let output = RecordOptions {
            output: OutputName::Exact(dir),
            layout: Layout::Rosbag2Dir,
            format,
            split: Some(Split { max_bytes: rosbag2.max_file_size, max_duration_ns: rosbag2.max_file_duration_ns }),
            max_splits: rosbag2.max_files,
            repeat_latched: args.rosbag2.repeat_all(),
            repeat_topics: repeat_topics.clone(),
            throttle_ns: super::record::throttle_ns(&args.throttle),
            drop_report: false,
            min_space: 0,
            overwrite: args.force && uri.is_none(),
            write: WriteOptions {
                rosbag2: rosbag2.clone(),
                direct_io: args.direct_io.mode(),
                ..WriteOptions::default()
            },
            ..RecordOptions::default()
        };
        // In snapshot mode the cache is the ring; the queue in front of it only smooths bursts.
        let snapshot = SnapshotOptions {
            max_bytes: (args.max_cache_size > 0).then_some(args.max_cache_size),
            max_duration_ns: (args.max_cache_duration > 0.0).then_some((args.max_cache_duration * 1e9) as u64),
            ..SnapshotOptions::default()
        };
        let queue_bytes = (!args.snapshot_mode && args.max_cache_size > 0).then_some(args.max_cache_size);
        let sim_time = args.use_sim_time.then(|| std::sync::Arc::new(SimClock::default()));
        let ros2 = Ros2RecordSpec {
            selection: sel.clone(),
            overrides: overrides.clone(),
            no_discovery: args.no_discovery,
            include_unpublished: args.include_unpublished_topics,
            ignore_leaf_topics: args.ignore_leaf_topics,
            topic_types: args.topic_types.iter().cloned().collect(),
            exclude_topic_types: args.exclude_topic_types.iter().cloned().collect(),
            max_sample_bytes: usize::try_from(args.max_sample_size).unwrap_or(usize::MAX),
            sim_time: sim_time.clone(),
            static_topics: static_topics.clone(),
        };
        Ok(RecordSpec {
            output,
            pipeline: PipelineOptions {
                snapshot: args.snapshot_mode.then_some(snapshot),
                ..PipelineOptions::default()
            },
            queue_bytes,
            start_paused: session.start_paused(),
            source: Source::Ros2(Box::new(Ros2Source {
                polling: Duration::from_millis(args.polling_interval.max(1)),
                node: args.node_name.clone(),
                join: Some(join.clone()),
                discovery: session.discovery_switch(),
                ..Ros2Source::new(ros2, definitions.clone(), middleware)
            })),
            // -d splits follow /clock's time when idle too.
            clock: sim_time.as_ref().map(SimClock::as_now),
        })
    };
    let keys = !args.disable_keyboard_controls;
    super::record::drive_session(spec, &session, &log, level, keys, "--max-cache-size full")
}
