//! Issue 18 ("the first day with rbag"): each point a new user tripped over, as a CLI test
//! named after it, checking the exit code and the message.

use std::path::Path;

mod common;
use common::*;

const S: u64 = 1_000_000_000;

fn times(bag: &Path) -> Vec<u64> {
    read_all(bag).into_iter().filter(|m| m.0 == "/chatter").map(|m| m.1).collect()
}

fn code(o: &std::process::Output) -> Option<i32> {
    o.status.code()
}

#[test]
fn start_plus_one_is_an_offset_from_the_bags_start() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 5);
    for (spec, first) in
        [("+1", START + S), ("+1.5s", START + 3 * S / 2), ("2s", START + 2 * S), ("+0.5m", START + 30 * S)]
    {
        let out = dir.path().join(format!("o{}.bag", spec.replace(['+', '.'], "_")));
        let o = run(&[&"convert", &input, &"-o", &out, &"--start", &spec, &"--topics", &"/chatter"]);
        if first > START + 5 * S {
            assert_eq!(code(&o), Some(3), "{spec}: {}", stderr(&o));
            continue;
        }
        assert_eq!(code(&o), Some(0), "{spec}: {}", stderr(&o));
        assert_eq!(times(&out)[0], first, "{spec}");
    }
}

#[test]
fn iso_8601_dates_and_compound_durations_are_times() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 5);
    // START is 2023-11-14T22:13:20Z.
    let out = dir.path().join("iso.bag");
    let o = run(&[&"convert", &input, &"-o", &out, &"--start", &"2023-11-14T22:13:22Z", &"--duration", &"1m30s"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let t = times(&out);
    assert_eq!((t[0], *t.last().unwrap()), (START + 2 * S, START + 5 * S - 10_000_000));
    let out = dir.path().join("zone.bag");
    let o = run(&[&"convert", &input, &"-o", &out, &"--start", &"2023-11-14 23:13:21.5+01:00", &"--end", &"+2"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let t = times(&out);
    assert_eq!((t[0], t.len()), (START + 3 * S / 2, 50));
    let o = run(&[&"echo", &input, &"/chatter", &"--start", &"tomorrow"]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("2023-11-14T22:13:22Z") && stderr(&o).contains("+1.5"), "{}", stderr(&o));
}

#[test]
fn start_after_end_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 2);
    let out = dir.path().join("o.bag");
    let o = run(&[&"convert", &input, &"-o", &out, &"--start", &"+2", &"--end", &"+1"]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("ends at 2023-11-14 22:13:21.000 UTC"), "{}", stderr(&o));
    assert!(!out.exists());
}

#[test]
fn a_window_outside_the_bag_warns_with_the_bags_span() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 2);
    let out = dir.path().join("o.bag");
    let o = run(&[&"convert", &input, &"-o", &out, &"--start", &"1", &"--end", &"2"]);
    assert_eq!(code(&o), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("selects no message: the bag spans 2023-11-14 22:13:20.000 UTC"), "{}", stderr(&o));
    let o = run(&[&"echo", &input, &"/chatter", &"--start", &"+1h"]);
    assert_eq!(code(&o), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("selects no message"), "{}", stderr(&o));
}

