//! Playback into a ROS 2 DDS domain, as `ros2 bag play`: each topic is published with its
//! recorded type and, as rosbag2 does, the QoS its recorded publishers offered when they agreed
//! (else rosbag2's default), or the override's. ROS 1 connections are converted to ROS 2, so an
//! old `.bag` plays into ROS 2. rosbag2's player services (`/rosbag2_player/*`), burst and
//! `--publish-service-requests` are here.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rbag_bag::transcode::Rewrite;
use rbag_ros2::dds::{EndpointKind, Endpoints, Participant, RawWriter};
use rbag_ros2::names::{topic_to_dds, type_to_dds};
use rbag_ros2::qos::{adapt_offer_to_recorded_offers, Overrides};
use rbag_ros2::record::Log;
use rbag_storage::rosbag2::actions::action_type;
use rbag_storage::rosbag2::qos::{self as qos_text, policy, QosProfile};
use rbag_storage::rosbag2::{QOS_KEY, TYPE_HASH_KEY};
use rbag_storage::{Connection, Message};
use rbag_transport::clock::{Clock, SystemClock};
use rbag_transport::play::{BagSource, PlayError, PlayReport, PlaySink, PlaySource, PlayState, Player};

use super::action_client::{ActionEvents, ActionPlayer, ActionService};
use super::control::{PlayControls, PlayHandle};
use super::plan::{now_ns, pause_connections};
use super::plan::{plan_all, Converter, Planned};
use super::service_requests::RequestSender;
pub use super::service_requests::{REQUEST_RECEIVED, REQUEST_SENT};
use super::services::{self, PlayerView};
use super::spec::{Error, Events, LiveReport, PlayEvent, PlaySpec, UserTypes};
pub use rbag_ros2::names::service_event_topic;
/// Which action a topic belongs to and an action's five topics, for front ends' selections.
pub use rbag_storage::rosbag2::actions::{action_of, action_topics};

/// What only ROS 2 playback has.
#[derive(Debug, Clone, Default)]
pub struct Ros2Options {
    /// QoS per output topic instead of the recorded one.
    pub qos_overrides: Overrides,
    /// After each message, wait up to this long for every reliable subscriber to acknowledge it.
    pub wait_for_all_acked: Option<Duration>,
    /// `ros2 bag burst`: publish this many messages as fast as possible, then stop.
    pub burst: Option<u64>,
    /// Call the recorded services with the recorded requests of this event kind
    /// ([`REQUEST_RECEIVED`] or [`REQUEST_SENT`]) instead of publishing the service events.
    pub service_requests: Option<u8>,
    /// `--clock-topics`: publish `/clock` at a message's time just before each message of
    /// these (bag) topics.
    pub clock_topics: Vec<String>,
    /// `--clock-topics-all`: the same before every message.
    pub clock_topics_all: bool,
    /// `--send-actions-as-client`: replay the recorded requests of this event kind
    /// ([`REQUEST_RECEIVED`] or [`REQUEST_SENT`]) of every played action's services to the live
    /// action server, as an action client with fresh goal ids; its feedback and status topics
    /// are not published (the server publishes them).
    pub actions_as_client: Option<u8>,
}

impl Ros2Options {
    /// Whether a `/clock` publisher is needed beside `--clock`'s rate.
    fn clock_before_messages(&self) -> bool {
        self.clock_topics_all || !self.clock_topics.is_empty()
    }
}

