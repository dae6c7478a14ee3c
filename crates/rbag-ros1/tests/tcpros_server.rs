//! `TcprosServer` and `subscriber::connect` against each other, against a TCPROS subscriber
//! written in plain Python, and against fake publishers that misbehave.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rbag_ros1::tcpros::{
    connect, read_header, write_frame, write_header, Header, Limits, Publication, SubscribeRequest, TcprosError,
    TcprosServer, WireError,
};

const STRING_MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";
const T: Duration = Duration::from_secs(5);

fn publication(topic: &str, latching: bool, queue_size: usize) -> Publication {
    Publication {
        topic: topic.into(),
        msg_type: "std_msgs/String".into(),
        md5sum: STRING_MD5.into(),
        message_definition: "string data\n".into(),
        latching,
        caller_id: "/rbag_pub".into(),
        queue_size,
    }
}

fn request(topic: &str, md5: &str, ty: &str) -> SubscribeRequest {
    SubscribeRequest {
        topic: topic.into(),
        caller_id: "/rbag_sub".into(),
        msg_type: ty.into(),
        md5sum: md5.into(),
        message_definition: None,
        tcp_nodelay: true,
    }
}

/// A serialized std_msgs/String.
fn string_msg(s: &str) -> Bytes {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    Bytes::from(v)
}

fn addr(server: &TcprosServer) -> String {
    format!("127.0.0.1:{}", server.port())
}

#[test]
fn reply_header_is_sorted_and_latched_message_arrives_first() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let tp = server.advertise(publication("/latched", true, 10)).unwrap();
    tp.publish(string_msg("one"));
    tp.publish(string_msg("two"));
    let mut link = connect(&addr(&server), &request("/latched", "*", "*"), &Limits::default(), T).unwrap();
    let fields: Vec<_> = link.header().iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(
        fields,
        [
            "callerid=/rbag_pub",
            "latching=1",
            &format!("md5sum={STRING_MD5}"),
            "message_definition=string data\n",
            "topic=/latched",
            "type=std_msgs/String"
        ]
    );
    assert!(link.latching());
    assert_eq!(link.next_message().unwrap().unwrap(), string_msg("two"));
    assert!(tp.wait_for_subscribers(1, T));
    tp.publish(string_msg("three"));
    assert_eq!(link.next_message().unwrap().unwrap(), string_msg("three"));
    // A second subscriber gets the newest latched message.
    let mut second =
        connect(&addr(&server), &request("/latched", STRING_MD5, "std_msgs/String"), &Limits::default(), T).unwrap();
    assert_eq!(second.next_message().unwrap().unwrap(), string_msg("three"));
    assert!(tp.wait_for_subscribers(2, T));
}

#[test]
fn not_latched_sends_nothing_old() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let tp = server.advertise(publication("/plain", false, 10)).unwrap();
    tp.publish(string_msg("before"));
    let mut link = connect(&addr(&server), &request("/plain", "*", "*"), &Limits::default(), T).unwrap();
    assert_eq!(link.header().get("latching"), Some("0"));
    assert!(tp.wait_for_subscribers(1, T));
    tp.publish(string_msg("after"));
    assert_eq!(link.next_message().unwrap().unwrap(), string_msg("after"));
}

#[test]
fn wrong_md5_is_refused_with_roscpps_text() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let _tp = server.advertise(publication("/chatter", false, 10)).unwrap();
    let bad = "0123456789abcdef0123456789abcdef";
    match connect(&addr(&server), &request("/chatter", bad, "std_msgs/String"), &Limits::default(), T) {
        Err(TcprosError::Refused { topic, peer, msg }) => {
            assert_eq!(topic, "/chatter");
            assert_eq!(peer, addr(&server));
            assert_eq!(
                msg,
                format!(
                    "Client [/rbag_sub] wants topic /chatter to have datatype/md5sum [std_msgs/String/{bad}], but our version has [std_msgs/String/{STRING_MD5}]. Dropping connection."
                )
            );
        }
        other => panic!("{:?}", other.map(|l| l.header().clone())),
    }
    // The type is not checked, as roscpp does not: `*` md5 with any type is accepted.
    connect(&addr(&server), &request("/chatter", "*", "std_msgs/Int32"), &Limits::default(), T).unwrap();
    connect(&addr(&server), &request("/chatter", STRING_MD5, "*"), &Limits::default(), T).unwrap();
}