#[test]
fn a_topic_typo_is_an_error_naming_the_near_matches() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 1);
    for verb in ["convert", "filter"] {
        let out = dir.path().join(format!("{verb}.bag"));
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&verb, &input, &"-o", &out];
        if verb == "filter" {
            args.push(&"True");
        }
        args.extend([&"--topics" as &dyn AsRef<std::ffi::OsStr>, &"/chater"]);
        let o = run(&args);
        assert_eq!(code(&o), Some(2), "{verb}: {}", stderr(&o));
        assert!(stderr(&o).contains("did you mean /chatter?"), "{verb}: {}", stderr(&o));
        assert!(!out.exists(), "{verb}");
    }
    // convert --exclude-topics, export, and play in both dialects (refused before any graph is
    // joined: the master URI and domain point nowhere).
    let ros2 = dir.path().join("ros2");
    assert_eq!(code(&run(&[&"convert", &input, &"-o", &ros2, &"-s", &"mcap"])), Some(0));
    let out = dir.path().join("x.bag");
    let export = dir.path().join("export");
    let cases: [(&[&dyn AsRef<std::ffi::OsStr>], &str); 5] = [
        (&[&"convert", &input, &"-o", &out, &"--exclude-topics", &"/chater"], "--exclude-topics /chater"),
        (&[&"export", &input, &"/chater", &"-o", &export], "/chater"),
        (&[&"play", &"--ros1", &input, &"--topics", &"/chater"], "--topics /chater"),
        (&[&"play", &"--ros1", &input, &"--pause-topics", &"/chater"], "--pause-topics /chater"),
        (&[&"play", &"--ros2", &ros2, &"--topics", &"/chater"], "--topics /chater"),
    ];
    for (args, named) in cases {
        let mut c = rbag();
        c.env("ROS_MASTER_URI", "http://127.0.0.1:1/").env("ROS_DOMAIN_ID", "231").args(args);
        let o = c.output().unwrap();
        assert_eq!(code(&o), Some(2), "{:?}: {}", args[0].as_ref(), stderr(&o));
        assert!(stderr(&o).contains(named) && stderr(&o).contains("/chatter"), "{}", stderr(&o));
        assert!(!out.exists() && !export.exists());
    }
}

/// `play` takes the flags of the dialect it plays in (rosbag's with --ros1, ros2 bag's with
/// --ros2); a flag of the other, or `-s` with the other's kind of value, is a usage error that
/// names both.
#[test]
fn a_flag_of_the_other_play_dialect_names_both() {
    let dir = tempfile::tempdir().unwrap();
    let ros1 = sample_bag(dir.path(), "in.bag", 1);
    let ros2 = dir.path().join("ros2");
    assert_eq!(code(&run(&[&"convert", &ros1, &"-o", &ros2, &"-s", &"mcap"])), Some(0));
    let cases: [(&Path, &[&str], &str); 5] = [
        (&ros1, &["--start-paused"], "--start-paused is a flag of ros2 bag play's (--ros2)"),
        (&ros1, &["-s", "mcap"], "-s is a start offset in seconds; ros2 bag play's (--ros2) -s is the storage id"),
        (&ros2, &["-u", "3"], "-u is a flag of rosbag play's (--ros1)"),
        (&ros2, &["--keep-alive"], "--keep-alive is a flag of rosbag play's (--ros1)"),
        (&ros2, &["-s", "5"], "rosbag play's (--ros1) -s, a start offset, is --start-offset 5 here"),
    ];
    for (bag, flags, says) in cases {
        let mut c = rbag();
        c.env_remove("ROS_VERSION").arg("play").arg(bag).args(flags);
        let o = c.output().unwrap();
        assert_eq!(code(&o), Some(2), "{flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{flags:?}: {}", stderr(&o));
    }
    // Each dialect's own flags pass the check (to --help, which plays nothing).
    for (bag, flags) in [(&ros1, ["-s", "1"]), (&ros2, ["-s", "mcap"])] {
        let o = rbag().env_remove("ROS_VERSION").arg("play").arg(bag).args(flags).arg("--help").output().unwrap();
        assert_eq!(code(&o), Some(0), "{flags:?}: {}", stderr(&o));
    }
}

#[test]
fn a_regex_that_matches_nothing_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 1);
    let o = run(&[&"convert", &input, &"-o", &dir.path().join("o.bag"), &"-e", &"^/camera"]);
    assert_eq!(code(&o), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("--regex ^/camera matches no topic"), "{}", stderr(&o));
}

