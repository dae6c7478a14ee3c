//! The codecs over every message of every corpus bag: decoding and encoding back gives the
//! identical bytes, and the one-pass transcoder agrees with the tree path.

use std::path::{Path, PathBuf};

use rbag_bag::decode::{Decoders, TypeSources};
use rbag_bag::transcode::{self, ConnectionPlan, Targets};
use rbag_msg::store::{self, Distro};
use rbag_msg::{Dialect, Encoding, Registry};
use rbag_storage::Filter;

fn sources() -> TypeSources {
    let mut ros2 = Registry::new(Dialect::Ros2);
    let test_msgs = Path::new("/usr/share/test_interface_files");
    if test_msgs.is_dir() {
        rbag_msg::msg_path::load_as(&mut ros2, test_msgs, "test_msgs").unwrap();
    }
    ros2.fill_from(store::registry(Distro::Jazzy));
    TypeSources::new(store::registry(Distro::Noetic).clone(), ros2)
}

fn bags(root: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for sub in ["ros1", "ros2/mcap", "ros2/sqlite3"] {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(root.join(sub)).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        v.extend(entries);
    }
    v
}

#[test]
fn every_corpus_message_round_trips_to_identical_bytes() {
    let test = "every_corpus_message_round_trips_to_identical_bytes";
    let Some(root) = rbag_testkit::corpus(test, "") else { return };
    let mut checked = 0;
    let mut padding_differs = 0;
    let mut undecodable = Vec::new();
    for bag in bags(&root) {
        let Ok(reader) = rbag_storage::open(&bag) else { continue };
        let mut decoders = Decoders::new(sources());
        for m in reader.messages(&Filter::default()).unwrap() {
            let m = m.unwrap();
            let c = reader.connection(m.connection).unwrap();
            let (schema, value) = match decoders.decode(c, m.log_time, &m.data) {
                Ok(d) => d,
                Err(e) => {
                    undecodable.push(format!("{}: {e}", bag.display()));
                    continue;
                }
            };
            let encoding = if c.encoding == "ros1" { Encoding::Ros1 } else { Encoding::Cdr };
            let big_endian = encoding == Encoding::Cdr && m.data.get(1) == Some(&0);
            let mut out = Vec::new();
            rbag_msg::encode(&schema, &value, encoding, big_endian, &mut out).unwrap();
            let what = format!("{} {} at {}", bag.display(), c.topic, m.log_time);
            if out[..] != m.data[..] {
                assert_eq!(encoding, Encoding::Cdr, "{what}: ROS 1 bytes differ");
                assert_only_padding_differs(&m.data, &out, &what);
                padding_differs += 1;
            }
            checked += 1;
        }
    }
    assert!(undecodable.is_empty(), "{undecodable:#?}");
    assert!(checked > 10_000, "{checked}");
    eprintln!("{checked} corpus messages round-trip; {padding_differs} CDR ones differ only in alignment padding their writer left uninitialised");
}

/// rmw leaves CDR alignment padding (and the final padding to 4 bytes) uninitialised, and rbag
/// writes zeros there. Every differing byte must be a zero in rbag's output, and the input with
/// those bytes zeroed must be exactly rbag's output.
fn assert_only_padding_differs(input: &[u8], out: &[u8], what: &str) {
    assert!(
        input.len() >= out.len() && input.len() - out.len() <= 3,
        "{what}: {} bytes in, {} out",
        input.len(),
        out.len()
    );
    let mut zeroed = input[..out.len()].to_vec();
    for (i, b) in zeroed.iter_mut().enumerate() {
        if *b != out[i] {
            assert_eq!(out[i], 0, "{what}: byte {i} differs and is not padding");
            *b = 0;
        }
    }
    assert_eq!(zeroed, out, "{what}");
}

/// The one-pass transcoder gives the same bytes as decode → plan → encode, for every corpus
/// message converted to the other dialect (ROS 1 → CDR and CDR → ROS 1).
#[test]
fn streaming_transcoder_equals_decode_then_encode() {
    let test = "streaming_transcoder_equals_decode_then_encode";
    let Some(root) = rbag_testkit::corpus(test, "") else { return };
    let targets = Targets {
        standard: TypeSources::new(store::registry(Distro::Noetic).clone(), store::registry(Distro::Humble).clone()),
        ..Targets::default()
    };
    let (mut checked, mut skipped) = (0, 0);
    for bag in bags(&root) {
        let Ok(reader) = rbag_storage::open(&bag) else { continue };
        let mut decoders = Decoders::new(sources());
        let mut plans = std::collections::HashMap::new();
        for c in reader.connections() {
            let out = if c.encoding == "ros1" { "cdr" } else { "ros1" };
            let first = reader
                .messages(&Filter { topics: vec![c.topic.clone()], ..Filter::default() })
                .unwrap()
                .next()
                .map(|m| m.unwrap().data.to_vec());
            let plan = transcode::plan(c, out, first.as_deref(), &mut decoders, &targets)
                .unwrap_or_else(|e| panic!("{}: {e}", bag.display()));
            plans.insert(c.id, plan);
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for m in reader.messages(&Filter::default()).unwrap() {
            let m = m.unwrap();
            let ConnectionPlan::Rewrite(rw) = &plans[&m.connection] else {
                skipped += 1;
                continue;
            };
            assert!(rw.is_streamable(), "{}", rw.target.topic);
            rw.apply(&mut decoders, m.log_time, &m.data, &mut a).unwrap();
            rw.apply_tree(&mut decoders, m.log_time, &m.data, &mut b).unwrap();
            assert_eq!(a, b, "{} {} at {}", bag.display(), rw.target.topic, m.log_time);
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked}");
    eprintln!("{checked} corpus messages transcoded alike both ways; {skipped} service events have no ROS 1 type");
}