#[test]
fn a_star_publication_accepts_any_md5() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let mut p = publication("/any", false, 10);
    p.md5sum = "*".into();
    let _tp = server.advertise(p).unwrap();
    let link = connect(&addr(&server), &request("/any", STRING_MD5, "std_msgs/String"), &Limits::default(), T).unwrap();
    assert_eq!(link.header().get("md5sum"), Some("*"));
}

#[test]
fn unknown_topic_is_refused() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let _tp = server.advertise(publication("/chatter", false, 10)).unwrap();
    match connect(&addr(&server), &request("/nope", "*", "*"), &Limits::default(), T) {
        Err(e @ TcprosError::Refused { .. }) => {
            let s = e.to_string();
            assert!(
                s.contains("received a connection for a nonexistent topic [/nope] from [TCPROS connection on port"),
                "{s}"
            );
            assert!(s.ends_with("] [/rbag_sub]."), "{s}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// Sends a raw header and returns the reply.
fn raw_handshake(server: &TcprosServer, h: &Header) -> Header {
    let mut s = TcpStream::connect(addr(server)).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    write_header(&mut s, h).unwrap();
    let reply = read_header(&mut s, &Limits::default()).unwrap();
    // Refusals close the connection.
    let mut rest = Vec::new();
    assert_eq!(s.read_to_end(&mut rest).unwrap_or(0), 0);
    reply
}

#[test]
fn service_probe_and_incomplete_headers_get_an_error() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let _tp = server.advertise(publication("/chatter", false, 10)).unwrap();
    let probe =
        Header::from_pairs([("probe", "1"), ("md5sum", "*"), ("service", "/set_x"), ("callerid", "/rosservice")]);
    let r = raw_handshake(&server, &probe);
    assert_eq!(
        r.iter().collect::<Vec<_>>(),
        [("error", "received a tcpros connection for a nonexistent service [/set_x].")]
    );
    let r = raw_handshake(&server, &Header::from_pairs([("callerid", "/x")]));
    assert_eq!(r.get("error"), Some("Header from subscriber did not have the required element: topic"));
    let r = raw_handshake(&server, &Header::from_pairs([("topic", "/chatter"), ("callerid", "/x")]));
    assert_eq!(
        r.get("error"),
        Some("Header from subscriber did not have the required elements: md5sum, topic, callerid")
    );
}

#[test]
fn advertise_twice_is_an_error_and_unadvertise_closes_links() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let tp = server.advertise(publication("/t", false, 10)).unwrap();
    match server.advertise(publication("/t", false, 10)) {
        Err(e @ TcprosError::AlreadyAdvertised { .. }) => assert!(e.to_string().contains("/t"), "{e}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let mut link = connect(&addr(&server), &request("/t", "*", "*"), &Limits::default(), T).unwrap();
    assert!(tp.wait_for_subscribers(1, T));
    server.unadvertise("/t");
    assert!(link.next_message().unwrap().is_none());
    assert_eq!(tp.subscriber_count(), 0);
    tp.publish(string_msg("ignored"));
    assert!(matches!(
        connect(&addr(&server), &request("/t", "*", "*"), &Limits::default(), T),
        Err(TcprosError::Refused { .. })
    ));
    // The topic can be advertised again.
    let _tp2 = server.advertise(publication("/t", false, 10)).unwrap();
    connect(&addr(&server), &request("/t", "*", "*"), &Limits::default(), T).unwrap();
}

#[test]
fn a_subscriber_that_hangs_up_is_counted_out() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let tp = server.advertise(publication("/t", false, 10)).unwrap();
    let link = connect(&addr(&server), &request("/t", "*", "*"), &Limits::default(), T).unwrap();
    assert!(tp.wait_for_subscribers(1, T));
    assert_eq!(tp.subscribers()[0].caller_id, "/rbag_sub");
    drop(link);
    let start = Instant::now();
    while tp.subscriber_count() > 0 {
        assert!(start.elapsed() < T, "the subscriber is still counted");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!tp.wait_for_subscribers(1, Duration::from_millis(50)));
}

#[test]
fn closer_unblocks_next_message() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let _tp = server.advertise(publication("/t", false, 10)).unwrap();
    let mut link = connect(&addr(&server), &request("/t", "*", "*"), &Limits::default(), T).unwrap();
    let closer = link.closer();
    let h = std::thread::spawn(move || link.next_message().map(|m| m.is_none()));
    std::thread::sleep(Duration::from_millis(100));
    closer.close();
    assert!(h.join().unwrap().unwrap());
}

#[test]
fn shutdown_stops_everything() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let tp = server.advertise(publication("/t", false, 10)).unwrap();
    let mut link = connect(&addr(&server), &request("/t", "*", "*"), &Limits::default(), T).unwrap();
    assert!(tp.wait_for_subscribers(1, T));
    let a = addr(&server);
    server.shutdown();
    assert!(link.next_message().unwrap().is_none());
    assert!(connect(&a, &request("/t", "*", "*"), &Limits::default(), Duration::from_secs(1)).is_err());
    assert!(matches!(server.advertise(publication("/u", false, 1)), Err(TcprosError::ShutDown { .. })));
}

