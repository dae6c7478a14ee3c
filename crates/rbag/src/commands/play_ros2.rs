//! `rbag play --ros2`: publish bags into a live ROS 2 graph over DDS, with `ros2 bag play`'s
//! flags.
//!
//! Each topic is published with its recorded type and, as rosbag2 does, the QoS its recorded
//! publishers offered when they agreed (else rosbag2's default), or the override file's.
//! ROS 1 connections are converted to ROS 2 through the message layer, as `rbag convert` does,
//! so an old `.bag` plays into ROS 2. Scheduling, pause, step, rate, loop and `/clock` are
//! `rbag-transport`'s player.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use anyhow::{Context, Result};
use rbag_bag::transcode::Rewrite;
use rbag_ros2::dds::{Participant, RawWriter};
use rbag_ros2::names::{topic_to_dds, type_to_dds};
use rbag_ros2::qos::{adapt_offer_to_recorded_offers, Overrides};
use rbag_ros2::record::Log;
use rbag_storage::rosbag2::qos::{self as qos_text, policy, QosProfile};
use rbag_storage::rosbag2::{QOS_KEY, TYPE_HASH_KEY};
use rbag_storage::{Connection, Filter, Message};
use rbag_transport::clock::SystemClock;
use rbag_transport::play::{
    BagSource, Control, PlayError, PlayOptions, PlaySink, PlaySource, PlayState, Player, RateStep,
};
use regex::Regex;

use super::control_services::{self, PlayerView};
use super::middleware::MiddlewareArgs;
use super::play_plan::{keys_to_controls, plan_all, Converter, Planned};
use super::service_requests::{RequestSender, REQUEST_RECEIVED, REQUEST_SENT};
use super::{keyboard, ros2, signals};
use crate::units::parse_duration;
use crate::{Outcome, UsageError};

/// Publish the messages of one or more bags into a live ROS 2 graph, as `ros2 bag play`.
///
/// rbag joins the DDS domain ROS_DOMAIN_ID (Cyclone DDS; CYCLONEDDS_URI and ROS_LOCALHOST_ONLY
/// are honoured) and publishes every topic with its recorded type and QoS. Several bags are
/// merged in log-time order, ties kept in a stable order, so every run sends the same
/// sequence. ROS 1 bags are converted to ROS 2 messages on the fly.
///
/// On a terminal: space pauses and resumes, the right arrow (or `s`) publishes the next message
/// while paused, the up/down arrows change the rate by 10%. rosbag2's player services do the
/// same from scripts (`ros2 service call /rosbag2_player/pause rosbag2_interfaces/srv/Pause`):
/// pause, resume, toggle_paused, is_paused, get_rate, set_rate, play_next, burst, seek.
#[derive(clap::Parser, Debug)]
#[command(name = "rbag play --ros2", after_help = "Exit codes: 0 ok, 1 error, 2 usage error.")]
pub struct Args {
    #[command(flatten)]
    pub middleware: MiddlewareArgs,
    /// Bags to play.
    #[arg(value_name = "BAG")]
    pub inputs: Vec<PathBuf>,
    /// More bags to play (repeatable).
    #[arg(short = 'i', long = "input", value_name = "BAG")]
    pub more_inputs: Vec<PathBuf>,
    /// Multiply the publish rate by FACTOR.
    #[arg(short, long, value_name = "FACTOR", default_value_t = 1.0)]
    pub rate: f64,
    /// Play only these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// Play only these services' event topics.
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub services: Vec<String>,
    /// Play topics and services matching this regular expression.
    #[arg(short = 'e', long, value_name = "REGEX")]
    pub regex: Option<Regex>,
    /// Leave out topics and services matching this regular expression.
    #[arg(short = 'x', long, value_name = "REGEX")]
    pub exclude_regex: Option<Regex>,
    /// Leave out these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub exclude_topics: Vec<String>,
    /// Leave out these services.
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub exclude_services: Vec<String>,
    /// QoS per topic instead of the recorded one (YAML: `topic: {reliability: reliable, ...}`).
    #[arg(long, value_name = "FILE")]
    pub qos_profile_overrides_path: Option<PathBuf>,
    /// Loop playback.
    #[arg(short, long = "loop")]
    pub loop_: bool,
    /// Remap topics: `old:=new` (repeatable).
    #[arg(short = 'm', long, num_args = 1.., value_name = "OLD:=NEW")]
    pub remap: Vec<String>,
    /// Publish the bag's time on /clock (rosgraph_msgs/msg/Clock) at HZ (default 40).
    #[arg(long, value_name = "HZ", num_args = 0..=1, default_missing_value = "40")]
    pub clock: Option<f64>,
    /// Wait SEC seconds before playing.
    #[arg(short = 'd', long, value_name = "SEC", default_value = "0", value_parser = parse_duration)]
    pub delay: u64,
    /// Play only SEC seconds from the start offset.
    #[arg(long, value_name = "SEC", value_parser = parse_duration)]
    pub playback_duration: Option<u64>,
    /// Play nothing logged after this time (seconds since the epoch).
    #[arg(long, value_name = "SEC", conflicts_with = "playback_until_nsec")]
    pub playback_until_sec: Option<f64>,
    /// Play nothing logged after this time (ns since the epoch).
    #[arg(long, value_name = "NSEC")]
    pub playback_until_nsec: Option<u64>,
    /// Start SEC seconds into the bags.
    #[arg(long, value_name = "SEC", value_parser = parse_duration)]
    pub start_offset: Option<u64>,
    /// Start paused.
    #[arg(short = 'p', long)]
    pub start_paused: bool,
    /// Do not read keys from the terminal.
    #[arg(long)]
    pub disable_keyboard_controls: bool,
    /// After each message, wait up to MS milliseconds for every reliable subscriber to
    /// acknowledge it.
    #[arg(long, value_name = "MS")]
    pub wait_for_all_acked: Option<u64>,
    /// `rbag burst`: publish this many messages as fast as possible from the start offset, then
    /// stop.
    #[arg(short = 'n', long, value_name = "N")]
    pub num_messages: Option<u64>,
    /// Call the recorded services with the recorded requests (from `<service>/_service_event`
    /// topics) instead of publishing the service events.
    #[arg(long)]
    pub publish_service_requests: bool,
    /// With --publish-service-requests: replay the requests services received
    /// (service_introspection) or those clients sent (client_introspection).
    #[arg(long, value_name = "SOURCE", default_value = "service_introspection", value_parser = ["service_introspection", "client_introspection"])]
    pub service_requests_source: String,
    /// Messages read ahead of playback (accepted; rbag streams from storage).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub read_ahead_queue_size: usize,
    /// Print a JSON line of playback statistics on stderr at the end: messages, and how late
    /// each was sent against its schedule (p50/p99/max ns), with the wall time playing started.
    #[arg(long)]
    pub stats: bool,
    #[command(flatten)]
    pub types: super::TypeArgs,
    /// Print only errors and the final summary.
    #[arg(short, long)]
    pub quiet: bool,
}

