//! A TCPROS connection from arbitrary bytes: a connection header, then message frames, read
//! from a `Cursor` as a subscriber reads a socket. Twice: with small limits (so lengths hit
//! them) and with the default ones (a lying 1 GiB length must not allocate 1 GiB:
//! run with `-malloc_limit_mb`). Whatever header parses must re-encode to the same bytes.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use rbag_ros1::tcpros::{read_frame, read_header, Header, Limits, WireError};

fn connection(data: &[u8], limits: &Limits) {
    let mut c = Cursor::new(data);
    match read_header(&mut c, limits) {
        Ok(h) => {
            let used = c.position() as usize;
            assert!(used - 4 <= limits.max_header);
            let enc = h.encode().expect("a parsed header encodes");
            assert_eq!(enc, &data[..used], "re-encoding changed the header");
            assert_eq!(Header::parse(&enc[4..]).expect("its own encoding parses"), h);
            for (k, v) in h.iter() {
                assert!(!k.contains('='), "key {k:?} holds '='");
                assert!(h.get(k).is_some());
                std::hint::black_box(v);
            }
        }
        Err(e) => {
            if let WireError::TooLong { len, limit, .. } = e {
                assert!(len > limit);
            }
            let _ = e.to_string();
            return;
        }
    }
    loop {
        match read_frame(&mut c, limits) {
            Ok(Some(m)) => assert!(m.len() <= limits.max_message),
            Ok(None) => break,
            Err(e) => {
                let _ = e.to_string();
                break;
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    connection(data, &Limits { max_header: 4096, max_message: 4096 });
    connection(data, &Limits::default());
    let _ = Header::parse(data);
});