#[test]
fn ros_distro_humble_writes_metadata_humble_reads() {
    let Some(python) = rbag_testkit::oracle_python("ros_distro_humble_writes_metadata_humble_reads") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 1);
    let out = dir.path().join("humble");
    let o = rbag()
        .args(["convert"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .args(["-s", "sqlite3"])
        .env("ROS_DISTRO", "humble")
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("rosbag2 metadata for humble (version 5), from ROS_DISTRO"), "{}", stderr(&o));
    let check = r#"
import sys, yaml
from rosbags.rosbag2 import Reader
meta = yaml.safe_load(open(sys.argv[1] + '/metadata.yaml'))['rosbag2_bagfile_information']
with Reader(sys.argv[1]) as r:
    print(meta['version'], r.message_count, sum(1 for _ in r.messages()))
"#;
    let p = std::process::Command::new(&python).args(["-c", check]).arg(&out).output().unwrap();
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    // rosbags counts and reads every message rbag wrote.
    let got = String::from_utf8_lossy(&p.stdout).trim().to_string();
    let n = read_all(&out).len();
    assert_eq!(got, format!("5 {n} {n}"));

    // A ROS 1 distro is ignored with a note; reindex keeps version 5, or takes --ros-distro.
    let other = dir.path().join("noetic");
    let o = rbag()
        .args(["convert"])
        .arg(&input)
        .arg("-o")
        .arg(&other)
        .args(["-s", "mcap"])
        .env("ROS_DISTRO", "noetic")
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("ROS_DISTRO=noetic is not a ROS 2 distro"), "{}", stderr(&o));
    let version = |d: &Path| {
        let text = std::fs::read_to_string(d.join("metadata.yaml")).unwrap();
        text.lines().find_map(|l| l.trim().strip_prefix("version: ").map(str::to_string)).unwrap()
    };
    assert_eq!(version(&other), "9");
    let o = rbag().arg("reindex").arg(&out).env_remove("ROS_DISTRO").output().unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(version(&out), "5", "reindex keeps the version");
    let o = rbag().arg("reindex").arg(&out).args(["--ros-distro", "jazzy"]).output().unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(version(&out), "9");
}

#[test]
fn verbs_of_other_tools_point_to_rbags() {
    for (verb, pointer) in [
        ("merge", "rbag convert IN1 IN2… -o OUT"),
        ("split", "-b SIZE"),
        ("cat", "rbag echo"),
        ("check", "rbag doctor"),
    ] {
        let o = run(&[&verb, &"x.bag"]);
        assert_eq!(code(&o), Some(2), "{verb}");
        assert!(stderr(&o).contains(pointer), "{verb}: {}", stderr(&o));
    }
    // A verb rbag has is not caught (compress used to be guessed as `completions`).
    let o = run(&[&"compress", &"--help"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
}

#[test]
fn man_pages_are_generated_for_every_verb() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&[&"man", &dir.path()]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    for page in ["rbag.1", "rbag-convert.1", "rbag-filter.1", "rbag-doctor.1", "rbag-record.1"] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{page} is a man page");
    }
    let convert = std::fs::read_to_string(dir.path().join("rbag-convert.1")).unwrap();
    assert!(convert.contains("no\\-keep\\-latched") || convert.contains("no-keep-latched"), "flags are documented");
}

