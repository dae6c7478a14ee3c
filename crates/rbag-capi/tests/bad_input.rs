//! Bad input through the C API: damaged, truncated, foreign and missing files, NULL and
//! malformed arguments. Each is an error code with a message naming the file or argument,
//! never a crash, and the next call works.

use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr;

use rbag_c::rbag_status::*;
use rbag_c::*;

fn last_error() -> String {
    // SAFETY: rbag_last_error never returns NULL, and its text lives until the next call.
    unsafe { CStr::from_ptr(rbag_last_error()) }.to_string_lossy().into_owned()
}

fn c_path(p: &Path) -> CString {
    CString::new(p.as_os_str().as_encoded_bytes()).expect("no NUL in the path")
}

/// Opens `path` and reads every message: the first error's code and message, or the number of
/// messages read.
fn read_all(path: &Path) -> Result<u64, (rbag_status, String)> {
    let path = c_path(path);
    let mut bag = ptr::null_mut();
    // SAFETY: a NUL-terminated path and a writable out-pointer.
    let s = unsafe { rbag_open(path.as_ptr(), &mut bag) };
    if s != RBAG_OK {
        assert!(bag.is_null(), "a failed open leaves *out NULL");
        return Err((s, last_error()));
    }
    let mut it = ptr::null_mut();
    // SAFETY: a live bag, no filter, a writable out-pointer.
    let s = unsafe { rbag_messages(bag, ptr::null(), &mut it) };
    // SAFETY: the bag from rbag_open, freed once; the iterator keeps it open.
    unsafe { rbag_bag_free(bag) };
    if s != RBAG_OK {
        return Err((s, last_error()));
    }
    let mut m = std::mem::MaybeUninit::<rbag_message>::uninit();
    let mut n = 0;
    let result = loop {
        // SAFETY: a live iterator and a writable message.
        match unsafe { rbag_iter_next(it, m.as_mut_ptr()) } {
            RBAG_OK => n += 1,
            RBAG_END => break Ok(n),
            s => {
                let failure = (s, last_error());
                // SAFETY: as above.
                let after = unsafe { rbag_iter_next(it, m.as_mut_ptr()) };
                assert_eq!(after, RBAG_END, "an iterator that failed is finished");
                break Err(failure);
            }
        }
    };
    // SAFETY: the iterator from rbag_messages, freed once.
    unsafe { rbag_iter_free(it) };
    result
}

fn damaged(dir: &Path, src: &Path, name: &str, edit: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut data = std::fs::read(src).expect("the corpus file reads");
    edit(&mut data);
    let out = dir.join(name);
    std::fs::write(&out, data).expect("the damaged copy is written");
    out
}