/// A subscriber that reads nothing loses its oldest messages; publish never blocks, and a
/// healthy subscriber on the same topic receives everything.
#[test]
fn stalled_subscriber_drops_oldest_and_costs_only_itself() {
    const N: usize = 40;
    const SIZE: usize = 1 << 20;
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let tp = server.advertise(publication("/big", false, 4)).unwrap();
    // The stalled one: a raw connection that stops reading after the handshake.
    let mut stalled = TcpStream::connect(addr(&server)).unwrap();
    let mut h = request("/big", "*", "*");
    h.caller_id = "/stalled".into();
    write_header(&mut stalled, &h.header()).unwrap();
    assert!(read_header(&mut stalled, &Limits::default()).unwrap().get("error").is_none());
    let mut healthy = connect(&addr(&server), &request("/big", "*", "*"), &Limits::default(), T).unwrap();
    assert!(tp.wait_for_subscribers(2, T));
    let msg = |i: usize| {
        let mut v = vec![i as u8; SIZE];
        v[..8].copy_from_slice(&(i as u64).to_le_bytes());
        Bytes::from(v)
    };
    for i in 0..N {
        let t = Instant::now();
        tp.publish(msg(i));
        assert!(t.elapsed() < Duration::from_secs(5), "publish blocked");
        assert_eq!(healthy.next_message().unwrap().unwrap(), msg(i));
    }
    let subs = tp.subscribers();
    let stalled_info = subs.iter().find(|s| s.caller_id == "/stalled").unwrap();
    let healthy_info = subs.iter().find(|s| s.caller_id == "/rbag_sub").unwrap();
    assert_eq!(healthy_info.dropped, 0);
    assert!(stalled_info.dropped > 0, "{N} MiB should overflow the socket buffers and a queue of 4");
    assert_eq!(tp.dropped(), stalled_info.dropped);
    // Read what the stalled one got: increasing ids ending with the newest, the rest dropped.
    stalled.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let mut ids = Vec::new();
    let limits = Limits::default();
    while ids.last() != Some(&(N as u64 - 1)) {
        let m = rbag_ros1::tcpros::read_frame(&mut stalled, &limits).unwrap().unwrap();
        assert_eq!(m.len(), SIZE);
        ids.push(u64::from_le_bytes(m[..8].try_into().unwrap()));
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert_eq!(ids.len() as u64 + stalled_info.dropped, N as u64, "{ids:?}");
}

/// Kills the process when the test ends, passed or not.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn plain_python(test: &str) -> Option<&'static str> {
    for p in ["/usr/bin/python3", "python3"] {
        if Command::new(p).arg("-c").arg("import json, socket, struct").output().is_ok_and(|o| o.status.success()) {
            return Some(p);
        }
    }
    rbag_testkit::skip(test, "no python3 to run the raw TCPROS subscriber");
    None
}

