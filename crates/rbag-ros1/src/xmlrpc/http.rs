//! Just enough blocking HTTP/1.1 for XML-RPC: a keep-alive server with a thread per
//! connection (bounded, with idle and request timeouts: see [`Limits`]), and a client that keeps
//! its connection open.
//!
//! Peers POST to `/` or `/RPC2`; any path is served. Nothing is gzipped and gzip is never asked
//! for (Python servers would gzip replies over 1400 bytes if asked). Header names are matched
//! case-insensitively: roscpp writes `Content-length`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::value::{parse, write_call, write_fault, write_response, Message, Value};
use super::Error;

/// A request or response head longer than this is refused.
const MAX_HEAD: usize = 64 * 1024;
/// Blank lines tolerated before a request line (RFC 9112 §2.2 asks servers to skip at least one).
const MAX_BLANK_LINES: usize = 8;
/// A body longer than this is refused. `robot_description` parameters can be megabytes.
pub const MAX_BODY: usize = 256 * 1024 * 1024;
/// Connections served at once by default (a thread each). ROS graphs have tens to hundreds of
/// nodes, and a node that finds its idle connection closed reconnects.
pub const MAX_CONNECTIONS: usize = 256;
/// How long a client waits for a reply.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What the server lets one connection hold.
///
/// rosmaster has none of these (Python's threading `SimpleXMLRPCServer`: a thread per
/// connection, no timeout, no cap), so there an idle socket holds a thread and a descriptor for
/// as long as its peer likes. Here a connection that sends nothing is closed after `idle`
/// (`keep_alive` between requests), one that trickles bytes after `head`/`request`, and when
/// `max_connections` are open the one idle the longest is closed to make room: idle sockets
/// cannot lock callers out. Clients that find their kept connection closed reconnect (ours,
/// Python's `xmlrpc.client` and roscpp's XmlRpc++ all do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once; at the cap the longest-idle one is closed for a new one, and
    /// a new one is refused only when every open connection is in the middle of a request.
    pub max_connections: usize,
    /// How long a new connection may wait before the first byte of its first request.
    pub idle: Duration,
    /// How long a kept connection may wait between requests.
    pub keep_alive: Duration,
    /// From a request's first byte to the end of its head.
    pub head: Duration,
    /// From a request's first byte to the end of its body (bodies can be megabytes); also how
    /// long one write of a reply may stall.
    pub request: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: MAX_CONNECTIONS,
            idle: Duration::from_secs(5),
            keep_alive: Duration::from_secs(30),
            head: Duration::from_secs(5),
            request: Duration::from_secs(30),
        }
    }
}

/// Serves XML-RPC methods. `Err((code, message))` becomes an XML-RPC fault.
pub trait Handler: Send + Sync + 'static {
    /// Answers one call.
    fn call(&self, method: &str, params: Vec<Value>) -> Result<Value, (i32, String)>;
}

struct Head {
    start: String,
    /// Header names lower-cased.
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn has_token(&self, name: &str, token: &str) -> bool {
        self.header(name).is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    }

    /// The declared body length: `Ok(None)` when there is no `Content-Length`.
    fn content_length(&self) -> Result<Option<usize>, Bad> {
        if self.has_token("transfer-encoding", "chunked") {
            return Err(Bad::new(501, "chunked transfer encoding is not supported".into()));
        }
        let Some(v) = self.header("content-length") else { return Ok(None) };
        let len: u64 = v.parse().map_err(|_| Bad::new(400, format!("bad Content-Length {:?}", short(v))))?;
        match usize::try_from(len) {
            Ok(len) if len <= MAX_BODY => Ok(Some(len)),
            _ => Err(Bad::new(413, format!("body of {len} bytes is over the {MAX_BODY}-byte limit"))),
        }
    }
}

/// A message the peer got wrong: the server answers with `status`, the client reports `msg`.
struct Bad {
    status: u16,
    msg: String,
}

impl Bad {
    fn new(status: u16, msg: String) -> Bad {
        Bad { status, msg }
    }
}

enum ReadError {
    Io(std::io::Error),
    Bad(Bad),
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::InvalidData {
            // read_line on bytes that are not UTF-8.
            return ReadError::Bad(Bad::new(400, "HTTP head is not UTF-8".into()));
        }
        ReadError::Io(e)
    }
}

