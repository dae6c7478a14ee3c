//! `ros2 bag play --send-actions-as-client`: recorded action service events become requests
//! of an action client, as rosbag2's `PlayerActionClient` sends them (Kilted+; research19 §3d):
//!
//! - a recorded send_goal request goes out with a fresh goal id (recorded → new remembered);
//!   once the server accepts it, a get_result follows at once (rclcpp's result-aware goal);
//! - a recorded cancel_goal is sent for the new id, postponed until the goal is accepted;
//! - a recorded get_result is sent for the new id unless the automatic one already went;
//! - responses are only read to learn acceptance, and the player does not wait for results.
//!
//! The mapping lives in [`ActionClient`], a state machine with no middleware; the requests go
//! through an [`ActionRequests`] (DDS as rmw_cyclonedds clients, or Zenoh as rmw_zenoh's) and
//! responses come back through [`Responses`] to one worker thread per action.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rbag_bag::decode::{compile, TypeSources};
use rbag_msg::{Encoding, Schema};
use rbag_storage::rosbag2::actions::ActionPart;
use rbag_storage::Connection;

use super::service_requests::request_of;
use super::spec::{Events, PlayEvent};

/// A goal id (`unique_identifier_msgs/UUID`).
pub type GoalId = [u8; 16];

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One of an action's three services.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActionService {
    /// `_action/send_goal`.
    SendGoal,
    /// `_action/cancel_goal` (`action_msgs/srv/CancelGoal`).
    CancelGoal,
    /// `_action/get_result`.
    GetResult,
}

impl ActionService {
    /// The three, in the order requests usually go.
    pub const ALL: [ActionService; 3] = [ActionService::SendGoal, ActionService::CancelGoal, ActionService::GetResult];

    /// The service's name under the action (`send_goal`).
    pub fn name(self) -> &'static str {
        match self {
            ActionService::SendGoal => "send_goal",
            ActionService::CancelGoal => "cancel_goal",
            ActionService::GetResult => "get_result",
        }
    }

    /// The service `part` is the event topic of, if any.
    pub fn of_part(part: ActionPart) -> Option<ActionService> {
        match part {
            ActionPart::SendGoal => Some(ActionService::SendGoal),
            ActionPart::CancelGoal => Some(ActionService::CancelGoal),
            ActionPart::GetResult => Some(ActionService::GetResult),
            ActionPart::Feedback | ActionPart::Status => None,
        }
    }

    /// The service's request and response DDS type names less `Request_`/`Response_`
    /// (`example_interfaces::action::dds_::Fibonacci_SendGoal_`) for an action of type
    /// `pkg/action/T`.
    pub fn dds_type_prefix(self, action_type: &str) -> Option<String> {
        let (pkg, name) = action_type.split_once("/action/")?;
        if pkg.is_empty() || name.is_empty() || name.contains('/') {
            return None;
        }
        Some(match self {
            ActionService::SendGoal => format!("{pkg}::action::dds_::{name}_SendGoal_"),
            ActionService::GetResult => format!("{pkg}::action::dds_::{name}_GetResult_"),
            ActionService::CancelGoal => "action_msgs::srv::dds_::CancelGoal_".to_string(),
        })
    }
}

/// Why a recorded action request could not be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ActionError {
    /// The request is too short to hold a goal id.
    #[error("action {action}: {} request of {len} bytes holds no goal id", .service.name())]
    Short {
        /// The action.
        action: String,
        /// The service.
        service: ActionService,
        /// The request's length with its encapsulation header.
        len: usize,
    },
    /// A cancel_goal or get_result for a goal no replayed send_goal announced.
    #[error("action {action}: can't send {} request for goal {} before its send_goal request", .service.name(), hex(.goal))]
    UnknownGoal {
        /// The action.
        action: String,
        /// The service.
        service: ActionService,
        /// The recorded goal id.
        goal: GoalId,
    },
    /// The server rejected the goal a request is about.
    #[error("action {action}: {} request for goal {} not sent: the server rejected the goal", .service.name(), hex(.goal))]
    Rejected {
        /// The action.
        action: String,
        /// The service.
        service: ActionService,
        /// The recorded goal id.
        goal: GoalId,
    },
    /// A response that is not one of the service's.
    #[error("action {action}: a {} response of {len} bytes is not one", .service.name())]
    BadResponse {
        /// The action.
        action: String,
        /// The service.
        service: ActionService,
        /// Its length.
        len: usize,
    },
}