/// What publishes one topic: a DDS writer, or a Zenoh publisher.
pub(super) trait TopicWriter: Send + Sync {
    /// Sends one serialized sample, waiting for slow reliable readers until `give_up`.
    fn send(&self, data: &[u8], source_timestamp: i64, give_up: &dyn Fn() -> bool) -> Result<(), BoxError>;
    /// Waits up to `timeout` for reliable readers to acknowledge what was sent.
    fn wait_for_acks(&self, timeout: Duration) -> Result<(), BoxError>;
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl TopicWriter for RawWriter {
    fn send(&self, data: &[u8], source_timestamp: i64, give_up: &dyn Fn() -> bool) -> Result<(), BoxError> {
        Ok(self.write_waiting(data, source_timestamp, give_up)?)
    }

    fn wait_for_acks(&self, timeout: Duration) -> Result<(), BoxError> {
        Ok(RawWriter::wait_for_acks(self, timeout)?)
    }
}

struct Out {
    writer: Arc<dyn TopicWriter>,
    rewrite: Option<Box<Rewrite>>,
}

struct Ros2Sink {
    outs: BTreeMap<u32, Out>,
    converter: Converter,
    clock: Option<Box<dyn TopicWriter>>,
    /// Connections before whose messages `/clock` is published (`--clock-topics`).
    clock_before: std::collections::BTreeSet<u32>,
    /// Which time of a message playback follows (`--message-order`): `/clock` says that one.
    order: rbag_transport::play::MessageOrder,
    ack_timeout: Option<Duration>,
    /// `burst`: messages left, and whom to tell it is done.
    burst: Option<(u64, PlayHandle)>,
    /// What the control services report.
    view: PlayerView,
    /// Service-event connections replayed as requests.
    requests: BTreeMap<u32, RequestSender>,
    /// Action service-event connections replayed by an action client (`--send-actions-as-client`).
    actions: Actions,
    /// Ends a wait for a slow reliable reader.
    stop: PlayHandle,
    events: Events,
}

fn now_i64() -> i64 {
    i64::try_from(now_ns()).unwrap_or(i64::MAX)
}

impl PlaySink for Ros2Sink {
    fn publish(&mut self, msg: &Message) -> Result<(), PlayError> {
        self.view.published_one();
        if let Some(r) = self.requests.get_mut(&msg.connection) {
            r.send(&msg.data, now_i64())?;
            return Ok(());
        }
        if let Some((k, events)) = self.actions.events.get_mut(&msg.connection) {
            match events.request(&msg.data) {
                Ok(Some(request)) => self.actions.players[*k].request(events.service(), request),
                Ok(None) => {}
                Err(why) => self.events.emit(PlayEvent::Warning(why)),
            }
            return Ok(());
        }
        let Some(out) = self.outs.get(&msg.connection) else { return Ok(()) };
        if self.clock_before.contains(&msg.connection) {
            if let Some(c) = &self.clock {
                c.send(&clock_cdr(self.order.time(msg)), now_i64(), &|| true).map_err(PlayError::sink)?;
            }
        }
        let data = self.converter.bytes(out.rewrite.as_deref(), msg)?;
        let stop = self.stop.clone();
        out.writer.send(&data, now_i64(), &move || stop.stopped()).map_err(PlayError::sink)?;
        if let Some((left, done)) = &mut self.burst {
            *left = left.saturating_sub(1);
            if *left == 0 {
                done.send(rbag_transport::play::Control::Quit);
            }
        }
        if let Some(t) = self.ack_timeout {
            if let Err(e) = out.writer.wait_for_acks(t) {
                self.events.emit(PlayEvent::Warning(e.to_string()));
            }
        }
        Ok(())
    }

    fn clock(&mut self, bag_time_ns: u64) -> Result<(), PlayError> {
        if let Some(c) = &self.clock {
            c.send(&clock_cdr(bag_time_ns), now_i64(), &|| true).map_err(PlayError::sink)?;
        }
        Ok(())
    }

    fn state(&mut self, s: &PlayState) {
        self.view.update(s);
        self.events.emit(PlayEvent::State(*s));
    }
}

/// The action clients of `--send-actions-as-client` and the event connections they replay.
#[derive(Default)]
struct Actions {
    players: Vec<ActionPlayer>,
    /// Connection → (index in `players`, its event reader).
    events: BTreeMap<u32, (usize, ActionEvents)>,
}

/// How long, after the last message, action clients wait for goals to be accepted so that
/// their get_result and postponed cancel requests go out (results are not waited for).
const ACTION_ANSWER_WAIT: Duration = Duration::from_secs(5);

/// Makes an action's client transport: (action, action type, where responses go).
type MakeClient<'a> = dyn FnMut(
        &str,
        &str,
        super::action_client::Responses,
    ) -> Result<
        (Box<dyn super::action_client::ActionRequests>, super::action_client::Ready),
        Box<dyn std::error::Error + Send + Sync>,
    > + 'a;