impl From<Bad> for ReadError {
    fn from(b: Bad) -> Self {
        ReadError::Bad(b)
    }
}

fn short(s: &str) -> &str {
    match s.char_indices().nth(60) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Reads one line of a head, counting it against `MAX_HEAD`.
fn read_head_line(r: &mut impl BufRead, line: &mut String, total: &mut usize) -> Result<usize, ReadError> {
    line.clear();
    let n = r.by_ref().take((MAX_HEAD - *total + 1) as u64).read_line(line)?;
    *total += n;
    if *total > MAX_HEAD {
        return Err(Bad::new(431, format!("HTTP head longer than {MAX_HEAD} bytes")).into());
    }
    Ok(n)
}

/// Reads a message head. `Ok(None)` on a clean end before a message starts.
fn read_head(r: &mut impl BufRead) -> Result<Option<Head>, ReadError> {
    let mut total = 0;
    let mut start = String::new();
    let mut blank = 0;
    loop {
        if read_head_line(r, &mut start, &mut total)? == 0 {
            return Ok(None);
        }
        if !start.trim().is_empty() {
            break;
        }
        blank += 1;
        if blank > MAX_BLANK_LINES {
            return Err(Bad::new(400, "blank lines instead of a request".into()).into());
        }
    }
    let mut headers = Vec::new();
    let mut line = String::new();
    loop {
        if read_head_line(r, &mut line, &mut total)? == 0 {
            return Err(ReadError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        match line.split_once(':') {
            Some((k, v)) => headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string())),
            None => return Err(Bad::new(400, format!("HTTP header line {:?} has no ':'", short(line))).into()),
        }
    }
    Ok(Some(Head { start: start.trim_end().to_string(), headers }))
}

/// Reads exactly `len` bytes, growing the buffer as they come (a lying `Content-Length` costs
/// nothing until the bytes arrive).
fn read_body(r: &mut impl BufRead, len: usize) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::with_capacity(len.min(64 * 1024));
    r.by_ref().take(len as u64).read_to_end(&mut body)?;
    if body.len() < len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the body ended after {} of {len} bytes", body.len()),
        ));
    }
    Ok(body)
}

/// Reads a body that has no `Content-Length`: everything up to the end of the connection.
fn read_to_close(r: &mut impl BufRead) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    r.by_ref().take(MAX_BODY as u64 + 1).read_to_end(&mut body)?;
    if body.len() > MAX_BODY {
        return Err(Bad::new(413, format!("body over the {MAX_BODY}-byte limit")).into());
    }
    Ok(body)
}

/// Answers one request body: a call, or `system.multicall` of several.
fn answer(handler: &dyn Handler, body: &[u8]) -> String {
    match parse(body) {
        Ok(Message::Call { method, params }) if method == "system.multicall" => {
            write_response(&multicall(handler, params))
        }
        Ok(Message::Call { method, params }) => match handler.call(&method, params) {
            Ok(v) => write_response(&v),
            Err((code, msg)) => write_fault(code, &msg),
        },
        Ok(_) => write_fault(-32600, "expected a methodCall"),
        Err(e) => write_fault(-32700, &e.to_string()),
    }
}

/// `system.multicall([{methodName, params}, ...])`: each result wrapped in a one-element
/// array, or a fault struct, as Python's and XmlRpc++'s servers do.
fn multicall(handler: &dyn Handler, params: Vec<Value>) -> Value {
    let fault = |code: i32, msg: String| {
        Value::Struct(vec![("faultCode".into(), Value::Int(code)), ("faultString".into(), Value::Str(msg))])
    };
    let calls = match params.into_iter().next() {
        Some(Value::Array(calls)) => calls,
        _ => return Value::Array(Vec::new()),
    };
    let results = calls.into_iter().map(|c| {
        let Value::Struct(members) = c else { return fault(1, "multicall entry is not a struct".into()) };
        let mut method = None;
        let mut params = Vec::new();
        for (k, v) in members {
            match (k.as_str(), v) {
                ("methodName", Value::Str(m)) => method = Some(m),
                ("params", Value::Array(p)) => params = p,
                _ => {}
            }
        }
        match method {
            Some(m) if m == "system.multicall" => fault(1, "recursive system.multicall is refused".into()),
            Some(m) => match handler.call(&m, params) {
                Ok(v) => Value::Array(vec![v]),
                Err((code, msg)) => fault(code, msg),
            },
            None => fault(1, "multicall entry has no methodName".into()),
        }
    });
    Value::Array(results.collect())
}