fn raw_python_sub(python: &str, port: u16, topic: &str, count: usize, md5: &str) -> Proc {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/tcpros_raw_sub.py");
    let child = Command::new(python)
        .args([script, "127.0.0.1", &port.to_string(), topic, &count.to_string(), md5, "nodelay"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    Proc(child)
}

/// What the raw subscriber printed: the reply header and the messages' hex.
struct RawOutput {
    header: Vec<(String, String)>,
    messages: Vec<String>,
}

impl RawOutput {
    fn get(&self, k: &str) -> Option<&str> {
        self.header.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str())
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

fn raw_output(mut p: Proc) -> RawOutput {
    let mut out = String::new();
    let mut err = String::new();
    let _ = p.0.stdout.take().unwrap().read_to_string(&mut out);
    let _ = p.0.stderr.take().unwrap().read_to_string(&mut err);
    assert!(p.0.wait().unwrap().success(), "raw subscriber failed: {err}");
    let mut r = RawOutput { header: Vec::new(), messages: Vec::new() };
    for line in out.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        match parts[..] {
            ["H", k, v] => r.header.push((k.to_string(), String::from_utf8(unhex(v)).unwrap())),
            ["H", k] => r.header.push((k.to_string(), String::new())),
            ["M", m] => r.messages.push(m.to_string()),
            ["M"] => r.messages.push(String::new()),
            _ => panic!("raw subscriber printed {line:?}"),
        }
    }
    r
}

#[test]
fn python_raw_subscriber_receives_latched_then_published() {
    let Some(python) = plain_python("python_raw_subscriber_receives_latched_then_published") else { return };
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let tp = server.advertise(publication("/py", true, 100)).unwrap();
    tp.publish(string_msg("latched"));
    let p = raw_python_sub(python, server.port(), "/py", 4, "*");
    assert!(tp.wait_for_subscribers(1, Duration::from_secs(20)));
    assert_eq!(tp.subscribers()[0].caller_id, "/raw_py_sub");
    for s in ["a", "bb", "ccc"] {
        tp.publish(string_msg(s));
    }
    let v = raw_output(p);
    assert_eq!(v.get("type"), Some("std_msgs/String"));
    assert_eq!(v.get("md5sum"), Some(STRING_MD5));
    assert_eq!(v.get("latching"), Some("1"));
    assert_eq!(v.get("callerid"), Some("/rbag_pub"));
    assert_eq!(v.get("message_definition"), Some("string data\n"));
    let want: Vec<String> = ["latched", "a", "bb", "ccc"].iter().map(|s| hex(&string_msg(s))).collect();
    assert_eq!(v.messages, want);
}

#[test]
fn python_raw_subscriber_with_wrong_md5_is_refused() {
    let Some(python) = plain_python("python_raw_subscriber_with_wrong_md5_is_refused") else { return };
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let _tp = server.advertise(publication("/py", false, 10)).unwrap();
    let v = raw_output(raw_python_sub(python, server.port(), "/py", 1, "ffffffffffffffffffffffffffffffff"));
    let e = v.get("error").unwrap();
    assert!(e.starts_with("Client [/raw_py_sub] wants topic /py to have datatype/md5sum [*/ffff"), "{e}");
}

// ---- Fake publishers that misbehave ----

/// A one-connection "publisher": reads the subscriber's header, then does `act`.
fn fake_publisher(act: impl FnOnce(TcpStream) + Send + 'static) -> (String, JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = l.local_addr().unwrap().to_string();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let _ = read_header(&mut s, &Limits::default());
        act(s)
    });
    (a, h)
}

fn good_reply() -> Header {
    Header::from_pairs([
        ("callerid", "/fake"),
        ("latching", "0"),
        ("md5sum", STRING_MD5),
        ("message_definition", "string data\n"),
        ("topic", "/bad"),
        ("type", "std_msgs/String"),
    ])
}