/// Takes every action's connections out of `planned` (`--send-actions-as-client`): feedback and
/// status are left unpublished, the service events replayed as requests of `kind` by one
/// action client per action, made by `make`.
fn split_actions(
    kind: u8,
    types: &UserTypes,
    source: &BagSource,
    planned: Vec<Planned>,
    events: &Events,
    make: &mut MakeClient<'_>,
) -> Result<(Vec<Planned>, Actions), Error> {
    let mut keep = Vec::new();
    let mut by_action: BTreeMap<String, Vec<Planned>> = BTreeMap::new();
    for p in planned {
        match action_of(&p.conn.topic, &p.conn.message_type) {
            Some((action, _)) => by_action.entry(action.to_string()).or_default().push(p),
            None => keep.push(p),
        }
    }
    let mut actions = Actions::default();
    let mut sources = BTreeMap::new();
    for (action, conns) in by_action {
        let ty = conns.iter().find_map(|p| {
            let (_, part) = action_of(&p.conn.topic, &p.conn.message_type)?;
            action_type(part, &p.conn.message_type)
        });
        let Some(ty) = ty else {
            events.emit(PlayEvent::Warning(format!(
                "action {action}: no send_goal, get_result or feedback topic names its type; its events are not replayed"
            )));
            continue;
        };
        let failed = |reason: String| Error::ServiceRequests { topic: format!("{action}/_action"), reason };
        let player = ActionPlayer::start(&action, events.clone(), Box::new(|r| make(&action, &ty, r)))
            .map_err(|e| failed(e.to_string()))?;
        let k = actions.players.len();
        actions.players.push(player);
        for p in conns {
            let Some(service) =
                action_of(&p.conn.topic, &p.conn.message_type).and_then(|(_, part)| ActionService::of_part(part))
            else {
                continue;
            };
            let bag = source.origin(p.id).map_or(0, |o| o.0);
            let bag_sources = match sources.entry(bag) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(types.sources(&source.readers()[bag].info()?.properties))
                }
            };
            let reader = ActionEvents::new(&p.conn, service, bag_sources, kind)
                .map_err(|reason| Error::ServiceRequests { topic: p.conn.topic.clone(), reason })?;
            actions.events.insert(p.id, (k, reader));
        }
    }
    Ok((keep, actions))
}

