//! Every storage through the C API: a bag written with `rbag_writer_*` reads back through
//! `rbag_open` with the connections (type, encoding, hash) and the bytes and times written.

use std::ffi::{CStr, CString};
use std::path::Path;
use std::ptr;

use ::rbag_bag::decode::Dialect;
use rbag_c::rbag_status::*;
use rbag_c::*;

fn last_error() -> String {
    // SAFETY: never NULL, valid until the next call on this thread.
    unsafe { CStr::from_ptr(rbag_last_error()) }.to_string_lossy().into_owned()
}

#[track_caller]
fn ok(s: rbag_status) {
    assert_eq!(s, RBAG_OK, "{}", last_error());
}

fn c_path(p: &Path) -> CString {
    CString::new(p.as_os_str().as_encoded_bytes()).expect("no NUL in the path")
}

/// # Safety
/// `p` points to a NUL-terminated string.
unsafe fn text(p: *const std::ffi::c_char) -> String {
    // SAFETY: as the caller guarantees.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The hash rbag's bundled store gives `ty`: what a connection with the definition given
/// explicitly must get too.
fn store_hash(ty: &str, dialect: Dialect) -> String {
    let types = ::rbag_bag::types::bundled(::rbag_bag::types::Distro::Humble);
    let conn = ::rbag_bag::types::connection_for("/t", ty, dialect, &types).expect("a bundled type");
    let key = if dialect == Dialect::Ros1 { "md5sum" } else { "type_description_hash" };
    conn.metadata[key].clone()
}

struct Written {
    topic: &'static str,
    log: u64,
    publish: u64,
    data: Vec<u8>,
}

/// Writes /chatter (by type name) and /point (its definition given) into `path`.
fn write(path: &Path, storage: Option<&CStr>, compression: Option<&CStr>, ros1: bool) -> Vec<Written> {
    let sqlite = storage == Some(c"sqlite3") || path.extension().is_some_and(|e| e == "db3");
    let path = c_path(path);
    let options = rbag_write_options { compression: compression.map_or(ptr::null(), CStr::as_ptr), overwrite: false };
    let (string, point) = if ros1 {
        (c"std_msgs/String", c"geometry_msgs/Point")
    } else {
        (c"std_msgs/msg/String", c"geometry_msgs/msg/Point")
    };
    let mut w = ptr::null_mut();
    let (mut chatter, mut pt) = (0, 0);
    let mut written = Vec::new();
    // SAFETY: NUL-terminated strings, live options, writable out-pointers; the writer is
    // finished once.
    unsafe {
        ok(rbag_writer_create(path.as_ptr(), storage.map_or(ptr::null(), CStr::as_ptr), &options, &mut w));
        ok(rbag_writer_add_connection(w, c"/chatter".as_ptr(), string.as_ptr(), &mut chatter));
        ok(rbag_writer_add_connection_with_definition(
            w,
            c"/point".as_ptr(),
            point.as_ptr(),
            ptr::null(),
            c"float64 x\nfloat64 y\nfloat64 z\n".as_ptr(),
            ptr::null(),
            ptr::null(),
            &mut pt,
        ));
        for i in 0..5u64 {
            let log = 7_000_000_000 + i * 10_000_000;
            // ROS 1 and SQLite3 bags keep one time: the publish time reads back as the log time.
            let publish = if ros1 { log } else { log - 3 };
            let kept = if ros1 || sqlite { log } else { publish };
            let text = format!("msg {i}");
            let mut s = if ros1 { Vec::new() } else { vec![0, 1, 0, 0] };
            s.extend_from_slice(&(text.len() as u32 + u32::from(!ros1)).to_le_bytes());
            s.extend_from_slice(text.as_bytes());
            if !ros1 {
                s.push(0);
            }
            let mut p = if ros1 { Vec::new() } else { vec![0, 1, 0, 0] };
            for v in [i as f64, 0.5, -1.0] {
                p.extend_from_slice(&v.to_le_bytes());
            }
            ok(rbag_writer_write(w, chatter, log, publish, s.as_ptr(), s.len()));
            ok(rbag_writer_write(w, pt, log + 1, publish + 1, p.as_ptr(), p.len()));
            written.push(Written { topic: "/chatter", log, publish: kept, data: s });
            written.push(Written { topic: "/point", log: log + 1, publish: kept + 1, data: p });
        }
        ok(rbag_writer_finish(w));
    }
    written
}

fn check(path: &Path, written: &[Written], ros1: bool) {
    let shown = path.display();
    let path = c_path(path);
    let mut bag = ptr::null_mut();
    // SAFETY: a NUL-terminated path and writable out-pointers; the handles are freed once.
    unsafe {
        ok(rbag_open(path.as_ptr(), &mut bag));
        let (mut count, mut start, mut end, mut n_conns) = (0, 0, 0, 0);
        ok(rbag_bag_message_count(bag, &mut count));
        ok(rbag_bag_time_range(bag, &mut start, &mut end));
        ok(rbag_bag_connection_count(bag, &mut n_conns));
        assert_eq!(count, written.len() as u64, "{shown}");
        assert_eq!((start, end), (written[0].log, written[written.len() - 1].log), "{shown}");
        assert_eq!(n_conns, 2, "{shown}");
        let dialect = if ros1 { Dialect::Ros1 } else { Dialect::Ros2 };
        let key = if ros1 { "md5sum" } else { "type_description_hash" };
        for i in 0..n_conns {
            let mut c = std::mem::MaybeUninit::<rbag_connection>::uninit();
            ok(rbag_bag_connection(bag, i, c.as_mut_ptr()));
            let c = c.assume_init();
            let ty = text(c.message_type);
            assert_eq!(text(c.encoding), if ros1 { "ros1" } else { "cdr" }, "{shown}");
            assert_eq!(text(c.definition_encoding), if ros1 { "ros1msg" } else { "ros2msg" }, "{shown}");
            assert_eq!(c.message_count, 5, "{shown}");
            let metadata: serde_json::Value = serde_json::from_str(&text(c.metadata_json)).expect("JSON");
            assert_eq!(metadata[key], store_hash(&ty, dialect).as_str(), "{shown}: {ty}");
        }

        let mut it = ptr::null_mut();
        ok(rbag_messages(bag, ptr::null(), &mut it));
        rbag_bag_free(bag);
        let mut m = std::mem::MaybeUninit::<rbag_message>::uninit();
        let mut got = Vec::new();
        while rbag_iter_next(it, m.as_mut_ptr()) == RBAG_OK {
            let m = m.assume_init_ref();
            let data = std::slice::from_raw_parts(m.data, m.size).to_vec();
            got.push((text(m.topic), m.log_time, m.publish_time, data));
        }
        rbag_iter_free(it);
        let want: Vec<_> = written.iter().map(|w| (w.topic.to_string(), w.log, w.publish, w.data.clone())).collect();
        assert_eq!(got, want, "{shown}");
    }
}

#[test]
fn every_storage_round_trips() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases: [(&str, Option<&CStr>, Option<&CStr>, bool); 7] = [
        ("plain.bag", None, None, true),
        ("bz2.bag", None, Some(c"bz2"), true),
        ("plain.db3", None, None, false),
        ("plain.mcap", None, None, false),
        ("lz4.mcap", None, Some(c"lz4"), false),
        ("rosbag2_mcap", None, Some(c"zstd"), false),
        ("rosbag2_sqlite", Some(c"sqlite3"), None, false),
    ];
    for (name, storage, compression, ros1) in cases {
        let path = dir.path().join(name);
        let written = write(&path, storage, compression, ros1);
        check(&path, &written, ros1);
    }
}

#[test]
fn an_existing_bag_is_replaced_only_when_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out.mcap");
    write(&out, None, None, false);
    let path = c_path(&out);
    let mut w = ptr::null_mut();
    let mut id = 0;
    let replace = rbag_write_options { compression: ptr::null(), overwrite: true };
    // SAFETY: NUL-terminated strings, live options, writable out-pointers; the writer is
    // finished once.
    unsafe {
        assert_eq!(rbag_writer_create(path.as_ptr(), ptr::null(), ptr::null(), &mut w), RBAG_ERR_EXISTS);
        assert!(last_error().contains("out.mcap"), "{}", last_error());
        ok(rbag_writer_create(path.as_ptr(), ptr::null(), &replace, &mut w));
        ok(rbag_writer_add_connection(w, c"/chatter".as_ptr(), c"std_msgs/msg/String".as_ptr(), &mut id));
        let data = b"\x00\x01\x00\x00\x03\x00\x00\x00hi\x00";
        ok(rbag_writer_write(w, id, 5, 5, data.as_ptr(), data.len()));
        ok(rbag_writer_finish(w));
    }
    let bag = ::rbag_bag::Bag::open(&out).expect("the new bag opens");
    assert_eq!(bag.storage_info().unwrap().message_count, 1);
}
