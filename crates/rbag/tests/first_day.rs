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
}

#[test]
fn a_regex_that_matches_nothing_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_bag(dir.path(), "in.bag", 1);
    let o = run(&[&"convert", &input, &"-o", &dir.path().join("o.bag"), &"-e", &"^/camera"]);
    assert_eq!(code(&o), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("--regex ^/camera matches no topic"), "{}", stderr(&o));
}
