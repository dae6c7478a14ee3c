//! `rbag record`: record a live ROS graph into a bag, as `rosbag record` does.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};

use anyhow::{bail, Result};
use rbag_bag::{Compression, Format, WriteOptions};
use rbag_live::record::{Log, RecordSpec, Recording, Ros1Source, Source};
use rbag_live::record::{OutputName, PipelineOptions, RecordOptions, RecordReport, SnapshotOptions, Split};

use super::middleware::{Middleware, MiddlewareArgs};
use super::{keyboard, signals};
use crate::{Outcome, UsageError};
use rbag_bag::units::{parse_duration, parse_size_in};

const MB: u64 = 1 << 20;
const KB: u64 = 1 << 10;

fn size_mb(s: &str) -> Result<u64, rbag_bag::units::UnitError> {
    parse_size_in(s, MB)
}

fn size_kb(s: &str) -> Result<u64, rbag_bag::units::UnitError> {
    parse_size_in(s, KB)
}

/// Record topics of a live ROS graph into a bag.
///
/// With `--ros1`, rbag joins the ROS 1 graph at ROS_MASTER_URI (starting an embedded master when
/// none answers, and saying so), subscribes to the selected topics and stores every message's
/// bytes as they arrive, with the publisher's connection header: nothing is deserialized.
/// Topics that appear later are picked up (`-a`, `-e`, `--node`). While recording, the bag is
/// `NAME.bag.active`; Ctrl-C (SIGINT), SIGTERM or SIGHUP closes it into a valid, indexed `NAME.bag`.
/// After a crash, `rbag reindex` repairs the `.active` file, losing at most the open chunk.
///
/// Sizes take units (`2GiB`); plain numbers are MB for --size/--buffsize/--min-space and KB for
/// --chunksize, as in rosbag. Durations take `s`, `m` or `h`. ROS remapping arguments
/// (`chatter:=/talk`, `__name:=rec`) are accepted among the topics.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rbag record -a -o run                      (run_<date>.bag; an embedded master when none runs)\n  rbag record /imu /tf -O imu.bag --lz4\n  rbag record -a --split --duration 5m --repeat-latched\n  rbag record -a --snapshot --snapshot-duration 30s   (SIGUSR1 or `s` writes the last 30 s)\n\nWith --ros2 (or ROS_VERSION=2) the flags are ros2 bag record's: see `rbag record --ros2 --help`.\n\nExit codes: 0 ok, 1 error, 2 usage error, 3 recorded but messages were dropped (counted on stderr and stored on /rbag/dropped)."
)]
pub struct Args {
    #[command(flatten)]
    pub middleware: MiddlewareArgs,
    /// Topics to record, and ROS remapping arguments (`from:=to`).
    #[arg(value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// A topic to record (the C++ recorder's form; repeatable).
    #[arg(long = "topic", value_name = "TOPIC", hide = true)]
    pub topic_flags: Vec<String>,
    /// Record all topics, including ones that appear later.
    #[arg(short, long)]
    pub all: bool,
    /// The TOPICs are regular expressions (matched against whole names).
    #[arg(short = 'e', long)]
    pub regex: bool,
    /// Leave out topics matching this regular expression (subtracts from -a and -e).
    #[arg(short = 'x', long = "exclude", value_name = "REGEX")]
    pub exclude: Option<String>,
    /// Record every topic this node subscribes to.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
    /// The bag to write: NAME.bag (`.bag` is added unless NAME ends with it, as rosbag's -O),
    /// or NAME.mcap with `-s mcap` or a `.mcap` name (MCAP's ros1 profile).
    #[arg(short = 'o', long = "output", visible_short_alias = 'O', visible_alias = "output-name", value_name = "NAME")]
    pub output: Option<PathBuf>,
    /// Name the bag PREFIX_YYYY-MM-DD-HH-MM-SS.bag (rosbag's `-o`).
    #[arg(long, value_name = "PREFIX", conflicts_with = "output")]
    pub output_prefix: Option<String>,
    /// Storage of the bag: ros1 or mcap (default: from the name's extension, else ros1).
    #[arg(short = 's', long, value_name = "ros1|mcap")]
    pub storage: Option<String>,
    /// Split the bag when --size or --duration is reached (`--split=SIZE` sets the size, as the
    /// C++ recorder takes it).
    #[arg(long, value_name = "SIZE", num_args = 0..=1, require_equals = true, default_missing_value = "0", value_parser = size_mb)]
    pub split: Option<u64>,
    /// Maximum size of each bag (plain number: MB). Without --split, stop at this size.
    #[arg(long, value_name = "SIZE", value_parser = size_mb)]
    pub size: Option<u64>,
    /// Maximum duration of each bag (`30`, `5m`, `1h`). Without --split, stop after it.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<u64>,
    /// Keep only the newest N split files, deleting the oldest.
    #[arg(long, value_name = "N", requires = "split")]
    pub max_splits: Option<usize>,
    /// Internal buffer between the network and the disk (plain number: MB; 0 = unlimited).
    /// When it is full the oldest message is dropped and counted.
    #[arg(short = 'b', long, value_name = "SIZE", default_value = "256", value_parser = size_mb)]
    pub buffsize: u64,
    /// Chunk size (plain number: KB).
    #[arg(long, value_name = "SIZE", default_value = "768", value_parser = size_kb)]
    pub chunksize: u64,
    #[command(flatten)]
    pub direct_io: super::direct_io::DirectIoArgs,
    /// Record at most NUM messages per topic, then stop when every topic has them.
    #[arg(short = 'l', long, value_name = "NUM")]
    pub limit: Option<u64>,
    /// Refuse to start, and stop cleanly, when less than SIZE is free on the output's disk
    /// (plain number: MB).
    #[arg(short = 'L', long, value_name = "SIZE", default_value = "1024", value_parser = size_mb)]
    pub min_space: u64,
    /// Compress chunks with bz2.
    #[arg(short = 'j', long, conflicts_with = "lz4")]
    pub bz2: bool,
    /// Compress chunks with LZ4.
    #[arg(long)]
    pub lz4: bool,
    /// Publish the bag's name (std_msgs/String) on `begin_write` when each file is opened, as
    /// rosbag -p does.
    #[arg(short = 'p', long)]
    pub publish: bool,
    /// Ask publishers for TCP_NODELAY.
    #[arg(long)]
    pub tcpnodelay: bool,
    /// UDPROS transport hint: not supported (rbag records over TCPROS only).
    #[arg(long, hide = true)]
    pub udp: bool,
    /// Write the last message of each latched topic at the start of every split.
    #[arg(long)]
    pub repeat_latched: bool,
    /// Store at most HZ messages a second of TOPIC: a message is stored when at least 1/HZ of
    /// log time has passed since the last one stored (repeatable).
    #[arg(long, value_name = "TOPIC=HZ", value_parser = super::convert::parse_throttle)]
    pub throttle: Vec<(String, f64)>,
    /// Keep only the last --snapshot-duration/--snapshot-size in memory and write it to a new
    /// bag on a trigger: SIGUSR1, a message on --snapshot-topic, or `s` on a terminal.
    #[arg(long)]
    pub snapshot: bool,
    /// How much time the snapshot ring buffer holds.
    #[arg(long, value_name = "DURATION", default_value = "30", value_parser = parse_duration, requires = "snapshot")]
    pub snapshot_duration: u64,
    /// How many bytes the snapshot ring buffer holds (plain number: MB).
    #[arg(long, value_name = "SIZE", value_parser = size_mb, requires = "snapshot")]
    pub snapshot_size: Option<u64>,
    /// Any message on this topic triggers a snapshot.
    #[arg(long, value_name = "TOPIC", requires = "snapshot")]
    pub snapshot_topic: Option<String>,
    /// Replace existing files with the names the recording uses.
    #[arg(long)]
    pub force: bool,
    /// Print only errors and the final summary.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: Args) -> Result<Outcome> {
    if args.middleware.choose("record")? == Middleware::Ros2 {
        return super::middleware::ros2_elsewhere("record");
    }
    if args.udp {
        return Err(UsageError("--udp: rbag records over TCPROS only (UDPROS is not supported)".into()).into());
    }
    let (remaps, mut topics) = rbag_live::middleware::split_remaps(&args.topics);
    topics.extend(args.topic_flags.iter().cloned());
    if topics.is_empty() && !args.all && args.node.is_none() {
        return Err(UsageError("rbag record: name topics to record, or use -a/--all or --node".into()).into());
    }
    let source = Ros1Source {
        remaps,
        topics,
        regex: args.regex,
        all: args.all,
        exclude: args.exclude.clone(),
        node: args.node.clone(),
        tcp_nodelay: args.tcpnodelay,
        publish_begin_write: args.publish,
        snapshot_topic: args.snapshot_topic.clone(),
        ..Ros1Source::default()
    };
    // Bad -e/-x patterns are usage errors: found before joining (or starting) a master.
    source.selection(str::to_string).map_err(|e| UsageError(e.to_string()))?;
    let snapshot = SnapshotOptions {
        max_duration_ns: Some(args.snapshot_duration),
        max_bytes: args.snapshot_size,
        each_to_new_bag: true,
    };
    let spec = RecordSpec {
        output: output_options(&args)?,
        pipeline: PipelineOptions { snapshot: args.snapshot.then_some(snapshot), ..PipelineOptions::default() },
        queue_bytes: (args.buffsize > 0).then_some(args.buffsize),
        start_paused: false,
        source: Source::Ros1(source),
        clock: None,
    };
    let (quiet, snapshot_mode) = (args.quiet, args.snapshot);
    drive(
        spec,
        super::middleware::LogLevel::of(None, quiet),
        snapshot_mode,
        "record buffer full; counted on /rbag/dropped in the bag",
        |_, _| Ok(()),
    )
}