struct Out {
    writer: Arc<RawWriter>,
    rewrite: Option<Box<Rewrite>>,
}

struct Ros2Sink {
    outs: BTreeMap<u32, Out>,
    converter: Converter,
    clock: Option<RawWriter>,
    ack_timeout: Option<Duration>,
    quiet: bool,
    /// `burst`: messages left, and where to say it is done.
    burst: Option<(u64, mpsc::Sender<Control>)>,
    /// What the control services report.
    view: PlayerView,
    /// `--publish-service-requests`: service-event connections replayed as requests.
    requests: BTreeMap<u32, RequestSender>,
}

fn now_ns() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

impl PlaySink for Ros2Sink {
    fn publish(&mut self, msg: &Message) -> Result<(), PlayError> {
        self.view.published_one();
        if let Some(r) = self.requests.get_mut(&msg.connection) {
            r.send(&msg.data, now_ns())?;
            return Ok(());
        }
        let Some(out) = self.outs.get(&msg.connection) else { return Ok(()) };
        let data = self.converter.bytes(out.rewrite.as_deref(), msg)?;
        out.writer.write_waiting(&data, now_ns(), &signals::stop_requested).map_err(PlayError::sink)?;
        if let Some((left, done)) = &mut self.burst {
            *left = left.saturating_sub(1);
            if *left == 0 {
                let _ = done.send(Control::Quit);
            }
        }
        if let Some(t) = self.ack_timeout {
            if let Err(e) = out.writer.wait_for_acks(t) {
                note!("warning: {e}");
            }
        }
        Ok(())
    }

    fn clock(&mut self, bag_time_ns: u64) -> Result<(), PlayError> {
        if let Some(c) = &self.clock {
            c.write(&clock_cdr(bag_time_ns), now_ns()).map_err(PlayError::sink)?;
        }
        Ok(())
    }