/// Waits up to [`MATCH_WAIT`] for every action client's server (rosbag2 sends nothing to a
/// server that is not ready; a warning per request says so).
fn wait_for_action_servers(actions: &Actions, stop: &PlayHandle, events: &Events) {
    let start = Instant::now();
    while start.elapsed() < MATCH_WAIT && !stop.stopped() {
        if actions.players.iter().all(ActionPlayer::server_ready) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for p in actions.players.iter().filter(|p| !p.server_ready()) {
        events.emit(PlayEvent::Warning(format!(
            "action {}: no action server answered within {} s",
            p.action(),
            MATCH_WAIT.as_secs()
        )));
    }
}

/// Makes a service-event connection's request sender (`None` for other connections), from its
/// bag's type sources.
type MakeSender<'a> =
    dyn FnMut(&Connection, &rbag_bag::decode::TypeSources) -> Result<Option<RequestSender>, Error> + 'a;

/// Takes the service-event connections out of `planned` and makes each, through `make`, a
/// request sender (DDS or Zenoh).
fn split_service_requests(
    types: &UserTypes,
    source: &BagSource,
    planned: Vec<Planned>,
    make: &mut MakeSender<'_>,
) -> Result<(Vec<Planned>, BTreeMap<u32, RequestSender>), Error> {
    let mut requests = BTreeMap::new();
    let mut keep = Vec::new();
    // Type sources are built once per bag, and only for bags with service events.
    let mut sources = BTreeMap::new();
    for p in planned {
        // An action's events are its own (published, or replayed by --send-actions-as-client).
        if !rbag_ros2::names::is_service_event(&p.conn.topic)
            || action_of(&p.conn.topic, &p.conn.message_type).is_some()
        {
            keep.push(p);
            continue;
        }
        let bag = source.origin(p.id).map_or(0, |o| o.0);
        let bag_sources = match sources.entry(bag) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(types.sources(&source.readers()[bag].info()?.properties))
            }
        };
        match make(&p.conn, bag_sources)? {
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

/// The QoS to offer on a topic: the override, else what its recorded publishers agreed on.
fn offer(topic: &str, conns: &[&Connection], overrides: &Overrides, events: &Events) -> QosProfile {
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
        events.emit(PlayEvent::Warning(w));
    }
    p
}

/// The first round of discovery: participants already running answer within it.
const FIRST_ROUND: Duration = Duration::from_millis(250);
/// Discovery is taken as settled once nothing new appeared for this long.
const SETTLE: Duration = Duration::from_millis(100);
/// How long [`wait_for_matches`] waits.
const MATCH_WAIT: Duration = Duration::from_secs(2);

/// Lets discovery match the subscribers already in the graph before the first message goes
/// out: a volatile subscriber matched a few milliseconds late would miss the bag's first
/// messages (`ros2 bag play` has that race). Waits until every reader discovery knows on our
/// topics is matched and no new one appeared for [`SETTLE`] (at least [`FIRST_ROUND`] after
/// start), at most [`MATCH_WAIT`]. A subscriber that does not answer discovery at all in that
/// time (a stopped process) is not waited for: a delay gives it longer.
fn wait_for_matches(
    participant: &Participant,
    writers: &[&RawWriter],
    stop: &PlayHandle,
    events: &Events,
) -> Result<(), Error> {
    let mut endpoints = Endpoints::new(participant)?;
    let start = Instant::now();
    let mut last_change = start;
    loop {
        if !endpoints.poll().is_empty() {
            last_change = Instant::now();
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
        if start.elapsed() >= MATCH_WAIT || stop.stopped() {
            if !missing.is_empty() {
                events.emit(PlayEvent::Warning(format!(
                    "not every subscriber on {} matched within {} s (incompatible QoS?); playing anyway",
                    missing.join(", "),
                    MATCH_WAIT.as_secs()
                )));
            }
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The writer of every output topic, by topic: (type, writer).
type Writers<W> = BTreeMap<String, (String, Arc<W>)>;

/// One output topic to declare a writer for: its name, DDS type, the QoS to offer and the
/// recorded type hash.
pub(super) struct TopicPlan<'a> {
    pub topic: &'a str,
    pub dds_type: String,
    pub qos: QosProfile,
    pub type_hash: Option<&'a str>,
}

/// A writer per output topic, made by `make`.
fn writers<W>(
    planned: &[Planned],
    remaps: &BTreeMap<String, String>,
    overrides: &Overrides,
    events: &Events,
    mut make: impl FnMut(TopicPlan<'_>) -> Result<W, Error>,
) -> Result<Writers<W>, Error> {
    let mut by_topic: BTreeMap<String, Vec<&Connection>> = BTreeMap::new();
    for Planned { conn, .. } in planned {
        let topic = remaps.get(&conn.topic).cloned().unwrap_or_else(|| conn.topic.clone());
        by_topic.entry(topic).or_default().push(conn);
    }
    let mut writers = Writers::new();
    for (topic, conns) in &by_topic {
        let ty = &conns[0].message_type;
        let dds_type = type_to_dds(ty).ok_or_else(|| Error::NoDdsType { topic: topic.clone(), ty: ty.clone() })?;
        let qos = offer(topic, conns, overrides, events);
        let type_hash = conns[0].metadata.get(TYPE_HASH_KEY).map(String::as_str);
        let w = make(TopicPlan { topic, dds_type, qos, type_hash })?;
        writers.insert(topic.clone(), (ty.clone(), Arc::new(w)));
    }
    Ok(writers)
}

/// The QoS of the `/clock` publisher (`--clock`): best effort, keep last 1.
fn clock_qos() -> QosProfile {
    QosProfile {
        history: policy::KEEP_LAST,
        depth: 1,
        reliability: policy::BEST_EFFORT,
        durability: policy::VOLATILE,
        ..QosProfile::default()
    }
}

/// A bag planned for a ROS 2 graph: the source, its connections, and the player.
struct Prepared {
    source: BagSource,
    planned: Vec<Planned>,
    converter: Converter,
    player: Player,
    options: rbag_transport::play::PlayOptions,
    remaps: BTreeMap<String, String>,
    types: UserTypes,
    delay_ns: u64,
    events: Events,
    clock: Option<Arc<dyn Clock>>,
}

fn prepare(spec: PlaySpec, ros2: &Ros2Options) -> Result<Prepared, Error> {
    let PlaySpec { bags, filter, mut options, pause_topics, remaps, types, delay_ns, events, clock } = spec;
    let source = BagSource::with_filter(bags, filter)?;
    let (converter, planned) = plan_all(&source, &types, "cdr", |_| {}, &events)?;
    options.pause_connections = pause_connections(&source, &pause_topics);
    if ros2.burst.is_some() {
        options.immediate = true;
        options.from_start_point = false;
    }
    let player = Player::new(options.clone()).map_err(Error::Options)?;
    Ok(Prepared { source, planned, converter, player, options, remaps, types, delay_ns, events, clock })
}

/// The sink for `prepared`'s connections, publishing through `writers`.
fn sink<W: TopicWriter + 'static>(
    prepared: &mut Prepared,
    writers: &Writers<W>,
    ros2: &Ros2Options,
    handle: &PlayHandle,
    requests: BTreeMap<u32, RequestSender>,
) -> Ros2Sink {
    let events = &prepared.events;
    let mut sink = Ros2Sink {
        outs: BTreeMap::new(),
        converter: std::mem::take(&mut prepared.converter),
        clock: None,
        clock_before: Default::default(),
        order: prepared.options.message_order,
        ack_timeout: ros2.wait_for_all_acked,
        burst: None,
        view: PlayerView::new(prepared.options.start_paused, prepared.options.rate),
        requests,
        actions: Actions::default(),
        stop: handle.clone(),
        events: events.clone(),
    };
    for Planned { id, conn, rewrite } in std::mem::take(&mut prepared.planned) {
        let topic = prepared.remaps.get(&conn.topic).cloned().unwrap_or_else(|| conn.topic.clone());
        let Some((ty, writer)) = writers.get(&topic) else { continue };
        if *ty != conn.message_type {
            events.emit(PlayEvent::Warning(format!(
                "topic {topic}: connection {} has type {} but {ty} is already published there; left out",
                conn.id, conn.message_type
            )));
            continue;
        }
        let writer: Arc<dyn TopicWriter> = writer.clone();
        if ros2.clock_topics_all || ros2.clock_topics.contains(&conn.topic) {
            sink.clock_before.insert(id);
        }
        sink.outs.insert(id, Out { writer, rewrite });
    }
    sink
}

/// Plays `prepared` into `sink` after the delay; reliable readers get up to 2 s to
/// acknowledge the end.
fn run<W: TopicWriter>(
    mut prepared: Prepared,
    mut sink: Ros2Sink,
    writers: &Writers<W>,
    controls: &PlayControls,
) -> Result<LiveReport, Error> {
    std::thread::sleep(Duration::from_nanos(prepared.delay_ns));
    // The clock counts from its creation: wall time there plus the anchor's clock time is when
    // the first message was due.
    let system = SystemClock::new();
    let wall0 = now_ns().saturating_sub(system.now());
    let clock_ref: &dyn Clock = match &prepared.clock {
        Some(c) => c.as_ref(),
        None => &system,
    };
    let report: Result<PlayReport, PlayError> =
        prepared.player.run(&mut prepared.source, &mut sink, clock_ref, &controls.rx);
    // Goals accepted late still get their get_result and postponed cancels.
    for player in std::mem::take(&mut sink.actions.players) {
        player.finish(ACTION_ANSWER_WAIT);
    }
    for (_, w) in writers.values() {
        let _ = w.wait_for_acks(Duration::from_secs(2));
    }
    // Requests still on their way when the process exits would be lost.
    for r in sink.requests.values() {
        if let Some(warning) = r.flush(Duration::from_secs(2)) {
            prepared.events.emit(PlayEvent::Warning(warning));
        }
    }
    let report = report?;
    let started_wall_ns = wall0 + report.anchored_at.unwrap_or(0);
    Ok(LiveReport { play: Some(report), started_wall_ns, dropped: None })
}

/// Plays `spec` into `participant`'s domain until the end, a stop, or the end of a burst.
/// Bad player options are refused before anything is published. rosbag2's player services are
/// served while it plays; their log lines arrive as [`PlayEvent::Info`].
pub fn play(
    participant: &Participant,
    spec: PlaySpec,
    ros2: &Ros2Options,
    controls: PlayControls,
) -> Result<LiveReport, Error> {
    let mut prepared = prepare(spec, ros2)?;
    let planned = std::mem::take(&mut prepared.planned);
    let (planned, actions) = match ros2.actions_as_client {
        Some(kind) => {
            let mut make: Box<MakeClient<'_>> = Box::new(|action, ty, responses| {
                let (requests, ready) =
                    super::action_client::DdsActionRequests::new(participant, action, ty, responses)?;
                Ok((Box::new(requests) as Box<dyn super::action_client::ActionRequests>, ready))
            });
            split_actions(kind, &prepared.types, &prepared.source, planned, &prepared.events, &mut make)?
        }
        None => (planned, Actions::default()),
    };
    let (planned, requests) = match ros2.service_requests {
        Some(kind) => {
            let mut make: Box<MakeSender<'_>> =
                Box::new(|conn, sources| RequestSender::new(participant, conn, sources, kind));
            split_service_requests(&prepared.types, &prepared.source, planned, &mut make)?
        }
        None => (planned, BTreeMap::new()),
    };
    prepared.planned = planned;
    let writers = writers(&prepared.planned, &prepared.remaps, &ros2.qos_overrides, &prepared.events, |t| {
        let user_data = t.type_hash.map(|h| format!("typehash={h};"));
        Ok(RawWriter::new(participant, &topic_to_dds(t.topic), &t.dds_type, &t.qos, user_data.as_deref())?)
    })?;
    let handle = controls.handle.clone();
    let mut sink = sink(&mut prepared, &writers, ros2, &handle, requests);
    wait_for_action_servers(&actions, &handle, &prepared.events);
    sink.actions = actions;
    let clock = if prepared.options.clock_hz.is_some() || ros2.clock_before_messages() {
        Some(RawWriter::new(participant, "rt/clock", "rosgraph_msgs::msg::dds_::Clock_", &clock_qos(), None)?)
    } else {
        None
    };
    let all: Vec<&RawWriter> = writers
        .values()
        .map(|(_, w)| w.as_ref())
        .chain(sink.requests.values().filter_map(RequestSender::writer))
        .collect();
    wait_for_matches(participant, &all, &handle, &prepared.events)?;
    sink.clock = clock.map(|c| Box::new(c) as Box<dyn TopicWriter>);
    if let Some(n) = ros2.burst {
        if n == 0 {
            return Ok(LiveReport { play: None, started_wall_ns: 0, dropped: None });
        }
        sink.burst = Some((n, handle.clone()));
    }
    let log = info_log(&prepared.events);
    let _node = rbag_ros2::dds::NodeAnnouncer::start(participant, "/", "rosbag2_player")?;
    let _services = services::player(participant, &handle, &sink.view, prepared.source.time_range(), &log)?;
    run(prepared, sink, &writers, &controls)
}

/// Plays `spec` into a Zenoh graph, as rmw_zenoh publishers would: each topic with its
/// recorded type, hash and QoS, a `/clock` publisher with `--clock`, and rosbag2's player
/// services as queryables; `--send-actions-as-client` and `--publish-service-requests` through
/// rmw_zenoh-style clients (queries).
#[cfg(feature = "zenoh")]
pub fn play_zenoh(
    session: &Arc<rbag_ros2::zenoh::ZenohSession>,
    spec: PlaySpec,
    ros2: &Ros2Options,
    controls: PlayControls,
) -> Result<LiveReport, Error> {
    use rbag_ros2::zenoh::{ZenohPublisher, ZenohServices};
    let mut prepared = prepare(spec, ros2)?;
    let services_node = ZenohServices::new(session.clone(), "rosbag2_player")?;
    let node = services_node.node();
    let planned = std::mem::take(&mut prepared.planned);
    let (planned, actions) = match ros2.actions_as_client {
        Some(kind) => {
            let mut make: Box<MakeClient<'_>> = Box::new(|action, ty, responses| {
                let (requests, ready) =
                    super::action_client::ZenohActionRequests::new(session, node, action, ty, responses)?;
                Ok((Box::new(requests) as Box<dyn super::action_client::ActionRequests>, ready))
            });
            split_actions(kind, &prepared.types, &prepared.source, planned, &prepared.events, &mut make)?
        }
        None => (planned, Actions::default()),
    };
    let (planned, requests) = match ros2.service_requests {
        Some(kind) => {
            let mut make: Box<MakeSender<'_>> =
                Box::new(|conn, sources| RequestSender::zenoh(session, node, conn, sources, kind));
            split_service_requests(&prepared.types, &prepared.source, planned, &mut make)?
        }
        None => (planned, BTreeMap::new()),
    };
    prepared.planned = planned;
    let unknown_hash = "RIHS01_0000000000000000000000000000000000000000000000000000000000000000";
    let writers = writers(&prepared.planned, &prepared.remaps, &ros2.qos_overrides, &prepared.events, |t| {
        let hash = t.type_hash.unwrap_or(unknown_hash);
        Ok(ZenohPublisher::new(session, node, t.topic, &t.dds_type, hash, &t.qos)?)
    })?;
    let handle = controls.handle.clone();
    let mut sink = sink(&mut prepared, &writers, ros2, &handle, requests);
    wait_for_action_servers(&actions, &handle, &prepared.events);
    sink.actions = actions;
    if prepared.options.clock_hz.is_some() || ros2.clock_before_messages() {
        let hash = "RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564";
        let clock =
            ZenohPublisher::new(session, node, "/clock", "rosgraph_msgs::msg::dds_::Clock_", hash, &clock_qos())?;
        sink.clock = Some(Box::new(clock));
    }
    // Subscribers already in the graph are matched before the first message, and the services
    // requests go to are found by their tokens, as over DDS.
    let start = Instant::now();
    let ready =
        || writers.values().all(|(_, w)| w.matched()) && sink.requests.values().all(RequestSender::server_ready);
    while start.elapsed() < FIRST_ROUND || (start.elapsed() < MATCH_WAIT && !ready()) {
        if handle.stopped() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for r in sink.requests.values().filter(|r| !r.server_ready()) {
        prepared.events.emit(PlayEvent::Warning(format!(
            "service {}: no server found within {} s; its requests are sent anyway",
            r.service(),
            MATCH_WAIT.as_secs()
        )));
    }
    if let Some(n) = ros2.burst {
        if n == 0 {
            return Ok(LiveReport { play: None, started_wall_ns: 0, dropped: None });
        }
        sink.burst = Some((n, handle.clone()));
    }
    let log = info_log(&prepared.events);
    let _services = services::player(&services_node, &handle, &sink.view, prepared.source.time_range(), &log)?;
    run(prepared, sink, &writers, &controls)
}

/// The player's log lines, as [`PlayEvent::Info`].
fn info_log(events: &Events) -> Log {
    let events = events.clone();
    Arc::new(move |m: String| events.emit(PlayEvent::Info(m)))
}

#[cfg(feature = "zenoh")]
impl TopicWriter for rbag_ros2::zenoh::ZenohPublisher {
    fn send(&self, data: &[u8], source_timestamp: i64, _give_up: &dyn Fn() -> bool) -> Result<(), BoxError> {
        Ok(self.write(data, source_timestamp)?)
    }

    fn wait_for_acks(&self, _timeout: Duration) -> Result<(), BoxError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_messages_are_builtin_time_in_cdr() {
        assert_eq!(clock_cdr(1_500_000_007), vec![0, 1, 0, 0, 1, 0, 0, 0, 7, 0x65, 0xcd, 0x1d]);
    }
}
