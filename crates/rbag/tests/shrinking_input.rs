//! `rbag convert` and `rbag echo` of a bag that another process truncates while rbag reads it
//! (issue 13, D7): never a crash (SIGBUS was exit 135), never a panic; a failure names the input
//! and leaves no output; a success wrote every message as it was.

mod common;

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use common::rbag;
use rbag_storage::{Filter, Format, WriteOptions};

const START: u64 = 1_700_000_000_000_000_000;
const COUNT: u64 = 800;
const SIZE: usize = 64 * 1024;

fn payload(format: Format, i: u64) -> Vec<u8> {
    let text: Vec<u8> = (0..SIZE - 16).map(|j| b'a' + ((i as usize + j) % 26) as u8).collect();
    let mut out = Vec::with_capacity(SIZE);
    if format == Format::Ros1 {
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    } else {
        out.extend_from_slice(&[0, 1, 0, 0]);
        out.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    }
    out.extend_from_slice(&text);
    if format != Format::Ros1 {
        out.push(0);
    }
    out
}

/// An uncompressed bag (~50 MB) of [`COUNT`] std_msgs/String messages on `/chatter`.
fn write_bag(path: &Path, format: Format) {
    let mut w = rbag_storage::create(path, format, &WriteOptions::default()).unwrap();
    let conn = if format == Format::Ros1 {
        rbag_testkit::sample::connection(&rbag_testkit::sample::TOPICS[0])
    } else {
        rbag_testkit::sample::cdr::connection("/chatter", "std_msgs/msg/String", "string data\n")
    };
    let id = w.add_connection(&conn).unwrap();
    for i in 0..COUNT {
        let t = START + i * 1_000_000;
        w.write(id, t, t, &payload(format, i)).unwrap();
    }
    w.finish().unwrap();
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Runs `rbag <args>` on a fresh copy of `master` at `input`, truncating the copy to half its
/// size `delay` after the start; checks the outcome. Returns whether rbag failed, and its
/// stderr.
fn run_truncated(master: &Path, input: &Path, args: &[&str], delay: Duration) -> (bool, String) {
    std::fs::copy(master, input).unwrap();
    let len = std::fs::metadata(input).unwrap().len();
    let mut cmd = rbag();
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    std::thread::sleep(delay);
    OpenOptions::new().write(true).open(input).unwrap().set_len(len / 2).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let what = format!("rbag {args:?}, input cut after {delay:?}");
    // 3: the cut came before rbag opened the file, which it then read as a torn file and said
    // what was dropped.
    assert!(matches!(o.status.code(), Some(0 | 1 | 3)), "{what}: status {:?} (135 is SIGBUS); stderr: {err}", o.status);
    if o.status.code() == Some(3) {
        assert!(err.contains("dropped:"), "{what}: exit 3 says what was dropped: {err}");
    }
    assert!(!err.contains("panicked at"), "{what}: {err}");
    let failed = o.status.code() == Some(1);
    eprintln!("{what}: exit {:?}: {}", o.status.code(), err.lines().last().unwrap_or(""));
    if failed {
        assert!(err.contains(&input.display().to_string()), "{what}: the error should name the input: {err}");
    }
    (failed, err.into_owned())
}

/// Convert, with the input cut at a range of moments: before reading, while reading, after.
fn convert_while_truncated(format: Format, ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let master = dir.path().join(format!("master.{ext}"));
    write_bag(&master, format);
    let input = dir.path().join(format!("in.{ext}"));
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join(format!("out.{ext}"));
    let args = ["convert", input.to_str().unwrap(), "-o", out.to_str().unwrap()];
    // How long an uncut convert takes here, to cut at fractions of it.
    std::fs::copy(&master, &input).unwrap();
    let started = std::time::Instant::now();
    assert_eq!(rbag().args(args).output().unwrap().status.code(), Some(0));
    let whole = started.elapsed();
    std::fs::remove_file(&out).unwrap();
    let mut failures = 0;
    for percent in [0u32, 2, 5, 10, 20, 35, 50, 70, 90, 150] {
        let delay = whole * percent / 100;
        let ms = delay.as_millis();
        let (failed, err) = run_truncated(&master, &input, &args, delay);
        if failed {
            failures += 1;
            assert!(names_in(&out_dir).is_empty(), "a failed convert left {:?}", names_in(&out_dir));
        } else {
            // Finished before the cut: all of it, intact. Or the cut came before rbag opened
            // the file, which it then read as a truncated file (an MCAP file without its
            // summary is scanned, with a warning): the messages before the cut, intact.
            let r = rbag_storage::open(&out).unwrap();
            let mut n = 0;
            for m in r.messages(&Filter::default()).unwrap() {
                let m = m.unwrap();
                assert!(
                    m.data[..] == payload(format, n)[..],
                    "message {n} of a successful convert differs (input cut after {ms} ms)"
                );
                n += 1;
            }
            assert!(
                n == COUNT || err.contains("dropped:"),
                "a successful convert wrote {n} of {COUNT} messages without a warning (input cut after {ms} ms): {err}"
            );
            drop(r);
            std::fs::remove_file(&out).unwrap();
        }
        assert!(names_in(&out_dir).is_empty(), "left over in the output directory: {:?}", names_in(&out_dir));
    }
    assert!(failures > 0, "the cut hit no convert: the test did not test anything");
}

#[test]
fn ros1_convert_of_a_bag_truncated_while_read_fails_cleanly() {
    convert_while_truncated(Format::Ros1, "bag");
}

#[test]
fn mcap_convert_of_a_file_truncated_while_read_fails_cleanly() {
    convert_while_truncated(Format::Mcap, "mcap");
}

/// `rbag echo` of a bag cut while it prints: exit 0 or 1 (with the input named), no crash.
#[test]
fn echo_of_a_bag_truncated_while_read_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let master: PathBuf = dir.path().join("master.bag");
    write_bag(&master, Format::Ros1);
    let input = dir.path().join("in.bag");
    let mut failures = 0;
    for ms in [0u64, 5, 20, 80] {
        let args = ["echo", input.to_str().unwrap(), "/chatter"];
        failures += run_truncated(&master, &input, &args, Duration::from_millis(ms)).0 as u32;
    }
    assert!(failures > 0, "the cut hit no echo");
}