/// The error of connecting to a fake publisher; it must name the topic and the peer.
fn connect_error(act: impl FnOnce(TcpStream) + Send + 'static) -> TcprosError {
    let (a, h) = fake_publisher(act);
    let e = match connect(&a, &request("/bad", "*", "*"), &Limits::default(), Duration::from_secs(2)) {
        Err(e) => e,
        Ok(l) => panic!("connected: {:?}", l.header()),
    };
    let s = e.to_string();
    assert!(s.contains("/bad") && s.contains(&a), "{s}");
    let _ = h.join();
    e
}

/// The error of the first message from a fake publisher that sent a good header.
fn message_error(act: impl FnOnce(TcpStream) + Send + 'static) -> TcprosError {
    let (a, h) = fake_publisher(move |mut s| {
        write_header(&mut s, &good_reply()).unwrap();
        act(s)
    });
    let mut link = connect(&a, &request("/bad", "*", "*"), &Limits::default(), Duration::from_secs(2)).unwrap();
    let e = loop {
        match link.next_message() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("clean end instead of an error"),
            Err(e) => break e,
        }
    };
    let s = e.to_string();
    assert!(s.contains("/bad") && s.contains(&a), "{s}");
    let _ = h.join();
    e
}

#[test]
fn bad_publisher_garbage_header() {
    // An HTTP server where a publisher should be: "HTTP" read as a length is 1.3 GB.
    let e = connect_error(|mut s| {
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    });
    assert!(matches!(e, TcprosError::Wire { source: WireError::TooLong { what: "connection header", .. }, .. }), "{e}");
    // A plausible length over bytes that are not fields.
    let e = connect_error(|mut s| {
        let _ = s.write_all(&[9, 0, 0, 0, 5, 0, 0, 0, b'a', b'b', b'c', b'd', b'e']);
    });
    assert!(matches!(e, TcprosError::Wire { source: WireError::Malformed { .. }, .. }), "{e}");
    assert!(e.to_string().contains("has no '='"), "{e}");
}

#[test]
fn bad_publisher_huge_header_length() {
    let e = connect_error(|mut s| {
        let _ = s.write_all(&u32::MAX.to_le_bytes());
    });
    assert!(e.to_string().contains("connection header length 4294967295 is over the limit of 16777216 bytes"), "{e}");
}

#[test]
fn bad_publisher_dies_in_the_header() {
    let e = connect_error(|mut s| {
        let _ = s.write_all(&[50, 0, 0, 0, 1, 2, 3]);
    });
    assert!(e.to_string().contains("connection closed inside the connection header: 47 of 50 bytes missing"), "{e}");
    let e = connect_error(|_| {});
    assert!(
        e.to_string().contains("connection closed inside the connection header length: 4 of 4 bytes missing"),
        "{e}"
    );
}

