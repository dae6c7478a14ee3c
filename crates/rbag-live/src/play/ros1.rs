//! Playback into a ROS 1 graph: each bag connection is advertised with its type, MD5 sum and
//! definition (latched where it was recorded latched); rosbag2 connections (CDR) are converted to
//! ROS 1 through the message layer. rosbag's `~pause_playback` service and
//! `--rate-control-topic` are served here.

use rbag_storage::ros1::keys;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rbag_bag::transcode::Rewrite;
use rbag_ros1::node::Node;
use rbag_ros1::tcpros::{Publication, ServiceDef, ServiceFailure, TopicPublisher};
use rbag_storage::Message;
use rbag_transport::clock::{Clock, SystemClock};
use rbag_transport::play::{BagSource, Control, PlayError, PlaySink, PlayState, Player};

use super::control::{PlayControls, PlayHandle};
use super::plan::{now_ns, pause_connections};
use super::plan::{plan_all, Converter, Planned};
use super::rate_control::RateControl;
use super::spec::{Error, Events, LiveReport, PlayEvent, PlaySpec};
use crate::graph::complete_connection;

/// What only ROS 1 playback has.
#[derive(Debug, Clone)]
pub struct Ros1Options {
    /// Prefix every published topic (`-p`), after remapping.
    pub prefix: Option<String>,
    /// Outgoing queue of each subscriber, in messages; the oldest is dropped when it is full.
    pub queue_size: usize,
    /// Wait for a subscriber on every topic before playing.
    pub wait_for_subscribers: bool,
    /// Hold playback until a Header stamp on this topic is at most this far (ns) behind the
    /// next message (`--rate-control-topic`, `--rate-control-max-delay`).
    pub rate_control: Option<(String, u64)>,
}

impl Default for Ros1Options {
    fn default() -> Self {
        Ros1Options { prefix: None, queue_size: 100, wait_for_subscribers: false, rate_control: None }
    }
}

/// rosgraph_msgs/Clock's MD5 sum.
const CLOCK_MD5: &str = "a9c97c1d230cfc112e270351a944ee47";
/// std_srvs/SetBool's MD5 sum.
const SET_BOOL_MD5: &str = "09fb03525b03e7ea1fd3992bafd87e16";

/// How one bag connection is published.
struct Out {
    publisher: Arc<TopicPublisher>,
    rewrite: Option<Box<Rewrite>>,
}

struct Ros1Sink {
    outs: BTreeMap<u32, Out>,
    converter: Converter,
    clock: Option<Arc<TopicPublisher>>,
    rate_control: Option<RateControl>,
    /// Whether playback is paused, for the `~pause_playback` service.
    paused: Arc<AtomicBool>,
    events: Events,
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
            c.publish(clock_ros1(bag_time_ns).into());
        }
        Ok(())
    }

    fn hold(&mut self, bag_time_ns: u64) -> bool {
        self.rate_control.as_ref().is_some_and(|r| r.hold(bag_time_ns))
    }

    fn state(&mut self, s: &PlayState) {
        self.paused.store(s.paused, Ordering::SeqCst);
        self.events.emit(PlayEvent::State(*s));
    }
}

/// A `rosgraph_msgs/Clock` in ROS 1: `time clock` (uint32 secs, uint32 nsecs).
fn clock_ros1(t: u64) -> Vec<u8> {
    let mut b = ((t / 1_000_000_000) as u32).to_le_bytes().to_vec();
    b.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
    b
}

/// The output topic of a bag topic: remapped, then prefixed.
fn output_topic(topic: &str, remaps: &BTreeMap<String, String>, prefix: Option<&str>) -> String {
    let t = remaps.get(topic).cloned().unwrap_or_else(|| topic.to_string());
    match prefix {
        Some(p) => format!("/{}/{}", p.trim_matches('/'), t.trim_start_matches('/')),
        None => t,
    }
}

