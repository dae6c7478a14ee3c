//! The DDS wrapper against a real Cyclone DDS peer (Cyclone's Python binding 11.0.1, run as
//! `crates/rbag-testkit/peers/cyclone_peer.py`): raw samples both ways, byte for byte, discovery
//! with QoS, transient-local late joiners both ways, and big samples.
//!
//! Every test has its own DDS domain (rbag_testkit::ros2::Domain) and Cyclone stays on the
//! loopback interface (CYCLONEDDS_URI, set by the testkit).
#![cfg(feature = "dds")]

use std::sync::mpsc;
use std::time::{Duration, Instant};

use rbag_ros2::dds::{EndpointEvent, EndpointKind, Endpoints, Participant, RawReader, RawWriter, Sample};
use rbag_storage::rosbag2::qos::{policy, QosProfile};
use rbag_testkit::ros2::{available, cdr, same_payload, CyclonePeer, Domain};

const TOPIC: &str = "rt/chatter";
const STRING: &str = "std_msgs::msg::dds_::String_";
const BLOB_TOPIC: &str = "rt/blob";
const BLOB: &str = "sensor_msgs::msg::dds_::CompressedImage_";
const MIB4: usize = 4 << 20;

fn qos(reliability: i64, durability: i64, history: i64, depth: u64) -> QosProfile {
    QosProfile { history, depth, reliability, durability, ..QosProfile::default() }
}

fn reliable_keep_all() -> QosProfile {
    qos(policy::RELIABLE, policy::VOLATILE, policy::KEEP_ALL, 0)
}

/// A raw reader whose samples arrive on a channel.
fn reader(p: &Participant, topic: &str, type_name: &str, q: &QosProfile) -> (RawReader, mpsc::Receiver<Sample>) {
    let (tx, rx) = mpsc::channel();
    let r = RawReader::new(p, topic, type_name, q, Box::new(move |s| drop(tx.send(s)))).expect("raw reader");
    (r, rx)
}

/// Up to `n` samples, waiting at most `timeout` in all.
fn collect(rx: &mpsc::Receiver<Sample>, n: usize, timeout: Duration) -> Vec<Sample> {
    let end = Instant::now() + timeout;
    let mut got = Vec::new();
    while got.len() < n {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(s) => got.push(s),
            Err(_) => break,
        }
    }
    got
}

