//! A bag truncated by another process while it is read (issue 13, D7): reading through the map
//! must not crash (SIGBUS), and what was lost must come back as an error naming the file, never
//! as zeros passed off as messages.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

mod common;

use rbag_storage::{Filter, Format, StorageReader, WriteOptions};

const START: u64 = 1_700_000_000_000_000_000;
/// Messages per bag; with [`SIZE`] the bags are ~50 MB.
const COUNT: u64 = 800;
const SIZE: usize = 64 * 1024;

/// Message `i`: a valid std_msgs/String (ROS 1 or CDR) whose text has no zero byte.
fn payload(format: Format, i: u64) -> Vec<u8> {
    let text: Vec<u8> = (0..SIZE - 16).map(|j| b'a' + ((i as usize + j) % 26) as u8).collect();
    let mut out = Vec::with_capacity(SIZE);
    if format == Format::Ros1 {
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(&text);
    } else {
        out.extend_from_slice(&[0, 1, 0, 0]);
        out.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
        out.extend_from_slice(&text);
        out.push(0);
    }
    out
}

/// An uncompressed bag of [`COUNT`] messages, 1 ms apart, on one topic.
fn write_bag(dir: &Path, format: Format) -> PathBuf {
    let path = dir.join(match format {
        Format::Ros1 => "big.bag",
        Format::Mcap => "big.mcap",
        Format::Sqlite3 => "big.db3",
    });
    let mut w = rbag_storage::create(&path, format, &WriteOptions::default()).unwrap();
    let conn = if format == Format::Ros1 {
        common::ros1_chatter()
    } else {
        common::connection("/chatter", "std_msgs/msg/String", "string data\n")
    };
    let id = w.add_connection(&conn).unwrap();
    for i in 0..COUNT {
        let t = START + i * 1_000_000;
        w.write(id, t, t, &payload(format, i)).unwrap();
    }
    w.finish().unwrap();
    path
}

fn truncate(path: &Path, len: u64) {
    OpenOptions::new().write(true).open(path).unwrap().set_len(len).unwrap();
}

/// What reading gave: messages that matched what was written, and the error that ended it.
#[derive(Debug, Default)]
struct Outcome {
    good: u64,
    /// Messages whose bytes differ from what was written (zeros from lost pages).
    wrong: Vec<u64>,
    /// Whether a wrong message was followed by anything but the error.
    wrong_not_last: bool,
    error: Option<String>,
    /// Sum of every byte read, so that every byte is touched.
    sum: u64,
}

/// Reads every message of `reader`, touching every byte; calls `during(k)` before message `k`.
fn read_all(reader: &dyn StorageReader, format: Format, mut during: impl FnMut(u64)) -> Outcome {
    let mut out = Outcome::default();
    let mut k = 0;
    let mut iter = match reader.messages(&Filter::default()) {
        Ok(it) => it,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    loop {
        during(k);
        let Some(item) = iter.next() else { break };
        match item {
            Ok(m) => {
                if !out.wrong.is_empty() {
                    out.wrong_not_last = true;
                }
                out.sum += m.data.iter().map(|&b| b as u64).sum::<u64>();
                if m.data[..] == payload(format, k)[..] {
                    out.good += 1;
                } else {
                    out.wrong.push(k);
                }
            }
            Err(e) => {
                out.error = Some(e.to_string());
                break;
            }
        }
        k += 1;
    }
    out
}

/// The error names the file and says it shrank, to the size it now has.
fn assert_shrank(out: &Outcome, path: &Path, len: u64) {
    let err = out.error.as_deref().unwrap_or_else(|| panic!("no error after the file shrank: {out:?}"));
    assert!(err.contains(&path.display().to_string()), "error should name the file: {err}");
    assert!(err.contains(&format!("the file shrank to {len} bytes while it was being read")), "{err}");
    assert!(!out.wrong_not_last, "zeros passed as messages: {out:?}");
}

/// Opened (and mapped), then cut in half, then read: the first half reads correctly, the rest
/// is an error naming the file.
fn truncated_after_open(format: Format) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_bag(dir.path(), format);
    let reader = rbag_storage::open(&path).unwrap();
    let half = std::fs::metadata(&path).unwrap().len() / 2;
    truncate(&path, half);
    let out = read_all(reader.as_ref(), format, |_| {});
    assert_shrank(&out, &path, half);
    assert!(out.wrong.is_empty(), "{:?}", out.wrong);
    assert!(out.good > COUNT / 4 && out.good < COUNT, "messages before the cut are read: {}", out.good);
}