    fn state(&mut self, s: &PlayState) {
        self.view.update(s);
        if !self.quiet {
            let what = if s.paused { "Paused " } else { "Running" };
            note!("[{what}] bag time {:.6}  rate {:.3}", s.bag_time_ns as f64 / 1e9, s.rate);
        }
    }
}

/// With `--publish-service-requests`, takes the service-event connections out of `planned`
/// and makes each a request sender.
fn split_service_requests(
    args: &Args,
    source: &BagSource,
    participant: &Participant,
    planned: Vec<Planned>,
) -> Result<(Vec<Planned>, BTreeMap<u32, RequestSender>)> {
    let mut requests = BTreeMap::new();
    if !args.publish_service_requests {
        return Ok((planned, requests));
    }
    let kind = if args.service_requests_source == "client_introspection" { REQUEST_SENT } else { REQUEST_RECEIVED };
    let mut keep = Vec::new();
    // Type sources are built once per bag, and only for bags with service events.
    let mut sources = BTreeMap::new();
    for p in planned {
        if !rbag_ros2::names::is_service_event(&p.conn.topic) {
            keep.push(p);
            continue;
        }
        let bag = source.origin(p.id).map_or(0, |o| o.0);
        let bag_sources = match sources.entry(bag) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(args.types.sources(&source.readers()[bag].info()?.properties)?)
            }
        };
        match RequestSender::new(participant, &p.conn, bag_sources, kind)? {
            Some(sender) => {
                requests.insert(p.id, sender);
            }
            None => keep.push(p),
        }
    }
    Ok((keep, requests))
}

/// A `rosgraph_msgs/msg/Clock` in CDR: `builtin_interfaces/Time{int32 sec, uint32 nanosec}`.
fn clock_cdr(t: u64) -> Vec<u8> {
    let mut b = vec![0, 1, 0, 0];
    b.extend_from_slice(&((t / 1_000_000_000) as i32).to_le_bytes());
    b.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
    b
}

fn options(args: &Args) -> PlayOptions {
    PlayOptions {
        rate: args.rate,
        start_offset_ns: args.start_offset.unwrap_or(0),
        duration_ns: args.playback_duration,
        until_ns: args.playback_until_nsec.or(args.playback_until_sec.map(|s| (s.max(0.0) * 1e9) as u64)),
        loop_: args.loop_,
        start_paused: args.start_paused,
        clock_hz: args.clock,
        rate_step: RateStep::Factor,
        from_start_point: args.num_messages.is_none(),
        immediate: args.num_messages.is_some(),
        ..PlayOptions::default()
    }
}

fn remaps(args: &Args) -> Result<BTreeMap<String, String>> {
    let abs = |t: &str| if t.starts_with('/') { t.to_string() } else { format!("/{t}") };
    args.remap
        .iter()
        .map(|r| {
            r.split_once(":=")
                .map(|(a, b)| (abs(a), abs(b)))
                .ok_or_else(|| UsageError(format!("--remap {r:?}: expected OLD:=NEW")).into())
        })
        .collect()
}

fn filter(args: &Args) -> Filter {
    use rbag_ros2::names::service_event_topic;
    let mut topics = args.topics.clone();
    topics.extend(args.services.iter().map(|s| service_event_topic(s)));
    let mut exclude_topics = args.exclude_topics.clone();
    exclude_topics.extend(args.exclude_services.iter().map(|s| service_event_topic(s)));
    Filter {
        topics,
        regex: args.regex.clone(),
        exclude_topics,
        exclude_regex: args.exclude_regex.clone(),
        ..Filter::default()
    }
}

/// The QoS to offer on a topic: the override, else what its recorded publishers agreed on.
fn offer(topic: &str, conns: &[&Connection], overrides: &Overrides) -> QosProfile {
    if let Some(p) = overrides.get(topic) {
        return *p;
    }
    let recorded: Vec<QosProfile> = conns
        .iter()
        .filter_map(|c| c.metadata.get(QOS_KEY))
        .filter_map(|t| qos_text::parse(t).ok())
        .flatten()
        .collect();
    let (p, warning) = adapt_offer_to_recorded_offers(topic, &recorded);
    if let Some(w) = warning {
        note!("warning: {w}");
    }
    p
}

