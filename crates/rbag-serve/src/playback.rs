//! The one timeline: a plain thread reads the bags merged in log-time order and hands each
//! message, when its time comes, to the queues of the clients subscribed to its channel.
//!
//! Time is anchored: a wall instant and the log time that plays at it; a message is due at
//! `anchor_wall + (log_time - anchor_log) / speed`. Pausing, seeking and changing speed move the
//! anchor. Seeking opens a new merge from the sought time through the bags' indexes, so it
//! costs the same wherever it lands. Nothing here waits for a client.

use std::collections::HashSet;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use rbag_bag::{Filter, Message, TimeMerge};

use crate::client::Out;
use crate::protocol::{self, ControlRequest, Level};
use crate::shared::Shared;

/// After the clients playback waits for have subscribed, it waits this long for their further
/// subscriptions (clients subscribe channel by channel, in separate messages) before it starts.
const START_GRACE: Duration = Duration::from_millis(250);

/// `time` messages go out at most this often (and after every seek).
const TIME_INTERVAL: Duration = Duration::from_millis(50);

/// Where playback stands, as the SDK's `PlaybackState` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaybackStatus {
    /// Messages are going out.
    Playing = 0,
    /// Stopped by a client, or not started yet (no client has subscribed).
    Paused = 1,
    /// Reading after a seek (not reported: seeks return before the next message is due).
    Buffering = 2,
    /// Every message has been sent (without `--loop`).
    Ended = 3,
}

/// A copy of the playback state.
#[derive(Debug, Clone)]
pub struct PlaybackSnapshot {
    /// Playing, paused or ended.
    pub status: PlaybackStatus,
    /// Whether playback has started (it waits for the first subscription).
    pub started: bool,
    /// Log time of the last message sent (or sought to), nanoseconds.
    pub current_time: u64,
    /// Multiple of real time.
    pub speed: f64,
    /// Times playback started over at the end (`--loop`).
    pub loops: u64,
    /// Messages handed to clients' queues (one per subscribed client).
    pub messages_queued: u64,
    /// Messages dropped for clients whose queues were full.
    pub messages_dropped: u64,
    /// How long the last seek took, until its first message was read.
    pub last_seek: Option<Duration>,
}

impl PlaybackSnapshot {
    pub(crate) fn initial(range: Option<(u64, u64)>, speed: f64) -> Self {
        PlaybackSnapshot {
            status: PlaybackStatus::Paused,
            started: false,
            current_time: range.map_or(0, |r| r.0),
            speed,
            loops: 0,
            messages_queued: 0,
            messages_dropped: 0,
            last_seek: None,
        }
    }
}

/// What the rest of the server asks of playback.
pub(crate) enum Command {
    /// A client subscribed to something.
    Subscribed { client: u64 },
    /// Play, pause, seek, speed; from a client (`Some(id)`) or the page.
    Control { client: Option<u64>, request: ControlRequest },
    /// The server is shutting down.
    Stop,
}

struct Player<'a> {
    shared: &'a Shared,
    merge: Option<TimeMerge<'a>>,
    pending: Option<(usize, Message)>,
    status: PlaybackStatus,
    started: bool,
    speed: f64,
    anchor: (Instant, u64),
    current: u64,
    start_time: u64,
    end_time: u64,
    subscribers: HashSet<u64>,
    start_at: Option<Instant>,
    last_time_sent: Option<Instant>,
    loops: u64,
    queued: u64,
    dropped: u64,
    last_seek: Option<Duration>,
    /// Reading failed since the last seek: the end is not looped over (it would fail again).
    failed: bool,
}

/// Runs playback until [`Command::Stop`] or until every sender is gone.
pub(crate) fn run(shared: &Shared, commands: Receiver<Command>) {
    let (start_time, end_time) = shared.time_range().unwrap_or((0, 0));
    let mut p = Player {
        shared,
        merge: None,
        pending: None,
        status: PlaybackStatus::Paused,
        started: false,
        speed: shared.options().rate,
        anchor: (Instant::now(), start_time),
        current: start_time,
        start_time,
        end_time,
        subscribers: HashSet::new(),
        start_at: None,
        last_time_sent: None,
        loops: 0,
        queued: 0,
        dropped: 0,
        last_seek: None,
        failed: false,
    };
    p.run(commands);
}