fn output_options(args: &Args) -> Result<RecordOptions> {
    let output = match (&args.output, &args.output_prefix) {
        (Some(path), _) => OutputName::Exact(path.clone()),
        (None, Some(prefix)) => OutputName::Prefix(prefix.clone()),
        (None, None) => OutputName::Prefix(String::new()),
    };
    let format = match args.storage.as_deref() {
        Some("ros1") => Format::Ros1,
        Some("mcap") => Format::Mcap,
        Some(other) => return Err(UsageError(format!("--storage {other}: ROS 1 recording writes ros1 or mcap")).into()),
        None => match args.output.as_deref().and_then(Path::extension).and_then(|e| e.to_str()) {
            Some("mcap") => Format::Mcap,
            _ => Format::Ros1,
        },
    };
    let compression = match (args.bz2, args.lz4) {
        (true, _) => Compression::Bz2,
        (_, true) => Compression::Lz4,
        _ => Compression::None,
    };
    if format == Format::Mcap && compression == Compression::Bz2 {
        return Err(UsageError("--bz2: MCAP has no bz2 chunks (use --lz4)".into()).into());
    }
    let bounds = Split { max_bytes: args.split.filter(|&s| s > 0).or(args.size), max_duration_ns: args.duration };
    let bounded = bounds.max_bytes.is_some() || bounds.max_duration_ns.is_some();
    let split = args.split.is_some();
    Ok(RecordOptions {
        output,
        format,
        write: WriteOptions {
            compression,
            chunk_size: args.chunksize,
            direct_io: args.direct_io.mode(),
            ..WriteOptions::default()
        },
        split: (split && bounded).then_some(bounds),
        stop_at: (!split && bounded).then_some(bounds),
        max_splits: args.max_splits,
        limit_per_topic: args.limit,
        repeat_latched: args.repeat_latched,
        throttle_ns: throttle_ns(&args.throttle),
        min_space: args.min_space,
        overwrite: args.force,
        ..RecordOptions::default()
    })
}