/// Plays `spec` into the graph `node` belongs to, until the end, a stop, or the node is asked
/// to shut down. Remaps are the node's (`from:=to` arguments) overridden by the spec's. Bad
/// player options are refused before anything is advertised. The caller leaves the graph.
pub fn play(node: &Node, spec: PlaySpec, ros1: &Ros1Options, controls: PlayControls) -> Result<LiveReport, Error> {
    let PlaySpec { bags, filter, mut options, pause_topics, remaps, types, delay_ns, events, clock } = spec;
    let mut source = BagSource::with_filter(bags, filter)?;
    // A connection with no definition or MD5 sum gets the bundled type's, so subscribers that
    // check them connect.
    let (converter, planned) = plan_all(
        &source,
        &types,
        "ros1",
        |conn| {
            if let Some(w) = complete_connection(conn) {
                events.emit(PlayEvent::Warning(format!("topic {}: {w}", conn.topic)));
            }
        },
        &events,
    )?;
    options.pause_connections = pause_connections(&source, &pause_topics);
    let mut player = Player::new(options.clone()).map_err(Error::Options)?;

    let mut all_remaps = node.config().remaps.clone();
    all_remaps.extend(remaps);
    let rate_control = match &ros1.rate_control {
        Some((topic, max_delay)) => Some(RateControl::subscribe(node, topic, *max_delay, &events)?),
        None => None,
    };
    let paused = Arc::new(AtomicBool::new(options.start_paused));
    let mut sink = Ros1Sink {
        outs: BTreeMap::new(),
        converter,
        clock: None,
        rate_control,
        paused: paused.clone(),
        events: events.clone(),
    };
    let advertise = |p: Publication| {
        let what = format!("advertising {}", p.topic);
        node.advertise(p).map_err(|source| Error::Ros1 { what, source: Box::new(source) })
    };
    let queue_size = ros1.queue_size.max(1);
    let mut publishers: BTreeMap<String, (String, Arc<TopicPublisher>)> = BTreeMap::new();
    for Planned { id, conn, rewrite } in planned {
        let topic = output_topic(&conn.topic, &all_remaps, ros1.prefix.as_deref());
        let publisher = match publishers.get(&topic) {
            Some((ty, p)) if *ty == conn.message_type => p.clone(),
            Some((ty, _)) => {
                events.emit(PlayEvent::Warning(format!(
                    "topic {topic}: connection {} has type {} but {ty} is already published there; left out",
                    conn.id, conn.message_type
                )));
                continue;
            }
            None => {
                let p = advertise(Publication {
                    topic: topic.clone(),
                    msg_type: conn.message_type.clone(),
                    md5sum: conn.metadata.get(keys::MD5SUM).cloned().unwrap_or_else(|| "*".into()),
                    message_definition: conn.definition.clone(),
                    latching: conn.metadata.get(keys::LATCHING).is_some_and(|l| l == "1"),
                    caller_id: node.name().to_string(),
                    queue_size,
                })?;
                publishers.insert(topic.clone(), (conn.message_type.clone(), p.clone()));
                p
            }
        };
        sink.outs.insert(id, Out { publisher, rewrite });
    }
    if options.clock_hz.is_some() {
        sink.clock = Some(advertise(Publication {
            topic: "/clock".into(),
            msg_type: "rosgraph_msgs/Clock".into(),
            md5sum: CLOCK_MD5.into(),
            message_definition: "time clock\n".into(),
            latching: false,
            caller_id: node.name().to_string(),
            queue_size,
        })?);
    }
    let handle = controls.handle.clone();
    node.advertise_service(pause_service(node.name(), paused, handle.clone())).map_err(|source| Error::Ros1 {
        what: format!("serving {}/pause_playback", node.name()),
        source: Box::new(source),
    })?;
    let done = Arc::new(AtomicBool::new(false));
    {
        let (node, done) = (node.clone(), done.clone());
        std::thread::Builder::new()
            .name("shutdown-watch".into())
            .spawn(move || {
                while !done.load(Ordering::SeqCst) {
                    if handle.stopped() || node.wait_shutdown_request(Duration::from_millis(50)).is_some() {
                        handle.stop();
                        break;
                    }
                }
            })
            .map_err(Error::Thread)?;
    }
    let timing = Timing { delay_ns, clock };
    let result = run(&mut player, &mut source, &mut sink, &publishers, ros1, timing, &controls, &events);
    done.store(true, Ordering::SeqCst);
    let (play, started_wall_ns) = result?;
    let dropped: u64 = publishers.values().map(|(_, p)| p.dropped()).sum();
    Ok(LiveReport { play, started_wall_ns, dropped: Some(dropped) })
}

