//! Socket floods against the XML-RPC server under the master and every node (issue 13, D8):
//! 2,048 idle connections do not lock callers out, idle connections are closed after a
//! timeout, and a peer trickling bytes is closed at the request deadline. The tests run one at
//! a time (nextest group `socket-flood`, .config/nextest.toml), each on its own loopback port.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rbag_ros1::master::Master;
use rbag_ros1::master_client::MasterClient;
use rbag_ros1::xmlrpc::{write_call, Client, Handler, Limits, Server, Value, MAX_CONNECTIONS};

/// Idle connections opened against the master.
const IDLE: usize = 2048;

/// Echoes `[method, params...]` and counts the calls.
struct Echo {
    calls: AtomicUsize,
}

impl Handler for Echo {
    fn call(&self, method: &str, params: Vec<Value>) -> Result<Value, (i32, String)> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut v = vec![Value::Str(method.into())];
        v.extend(params);
        Ok(Value::Array(v))
    }
}

fn echo_server(limits: Limits) -> (Server, SocketAddr, Arc<Echo>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let handler = Arc::new(Echo { calls: AtomicUsize::new(0) });
    let server = Server::start_with(listener, handler.clone(), limits).expect("server starts");
    let addr = server.local_addr();
    (server, addr, handler)
}

fn wait_until(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("timed out after {timeout:?} waiting for {what}");
}

/// Waits up to `timeout` for the server to close `c`, which must send nothing first.
fn assert_closed(c: &mut TcpStream, timeout: Duration) {
    c.set_read_timeout(Some(timeout)).expect("timeout");
    let mut buf = [0u8; 256];
    match c.read(&mut buf) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Ok(n) => panic!("expected a close, got {:?}", String::from_utf8_lossy(&buf[..n])),
        Err(e) => panic!("still open after {timeout:?}: {e}"),
    }
}

