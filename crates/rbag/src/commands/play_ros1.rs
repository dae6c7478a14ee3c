//! `rbag play --ros1`: the ROS 1 side of `play` (see `play.rs` for the flags).
//!
//! Each bag connection is published with its type, MD5 sum and definition; rosbag2 connections
//! (CDR) are converted to ROS 1 through the message layer, as `rbag convert` does. Scheduling,
//! pause, step, rate, loop and `/clock` are `rbag-transport`'s player.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use rbag_bag::transcode::Rewrite;
use rbag_ros1::tcpros::{Limits, Publication, ServiceDef, TopicPublisher};
use rbag_storage::{Connection, Message};
use rbag_transport::clock::SystemClock;
use rbag_transport::play::{BagSource, Control, PlayError, PlayOptions, PlaySink, PlayState, Player, RateStep};

use super::play::Args;
use super::play_plan::{keys_to_controls, plan_all, Converter, Planned};
use super::rate_control::RateControl;
use super::{keyboard, middleware, ros1, signals};
use crate::{Outcome, UsageError};

/// How one bag connection is published.
struct Out {
    publisher: Arc<TopicPublisher>,
    rewrite: Option<Box<Rewrite>>,
}

struct Ros1Sink {
    outs: BTreeMap<u32, Out>,
    converter: Converter,
    clock: Option<Arc<TopicPublisher>>,
    quiet: bool,
    rate_control: Option<RateControl>,
    /// Whether playback is paused, for the `~pause_playback` service.
    paused: Arc<AtomicBool>,
}

impl PlaySink for Ros1Sink {
    fn publish(&mut self, msg: &Message) -> Result<(), PlayError> {
        let Some(out) = self.outs.get(&msg.connection) else { return Ok(()) };
        let data = self.converter.bytes(out.rewrite.as_deref(), msg)?;
        out.publisher.publish(data);
        Ok(())
    }

    fn clock(&mut self, bag_time_ns: u64) -> Result<(), PlayError> {
        if let Some(c) = &self.clock {
            let secs = (bag_time_ns / 1_000_000_000) as u32;
            let nsecs = (bag_time_ns % 1_000_000_000) as u32;
            let mut b = secs.to_le_bytes().to_vec();
            b.extend_from_slice(&nsecs.to_le_bytes());
            c.publish(b.into());
        }
        Ok(())
    }

    fn hold(&mut self, bag_time_ns: u64) -> bool {
        self.rate_control.as_ref().is_some_and(|r| r.hold(bag_time_ns))
    }

    fn state(&mut self, s: &PlayState) {
        self.paused.store(s.paused, Ordering::SeqCst);
        if !self.quiet {
            let t = s.bag_time_ns as f64 / 1e9;
            let what = if s.paused { "PAUSED " } else { "RUNNING" };
            note!("[{what}] bag time {t:.6}  rate {:.3}", s.rate);
        }
    }
}

fn options(args: &Args, pause_connections: std::collections::BTreeSet<u32>) -> PlayOptions {
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
        pause_connections,
        rate_step: RateStep::Rosbag,
        ..PlayOptions::default()
    }
}

/// The output topic of a bag topic: remapped, then prefixed (`-p`).
fn output_topic(topic: &str, remaps: &BTreeMap<String, String>, prefix: Option<&str>) -> String {
    let t = remaps.get(topic).cloned().unwrap_or_else(|| topic.to_string());
    match prefix {
        Some(p) => format!("/{}/{}", p.trim_matches('/'), t.trim_start_matches('/')),
        None => t,
    }
}

