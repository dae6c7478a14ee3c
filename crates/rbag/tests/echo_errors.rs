//! `rbag echo` on input it cannot decode: every case ends in a clear error (exit 1, no panic)
//! that names what is at fault — the topic, the type, the field, the byte offset, the line of a
//! definition — and a closed stdout ends the run quietly.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{rbag, run, stderr, START};
use rbag_storage::{Connection, Format};

/// One connection of a hand-made bag and the payloads written on it.
struct Topic<'a> {
    topic: &'a str,
    ty: &'a str,
    definition: &'a str,
    payloads: Vec<Vec<u8>>,
}

fn topic<'a>(topic: &'a str, ty: &'a str, definition: &'a str, payloads: Vec<Vec<u8>>) -> Topic<'a> {
    Topic { topic, ty, definition, payloads }
}

/// A bag of `format` (ROS 1 connections with `ros1`/`ros1msg`, rosbag2 ones with `cdr`/`ros2msg`),
/// payloads 10 ms apart.
fn bag(path: &Path, format: Format, topics: &[Topic]) -> PathBuf {
    let mut w = rbag_storage::create(path, format, &Default::default()).unwrap();
    let ros1 = format == Format::Ros1;
    let mut time = START;
    for t in topics {
        let mut c = Connection {
            topic: t.topic.into(),
            message_type: t.ty.into(),
            encoding: if ros1 { "ros1" } else { "cdr" }.into(),
            definition: t.definition.into(),
            definition_encoding: if ros1 { "ros1msg" } else { "ros2msg" }.into(),
            ..Connection::default()
        };
        if ros1 {
            c.metadata.insert("md5sum".into(), "*".into());
            c.metadata.insert("callerid".into(), "/test".into());
        } else {
            c.metadata.insert("offered_qos_profiles".into(), rbag_testkit::sample::cdr::QOS.into());
        }
        let id = w.add_connection(&c).unwrap();
        for p in &t.payloads {
            w.write(id, time, time, p).unwrap();
            time += 10_000_000;
        }
    }
    w.finish().unwrap();
    path.to_path_buf()
}

/// A ROS 1 string: u32 length, bytes.
fn ros1_string(s: &str) -> Vec<u8> {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

/// A little-endian CDR string (with its header when `header`).
fn cdr_string(s: &str, header: bool) -> Vec<u8> {
    let mut v = if header { vec![0, 1, 0, 0] } else { Vec::new() };
    v.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    v
}

/// [`common::assert_clear_error`], printing the error (see it with `--nocapture`).
fn assert_clear_error(o: &std::process::Output, names: &[&str]) {
    println!("{}", stderr(o).trim_end());
    common::assert_clear_error(o, names);
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn assert_ok(o: &std::process::Output) {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
    assert!(!stderr(o).contains("panicked"), "{}", stderr(o));
}

const UNKNOWN_DEF: &str = "uint32 count\nstring label\nfloat64[] values\n";

fn unknown_payload() -> Vec<u8> {
    let mut p = 7u32.to_le_bytes().to_vec();
    p.extend(ros1_string("seven"));
    p.extend(2u32.to_le_bytes());
    p.extend(1.5f64.to_le_bytes());
    p.extend((-2.0f64).to_le_bytes());
    p
}

/// (a) A type neither the bag, the store nor any --msg-path has: the error names the topic and
/// type and points at `--msg-path`; with a directory holding its `.msg` the bag decodes.
#[test]
fn unknown_type_asks_for_msg_path_and_msg_path_fixes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bag(
        &tmp.path().join("unknown.bag"),
        Format::Ros1,
        &[topic("/mystery", "my_pkg/Unknown", "", vec![unknown_payload()])],
    );

    let o = run(&[&"echo", &b, &"/mystery"]);
    assert_clear_error(&o, &["/mystery", "my_pkg/Unknown", "--msg-path"]);
    // Without a topic the connection is skipped with a warning (exit 3: data dropped).
    let o = run(&[&"echo", &b]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("my_pkg/Unknown") && stderr(&o).contains("--msg-path"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));

    // A share directory: DIR/my_pkg/msg/Unknown.msg.
    let share = tmp.path().join("share");
    std::fs::create_dir_all(share.join("my_pkg/msg")).unwrap();
    std::fs::write(share.join("my_pkg/msg/Unknown.msg"), UNKNOWN_DEF).unwrap();
    let o = run(&[&"echo", &b, &"/mystery", &"--msg-path", &share]);
    assert_ok(&o);
    assert_eq!(stdout(&o), "count: 7\nlabel: 'seven'\nvalues:\n- 1.5\n- -2.0\n---\n");
    let o = run(&[&"echo", &b, &"/mystery", &"--json", &"--msg-path", &share]);
    assert_ok(&o);
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["message"], serde_json::json!({"count": 7, "label": "seven", "values": [1.5, -2.0]}));

    // The package directory itself works too (`DIR/msg/*.msg`, package named after DIR).
    let o = run(&[&"echo", &b, &"/mystery.label", &"--msg-path", &share.join("my_pkg")]);
    assert_ok(&o);
    assert_eq!(stdout(&o), "'seven'\n---\n");

    // A nested type missing from the --msg-path directory is named with who needs it.
    std::fs::write(share.join("my_pkg/msg/Unknown.msg"), "Missing inner\n").unwrap();
    let o = run(&[&"echo", &b, &"/mystery", &"--msg-path", &share]);
    assert_clear_error(&o, &["/mystery", "my_pkg/Missing", "inner", "--msg-path"]);
}