#[test]
fn ros1_truncated_after_open_is_an_error_naming_the_file() {
    truncated_after_open(Format::Ros1);
}

#[test]
fn mcap_truncated_after_open_is_an_error_naming_the_file() {
    truncated_after_open(Format::Mcap);
}

/// Cut while messages of a loaded chunk are held and read: slices already handed out read
/// zeros at worst, and the next call is the error.
fn truncated_while_reading(format: Format) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_bag(dir.path(), format);
    let reader = rbag_storage::open(&path).unwrap();
    let mut iter = reader.messages(&Filter::default()).unwrap();
    let held: Vec<_> = iter.by_ref().take(3).map(|m| m.unwrap()).collect();
    truncate(&path, 0);
    // The held slices lost their pages: touching them must not crash.
    let sum: u64 = held.iter().flat_map(|m| m.data.iter()).map(|&b| b as u64).sum();
    let _ = sum;
    match iter.next() {
        Some(Err(e)) => {
            let err = e.to_string();
            assert!(err.contains(&path.display().to_string()) && err.contains("the file shrank to 0 bytes"), "{err}");
        }
        other => panic!("expected the shrink error, got {other:?}"),
    }
    assert!(iter.next().is_none(), "the error ends the iteration");
}

#[test]
fn ros1_truncated_while_reading_is_an_error_at_the_next_message() {
    truncated_while_reading(Format::Ros1);
}

#[test]
fn mcap_truncated_while_reading_is_an_error_at_the_next_message() {
    truncated_while_reading(Format::Mcap);
}

/// Cut in the middle of reading, to a length inside a chunk not yet read.
fn truncated_midway(format: Format) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_bag(dir.path(), format);
    let reader = rbag_storage::open(&path).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let cut = len * 3 / 5 + 1234;
    let out = read_all(reader.as_ref(), format, |k| {
        if k == COUNT / 3 {
            truncate(&path, cut);
        }
    });
    assert_shrank(&out, &path, cut);
    assert!(out.good >= COUNT / 3, "{out:?}");
}

#[test]
fn ros1_truncated_midway_is_an_error() {
    truncated_midway(Format::Ros1);
}

#[test]
fn mcap_truncated_midway_is_an_error() {
    truncated_midway(Format::Mcap);
}

/// Cut by less than a page: the bytes past the new end on its last page read as zeros without
/// any fault, so only the size check at the end can tell.
#[test]
fn ros1_cut_inside_the_last_page_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_bag(dir.path(), Format::Ros1);
    let reader = rbag_storage::open(&path).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    truncate(&path, len - 10);
    let out = read_all(reader.as_ref(), Format::Ros1, |_| {});
    assert_shrank(&out, &path, len - 10);
}

/// SQLite reads with read(2) (its own memory map is off): a cut .db3 gives an error or the
/// data as written, never a crash and never zeros.
#[test]
fn db3_truncated_while_open_never_crashes() {
    for when in [0, COUNT / 3] {
        let dir = tempfile::tempdir().unwrap();
        let path = write_bag(dir.path(), Format::Sqlite3);
        let len = std::fs::metadata(&path).unwrap().len();
        let reader = match rbag_storage::open(&path) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        let out = read_all(reader.as_ref(), Format::Sqlite3, |k| {
            if k == when {
                truncate(&path, len / 2);
            }
        });
        eprintln!("db3 cut before message {when}: {} read as written, error: {:?}", out.good, out.error);
        assert!(out.wrong.is_empty(), "wrong data from a cut .db3 (cut before message {when}): {out:?}");
        match &out.error {
            Some(err) => assert!(err.contains(&path.display().to_string()), "the error should name the file: {err}"),
            None => assert_eq!(out.good, COUNT, "no error, so everything was read"),
        }
    }
}
