//! The TCPROS header and frame codec on hand-made bytes: round trips, and every way the bytes
//! can lie or stop short.

use std::io::Cursor;

use rbag_ros1::tcpros::{read_frame, read_header, write_frame, write_header, Header, Limits, WireError};

fn field(s: &[u8]) -> Vec<u8> {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s);
    v
}

fn header_bytes(fields: &[&[u8]]) -> Vec<u8> {
    let body: Vec<u8> = fields.iter().flat_map(|f| field(f)).collect();
    field(&body)
}

#[test]
fn header_round_trip() {
    let h = Header::from_pairs([
        ("callerid", "/talker"),
        ("latching", "1"),
        ("md5sum", "992ce8a1687cec8c8bd883ec73ca41d1"),
        ("message_definition", "string data\n"),
        ("topic", "/chatter"),
        ("type", "std_msgs/String"),
        ("empty", ""),
        ("eq", "a=b=c"),
    ]);
    let mut buf = Vec::new();
    write_header(&mut buf, &h).unwrap();
    assert_eq!(buf, h.encode().unwrap());
    let back = read_header(&mut Cursor::new(&buf), &Limits::default()).unwrap();
    assert_eq!(back, h);
    assert_eq!(back.get("eq"), Some("a=b=c"));
    assert_eq!(back.get("empty"), Some(""));
    assert_eq!(back.get("nope"), None);
}

#[test]
fn header_bytes_match_the_spike_capture() {
    // The start of rosbag record's header (docs/ros1-live-spike.md §3).
    let h = Header::from_pairs([("callerid", "/record_1795327783266680598"), ("md5sum", "*"), ("tcp_nodelay", "0")]);
    let b = h.encode().unwrap();
    assert_eq!(&b[4..8], &[0x24, 0, 0, 0]);
    assert_eq!(&b[8..44], b"callerid=/record_1795327783266680598");
    assert_eq!(&b[44..48], &[0x08, 0, 0, 0]);
    assert_eq!(&b[48..56], b"md5sum=*");
    assert_eq!(&b[56..60], &[0x0d, 0, 0, 0]);
}

#[test]
fn header_last_duplicate_wins_and_order_is_kept() {
    let b = header_bytes(&[b"b=1", b"a=2", b"b=3"]);
    let h = read_header(&mut Cursor::new(&b), &Limits::default()).unwrap();
    assert_eq!(h.get("b"), Some("3"));
    assert_eq!(h.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["b", "a", "b"]);
    let mut s = h.clone();
    s.sort();
    assert_eq!(s.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(), ["a=2", "b=1", "b=3"]);
}

#[test]
fn empty_header_parses() {
    let h = read_header(&mut Cursor::new(&[0u8, 0, 0, 0]), &Limits::default()).unwrap();
    assert!(h.is_empty());
}

#[test]
fn header_over_the_limit_is_refused_before_reading_it() {
    let limits = Limits { max_header: 100, max_message: 1000 };
    let mut b = 101u32.to_le_bytes().to_vec();
    b.extend(std::iter::repeat_n(b'x', 101));
    match read_header(&mut Cursor::new(&b), &limits) {
        Err(WireError::TooLong { what: "connection header", len: 101, limit: 100 }) => {}
        other => panic!("{other:?}"),
    }
    let huge = u32::MAX.to_le_bytes();
    let e = read_header(&mut Cursor::new(&huge), &Limits::default()).unwrap_err();
    assert!(e.to_string().contains("4294967295"), "{e}");
}

