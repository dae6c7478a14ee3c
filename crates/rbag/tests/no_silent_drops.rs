//! Issue 13, D3: a message on a connection, channel or topic id that the bag never declares is
//! an error naming the file and where the message is; under `--lenient` it is read on a
//! stand-in topic, counted, and the run exits 3. `info` counts and lists such messages. What
//! the user's own selection leaves out is never an error or a drop.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use rbag_storage::ros1::record::{time_to_bytes, write_record};
use rbag_storage::{Connection, Format};

const MD5_STRING: &str = "992ce8a1687cec8c8bd883ec73ca41d1";

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// No panic, and not a crash by signal.
fn assert_sane(o: &Output) {
    let err = stderr(o);
    assert!(!err.contains("panicked at"), "{err}");
    assert!(o.status.code().is_some(), "killed by a signal: {err}");
}

/// Exit 3 with `needles` on stderr.
fn assert_lenient(o: &Output, needles: &[&str]) {
    assert_sane(o);
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(3), "exit code; stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr should say {n:?}: {err}");
    }
}

/// (topic, log time, payload) of every message of a bag, through rbag's own reader.
fn messages(path: &Path) -> Vec<(String, u64, Vec<u8>)> {
    read_all(path)
}

fn ros1_string(s: &str) -> Vec<u8> {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

/// A connection record of `id` on `topic` (std_msgs/String).
fn connection_record(out: &mut Vec<u8>, id: u32, topic: &str) {
    let mut body = Vec::new();
    for (k, v) in
        [("topic", topic), ("type", "std_msgs/String"), ("md5sum", MD5_STRING), ("message_definition", "string data\n")]
    {
        body.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
        body.extend_from_slice(k.as_bytes());
        body.push(b'=');
        body.extend_from_slice(v.as_bytes());
    }
    write_record(out, &[("op", &[0x07]), ("conn", &id.to_le_bytes()), ("topic", topic.as_bytes())], &body);
}

/// The defect's ROS 1 bag, written record by record: one uncompressed chunk with a message on
/// connection 0 (/chatter, declared) and one on connection 5, which no connection record
/// declares; its index data and chunk info list both.
fn ros1_bag_with_undeclared_connection(path: &Path) {
    let (t0, t1) = (START, START + 1_000_000);
    let mut chunk = Vec::new();
    connection_record(&mut chunk, 0, "/chatter");
    let off0 = chunk.len() as u32;
    write_record(
        &mut chunk,
        &[("op", &[0x02]), ("conn", &0u32.to_le_bytes()), ("time", &time_to_bytes(t0).unwrap())],
        &ros1_string("hello"),
    );
    let off1 = chunk.len() as u32;
    write_record(
        &mut chunk,
        &[("op", &[0x02]), ("conn", &5u32.to_le_bytes()), ("time", &time_to_bytes(t1).unwrap())],
        &ros1_string("undeclared"),
    );

    let mut file = rbag_storage::ros1::MAGIC.to_vec();
    let header_at = file.len();
    let bag_header = |index_pos: u64| {
        let mut h = Vec::new();
        let fields: [(&str, &[u8]); 4] = [
            ("op", &[0x03]),
            ("index_pos", &index_pos.to_le_bytes()),
            ("conn_count", &1u32.to_le_bytes()),
            ("chunk_count", &1u32.to_le_bytes()),
        ];
        write_record(&mut h, &fields, &[]);
        // Padded to 4104 bytes as rosbag writes it.
        let pad = 4104 - h.len();
        h.clear();
        write_record(&mut h, &fields, &vec![b' '; pad]);
        h
    };
    file.extend_from_slice(&bag_header(0));
    let chunk_pos = file.len() as u64;
    write_record(
        &mut file,
        &[("op", &[0x05]), ("compression", b"none"), ("size", &(chunk.len() as u32).to_le_bytes())],
        &chunk,
    );
    for (conn, t, off) in [(0u32, t0, off0), (5, t1, off1)] {
        let mut data = time_to_bytes(t).unwrap().to_vec();
        data.extend_from_slice(&off.to_le_bytes());
        write_record(
            &mut file,
            &[
                ("op", &[0x04]),
                ("ver", &1u32.to_le_bytes()),
                ("conn", &conn.to_le_bytes()),
                ("count", &1u32.to_le_bytes()),
            ],
            &data,
        );
    }
    let index_pos = file.len() as u64;
    connection_record(&mut file, 0, "/chatter");
    let mut counts = Vec::new();
    for conn in [0u32, 5] {
        counts.extend_from_slice(&conn.to_le_bytes());
        counts.extend_from_slice(&1u32.to_le_bytes());
    }
    write_record(
        &mut file,
        &[
            ("op", &[0x06]),
            ("ver", &1u32.to_le_bytes()),
            ("chunk_pos", &chunk_pos.to_le_bytes()),
            ("start_time", &time_to_bytes(t0).unwrap()),
            ("end_time", &time_to_bytes(t1).unwrap()),
            ("count", &2u32.to_le_bytes()),
        ],
        &counts,
    );
    let header = bag_header(index_pos);
    file[header_at..header_at + header.len()].copy_from_slice(&header);
    std::fs::write(path, file).unwrap();
}

/// A `.db3` written by rbag, with one more row whose `topic_id` (77) the topics table lacks.
fn db3_with_undeclared_topic(path: &Path) {
    let mut w = rbag_storage::create(path, Format::Sqlite3, &Default::default()).unwrap();
    let conn = Connection {
        topic: "/chatter".into(),
        message_type: "std_msgs/msg/String".into(),
        encoding: "cdr".into(),
        ..Connection::default()
    };
    let id = w.add_connection(&conn).unwrap();
    let cdr = |s: &str| {
        let mut v = vec![0, 1, 0, 0];
        v.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        v
    };
    w.write(id, START, START, &cdr("hello")).unwrap();
    w.write(id, START + 2_000_000, START + 2_000_000, &cdr("after")).unwrap();
    w.finish().unwrap();
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute(
        "INSERT INTO messages (topic_id, timestamp, data) VALUES (77, ?1, ?2)",
        rusqlite::params![(START + 1_000_000) as i64, cdr("undeclared")],
    )
    .unwrap();
}

/// Where the IndexData records after the first chunk of a ROS 1 bag are: (file offset of the
/// `conn` value, connection id) of each.
fn index_data_conn_fields(bag: &[u8]) -> Vec<(usize, u32)> {
    let u32_at = |at: usize| u32::from_le_bytes(bag[at..at + 4].try_into().unwrap());
    let fields = |at: usize, len: usize| {
        let mut out = Vec::new();
        let mut p = at;
        while p < at + len {
            let n = u32_at(p) as usize;
            let f = &bag[p + 4..p + 4 + n];
            let eq = f.iter().position(|&b| b == b'=').unwrap();
            out.push((String::from_utf8_lossy(&f[..eq]).into_owned(), p + 4 + eq + 1));
            p += 4 + n;
        }
        out
    };
    let mut pos = rbag_storage::ros1::MAGIC.len();
    let mut found = Vec::new();
    let mut seen_chunk = false;
    while pos + 4 <= bag.len() {
        let hl = u32_at(pos) as usize;
        let hdr = fields(pos + 4, hl);
        let op = hdr.iter().find(|(k, _)| k == "op").map(|(_, at)| bag[*at]).unwrap();
        let dl = u32_at(pos + 4 + hl) as usize;
        match op {
            0x05 if seen_chunk => break,
            0x05 => seen_chunk = true,
            0x04 if seen_chunk => {
                let at = hdr.iter().find(|(k, _)| k == "conn").unwrap().1;
                found.push((at, u32_at(at)));
            }
            _ => {}
        }
        pos += 8 + hl + dl;
    }
    found
}

/// `multi_lz4.bag` (connections 0 to 9) with the connection id in the index data of /chatter's
/// messages changed to 42, which the bag never declares: rbag once converted 442 of its 736
/// messages with exit 0.
fn multi_lz4_with_undeclared_connection(test: &str, dir: &Path) -> Option<PathBuf> {
    let src = rbag_testkit::corpus(test, "ros1")?.join("multi_lz4.bag");
    let chatter = rbag_storage::open(&src).unwrap().connections().iter().find(|c| c.topic == "/chatter").unwrap().id;
    let mut bag = std::fs::read(&src).unwrap();
    let (at, _) =
        *index_data_conn_fields(&bag).iter().find(|(_, c)| *c == chatter).expect("an index data record of /chatter");
    bag[at..at + 4].copy_from_slice(&42u32.to_le_bytes());
    let path = dir.join("multi_lz4.bag");
    std::fs::write(&path, bag).unwrap();
    Some(path)
}

/// The corpus's `ros2/mcap/talker` file with one byte of /topic's summary Channel record
/// flipped, so that its messages name channel 3, which the summary never declares.
fn talker_mcap_with_flipped_channel_id(test: &str, dir: &Path) -> Option<(PathBuf, u64)> {
    let src = rbag_testkit::corpus(test, "ros2/mcap/talker")?.join("talker.mcap");
    let reader = rbag_storage::open(&src).unwrap();
    let topic = reader.connections().iter().find(|c| c.topic == "/topic").unwrap().id;
    let count = reader.info().unwrap().connections[&topic].message_count;
    let mut bag = std::fs::read(&src).unwrap();
    // Walk the top-level records to the summary's Channel record of /topic.
    let mut pos = 8;
    let mut patched = false;
    while pos + 9 <= bag.len() - 8 {
        let op = bag[pos];
        let len = u64::from_le_bytes(bag[pos + 1..pos + 9].try_into().unwrap()) as usize;
        let body = pos + 9;
        if op == 0x04 && u16::from_le_bytes([bag[body], bag[body + 1]]) as u32 == topic {
            bag[body] ^= 0x80;
            patched = true;
        }
        pos = body + len;
    }
    assert!(patched, "talker.mcap has a Channel record for /topic");
    let path = dir.join("talker.mcap");
    std::fs::write(&path, bag).unwrap();
    Some((path, count))
}

#[test]
fn ros1_message_on_undeclared_connection() {
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("undeclared.bag");
    ros1_bag_with_undeclared_connection(&bag);
    let name = bag.display().to_string();

    // info counts and lists it.
    let o = run(&[&"info", &bag]);
    assert_sane(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = out(&o);
    assert!(text.contains("messages:     2"), "{text}");
    assert!(text.contains("undeclared:") && text.contains("1 message on connection 5"), "{text}");
    let o = run(&[&"info", &"--json", &bag]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["message_count"], 2);
    assert_eq!(json["undeclared"], serde_json::json!([{"connection": 5, "message_count": 1}]));

    // Strict: an error with the file and the place.
    for args in [vec!["echo"], vec!["echo", "--json"]] {
        let mut a: Vec<&dyn AsRef<std::ffi::OsStr>> = args.iter().map(|s| s as &dyn AsRef<std::ffi::OsStr>).collect();
        a.push(&bag);
        let o = run(&a);
        assert_clear_error(&o, &[&name, "offset", "connection 5", "never declares"]);
    }
    let o = run(&[&"convert", &bag, &"-o", &dir.path().join("strict.mcap")]);
    assert_clear_error(&o, &[&name, "offset", "connection 5", "never declares"]);

    // Lenient: read on a stand-in topic, counted, exit 3.
    let o = run(&[&"echo", &"--lenient", &"--json", &bag]);
    assert_lenient(&o, &["1 message on connection 5", "never declares"]);
    assert!(out(&o).contains("hello"), "{}", out(&o));
    let mcap = dir.path().join("lenient.mcap");
    let o = run(&[&"convert", &"--lenient", &bag, &"-o", &mcap]);
    assert_lenient(&o, &["1 message on connection 5"]);
    let got = messages(&mcap);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[1], ("/rbag/undeclared/5".to_string(), START + 1_000_000, ros1_string("undeclared")), "kept raw");
    // A ROS 1 bag cannot hold a message with no type: skipped, and said.
    let ros1 = dir.path().join("lenient.bag");
    let o = run(&[&"convert", &"--lenient", &bag, &"-o", &ros1]);
    assert_lenient(&o, &["skipped 1 messages on /rbag/undeclared/5"]);
    assert_eq!(messages(&ros1).len(), 1);

    // The user's own selection leaves it out: no error, no exit 3.
    let o = run(&[&"echo", &bag, &"/chatter"]);
    assert_sane(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let sel = dir.path().join("selected.bag");
    let o = run(&[&"convert", &bag, &"-o", &sel, &"--topics", &"/chatter"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(messages(&sel).len(), 1);
    let o = run(&[&"convert", &bag, &"-o", &dir.path().join("window.bag"), &"--end", &format!("{}ns", START + 1)]);
    assert_eq!(o.status.code(), Some(0), "a time window that leaves it out: {}", stderr(&o));
}

#[test]
fn db3_row_of_undeclared_topic_id() {
    let dir = tempfile::tempdir().unwrap();
    let db3 = dir.path().join("undeclared.db3");
    db3_with_undeclared_topic(&db3);
    let name = db3.display().to_string();

    let o = run(&[&"info", &"--json", &db3]);
    assert_sane(&o);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    assert_eq!(json["message_count"], 3);
    assert_eq!(json["undeclared"], serde_json::json!([{"connection": 77, "message_count": 1}]));

    let o = run(&[&"echo", &db3]);
    assert_clear_error(&o, &[&name, "row id 3", "topic id 77", "never declares"]);
    let o = run(&[&"convert", &db3, &"-o", &dir.path().join("strict.mcap")]);
    assert_clear_error(&o, &[&name, "row id 3", "topic id 77"]);

    let mcap = dir.path().join("lenient.mcap");
    let o = run(&[&"convert", &"--lenient", &db3, &"-o", &mcap]);
    assert_lenient(&o, &["1 message on topic id 77"]);
    let got = messages(&mcap);
    assert_eq!(got.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["/chatter", "/rbag/undeclared/77", "/chatter"]);
    let o = run(&[&"echo", &"--lenient", &db3]);
    assert_lenient(&o, &["1 message on topic id 77"]);

    let o = run(&[&"echo", &db3, &"/chatter"]);
    assert_eq!(o.status.code(), Some(0), "a topic selection leaves it out: {}", stderr(&o));
}

#[test]
fn real_ros1_bag_with_a_changed_connection_id() {
    let dir = tempfile::tempdir().unwrap();
    let Some(bag) = multi_lz4_with_undeclared_connection("real_ros1_bag_with_a_changed_connection_id", dir.path())
    else {
        return;
    };
    let name = bag.display().to_string();

    let o = run(&[&"convert", &bag, &"-o", &dir.path().join("strict.bag")]);
    assert_clear_error(&o, &[&name, "offset", "connection 42", "never declares"]);
    let o = run(&[&"echo", &bag]);
    assert_clear_error(&o, &[&name, "offset", "connection 42"]);

    let o = run(&[&"info", &"--lenient", &"--json", &bag]);
    assert_sane(&o);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["message_count"], 736);
    assert_eq!(json["undeclared"], serde_json::json!([{"connection": 42, "message_count": 294}]));

    let mcap = dir.path().join("lenient.mcap");
    let o = run(&[&"convert", &"--lenient", &bag, &"-o", &mcap, &"--encoding", &"ros1"]);
    assert_lenient(&o, &["294 messages on connection 42"]);
    let got = messages(&mcap);
    assert_eq!(got.len(), 736, "nothing is dropped");
    assert_eq!(got.iter().filter(|m| m.0 == "/rbag/undeclared/42").count(), 294);
}

#[test]
fn real_mcap_with_a_flipped_channel_id() {
    let dir = tempfile::tempdir().unwrap();
    let Some((mcap, count)) = talker_mcap_with_flipped_channel_id("real_mcap_with_a_flipped_channel_id", dir.path())
    else {
        return;
    };
    assert!(count > 0);
    let name = mcap.display().to_string();

    let o = run(&[&"info", &"--json", &mcap]);
    assert_sane(&o);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["undeclared"], serde_json::json!([{"connection": 3, "message_count": count}]));

    let o = run(&[&"echo", &mcap]);
    assert_clear_error(&o, &[&name, "offset", "channel 3", "never declares"]);
    let o = run(&[&"convert", &mcap, &"-o", &dir.path().join("strict.mcap")]);
    assert_clear_error(&o, &[&name, "offset", "channel 3"]);

    let copy = dir.path().join("lenient.mcap");
    let o = run(&[&"convert", &"--lenient", &mcap, &"-o", &copy]);
    assert_lenient(&o, &[&format!("{count} messages on channel 3")]);
    let got = messages(&copy);
    assert_eq!(got.iter().filter(|m| m.0 == "/rbag/undeclared/3").count() as u64, count);
    assert_eq!(got.len() as u64, rbag_storage::open(&mcap).unwrap().info().unwrap().message_count);
}

/// A torn tail (a killed recorder's `.bag.active`, an MCAP file cut short) is data rbag cannot
/// give: `echo` and `convert` read what is whole, say what was dropped, and exit 3; `info`
/// warns and exits 0.
#[test]
fn a_torn_tail_is_reported_as_dropped() {
    let dir = tempfile::tempdir().unwrap();
    // A ROS 1 bag cut inside its last chunk, as a killed recorder leaves it.
    let bag = sample_bag(dir.path(), "whole.bag", 10);
    let mut bytes = std::fs::read(&bag).unwrap();
    // A recorder writes index_pos 0 until it closes the bag.
    let at = bytes.windows(10).position(|w| w == b"index_pos=").unwrap() + 10;
    bytes[at..at + 8].fill(0);
    let torn = dir.path().join("cut.bag.active");
    std::fs::write(&torn, &bytes[..bytes.len() * 6 / 10]).unwrap();
    // An MCAP file cut inside its data.
    let mcap = dir.path().join("whole.mcap");
    assert!(run(&[&"convert", &bag, &"-o", &mcap]).status.success());
    let bytes = std::fs::read(&mcap).unwrap();
    let cut_mcap = dir.path().join("cut.mcap");
    std::fs::write(&cut_mcap, &bytes[..bytes.len() * 6 / 10]).unwrap();
    for input in [&torn, &cut_mcap] {
        let name = input.file_name().unwrap().to_str().unwrap();
        let o = run(&[&"echo", input, &"--json"]);
        assert_lenient(&o, &["dropped:", name]);
        assert!(!out(&o).is_empty());
        let o = run(&[&"convert", input, &"-o", &dir.path().join(format!("{name}.out.mcap"))]);
        assert_lenient(&o, &["dropped:", name]);
        let o = run(&[&"info", input]);
        assert_sane(&o);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
        // Stopping before the tail drops nothing.
        let o = run(&[&"echo", input, &"-n", &"1"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}