/// The goal id as rclcpp prints UUIDs: 32 hex digits.
pub fn hex(id: &GoalId) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a goal stands with the live server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Sent, no answer yet.
    Sent,
    /// Accepted; the automatic get_result went.
    Accepted,
    /// Rejected.
    Rejected,
}

#[derive(Debug, Clone)]
struct Goal {
    new_id: GoalId,
    standing: Standing,
    /// Cancel requests (new id already written) waiting for the acceptance.
    postponed_cancels: Vec<Vec<u8>>,
}

/// Something [`ActionClient`] wants done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Send `request` (CDR with its encapsulation header) to `service`, about the recorded
    /// goal `goal`; then tell [`ActionClient::sent`] its sequence number.
    Send {
        /// The service.
        service: ActionService,
        /// The request to send.
        request: Vec<u8>,
        /// The recorded goal id it concerns.
        goal: GoalId,
    },
    /// A line for the log.
    Info(String),
    /// Something the user should know; the request was skipped.
    Warning(String),
}

/// rosbag2's action client logic for one action, without a middleware: it rewrites recorded
/// requests for fresh goal ids and decides what goes out when.
pub struct ActionClient {
    action: String,
    goals: BTreeMap<GoalId, Goal>,
    /// Requests sent and not answered: (service, sequence number) → recorded goal id.
    in_flight: BTreeMap<(ActionService, i64), GoalId>,
    new_id: Box<dyn FnMut() -> GoalId + Send>,
}

/// Offset of the goal id in every action request: right after the encapsulation header (the
/// UUID is the first field of SendGoal and GetResult requests, and of CancelGoal's GoalInfo).
const GOAL_ID: std::ops::Range<usize> = 4..20;
/// CancelGoal's `goal_info.stamp` (int32 sec, uint32 nanosec) after the goal id.
const CANCEL_STAMP: std::ops::Range<usize> = 20..28;

impl ActionClient {
    /// A client of `action` whose fresh goal ids come from `new_id`.
    pub fn new(action: &str, new_id: impl FnMut() -> GoalId + Send + 'static) -> ActionClient {
        ActionClient {
            action: action.to_string(),
            goals: BTreeMap::new(),
            in_flight: BTreeMap::new(),
            new_id: Box::new(new_id),
        }
    }

    /// A client with random goal ids.
    pub fn random(action: &str) -> ActionClient {
        ActionClient::new(action, random_goal_id)
    }

    /// The action's name.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// What to do with one recorded request (CDR with its encapsulation header) of `service`.
    pub fn request(&mut self, service: ActionService, mut request: Vec<u8>) -> Result<Vec<Step>, ActionError> {
        let min = if service == ActionService::CancelGoal { CANCEL_STAMP.end } else { GOAL_ID.end };
        if request.len() < min {
            return Err(ActionError::Short { action: self.action.clone(), service, len: request.len() });
        }
        let mut recorded = GoalId::default();
        recorded.copy_from_slice(&request[GOAL_ID]);
        let action = self.action.clone();
        match service {
            ActionService::SendGoal => {
                let new_id = (self.new_id)();
                request[GOAL_ID].copy_from_slice(&new_id);
                // A goal id sent again is a new goal, as rosbag2 remembers the latest mapping.
                self.goals.insert(recorded, Goal { new_id, standing: Standing::Sent, postponed_cancels: Vec::new() });
                Ok(vec![
                    Step::Info(format!("action {action}: goal {} sent as goal {}", hex(&recorded), hex(&new_id))),
                    Step::Send { service, request, goal: recorded },
                ])
            }
            ActionService::CancelGoal if recorded == GoalId::default() => {
                // A zero id cancels by time (every goal before the stamp): nothing to map.
                Ok(vec![Step::Send { service, request, goal: recorded }])
            }
            ActionService::CancelGoal | ActionService::GetResult => {
                let Some(goal) = self.goals.get_mut(&recorded) else {
                    return Err(ActionError::UnknownGoal { action, service, goal: recorded });
                };
                request[GOAL_ID].copy_from_slice(&goal.new_id);
                match (service, goal.standing) {
                    (_, Standing::Rejected) => Err(ActionError::Rejected { action, service, goal: recorded }),
                    (ActionService::CancelGoal, standing) => {
                        // rclcpp's async_cancel_goal(handle) names the goal with a zero stamp.
                        request[CANCEL_STAMP].fill(0);
                        if standing == Standing::Sent {
                            goal.postponed_cancels.push(request);
                            return Ok(vec![Step::Info(format!(
                                "action {action}: cancel of goal {} postponed until the goal is accepted",
                                hex(&recorded)
                            ))]);
                        }
                        Ok(vec![Step::Send { service, request, goal: recorded }])
                    }
                    // The result-aware goal asked for its result on acceptance, or will.
                    _ => Ok(Vec::new()),
                }
            }
        }
    }

