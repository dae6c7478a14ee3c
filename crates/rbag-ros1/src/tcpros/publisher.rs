//! The publishing side: one [`TcprosServer`] (one listening port) per node serves every topic
//! the node advertises, as roscpp and rospy do; `requestTopic` replies name its port.
//!
//! Each subscriber gets its own bounded queue and writer thread, so [`TopicPublisher::publish`]
//! never blocks and a subscriber that stalls or dies costs only its own connection. A second
//! thread per subscriber waits for the subscriber to hang up, so a dead subscriber is counted
//! out even when nothing is being published.

use rbag_storage::ros1::keys;
use std::collections::{HashMap, VecDeque};
use std::io::{BufWriter, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::header::{read_header, write_frame, write_header, Header};
use super::{Limits, ServiceDef, TcprosError};

/// How long a new connection may take to send its header before it is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A topic as this node publishes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publication {
    /// Resolved topic name.
    pub topic: String,
    /// `pkg/Type`.
    pub msg_type: String,
    /// The type's MD5 (`*` accepts any subscriber, as roscpp does).
    pub md5sum: String,
    /// The full definition text sent in the header (what `rosbag record` stores).
    pub message_definition: String,
    /// Send the last published message to each new subscriber right after the handshake.
    pub latching: bool,
    /// This node's name, sent as `callerid`.
    pub caller_id: String,
    /// Messages queued per subscriber before the oldest is dropped (0 counts as 1).
    pub queue_size: usize,
}

impl Publication {
    /// The reply roscpp and rospy send: fields sorted by key.
    fn reply(&self) -> Header {
        Header::from_pairs([
            (keys::CALLERID, self.caller_id.as_str()),
            (keys::LATCHING, if self.latching { "1" } else { "0" }),
            (keys::MD5SUM, self.md5sum.as_str()),
            ("message_definition", self.message_definition.as_str()),
            ("topic", self.topic.as_str()),
            ("type", self.msg_type.as_str()),
        ])
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One TCPROS listener shared by all of a node's topics.
pub struct TcprosServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    accept: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    topics: Mutex<HashMap<String, Arc<TopicPublisher>>>,
    services: Mutex<HashMap<String, Arc<ServiceDef>>>,
    stopped: AtomicBool,
    limits: Limits,
    port: u16,
}

impl TcprosServer {
    /// Listens on an OS-chosen port of `host` with the default [`Limits`].
    pub fn bind(host: &str) -> Result<Arc<TcprosServer>, TcprosError> {
        TcprosServer::bind_with_limits(host, Limits::default())
    }

    /// Listens on an OS-chosen port of `host`; `limits.max_header` bounds subscribers' headers.
    pub fn bind_with_limits(host: &str, limits: Limits) -> Result<Arc<TcprosServer>, TcprosError> {
        let bind_err = |source| TcprosError::Bind { host: host.to_string(), source };
        let spec =
            if host.contains(':') && !host.starts_with('[') { format!("[{host}]:0") } else { format!("{host}:0") };
        let listener = TcpListener::bind(&spec).map_err(bind_err)?;
        let addr = listener.local_addr().map_err(bind_err)?;
        let shared = Arc::new(Shared {
            topics: Mutex::new(HashMap::new()),
            services: Mutex::new(HashMap::new()),
            stopped: AtomicBool::new(false),
            limits,
            port: addr.port(),
        });
        let s = shared.clone();
        let accept = std::thread::Builder::new()
            .name("tcpros-accept".into())
            .spawn(move || accept_loop(listener, s))
            .map_err(bind_err)?;
        Ok(Arc::new(TcprosServer { shared, addr, accept: Mutex::new(Some(accept)) }))
    }

    /// The listening port, for `requestTopic` replies.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Starts serving `p.topic`; an error if this server already serves it.
    pub fn advertise(&self, p: Publication) -> Result<Arc<TopicPublisher>, TcprosError> {
        if self.shared.stopped.load(Ordering::SeqCst) {
            return Err(TcprosError::ShutDown { topic: p.topic });
        }
        let mut topics = lock(&self.shared.topics);
        if topics.contains_key(&p.topic) {
            return Err(TcprosError::AlreadyAdvertised { topic: p.topic });
        }
        let tp = Arc::new(TopicPublisher {
            reply: p.reply(),
            publication: p,
            state: Mutex::new(TopicState { subs: Vec::new(), latched: None, closed: false }),
            changed: Condvar::new(),
            dropped: AtomicU64::new(0),
            next_id: AtomicU64::new(0),
        });
        topics.insert(tp.publication.topic.clone(), tp.clone());
        Ok(tp)
    }

    /// Starts serving a service (replacing one of the same name).
    pub fn advertise_service(&self, def: ServiceDef) {
        lock(&self.shared.services).insert(def.name.clone(), Arc::new(def));
    }

    /// Stops serving a service; connections already open finish their request.
    pub fn unadvertise_service(&self, name: &str) {
        lock(&self.shared.services).remove(name);
    }

    /// Stops serving `topic` and closes its subscribers' connections.
    pub fn unadvertise(&self, topic: &str) {
        let tp = lock(&self.shared.topics).remove(topic);
        if let Some(tp) = tp {
            tp.close();
        }
    }