/// `--throttle TOPIC=HZ` as the least time between two stored messages of each topic.
pub fn throttle_ns(rates: &[(String, f64)]) -> std::collections::BTreeMap<String, u64> {
    rates.iter().map(|(topic, hz)| (topic.clone(), (1e9 / hz).round() as u64)).collect()
}

/// Where a recording's notices go: stderr, as `level` lets them through.
pub(super) fn level_log(level: super::middleware::LogLevel) -> Log {
    Arc::new(move |m: String| {
        if level.shows(&m) {
            note!("{m}");
        }
    })
}

/// Runs a recording from the terminal, for `--ros1` and `--ros2` alike: prints its notices
/// (as `level` lets through), stops on SIGINT/SIGTERM/SIGHUP, snapshots on
/// SIGUSR1 or `s`, pauses on space (with `keys`), and maps the report to an exit code.
/// `serve` starts what must live as long as the recording (control services).
pub(super) fn drive<S>(
    spec: RecordSpec,
    level: super::middleware::LogLevel,
    keys: bool,
    drop_cause: &str,
    serve: impl FnOnce(&Recording, &Log) -> Result<S>,
) -> Result<Outcome> {
    let log = level_log(level);
    signals::install();
    let snapshot_mode = spec.pipeline.snapshot.is_some();
    let recording = start(spec, &log)?;
    let served = serve(&recording, &log)?;
    let outcome = run_until(recording, &log, keys, snapshot_mode, &|| false)?;
    drop(served);
    finish(&outcome, &log, level, drop_cause)
}