pub fn run(args: Args) -> Result<Outcome> {
    let (remap_args, bags) = middleware::split_remaps(&args.inputs);
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
    let readers = paths.iter().map(|p| super::open(p)).collect::<Result<Vec<_>>>()?;
    let topics = (!args.topics.is_empty()).then(|| args.topics.clone());
    let mut source = BagSource::new(readers, topics)?;

    let (converter, planned) = plan_all(&source, &args.types, "ros1", |conn| {
        if let Some(w) = ros1::complete_connection(conn) {
            note!("warning: topic {}: {w}", conn.topic);
        }
    })?;

    // Bad options are refused before rbag joins the graph (or starts a master).
    let pause_connections =
        source.connections().iter().filter(|c| args.pause_topics.contains(&c.topic)).map(|c| c.id).collect();
    let mut player =
        Player::new(options(&args, pause_connections)).map_err(|e| UsageError(format!("rbag play: {e}")))?;

    signals::install();
    let graph = ros1::join(&ros1::anonymous("rbag_play"), &remap_args, Limits::default(), args.quiet)?;
    let node = graph.node.clone();
    let remaps = node.config().remaps.clone();
    let mut publishers: BTreeMap<String, (String, Arc<TopicPublisher>)> = BTreeMap::new();
    let rate_control = match &args.rate_control_topic {
        Some(topic) => Some(RateControl::subscribe(&node, topic, args.rate_control_max_delay)?),
        None => None,
    };
    let paused = Arc::new(AtomicBool::new(args.pause));
    let mut sink = Ros1Sink {
        outs: BTreeMap::new(),
        converter,
        clock: None,
        quiet: args.quiet,
        rate_control,
        paused: paused.clone(),
    };
    for Planned { id, conn, rewrite } in planned {
        let topic = output_topic(&conn.topic, &remaps, args.prefix.as_deref());
        let publisher = match publishers.get(&topic) {
            Some((ty, p)) if *ty == conn.message_type => p.clone(),
            Some((ty, _)) => {
                note!(
                    "warning: topic {topic}: connection {} has type {} but {ty} is already published there; left out",
                    conn.id,
                    conn.message_type
                );
                continue;
            }
            None => {
                let latching = planned_latching(&conn);
                let p = node.advertise(Publication {
                    topic: topic.clone(),
                    msg_type: conn.message_type.clone(),
                    md5sum: conn.metadata.get("md5sum").cloned().unwrap_or_else(|| "*".into()),
                    message_definition: conn.definition.clone(),
                    latching,
                    caller_id: node.name().to_string(),
                    queue_size: args.queue.max(1),
                })?;
                publishers.insert(topic.clone(), (conn.message_type.clone(), p.clone()));
                p
            }
        };
        sink.outs.insert(id, Out { publisher, rewrite });
    }
    if args.clock {
        sink.clock = Some(node.advertise(Publication {
            topic: "/clock".into(),
            msg_type: "rosgraph_msgs/Clock".into(),
            md5sum: "a9c97c1d230cfc112e270351a944ee47".into(),
            message_definition: "time clock\n".into(),
            latching: false,
            caller_id: node.name().to_string(),
            queue_size: args.queue.max(1),
        })?);
    }
    let (controls_tx, controls) = mpsc::channel();
    node.advertise_service(pause_service(node.name(), paused, controls_tx.clone()))?;
    let _raw = keys_to_controls(controls_tx.clone(), true, |k| match k {
        keyboard::Key::Space => Some(Control::TogglePause),
        keyboard::Key::Char('s') => Some(Control::Step),
        keyboard::Key::Char('t') => Some(Control::TogglePauseTopics),
        keyboard::Key::Up | keyboard::Key::Char('+') => Some(Control::FasterRate),
        keyboard::Key::Down | keyboard::Key::Char('-') => Some(Control::SlowerRate),
        _ => None,
    })?;
    {
        let tx = controls_tx.clone();
        let node = node.clone();
        std::thread::Builder::new().name("stop-watch".into()).spawn(move || loop {
            if signals::stop_requested() || node.wait_shutdown_request(Duration::from_millis(50)).is_some() {
                let _ = tx.send(Control::Quit);
                break;
            }
        })?;
    }

    if args.wait_for_subscribers {
        for (topic, (_, p)) in &publishers {
            if !args.quiet {
                note!("Waiting for a subscriber on {topic}...");
            }
            while !p.wait_for_subscribers(1, Duration::from_millis(100)) {
                if signals::stop_requested() {
                    graph.leave();
                    return Ok(Outcome::Ok);
                }
            }
        }
    }
    std::thread::sleep(Duration::from_nanos(args.delay));

    // The clock counts from its creation: wall time there plus the anchor's clock time is when
    // the first message was due.
    let (wall0, clock) = (rbag_ros1::node::now_ns(), SystemClock::new());
    let report = player.run(&mut source, &mut sink, &clock, &controls);
    // Let queued messages reach subscribers before the links close.
    for (_, p) in publishers.values() {
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while p.queued() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    graph.leave();
    let report = report?;
    let dropped: u64 = publishers.values().map(|(_, p)| p.dropped()).sum();
    super::play_plan::report(&report, wall0, Some(dropped), args.stats, args.quiet);
    if dropped > 0 {
        note!("warning: {dropped} message(s) dropped from full subscriber queues (--queue {})", args.queue);
        return Ok(Outcome::Dropped);
    }
    Ok(Outcome::Ok)
}

/// rosbag play's `~pause_playback` (std_srvs/SetBool): `data: true` pauses, `false` resumes;
/// `success` says whether that changed anything, `message` what happened, as rosbag answers.
fn pause_service(node: &str, paused: Arc<AtomicBool>, controls: mpsc::Sender<Control>) -> ServiceDef {
    let controls = std::sync::Mutex::new(controls);
    let handler = move |request: &[u8]| -> Result<Vec<u8>, String> {
        let want = *request.first().ok_or("an empty SetBool request")? != 0;
        let changed = paused.swap(want, Ordering::SeqCst) != want;
        if changed {
            let sent = controls.lock().map_err(|_| "the player is gone")?.send(if want {
                Control::Pause
            } else {
                Control::Resume
            });
            sent.map_err(|_| "the player is gone")?;
        }
        let message = match (changed, want) {
            (true, true) => "Playback is now paused",
            (true, false) => "Playback is now resumed",
            (false, true) => "Bag is already paused.",
            (false, false) => "Bag is already running.",
        };
        let mut response = vec![u8::from(changed)];
        response.extend_from_slice(&(message.len() as u32).to_le_bytes());
        response.extend_from_slice(message.as_bytes());
        Ok(response)
    };
    ServiceDef {
        name: format!("{node}/pause_playback"),
        srv_type: "std_srvs/SetBool".into(),
        md5sum: "09fb03525b03e7ea1fd3992bafd87e16".into(),
        caller_id: node.to_string(),
        handler: Arc::new(handler),
    }
}

fn planned_latching(conn: &Connection) -> bool {
    conn.metadata.get("latching").is_some_and(|l| l == "1")
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
        let o = options(&a, Default::default());
        assert_eq!(
            (o.rate, o.start_offset_ns, o.duration_ns, o.skip_empty_ns),
            (2.0, 1_500_000_000, Some(3_000_000_000), Some(2_000_000_000))
        );
        assert!(o.loop_ && o.keep_alive && o.start_paused && !o.immediate);
        assert_eq!(o.clock_hz, Some(50.0));
        assert_eq!(o.rate_step, RateStep::Rosbag);
        let o = options(&parse(&["x.bag", "--immediate", "--hz", "10"]), Default::default());
        assert!(o.immediate);
        assert_eq!(o.clock_hz, None, "--hz alone does not publish /clock");
    }

    #[test]
    fn remaps_then_prefix() {
        let remaps: BTreeMap<String, String> = [("/chatter".to_string(), "/talk".to_string())].into();
        assert_eq!(output_topic("/chatter", &remaps, None), "/talk");
        assert_eq!(output_topic("/chatter", &remaps, Some("pre")), "/pre/talk");
        assert_eq!(output_topic("/imu", &remaps, Some("/a/b/")), "/a/b/imu");
    }
}
