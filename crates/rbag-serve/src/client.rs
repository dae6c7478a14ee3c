//! One connected viewer: its subscriptions, its outgoing queue bounded in bytes, and the two
//! tasks that read its requests and write its messages.
//!
//! The playback thread only ever pushes onto a client's queue (never waits on a socket), so a
//! client that stops reading loses its own messages once its queue is full and delays nobody.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::protocol::{self, ClientMessage, Level, ProtocolError};
use crate::shared::Shared;

/// Control messages (status, serverInfo, playback state) may exceed the data limit by this
/// much, so a client whose queue is full of data still hears why; beyond it even they are
/// dropped (a client flooding requests without reading the answers).
const CONTROL_RESERVE_BYTES: usize = 1 << 20;

/// The shortest interval between two "messages dropped" warnings to one client.
const DROP_WARNING_INTERVAL: Duration = Duration::from_secs(2);

/// Bytes of queued messages the writer hands to the socket in one flush.
const WRITE_BATCH_BYTES: usize = 256 << 10;

/// Which subprotocol the client chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subprotocol {
    /// `foxglove.websocket.v1`, or no subprotocol at all.
    V1,
    /// `foxglove.sdk.v1`.
    Sdk,
}

/// Something to send.
pub(crate) enum Out {
    Text(String),
    Binary(Bytes),
}

impl Out {
    fn len(&self) -> usize {
        match self {
            Out::Text(t) => t.len(),
            Out::Binary(b) => b.len(),
        }
    }

    fn into_message(self) -> Message {
        match self {
            Out::Text(t) => Message::Text(t.into()),
            Out::Binary(b) => Message::Binary(b),
        }
    }
}

#[derive(Default)]
struct Queue {
    items: VecDeque<Out>,
    /// Bytes in `items` plus the message being written.
    bytes: usize,
    /// Data messages dropped since the last warning.
    unreported: u64,
    dropped_total: u64,
    last_warning: Option<Instant>,
    /// Send what is queued, then close.
    closing: bool,
}

#[derive(Default)]
struct Subscriptions {
    /// Subscription id -> channel index.
    by_id: HashMap<u32, usize>,
    /// Channel index -> subscription id.
    by_channel: HashMap<usize, u32>,
}