/// One open connection, as the accept loop sees it.
struct Conn {
    stream: Arc<TcpStream>,
    /// Since when it has been waiting for a request; `None` once a request's first byte came.
    idle_since: Option<Instant>,
}

/// Open connections, so that the accept loop can make room and a stopped server can close them.
#[derive(Default)]
struct Conns {
    next: u64,
    open: HashMap<u64, Conn>,
}

impl Conns {
    /// Makes room for one more connection under `max`, closing the one idle the longest.
    /// `false` when every open connection is busy with a request.
    fn make_room(&mut self, max: usize) -> bool {
        if self.open.len() < max.max(1) {
            return true;
        }
        let oldest = self.open.iter().filter_map(|(id, c)| Some((c.idle_since?, *id))).min();
        let Some((_, id)) = oldest else { return false };
        if let Some(c) = self.open.remove(&id) {
            // Wakes its thread, blocked reading, which then ends.
            let _ = c.stream.shutdown(Shutdown::Both);
        }
        true
    }
}

struct Shared {
    handler: Arc<dyn Handler>,
    limits: Limits,
    stop: AtomicBool,
    conns: Mutex<Conns>,
}

impl Shared {
    fn new(handler: Arc<dyn Handler>, limits: Limits) -> Arc<Shared> {
        Arc::new(Shared { handler, limits, stop: AtomicBool::new(false), conns: Mutex::default() })
    }

