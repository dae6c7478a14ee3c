//! `rbag echo` with rostopic's habits (issue 18): `/`-separated field paths and relative topic
//! names, an index past an array's end said once per topic, slices, `--noarr`/`--nostr`,
//! truncated arrays that say their length, and NaN in JSON. Each test checks the exit code and
//! the message.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{run, sample_bag, stderr, START};
use rbag_storage::Format;
use rbag_testkit::corpus;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The ROS 1 corpus bag with /imu, /tf, /camera/image_raw, /array and /chatter.
fn multi(test: &str) -> Option<PathBuf> {
    let bag = corpus(test, "ros1")?.join("multi_none.bag");
    if bag.exists() {
        Some(bag)
    } else {
        rbag_testkit::skip(test, "corpus ros1/multi_none.bag is absent");
        None
    }
}

/// A ROS 1 bag of `std_msgs/Float64` on /value with these values, 10 ms apart, and
/// `std_msgs/String` on each of `strings`.
fn bag(path: &Path, values: &[f64], strings: &[&str]) -> PathBuf {
    bag_at(path, START, values, strings)
}

/// [`bag`], its first message at `start`.
fn bag_at(path: &Path, start: u64, values: &[f64], strings: &[&str]) -> PathBuf {
    let mut w = rbag_storage::create(path, Format::Ros1, &Default::default()).unwrap();
    let id = w.add_connection(&rbag_testkit::sample::float64_connection("/value")).unwrap();
    let mut time = start;
    for v in values {
        w.write(id, time, time, &v.to_le_bytes()).unwrap();
        time += 10_000_000;
    }
    for topic in strings {
        let id = w.add_connection(&rbag_testkit::sample::string_connection(Format::Ros1, topic)).unwrap();
        let mut p = 2u32.to_le_bytes().to_vec();
        p.extend_from_slice(b"hi");
        w.write(id, time, time, &p).unwrap();
        time += 10_000_000;
    }
    w.finish().unwrap();
    path.to_path_buf()
}