/// Runs ROS 2 recordings one after another under `session`, a recorder whose node and services
/// outlive them (rosbag2's `~/stop` and `~/record`): `spec(None)` is the first recording,
/// `spec(Some(uri))` the one a `record` request asks for. Ends on a signal, or when a
/// recording ends on its own (a limit, an error); the exit code is the worst recording's.
pub(super) fn drive_session(
    mut spec: impl FnMut(Option<&str>) -> Result<RecordSpec>,
    session: &rbag_live::record::RecorderSession,
    log: &Log,
    level: super::middleware::LogLevel,
    keys: bool,
    drop_cause: &str,
) -> Result<Outcome> {
    signals::install();
    let mut next = spec(None)?;
    let mut worst = Outcome::Ok;
    loop {
        let snapshot_mode = next.pipeline.snapshot.is_some();
        let recording = start(next, log)?;
        session.attach(recording.controls());
        let outcome = run_until(recording, log, keys, snapshot_mode, &|| session.stop_requested());
        session.detach();
        if matches!(finish(&outcome?, log, level, drop_cause)?, Outcome::Dropped) {
            worst = Outcome::Dropped;
        }
        if signals::stop_requested() || !session.stop_requested() {
            return Ok(worst);
        }
        log("The recorder waits for a record request (Ctrl-C quits).".into());
        let Some(uri) = session.wait_record(|| !signals::stop_requested()) else { return Ok(worst) };
        next = spec(Some(&uri))?;
    }
}

fn start(spec: RecordSpec, log: &Log) -> Result<Recording> {
    Recording::start(spec, log.clone()).map_err(|e| {
        let hint = match () {
            _ if e.output_exists() => " (use --force to replace it)",
            _ if e.low_disk_space() => " (set the minimum with -L/--min-space)",
            _ => "",
        };
        anyhow::anyhow!("starting the recording: {e}{hint}")
    })
}

/// Records until a signal, `stop()` or the recording's own end; keys and SIGUSR1 act meanwhile.
fn run_until(
    recording: Recording,
    log: &Log,
    keys: bool,
    snapshot_mode: bool,
    stop: &dyn Fn() -> bool,
) -> Result<rbag_live::record::RecordOutcome> {
    let (keys_tx, key_rx) = mpsc::channel();
    let _raw = if keys { keyboard::start(keys_tx) } else { None };
    Ok(recording.run(|controls| {
        for k in key_rx.try_iter() {
            match k {
                keyboard::Key::Space if !snapshot_mode => {
                    let paused = controls.toggle_paused();
                    log(if paused { "Recording paused." } else { "Recording resumed." }.into());
                }
                keyboard::Key::Char('s') if snapshot_mode => controls.snapshot(),
                _ => {}
            }
        }
        if signals::take_usr1() && snapshot_mode {
            log("Snapshot: writing the cache into the bag.".into());
            controls.snapshot();
        }
        !signals::stop_requested() && !stop()
    })?)
}

