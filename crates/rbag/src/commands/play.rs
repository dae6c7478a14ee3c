//! `rbag play`: publish bags into a live ROS graph in time order, as `rosbag play` does. The
//! playing is `rbag_live::play`'s; this file turns flags into a spec, keys and signals into
//! controls, and the report into output and an exit code. `play_ros2.rs` does the same for
//! `ros2 bag play`'s flags, with the helpers here.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use rbag_bag::Filter;
use rbag_live::graph::{anonymous, Limits};
use rbag_live::play::ros1::Ros1Options;
use rbag_live::play::{self as live, Events, LiveReport, PlayEvent, PlayHandle, PlaySpec, UserTypes};
use rbag_live::play::{Control, PlayOptions, RateStep};

use super::keyboard::{self, Key};
use super::middleware::{self, Middleware, MiddlewareArgs};
use super::signals;
use crate::{Outcome, UsageError};
use rbag_bag::units::parse_duration;

/// Publish the messages of one or more bags into a live ROS graph, in time order.
///
/// With `--ros1`, rbag joins the ROS 1 graph at ROS_MASTER_URI (starting an embedded master when
/// none answers, and saying so) and advertises every topic with the bag's type, MD5 sum and
/// definition; latched connections are republished latched. Several bags are merged in log-time
/// order, ties kept in a stable order, so every run sends the same sequence. rosbag2 bags with
/// CDR data are converted to ROS 1 on the fly.
///
/// On a terminal: space pauses and resumes, `s` steps one message while paused, the up/down
/// arrows raise and lower the rate. ROS remapping arguments (`/chatter:=/talk`) are accepted
/// among the bags.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rbag play run.bag                       (an embedded master when none runs)\n  rbag play run.bag -r 2 -s 10 --clock\n  rbag play a.bag b.bag --topics /tf /imu -l\n\nWith --ros2 (or ROS_VERSION=2) the flags are ros2 bag play's: see `rbag play --ros2 --help`."
)]
pub struct Args {
    #[command(flatten)]
    pub middleware: MiddlewareArgs,
    /// Bags to play, and ROS remapping arguments (`from:=to`).
    #[arg(value_name = "BAG")]
    pub inputs: Vec<String>,
    /// More bags to play (rosbag's --bags).
    #[arg(short = 'i', long = "input", visible_alias = "bags", value_name = "BAG")]
    pub more_inputs: Vec<PathBuf>,
    /// Play every message without waiting (rosbag's `-i`).
    #[arg(long)]
    pub immediate: bool,
    /// Multiply the publish rate by FACTOR.
    #[arg(short, long, value_name = "FACTOR", default_value_t = 1.0)]
    pub rate: f64,
    /// Start SEC seconds into the bags.
    #[arg(short = 's', long = "start", visible_alias = "start-offset", value_name = "SEC", value_parser = parse_duration)]
    pub start: Option<u64>,
    /// Play only SEC seconds of the bags.
    #[arg(short = 'u', long, value_name = "SEC", value_parser = parse_duration)]
    pub duration: Option<u64>,
    /// Skip stretches of the bags with no messages for more than SEC seconds.
    #[arg(long, value_name = "SEC", value_parser = parse_duration)]
    pub skip_empty: Option<u64>,
    /// Loop playback.
    #[arg(short, long = "loop")]
    pub loop_: bool,
    /// Keep running after the end (so latched topics stay available).
    #[arg(short = 'k', long)]
    pub keep_alive: bool,
    /// Wait SEC seconds after advertising, so subscribers can connect.
    #[arg(short, long, value_name = "SEC", default_value = "0.2", value_parser = parse_duration)]
    pub delay: u64,
    /// Start paused.
    #[arg(long)]
    pub pause: bool,
    /// Publish the bag's time on /clock (rosgraph_msgs/Clock).
    #[arg(long)]
    pub clock: bool,
    /// Rate of /clock messages.
    #[arg(long = "hz", visible_alias = "clock-hz", value_name = "HZ", default_value_t = 100.0)]
    pub hz: f64,
    /// Play only these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// Pause when a message on one of these topics is reached.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub pause_topics: Vec<String>,
    /// Prefix every published topic.
    #[arg(short, long, value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Hold playback until a message with a Header on TOPIC stamps a bag time at most
    /// --rate-control-max-delay behind the next message (flow control by a downstream node).
    #[arg(long, value_name = "TOPIC")]
    pub rate_control_topic: Option<String>,
    /// How far (seconds) playback may run ahead of the rate control topic's stamp.
    #[arg(long, value_name = "SEC", default_value = "1", value_parser = parse_duration, requires = "rate_control_topic")]
    pub rate_control_max_delay: u64,
    /// Outgoing queue of each subscriber, in messages; the oldest is dropped when it is full.
    #[arg(long, value_name = "SIZE", default_value_t = 100)]
    pub queue: usize,
    /// Wait for at least one subscriber on each topic before publishing.
    #[arg(long)]
    pub wait_for_subscribers: bool,
    /// Accepted for rosbag compatibility; rbag reads bag version 2.0 only.
    #[arg(long, hide = true)]
    pub try_future_version: bool,
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

pub fn run(args: Args) -> Result<Outcome> {
    match args.middleware.choose("play")? {
        Middleware::Ros1 => run_ros1(args),
        Middleware::Ros2 => middleware::ros2_elsewhere("play"),
    }
}

fn options(args: &Args) -> PlayOptions {
    PlayOptions {
        rate: args.rate,
        start_offset_ns: args.start.unwrap_or(0),
        duration_ns: args.duration,
        loop_: args.loop_,
        keep_alive: args.keep_alive,
        immediate: args.immediate,
        skip_empty_ns: args.skip_empty,
        start_paused: args.pause,
        clock_hz: args.clock.then_some(args.hz),
        rate_step: RateStep::Rosbag,
        ..PlayOptions::default()
    }
}

fn run_ros1(args: Args) -> Result<Outcome> {
    let (remap_args, bags) = rbag_live::middleware::split_remaps(&args.inputs);
    let mut paths: Vec<PathBuf> = bags.iter().map(PathBuf::from).collect();
    paths.extend(args.more_inputs.iter().cloned());
    if paths.is_empty() {
        // `--topics /a b.bag` reads b.bag as a topic (as rosbag's --topics does): say so.
        let hint = if args.topics.is_empty() && args.pause_topics.is_empty() {
            ""
        } else {
            " (--topics and --pause-topics take every argument after them: name the bags first)"
        };
        return Err(UsageError(format!("rbag play: name at least one bag{hint}")).into());
    }
    let bags = paths.iter().map(|p| super::open(p)).collect::<Result<Vec<_>>>()?;
    super::check_topic_names(&bags, "--topics", &args.topics)?;
    super::check_topic_names(&bags, "--pause-topics", &args.pause_topics)?;
    let spec = PlaySpec {
        bags,
        filter: Filter { topics: args.topics.clone(), ..Filter::default() },
        options: options(&args),
        pause_topics: args.pause_topics.clone(),
        remaps: Default::default(),
        types: user_types(&args.types)?,
        delay_ns: args.delay,
        events: printer(false, super::middleware::LogLevel::of(None, args.quiet)),
        clock: None,
    };
    // Bad options are refused before rbag joins the graph (or starts a master).
    spec.options.validate().map_err(|e| UsageError(format!("rbag play: {e}")))?;
    let ros1_options = Ros1Options {
        prefix: args.prefix.clone(),
        queue_size: args.queue,
        wait_for_subscribers: args.wait_for_subscribers,
        rate_control: args.rate_control_topic.clone().map(|t| (t, args.rate_control_max_delay)),
    };
    signals::install();
    let quiet = args.quiet;
    let graph = rbag_live::graph::join_ros1(&anonymous("rbag_play"), &remap_args, Limits::default(), |uri| {
        if !quiet {
            note!("rbag: no ROS master at {uri}; started an embedded master there (it stops when rbag exits)");
        }
    })?;
    let (handle, controls) = live::controls();
    let _raw = drive(&handle, true, |k| match k {
        Key::Space => Some(Control::TogglePause),
        Key::Char('s') => Some(Control::Step),
        Key::Char('t') => Some(Control::TogglePauseTopics),
        Key::Up | Key::Char('+') => Some(Control::FasterRate),
        Key::Down | Key::Char('-') => Some(Control::SlowerRate),
        _ => None,
    })?;
    let result = live::ros1::play(&graph.node, spec, &ros1_options, controls);
    graph.leave();
    finish("rbag play", result, args.stats, args.quiet, Some(args.queue))
}

/// The `--msg-path` definitions, for conversions.
pub(super) fn user_types(types: &super::TypeArgs) -> Result<UserTypes> {
    let (ros1, ros2) = super::load_msg_dirs(&types.msg_paths, "--msg-path")?;
    Ok(UserTypes { ros1, ros2 })
}

/// Prints a run's events: status lines as `rosbag play` (`[RUNNING]`) or `ros2 bag play`
/// (`[Running]`) words them, unless quiet.
pub(super) fn printer(ros2: bool, level: super::middleware::LogLevel) -> Events {
    printer_to(ros2, level, |line| note!("{line}"))
}

/// [`printer`] handing each line to `out` (which prints it above a progress bar).
pub(super) fn printer_to(
    ros2: bool,
    level: super::middleware::LogLevel,
    out: impl Fn(String) + Send + Sync + 'static,
) -> Events {
    use super::middleware::LogLevel;
    let info = level <= LogLevel::Info;
    Events::new(move |e| match e {
        PlayEvent::Warning(w) if level <= LogLevel::Warn => out(format!("warning: {w}")),
        PlayEvent::Info(m) if level.shows(&m) => out(m),
        PlayEvent::WaitingForSubscriber(t) if info => out(format!("Waiting for a subscriber on {t}...")),
        PlayEvent::State(s) if info => {
            let what = match (ros2, s.paused) {
                (false, true) => "PAUSED ",
                (false, false) => "RUNNING",
                (true, true) => "Paused ",
                (true, false) => "Running",
            };
            out(format!("[{what}] bag time {:.6}  rate {:.3}", s.bag_time_ns as f64 / 1e9, s.rate));
        }
        _ => {}
    })
}

/// Drives `handle` from the terminal's keys (when `keys` and stdin is one; the returned guard
/// restores the terminal) and from SIGINT/SIGTERM/SIGHUP, which stop the run.
pub(super) fn drive(
    handle: &PlayHandle,
    keys: bool,
    map: fn(Key) -> Option<Control>,
) -> Result<Option<keyboard::RawMode>> {
    let h = handle.clone();
    std::thread::Builder::new().name("stop-watch".into()).spawn(move || {
        while !signals::stop_requested() {
            std::thread::sleep(Duration::from_millis(50));
        }
        h.stop();
    })?;
    if !keys {
        return Ok(None);
    }
    let (keys_tx, key_rx) = std::sync::mpsc::channel();
    let raw = keyboard::start(keys_tx);
    let h = handle.clone();
    std::thread::Builder::new().name("keys".into()).spawn(move || {
        for c in key_rx.into_iter().filter_map(map) {
            if !h.send(c) {
                break;
            }
        }
    })?;
    Ok(raw)
}

/// The end of a run: the `--stats` JSON line (with `dropped` when the middleware counts
/// drops), the summary unless quiet, and the exit code (3 when subscriber queues dropped
/// messages; `queue` is the `--queue` size to name then).
pub(super) fn finish(
    verb: &str,
    result: Result<LiveReport, live::Error>,
    stats: bool,
    quiet: bool,
    queue: Option<usize>,
) -> Result<Outcome> {
    let report = match result {
        Err(live::Error::Options(e)) => return Err(UsageError(format!("{verb}: {e}")).into()),
        r => r?,
    };
    // Stopped before playing (waiting for subscribers), or a burst of nothing.
    let Some(play) = &report.play else { return Ok(Outcome::Ok) };
    if stats {
        let l = &play.lateness;
        let dropped = report.dropped.map(|d| format!("\"dropped\":{d},")).unwrap_or_default();
        note!(
            "{{\"published\":{},{dropped}\"started_wall_ns\":{},\"lateness_count\":{},\"lateness_p50_ns\":{},\"lateness_p99_ns\":{},\"lateness_max_ns\":{}}}",
            play.published, report.started_wall_ns, l.count, l.p50_ns, l.p99_ns, l.max_ns
        );
    }
    if !quiet {
        let loops = if play.loops > 0 { format!(", {} loop(s)", play.loops) } else { String::new() };
        note!("Done: {} message(s) published{loops}.", play.published);
    }
    match (report.dropped, queue) {
        (Some(d), Some(q)) if d > 0 => {
            note!("warning: {d} message(s) dropped from full subscriber queues (--queue {q})");
            Ok(Outcome::Dropped)
        }
        _ => Ok(Outcome::Ok),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn parse(args: &[&str]) -> Args {
        let argv = ["rbag", "play", "--ros1"].iter().chain(args).copied();
        match crate::Cli::try_parse_from(argv).expect("valid command line").command {
            crate::Command::Play(a) => a,
            _ => unreachable!("parsed as play"),
        }
    }

    #[test]
    fn rosbag_play_flags_map_to_player_options() {
        let a = parse(&[
            "x.bag",
            "--bags",
            "y.bag",
            "-r",
            "2",
            "-s",
            "1.5",
            "-u",
            "3",
            "--skip-empty",
            "2",
            "-l",
            "-k",
            "--pause",
            "--clock",
            "--clock-hz",
            "50",
            "--try-future-version",
        ]);
        assert_eq!(a.more_inputs, vec![PathBuf::from("y.bag")]);
        let o = options(&a);
        assert_eq!(
            (o.rate, o.start_offset_ns, o.duration_ns, o.skip_empty_ns),
            (2.0, 1_500_000_000, Some(3_000_000_000), Some(2_000_000_000))
        );
        assert!(o.loop_ && o.keep_alive && o.start_paused && !o.immediate);
        assert_eq!(o.clock_hz, Some(50.0));
        assert_eq!(o.rate_step, RateStep::Rosbag);
        let o = options(&parse(&["x.bag", "--immediate", "--hz", "10"]));
        assert!(o.immediate);
        assert_eq!(o.clock_hz, None, "--hz alone does not publish /clock");
    }
}