/// (b) A payload shorter than its type: the error names the topic, the field and the offset.
#[test]
fn truncated_message_names_topic_field_and_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let mut short = ros1_string("hello world");
    short.truncate(9); // the length says 11, 5 bytes follow
    let b = bag(
        &tmp.path().join("short.bag"),
        Format::Ros1,
        &[topic("/chatter", "std_msgs/String", "string data\n", vec![ros1_string("fine"), short])],
    );
    let o = run(&[&"echo", &b, &"/chatter"]);
    assert_clear_error(&o, &["/chatter", "std_msgs/String", "field data", "offset 0", "length 11", "5 bytes left"]);
    // The message before it was printed.
    assert!(stdout(&o).starts_with("data: 'fine'\n---\n"), "{}", stdout(&o));

    // A payload that ends inside a fixed-size field (4 of Point's 24 bytes).
    let b = bag(
        &tmp.path().join("point.bag"),
        Format::Ros1,
        &[topic("/point", "geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n", vec![vec![0; 20]])],
    );
    let o = run(&[&"echo", &b, &"--json"]);
    assert_clear_error(&o, &["/point", "geometry_msgs/Point", "field z", "offset 16"]);
}

/// (c) Lengths that lie: a string of 0xffffffff bytes, an array of more elements than the
/// message holds. The error names the field (with its path inside nested messages).
#[test]
fn lying_string_and_array_lengths_name_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let mut lying_string = 0xffff_ffffu32.to_le_bytes().to_vec();
    lying_string.extend_from_slice(b"abc");
    let b = bag(
        &tmp.path().join("string.bag"),
        Format::Ros1,
        &[topic("/chatter", "std_msgs/String", "string data\n", vec![lying_string])],
    );
    let o = run(&[&"echo", &b, &"/chatter"]);
    assert_clear_error(&o, &["/chatter", "field data", "offset 0", "length 4294967295"]);

    let mut lying_array = 7u32.to_le_bytes().to_vec();
    lying_array.extend(ros1_string("seven"));
    lying_array.extend(1_000_000u32.to_le_bytes());
    lying_array.extend(1.5f64.to_le_bytes());
    let b = bag(
        &tmp.path().join("array.bag"),
        Format::Ros1,
        &[topic("/mystery", "my_pkg/Unknown", UNKNOWN_DEF, vec![lying_array])],
    );
    let o = run(&[&"echo", &b, &"/mystery"]);
    assert_clear_error(&o, &["/mystery", "my_pkg/Unknown", "field values", "offset 13", "length 1000000"]);

    // Inside an array of nested messages: the path has the element index.
    let def = "my_pkg/Item[] items\n================================================================================\nMSG: my_pkg/Item\nstring name\n";
    let mut p = 2u32.to_le_bytes().to_vec();
    p.extend(ros1_string("first"));
    p.extend(0x7fff_ffffu32.to_le_bytes());
    let b = bag(&tmp.path().join("nested.bag"), Format::Ros1, &[topic("/items", "my_pkg/List", def, vec![p])]);
    let o = run(&[&"echo", &b, &"/items"]);
    assert_clear_error(&o, &["/items", "items[1].name", "offset 13"]);
}