fn wait_until(timeout: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    loop {
        if ok() {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn now_ns() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64
}

fn hex_head(b: &[u8]) -> String {
    b.iter().take(48).map(|x| format!("{x:02x}")).collect::<String>() + if b.len() > 48 { "…" } else { "" }
}

/// Our samples equal what the peer serialized, in order, up to Cyclone's wire padding.
fn assert_same_samples(got: &[Sample], published: &[(usize, Vec<u8>)], peer: &CyclonePeer) {
    assert_eq!(got.len(), published.len(), "received {} of {} samples\n{}", got.len(), published.len(), peer.output());
    for (k, (s, (i, want))) in got.iter().zip(published).enumerate() {
        assert_eq!(*i, k, "the peer's PUBLISHED lines are out of order");
        assert!(
            same_payload(&s.data, want),
            "sample {k}: got {} bytes {}, the peer serialized {} bytes {}",
            s.data.len(),
            hex_head(&s.data),
            want.len(),
            hex_head(want)
        );
    }
}

/// Waits until a peer reader and our writer see each other, so nothing written is lost to
/// discovery still in progress.
fn wait_matched(w: &RawWriter, peer: &CyclonePeer) {
    assert!(
        wait_until(Duration::from_secs(20), || w.matched() > 0),
        "our writer matched no Cyclone reader\n{}",
        peer.output()
    );
    peer.expect_line("MATCHED", Duration::from_secs(20));
}

#[test]
fn raw_reader_receives_cyclone_strings_in_order() {
    let Some(py) = available("raw_reader_receives_cyclone_strings_in_order") else { return };
    let domain = Domain::new();
    let p = Participant::new(domain.id()).expect("participant");
    let (_r, rx) = reader(&p, TOPIC, STRING, &reliable_keep_all());
    let peer =
        CyclonePeer::spawn(&py, &domain, "pub", &["--topic", TOPIC, "--type", "string", "--count", "50", "--reliable"]);
    let got = collect(&rx, 50, Duration::from_secs(25));
    peer.expect_line("DONE", Duration::from_secs(10));
    let published = peer.published();
    assert_same_samples(&got, &published, &peer);
    // Spelled out for the first one: 4-byte CDR LE header, length 8, "hello 0\0".
    assert_eq!(got[0].data, cdr::string_msg("hello 0"));
    assert!(got.iter().all(|s| s.source_timestamp > 0));
    assert!(collect(&rx, 1, Duration::from_millis(300)).is_empty(), "more samples than the peer published");
}

#[test]
fn raw_writer_strings_reach_a_cyclone_reader() {
    let Some(py) = available("raw_writer_strings_reach_a_cyclone_reader") else { return };
    let domain = Domain::new();
    let p = Participant::new(domain.id()).expect("participant");
    let peer = CyclonePeer::spawn(
        &py,
        &domain,
        "sub",
        &["--topic", TOPIC, "--type", "string", "--count", "50", "--timeout", "25", "--reliable"],
    );
    peer.expect_line("READY", Duration::from_secs(20));
    let w = RawWriter::new(&p, TOPIC, STRING, &reliable_keep_all(), None).expect("raw writer");
    wait_matched(&w, &peer);
    let sent: Vec<Vec<u8>> = (0..50).map(|i| cdr::string_msg(&format!("hello {i}"))).collect();
    for s in &sent {
        w.write(s, now_ns()).expect("write");
    }
    w.wait_for_acks(Duration::from_secs(10)).expect("the Cyclone reader acknowledged everything");
    peer.expect_line("DONE", Duration::from_secs(20));
    let values: Vec<String> =
        peer.received().iter().map(|v| v["data"].as_str().expect("a string field").to_string()).collect();
    let want: Vec<String> = (0..50).map(|i| format!("hello {i}")).collect();
    assert_eq!(values, want, "\n{}", peer.output());
    let hex = peer.received_hex();
    assert!(
        hex.iter().zip(&sent).all(|(a, b)| same_payload(a, b)),
        "the peer re-serialized different bytes\n{}",
        peer.output()
    );
}

#[test]
fn endpoints_see_a_cyclone_writer_with_its_qos_and_its_departure() {
    let Some(py) = available("endpoints_see_a_cyclone_writer_with_its_qos_and_its_departure") else { return };
    let domain = Domain::new();
    let p = Participant::new(domain.id()).expect("participant");
    let mut endpoints = Endpoints::new(&p).expect("endpoints");
    let mut peer = CyclonePeer::spawn(
        &py,
        &domain,
        "pub",
        &[
            "--topic",
            TOPIC,
            "--type",
            "string",
            "--count",
            "1",
            "--reliable",
            "--transient-local",
            "--depth",
            "7",
            "--no-wait",
            "--linger",
            "2",
        ],
    );
    let mut writer = None;
    assert!(
        wait_until(Duration::from_secs(20), || {
            for e in endpoints.poll() {
                if let EndpointEvent::Appeared(e) = e {
                    if e.kind == EndpointKind::Writer && e.topic == TOPIC && !e.local {
                        writer = Some(e);
                    }
                }
            }
            writer.is_some()
        }),
        "no Cyclone writer on {TOPIC} appeared\n{}",
        peer.output()
    );
    let w = writer.unwrap();
    assert_eq!(w.type_name, STRING);
    assert_eq!(
        (w.qos.reliability, w.qos.durability, w.qos.history, w.qos.depth),
        (policy::RELIABLE, policy::TRANSIENT_LOCAL, policy::KEEP_LAST, 7),
        "{:?}",
        w.qos
    );
    assert_ne!(w.participant, p.guid().participant());
    assert_eq!(w.type_hash, None, "the Python peer sends no rmw user data");

    let status =
        peer.wait_exit(Duration::from_secs(20)).unwrap_or_else(|| panic!("the peer did not exit\n{}", peer.output()));
    assert!(status.success(), "peer failed\n{}", peer.output());
    let mut gone = false;
    assert!(
        wait_until(Duration::from_secs(15), || {
            gone |= endpoints.poll().iter().any(|e| matches!(e, EndpointEvent::Gone(g) if g.guid == w.guid));
            gone
        }),
        "the writer was not reported gone after its peer exited"
    );
    assert!(endpoints.all().all(|e| e.guid != w.guid));
}

#[test]
fn transient_local_cyclone_writer_serves_a_late_raw_reader() {
    let Some(py) = available("transient_local_cyclone_writer_serves_a_late_raw_reader") else { return };
    let domain = Domain::new();
    let peer = CyclonePeer::spawn(
        &py,
        &domain,
        "pub",
        &[
            "--topic",
            TOPIC,
            "--type",
            "string",
            "--count",
            "5",
            "--reliable",
            "--transient-local",
            "--depth",
            "5",
            "--no-wait",
            "--linger",
            "30",
        ],
    );
    peer.expect_line("DONE", Duration::from_secs(20));
    // Only now does this side join the domain at all.
    let p = Participant::new(domain.id()).expect("participant");
    let (_r, rx) = reader(&p, TOPIC, STRING, &qos(policy::RELIABLE, policy::TRANSIENT_LOCAL, policy::KEEP_LAST, 10));
    let got = collect(&rx, 5, Duration::from_secs(20));
    assert_same_samples(&got, &peer.published(), &peer);
    assert!(collect(&rx, 1, Duration::from_millis(300)).is_empty(), "more samples than the peer published");
}

#[test]
fn four_mib_sample_from_cyclone_arrives_intact() {
    let Some(py) = available("four_mib_sample_from_cyclone_arrives_intact") else { return };
    let domain = Domain::new();
    let p = Participant::new(domain.id()).expect("participant");
    let (_r, rx) = reader(&p, BLOB_TOPIC, BLOB, &reliable_keep_all());
    let size = MIB4.to_string();
    let peer = CyclonePeer::spawn(
        &py,
        &domain,
        "pub",
        &["--topic", BLOB_TOPIC, "--type", "blob", "--count", "2", "--size", &size, "--reliable"],
    );
    let got = collect(&rx, 2, Duration::from_secs(25));
    peer.expect_line("DONE", Duration::from_secs(20));
    assert_same_samples(&got, &peer.published(), &peer);
    for (i, s) in got.iter().enumerate() {
        assert!(same_payload(&s.data, &cdr::blob_msg(i as u32, MIB4)), "sample {i} is not the blob the peer builds");
    }
}

#[test]
fn four_mib_sample_reaches_a_cyclone_reader_intact() {
    let Some(py) = available("four_mib_sample_reaches_a_cyclone_reader_intact") else { return };
    let domain = Domain::new();
    let p = Participant::new(domain.id()).expect("participant");
    let peer = CyclonePeer::spawn(
        &py,
        &domain,
        "sub",
        &["--topic", BLOB_TOPIC, "--type", "blob", "--count", "2", "--timeout", "25", "--reliable"],
    );
    peer.expect_line("READY", Duration::from_secs(20));
    let w = RawWriter::new(&p, BLOB_TOPIC, BLOB, &reliable_keep_all(), None).expect("raw writer");
    wait_matched(&w, &peer);
    let sent: Vec<Vec<u8>> = (0..2).map(|i| cdr::blob_msg(i, MIB4)).collect();
    // One at a time: a second 4 MiB write behind an unacknowledged one would block, which the
    // wrapper cuts short (see raw_writer_waits_for_a_slow_reliable_reader).
    for s in &sent {
        w.write(s, now_ns()).expect("write");
        w.wait_for_acks(Duration::from_secs(20)).expect("the Cyclone reader acknowledged the sample");
    }
    peer.expect_line("DONE", Duration::from_secs(25));
    let received = peer.received();
    assert_eq!(received.len(), 2, "\n{}", peer.output());
    for (i, v) in received.iter().enumerate() {
        assert_eq!(v["data_len"], MIB4, "sample {i}: {v}");
        assert_eq!(v["header"]["stamp"]["sec"], i, "sample {i}: {v}");
    }
    let hex = peer.received_hex();
    assert_eq!(hex.len(), 2);
    for (i, (a, b)) in hex.iter().zip(&sent).enumerate() {
        assert!(
            same_payload(a, b),
            "sample {i}: the peer re-serialized {} bytes {}, we sent {} bytes {}",
            a.len(),
            hex_head(a),
            b.len(),
            hex_head(b)
        );
    }
}

#[test]
fn transient_local_raw_writer_serves_a_late_cyclone_reader() {
    let Some(py) = available("transient_local_raw_writer_serves_a_late_cyclone_reader") else { return };
    let domain = Domain::new();
    let p = Participant::new(domain.id()).expect("participant");
    let w =
        RawWriter::new(&p, TOPIC, STRING, &qos(policy::RELIABLE, policy::TRANSIENT_LOCAL, policy::KEEP_LAST, 5), None)
            .expect("raw writer");
    // Seven before anyone listens: a depth of 5 keeps the last five.
    for i in 0..7 {
        w.write(&cdr::string_msg(&format!("hello {i}")), now_ns()).expect("write");
    }
    assert_eq!(w.matched(), 0);
    let peer = CyclonePeer::spawn(
        &py,
        &domain,
        "sub",
        &[
            "--topic",
            TOPIC,
            "--type",
            "string",
            "--count",
            "5",
            "--timeout",
            "20",
            "--reliable",
            "--transient-local",
            "--depth",
            "10",
        ],
    );
    peer.expect_line("DONE", Duration::from_secs(25));
    let values: Vec<String> =
        peer.received().iter().map(|v| v["data"].as_str().expect("a string field").to_string()).collect();
    let want: Vec<String> = (2..7).map(|i| format!("hello {i}")).collect();
    assert_eq!(values, want, "\n{}", peer.output());
    drop(w);
}

/// rmw_cyclonedds gives reliable writers an infinite max_blocking_time: a publisher ahead of a
/// slow reliable reader waits (ros2 bag play slows down), it does not lose samples.
/// `write_waiting` waits in slices of the writer's blocking time.
#[test]
fn raw_writer_waits_for_a_slow_reliable_reader() {
    let Some(py) = available("raw_writer_waits_for_a_slow_reliable_reader") else { return };
    let domain = Domain::new();
    let p = Participant::new(domain.id()).expect("participant");
    // Holds one sample and takes one every 0.3 s: each 1 MiB sample (over Cyclone's 500 kB
    // unacknowledged-data watermark) must wait for the previous one.
    let peer = CyclonePeer::spawn(
        &py,
        &domain,
        "sub",
        &[
            "--topic",
            BLOB_TOPIC,
            "--type",
            "blob",
            "--count",
            "4",
            "--timeout",
            "25",
            "--reliable",
            "--no-hex",
            "--max-samples",
            "1",
            "--take-delay",
            "0.3",
        ],
    );
    peer.expect_line("READY", Duration::from_secs(20));
    let w = RawWriter::new(&p, BLOB_TOPIC, BLOB, &reliable_keep_all(), None).expect("raw writer");
    wait_matched(&w, &peer);
    for i in 0..4 {
        if let Err(e) = w.write_waiting(&cdr::blob_msg(i, 1 << 20), now_ns(), &|| false) {
            panic!("write {i} of 4 to a slow reliable reader failed instead of waiting: {e}");
        }
    }
    peer.expect_line("DONE", Duration::from_secs(20));
    assert_eq!(peer.received().len(), 4, "\n{}", peer.output());
}
