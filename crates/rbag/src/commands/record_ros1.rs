//! `rbag record --ros1`: the ROS 1 side of `record` (see `record.rs` for the flags).
//!
//! Three parties: link threads (one per publisher, in `rbag-ros1`) push raw messages into a
//! byte-bounded queue; a writer thread drains it into the recorder (or the snapshot ring); this
//! thread discovers topics every second and watches for signals, limits and `rosnode kill`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use rbag_ros1::node::now_ns;
use rbag_ros1::record::{ConnectionHook, Log, RecordSpec, Recording};
use rbag_ros1::tcpros::{Limits, Publication};
use rbag_storage::{Compression, Format, WriteOptions};
use rbag_transport::{
    OutputName, Popped, Queued, RecordOptions, RecordQueue, RecordReport, Recorder, SnapshotBuffer, Split, StopReason,
    TopicSelection, WriteOutcome,
};

use super::record::Args;
use super::{keyboard, middleware, ros1, signals};
use crate::{Outcome, UsageError};

/// How often the master is asked for new topics (rosbag: every second).
const DISCOVERY_PERIOD: Duration = Duration::from_secs(1);

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
    let compression = if args.bz2 {
        Compression::Bz2
    } else if args.lz4 {
        Compression::Lz4
    } else {
        Compression::None
    };
    if format == Format::Mcap && compression == Compression::Bz2 {
        return Err(UsageError("--bz2: MCAP has no bz2 chunks (use --lz4)".into()).into());
    }
    let split_size = args.split.filter(|&s| s > 0);
    let bounds = Split { max_bytes: split_size.or(args.size), max_duration_ns: args.duration };
    let bounded = bounds.max_bytes.is_some() || bounds.max_duration_ns.is_some();
    let split = args.split.is_some();
    Ok(RecordOptions {
        output,
        format,
        write: WriteOptions { compression, chunk_size: args.chunksize, ..WriteOptions::default() },
        split: (split && bounded).then_some(bounds),
        stop_at: (!split && bounded).then_some(bounds),
        max_splits: args.max_splits,
        limit_per_topic: args.limit,
        repeat_latched: args.repeat_latched,
        min_space: args.min_space,
        overwrite: args.force,
        ..RecordOptions::default()
    })
}

fn selection(args: &Args, topics: &[String], resolve: impl Fn(&str) -> String) -> Result<TopicSelection> {
    let mut sel = if args.regex {
        TopicSelection::regexes(topics.iter()).map_err(|e| UsageError(e.to_string()))?
    } else {
        TopicSelection::topics(topics.iter().map(|t| resolve(t)))
    };
    if args.all {
        sel = sel.with_all();
    }
    if let Some(x) = &args.exclude {
        sel = sel.with_exclude(x).map_err(|e| UsageError(e.to_string()))?;
    }
    Ok(sel)
}

/// What the writer thread tells this one.
enum FromWriter {
    /// A topic has its `-l` messages: unsubscribe it (and stop when no topic is left).
    TopicDone(String),
    /// Recording ended on its own (size, duration, disk).
    Stop,
    /// A file was opened (for `-p`).
    Opened(PathBuf),
}

/// Where the writer puts messages: the bag, or the snapshot ring. One per run, so the
/// variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Target {
    Bag(Recorder),
    Snapshot { ring: SnapshotBuffer, opts: RecordOptions, written: RecordReport },
}