    /// Tells the client the sequence number a [`Step::Send`] went with.
    pub fn sent(&mut self, service: ActionService, sequence: i64, goal: GoalId) {
        self.in_flight.insert((service, sequence), goal);
    }

    /// What to do with a response (CDR with its encapsulation header) to the request of
    /// `service` sent with `sequence`; responses to other clients' requests are ignored.
    pub fn response(
        &mut self,
        service: ActionService,
        sequence: i64,
        response: &[u8],
    ) -> Result<Vec<Step>, ActionError> {
        let Some(recorded) = self.in_flight.remove(&(service, sequence)) else { return Ok(Vec::new()) };
        let action = self.action.clone();
        // Every response starts with one byte after the header: accepted, status, return code.
        let Some(&first) = response.get(4) else {
            return Err(ActionError::BadResponse { action, service, len: response.len() });
        };
        match service {
            ActionService::SendGoal => {
                let Some(goal) = self.goals.get_mut(&recorded) else { return Ok(Vec::new()) };
                if goal.standing != Standing::Sent {
                    return Ok(Vec::new());
                }
                if first == 0 {
                    goal.standing = Standing::Rejected;
                    goal.postponed_cancels.clear();
                    return Ok(vec![Step::Warning(format!(
                        "action {action}: the server rejected goal {} (recorded {})",
                        hex(&goal.new_id),
                        hex(&recorded)
                    ))]);
                }
                goal.standing = Standing::Accepted;
                let mut result = vec![0, 1, 0, 0];
                result.extend_from_slice(&goal.new_id);
                let mut steps = vec![
                    Step::Info(format!("action {action}: goal {} accepted", hex(&goal.new_id))),
                    Step::Send { service: ActionService::GetResult, request: result, goal: recorded },
                ];
                steps.extend(goal.postponed_cancels.drain(..).map(|request| Step::Send {
                    service: ActionService::CancelGoal,
                    request,
                    goal: recorded,
                }));
                Ok(steps)
            }
            ActionService::GetResult => {
                let new = self.goals.get(&recorded).map_or(recorded, |g| g.new_id);
                Ok(vec![Step::Info(format!("action {action}: goal {} ended with status {}", hex(&new), first as i8))])
            }
            ActionService::CancelGoal => {
                let new = self.goals.get(&recorded).map_or(recorded, |g| g.new_id);
                Ok(vec![Step::Info(format!(
                    "action {action}: cancel of goal {} answered with return code {}",
                    hex(&new),
                    first as i8
                ))])
            }
        }
    }

    /// Whether a goal still waits for the server's answer (then its get_result and postponed
    /// cancels have not gone yet).
    pub fn awaiting_acceptance(&self) -> bool {
        self.goals.values().any(|g| g.standing == Standing::Sent)
    }
}

/// A fresh goal id: random bytes as rclcpp's `generate_goal_id` (std's randomly keyed hasher
/// over the time and a counter, for want of a random crate).
pub fn random_goal_id() -> GoalId {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let mut out = GoalId::default();
    for (k, half) in out.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_usize(k);
        h.write_u64(rbag_transport::now_ns());
        h.write_u32(std::process::id());
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    // Version 4, variant 1, as a random UUID.
    out[6] = (out[6] & 0x0f) | 0x40;
    out[8] = (out[8] & 0x3f) | 0x80;
    out
}

/// What carries an action client's requests: rmw_cyclonedds-style DDS clients or rmw_zenoh
/// queriers. Responses go back through the [`Responses`] it was made with.
pub trait ActionRequests: Send {
    /// Sends `request` (CDR with its encapsulation header, no request header) to `service`;
    /// returns the sequence number its response will carry.
    fn send(&mut self, service: ActionService, request: &[u8]) -> Result<i64, BoxError>;
    /// Whether the action server answers on all three services (rosbag2 sends nothing to an
    /// action server that is not ready).
    fn server_ready(&self) -> bool;
    /// Waits up to `timeout` for what was sent to reach the server.
    fn flush(&mut self, _timeout: Duration) {}
}

enum Input {
    /// A recorded request to replay.
    Request(ActionService, Vec<u8>),
    /// A response to one of ours.
    Response(ActionService, i64, Vec<u8>),
    /// Playback ended: finish within this long.
    Finish(Duration),
}

