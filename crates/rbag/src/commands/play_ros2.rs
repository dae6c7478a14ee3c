//! `rbag play --ros2`: `ros2 bag play`'s flags, mapped onto `rbag_live::play::ros2` (the
//! playing, rosbag2's player services, burst and `--publish-service-requests` are there).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use rbag_bag::Filter;
use rbag_live::play::ros2::{Ros2Options, REQUEST_RECEIVED, REQUEST_SENT};
use rbag_live::play::{self as live, PlaySpec};
use rbag_live::play::{Control, MessageOrder, PlayOptions, ProgressBar, ProgressHook, RateStep};
use rbag_live::record::Overrides;
use regex::Regex;

use super::keyboard::Key;
use super::middleware::MiddlewareArgs;
use super::play::{drive, finish, printer_to, user_types};
use super::signals;
use crate::{Outcome, UsageError};
use rbag_bag::units::parse_duration;
use rbag_live::middleware::Ros2Middleware;
use std::sync::Arc;

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
/// pause, resume, toggle_paused, is_paused, get_rate, set_rate, play_next, burst, seek, play,
/// stop.
///
/// On a terminal (stderr), a progress bar as rosbag2's shows the bag time reached and the
/// player's state: R running, P paused, B burst, D delayed, S stopped.
#[derive(clap::Parser, Debug)]
#[command(
    name = "rbag play --ros2",
    after_help = "Examples:\n  rbag play --ros2 run\n  rbag play --ros2 run --rate 0.5 --loop --clock 100\n  rbag play --ros2 -i a.mcap -i b.db3 --topics /tf /imu\n  rbag play --ros2 run --message-order sent --read-ahead-queue-size 5000\n  rbag play --ros2 run --progress-bar-update-rate 10\n  rbag burst run -n 10 --start-paused\n\nExit codes: 0 ok, 1 error, 2 usage error."
)]
pub struct Args {
    #[command(flatten)]
    pub middleware: MiddlewareArgs,
    #[command(flatten)]
    pub rmw: super::middleware::Ros2MiddlewareArgs,
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
    /// Play only these actions' five topics (`<action>/_action/...`; with other selections,
    /// beside them).
    #[arg(long, num_args = 1.., value_name = "ACTION")]
    pub actions: Vec<String>,
    /// Play topics and services matching this regular expression, and actions whose name
    /// matches it.
    #[arg(short = 'e', long, value_name = "REGEX")]
    pub regex: Option<Regex>,
    /// Leave out topics, services and actions matching this regular expression.
    #[arg(short = 'x', long, value_name = "REGEX")]
    pub exclude_regex: Option<Regex>,
    /// Leave out these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub exclude_topics: Vec<String>,
    /// Leave out these services.
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub exclude_services: Vec<String>,
    /// Leave out these actions' five topics.
    #[arg(long, num_args = 1.., value_name = "ACTION")]
    pub exclude_actions: Vec<String>,
    /// QoS per topic instead of the recorded one (YAML: `topic: {reliability: reliable, ...}`).
    #[arg(long, value_name = "FILE")]
    pub qos_profile_overrides_path: Option<PathBuf>,
    /// rosbag2's storage plugin config (YAML). SQLite3 `read: pragmas: ["cache_size = 2000"]`
    /// run on each .db3 opened (read-only, as rosbag2 opens it); MCAP has no reading settings.
    #[arg(long, value_name = "FILE")]
    pub storage_config_file: Option<PathBuf>,
    /// Loop playback.
    #[arg(short, long = "loop")]
    pub loop_: bool,
    /// Remap topics: `old:=new` (repeatable).
    #[arg(short = 'm', long, num_args = 1.., value_name = "OLD:=NEW")]
    pub remap: Vec<String>,
    /// Publish the bag's time on /clock (rosgraph_msgs/msg/Clock) at HZ (default 40).
    #[arg(long, value_name = "HZ", num_args = 0..=1, default_missing_value = "40")]
    pub clock: Option<f64>,
    /// Publish /clock at a message's time just before each message of these topics (as
    /// ros2 bag play; with or without --clock's steady rate).
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    pub clock_topics: Vec<String>,
    /// Publish /clock just before every message.
    #[arg(long, conflicts_with = "clock_topics")]
    pub clock_topics_all: bool,
    /// Wait SEC seconds before playing (the progress bar shows the state D, delayed).
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
    /// Accepted as `ros2 bag play` takes it: rbag never publishes loaned messages (it writes
    /// each recorded message straight from the bag), so there is nothing to disable.
    #[arg(long)]
    pub disable_loan_message: bool,
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
    /// Replay the recorded actions as an action client, as ros2 bag play does: the recorded
    /// send_goal, cancel_goal and get_result requests go to the live action server (each goal
    /// with a fresh goal id, its result asked for once it is accepted, cancels mapped to it);
    /// the feedback and status topics are not published, the server publishes them.
    #[arg(long)]
    pub send_actions_as_client: bool,
    /// With --publish-service-requests or --send-actions-as-client: replay the requests services received
    /// (service_introspection) or those clients sent (client_introspection).
    #[arg(long, value_name = "SOURCE", default_value = "service_introspection", value_parser = ["service_introspection", "client_introspection"])]
    pub service_requests_source: String,
    /// Storage id of the bag, as ros2 bag play takes it (accepted and checked; rbag detects
    /// the storage from the files).
    #[arg(short = 's', long, value_name = "mcap|sqlite3", value_parser = ["mcap", "sqlite3"])]
    pub storage: Option<String>,
    /// Play in order of receive time (the bag's log time) or send time (the publisher's source
    /// timestamp; SQLite3 bags store none, so there it is the receive time). The chosen time
    /// also sets the schedule, /clock, the start offset and --playback-until.
    #[arg(long, value_name = "ORDER", default_value = "received", value_parser = ["received", "sent"])]
    pub message_order: String,
    /// With --message-order sent: how many messages are read ahead and reordered by send time
    /// (1: storage order). With received, storage already gives log-time order.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub read_ahead_queue_size: usize,
    /// Redraw the progress bar at most HZ times a second (negative: on every message; 0: no
    /// bar). It is drawn only when stderr is a terminal, and not with -q.
    #[arg(long, value_name = "HZ", default_value_t = 3, allow_negative_numbers = true)]
    pub progress_bar_update_rate: i32,
    /// Blank lines between the playback output and the progress bar.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub progress_bar_separation_lines: usize,
    /// Print a JSON line of playback statistics on stderr at the end: messages, and how late
    /// each was sent against its schedule (p50/p99/max ns), with the wall time playing started.
    #[arg(long)]
    pub stats: bool,
    #[command(flatten)]
    pub types: super::TypeArgs,
    /// Print only errors and the final summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// What to print, as a ROS 2 node's logger level: debug, info (default), warn (as -q),
    /// error, fatal.
    #[arg(long, value_name = "LEVEL", value_enum)]
    pub log_level: Option<super::middleware::LogLevel>,
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
        message_order: if args.message_order == "sent" { MessageOrder::Sent } else { MessageOrder::Received },
        read_ahead: args.read_ahead_queue_size,
        // On the player's clock rather than before it, so the progress bar can show it.
        start_delay_ns: args.delay,
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

/// An action's name as a resolved name (`fibonacci` → `/fibonacci`).
fn action_name(name: &str) -> String {
    let name = name.trim_end_matches('/');
    if name.starts_with('/') {
        name.to_string()
    } else {
        format!("/{name}")
    }
}

/// The topics to play: `--topics`, the event topics of `--services`, the five topics of
/// `--actions` and of every action (in `bag_topics`: topic, type) whose name `-e` matches; the
/// same for the exclusions.
fn filter(args: &Args, bag_topics: &[(&str, &str)]) -> Filter {
    use rbag_live::play::ros2::service_event_topic;
    use rbag_live::play::ros2::{action_of, action_topics};
    let mut topics = args.topics.clone();
    topics.extend(args.services.iter().map(|s| service_event_topic(s)));
    topics.extend(args.actions.iter().flat_map(|a| action_topics(&action_name(a))));
    let mut exclude_topics = args.exclude_topics.clone();
    exclude_topics.extend(args.exclude_services.iter().map(|s| service_event_topic(s)));
    exclude_topics.extend(args.exclude_actions.iter().flat_map(|a| action_topics(&action_name(a))));
    // -e and -x see an action's name, as rosbag2's player does, beside its topics' names.
    for (topic, ty) in bag_topics {
        let Some((action, _)) = action_of(topic, ty) else { continue };
        if args.regex.as_ref().is_some_and(|r| r.is_match(action)) {
            topics.push(topic.to_string());
        }
        if args.exclude_regex.as_ref().is_some_and(|r| r.is_match(action)) {
            exclude_topics.push(topic.to_string());
        }
    }
    Filter {
        topics,
        regex: args.regex.clone(),
        exclude_topics,
        exclude_regex: args.exclude_regex.clone(),
        ..Filter::default()
    }
}

/// Opens a bag to play; with a storage config file, the reader runs its SQLite3 read pragmas
/// on every connection to a `.db3` file.
fn open_bag(
    path: &std::path::Path,
    config: Option<&rbag_bag::storage_config::StorageConfig>,
    args: &Args,
) -> Result<Box<dyn rbag_bag::StorageReader>> {
    use anyhow::Context as _;
    let (Some(config), Some(file)) = (config, args.storage_config_file.as_deref()) else {
        return super::open(path);
    };
    if config.read_pragmas.is_empty() {
        return super::open(path);
    }
    let reader = rbag_bag::storage_config::open_for_reading(path, config, super::remote::scan_allowed())
        .map_err(|e| super::with_hint(e.into()))
        .with_context(|| format!("reading with --storage-config-file {}", file.display()))?;
    let bag = rbag_bag::Bag::from_reader(path, reader);
    for w in bag.warnings() {
        note!("warning: {}: {w}", path.display());
    }
    Ok(bag.into_reader())
}

pub fn run(args: Args) -> Result<Outcome> {
    let mut paths = args.inputs.clone();
    paths.extend(args.more_inputs.iter().cloned());
    if paths.is_empty() {
        return Err(UsageError("rbag play --ros2: name at least one bag".into()).into());
    }
    let remaps = remaps(&args)?;
    let mut storage_config = None;
    if let Some(path) = &args.storage_config_file {
        let (format, config) = rbag_bag::storage_config::StorageConfig::load_for_reading(path)?;
        if let Some(note) = rbag_bag::storage_config::reading_note(format, &config) {
            note!("{note}");
        }
        storage_config = Some(config);
    }
    let qos_overrides = match &args.qos_profile_overrides_path {
        Some(p) => Overrides::load(p)?,
        None => Overrides::default(),
    };
    let bags = paths.iter().map(|p| open_bag(p, storage_config.as_ref(), &args)).collect::<Result<Vec<_>>>()?;
    super::check_topic_names(&bags, "--topics", &args.topics)?;
    super::check_topic_names(&bags, "--exclude-topics", &args.exclude_topics)?;
    super::check_topic_names(&bags, "--clock-topics", &args.clock_topics)?;
    let bag_topics: Vec<(String, String)> =
        bags.iter().flat_map(|b| b.connections().iter().map(|c| (c.topic.clone(), c.message_type.clone()))).collect();
    let bag_topics: Vec<(&str, &str)> = bag_topics.iter().map(|(t, ty)| (t.as_str(), ty.as_str())).collect();
    // -e that matches an action's name matched something.
    let action_matched = args.regex.as_ref().is_some_and(|r| {
        bag_topics.iter().any(|(t, ty)| rbag_live::play::ros2::action_of(t, ty).is_some_and(|(a, _)| r.is_match(a)))
    });
    let unmatched = !action_matched && super::regex_matches_nothing(&bags, "--regex", args.regex.as_ref());
    for (flag, names) in [("--actions", &args.actions), ("--exclude-actions", &args.exclude_actions)] {
        for name in names {
            let name = action_name(name);
            let known = bag_topics
                .iter()
                .any(|(t, ty)| rbag_live::play::ros2::action_of(t, ty).is_some_and(|(a, _)| a == name));
            if !known {
                return Err(UsageError(format!("{flag} {name}: no input has this action")).into());
            }
        }
    }
    let filter = filter(&args, &bag_topics);
    let level = super::middleware::LogLevel::of(args.log_level, args.quiet);
    let bar = Bar::start(&args, level);
    let mut options = options(&args);
    options.validate().map_err(|e| UsageError(format!("rbag play --ros2: {e}")))?;
    options.progress = bar.clone().map(Bar::hook);
    let print_bar = bar.clone();
    let spec = PlaySpec {
        bags,
        filter,
        options,
        pause_topics: Vec::new(),
        remaps,
        types: user_types(&args.types)?,
        delay_ns: 0,
        events: printer_to(true, level, move |line| match &print_bar {
            Some(b) => b.above(&line),
            None => note!("{line}"),
        }),
        clock: None,
    };
    let kind = if args.service_requests_source == "client_introspection" { REQUEST_SENT } else { REQUEST_RECEIVED };
    let ros2_options = Ros2Options {
        qos_overrides,
        wait_for_all_acked: args.wait_for_all_acked.map(Duration::from_millis),
        burst: args.num_messages,
        service_requests: args.publish_service_requests.then_some(kind),
        actions_as_client: args.send_actions_as_client.then_some(kind),
        clock_topics: args.clock_topics.clone(),
        clock_topics_all: args.clock_topics_all,
    };
    signals::install();
    let middleware = args.rmw.choose()?;
    let (handle, controls) = live::controls();
    let _raw = drive(&handle, !args.disable_keyboard_controls, |k| match k {
        Key::Space => Some(Control::TogglePause),
        Key::Right | Key::Char('s') => Some(Control::Step),
        Key::Up => Some(Control::FasterRate),
        Key::Down => Some(Control::SlowerRate),
        _ => None,
    })?;
    let result = match middleware {
        Ros2Middleware::Dds => live::ros2::play(&rbag_live::graph::participant()?, spec, &ros2_options, controls),
        Ros2Middleware::Zenoh => {
            let level = super::middleware::LogLevel::of(args.log_level, args.quiet);
            let log: rbag_live::record::Log = Arc::new(move |m: String| {
                if level.shows(&m) {
                    note!("{m}");
                }
            });
            live::ros2::play_zenoh(&rbag_live::graph::zenoh_session(&log)?, spec, &ros2_options, controls)
        }
    };
    let outcome = finish("rbag play --ros2", result, args.stats, args.quiet, None)?;
    Ok(if unmatched { Outcome::Dropped } else { outcome })
}

/// rosbag2's progress bar on stderr, shared by the playing thread (progress) and the threads
/// printing events (which go above it).
#[derive(Clone)]
struct Bar(Arc<std::sync::Mutex<(ProgressBar, std::time::Instant)>>);

impl Bar {
    /// The bar, its banner printed, when it is enabled, stderr is a terminal and status lines
    /// are shown.
    fn start(args: &Args, level: super::middleware::LogLevel) -> Option<Bar> {
        use std::io::IsTerminal;
        let bar = ProgressBar::new(args.progress_bar_update_rate, args.progress_bar_separation_lines);
        let shown = bar.enabled() && level <= super::middleware::LogLevel::Info && std::io::stderr().is_terminal();
        if !shown {
            return None;
        }
        write_stderr(&bar.banner());
        Some(Bar(Arc::new(std::sync::Mutex::new((bar, std::time::Instant::now())))))
    }