/// Drains the queue until it is closed and empty, then closes the bag.
fn writer(
    mut target: Target,
    queue: Arc<RecordQueue>,
    to_main: mpsc::Sender<FromWriter>,
    snap_trigger: mpsc::Receiver<()>,
    log: Log,
) -> Result<RecordReport> {
    let mut topics = std::collections::HashMap::new();
    loop {
        for (key, n) in queue.take_drops() {
            match &mut target {
                Target::Bag(rec) => rec.note_drops(key, n),
                Target::Snapshot { .. } => {
                    log(format!("warning: dropped {n} message(s) of connection {key} before the snapshot ring"))
                }
            }
        }
        if let Target::Snapshot { ring, opts, written } = &mut target {
            if snap_trigger.try_recv().is_ok() || signals::take_usr1() {
                match ring.write_to(opts.clone(), now_ns()) {
                    Ok(r) => {
                        for f in &r.files {
                            log(format!("snapshot written to {}", f.display()));
                        }
                        written.files.extend(r.files);
                        for (t, n) in r.messages {
                            *written.messages.entry(t).or_default() += n;
                        }
                    }
                    Err(e) => log(format!("error: writing the snapshot: {e}")),
                }
            }
        }
        let popped = queue.pop(Duration::from_millis(100));
        match (&mut target, popped) {
            (_, Popped::Closed) => break,
            (Target::Bag(rec), Popped::Timeout) => {
                if rec.tick(now_ns())?.is_some() {
                    let _ = to_main.send(FromWriter::Stop);
                }
            }
            (Target::Snapshot { .. }, Popped::Timeout) => {}
            (Target::Bag(rec), Popped::Item(item)) => {
                if let Queued::Connection { key, connection } = &item {
                    topics.insert(*key, connection.topic.clone());
                }
                let key = match &item {
                    Queued::Message { key, .. } | Queued::Connection { key, .. } => *key,
                };
                match rec.apply(item)? {
                    // "All" means all topics with a connection so far: a named topic with no
                    // publisher yet still counts, so the main thread decides (as rosbag does).
                    Some(WriteOutcome::LimitReached) | Some(WriteOutcome::AllLimitsReached) => {
                        let _ = to_main.send(FromWriter::TopicDone(topics.get(&key).cloned().unwrap_or_default()));
                    }
                    Some(WriteOutcome::Stopped(_)) => {
                        let _ = to_main.send(FromWriter::Stop);
                    }
                    _ => {}
                }
            }
            (Target::Snapshot { ring, .. }, Popped::Item(Queued::Connection { key, connection })) => {
                ring.add_connection_with_key(key, connection);
            }
            (Target::Snapshot { ring, .. }, Popped::Item(Queued::Message { key, receive_time_ns, data })) => {
                ring.push(key, receive_time_ns, data);
            }
        }
        if let Target::Bag(rec) = &mut target {
            for notice in rec.take_notices() {
                use rbag_transport::Notice;
                match notice {
                    Notice::Opened(p) => {
                        log(format!("Recording to '{}'.", p.display()));
                        let _ = to_main.send(FromWriter::Opened(p));
                    }
                    Notice::Closed(p) => log(format!("Closing '{}'.", p.display())),
                    Notice::Deleted(p) => log(format!("Deleted split '{}' (--max-splits).", p.display())),
                    Notice::LowSpace { dir, free, required } => log(format!(
                        "warning: only {free} bytes free on the disk of {} (--min-space {required})",
                        dir.display()
                    )),
                    Notice::Warning(w) => log(format!("warning: {w}")),
                    _ => {}
                }
            }
        }
    }
    match target {
        Target::Bag(rec) => Ok(rec.finish()?),
        Target::Snapshot { written, .. } => Ok(written),
    }
}

fn string_msg(s: &str) -> Bytes {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v.into()
}