#[test]
fn damaged_truncated_and_missing_files_are_errors_naming_the_file() {
    let test = "damaged_truncated_and_missing_files_are_errors_naming_the_file";
    let (Some(bag), Some(mcap), Some(good)) = (
        rbag_testkit::corpus(test, "ros1/multi_lz4.bag"),
        rbag_testkit::corpus(test, "ros2/mcap/talker/talker.mcap"),
        rbag_testkit::corpus(test, "ros1/multi_none.bag"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let inputs = [
        damaged(d, &bag, "truncated.bag", |v| v.truncate(v.len() / 2)),
        damaged(d, &bag, "zeroed.bag", |v| v[4096..8192].fill(0)),
        damaged(d, &bag, "flipped.bag", |v| v[20..40].copy_from_slice(&(0..20).collect::<Vec<u8>>())),
        damaged(d, &mcap, "truncated.mcap", |v| v.truncate(v.len() / 2)),
        damaged(d, &mcap, "zeroed.mcap", |v| v[100..400].fill(0xff)),
        damaged(d, &mcap, "empty.bag", Vec::clear),
        damaged(d, &mcap, "text.mcap", |v| *v = "not a bag at all\n".repeat(100).into_bytes()),
        d.join("missing.bag"),
        d.to_path_buf(),
    ];
    let good_count = read_all(&good).expect("the intact bag reads");
    let mut failed = 0;
    for path in &inputs {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match read_all(path) {
            Ok(n) => eprintln!("{name}: read {n} messages"),
            Err((status, message)) => {
                failed += 1;
                assert!((status as i32) < 0, "{name}: {status:?}");
                assert_ne!(status, RBAG_ERR_INTERNAL, "{name}: a panic was caught: {message}");
                assert!(message.contains(&name), "{name}: the message does not name the file: {message}");
                eprintln!("{name}: {status:?}: {message}");
            }
        }
        // The next call works.
        assert_eq!(read_all(&good), Ok(good_count), "after {name}");
    }
    assert!(failed >= 7, "only {failed} of {} bad inputs failed", inputs.len());
    let missing = read_all(&d.join("missing.bag")).unwrap_err();
    assert_eq!(missing.0, RBAG_ERR_NOT_FOUND, "{}", missing.1);
}

#[test]
fn null_and_malformed_arguments_are_invalid_argument_errors() {
    let mut bag = ptr::null_mut();
    // SAFETY: NULL is what is being tested; the out-pointer is writable.
    assert_eq!(unsafe { rbag_open(ptr::null(), &mut bag) }, RBAG_ERR_INVALID_ARGUMENT);
    assert_eq!(last_error(), "path is NULL");
    // SAFETY: a NUL-terminated path; a NULL out-pointer is what is being tested.
    assert_eq!(unsafe { rbag_open(c"x.bag".as_ptr(), ptr::null_mut()) }, RBAG_ERR_INVALID_ARGUMENT);
    assert_eq!(last_error(), "out is NULL");
    // SAFETY: as above.
    assert_eq!(unsafe { rbag_open(c"".as_ptr(), &mut bag) }, RBAG_ERR_INVALID_ARGUMENT);
    let mut n = 0u64;
    // SAFETY: NULL handles are what is being tested.
    unsafe {
        assert_eq!(rbag_bag_message_count(ptr::null(), &mut n), RBAG_ERR_INVALID_ARGUMENT);
        assert_eq!(last_error(), "bag is NULL");
        assert_eq!(rbag_iter_next(ptr::null_mut(), ptr::null_mut()), RBAG_ERR_INVALID_ARGUMENT);
        assert_eq!(rbag_writer_write(ptr::null_mut(), 0, 0, 0, ptr::null(), 0), RBAG_ERR_INVALID_ARGUMENT);
        assert_eq!(rbag_writer_finish(ptr::null_mut()), RBAG_ERR_INVALID_ARGUMENT);
        // Freeing NULL does nothing.
        rbag_bag_free(ptr::null_mut());
        rbag_iter_free(ptr::null_mut());
        rbag_writer_free(ptr::null_mut());
        rbag_string_free(ptr::null_mut());
    }
    for code in [
        RBAG_OK,
        RBAG_END,
        RBAG_ERR_INVALID_ARGUMENT,
        RBAG_ERR_IO,
        RBAG_ERR_FORMAT,
        RBAG_ERR_DECODE,
        RBAG_ERR_NOT_FOUND,
        RBAG_ERR_EXISTS,
        RBAG_ERR_OVER_BUDGET,
        RBAG_ERR_UNSUPPORTED,
        RBAG_ERR_INTERNAL,
    ] {
        // SAFETY: the names are static NUL-terminated strings.
        let name = unsafe { CStr::from_ptr(rbag_status_name(code as i32)) };
        assert_eq!(name.to_str().unwrap(), format!("{code:?}"));
    }
    // SAFETY: as above.
    assert_eq!(unsafe { CStr::from_ptr(rbag_status_name(42)) }, c"RBAG_UNKNOWN_STATUS");
}

#[test]
fn a_bad_filter_is_an_error_and_the_bag_stays_usable() {
    let test = "a_bad_filter_is_an_error_and_the_bag_stays_usable";
    let Some(path) = rbag_testkit::corpus(test, "ros1/multi_none.bag") else { return };
    let path = c_path(&path);
    let mut bag = ptr::null_mut();
    // SAFETY: a NUL-terminated path and a writable out-pointer.
    assert_eq!(unsafe { rbag_open(path.as_ptr(), &mut bag) }, RBAG_OK);
    let mut it = ptr::null_mut();
    let bad_utf8: &[u8] = b"/chat\xffter\0";
    let cases: [(&[*const c_char], usize, rbag_status, &str); 3] = [
        (&[c"/no_such_topic".as_ptr()], 1, RBAG_ERR_NOT_FOUND, "no topic /no_such_topic"),
        (&[bad_utf8.as_ptr().cast()], 1, RBAG_ERR_INVALID_ARGUMENT, "filter->topics[0] is not UTF-8"),
        (&[], 2, RBAG_ERR_INVALID_ARGUMENT, "filter->topics is NULL"),
    ];
    for (topics, count, status, text) in cases {
        let filter = rbag_filter {
            topics: if topics.is_empty() { ptr::null() } else { topics.as_ptr() },
            topic_count: count,
            has_start: false,
            start_ns: 0,
            has_end: false,
            end_ns: 0,
        };
        // SAFETY: a live bag, a filter whose non-NULL topics hold `count` strings, a writable
        // out-pointer.
        assert_eq!(unsafe { rbag_messages(bag, &filter, &mut it) }, status);
        assert!(it.is_null());
        assert!(last_error().contains(text), "{}", last_error());
    }
    let mut conn = std::mem::MaybeUninit::<rbag_connection>::uninit();
    // SAFETY: a live bag and a writable connection.
    assert_eq!(unsafe { rbag_bag_connection_by_id(bag, 4242, conn.as_mut_ptr()) }, RBAG_ERR_NOT_FOUND);
    // SAFETY: a live bag; the iterator from rbag_messages is freed once.
    unsafe {
        assert_eq!(rbag_messages(bag, ptr::null(), &mut it), RBAG_OK);
        rbag_iter_free(it);
        rbag_bag_free(bag);
    }
}

#[test]
fn bad_writer_arguments_are_errors_and_leave_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out.mcap");
    let path = c_path(&out);
    let mut w = ptr::null_mut();
    let zip = rbag_write_options { compression: c"zip".as_ptr(), overwrite: false };
    // SAFETY: NUL-terminated strings, live options and a writable out-pointer throughout.
    unsafe {
        assert_eq!(rbag_writer_create(path.as_ptr(), c"tape".as_ptr(), ptr::null(), &mut w), RBAG_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("unknown storage \"tape\""), "{}", last_error());
        assert_eq!(rbag_writer_create(path.as_ptr(), ptr::null(), &zip, &mut w), RBAG_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("unknown compression \"zip\""), "{}", last_error());
        assert!(w.is_null());

        assert_eq!(rbag_writer_create(path.as_ptr(), ptr::null(), ptr::null(), &mut w), RBAG_OK);
        let mut id = 0;
        assert_eq!(
            rbag_writer_add_connection(w, c"/x".as_ptr(), c"no_pkg/msg/Nothing".as_ptr(), &mut id),
            RBAG_ERR_DECODE
        );
        assert!(last_error().contains("no_pkg/msg/Nothing"), "{}", last_error());
        assert_eq!(
            rbag_writer_add_connection_with_definition(
                w,
                c"/x".as_ptr(),
                c"std_msgs/msg/String".as_ptr(),
                ptr::null(),
                c"string data".as_ptr(),
                ptr::null(),
                c"[1, 2]".as_ptr(),
                &mut id
            ),
            RBAG_ERR_INVALID_ARGUMENT
        );
        assert!(last_error().contains("metadata_json"), "{}", last_error());
        assert_eq!(rbag_writer_add_connection(w, c"/x".as_ptr(), c"std_msgs/msg/String".as_ptr(), &mut id), RBAG_OK);
        assert_eq!(rbag_writer_write(w, id, 1, 1, ptr::null(), 5), RBAG_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("data is NULL"), "{}", last_error());
        rbag_writer_free(w);
    }
    assert!(!out.exists(), "an abandoned writer left {}", out.display());
}

#[test]
fn a_bag_is_read_from_several_threads_and_errors_are_per_thread() {
    let test = "a_bag_is_read_from_several_threads_and_errors_are_per_thread";
    let Some(path) = rbag_testkit::corpus(test, "ros1/multi_none.bag") else { return };
    let path = c_path(&path);
    let mut bag = ptr::null_mut();
    // SAFETY: a NUL-terminated path and a writable out-pointer.
    assert_eq!(unsafe { rbag_open(path.as_ptr(), &mut bag) }, RBAG_OK);
    let mut expected = 0;
    // SAFETY: a live bag and a writable count.
    assert_eq!(unsafe { rbag_bag_message_count(bag, &mut expected) }, RBAG_OK);
    // SAFETY: as above; the failure sets this thread's error only.
    assert_eq!(unsafe { rbag_open(c"/nonexistent/a.bag".as_ptr(), &mut ptr::null_mut()) }, RBAG_ERR_NOT_FOUND);
    let mine = last_error();
    let shared = bag as usize;
    let counts: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(move || {
                    assert_eq!(last_error(), "", "a new thread has no error");
                    let bag = shared as *const rbag_bag;
                    let mut it = ptr::null_mut();
                    let mut m = std::mem::MaybeUninit::<rbag_message>::uninit();
                    let mut n = 0;
                    // SAFETY: the bag outlives the scope and may be used by several threads;
                    // each thread has its own iterator.
                    unsafe {
                        assert_eq!(rbag_messages(bag, ptr::null(), &mut it), RBAG_OK);
                        while rbag_iter_next(it, m.as_mut_ptr()) == RBAG_OK {
                            n += 1;
                        }
                        rbag_iter_free(it);
                        assert_eq!(rbag_open(c"/nonexistent/b.bag".as_ptr(), &mut ptr::null_mut()), RBAG_ERR_NOT_FOUND);
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(counts, vec![expected; 4]);
    assert_eq!(last_error(), mine, "other threads' errors are theirs");
    // SAFETY: the bag from rbag_open, freed once.
    unsafe { rbag_bag_free(bag) };
}
