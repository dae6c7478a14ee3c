//! The byte-bounded queue between network threads and the bag writer.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rbag_storage::Connection;
use rbag_transport::{ConnKey, Popped, Push, Queued, RecordQueue};

fn conn(topic: &str) -> Connection {
    Connection {
        topic: topic.into(),
        message_type: "std_msgs/String".into(),
        encoding: "ros1".into(),
        ..Connection::default()
    }
}

fn payload(tag: u8, len: usize) -> Bytes {
    Bytes::from(vec![tag; len])
}

/// Drains the queue (closed first) into the tags of the messages left, in order.
fn drain(q: &RecordQueue) -> Vec<u8> {
    let mut tags = Vec::new();
    loop {
        match q.pop(Duration::ZERO) {
            Popped::Item(Queued::Message { data, .. }) => tags.push(data[0]),
            Popped::Item(Queued::Connection { .. }) => {}
            Popped::Timeout => panic!("a closed queue never times out"),
            Popped::Closed => return tags,
        }
    }
}

#[test]
fn full_queue_drops_the_oldest_and_counts_per_connection() {
    let q = RecordQueue::new(Some(100));
    let a = q.register(conn("/a"));
    let b = q.register(conn("/b"));
    assert_eq!((a, b), (ConnKey(0), ConnKey(1)));
    assert_eq!(q.push(a, 1, payload(1, 40)), Push::Queued { dropped_oldest: 0 });
    assert_eq!(q.push(b, 2, payload(2, 40)), Push::Queued { dropped_oldest: 0 });
    // 120 > 100: the oldest (tag 1, on /a) goes.
    assert_eq!(q.push(b, 3, payload(3, 40)), Push::Queued { dropped_oldest: 1 });
    assert_eq!(q.queued_bytes(), 80);
    // A big message pushes out both older ones.
    assert_eq!(q.push(a, 4, payload(4, 90)), Push::Queued { dropped_oldest: 2 });
    assert_eq!(q.drops(), BTreeMap::from([(a, 1), (b, 2)]));
    // take_drops hands each drop out once; drops() keeps the totals.
    assert_eq!(q.take_drops(), BTreeMap::from([(a, 1), (b, 2)]));
    assert!(q.take_drops().is_empty());
    // A message over the whole bound drops itself.
    assert_eq!(q.push(b, 5, payload(5, 200)), Push::Queued { dropped_oldest: 2 });
    assert_eq!(q.drops(), BTreeMap::from([(a, 2), (b, 3)]));
    assert_eq!(q.queued_bytes(), 0);
    q.close();
    assert!(drain(&q).is_empty());
}

#[test]
fn connection_announcements_are_never_dropped_and_come_first() {
    let q = RecordQueue::new(Some(10));
    let a = q.register(conn("/a"));
    for i in 0..5 {
        q.push(a, i, payload(i as u8, 10));
    }
    q.close();
    let Popped::Item(Queued::Connection { key, connection }) = q.pop(Duration::ZERO) else {
        panic!("connection first")
    };
    assert_eq!((key, connection.topic.as_str()), (a, "/a"));
    assert_eq!(drain(&q), [4]);
    assert_eq!(q.drops()[&a], 4);
}

#[test]
fn close_lets_the_consumer_drain_the_rest() {
    let q = RecordQueue::new(None);
    let a = q.register(conn("/a"));
    for i in 0..3 {
        q.push(a, i, payload(i as u8, 1 << 20));
    }
    q.close();
    assert!(q.is_closed());
    assert_eq!(q.push(a, 9, payload(9, 1)), Push::Closed);
    let mut times = Vec::new();
    loop {
        match q.pop(Duration::from_secs(5)) {
            Popped::Item(Queued::Message { receive_time_ns, .. }) => times.push(receive_time_ns),
            Popped::Item(_) => {}
            Popped::Timeout => panic!("closed"),
            Popped::Closed => break,
        }
    }
    assert_eq!(times, [0, 1, 2]);
    assert!(q.drops().is_empty(), "unbounded: nothing dropped");
    assert_eq!(q.pop(Duration::ZERO), Popped::Closed);
}

#[test]
fn an_empty_open_queue_times_out() {
    let q = RecordQueue::with_buffsize(0);
    assert_eq!(q.pop(Duration::ZERO), Popped::Timeout);
    assert_eq!(q.pop(Duration::from_millis(1)), Popped::Timeout);
}

#[test]
fn many_producers_one_consumer() {
    let q = Arc::new(RecordQueue::new(Some(1000)));
    let keys: Vec<ConnKey> = (0..4).map(|i| q.register(conn(&format!("/t{i}")))).collect();
    let producers: Vec<_> = keys
        .iter()
        .map(|&k| {
            let q = q.clone();
            std::thread::spawn(move || {
                for i in 0..500u64 {
                    q.push(k, i, payload(k.0 as u8, 10));
                }
            })
        })
        .collect();
    let consumer = {
        let q = q.clone();
        std::thread::spawn(move || {
            let mut got = BTreeMap::<u8, u64>::new();
            loop {
                match q.pop(Duration::from_millis(50)) {
                    Popped::Item(Queued::Message { data, .. }) => *got.entry(data[0]).or_default() += 1,
                    Popped::Item(_) | Popped::Timeout => {}
                    Popped::Closed => return got,
                }
            }
        })
    };
    for p in producers {
        p.join().unwrap();
    }
    q.close();
    let got = consumer.join().unwrap();
    let drops = q.drops();
    // Every message was either delivered or counted as dropped.
    for k in keys {
        assert_eq!(got.get(&(k.0 as u8)).copied().unwrap_or(0) + drops.get(&k).copied().unwrap_or(0), 500);
    }
}