#[test]
fn play_picks_the_graph_from_the_bags() {
    let dir = tempfile::tempdir().unwrap();
    let ros1 = sample_bag(dir.path(), "in.bag", 1);
    let ros2 = dir.path().join("ros2");
    assert_eq!(code(&run(&[&"convert", &ros1, &"-o", &ros2, &"-s", &"mcap"])), Some(0));
    let play = |bags: &[&Path]| {
        let mut c = rbag();
        c.env_remove("ROS_VERSION").arg("play").args(bags).arg("--help");
        c.output().unwrap()
    };
    let o = play(&[&ros1]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("playing into ROS 1, as the bag is a ROS 1 bag"), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("live ROS graph"), "ROS 1 help");
    let o = play(&[&ros2]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("playing into ROS 2, as the bag is a rosbag2 bag"), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("ros2 bag play"), "ROS 2 help");
    let o = play(&[&ros1, &ros2]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--ros1 or --ros2"), "{}", stderr(&o));
}

#[test]
fn a_ros1_bag_cut_short_is_read_by_scanning() {
    let dir = tempfile::tempdir().unwrap();
    let good = sample_bag(dir.path(), "good.bag", 2);
    let bytes = std::fs::read(&good).unwrap();
    // Not `.active`: a copy interrupted, or a full disk, inside the chunk.
    let cut = dir.path().join("copied.bag");
    std::fs::write(&cut, &bytes[..bytes.len() * 6 / 10]).unwrap();
    let o = run(&[&"info", &cut]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("cut short") && stderr(&o).contains("read by scanning"), "{}", stderr(&o));
    let out = dir.path().join("saved.bag");
    let o = run(&[&"convert", &cut, &"-o", &out]);
    assert_eq!(code(&o), Some(3), "the torn tail is dropped and said: {}", stderr(&o));
    let saved = read_all(&out);
    let all = read_all(&good);
    assert!(!saved.is_empty() && saved.len() < all.len());
    assert_eq!(saved[..], all[..saved.len()], "what was saved is the bag's beginning, exactly");
}

#[test]
fn convert_splits_ros1_output_and_repeats_latched_topics() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 6);
    for repeat in [true, false] {
        let out = dir.path().join(format!("split_{repeat}.bag"));
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"convert", &input, &"-o", &out, &"-d", &"2"];
        if repeat {
            args.push(&"--repeat-latched");
        }
        let o = run(&args);
        assert_eq!(code(&o), Some(0), "{}", stderr(&o));
        assert!(stderr(&o).contains("(3 files)"), "{}", stderr(&o));
        let mut chatter = 0;
        for n in 0..3 {
            let file = dir.path().join(format!("split_{repeat}_{n}.bag"));
            let got = read_all(&file);
            let latched = got.iter().filter(|m| m.0 == "/robot_description").count();
            assert_eq!(latched, usize::from(repeat || n == 0), "file {n}, repeat {repeat}");
            let times: Vec<u64> = got.iter().filter(|m| m.0 == "/chatter").map(|m| m.1).collect();
            // A file spans at most 2 s from its first message (as rosbag and rosbag2 count).
            assert!(times.last().unwrap() - times[0] <= 2 * S, "file {n}");
            chatter += times.len();
        }
        assert_eq!(chatter, 600, "every /chatter message once");
    }
}

#[test]
fn reindex_of_a_crashed_mcap_writes_the_recovered_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 3);
    let whole = dir.path().join("whole.mcap");
    assert_eq!(code(&run(&[&"convert", &input, &"-o", &whole])), Some(0));
    let bytes = std::fs::read(&whole).unwrap();
    let crashed = dir.path().join("crashed.mcap");
    std::fs::write(&crashed, &bytes[..bytes.len() / 2]).unwrap();
    let o = run(&[&"reindex", &crashed]);
    assert_eq!(code(&o), Some(3), "the torn tail is said: {}", stderr(&o));
    assert!(stderr(&o).contains("original kept as") && stderr(&o).contains("crashed.orig.mcap"), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.path().join("crashed.orig.mcap")).unwrap(), &bytes[..bytes.len() / 2]);
    // The rewritten file is complete: it has a summary, and holds the beginning of the bag.
    let o = run(&[&"info", &crashed]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("scanned"), "{}", stderr(&o));
    let got = read_all(&crashed);
    let all = read_all(&whole);
    assert!(!got.is_empty() && got.len() < all.len());
    assert_eq!(got[..], all[..got.len()]);
    // A complete file is left as it is.
    let o = run(&[&"reindex", &whole]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("left unchanged"), "{}", stderr(&o));
    assert!(!dir.path().join("whole.orig.mcap").exists());
    assert_eq!(std::fs::read(&whole).unwrap(), bytes);
}

/// On a terminal (a pty from `script`), a long job's bar counts bytes, with a byte rate and an
/// ETA, and never shows `0/0`; off a terminal nothing is drawn.
#[test]
fn the_progress_bar_counts_bytes_with_rate_and_eta() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 20);
    let out = dir.path().join("out.mcap");
    let command = format!("{} convert {} -o {}", env!("CARGO_BIN_EXE_rbag"), input.display(), out.display());
    let o = std::process::Command::new("script").args(["-qec", &command, "/dev/null"]).output().unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let shown = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(shown.contains("KiB/") || shown.contains("MiB/"), "no byte counts: {shown:?}");
    assert!(shown.contains("/s, eta "), "no rate and ETA: {shown:?}");
    assert!(!shown.contains(" 0/0 "), "a bar at 0/0: {shown:?}");
    let o = run(&[&"convert", &input, &"-o", &dir.path().join("quiet.mcap")]);
    assert_eq!(code(&o), Some(0));
    assert!(!stderr(&o).contains("eta"), "{}", stderr(&o));
}
