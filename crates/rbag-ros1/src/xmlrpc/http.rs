//! Just enough blocking HTTP/1.1 for XML-RPC: a keep-alive server with a thread per
//! connection, and a client that keeps its connection open.
//!
//! Peers POST to `/` or `/RPC2`; both are served. Nothing is gzipped and gzip is never asked
//! for (Python servers would gzip replies over 1400 bytes if asked).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use super::value::{parse, write_call, write_fault, write_response, Message, Value};
use super::Error;

/// A request or response head longer than this is refused.
const MAX_HEAD: usize = 64 * 1024;
/// A body longer than this is refused. `robot_description` parameters can be megabytes.
pub const MAX_BODY: usize = 256 * 1024 * 1024;
/// How long a client waits for a reply.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves XML-RPC methods. `Err((code, message))` becomes an XML-RPC fault.
pub trait Handler: Send + Sync + 'static {
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
}

fn other(msg: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.into())
}

/// Reads one message (head and body). `Ok(None)` on a clean end before a message starts.
fn read_message(r: &mut impl BufRead) -> std::io::Result<Option<(Head, Vec<u8>)>> {
    let mut start = String::new();
    loop {
        start.clear();
        if r.by_ref().take(MAX_HEAD as u64).read_line(&mut start)? == 0 {
            return Ok(None);
        }
        if !start.trim().is_empty() {
            break;
        }
    }
    let mut headers = Vec::new();
    let mut total = start.len();
    loop {
        let mut line = String::new();
        if r.by_ref().take(MAX_HEAD as u64).read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        total += line.len();
        if total > MAX_HEAD {
            return Err(other(format!("HTTP head longer than {MAX_HEAD} bytes")));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let head = Head { start: start.trim_end().to_string(), headers };
    if head.header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        return Err(other("chunked transfer encoding is not supported"));
    }
    let len: usize = match head.header("content-length") {
        Some(v) => v.parse().map_err(|_| other(format!("bad Content-Length {v:?}")))?,
        None => 0,
    };
    if len > MAX_BODY {
        return Err(other(format!("body of {len} bytes is over the {MAX_BODY}-byte limit")));
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body)?;
    Ok(Some((head, body)))
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

/// Serves `handler` on `listener` until the process ends: one thread per connection, many
/// requests per connection, any path.
pub fn serve(listener: TcpListener, handler: Arc<dyn Handler>) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let handler = handler.clone();
        let _ = std::thread::Builder::new().name("xmlrpc-conn".into()).spawn(move || {
            let _ = serve_connection(conn, &*handler);
        });
    }
}

fn serve_connection(conn: TcpStream, handler: &dyn Handler) -> std::io::Result<()> {
    conn.set_nodelay(true)?;
    let mut w = conn.try_clone()?;
    let mut r = BufReader::new(conn);
    while let Some((head, body)) = read_message(&mut r)? {
        let close = head.start.ends_with("HTTP/1.0")
            || head.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let out = answer(handler, &body);
        let mut resp = format!(
            "HTTP/1.1 200 OK\r\nServer: rbag\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n{}\r\n",
            out.len(),
            if close { "Connection: close\r\n" } else { "" }
        )
        .into_bytes();
        resp.extend_from_slice(out.as_bytes());
        w.write_all(&resp)?;
        if close {
            break;
        }
    }
    Ok(())
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
        let rest = uri.strip_prefix("http://").ok_or_else(|| Error::Http {
            uri: uri.to_string(),
            msg: "only http:// URIs are supported".into(),
        })?;
        let (host_port, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        Ok(Client { uri: uri.to_string(), host_port: host_port.to_string(), path: path.to_string(), conn: None, timeout: CALL_TIMEOUT })
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
            Err(_) if reused => {
                self.conn = None;
                self.round_trip(&body)
            }
            r => r,
        };
        let reply = reply.map_err(|e| {
            self.conn = None;
            e
        })?;
        match parse(&reply).map_err(|e| Error::Http { uri: self.uri.clone(), msg: e.to_string() })? {
            Message::Response(v) => Ok(v),
            Message::Fault(v) => {
                let mut code = 0;
                let mut msg = String::new();
                if let Value::Struct(m) = v {
                    for (k, v) in m {
                        match (k.as_str(), v) {
                            ("faultCode", Value::Int(c)) => code = c,
                            ("faultString", Value::Str(s)) => msg = s,
                            _ => {}
                        }
                    }
                }
                Err(Error::Fault { uri: self.uri.clone(), code, msg })
            }
            Message::Call { .. } => Err(Error::Http { uri: self.uri.clone(), msg: "the reply is a methodCall".into() }),
        }
    }

    fn connect(&self) -> std::io::Result<TcpStream> {
        use std::net::ToSocketAddrs;
        let mut last = None;
        for addr in self.host_port.to_socket_addrs()? {
            match TcpStream::connect_timeout(&addr, self.timeout) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| other("the host has no address")))
    }

    fn round_trip(&mut self, body: &str) -> Result<Vec<u8>, Error> {
        let io = |e| Error::Io { uri: self.uri.clone(), source: e };
        if self.conn.is_none() {
            let s = self.connect().map_err(io)?;
            s.set_nodelay(true).map_err(io)?;
            s.set_read_timeout(Some(self.timeout)).map_err(io)?;
            s.set_write_timeout(Some(self.timeout)).map_err(io)?;
            self.conn = Some(BufReader::new(s));
        }
        let Some(conn) = self.conn.as_mut() else { unreachable!("connected above") };
        let mut req = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: rbag\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\r\n",
            self.path,
            self.host_port,
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(body.as_bytes());
        let uri = self.uri.clone();
        let io = |e| Error::Io { uri: uri.clone(), source: e };
        conn.get_mut().write_all(&req).map_err(io)?;
        match read_message(conn).map_err(io)? {
            Some((head, body)) => {
                let status = head.start.split_whitespace().nth(1).unwrap_or("");
                if status != "200" {
                    return Err(Error::Http { uri, msg: format!("status line {:?}", head.start) });
                }
                if head.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
                    self.conn = None;
                }
                Ok(body)
            }
            None => Err(io(std::io::ErrorKind::UnexpectedEof.into())),
        }
    }
}

/// One call on a fresh connection.
pub fn call(uri: &str, method: &str, params: &[Value]) -> Result<Value, Error> {
    Client::new(uri)?.call(method, params)
}