    fn conns(&self) -> std::sync::MutexGuard<'_, Conns> {
        // A connection thread never panics while holding the lock; recover anyway.
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks connection `id` idle or busy; `false` when it was closed meanwhile (evicted, or the
    /// server stopped), so that a request that raced its eviction is not answered twice.
    fn mark(&self, id: u64, idle: bool) -> bool {
        match self.conns().open.get_mut(&id) {
            Some(c) => {
                c.idle_since = idle.then(Instant::now);
                true
            }
            None => false,
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let conn = match conn {
            Ok(c) => Arc::new(c),
            Err(_) => {
                // Out of file descriptors or an aborted handshake: do not spin.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let id = {
            let mut conns = shared.conns();
            if !conns.make_room(shared.limits.max_connections) {
                continue; // dropped: the peer sees the connection close
            }
            conns.next += 1;
            let id = conns.next;
            conns.open.insert(id, Conn { stream: conn.clone(), idle_since: Some(Instant::now()) });
            id
        };
        let worker = shared.clone();
        let spawned = std::thread::Builder::new().name("xmlrpc-conn".into()).spawn(move || {
            let _ = serve_connection(&conn, id, &worker);
            worker.conns().open.remove(&id);
        });
        if spawned.is_err() {
            shared.conns().open.remove(&id);
        }
    }
}

/// Serves `handler` on `listener` until the process ends: one thread per connection, many
/// requests per connection, any path, the default [`Limits`]. [`Server`] does the same and can
/// be stopped.
pub fn serve(listener: TcpListener, handler: Arc<dyn Handler>) {
    accept_loop(listener, Shared::new(handler, Limits::default()));
}

/// An XML-RPC server running in background threads, stopped by [`Server::shutdown`] or on drop.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `handler` on `listener` from a background thread (as [`serve`] does).
    pub fn start(listener: TcpListener, handler: Arc<dyn Handler>) -> std::io::Result<Server> {
        Server::start_with(listener, handler, Limits::default())
    }

    /// As [`Server::start`], with `limits` instead of the defaults.
    pub fn start_with(listener: TcpListener, handler: Arc<dyn Handler>, limits: Limits) -> std::io::Result<Server> {
        let addr = listener.local_addr()?;
        let shared = Shared::new(handler, limits);
        let accept_shared = shared.clone();
        let accept = std::thread::Builder::new()
            .name("xmlrpc-accept".into())
            .spawn(move || accept_loop(listener, accept_shared))?;
        Ok(Server { addr, shared, accept: Some(accept) })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections open now.
    pub fn connections(&self) -> usize {
        self.shared.conns().open.len()
    }

    /// Stops accepting and closes open connections. A call being answered finishes, but its
    /// reply is not delivered.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if self.shared.stop.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake the blocked accept() with a connection of our own.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        let woken = TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok();
        for (_, c) in self.shared.conns().open.drain() {
            let _ = c.stream.shutdown(Shutdown::Both);
        }
        if let Some(t) = self.accept.take() {
            if woken {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `start + limit`; a limit too long to add (`Duration::MAX`) is a year, not a panic.
fn after(start: Instant, limit: Duration) -> Instant {
    let year = Duration::from_secs(365 * 86_400);
    start.checked_add(limit.min(year)).unwrap_or(start)
}

/// Reads a connection until `deadline`, then fails with `TimedOut`. A read timeout alone
/// restarts with every byte, so a peer trickling one byte at a time would never time out.
struct Deadline<'a> {
    conn: &'a TcpStream,
    deadline: Instant,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            self.conn.set_read_timeout(Some(left))?;
            match self.conn.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => return r,
            }
        }
    }
}

fn reply(w: &mut impl Write, status: &str, content_type: &str, body: &[u8], close: bool) -> std::io::Result<()> {
    let mut resp = format!(
        "HTTP/1.1 {status}\r\nServer: rbag\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{}\r\n",
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    )
    .into_bytes();
    resp.extend_from_slice(body);
    w.write_all(&resp)
}

fn status_text(status: u16) -> &'static str {
    match status {
        400 => "400 Bad Request",
        405 => "405 Method Not Allowed",
        413 => "413 Content Too Large",
        431 => "431 Request Header Fields Too Large",
        _ => "501 Not Implemented",
    }
}

/// Serves connection `id` until the peer closes it, a limit runs out, or it is evicted.
fn serve_connection(conn: &TcpStream, id: u64, shared: &Shared) -> std::io::Result<()> {
    let limits = &shared.limits;
    conn.set_nodelay(true)?;
    conn.set_write_timeout(Some(limits.request.max(Duration::from_millis(1))))?;
    let mut w = conn;
    let mut r = BufReader::new(Deadline { conn, deadline: after(Instant::now(), limits.idle) });
    loop {
        // Idle: wait for the request's first byte (it may already be buffered).
        match r.fill_buf() {
            Ok([]) | Err(_) => return Ok(()),
            Ok(_) => {}
        }
        let first_byte = Instant::now();
        if !shared.mark(id, false) {
            return Ok(());
        }
        r.get_mut().deadline = after(first_byte, limits.head);
        let request = read_head(&mut r).and_then(|head| {
            let Some(head) = head else { return Ok(None) };
            if !head.start.starts_with("POST ") {
                return Err(Bad::new(405, format!("{:?}: XML-RPC needs POST", short(&head.start))).into());
            }
            let len = head.content_length()?.unwrap_or(0);
            if head.has_token("expect", "100-continue") {
                w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
            }
            r.get_mut().deadline = after(first_byte, limits.request);
            Ok(Some((read_body(&mut r, len)?, head)))
        });
        let (body, head) = match request {
            Ok(Some(req)) => req,
            Ok(None) | Err(ReadError::Io(_)) => return Ok(()),
            Err(ReadError::Bad(b)) => {
                // Say what was wrong, then close: the stream's framing is lost.
                let text = format!("{}\n", b.msg);
                return reply(&mut w, status_text(b.status), "text/plain", text.as_bytes(), true);
            }
        };
        let close = head.start.ends_with("HTTP/1.0") || head.has_token("connection", "close");
        let out = answer(&*shared.handler, &body);
        reply(&mut w, "200 OK", "text/xml", out.as_bytes(), close)?;
        if close || !shared.mark(id, true) {
            return Ok(());
        }
        r.get_mut().deadline = after(Instant::now(), limits.keep_alive);
    }
}

/// An XML-RPC client for one server URI, keeping its connection open between calls.
pub struct Client {
    uri: String,
    host_port: String,
    path: String,
    conn: Option<BufReader<TcpStream>>,
    timeout: Duration,
}

impl Client {
    /// A client for `http://host:port/path`; nothing connects until the first call.
    pub fn new(uri: &str) -> Result<Client, Error> {
        let rest = uri
            .strip_prefix("http://")
            .ok_or_else(|| Error::Http { uri: uri.to_string(), msg: "only http:// URIs are supported".into() })?;
        let (host_port, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if host_port.is_empty() {
            return Err(Error::Http { uri: uri.to_string(), msg: "the URI has no host".into() });
        }
        Ok(Client {
            uri: uri.to_string(),
            host_port: host_port.to_string(),
            path: path.to_string(),
            conn: None,
            timeout: CALL_TIMEOUT,
        })
    }

    /// Sets how long to wait for connecting and for each reply.
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = timeout;
        self
    }