    fn hook(self) -> ProgressHook {
        ProgressHook::new(move |p| {
            let mut b = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let now = u64::try_from(b.1.elapsed().as_nanos()).unwrap_or(u64::MAX);
            if let Some(text) = b.0.update(p, now) {
                write_stderr(&text);
            }
        })
    }

    /// Prints `line` above the bar.
    fn above(&self, line: &str) {
        let b = self.0.lock().unwrap_or_else(|e| e.into_inner());
        write_stderr(&b.0.above(&format!("{line}\n")));
    }
}

/// Writes `text` to stderr at once, ignoring a closed terminal (as `note!`).
fn write_stderr(text: &str) {
    use std::io::Write as _;
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes());
    let _ = e.flush();
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
        let o = options(&a);
        assert_eq!((o.message_order, o.read_ahead, o.start_delay_ns), (MessageOrder::Received, 1000, 0));
        let a = Args::parse_from([
            "rbag play --ros2",
            "b",
            "--message-order",
            "sent",
            "--read-ahead-queue-size",
            "7",
            "-d",
            "1.5",
            "--progress-bar-update-rate",
            "-1",
            "--progress-bar-separation-lines",
            "0",
        ]);
        let o = options(&a);
        assert_eq!((o.message_order, o.read_ahead, o.start_delay_ns), (MessageOrder::Sent, 7, 1_500_000_000));
        assert_eq!((a.progress_bar_update_rate, a.progress_bar_separation_lines), (-1, 0));
        let a = Args::parse_from(["rbag play --ros2", "b"]);
        assert_eq!((a.progress_bar_update_rate, a.progress_bar_separation_lines), (3, 2));
    }

    #[test]
    fn actions_select_their_five_topics_and_regexes_see_action_names() {
        let fib = |t: &str| format!("/fibonacci/_action/{t}");
        let topics = [
            (fib("feedback"), "example_interfaces/action/Fibonacci_FeedbackMessage"),
            (fib("status"), "action_msgs/msg/GoalStatusArray"),
            (fib("send_goal/_service_event"), "example_interfaces/action/Fibonacci_SendGoal_Event"),
            ("/chatter".to_string(), "std_msgs/msg/String"),
        ];
        let bag: Vec<(&str, &str)> = topics.iter().map(|(t, ty)| (t.as_str(), *ty)).collect();
        let taken = |argv: &[&str]| -> Vec<&str> {
            let a = Args::parse_from([&["rbag play --ros2", "b"], argv].concat());
            let f = filter(&a, &bag);
            bag.iter().map(|(t, _)| *t).filter(|t| f.accepts_topic(t)).collect()
        };
        let action: Vec<&str> = bag[..3].iter().map(|(t, _)| *t).collect();
        assert_eq!(taken(&["--actions", "fibonacci"]), action);
        assert_eq!(taken(&["--exclude-actions", "/fibonacci"]), ["/chatter"]);
        assert_eq!(taken(&["-e", "^/fibonacci$"]), action, "the action's name, not its topics'");
        assert_eq!(taken(&["-x", "^/fibonacci$"]), ["/chatter"]);
        assert_eq!(taken(&["--actions", "/fibonacci", "--topics", "/chatter"]).len(), 4);
        assert!(Args::parse_from(["rbag play --ros2", "b", "--send-actions-as-client"]).send_actions_as_client);
    }
}