/// Whether `c` is still open: nothing to read within 100 ms.
fn is_open(c: &mut TcpStream) -> bool {
    c.set_read_timeout(Some(Duration::from_millis(100))).expect("timeout");
    let mut buf = [0u8; 1];
    matches!(c.read(&mut buf), Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

/// The soft limit on open files, from /proc/self/limits (the crate has no libc to raise it).
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    match line.split_whitespace().nth(3)? {
        "unlimited" => Some(usize::MAX),
        soft => soft.parse().ok(),
    }
}

#[test]
fn master_answers_while_2048_connections_sit_idle() {
    let master = Master::start("127.0.0.1:0".parse().expect("addr")).expect("the master starts");
    let addr = master.local_addr();
    let talker = MasterClient::new(master.uri(), "/talker").expect("client");
    talker.register_publisher("/chatter", "std_msgs/String", "http://127.0.0.1:1/").expect("register");

    // Leave room for the server's side of its connections and the rest of the process.
    let n = match open_file_limit() {
        Some(limit) => IDLE.min(limit.saturating_sub(MAX_CONNECTIONS + 256)),
        None => IDLE,
    };
    if n < IDLE {
        eprintln!("note: the open-file limit allows {n} idle connections, not {IDLE}");
    }
    assert!(n > MAX_CONNECTIONS, "only {n} idle connections fit under the open-file limit");
    let start = Instant::now();
    let idle: Vec<TcpStream> = (0..n)
        .map(|k| {
            TcpStream::connect_timeout(&addr, Duration::from_secs(10))
                .unwrap_or_else(|e| panic!("idle connection {k}: {e}"))
        })
        .collect();
    let opened = start.elapsed();
    assert!(master.connections() <= MAX_CONNECTIONS, "{} connections served", master.connections());

    let start = Instant::now();
    let caller = MasterClient::new(master.uri(), "/caller").expect("client");
    let uri = caller.call("getUri", vec![]).expect("getUri under the flood");
    let state = caller.system_state().expect("getSystemState under the flood");
    let took = start.elapsed();
    eprintln!("{n} idle connections opened in {opened:?}; getUri + getSystemState took {took:?}");
    assert_eq!(uri, Value::Str(master.uri().into()));
    assert_eq!(state.publishers, vec![("/chatter".to_string(), vec!["/talker".to_string()])]);
    assert!(took < Duration::from_secs(10), "the calls took {took:?}");

    // The talker's kept connection was the oldest idle one, so it was closed for the flood;
    // its client reconnects once.
    assert_eq!(talker.lookup_node("/talker").expect("lookupNode after eviction"), "http://127.0.0.1:1/");
    assert!(master.connections() <= MAX_CONNECTIONS, "{} connections served", master.connections());
    drop(idle);
}

#[test]
fn eviction_closes_the_longest_idle_connection_never_a_busy_one() {
    let limits = Limits { max_connections: 3, ..Limits::default() };
    let (server, addr, handler) = echo_server(limits);
    let body = write_call("slow", &[]);

    // c1 is busy: the server has its head and answered 100 Continue, the body is not sent yet.
    let mut c1 = TcpStream::connect(addr).expect("connect");
    c1.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    c1.write_all(
        format!("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n", body.len()).as_bytes(),
    )
    .expect("head");
    let mut cont = [0u8; 25];
    c1.read_exact(&mut cont).expect("100 Continue");
    assert_eq!(&cont, b"HTTP/1.1 100 Continue\r\n\r\n");
    let mut c2 = TcpStream::connect(addr).expect("connect");
    wait_until("c2 accepted", Duration::from_secs(5), || server.connections() == 2);
    let mut c3 = TcpStream::connect(addr).expect("connect");
    wait_until("c3 accepted", Duration::from_secs(5), || server.connections() == 3);

    // At the cap, a new caller is served and c2, idle the longest, is closed for it.
    let mut caller = Client::new(&format!("http://{addr}/")).expect("client").with_timeout(Duration::from_secs(5));
    assert_eq!(caller.call("ping", &[]).expect("served at the cap"), Value::Array(vec![Value::Str("ping".into())]));
    assert_closed(&mut c2, Duration::from_secs(5));
    assert!(is_open(&mut c3), "c3 was closed");
    assert_eq!(server.connections(), 3);

    // The busy c1 was kept: its call completes.
    c1.write_all(body.as_bytes()).expect("body");
    let mut reply = [0u8; 12];
    c1.read_exact(&mut reply).expect("reply");
    assert_eq!(&reply, b"HTTP/1.1 200");
    assert_eq!(handler.calls.load(Ordering::SeqCst), 2);
}

#[test]
fn a_new_connection_is_refused_only_when_every_one_is_busy() {
    let limits = Limits { max_connections: 1, ..Limits::default() };
    let (server, addr, _) = echo_server(limits);
    let mut busy = TcpStream::connect(addr).expect("connect");
    busy.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    busy.write_all(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n").expect("head");
    let mut cont = [0u8; 25];
    busy.read_exact(&mut cont).expect("100 Continue");
    let mut refused = TcpStream::connect(addr).expect("the kernel accepts");
    assert_closed(&mut refused, Duration::from_secs(5));
    assert!(is_open(&mut busy), "the busy connection was closed");
    assert_eq!(server.connections(), 1);
}

#[test]
fn idle_connections_are_closed_after_the_idle_timeout() {
    let idle = Duration::from_millis(200);
    let keep_alive = Duration::from_millis(300);
    let (server, addr, _) = echo_server(Limits { idle, keep_alive, ..Limits::default() });

    // New connections that never send a byte.
    let start = Instant::now();
    let mut conns: Vec<TcpStream> = (0..10).map(|_| TcpStream::connect(addr).expect("connect")).collect();
    for c in &mut conns {
        assert_closed(c, Duration::from_secs(5));
    }
    let took = start.elapsed();
    assert!(took >= idle && took < Duration::from_secs(10), "closed after {took:?}");
    wait_until("the server forgets them", Duration::from_secs(5), || server.connections() == 0);

    // A kept connection: answered, then closed after `keep_alive` with no further request.
    let body = write_call("x", &[]);
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    let start = Instant::now();
    c.write_all(format!("POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
        .expect("request");
    let mut all = String::new();
    c.read_to_string(&mut all).expect("the reply, then the close");
    let took = start.elapsed();
    assert!(all.starts_with("HTTP/1.1 200") && all.ends_with("</methodResponse>\n"), "{all}");
    assert!(!all.contains("Connection: close"), "{all}");
    assert!(took >= keep_alive && took < Duration::from_secs(10), "closed after {took:?}");
}

/// Sends `prefix` at once, then one byte every 100 ms (at most 100); returns how long after the
/// first byte the server closed the connection, and what it sent.
fn trickle(addr: SocketAddr, prefix: &[u8]) -> (Duration, Vec<u8>) {
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_millis(100))).expect("timeout");
    let start = Instant::now();
    c.write_all(prefix).expect("prefix");
    let mut got = Vec::new();
    for _ in 0..100 {
        let mut buf = [0u8; 256];
        match c.read(&mut buf) {
            Ok(0) => return (start.elapsed(), got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return (start.elapsed(), got),
        }
        if c.write_all(b"x").is_err() {
            return (start.elapsed(), got);
        }
    }
    panic!("a connection trickling a byte every 100 ms was still open after 10 s");
}

#[test]
fn a_trickling_request_is_closed_at_its_deadline() {
    let head = Duration::from_millis(500);
    let request = Duration::from_millis(800);
    let (server, addr, handler) = echo_server(Limits { head, request, ..Limits::default() });

    // A head that never ends (one header line, a byte at a time).
    let (took, got) = trickle(addr, b"POST / HTTP/1.1\r\nX-Slow: ");
    assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));
    assert!(took >= head && took < head + Duration::from_secs(6), "closed after {took:?}");

    // A body that never ends.
    let (took, got) = trickle(addr, b"POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n<?xml");
    assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));
    assert!(took >= request && took < request + Duration::from_secs(6), "closed after {took:?}");

    assert_eq!(handler.calls.load(Ordering::SeqCst), 0);
    wait_until("the server forgets them", Duration::from_secs(5), || server.connections() == 0);
}