    /// The topics served now.
    pub fn publishers(&self) -> Vec<Arc<TopicPublisher>> {
        lock(&self.shared.topics).values().cloned().collect()
    }

    /// Stops accepting, and closes every topic and connection. Later calls do nothing.
    pub fn shutdown(&self) {
        if self.shared.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake the blocked accept with a connection of our own.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake.ip() {
                IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            });
        }
        if TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok() {
            if let Some(h) = lock(&self.accept).take() {
                let _ = h.join();
            }
        }
        let topics: Vec<_> = lock(&self.shared.topics).drain().map(|(_, tp)| tp).collect();
        for tp in topics {
            tp.close();
        }
    }
}

impl Drop for TcprosServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stopped.load(Ordering::SeqCst) {
            break;
        }
        let stream = match conn {
            Ok(s) => s,
            Err(_) => {
                // Out of descriptors or similar: do not spin.
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        let s = shared.clone();
        let _ = std::thread::Builder::new().name("tcpros-sub".into()).spawn(move || serve_connection(stream, s));
    }
}

/// Checks a subscriber's header the way roscpp does, with roscpp's error texts; returns the
/// topic to serve.
fn check(shared: &Shared, h: &Header, peer: &str) -> Result<Arc<TopicPublisher>, String> {
    let Some(topic) = h.get("topic") else {
        if let Some(service) = h.get("service") {
            return Err(format!("received a tcpros connection for a nonexistent service [{service}]."));
        }
        return Err("Header from subscriber did not have the required element: topic".into());
    };
    let caller = h.get(keys::CALLERID).unwrap_or("");
    let tp = lock(&shared.topics).get(topic).cloned();
    let Some(tp) = tp else {
        return Err(format!(
            "received a connection for a nonexistent topic [{topic}] from [TCPROS connection on port {} to [{peer}]] [{caller}].",
            shared.port
        ));
    };
    let (Some(md5), Some(_)) = (h.get(keys::MD5SUM), h.get(keys::CALLERID)) else {
        return Err("Header from subscriber did not have the required elements: md5sum, topic, callerid".into());
    };
    let p = &tp.publication;
    if md5 != p.md5sum && md5 != "*" && p.md5sum != "*" {
        let their_type = h.get("type").unwrap_or("");
        return Err(format!(
            "Client [{caller}] wants topic {topic} to have datatype/md5sum [{their_type}/{md5}], but our version has [{}/{}]. Dropping connection.",
            p.msg_type, p.md5sum
        ));
    }
    Ok(tp)
}

fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".into());
    if shared.stopped.load(Ordering::SeqCst) {
        return;
    }
    if stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT)).is_err()
        || stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT)).is_err()
    {
        return;
    }
    // A header that does not parse gets no reply: there is no telling what the peer speaks.
    let Ok(h) = read_header(&mut &stream, &shared.limits) else { return };
    let service = h.get("service").and_then(|s| lock(&shared.services).get(s).cloned());
    if let Some(def) = service {
        super::service::serve(stream, &def, &h, &shared.limits);
        return;
    }
    let tp = match check(&shared, &h, &peer) {
        Ok(tp) => tp,
        Err(msg) => {
            let _ = write_header(&mut &stream, &Header::from_pairs([("error", msg)]));
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
    };
    let nodelay = h.get("tcp_nodelay").is_some_and(|v| v.trim() == "1");
    if stream.set_nodelay(nodelay).is_err() || write_header(&mut &stream, &tp.reply).is_err() {
        return;
    }
    // From here on a slow subscriber only fills its own queue.
    if stream.set_read_timeout(None).is_err() || stream.set_write_timeout(None).is_err() {
        return;
    }
    let (Ok(watch), Ok(closer)) = (stream.try_clone(), stream.try_clone()) else { return };
    let caller_id = h.get(keys::CALLERID).unwrap_or("").to_string();
    let Some(sub) = tp.add(caller_id, peer, closer) else { return };
    let s = sub.clone();
    if std::thread::Builder::new().name("tcpros-watch".into()).spawn(move || watch_hangup(watch, &s)).is_err() {
        tp.remove(&sub);
        return;
    }
    write_loop(stream, &sub);
    tp.remove(&sub);
}

/// Subscribers send nothing after their header: reading only finds out when they hang up.
fn watch_hangup(mut stream: TcpStream, sub: &SubConn) {
    let mut buf = [0u8; 512];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    sub.close();
}

fn write_loop(stream: TcpStream, sub: &SubConn) {
    let mut w = BufWriter::with_capacity(64 << 10, stream);
    loop {
        let msg = {
            let mut q = lock(&sub.queue);
            loop {
                if q.closed {
                    return;
                }
                if let Some(m) = q.msgs.pop_front() {
                    q.writing = true;
                    break m;
                }
                drop(q);
                // Nothing queued: push out what is buffered before sleeping.
                if w.flush().is_err() {
                    return;
                }
                q = lock(&sub.queue);
                q.writing = false;
                q.waiting = true;
                while !q.closed && q.msgs.is_empty() {
                    q = sub.ready.wait(q).unwrap_or_else(|e| e.into_inner());
                }
                q.waiting = false;
            }
        };
        if write_frame(&mut w, &msg).is_err() {
            return;
        }
    }
}