#[test]
fn rostopic_style_field_paths_and_relative_topic_names() {
    let Some(b) = multi("rostopic_style_field_paths_and_relative_topic_names") else { return };
    let dotted = run(&[&"echo", &b, &"/imu.linear_acceleration.z", &"-n", &"3"]);
    assert_eq!(dotted.status.code(), Some(0), "{}", stderr(&dotted));
    assert!(stdout(&dotted).starts_with("9.81\n---\n"), "{}", stdout(&dotted));
    for arg in ["/imu/linear_acceleration/z", "imu/linear_acceleration/z", "imu.linear_acceleration.z"] {
        let o = run(&[&"echo", &b, &arg, &"-n", &"3"]);
        assert_eq!(o.status.code(), Some(0), "{arg}: {}", stderr(&o));
        assert_eq!(stdout(&o), stdout(&dotted), "{arg}");
    }
    // A relative name, and one in a namespace (`image_raw` is /camera/image_raw).
    let o = run(&[&"echo", &b, &"chatter", &"-n", &"1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("data: 'hello"), "{}", stdout(&o));
    let o = run(&[&"echo", &b, &"image_raw/height", &"-n", &"1"]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "48\n---\n"), "{}", stderr(&o));
    // An index inside a rostopic-style path.
    let o = run(&[&"echo", &b, &"/tf/transforms[0]/child_frame_id", &"-n", &"1"]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "'base_link'\n---\n"), "{}", stderr(&o));
    // A field the type lacks still names the type's fields.
    let o = run(&[&"echo", &b, &"/imu/linear_acceleration/w"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("has no field \"w\" (it has: x, y, z)"), "{}", stderr(&o));
}

#[test]
fn a_name_two_topics_fit_is_a_usage_error_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let b = bag(&dir.path().join("ns.bag"), &[1.0], &["/left/status", "/right/status"]);
    let o = run(&[&"echo", &b, &"status"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("status fits several topics: /left/status, /right/status"), "{err}");
    // Named in full, each is fine; a name nothing fits stays an error naming what exists.
    let o = run(&[&"echo", &b, &"left/status"]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "data: 'hi'\n---\n"), "{}", stderr(&o));
    let o = run(&[&"echo", &b, &"/nothing"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no topic /nothing"), "{}", stderr(&o));
}

#[test]
fn an_index_past_the_end_is_said_once_per_topic_with_the_length() {
    let Some(b) = multi("an_index_past_the_end_is_said_once_per_topic_with_the_length") else { return };
    let o = run(&[&"echo", &b, &"/tf.transforms[5]"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    assert_eq!(err.matches("past the end").count(), 1, "{err}");
    assert!(
        err.contains("/tf: index [5] is past the end of transforms (length 2); 29 message(s) printed nothing"),
        "{err}"
    );
    // In range, nothing is said.
    let o = run(&[&"echo", &b, &"/tf.transforms[1]", &"-n", &"1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("past the end"));
}

#[test]
fn array_slices_in_field_paths() {
    let Some(b) = multi("array_slices_in_field_paths") else { return };
    let o = run(&[&"echo", &b, &"/tf.transforms[*].child_frame_id", &"-n", &"1"]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "- 'base_link'\n- 'laser'\n---\n"), "{}", stderr(&o));
    let o = run(&[&"echo", &b, &"/tf.transforms[-1].child_frame_id", &"-n", &"1"]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "'laser'\n---\n"), "{}", stderr(&o));
    let o = run(&[&"echo", &b, &"/array.data[1:3]", &"-n", &"1", &"--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).ends_with(",\"message\":[50.0,-100.0]}\n"), "{}", stdout(&o));
    // A slice past the end is empty, as Python's.
    let o = run(&[&"echo", &b, &"/array.data[10:]", &"-n", &"1"]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "[]\n---\n"), "{}", stderr(&o));
    let o = run(&[&"echo", &b, &"/array.data[1:x]"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad slice bound \"x\""), "{}", stderr(&o));
}

#[test]
fn noarr_and_nostr_print_placeholders() {
    let Some(b) = multi("noarr_and_nostr_print_placeholders") else { return };
    for flag in ["--noarr", "--no-arr"] {
        let o = run(&[&"echo", &b, &"/camera/image_raw", &"-n", &"1", &flag]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("\ndata: '<array type: uint8, length: 9216>'\n"), "{flag}: {}", stdout(&o));
        assert!(stdout(&o).contains("encoding: 'rgb8'"), "{}", stdout(&o));
    }
    let o = run(&[&"echo", &b, &"/tf", &"-n", &"1", &"--noarr"]);
    assert!(
        stdout(&o).contains("transforms: '<array type: geometry_msgs/TransformStamped, length: 2>'"),
        "{}",
        stdout(&o)
    );
    for flag in ["--nostr", "--no-str"] {
        let o = run(&[&"echo", &b, &"/camera/image_raw", &"-n", &"1", &flag, &"-l", &"2"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("encoding: '<string length: 4>'"), "{flag}: {}", stdout(&o));
    }
}

#[test]
fn a_truncated_array_says_its_length() {
    let Some(b) = multi("a_truncated_array_says_its_length") else { return };
    let o = run(&[&"echo", &b, &"/camera/image_raw.data", &"-n", &"1", &"-l", &"3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 5, "{out}");
    assert!(out.ends_with("- '... (9216 items)'\n---\n"), "{out}");
    let o = run(&[&"echo", &b, &"/camera/image_raw.data", &"-n", &"1", &"-f"]);
    assert!(!stdout(&o).contains("items)"));
}

#[test]
fn json_writes_nan_and_infinity_as_strings() {
    let dir = tempfile::tempdir().unwrap();
    let b = bag(&dir.path().join("nan.bag"), &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1.5], &[]);
    let o = run(&[&"echo", &b, &"/value", &"--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let data: Vec<String> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["message"]["data"].to_string())
        .collect();
    assert_eq!(data, ["\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "1.5"]);
    let o = run(&[&"echo", &b, &"/value.data", &"--json", &"--json-nan-null"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("\"message\":null").count(), 3, "{}", stdout(&o));
    // The flag only means something with --json.
    let o = run(&[&"echo", &b, &"--json-nan-null"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn several_bags_are_merged_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = bag_at(&dir.path().join("a.bag"), START, &[1.0, 2.0], &[]);
    let b = bag_at(&dir.path().join("b.bag"), START + 5_000_000, &[10.0, 20.0], &["/only_in_b"]);
    let merged = "1.0\n---\n10.0\n---\n2.0\n---\n20.0\n---\n";
    let o = run(&[&"echo", &a, &b, &"/value.data"]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), merged), "{}", stderr(&o));
    // Topics may come before bags; -i names a bag whatever it looks like.
    let o = run(&[&"echo", &"value/data", &"-i", &a, &"-i", &b]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), merged), "{}", stderr(&o));
    // A topic one bag lacks is read from the other.
    let o = run(&[&"echo", &a, &b, &"/only_in_b"]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "data: 'hi'\n---\n"), "{}", stderr(&o));
    let o = run(&[&"echo", &a, &b, &"/nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no input has topic /nope (they have: /only_in_b, /value)"), "{}", stderr(&o));
    // With no bag among them, the first is opened as one, and says why it is not.
    let missing = dir.path().join("missing.bag");
    let o = run(&[&"echo", &missing, &"/value"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing.bag"), "{}", stderr(&o));
}

#[test]
fn csv_of_several_types_wide_or_long_with_a_time_format() {
    let dir = tempfile::tempdir().unwrap();
    let b = sample_bag(dir.path(), "sample.bag", 1);
    // Plain --csv of mixed types is the wide table too.
    let wide = run(&[&"echo", &b, &"/speed", &"/point", &"--csv-wide", &"-n", &"3"]);
    let plain = run(&[&"echo", &b, &"/speed", &"/point", &"--csv", &"-n", &"3"]);
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    assert_eq!(stdout(&plain), stdout(&wide));
    let o = run(&[&"echo", &b, &"/speed", &"/point", &"--csv-wide", &"-n", &"3", &"--time-format", &"s"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "log_time,topic,data,x,y,z", "{lines:?}");
    assert_eq!(lines[1], "1700000000.000000000,/speed,0.0,,,", "{lines:?}");
    assert!(lines[2].starts_with("1700000000.000000000,/point,,0.0,"), "{lines:?}");
    assert_eq!(lines[3], "1700000000.020000000,/speed,0.25,,,", "{lines:?}");
    let o = run(&[&"echo", &b, &"/speed", &"/point", &"--csv-long", &"-n", &"2", &"--time-format", &"rel"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "log_time,topic,field,value", "{lines:?}");
    assert_eq!(lines[1], "0.000000000,/speed,data,0.0", "{lines:?}");
    assert_eq!(lines[2], "0.000000000,/point,x,0.0", "{lines:?}");
    assert_eq!(lines.len(), 5, "{lines:?}");
    let o = run(&[&"echo", &b, &"/speed", &"--csv", &"-n", &"1", &"--time-format", &"iso"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "log_time,topic,data\n2023-11-14T22:13:20.000000000Z,/speed,0.0\n");
    let o = run(&[&"echo", &b, &"/speed", &"--csv", &"--time-format", &"minutes"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn service_names_echo_their_requests_and_responses() {
    let Some(dir) = rbag_testkit::corpus("service_names_echo_their_requests_and_responses", "ros2") else { return };
    let bag = dir.join("mcap/bag_with_topics_and_service_events");
    // `info` lists /test_service1 as a service; echo takes the same name.
    let o = run(&[&"echo", &bag, &"/test_service1", &"--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let events: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.len(), 4);
    assert!(events.iter().all(|e| e["topic"] == "/test_service1/_service_event"));
    assert!(events.iter().any(|e| !e["message"]["request"].as_array().unwrap().is_empty()));
    assert!(events.iter().any(|e| !e["message"]["response"].as_array().unwrap().is_empty()));
    // A field path after the service name.
    let o = run(&[&"echo", &bag, &"test_service1.info.event_type", &"-n", &"1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim().trim_end_matches("---").trim(), "0");
}