/// (d) A definition in the bag that does not parse: the error names the topic, the type and
/// the line.
#[test]
fn malformed_definition_names_type_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bag(
        &tmp.path().join("baddef.bag"),
        Format::Ros1,
        &[topic("/bad", "my_pkg/Broken", "uint32 ok\n# comment\nfloat64[x] bad\n", vec![vec![0; 4]])],
    );
    let o = run(&[&"echo", &b, &"/bad"]);
    assert_clear_error(&o, &["/bad", "my_pkg/Broken", "line 3", "bad array size"]);

    // In a nested type of the concatenated text: that type is named.
    let def = "my_pkg/Inner inner\n================================================================================\nMSG: my_pkg/Inner\nint32 fine\nint32 not valid here\n";
    let b = bag(&tmp.path().join("nested.bag"), Format::Ros1, &[topic("/bad", "my_pkg/Outer", def, vec![vec![0; 4]])]);
    let o = run(&[&"echo", &b, &"/bad"]);
    assert_clear_error(&o, &["/bad", "my_pkg/Inner", "line 2"]);
}

/// (e) `rbag echo BAG | head -1`: a reader that goes away ends the run with exit 0, no panic.
#[test]
fn closed_stdout_ends_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let b = common::sample_bag(tmp.path(), "sample.bag", 30); // ~5,000 messages
    for extra in [&[][..], &["--json"][..], &["--csv", "/chatter"][..]] {
        let mut child =
            rbag().arg("echo").arg(&b).args(extra).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert!(!line.is_empty());
        drop(out);
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {err}");
        assert!(!err.contains("panicked") && err.is_empty(), "{extra:?}: {err}");
    }
}

/// (f) `--csv` over topics whose types print different columns.
#[test]
fn csv_of_two_types_is_one_table_of_the_union_of_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let b = common::sample_bag(tmp.path(), "sample.bag", 1);
    // Issue 18: --csv of topics of different types writes one table, the union of columns.
    let o = run(&[&"echo", &b, &"/chatter", &"/point", &"--csv", &"-n", &"3"]);
    assert_ok(&o);
    assert!(stdout(&o).starts_with("log_time,topic,data,x,y,z\n"), "{}", stdout(&o));
    // Two topics of one type: the same columns as before.
    let o = run(&[&"echo", &b, &"/chatter", &"/robot_description", &"--csv", &"-n", &"2"]);
    assert_ok(&o);
    assert!(stdout(&o).starts_with("log_time,topic,data\n"), "{}", stdout(&o));
}

/// (g) A field path that does not exist: the error lists the fields there are.
#[test]
fn unknown_field_path_lists_the_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let b = common::sample_bag(tmp.path(), "sample.bag", 1);
    let o = run(&[&"echo", &b, &"/point.w"]);
    assert_clear_error(&o, &["/point", "geometry_msgs/Point", "\"w\"", "x, y, z"]);
    let o = run(&[&"echo", &b, &"/point.x.y"]);
    assert_clear_error(&o, &["/point", "y"]);
    let o = run(&[&"echo", &b, &"/chatter[x]"]);
    assert_clear_error(&o, &["/chatter"]);
    let o = run(&[&"echo", &b, &"/nope"]);
    assert_clear_error(&o, &["/nope", "/chatter", "/speed"]);
    let o = run(&[&"echo", &b, &"/point.x", &"-n", &"1"]);
    assert_ok(&o);
    assert_eq!(stdout(&o), "0.0\n---\n");
}