/// A connected client, shared by its tasks and the playback thread.
pub(crate) struct Client {
    pub id: u64,
    /// Sent `PlaybackState`: SDK clients, and any client that sent a playback request.
    wants_playback: AtomicBool,
    subs: Mutex<Subscriptions>,
    queue: Mutex<Queue>,
    notify: Notify,
    limit: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding these locks is a bug; the data stay consistent enough to go on.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Client {
    pub fn new(id: u64, subprotocol: Subprotocol, limit: usize) -> Client {
        Client {
            id,
            wants_playback: AtomicBool::new(subprotocol == Subprotocol::Sdk),
            subs: Mutex::default(),
            queue: Mutex::default(),
            notify: Notify::new(),
            limit,
        }
    }

    pub fn wants_playback(&self) -> bool {
        self.wants_playback.load(Ordering::Relaxed)
    }

    /// The subscription id of `channel`, if subscribed.
    pub fn subscription(&self, channel: usize) -> Option<u32> {
        lock(&self.subs).by_channel.get(&channel).copied()
    }

    /// Queues a data message (messageData, time) unless the queue is full; returns whether it
    /// was queued.
    pub fn push_data(&self, out: Out) -> bool {
        let mut q = lock(&self.queue);
        if q.closing {
            return false;
        }
        let len = out.len();
        if q.bytes + len > self.limit && !q.items.is_empty() {
            q.unreported += 1;
            q.dropped_total += 1;
            drop(q);
            // Wake the writer so the warning goes out as soon as it can.
            self.notify.notify_one();
            return false;
        }
        q.bytes += len;
        q.items.push_back(out);
        drop(q);
        self.notify.notify_one();
        true
    }

    /// Queues a control message; these are small and go out unless a client floods requests.
    pub fn push_control(&self, out: Out) {
        let mut q = lock(&self.queue);
        let len = out.len();
        if q.closing || q.bytes + len > self.limit + CONTROL_RESERVE_BYTES {
            return;
        }
        q.bytes += len;
        q.items.push_back(out);
        drop(q);
        self.notify.notify_one();
    }

    pub fn status(&self, level: Level, message: &str) {
        self.push_control(Out::Text(protocol::status(level, message, None)));
    }

    /// The next thing to write: a pending drop warning first (rate-limited), then the queue.
    fn next(&self) -> Option<Out> {
        let mut q = lock(&self.queue);
        if q.unreported > 0 && q.last_warning.is_none_or(|t| t.elapsed() >= DROP_WARNING_INTERVAL) {
            let n = std::mem::take(&mut q.unreported);
            q.last_warning = Some(Instant::now());
            let text = format!(
                "rbag serve dropped {n} message{} for this client ({} in all): its queue of {} bytes was full, \
                 as the client reads slower than the bags play",
                if n == 1 { "" } else { "s" },
                q.dropped_total,
                self.limit
            );
            return Some(Out::Text(protocol::status(Level::Warning, &text, Some("rbag-serve-dropped"))));
        }
        q.items.pop_front()
    }

    fn written(&self, len: usize) {
        let mut q = lock(&self.queue);
        q.bytes = q.bytes.saturating_sub(len);
    }

    /// Stops queueing; the writer sends what is queued and closes.
    fn close(&self) {
        lock(&self.queue).closing = true;
        self.notify.notify_one();
    }

    fn is_drained_and_closing(&self) -> bool {
        let q = lock(&self.queue);
        q.closing && q.items.is_empty()
    }

    fn subscribe(&self, shared: &Shared, subs: Vec<(u32, u64)>) -> bool {
        let mut added = false;
        for (id, channel) in subs {
            let Some(index) = shared.catalog().by_id(channel).map(|c| c.id as usize - 1) else {
                self.status(Level::Error, &format!("subscribe: unknown channel id {channel}"));
                continue;
            };
            let mut s = lock(&self.subs);
            if s.by_id.contains_key(&id) {
                drop(s);
                self.status(Level::Error, &format!("subscribe: subscription id {id} is already in use"));
                continue;
            }
            if let Some(existing) = s.by_channel.get(&index).copied() {
                drop(s);
                self.status(
                    Level::Error,
                    &format!("subscribe: channel {channel} is already subscribed (subscription {existing})"),
                );
                continue;
            }
            s.by_id.insert(id, index);
            s.by_channel.insert(index, id);
            added = true;
        }
        added
    }

    fn unsubscribe(&self, ids: Vec<u32>) {
        for id in ids {
            let mut s = lock(&self.subs);
            match s.by_id.remove(&id) {
                Some(channel) => {
                    s.by_channel.remove(&channel);
                }
                None => {
                    drop(s);
                    self.status(Level::Error, &format!("unsubscribe: unknown subscription id {id}"));
                }
            }
        }
    }

    fn handle(&self, shared: &Shared, message: Result<ClientMessage, ProtocolError>) {
        match message {
            Ok(ClientMessage::Subscribe(subs)) => {
                if self.subscribe(shared, subs) {
                    shared.subscribed(self.id);
                }
            }
            Ok(ClientMessage::Unsubscribe(ids)) => self.unsubscribe(ids),
            Ok(ClientMessage::Control(request)) => {
                self.wants_playback.store(true, Ordering::Relaxed);
                shared.control_from(Some(self.id), request);
            }
            Err(e) => self.status(Level::Error, &e.to_string()),
        }
    }
}

/// Serves one client until it leaves: greets it, then reads its requests while a second task
/// writes its queue.
pub(crate) async fn serve(ws: WebSocketStream<TcpStream>, client: Arc<Client>, shared: Arc<Shared>) {
    let (mut sink, mut stream) = ws.split();
    client.push_control(Out::Text(shared.server_info_json()));
    for w in shared.warnings() {
        client.status(Level::Warning, w);
    }
    client.push_control(Out::Text(protocol::advertise(&shared.catalog().channels)));
    if client.wants_playback() {
        client.push_control(Out::Binary(shared.playback_state_frame(false, None)));
    }
    shared.add_client(client.clone());

    let writer_client = client.clone();
    let mut writer = tokio::spawn(async move {
        let client = writer_client;
        loop {
            match client.next() {
                Some(out) => {
                    // What is queued goes out in one flush (one write to the socket), not one
                    // write per message: small messages cost a syscall each otherwise.
                    let mut len = out.len();
                    let mut sent = sink.feed(out.into_message()).await;
                    while sent.is_ok() && len < WRITE_BATCH_BYTES {
                        let Some(more) = client.next() else { break };
                        len += more.len();
                        sent = sink.feed(more.into_message()).await;
                    }
                    if sent.is_ok() {
                        sent = sink.flush().await;
                    }
                    client.written(len);
                    if sent.is_err() {
                        client.close();
                        return;
                    }
                }
                None if client.is_drained_and_closing() => {
                    let _ = sink.close().await;
                    return;
                }
                // Wake up now and then so a rate-limited drop warning is not left unsent.
                None => {
                    let _ = tokio::time::timeout(DROP_WARNING_INTERVAL, client.notify.notified()).await;
                }
            }
        }
    });

    let mut writer_done = false;
    loop {
        let next = tokio::select! {
            next = stream.next() => next,
            // The writer ended: the socket failed, nothing more to read.
            _ = &mut writer => {
                writer_done = true;
                break;
            }
        };
        match next {
            Some(Ok(Message::Text(text))) => client.handle(&shared, protocol::parse_text(&text)),
            Some(Ok(Message::Binary(data))) => client.handle(&shared, protocol::parse_binary(&data)),
            Some(Ok(Message::Close(_))) | None => break,
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                // Too large a message, a protocol violation: say why, then close this client.
                client.status(Level::Error, &format!("closing the connection: {e}"));
                break;
            }
        }
    }
    shared.remove_client(client.id);
    client.close();
    if !writer_done && tokio::time::timeout(Duration::from_secs(1), &mut writer).await.is_err() {
        writer.abort();
    }
}