/// One subscriber's connection.
struct SubConn {
    id: u64,
    caller_id: String,
    peer: String,
    /// A clone of the socket, shut down to unblock the writer and the watcher.
    stream: TcpStream,
    queue: Mutex<SubQueue>,
    ready: Condvar,
    dropped: AtomicU64,
}

struct SubQueue {
    msgs: VecDeque<Bytes>,
    closed: bool,
    /// The writer holds messages not yet handed to the socket (taken, or in its buffer).
    writing: bool,
    /// The writer sleeps on `ready`: only then does `publish` pay for a wake-up (a futex
    /// syscall per message would cap `--immediate`).
    waiting: bool,
}

impl SubConn {
    fn close(&self) {
        lock(&self.queue).closed = true;
        self.ready.notify_all();
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// What a node reports about one subscriber connection (`getBusInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriberInfo {
    /// The subscriber node's name.
    pub caller_id: String,
    /// Its address (`host:port`).
    pub peer: String,
    /// Messages dropped because this subscriber's queue was full.
    pub dropped: u64,
}

/// One advertised topic: publish to it, and see who listens.
pub struct TopicPublisher {
    publication: Publication,
    reply: Header,
    state: Mutex<TopicState>,
    /// Signalled when subscribers come or go.
    changed: Condvar,
    dropped: AtomicU64,
    next_id: AtomicU64,
}

struct TopicState {
    subs: Vec<Arc<SubConn>>,
    latched: Option<Bytes>,
    closed: bool,
}

impl TopicPublisher {
    /// What was advertised.
    pub fn publication(&self) -> &Publication {
        &self.publication
    }

    /// Queues `msg` (serialized bytes) for every subscriber and returns at once. A subscriber
    /// whose queue is full loses its oldest message, counted by [`dropped`](Self::dropped).
    /// Does nothing once the topic is unadvertised.
    pub fn publish(&self, msg: Bytes) {
        let cap = self.publication.queue_size.max(1);
        let mut st = lock(&self.state);
        if st.closed {
            return;
        }
        for sub in &st.subs {
            let mut q = lock(&sub.queue);
            if q.closed {
                continue;
            }
            while q.msgs.len() >= cap {
                q.msgs.pop_front();
                sub.dropped.fetch_add(1, Ordering::Relaxed);
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            q.msgs.push_back(msg.clone());
            let wake = q.waiting;
            drop(q);
            if wake {
                sub.ready.notify_one();
            }
        }
        if self.publication.latching {
            st.latched = Some(msg);
        }
    }

    /// Subscribers connected now.
    pub fn subscriber_count(&self) -> usize {
        lock(&self.state).subs.len()
    }

    /// The connected subscribers.
    pub fn subscribers(&self) -> Vec<SubscriberInfo> {
        lock(&self.state)
            .subs
            .iter()
            .map(|s| SubscriberInfo {
                caller_id: s.caller_id.clone(),
                peer: s.peer.clone(),
                dropped: s.dropped.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// Waits until at least `n` subscribers are connected; false on timeout or unadvertise.
    pub fn wait_for_subscribers(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = lock(&self.state);
        while st.subs.len() < n {
            if st.closed {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            st = self.changed.wait_timeout(st, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
        true
    }

    /// Messages dropped from full subscriber queues, over all subscribers so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Messages not yet handed to subscribers' sockets (queued, or taken by a writer that has
    /// not flushed): a player waits for 0 before it leaves the graph.
    pub fn queued(&self) -> usize {
        lock(&self.state)
            .subs
            .iter()
            .map(|s| {
                let q = lock(&s.queue);
                q.msgs.len() + usize::from(q.writing && !q.closed)
            })
            .sum()
    }

    /// Registers a subscriber whose reply header was sent, queueing the latched message first.
    fn add(&self, caller_id: String, peer: String, stream: TcpStream) -> Option<Arc<SubConn>> {
        let mut st = lock(&self.state);
        if st.closed {
            let _ = stream.shutdown(Shutdown::Both);
            return None;
        }
        let msgs = st.latched.iter().cloned().collect();
        let sub = Arc::new(SubConn {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            caller_id,
            peer,
            stream,
            queue: Mutex::new(SubQueue { msgs, closed: false, writing: false, waiting: false }),
            ready: Condvar::new(),
            dropped: AtomicU64::new(0),
        });
        st.subs.push(sub.clone());
        drop(st);
        self.changed.notify_all();
        Some(sub)
    }

    fn remove(&self, sub: &SubConn) {
        sub.close();
        lock(&self.state).subs.retain(|s| s.id != sub.id);
        self.changed.notify_all();
    }

    /// Unadvertised: close every connection and refuse new ones.
    fn close(&self) {
        let subs = {
            let mut st = lock(&self.state);
            st.closed = true;
            st.latched = None;
            std::mem::take(&mut st.subs)
        };
        for s in subs {
            s.close();
        }
        self.changed.notify_all();
    }
}