pub fn run(args: Args) -> Result<Outcome> {
    if args.udp {
        return Err(UsageError("--udp: rbag records over TCPROS only (UDPROS is not supported)".into()).into());
    }
    let (remaps, mut topics) = middleware::split_remaps(&args.topics);
    topics.extend(args.topic_flags.iter().cloned());
    if topics.is_empty() && !args.all && args.node.is_none() {
        return Err(UsageError("rbag record: name topics to record, or use -a/--all or --node".into()).into());
    }
    let opts = output_options(&args)?;
    // Bad -e/-x patterns are usage errors: found before joining (or starting) a master.
    selection(&args, &topics, str::to_string)?;
    let quiet = args.quiet;
    let log: Log = Arc::new(move |m: String| {
        if !quiet || m.starts_with("error") {
            note!("{m}");
        }
    });
    signals::install();
    let graph = ros1::join(&ros1::anonymous("rbag_record"), &remaps, Limits::default(), quiet)?;
    let node = graph.node.clone();
    let sel = selection(&args, &topics, |t| node.config().resolve(t))?;

    let target = if args.snapshot {
        let ring = SnapshotBuffer::new(Some(args.snapshot_duration), args.snapshot_size);
        Target::Snapshot { ring, opts, written: RecordReport::default() }
    } else {
        Target::Bag(Recorder::create(opts, now_ns()).context("starting the recording")?)
    };
    let queue =
        Arc::new(if args.buffsize == 0 { RecordQueue::new(None) } else { RecordQueue::with_buffsize(args.buffsize) });
    let (to_main, from_writer) = mpsc::channel();
    let (snap_tx, snap_rx) = mpsc::channel();
    let writer = {
        let queue = queue.clone();
        let log = log.clone();
        std::thread::Builder::new()
            .name("bag-writer".into())
            .spawn(move || writer(target, queue, to_main, snap_rx, log))?
    };

    let hook: ConnectionHook = Arc::new(ros1::complete_connection);
    let spec = RecordSpec { selection: sel, node: args.node.clone(), tcp_nodelay: args.tcpnodelay };
    let recording = Recording::new(node.clone(), spec, queue.clone(), hook, log.clone());
    if let Some(t) = &args.snapshot_topic {
        let topic = node.config().resolve(t);
        let tx = snap_tx.clone();
        node.subscribe(
            &topic,
            "*",
            true,
            Arc::new(move |e| {
                if let rbag_ros1::node::SubEvent::Message { .. } = e {
                    let _ = tx.send(());
                }
            }),
        )?;
    }
    let (keys_tx, keys) = mpsc::channel();
    let _raw = if args.snapshot { keyboard::start(keys_tx) } else { None };
    let begin_write = if args.publish {
        let p = Publication {
            topic: node.config().resolve("begin_write"),
            msg_type: "std_msgs/String".into(),
            md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
            message_definition: "string data\n".into(),
            latching: false,
            caller_id: node.name().to_string(),
            queue_size: 10,
        };
        Some(node.advertise(p)?)
    } else {
        None
    };

    let mut last_discovery: Option<Instant> = None;
    let mut stop_reason = None;
    loop {
        if signals::stop_requested() {
            break;
        }
        if let Some(why) = node.wait_shutdown_request(Duration::ZERO) {
            stop_reason = Some(format!("shutdown requested by the graph: {why}"));
            break;
        }
        if last_discovery.is_none_or(|t| t.elapsed() >= DISCOVERY_PERIOD) {
            last_discovery = Some(Instant::now());
            match recording.discover() {
                Ok(new) => {
                    for t in new {
                        log(format!("Subscribing to {t}"));
                    }
                }
                Err(e) => log(format!("warning: topic discovery: {e}")),
            }
        }
        while let Ok(k) = keys.try_recv() {
            if k == keyboard::Key::Char('s') {
                let _ = snap_tx.send(());
            }
        }
        match from_writer.recv_timeout(Duration::from_millis(50)) {
            Ok(FromWriter::TopicDone(t)) => {
                recording.finish_topic(&t);
                if recording.all_finished() {
                    break;
                }
            }
            Ok(FromWriter::Stop) => break,
            Ok(FromWriter::Opened(p)) => {
                if let Some(pb) = &begin_write {
                    pb.publish(string_msg(&p.display().to_string()));
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    graph.leave();
    queue.close();
    let report = writer.join().map_err(|_| anyhow::anyhow!("the bag writer thread panicked"))?;
    let report = report?;
    if let Some(r) = stop_reason {
        log(r);
    }
    summarise(&report, args.quiet)
}

fn summarise(report: &RecordReport, quiet: bool) -> Result<Outcome> {
    if !quiet {
        for (topic, n) in &report.messages {
            note!("  {topic}: {n} message(s)");
        }
    }
    if let Some(StopReason::LowDiskSpace { .. }) = &report.stopped {
        bail!("recording stopped: {}", report.stopped.as_ref().map(|s| s.to_string()).unwrap_or_default());
    }
    if let Some(s) = &report.stopped {
        if !quiet {
            note!("Recording stopped: {s}.");
        }
    }
    if report.total_drops() > 0 {
        for (topic, n) in &report.drops {
            note!("warning: {topic}: {n} message(s) dropped (record buffer full); counted on /rbag/dropped in the bag");
        }
        return Ok(Outcome::Dropped);
    }
    Ok(Outcome::Ok)
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