/// Says from any thread whether the action server is ready.
pub type Ready = Box<dyn Fn() -> bool + Send>;

/// Hands responses to an action's worker thread; cheap to clone into middleware callbacks.
#[derive(Clone)]
pub struct Responses(mpsc::Sender<Input>);

impl Responses {
    /// One response (CDR with its encapsulation header) to our request `sequence` of `service`.
    pub fn deliver(&self, service: ActionService, sequence: i64, response: Vec<u8>) {
        let _ = self.0.send(Input::Response(service, sequence, response));
    }
}

/// One action replayed as a client: the recorded events of its three services go in, the
/// worker thread sends the requests.
pub struct ActionPlayer {
    action: String,
    tx: mpsc::Sender<Input>,
    thread: Option<std::thread::JoinHandle<()>>,
    ready: Ready,
}

/// Makes an [`ActionRequests`] for `action` that delivers to the given [`Responses`]; also
/// returns a readiness check usable from the playing thread.
pub type MakeRequests<'a> = dyn FnOnce(Responses) -> Result<(Box<dyn ActionRequests>, Ready), BoxError> + 'a;

impl ActionPlayer {
    /// Starts the worker of `action` over the transport `make` builds.
    pub fn start(action: &str, events: Events, make: Box<MakeRequests<'_>>) -> Result<ActionPlayer, BoxError> {
        let (tx, rx) = mpsc::channel();
        let (requests, ready) = make(Responses(tx.clone()))?;
        let client = ActionClient::random(action);
        let thread = std::thread::Builder::new()
            .name("action-client".into())
            .spawn(move || work(client, requests, rx, events))?;
        Ok(ActionPlayer { action: action.to_string(), tx, thread: Some(thread), ready })
    }

    /// The action's name.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// Whether the live action server answers on all three services.
    pub fn server_ready(&self) -> bool {
        (self.ready)()
    }

    /// Replays one recorded request of `service` (CDR with its encapsulation header).
    pub fn request(&self, service: ActionService, request: Vec<u8>) {
        let _ = self.tx.send(Input::Request(service, request));
    }

    /// Lets the worker send what acceptances still due bring (get_result, postponed cancels),
    /// waiting up to `timeout` for them, then stops it.
    pub fn finish(mut self, timeout: Duration) {
        let _ = self.tx.send(Input::Finish(timeout));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ActionPlayer {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.tx.send(Input::Finish(Duration::ZERO));
        }
    }
}