/// CDR through MCAP and SQLite3 bags: a lying string length, a truncated payload, an unknown
/// encapsulation, an unknown type, a bad definition.
#[test]
fn cdr_errors_in_mcap_and_sqlite3() {
    let tmp = tempfile::tempdir().unwrap();
    for (format, name) in [(Format::Mcap, "bad.mcap"), (Format::Sqlite3, "bad_sqlite")] {
        let mut lying = vec![0, 1, 0, 0];
        lying.extend(0xffff_fff0u32.to_le_bytes());
        lying.extend(b"hi\0");
        let mut short = cdr_string("hello", true);
        short.truncate(10);
        let b = bag(
            &tmp.path().join(name),
            format,
            &[
                topic("/good", "std_msgs/msg/String", "string data\n", vec![cdr_string("ok", true)]),
                topic("/lying", "std_msgs/msg/String", "string data\n", vec![lying]),
                topic("/short", "std_msgs/msg/String", "string data\n", vec![short]),
                topic("/plcdr", "std_msgs/msg/String", "string data\n", vec![vec![0, 9, 0, 0, 1, 0, 0, 0, 0]]),
                topic("/mystery", "my_pkg/msg/Unknown", "", vec![vec![0, 1, 0, 0, 7, 0, 0, 0]]),
                topic("/baddef", "my_pkg/msg/Broken", "int32 a\nint32[<=x] b\n", vec![vec![0, 1, 0, 0, 7, 0, 0, 0]]),
            ],
        );
        let o = run(&[&"echo", &b, &"/good"]);
        assert_ok(&o);
        assert_eq!(stdout(&o), "data: 'ok'\n---\n", "{format:?}");

        let o = run(&[&"echo", &b, &"/lying"]);
        assert_clear_error(&o, &["/lying", "std_msgs/msg/String", "field data", "offset 4", "length 4294967280"]);
        let o = run(&[&"echo", &b, &"/short"]);
        assert_clear_error(&o, &["/short", "field data", "offset 4", "length 6"]);
        let o = run(&[&"echo", &b, &"/plcdr"]);
        assert_clear_error(&o, &["/plcdr", "offset 0", "encapsulation"]);
        let o = run(&[&"echo", &b, &"/mystery", &"--json"]);
        assert_clear_error(&o, &["/mystery", "my_pkg/msg/Unknown", "--msg-path"]);
        let o = run(&[&"echo", &b, &"/baddef"]);
        assert_clear_error(&o, &["/baddef", "my_pkg/msg/Broken", "line 2"]);

        // With --msg-path the unknown type decodes.
        let dir = tmp.path().join(format!("msgs-{name}/my_pkg/msg"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Unknown.msg"), "uint32 count\n").unwrap();
        let o = run(&[&"echo", &b, &"/mystery", &"--msg-path", &dir.parent().unwrap().parent().unwrap()]);
        assert_ok(&o);
        assert_eq!(stdout(&o), "count: 7\n---\n");
    }
}

/// Runs `rbag` with `args`; fails if it has not exited within `secs` seconds (then kills it).
/// Its output is drained while it runs, so a full pipe cannot stall it.
fn finishes_within(secs: u64, args: &[&dyn AsRef<std::ffi::OsStr>]) -> std::process::Output {
    use std::io::Read;
    let mut c = rbag();
    for a in args {
        c.arg(a);
    }
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("rbag {:?} still running after {secs} s", c.get_args().collect::<Vec<_>>());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::process::Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// Was a bug (found while writing the codec fuzz targets, see
/// `crates/rbag-msg/tests/fuzzed_codec.rs`): a bag definition with a fixed-size array of empty
/// messages, `my_pkg/E[4000000000] e`, made decoding walk 4e9 elements; `rbag echo` hung on the
/// first message. Now a clear error.
#[test]
fn huge_fixed_array_of_empty_messages_does_not_hang_echo() {
    let tmp = tempfile::tempdir().unwrap();
    let def = "my_pkg/E[4000000000] e\n================================================================================\nMSG: my_pkg/E\n";
    let b = bag(&tmp.path().join("empty.bag"), Format::Ros1, &[topic("/e", "my_pkg/Many", def, vec![vec![]])]);
    let o = finishes_within(20, &[&"echo", &b, &"/e"]);
    assert_clear_error(&o, &["/e", "my_pkg/Many", "field e", "4000000000"]);
    let o = finishes_within(20, &[&"export", &b, &"-o", &tmp.path().join("tables"), &"/e"]);
    assert_clear_error(&o, &["/e", "my_pkg/Many", "field e", "4000000000"]);
}

/// Was a bug: `--csv` listed one column per element of a fixed-size array, with no limit:
/// `uint8[4000000000] x` in a bag's definition built 4e9 column names before any message was
/// read (hang, then out of memory). Now long fixed arrays are one column, and a type that
/// flattens to too many columns is refused.
#[test]
fn huge_fixed_array_does_not_hang_echo_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bag(
        &tmp.path().join("wide.bag"),
        Format::Ros1,
        &[topic("/wide", "my_pkg/Wide", "uint8[4000000000] x\n", vec![vec![0; 8]])],
    );
    let o = finishes_within(20, &[&"echo", &b, &"/wide", &"--csv"]);
    assert_clear_error(&o, &["/wide", "my_pkg/Wide", "field x"]);
    let o = finishes_within(20, &[&"export", &b, &"-o", &tmp.path().join("tables"), &"--format", &"csv"]);
    assert_clear_error(&o, &["/wide", "my_pkg/Wide", "field x"]);

    // 64 × 64 × 64 expanded columns: refused before any message is read.
    let sep = "================================================================================\n";
    let def = format!("my_pkg/P[64] p\n{sep}MSG: my_pkg/P\nmy_pkg/Q[64] q\n{sep}MSG: my_pkg/Q\nuint8[64] x\n");
    let b = bag(
        &tmp.path().join("cube.bag"),
        Format::Ros1,
        &[topic("/cube", "my_pkg/Cube", &def, vec![vec![0; 64 * 64 * 64]])],
    );
    let o = finishes_within(20, &[&"echo", &b, &"/cube", &"--csv"]);
    assert_clear_error(&o, &["/cube", "my_pkg/Cube", "columns"]);
    assert!(o.stdout.is_empty());
    // --json prints it.
    let o = finishes_within(20, &[&"echo", &b, &"/cube", &"--json"]);
    assert_ok(&o);
}

/// `rbag export` reads through the same decoder: a truncated message and a ROS 1 string that
/// is not UTF-8 (Arrow's text columns hold UTF-8 only) are clear errors naming the topic, and
/// leave no file, not even a temporary one.
#[test]
fn export_names_the_fault_and_leaves_no_file() {
    let tmp = tempfile::tempdir().unwrap();
    let mut short = ros1_string("hello world");
    short.truncate(9);
    let b = bag(
        &tmp.path().join("short.bag"),
        Format::Ros1,
        &[topic("/chatter", "std_msgs/String", "string data\n", vec![ros1_string("fine"), short])],
    );
    let out = tmp.path().join("tables");
    let o = run(&[&"export", &b, &"-o", &out]);
    assert_clear_error(&o, &["short.bag", "/chatter", "field data", "offset 0"]);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "a file was left in {}", out.display());

    let mut latin1 = 2u32.to_le_bytes().to_vec();
    latin1.extend_from_slice(b"\xe9!");
    let b = bag(
        &tmp.path().join("latin1.bag"),
        Format::Ros1,
        &[topic("/chatter", "std_msgs/String", "string data\n", vec![ros1_string("fine"), latin1])],
    );
    let o = run(&[&"export", &b, &"-o", &out, &"--format", &"csv"]);
    assert_clear_error(&o, &["latin1.bag", "/chatter", "column data", "not UTF-8"]);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);

    // --force replaces only a file that export could have written.
    std::fs::write(out.join("chatter.parquet"), b"my notes").unwrap();
    let good = bag(
        &tmp.path().join("good.bag"),
        Format::Ros1,
        &[topic("/chatter", "std_msgs/String", "string data\n", vec![ros1_string("fine")])],
    );
    let o = run(&[&"export", &good, &"-o", &out, &"--force"]);
    assert_clear_error(&o, &["chatter.parquet", "not a Parquet file"]);
    assert_eq!(std::fs::read(out.join("chatter.parquet")).unwrap(), b"my notes");

    // The output directory may not be the input's own bag directory.
    let dir = tmp.path().join("ros2");
    let o = run(&[&"convert", &b, &"-o", &dir]);
    assert_ok(&o);
    let o = run(&[&"export", &dir, &"-o", &dir, &"/chatter"]);
    assert_clear_error(&o, &["ros2"]);
}
