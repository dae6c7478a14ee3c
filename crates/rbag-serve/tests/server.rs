//! The server through its library API, with a plain blocking WebSocket client (tungstenite):
//! several bags as one timeline, channels shared between bags, options refused at start, and a
//! client sending too large a message. The Node (npm `@foxglove/ws-protocol`) tests are in
//! crates/rbag/tests/serve.rs.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use rbag_bag::{Bag, Connection, Format, WriteOptions, Writer};
use rbag_serve::{Error, ServeOptions, Server};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message, WebSocket};

type Client = WebSocket<TcpStream>;

/// An MCAP bag with `topics`, each message's payload naming its topic and time.
fn bag(path: &Path, topics: &[&str], times: impl Iterator<Item = u64> + Clone) -> Bag {
    let mut w = Writer::create(path, Format::Mcap, &WriteOptions::default()).unwrap();
    let ids: Vec<u32> = topics
        .iter()
        .map(|t| {
            w.add_connection(&Connection {
                topic: (*t).into(),
                message_type: "std_msgs/msg/String".into(),
                encoding: "cdr".into(),
                definition: "string data".into(),
                definition_encoding: "ros2msg".into(),
                ..Connection::default()
            })
            .unwrap()
        })
        .collect();
    for t in times {
        for (id, topic) in ids.iter().zip(topics) {
            w.write(*id, t, t, format!("{topic}@{t}").as_bytes()).unwrap();
        }
    }
    w.finish().unwrap();
    Bag::open(path).unwrap()
}

fn options() -> ServeOptions {
    ServeOptions { bind: SocketAddr::from(([127, 0, 0, 1], 0)), rate: 1e6, ..ServeOptions::default() }
}

fn connect(addr: SocketAddr, protocol: &str) -> Client {
    let mut request = format!("ws://{addr}").into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", protocol.parse().unwrap());
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let (ws, response) = tungstenite::client(request, stream).unwrap();
    assert_eq!(response.headers()["sec-websocket-protocol"], protocol);
    ws
}

/// The next JSON message with `op`, skipping binary ones.
fn next_json(ws: &mut Client, op: &str) -> Value {
    loop {
        if let Message::Text(t) = ws.read().unwrap() {
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["op"] == op {
                return v;
            }
        }
    }
}

#[test]
fn several_bags_play_as_one_timeline_with_shared_channels() {
    let dir = tempfile::tempdir().unwrap();
    let a = bag(&dir.path().join("a.mcap"), &["/a", "/common"], (0..50).map(|i| 1_000 + i * 20));
    let b = bag(&dir.path().join("b.mcap"), &["/b", "/common"], (0..50).map(|i| 1_010 + i * 20));
    let server = Server::start(vec![a, b], options()).unwrap();
    assert_eq!(server.shared().channels().len(), 3, "/common is one channel over both bags");
    assert_eq!(server.shared().time_range(), Some((1_000, 1_990)));

    let mut ws = connect(server.local_addr(), "foxglove.websocket.v1");
    let info = next_json(&mut ws, "serverInfo");
    assert_eq!(info["dataStartTime"], json!({"sec": 0, "nsec": 1000}));
    let channels = next_json(&mut ws, "advertise")["channels"].as_array().unwrap().clone();
    let topic_of: std::collections::HashMap<u64, String> = channels
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let sub = i as u64 + 10;
            (sub, c["topic"].as_str().unwrap().to_string())
        })
        .collect();
    let subs: Vec<Value> =
        channels.iter().enumerate().map(|(i, c)| json!({"id": i as u64 + 10, "channelId": c["id"]})).collect();
    ws.send(Message::text(json!({"op": "subscribe", "subscriptions": subs}).to_string())).unwrap();

    let mut got = Vec::new();
    loop {
        match ws.read().unwrap() {
            Message::Binary(b) if b[0] == 1 => {
                let sub = u32::from_le_bytes(b[1..5].try_into().unwrap()) as u64;
                let t = u64::from_le_bytes(b[5..13].try_into().unwrap());
                let payload = String::from_utf8(b[13..].to_vec()).unwrap();
                assert_eq!(payload, format!("{}@{t}", topic_of[&sub]), "payload as recorded, on its subscription");
                got.push(t);
            }
            Message::Text(t) if t.contains("playback ended") => break,
            _ => {}
        }
    }
    assert_eq!(got.len(), 200, "every message of both bags");
    assert!(got.windows(2).all(|w| w[0] <= w[1]), "merged in log-time order");
    assert_eq!(server.shared().playback().status, rbag_serve::PlaybackStatus::Ended);
    server.shutdown();
}

#[test]
fn a_too_large_client_message_closes_that_client_only() {
    let dir = tempfile::tempdir().unwrap();
    let a = bag(&dir.path().join("a.mcap"), &["/a"], (0..10).map(|i| 1_000 + i));
    let server = Server::start(vec![a], options()).unwrap();
    let mut big = connect(server.local_addr(), "foxglove.sdk.v1");
    next_json(&mut big, "advertise");
    let huge = format!("{{\"op\":\"subscribe\",\"subscriptions\":[],\"pad\":\"{}\"}}", "x".repeat(2 << 20));
    let _ = big.send(Message::text(huge));
    let mut closed = false;
    let mut error = None;
    for _ in 0..100 {
        match big.read() {
            Ok(Message::Text(t)) if t.contains("\"level\":2") => error = Some(t.to_string()),
            Ok(Message::Close(_)) | Err(_) => {
                closed = true;
                break;
            }
            _ => {}
        }
    }
    assert!(closed, "the connection is closed");
    if let Some(e) = error {
        assert!(e.contains("closing the connection"), "{e}");
    }
    // Another client is served as usual.
    let mut ok = connect(server.local_addr(), "foxglove.websocket.v1");
    let channel = next_json(&mut ok, "advertise")["channels"][0]["id"].clone();
    ok.send(Message::text(json!({"op": "subscribe", "subscriptions": [{"id": 1, "channelId": channel}]}).to_string()))
        .unwrap();
    let mut n = 0;
    loop {
        match ok.read().unwrap() {
            Message::Binary(b) if b[0] == 1 => n += 1,
            Message::Text(t) if t.contains("playback ended") => break,
            _ => {}
        }
    }
    assert_eq!(n, 10);
}

#[test]
fn bad_options_are_refused_at_start_naming_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.mcap");
    bag(&path, &["/a"], 1..3);
    assert!(matches!(Server::start(vec![], options()), Err(Error::NoBags)));
    let slow = ServeOptions { rate: 0.0, ..options() };
    assert!(matches!(Server::start(vec![Bag::open(&path).unwrap()], slow), Err(Error::Rate(_))));
    let first = Server::start(vec![Bag::open(&path).unwrap()], options()).unwrap();
    let taken = ServeOptions { bind: first.local_addr(), ..options() };
    let err = Server::start(vec![Bag::open(&path).unwrap()], taken).err().expect("the port is taken");
    assert!(err.to_string().contains(&first.local_addr().to_string()), "{err}");
}