#[test]
fn truncated_headers_are_refused() {
    let full = header_bytes(&[b"topic=/chatter", b"md5sum=*"]);
    for cut in 0..full.len() {
        let e = read_header(&mut Cursor::new(&full[..cut]), &Limits::default()).unwrap_err();
        match e {
            WireError::Truncated { missing, .. } => assert!(missing > 0),
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    let e = read_header(&mut Cursor::new(&full[..10]), &Limits::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "connection closed inside the connection header: {} of {} bytes missing",
            full.len() - 10,
            full.len() - 4
        )
    );
}

#[test]
fn field_lengths_that_lie_are_refused() {
    // A field claiming more than the header holds.
    let mut body = 50u32.to_le_bytes().to_vec();
    body.extend_from_slice(b"topic=/x");
    let e = read_header(&mut Cursor::new(field(&body)), &Limits::default()).unwrap_err();
    assert!(matches!(e, WireError::Malformed { .. }), "{e:?}");
    assert!(e.to_string().contains("claims 50 bytes, only 8 left"), "{e}");
    // A field length cut off.
    let e = read_header(&mut Cursor::new(field(&[1, 0])), &Limits::default()).unwrap_err();
    assert!(e.to_string().contains("cut off: 2 of 4 bytes left"), "{e}");
    // A huge field length.
    let mut body = u32::MAX.to_le_bytes().to_vec();
    body.extend_from_slice(b"a=b");
    assert!(matches!(
        read_header(&mut Cursor::new(field(&body)), &Limits::default()),
        Err(WireError::Malformed { .. })
    ));
}

#[test]
fn field_without_equals_is_refused() {
    for bad in [&b"topic"[..], b""] {
        let b = header_bytes(&[b"callerid=/x", bad]);
        let e = read_header(&mut Cursor::new(&b), &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("has no '='"), "{e}");
    }
}

#[test]
fn non_utf8_field_is_refused() {
    let b = header_bytes(&[b"topic=\xff\xfe"]);
    let e = read_header(&mut Cursor::new(&b), &Limits::default()).unwrap_err();
    assert!(e.to_string().contains("value is not UTF-8"), "{e}");
}

#[test]
fn frames_round_trip_and_clean_eof() {
    // std_msgs/String "hi" on the wire is 06000000 02000000 6869 (docs/ros1-live-spike.md §3).
    let mut b = Vec::new();
    write_frame(&mut b, b"\x02\0\0\0hi").unwrap();
    write_frame(&mut b, b"").unwrap();
    write_frame(&mut b, &[7u8; 5000]).unwrap();
    assert_eq!(&b[..10], &[6, 0, 0, 0, 2, 0, 0, 0, b'h', b'i']);
    let mut c = Cursor::new(&b);
    let l = Limits::default();
    assert_eq!(read_frame(&mut c, &l).unwrap().unwrap().as_ref(), b"\x02\0\0\0hi");
    assert_eq!(read_frame(&mut c, &l).unwrap().unwrap().len(), 0);
    assert_eq!(read_frame(&mut c, &l).unwrap().unwrap().as_ref(), &[7u8; 5000][..]);
    assert!(read_frame(&mut c, &l).unwrap().is_none());
    assert!(read_frame(&mut c, &l).unwrap().is_none());
}

#[test]
fn frame_with_a_huge_length_is_refused() {
    let l = Limits { max_header: 1 << 20, max_message: 1 << 20 };
    let mut b = ((1u32 << 20) + 1).to_le_bytes().to_vec();
    b.extend_from_slice(b"abc");
    match read_frame(&mut Cursor::new(&b), &l) {
        Err(WireError::TooLong { what: "message", len, limit }) => assert_eq!((len, limit), ((1 << 20) + 1, 1 << 20)),
        other => panic!("{other:?}"),
    }
    // At the default 1 GiB limit a 4 GiB claim is refused too, and one just under the limit
    // allocates only what arrives before the stream ends.
    assert!(read_frame(&mut Cursor::new(u32::MAX.to_le_bytes()), &Limits::default()).is_err());
    let mut b = (1u32 << 30).to_le_bytes().to_vec();
    b.extend_from_slice(&[1, 2, 3]);
    match read_frame(&mut Cursor::new(&b), &Limits::default()) {
        Err(WireError::Truncated { what: "message", expected, missing }) => {
            assert_eq!((expected, missing), (1 << 30, (1 << 30) - 3))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn eof_mid_frame_is_an_error() {
    let mut b = Vec::new();
    write_frame(&mut b, b"hello").unwrap();
    for cut in 1..b.len() {
        let e = read_frame(&mut Cursor::new(&b[..cut]), &Limits::default()).unwrap_err();
        assert!(matches!(e, WireError::Truncated { .. }), "cut at {cut}: {e:?}");
    }
    let e = read_frame(&mut Cursor::new(&b[..2]), &Limits::default()).unwrap_err();
    assert_eq!(e.to_string(), "connection closed inside the message length: 2 of 4 bytes missing");
    let e = read_frame(&mut Cursor::new(&b[..6]), &Limits::default()).unwrap_err();
    assert_eq!(e.to_string(), "connection closed inside the message: 3 of 5 bytes missing");
}