/// Lets discovery match the subscribers already in the graph before the first message goes
/// out: a volatile subscriber matched a few milliseconds late would miss the bag's first
/// messages (`ros2 bag play` has that race). Waits until every reader discovery knows on our
/// topics is matched and no new one appeared for [`SETTLE`] (at least [`FIRST_ROUND`] after
/// start), at most [`MATCH_WAIT`]. A subscriber that does not answer discovery at all in that
/// time (a stopped process) is not waited for: `-d` gives it longer.
fn wait_for_matches(participant: &rbag_ros2::dds::Participant, writers: &[&RawWriter], quiet: bool) -> Result<()> {
    use rbag_ros2::dds::{EndpointKind, Endpoints};
    let mut endpoints = Endpoints::new(participant)?;
    let start = std::time::Instant::now();
    let mut last_change = start;
    loop {
        if !endpoints.poll().is_empty() {
            last_change = std::time::Instant::now();
        }
        let missing: Vec<&str> = writers
            .iter()
            .filter(|w| {
                let readers = endpoints
                    .all()
                    .filter(|e| e.kind == EndpointKind::Reader && !e.local && e.topic == w.topic())
                    .count() as u32;
                w.matched() < readers
            })
            .map(|w| w.topic())
            .collect();
        let settled = start.elapsed() >= FIRST_ROUND && last_change.elapsed() >= SETTLE;
        if missing.is_empty() && settled {
            return Ok(());
        }
        if start.elapsed() >= MATCH_WAIT || signals::stop_requested() {
            if !quiet && !missing.is_empty() {
                note!(
                    "warning: not every subscriber on {} matched within {} s (incompatible QoS?); playing anyway",
                    missing.join(", "),
                    MATCH_WAIT.as_secs()
                );
            }
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The first round of discovery: participants already running answer within it.
const FIRST_ROUND: Duration = Duration::from_millis(250);
/// Discovery is taken as settled once nothing new appeared for this long.
const SETTLE: Duration = Duration::from_millis(100);
/// How long [`wait_for_matches`] waits.
const MATCH_WAIT: Duration = Duration::from_secs(2);

pub fn run(args: Args) -> Result<Outcome> {
    let mut paths = args.inputs.clone();
    paths.extend(args.more_inputs.iter().cloned());
    if paths.is_empty() {
        return Err(UsageError("rbag play --ros2: name at least one bag".into()).into());
    }
    let remaps = remaps(&args)?;
    let overrides = match &args.qos_profile_overrides_path {
        Some(p) => Overrides::load(p)?,
        None => Overrides::default(),
    };
    let readers = paths.iter().map(|p| super::open(p)).collect::<Result<Vec<_>>>()?;
    let mut source = BagSource::with_filter(readers, filter(&args))?;

    let (converter, planned) = plan_all(&source, &args.types, "cdr", |_| {})?;
    let mut player = Player::new(options(&args)).map_err(|e| UsageError(format!("rbag play --ros2: {e}")))?;

    signals::install();
    let participant = ros2::participant()?;
    let (planned, requests) = split_service_requests(&args, &source, &participant, planned)?;
    let mut by_topic: BTreeMap<String, Vec<&Connection>> = BTreeMap::new();
    for Planned { conn, .. } in &planned {
        let topic = remaps.get(&conn.topic).cloned().unwrap_or_else(|| conn.topic.clone());
        by_topic.entry(topic).or_default().push(conn);
    }
    let mut writers: BTreeMap<String, (String, Arc<RawWriter>)> = BTreeMap::new();
    for (topic, conns) in &by_topic {
        let ty = &conns[0].message_type;
        let dds_type =
            type_to_dds(ty).with_context(|| format!("topic {topic}: type {ty:?} has no ROS 2 name (pkg/msg/Type)"))?;
        let qos = offer(topic, conns, &overrides);
        let user_data = conns[0].metadata.get(TYPE_HASH_KEY).map(|h| format!("typehash={h};"));
        let w = RawWriter::new(&participant, &topic_to_dds(topic), &dds_type, &qos, user_data.as_deref())?;
        writers.insert(topic.clone(), (ty.clone(), Arc::new(w)));
    }
    let mut sink = Ros2Sink {
        outs: BTreeMap::new(),
        converter,
        clock: None,
        ack_timeout: args.wait_for_all_acked.map(Duration::from_millis),
        quiet: args.quiet,
        burst: None,
        view: PlayerView::new(args.start_paused, args.rate),
        requests,
    };
    for Planned { id, conn, rewrite } in planned {
        let topic = remaps.get(&conn.topic).cloned().unwrap_or_else(|| conn.topic.clone());
        let Some((ty, writer)) = writers.get(&topic) else { continue };
        if *ty != conn.message_type {
            note!(
                "warning: topic {topic}: connection {} has type {} but {ty} is already published there; left out",
                conn.id,
                conn.message_type
            );
            continue;
        }
        sink.outs.insert(id, Out { writer: writer.clone(), rewrite });
    }
    if args.clock.is_some() {
        let qos = QosProfile {
            history: policy::KEEP_LAST,
            depth: 1,
            reliability: policy::BEST_EFFORT,
            durability: policy::VOLATILE,
            ..QosProfile::default()
        };
        sink.clock = Some(RawWriter::new(&participant, "rt/clock", "rosgraph_msgs::msg::dds_::Clock_", &qos, None)?);
    }

    let all: Vec<&RawWriter> =
        writers.values().map(|(_, w)| w.as_ref()).chain(sink.requests.values().map(RequestSender::writer)).collect();
    wait_for_matches(&participant, &all, args.quiet)?;
    let (controls_tx, controls) = mpsc::channel();
    if let Some(n) = args.num_messages {
        if n == 0 {
            return Ok(Outcome::Ok);
        }
        sink.burst = Some((n, controls_tx.clone()));
    }
    let log: Log = Arc::new(|m: String| note!("{m}"));
    let _services = control_services::player(&participant, &controls_tx, &sink.view, source.time_range(), &log)?;
    let _raw = keys_to_controls(controls_tx.clone(), !args.disable_keyboard_controls, |k| match k {
        keyboard::Key::Space => Some(Control::TogglePause),
        keyboard::Key::Right | keyboard::Key::Char('s') => Some(Control::Step),
        keyboard::Key::Up => Some(Control::FasterRate),
        keyboard::Key::Down => Some(Control::SlowerRate),
        _ => None,
    })?;
    {
        let tx = controls_tx.clone();
        std::thread::Builder::new().name("stop-watch".into()).spawn(move || loop {
            if signals::stop_requested() {
                let _ = tx.send(Control::Quit);
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        })?;
    }
    std::thread::sleep(Duration::from_nanos(args.delay));
    // The clock counts from its creation: wall time there plus the anchor's clock time is when
    // the first message was due.
    let (wall0, clock) = (now_ns() as u64, SystemClock::new());
    let report = player.run(&mut source, &mut sink, &clock, &controls);
    // Reliable subscribers get everything before the writers go away.
    for (_, w) in writers.values() {
        let _ = w.wait_for_acks(Duration::from_secs(2));
    }
    let report = report?;
    super::play_plan::report(&report, wall0, None, args.stats, args.quiet);
    Ok(Outcome::Ok)
}

/// `rbag burst`: `ros2 bag burst`, the first N messages from the start offset as fast as
/// possible (`-n`, required).
pub fn burst(args: Args) -> Result<Outcome> {
    if args.num_messages.is_none() {
        return Err(UsageError("rbag burst: say how many messages with -n N".into()).into());
    }
    run(args)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn ros2_bag_play_flags_map_to_player_options() {
        let a = Args::parse_from([
            "rbag play --ros2",
            "b",
            "-i",
            "c",
            "-r",
            "2",
            "--start-offset",
            "1.5",
            "--playback-duration",
            "3",
            "-l",
            "-p",
            "--clock",
            "--playback-until-sec",
            "10",
        ]);
        assert_eq!(a.more_inputs, vec![PathBuf::from("c")]);
        let o = options(&a);
        assert_eq!(
            (o.rate, o.start_offset_ns, o.duration_ns, o.until_ns),
            (2.0, 1_500_000_000, Some(3_000_000_000), Some(10_000_000_000))
        );
        assert!(o.loop_ && o.start_paused && o.from_start_point);
        assert_eq!(o.clock_hz, Some(40.0));
        assert_eq!(o.rate_step, RateStep::Factor);
        let a = Args::parse_from([
            "rbag play --ros2",
            "b",
            "--clock",
            "100",
            "--playback-until-nsec",
            "7",
            "-m",
            "/a:=/b",
            "c:=d",
        ]);
        assert_eq!(options(&a).clock_hz, Some(100.0));
        assert_eq!(options(&a).until_ns, Some(7));
        assert_eq!(
            remaps(&a).unwrap(),
            BTreeMap::from([("/a".to_string(), "/b".to_string()), ("/c".to_string(), "/d".to_string())])
        );
        assert!(remaps(&Args::parse_from(["rbag play --ros2", "b", "-m", "nope"])).is_err());
    }

    #[test]
    fn clock_messages_are_builtin_time_in_cdr() {
        assert_eq!(clock_cdr(1_500_000_007), vec![0, 1, 0, 0, 1, 0, 0, 0, 7, 0x65, 0xcd, 0x1d]);
    }
}