impl<'a> Player<'a> {
    fn run(&mut self, commands: Receiver<Command>) {
        loop {
            loop {
                match commands.try_recv() {
                    Ok(c) => {
                        if !self.handle(c) {
                            return;
                        }
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            let now = Instant::now();
            let wait = if !self.started {
                match self.start_at {
                    Some(at) if at <= now => {
                        self.start();
                        continue;
                    }
                    Some(at) => Some(at - now),
                    None => None,
                }
            } else if self.status == PlaybackStatus::Playing {
                if self.pending.is_none() {
                    self.pending = self.next_message();
                    if self.pending.is_none() {
                        self.end();
                        continue;
                    }
                }
                let due = self.pending.as_ref().map_or(now, |(_, m)| self.due(m.log_time));
                if due <= now {
                    self.deliver();
                    continue;
                }
                Some(due - now)
            } else {
                None
            };
            let command = match wait {
                Some(d) => match commands.recv_timeout(d) {
                    Ok(c) => c,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                None => match commands.recv() {
                    Ok(c) => c,
                    Err(_) => return,
                },
            };
            if !self.handle(command) {
                return;
            }
        }
    }

    /// Applies a command; false to stop.
    fn handle(&mut self, command: Command) -> bool {
        match command {
            Command::Stop => return false,
            Command::Subscribed { client } => {
                if self.status == PlaybackStatus::Ended && !self.failed {
                    // A viewer opened after the end gets the bags from the start, as the first
                    // did (clients without playback control could not ask for it). Clients
                    // still connected see the replay too.
                    self.started = false;
                    self.subscribers.clear();
                }
                if !self.started {
                    self.subscribers.insert(client);
                    if self.subscribers.len() >= self.shared.options().start_after_clients.max(1) {
                        self.start_at = Some(Instant::now() + START_GRACE);
                    }
                }
            }
            Command::Control { client, request } => self.control(client, request),
        }
        true
    }

    fn start(&mut self) {
        self.started = true;
        self.start_at = None;
        self.seek_to(self.start_time);
        self.status = PlaybackStatus::Playing;
        self.publish_snapshot();
        self.shared.broadcast_playback_state(true, None);
    }

    fn control(&mut self, client: Option<u64>, request: ControlRequest) {
        let reply_error = |message: String| {
            if let Some(c) = client.and_then(|id| self.shared.clients().iter().find(|c| c.id == id).cloned()) {
                c.status(Level::Error, &message);
            }
        };
        let mut did_seek = false;
        if let Some(t) = request.seek {
            self.seek_to(t.clamp(self.start_time, self.end_time.max(self.start_time)));
            did_seek = true;
        }
        let speed = f64::from(request.speed);
        if speed.is_finite() && speed > 0.0 {
            self.speed = speed;
        } else {
            reply_error(format!("playback control: invalid speed {}: it must be a positive number", request.speed));
        }
        if request.play {
            if self.status == PlaybackStatus::Ended && !did_seek {
                // Play at the end starts over, as a player's play button does.
                self.seek_to(self.start_time);
                did_seek = true;
            }
            if self.merge.is_none() {
                self.seek_to(self.current);
            }
            self.status = PlaybackStatus::Playing;
        } else {
            self.status = PlaybackStatus::Paused;
        }
        self.started = true;
        self.start_at = None;
        self.anchor = (Instant::now(), self.current);
        self.publish_snapshot();
        self.shared.broadcast_playback_state(did_seek, Some(&request.request_id));
    }

    /// Restarts the merge at log time `t` through the index, and re-anchors the clock there.
    fn seek_to(&mut self, t: u64) {
        let began = Instant::now();
        let filter = Filter { start: Some(t), ..Filter::default() };
        self.pending = None;
        self.failed = false;
        self.merge = match rbag_bag::merged(self.shared.bags(), &filter) {
            Ok(m) => Some(m),
            Err(e) => {
                self.failed = true;
                self.shared.broadcast_status(Level::Error, &format!("cannot read the bags from {t} ns: {e}"));
                None
            }
        };
        // Read the first message now, so the seek's cost is paid (and measured) here.
        self.pending = self.next_message();
        self.current = t;
        self.anchor = (Instant::now(), t);
        self.last_time_sent = None;
        self.last_seek = Some(began.elapsed());
    }

    fn next_message(&mut self) -> Option<(usize, Message)> {
        match self.merge.as_mut()?.next()? {
            Ok(m) => Some(m),
            Err(e) => {
                self.merge = None;
                self.failed = true;
                self.shared.broadcast_status(Level::Error, &format!("reading the bags failed: {e}"));
                None
            }
        }
    }

    fn due(&self, log_time: u64) -> Instant {
        let (wall, log) = self.anchor;
        let ahead = log_time.saturating_sub(log) as f64 / self.speed / 1e9;
        // Far-future times (a huge gap at a tiny speed) are capped rather than overflowing.
        wall + Duration::try_from_secs_f64(ahead).unwrap_or(Duration::from_secs(86_400))
    }

    fn deliver(&mut self) {
        let Some((bag, msg)) = self.pending.take() else { return };
        self.current = msg.log_time;
        let channel = self.shared.catalog().channel_of(bag, msg.connection);
        let send_time = self.last_time_sent.is_none_or(|t| t.elapsed() >= TIME_INTERVAL);
        if send_time {
            self.last_time_sent = Some(Instant::now());
        }
        {
            let clients = self.shared.clients();
            for c in clients.iter() {
                if send_time {
                    c.push_data(Out::Binary(protocol::time(msg.log_time)));
                }
                let Some(sub) = channel.and_then(|ch| c.subscription(ch)) else { continue };
                if c.push_data(Out::Binary(protocol::message_data(sub, msg.log_time, &msg.data))) {
                    self.queued += 1;
                } else {
                    self.dropped += 1;
                }
            }
        }
        if send_time {
            self.publish_snapshot();
        }
    }

    fn end(&mut self) {
        if self.shared.options().loop_playback && self.shared.time_range().is_some() && !self.failed {
            self.loops += 1;
            self.seek_to(self.start_time);
            self.publish_snapshot();
            self.shared.broadcast_playback_state(true, None);
            return;
        }
        self.status = PlaybackStatus::Ended;
        self.merge = None;
        self.publish_snapshot();
        self.shared.broadcast_playback_state(false, None);
        self.shared.broadcast_status(Level::Info, &format!("playback ended at {} ns", self.current));
    }

    fn publish_snapshot(&self) {
        let mut s = self.shared.playback.lock().unwrap_or_else(|e| e.into_inner());
        *s = PlaybackSnapshot {
            status: self.status,
            started: self.started,
            current_time: self.current,
            speed: self.speed,
            loops: self.loops,
            messages_queued: self.queued,
            messages_dropped: self.dropped,
            last_seek: self.last_seek,
        };
    }
}