fn finish(
    outcome: &rbag_live::record::RecordOutcome,
    log: &Log,
    level: super::middleware::LogLevel,
    drop_cause: &str,
) -> Result<Outcome> {
    if let Some(why) = &outcome.ended_by {
        log(why.clone());
    }
    summarise(&outcome.report, outcome.output.as_deref(), level >= super::middleware::LogLevel::Warn, drop_cause)
}

fn summarise(report: &RecordReport, out: Option<&Path>, quiet: bool, drop_cause: &str) -> Result<Outcome> {
    if !quiet {
        let snaps = if report.snapshots > 0 { format!(" ({} snapshot(s))", report.snapshots) } else { String::new() };
        let out = out.map(|o| format!("; wrote {}", o.display())).unwrap_or_default();
        note!("Recording stopped{out}{snaps}.");
        for (topic, n) in &report.messages {
            note!("  {topic}: {n} message(s)");
        }
    }
    if let Some(s) = &report.stopped {
        if rbag_live::record::stopped_by_failure(report) {
            bail!("recording stopped: {s}");
        }
        if !quiet {
            note!("Recording stopped: {s}.");
        }
    }
    for (topic, n) in &report.drops {
        note!("warning: {topic}: {n} message(s) dropped ({drop_cause})");
    }
    Ok(if report.total_drops() > 0 { Outcome::Dropped } else { Outcome::Ok })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn parse(args: &[&str]) -> Args {
        let argv = ["rbag", "record", "--ros1"].iter().chain(args).copied();
        match crate::Cli::try_parse_from(argv).expect("valid command line").command {
            crate::Command::Record(a) => a,
            _ => unreachable!("parsed as record"),
        }
    }

    #[test]
    fn split_takes_the_cpp_recorders_size_and_the_python_wrappers_flags() {
        let o = output_options(&parse(&["-a", "--split=5"])).unwrap();
        assert_eq!(o.split.and_then(|s| s.max_bytes), Some(5 << 20));
        assert!(o.stop_at.is_none());
        let o = output_options(&parse(&["-a", "--split", "--size", "2", "--duration", "1m"])).unwrap();
        let s = o.split.unwrap();
        assert_eq!((s.max_bytes, s.max_duration_ns), (Some(2 << 20), Some(60_000_000_000)));
        let o = output_options(&parse(&["-a", "--size", "1GiB"])).unwrap();
        assert!(o.split.is_none(), "without --split, --size stops the recording");
        assert_eq!(o.stop_at.and_then(|s| s.max_bytes), Some(1 << 30));
    }

    #[test]
    fn rosbag_units_names_and_compression() {
        let a = parse(&[
            "--topic",
            "/a",
            "--topic",
            "/b",
            "c",
            "-O",
            "run",
            "--chunksize",
            "4",
            "-j",
            "-b",
            "0",
            "-L",
            "1G",
        ]);
        assert_eq!(
            (a.topics.as_slice(), a.topic_flags.as_slice()),
            (&["c".to_string()][..], &["/a".to_string(), "/b".to_string()][..])
        );
        let o = output_options(&a).unwrap();
        assert_eq!(o.output, OutputName::Exact("run".into()));
        assert_eq!((o.write.chunk_size, o.write.compression, o.min_space), (4096, Compression::Bz2, 1_000_000_000));
        assert_eq!(a.buffsize, 0);
        let o = output_options(&parse(&["-a", "-o", "x.mcap", "--lz4"])).unwrap();
        assert_eq!((o.format, o.write.compression), (Format::Mcap, Compression::Lz4));
        assert!(output_options(&parse(&["-a", "-s", "mcap", "-j"])).is_err(), "MCAP has no bz2");
        let o = output_options(&parse(&["-a", "--output-prefix", "pre"])).unwrap();
        assert_eq!(o.output, OutputName::Prefix("pre".into()));
    }
}