#[test]
fn bad_publisher_never_replies() {
    let (a, h) = fake_publisher(|s| {
        std::thread::sleep(Duration::from_secs(6));
        drop(s)
    });
    let t = Instant::now();
    let e = match connect(&a, &request("/bad", "*", "*"), &Limits::default(), Duration::from_millis(300)) {
        Err(e) => e,
        Ok(_) => panic!("connected"),
    };
    assert!(t.elapsed() < Duration::from_secs(5), "the timeout was not applied");
    assert!(
        matches!(e, TcprosError::Wire { source: WireError::TimedOut { what: "connection header length" }, .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains("nothing arrived within the read timeout while reading the connection header length"),
        "{e}"
    );
    let _ = h.join();
}

#[test]
fn bad_publisher_refuses_or_lies_about_md5() {
    let e = connect_error(|mut s| {
        let _ = write_header(&mut s, &Header::from_pairs([("error", "go away")]));
    });
    assert!(matches!(&e, TcprosError::Refused { msg, .. } if msg == "go away"), "{e}");
    let (a, h) = fake_publisher(|mut s| {
        let _ = write_header(&mut s, &good_reply());
    });
    match connect(&a, &request("/bad", "0123456789abcdef0123456789abcdef", "std_msgs/String"), &Limits::default(), T) {
        Err(e @ TcprosError::BadReply { .. }) => assert!(e.to_string().contains(STRING_MD5), "{e}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let _ = h.join();
}

#[test]
fn bad_publisher_huge_frame_length() {
    let e = message_error(|mut s| {
        let _ = s.write_all(&0xFFFF_FFF0u32.to_le_bytes());
        let _ = s.write_all(b"xyz");
    });
    assert!(e.to_string().contains("message length 4294967280 is over the limit of 1073741824 bytes"), "{e}");
}

#[test]
fn bad_publisher_dies_mid_frame() {
    let e = message_error(|mut s| {
        write_frame(&mut s, b"whole").unwrap();
        let _ = s.write_all(&100u32.to_le_bytes());
        let _ = s.write_all(&[0u8; 10]);
    });
    let s = e.to_string();
    assert!(s.contains("connection closed inside the message: 90 of 100 bytes missing"), "{s}");
}

#[test]
fn publisher_closing_between_frames_is_a_clean_end() {
    let (a, h) = fake_publisher(|mut s| {
        write_header(&mut s, &good_reply()).unwrap();
        write_frame(&mut s, b"one").unwrap();
    });
    let mut link = connect(&a, &request("/bad", "*", "*"), &Limits::default(), T).unwrap();
    assert_eq!(link.next_message().unwrap().unwrap().as_ref(), b"one");
    assert!(link.next_message().unwrap().is_none());
    let _ = h.join();
}

/// Loopback throughput of one publisher to one subscriber (`--ignored --nocapture` to see it).
#[test]
#[ignore = "a measurement, not a check"]
fn throughput_report() {
    for (size, count) in [(1usize << 20, 2000usize), (1 << 10, 200_000), (64, 500_000)] {
        let server = TcprosServer::bind("127.0.0.1").unwrap();
        let tp = server.advertise(publication("/tp", false, count)).unwrap();
        let mut link = connect(&addr(&server), &request("/tp", "*", "*"), &Limits::default(), T).unwrap();
        assert!(tp.wait_for_subscribers(1, T));
        let msg = Bytes::from(vec![7u8; size]);
        let reader = std::thread::spawn(move || {
            let mut n = 0;
            while n < count {
                link.next_message().unwrap().unwrap();
                n += 1;
            }
        });
        let start = Instant::now();
        for _ in 0..count {
            tp.publish(msg.clone());
        }
        reader.join().unwrap();
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{size} B x {count}: {:.0} msg/s, {:.0} MB/s, dropped {}",
            count as f64 / secs,
            (size * count) as f64 / secs / 1e6,
            tp.dropped()
        );
    }
}

/// A player waits for `queued() == 0` and then shuts down: every message must already be in
/// the socket by then, including what a writer has taken but not flushed.
#[test]
fn queued_counts_until_the_writer_has_flushed() {
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    let tp = server.advertise(publication("/drain", false, 100_000)).unwrap();
    let mut link = connect(&addr(&server), &request("/drain", "*", "*"), &Limits::default(), T).unwrap();
    assert!(tp.wait_for_subscribers(1, T));
    const N: usize = 20_000;
    for i in 0..N {
        tp.publish(string_msg(&format!("m{i}")));
    }
    let start = Instant::now();
    while tp.queued() > 0 {
        assert!(start.elapsed() < Duration::from_secs(30), "the queue never drained");
        std::thread::sleep(Duration::from_millis(1));
    }
    server.shutdown();
    for i in 0..N {
        let m =
            link.next_message().unwrap().unwrap_or_else(|| panic!("only {i} of {N} messages arrived before the close"));
        assert_eq!(m, string_msg(&format!("m{i}")));
    }
}

/// A service client's exchange, raw: header, then one request frame; returns the reply header
/// and (ok byte, response) when the server sent one.
fn service_exchange(
    port: u16,
    header: &[(&str, &str)],
    request: Option<&[u8]>,
) -> (rbag_ros1::tcpros::Header, Option<(u8, Vec<u8>)>) {
    use rbag_ros1::tcpros::{read_header, write_frame, write_header, Header, Limits};
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    write_header(&mut s, &Header::from_pairs(header.iter().map(|(k, v)| (k.to_string(), v.to_string())))).unwrap();
    let reply = read_header(&mut s, &Limits::default()).unwrap();
    let Some(req) = request else { return (reply, None) };
    write_frame(&mut s, req).unwrap();
    let mut ok = [0u8; 1];
    if s.read_exact(&mut ok).is_err() {
        return (reply, None);
    }
    let body = rbag_ros1::tcpros::read_frame(&mut s, &Limits::default()).unwrap().unwrap_or_default();
    (reply, Some((ok[0], body.to_vec())))
}

#[test]
fn services_answer_probes_requests_and_refuse_wrong_md5_sums() {
    use rbag_ros1::tcpros::ServiceDef;
    let server = TcprosServer::bind("127.0.0.1").unwrap();
    server.advertise_service(ServiceDef {
        name: "/echo".into(),
        srv_type: "pkg/Echo".into(),
        md5sum: "0123456789abcdef0123456789abcdef".into(),
        caller_id: "/server".into(),
        handler: std::sync::Arc::new(|req: &[u8]| {
            if req.is_empty() {
                Err("empty request".into())
            } else {
                Ok(req.iter().rev().copied().collect())
            }
        }),
    });
    let port = server.port();
    let md5 = "0123456789abcdef0123456789abcdef";
    // A probe (rosservice info) gets the header only.
    let (h, _) =
        service_exchange(port, &[("service", "/echo"), ("md5sum", "*"), ("callerid", "/c"), ("probe", "1")], None);
    assert_eq!(
        (h.get("type"), h.get("md5sum"), h.get("request_type")),
        (Some("pkg/Echo"), Some(md5), Some("pkg/EchoRequest"))
    );
    // A request gets ok = 1 and the handler's answer; an error gets ok = 0 and its text.
    let (_, answer) =
        service_exchange(port, &[("service", "/echo"), ("md5sum", md5), ("callerid", "/c")], Some(b"abc"));
    assert_eq!(answer, Some((1, b"cba".to_vec())));
    let (_, answer) = service_exchange(port, &[("service", "/echo"), ("md5sum", md5), ("callerid", "/c")], Some(b""));
    assert_eq!(answer, Some((0, b"empty request".to_vec())));
    // A wrong md5 sum or an unknown service gets an error header and no answer.
    let (h, _) = service_exchange(
        port,
        &[("service", "/echo"), ("md5sum", "ffffffffffffffffffffffffffffffff"), ("callerid", "/c")],
        None,
    );
    assert!(h.get("error").is_some_and(|e| e.contains("md5sums do not match")), "{h:?}");
    let (h, _) = service_exchange(port, &[("service", "/nope"), ("md5sum", "*"), ("callerid", "/c")], None);
    assert!(h.get("error").is_some_and(|e| e.contains("nonexistent service [/nope]")), "{h:?}");
    // A lying request length costs that client its connection, not the service.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    rbag_ros1::tcpros::write_header(
        &mut s,
        &rbag_ros1::tcpros::Header::from_pairs([("service", "/echo"), ("md5sum", md5), ("callerid", "/c")]),
    )
    .unwrap();
    let _ = rbag_ros1::tcpros::read_header(&mut s, &rbag_ros1::tcpros::Limits::default()).unwrap();
    s.write_all(&u32::MAX.to_le_bytes()).unwrap();
    let mut rest = Vec::new();
    assert_eq!(s.read_to_end(&mut rest).map(|_| rest.len()).unwrap_or(0), 0, "no answer to a 4 GiB request");
    let (_, answer) = service_exchange(port, &[("service", "/echo"), ("md5sum", md5), ("callerid", "/c")], Some(b"xy"));
    assert_eq!(answer, Some((1, b"yx".to_vec())));
}