/// When to start and what time to play by.
struct Timing {
    delay_ns: u64,
    clock: Option<Arc<dyn Clock>>,
}

/// Waits for subscribers and the delay, plays, and lets queued messages drain.
#[allow(clippy::too_many_arguments)]
fn run(
    player: &mut Player,
    source: &mut BagSource,
    sink: &mut Ros1Sink,
    publishers: &BTreeMap<String, (String, Arc<TopicPublisher>)>,
    ros1: &Ros1Options,
    timing: Timing,
    controls: &PlayControls,
    events: &Events,
) -> Result<(Option<rbag_transport::play::PlayReport>, u64), Error> {
    if ros1.wait_for_subscribers {
        for (topic, (_, p)) in publishers {
            events.emit(PlayEvent::WaitingForSubscriber(topic.clone()));
            while !p.wait_for_subscribers(1, Duration::from_millis(100)) {
                if controls.handle.stopped() {
                    return Ok((None, 0));
                }
            }
        }
    }
    std::thread::sleep(Duration::from_nanos(timing.delay_ns));
    // The clock counts from its creation: wall time there plus the anchor's clock time is when
    // the first message was due.
    let system = SystemClock::new();
    let wall0 = now_ns().saturating_sub(system.now());
    let clock: &dyn Clock = timing.clock.as_deref().unwrap_or(&system);
    let report = player.run(source, sink, clock, &controls.rx);
    // Let queued messages reach subscribers before the links close.
    for (_, p) in publishers.values() {
        let deadline = Instant::now() + Duration::from_secs(2);
        while p.queued() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let report = report?;
    let started = wall0 + report.anchored_at.unwrap_or(0);
    Ok((Some(report), started))
}

/// rosbag play's `~pause_playback` (std_srvs/SetBool): `data: true` pauses, `false` resumes;
/// `success` says whether that changed anything, `message` what happened, as rosbag answers.
fn pause_service(node: &str, paused: Arc<AtomicBool>, handle: PlayHandle) -> ServiceDef {
    let handle = Mutex::new(handle);
    let handler = move |request: &[u8]| -> Result<Vec<u8>, ServiceFailure> {
        let want = *request.first().ok_or("an empty SetBool request")? != 0;
        let changed = paused.swap(want, Ordering::SeqCst) != want;
        if changed {
            let h = handle.lock().map_err(|_| "the player is gone")?;
            let sent = h.send(if want { Control::Pause } else { Control::Resume });
            if !sent {
                return Err("the player is gone".into());
            }
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
        md5sum: SET_BOOL_MD5.into(),
        caller_id: node.to_string(),
        handler: Arc::new(handler),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaps_then_prefix() {
        let remaps: BTreeMap<String, String> = [("/chatter".to_string(), "/talk".to_string())].into();
        assert_eq!(output_topic("/chatter", &remaps, None), "/talk");
        assert_eq!(output_topic("/chatter", &remaps, Some("pre")), "/pre/talk");
        assert_eq!(output_topic("/imu", &remaps, Some("/a/b/")), "/a/b/imu");
    }

    #[test]
    fn clock_messages_are_ros1_time() {
        assert_eq!(clock_ros1(3_000_000_009), vec![3, 0, 0, 0, 9, 0, 0, 0]);
    }
}