    /// The server's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Calls `method`; a fault becomes [`Error::Fault`]. A kept connection that the server
    /// closed is reopened once.
    pub fn call(&mut self, method: &str, params: &[Value]) -> Result<Value, Error> {
        let body = write_call(method, params);
        let reused = self.conn.is_some();
        let reply = match self.round_trip(&body) {
            Err(Error::Io { .. }) if reused => {
                self.conn = None;
                self.round_trip(&body)
            }
            r => r,
        };
        let reply = reply.inspect_err(|_| self.conn = None)?;
        match parse(&reply).map_err(|e| Error::Http { uri: self.uri.clone(), msg: e.to_string() })? {
            Message::Response(v) => Ok(v),
            Message::Fault(v) => {
                let code = v.member("faultCode").and_then(Value::as_i32).unwrap_or(0);
                let msg = v.member("faultString").and_then(Value::as_str).unwrap_or("").to_string();
                Err(Error::Fault { uri: self.uri.clone(), code, msg })
            }
            Message::Call { .. } => Err(Error::Http { uri: self.uri.clone(), msg: "the reply is a methodCall".into() }),
        }
    }

    fn connect(&self) -> std::io::Result<BufReader<TcpStream>> {
        use std::net::ToSocketAddrs;
        let mut last = None;
        for addr in self.host_port.to_socket_addrs()? {
            match TcpStream::connect_timeout(&addr, self.timeout) {
                Ok(s) => {
                    s.set_nodelay(true)?;
                    s.set_read_timeout(Some(self.timeout))?;
                    s.set_write_timeout(Some(self.timeout))?;
                    return Ok(BufReader::new(s));
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "the host has no address")))
    }

    fn round_trip(&mut self, body: &str) -> Result<Vec<u8>, Error> {
        let uri = self.uri.clone();
        let io = |e| Error::Io { uri: uri.clone(), source: e };
        let http = |msg: String| Error::Http { uri: uri.clone(), msg };
        let conn = match &mut self.conn {
            Some(c) => c,
            None => self.conn.insert(self.connect().map_err(io)?),
        };
        let mut req = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: rbag\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\r\n",
            self.path,
            self.host_port,
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(body.as_bytes());
        conn.get_mut().write_all(&req).map_err(io)?;
        let head = match read_head(conn) {
            Ok(Some(head)) => head,
            Ok(None) => return Err(io(std::io::ErrorKind::UnexpectedEof.into())),
            Err(ReadError::Io(e)) => return Err(io(e)),
            Err(ReadError::Bad(b)) => return Err(http(b.msg)),
        };
        let len = head.content_length().map_err(|b| http(b.msg))?;
        let body = match len {
            Some(len) => read_body(conn, len).map_err(io)?,
            None => match read_to_close(conn) {
                Ok(b) => b,
                Err(ReadError::Io(e)) => return Err(io(e)),
                Err(ReadError::Bad(b)) => return Err(http(b.msg)),
            },
        };
        if len.is_none() || head.has_token("connection", "close") || head.start.starts_with("HTTP/1.0") {
            self.conn = None;
        }
        let status = head.start.split_whitespace().nth(1).unwrap_or("");
        if status != "200" {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]).trim().to_string();
            return Err(http(format!("status line {:?}: {text}", short(&head.start))));
        }
        if head.header("content-encoding").is_some_and(|e| !e.eq_ignore_ascii_case("identity")) {
            self.conn = None;
            return Err(http("the reply is compressed, which was not asked for".into()));
        }
        Ok(body)
    }
}

/// One call on a fresh connection.
pub fn call(uri: &str, method: &str, params: &[Value]) -> Result<Value, Error> {
    Client::new(uri)?.call(method, params)
}