/// The worker: requests and responses in, in order, until finished.
fn work(mut client: ActionClient, mut requests: Box<dyn ActionRequests>, rx: mpsc::Receiver<Input>, events: Events) {
    let mut deadline: Option<Instant> = None;
    loop {
        let input = match deadline {
            None => match rx.recv() {
                Ok(i) => i,
                Err(_) => break,
            },
            Some(d) => {
                if !client.awaiting_acceptance() || Instant::now() >= d {
                    break;
                }
                match rx.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(i) => i,
                    Err(mpsc::RecvTimeoutError::Timeout) => break,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        };
        let steps = match input {
            Input::Finish(t) => {
                deadline.get_or_insert(Instant::now() + t);
                continue;
            }
            Input::Request(service, request) => {
                if !requests.server_ready() {
                    events.emit(PlayEvent::Warning(format!(
                        "action {}: the action server isn't ready; {} request not sent",
                        client.action(),
                        service.name()
                    )));
                    continue;
                }
                client.request(service, request)
            }
            Input::Response(service, sequence, response) => client.response(service, sequence, &response),
        };
        match steps {
            Ok(steps) => run_steps(&mut client, requests.as_mut(), steps, &events),
            Err(e) => events.emit(PlayEvent::Warning(e.to_string())),
        }
    }
    if client.awaiting_acceptance() {
        events.emit(PlayEvent::Warning(format!(
            "action {}: playback ended before the server answered every goal; their get_result and cancel requests were not sent",
            client.action()
        )));
    }
    requests.flush(Duration::from_secs(2));
}

fn run_steps(client: &mut ActionClient, requests: &mut dyn ActionRequests, steps: Vec<Step>, events: &Events) {
    for step in steps {
        match step {
            Step::Send { service, request, goal } => match requests.send(service, &request) {
                Ok(seq) => client.sent(service, seq, goal),
                Err(e) => events.emit(PlayEvent::Warning(format!(
                    "action {}: {} request for goal {} not sent: {e}",
                    client.action(),
                    service.name(),
                    hex(&goal)
                ))),
            },
            Step::Info(m) => events.emit(PlayEvent::Info(m)),
            Step::Warning(m) => events.emit(PlayEvent::Warning(m)),
        }
    }
}

/// Reads the requests out of one recorded service-event connection of an action.
pub struct ActionEvents {
    topic: String,
    service: ActionService,
    event: Schema,
    request: Schema,
    kind: u8,
    index: u64,
}

impl ActionEvents {
    /// For the event connection `conn` of an action's `service` (its type's definitions from
    /// the bag or `sources`), taking events of `kind` (REQUEST_RECEIVED or REQUEST_SENT).
    pub fn new(conn: &Connection, service: ActionService, sources: &TypeSources, kind: u8) -> Result<Self, String> {
        let base = conn.message_type.strip_suffix("_Event").ok_or_else(|| "not a service event type".to_string())?;
        let (registry, event) = compile(conn, sources).map_err(|e| e.to_string())?;
        let request = Schema::compile(&registry, &format!("{base}_Request")).map_err(|e| e.to_string())?;
        Ok(ActionEvents { topic: conn.topic.clone(), service, event, request, kind, index: 0 })
    }

    /// The service.
    pub fn service(&self) -> ActionService {
        self.service
    }

    /// The request (CDR with its encapsulation header) in the next recorded event, when it is
    /// of the chosen kind and holds one; a malformed event is a warning naming the topic and
    /// the message's index.
    pub fn request(&mut self, event: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let index = self.index;
        self.index += 1;
        let bad = |e: String| format!("{} message {index}: {e}; skipped", self.topic);
        let Some(request) = request_of(&self.event, event, self.kind).map_err(bad)? else {
            // An event of the chosen kind without its request: introspection recorded metadata.
            if event.get(4) == Some(&self.kind) {
                return Err(bad("it holds no request (service introspection recorded metadata only)".into()));
            }
            return Ok(None);
        };
        let mut buf = Vec::new();
        rbag_msg::encode(&self.request, &request, Encoding::Cdr, false, &mut buf).map_err(|e| bad(e.to_string()))?;
        Ok(Some(buf))
    }
}

/// An action client's three service clients on DDS, as rmw_cyclonedds makes them: requests on
/// `rq/<action>/_action/<service>Request` with the 16-byte request header (client id,
/// sequence number) before the fields, responses read from `rr/<action>/_action/<service>Reply`
/// by that header.
pub struct DdsActionRequests {
    ends: std::sync::Arc<BTreeMap<ActionService, (rbag_ros2::dds::RawWriter, rbag_ros2::dds::RawReader)>>,
    client_id: [u8; 8],
    sequences: BTreeMap<ActionService, i64>,
}

impl DdsActionRequests {
    /// The clients of `action` (of type `pkg/action/T`) in `participant`'s domain, delivering
    /// responses to `responses`; also a readiness check for the playing thread.
    pub fn new(
        participant: &rbag_ros2::dds::Participant,
        action: &str,
        action_type: &str,
        responses: Responses,
    ) -> Result<(DdsActionRequests, Ready), BoxError> {
        use rbag_ros2::dds::{RawReader, RawWriter};
        let id = rbag_transport::now_ns()
            ^ (u64::from(std::process::id()) << 32)
            ^ u64::from_le_bytes(random_goal_id()[..8].try_into().unwrap_or_default());
        let client_id = id.to_le_bytes();
        let qos = rbag_ros2::qos::default_profile();
        let mut ends = BTreeMap::new();
        for service in ActionService::ALL {
            let prefix = service
                .dds_type_prefix(action_type)
                .ok_or_else(|| format!("action {action}: type {action_type:?} is not pkg/action/Type"))?;
            let (rq, rr) = rbag_ros2::names::service_to_dds(&format!(
                "{}/_action/{}",
                action.trim_end_matches('/'),
                service.name()
            ));
            let writer = RawWriter::new(participant, &rq, &format!("{prefix}Request_"), &qos, None)?;
            let to = responses.clone();
            let reader = RawReader::new(
                participant,
                &rr,
                &format!("{prefix}Response_"),
                &qos,
                Box::new(move |sample| {
                    let d = &sample.data;
                    if d.len() < 20 || d[4..12] != client_id {
                        return;
                    }
                    let sequence = i64::from_le_bytes(d[12..20].try_into().unwrap_or_default());
                    let mut response = d[..4].to_vec();
                    response.extend_from_slice(&d[20..]);
                    to.deliver(service, sequence, response);
                }),
            )?;
            ends.insert(service, (writer, reader));
        }
        let ends = std::sync::Arc::new(ends);
        let seen = ends.clone();
        let ready = Box::new(move || seen.values().all(|(w, r)| w.matched() > 0 && r.matched() > 0));
        Ok((DdsActionRequests { ends, client_id, sequences: BTreeMap::new() }, ready))
    }
}

impl ActionRequests for DdsActionRequests {
    fn send(&mut self, service: ActionService, request: &[u8]) -> Result<i64, BoxError> {
        let (writer, _) = self.ends.get(&service).ok_or("no such service")?;
        if request.len() < 4 {
            return Err(format!("a request of {} bytes has no encapsulation header", request.len()).into());
        }
        let seq = self.sequences.entry(service).or_insert(0);
        *seq += 1;
        let mut out = Vec::with_capacity(request.len() + 16);
        out.extend_from_slice(&request[..4]);
        out.extend_from_slice(&self.client_id);
        out.extend_from_slice(&seq.to_le_bytes());
        out.extend_from_slice(&request[4..]);
        writer.write(&out, i64::try_from(rbag_transport::now_ns()).unwrap_or(i64::MAX))?;
        Ok(*seq)
    }

    fn server_ready(&self) -> bool {
        self.ends.values().all(|(w, r)| w.matched() > 0 && r.matched() > 0)
    }

    fn flush(&mut self, timeout: Duration) {
        for (w, _) in self.ends.values() {
            let _ = w.wait_for_acks(timeout);
        }
    }
}

/// An action client's three service clients on Zenoh, as rmw_zenoh makes them: queriers on
/// `<domain>/<action>/_action/<service>/<type>/<hash>` with the request as payload and rmw_zenoh's
/// attachment; the reply's payload is the response.
#[cfg(feature = "zenoh")]
pub struct ZenohActionRequests {
    clients: std::sync::Arc<BTreeMap<ActionService, rbag_ros2::zenoh::ZenohClient>>,
    responses: Responses,
}

#[cfg(feature = "zenoh")]
impl ZenohActionRequests {
    /// The clients of `action` (of type `pkg/action/T`) on `node`, delivering responses to
    /// `responses`; also a readiness check for the playing thread.
    pub fn new(
        session: &std::sync::Arc<rbag_ros2::zenoh::ZenohSession>,
        node: &rbag_ros2::zenoh::Node,
        action: &str,
        action_type: &str,
        responses: Responses,
    ) -> Result<(ZenohActionRequests, Ready), BoxError> {
        let mut clients = BTreeMap::new();
        for service in ActionService::ALL {
            let prefix = service
                .dds_type_prefix(action_type)
                .ok_or_else(|| format!("action {action}: type {action_type:?} is not pkg/action/Type"))?;
            let name = format!("{}/_action/{}", action.trim_end_matches('/'), service.name());
            clients.insert(service, rbag_ros2::zenoh::ZenohClient::new(session, node, &name, &prefix)?);
        }
        let clients = std::sync::Arc::new(clients);
        let seen = clients.clone();
        let ready = Box::new(move || seen.values().all(rbag_ros2::zenoh::ZenohClient::server_ready));
        Ok((ZenohActionRequests { clients, responses }, ready))
    }
}

#[cfg(feature = "zenoh")]
impl ActionRequests for ZenohActionRequests {
    fn send(&mut self, service: ActionService, request: &[u8]) -> Result<i64, BoxError> {
        let client = self.clients.get(&service).ok_or("no such service")?;
        let to = self.responses.clone();
        Ok(client.call(request, move |seq, response| to.deliver(service, seq, response))?)
    }

    fn server_ready(&self) -> bool {
        self.clients.values().all(rbag_ros2::zenoh::ZenohClient::server_ready)
    }

    /// Waits for the send_goal and cancel_goal queries to end (their servers answer at once);
    /// a get_result query ends only with its goal, which playback does not wait for.
    fn flush(&mut self, timeout: Duration) {
        let end = Instant::now() + timeout;
        for (service, client) in self.clients.iter() {
            if *service != ActionService::GetResult {
                client.flush(end.saturating_duration_since(Instant::now()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> impl FnMut() -> GoalId + Send {
        let mut n = 0u8;
        move || {
            n += 1;
            [0xa0 + n; 16]
        }
    }

    fn goal_request(id: u8, order: i32) -> Vec<u8> {
        let mut r = vec![0, 1, 0, 0];
        r.extend_from_slice(&[id; 16]);
        r.extend_from_slice(&order.to_le_bytes());
        r
    }

    fn cancel_request(id: u8) -> Vec<u8> {
        let mut r = vec![0, 1, 0, 0];
        r.extend_from_slice(&[id; 16]);
        r.extend_from_slice(&7i32.to_le_bytes());
        r.extend_from_slice(&9u32.to_le_bytes());
        r
    }

    fn sends(steps: &[Step]) -> Vec<(ActionService, Vec<u8>)> {
        steps
            .iter()
            .filter_map(|s| match s {
                Step::Send { service, request, .. } => Some((*service, request.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_goal_goes_with_a_fresh_id_and_its_result_follows_acceptance() {
        let mut c = ActionClient::new("/fibonacci", ids());
        let steps = c.request(ActionService::SendGoal, goal_request(1, 5)).unwrap();
        let mut want = goal_request(0, 5);
        want[4..20].copy_from_slice(&[0xa1; 16]);
        assert_eq!(sends(&steps), [(ActionService::SendGoal, want)]);
        c.sent(ActionService::SendGoal, 1, [1; 16]);
        assert!(c.awaiting_acceptance());
        // The recorded get_result before acceptance: the automatic one covers it.
        let mut result = vec![0, 1, 0, 0];
        result.extend_from_slice(&[1; 16]);
        assert!(sends(&c.request(ActionService::GetResult, result.clone()).unwrap()).is_empty());
        // Someone else's response, or a response to a number we never used: nothing.
        assert!(c.response(ActionService::SendGoal, 9, &[0, 1, 0, 0, 1]).unwrap().is_empty());
        let steps = c.response(ActionService::SendGoal, 1, &[0, 1, 0, 0, 1, 0, 0, 0]).unwrap();
        let mut auto = vec![0, 1, 0, 0];
        auto.extend_from_slice(&[0xa1; 16]);
        assert_eq!(sends(&steps), [(ActionService::GetResult, auto)]);
        assert!(!c.awaiting_acceptance());
        // A recorded get_result after acceptance is the automatic one again: not sent twice.
        assert!(sends(&c.request(ActionService::GetResult, result).unwrap()).is_empty());
        c.sent(ActionService::GetResult, 1, [1; 16]);
        let steps = c.response(ActionService::GetResult, 1, &[0, 1, 0, 0, 4]).unwrap();
        assert!(matches!(&steps[..], [Step::Info(m)] if m.contains("status 4")), "{steps:?}");
    }

    #[test]
    fn a_cancel_waits_for_acceptance_and_names_the_new_goal() {
        let mut c = ActionClient::new("/fibonacci", ids());
        c.request(ActionService::SendGoal, goal_request(1, 5)).unwrap();
        c.sent(ActionService::SendGoal, 1, [1; 16]);
        let steps = c.request(ActionService::CancelGoal, cancel_request(1)).unwrap();
        assert!(sends(&steps).is_empty(), "postponed: {steps:?}");
        let steps = c.response(ActionService::SendGoal, 1, &[0, 1, 0, 0, 1]).unwrap();
        let mut cancel = vec![0, 1, 0, 0];
        cancel.extend_from_slice(&[0xa1; 16]);
        cancel.extend_from_slice(&[0; 8]);
        let got = sends(&steps);
        assert_eq!(got.len(), 2, "{steps:?}");
        assert_eq!(got[0].0, ActionService::GetResult);
        assert_eq!(got[1], (ActionService::CancelGoal, cancel.clone()));
        // After acceptance a cancel goes at once.
        assert_eq!(
            sends(&c.request(ActionService::CancelGoal, cancel_request(1)).unwrap()),
            [(ActionService::CancelGoal, cancel)]
        );
    }

    #[test]
    fn requests_about_unknown_or_rejected_goals_and_short_ones_are_refused() {
        let mut c = ActionClient::new("/fibonacci", ids());
        let e = c.request(ActionService::CancelGoal, cancel_request(3)).unwrap_err();
        assert!(matches!(e, ActionError::UnknownGoal { goal, .. } if goal == [3; 16]));
        assert!(e.to_string().contains("/fibonacci") && e.to_string().contains(&"03".repeat(16)), "{e}");
        assert!(matches!(
            c.request(ActionService::SendGoal, vec![0, 1, 0, 0, 1]),
            Err(ActionError::Short { len: 5, .. })
        ));
        c.request(ActionService::SendGoal, goal_request(2, 5)).unwrap();
        c.sent(ActionService::SendGoal, 1, [2; 16]);
        c.request(ActionService::CancelGoal, cancel_request(2)).unwrap();
        let steps = c.response(ActionService::SendGoal, 1, &[0, 1, 0, 0, 0]).unwrap();
        assert!(matches!(&steps[..], [Step::Warning(m)] if m.contains("rejected")), "{steps:?}");
        assert!(matches!(c.request(ActionService::GetResult, goal_request(2, 0)), Err(ActionError::Rejected { .. })));
        assert!(!c.awaiting_acceptance());
        // An empty response to a request of ours.
        c.request(ActionService::SendGoal, goal_request(4, 5)).unwrap();
        c.sent(ActionService::SendGoal, 2, [4; 16]);
        assert!(matches!(c.response(ActionService::SendGoal, 2, &[0, 1]), Err(ActionError::BadResponse { .. })));
    }

    #[test]
    fn a_zero_goal_id_cancels_by_time_unchanged() {
        let mut c = ActionClient::new("/fibonacci", ids());
        let r = cancel_request(0);
        assert_eq!(sends(&c.request(ActionService::CancelGoal, r.clone()).unwrap()), [(ActionService::CancelGoal, r)]);
    }

    #[test]
    fn service_type_names_and_fresh_ids() {
        let t = "example_interfaces/action/Fibonacci";
        assert_eq!(
            ActionService::SendGoal.dds_type_prefix(t).as_deref(),
            Some("example_interfaces::action::dds_::Fibonacci_SendGoal_")
        );
        assert_eq!(
            ActionService::GetResult.dds_type_prefix(t).as_deref(),
            Some("example_interfaces::action::dds_::Fibonacci_GetResult_")
        );
        assert_eq!(
            ActionService::CancelGoal.dds_type_prefix(t).as_deref(),
            Some("action_msgs::srv::dds_::CancelGoal_")
        );
        assert_eq!(ActionService::SendGoal.dds_type_prefix("x/msg/Y"), None);
        let (a, b) = (random_goal_id(), random_goal_id());
        assert_ne!(a, b);
        assert_eq!(a[6] >> 4, 4);
    }

    /// An `action_msgs/srv/CancelGoal_Event` (bundled definition) of `kind` holding a request
    /// for goal `id` with stamp (7, 9).
    fn cancel_event(kind: u8, id: u8) -> Vec<u8> {
        let mut e = vec![0, 1, 0, 0, kind, 0, 0, 0];
        e.extend_from_slice(&[0; 8]); // stamp
        e.extend_from_slice(&[5; 16]); // client_gid
        e.extend_from_slice(&[0; 4]); // align 8
        e.extend_from_slice(&3i64.to_le_bytes()); // sequence_number
        e.extend_from_slice(&1u32.to_le_bytes()); // request: one
        e.extend_from_slice(&[id; 16]);
        e.extend_from_slice(&7i32.to_le_bytes());
        e.extend_from_slice(&9u32.to_le_bytes());
        e.extend_from_slice(&0u32.to_le_bytes()); // response: none
        e
    }

    #[test]
    fn requests_are_read_from_recorded_events_and_a_malformed_event_is_named_and_skipped() {
        let conn = Connection {
            id: 1,
            topic: "/fibonacci/_action/cancel_goal/_service_event".into(),
            message_type: "action_msgs/srv/CancelGoal_Event".into(),
            encoding: "cdr".into(),
            definition: String::new(),
            definition_encoding: String::new(),
            metadata: Default::default(),
        };
        let sources = super::super::spec::UserTypes::default().sources(&Default::default());
        let mut events = ActionEvents::new(&conn, ActionService::CancelGoal, &sources, 1).unwrap();
        assert_eq!(events.request(&cancel_event(1, 4)).unwrap(), Some(cancel_request(4)));
        // Another kind of event (the client's REQUEST_SENT) is not replayed.
        assert_eq!(events.request(&cancel_event(0, 4)).unwrap(), None);
        let e = events.request(&[0, 1, 0, 0, 1]).unwrap_err();
        assert!(e.starts_with("/fibonacci/_action/cancel_goal/_service_event message 2:"), "{e}");
        // Metadata-only introspection: the event of the chosen kind has no request.
        let mut metadata = cancel_event(1, 4);
        metadata.truncate(44);
        metadata.extend_from_slice(&[0; 8]);
        let e = events.request(&metadata).unwrap_err();
        assert!(e.contains("message 3") && e.contains("metadata"), "{e}");
    }
}
