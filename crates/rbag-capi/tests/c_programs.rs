//! A C program and a C++ program, built with `cc` and `c++` against `include/rbag.h` and
//! `librbag_c.so`, read corpus bags (their per-topic counts, bytes and payload digests equal
//! rbag-bag's own) and write a ROS 1 bag and an MCAP file that Debian's rosbag and the mcap
//! library read with the messages the program wrote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rbag_bag::{Bag, Filter};

#[derive(Clone, Copy, Debug)]
enum Lang {
    C,
    Cpp,
}

impl Lang {
    fn name(self) -> &'static str {
        match self {
            Lang::C => "C",
            Lang::Cpp => "C++",
        }
    }
}

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn library_name() -> String {
    format!("{}rbag_c{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX)
}

/// The directory holding a current `librbag_c.so`. Building this test builds the library as a
/// dependency into `target/<profile>/deps`, next to the test itself, but only `cargo build`
/// copies it up to `target/<profile>`, where it may be stale; so `deps` comes first, and
/// without either the library is built now.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its path");
    let deps = exe.parent().expect("the test runs from target/<profile>/deps").to_path_buf();
    if deps.join(library_name()).exists() {
        return deps;
    }
    let dir = deps.parent().expect("target/<profile>").to_path_buf();
    if !dir.join(library_name()).exists() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "rbag-capi", "--lib"]).current_dir(crate_dir());
        match dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                cmd.arg("--release");
            }
            Some(profile) => {
                cmd.args(["--profile", profile]);
            }
        }
        let status = cmd.status().expect("cargo runs");
        assert!(status.success(), "cargo build -p rbag-capi failed");
        assert!(dir.join(library_name()).exists(), "cargo built no {} in {}", library_name(), dir.display());
    }
    dir
}

/// Builds `tests/c/read_write.{c,cpp}` into `out`, or `None` (a recorded skip) without the
/// compiler.
fn build(test: &str, lang: Lang, out: &Path) -> Option<PathBuf> {
    let (compiler, source, flags): (&str, &str, &[&str]) = match lang {
        Lang::C => ("cc", "tests/c/read_write.c", &["-std=c11", "-Wall", "-Wextra", "-Werror"]),
        Lang::Cpp => ("c++", "tests/c/read_write.cpp", &["-std=c++17", "-Wall", "-Wextra", "-Werror"]),
    };
    if Command::new(compiler).arg("--version").output().is_err() {
        rbag_testkit::skip(test, &format!("no {compiler} on PATH (apt-get install build-essential)"));
        return None;
    }
    let lib = library_dir();
    let exe = out.join(format!("read_write_{}", if matches!(lang, Lang::C) { "c" } else { "cpp" }));
    let output = Command::new(compiler)
        .args(flags)
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join(source))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg("-lrbag_c")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output()
        .expect("the compiler runs");
    assert!(
        output.status.success(),
        "{compiler} failed on {source}:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Some(exe)
}

fn run(exe: &Path, args: &[&str]) -> Output {
    Command::new(exe).args(args).output().expect("the program runs")
}

fn ok_stdout(exe: &Path, args: &[&str]) -> String {
    let out = run(exe, args);
    assert!(
        out.status.success(),
        "{} {args:?} exited with {}:\n{}{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the program prints UTF-8")
}

/// What `read_write read` prints, parsed.
#[derive(Debug, Default, PartialEq)]
struct Report {
    /// As printed: the same serializer on both sides gives the same text, floats included.
    info: String,
    messages: u64,
    range: Option<(u64, u64)>,
    connections: Vec<String>,
    /// Per topic: messages, bytes, FNV-1a 64 of their data in order.
    counts: BTreeMap<String, (u64, u64, String)>,
    total: u64,
}

fn parse(stdout: &str) -> Report {
    let mut r = Report::default();
    for line in stdout.lines() {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        let words: Vec<&str> = rest.split(' ').collect();
        match key {
            "info" => r.info = rest.to_string(),
            "messages" => r.messages = rest.parse().expect("a count"),
            "range" if rest == "none" => r.range = None,
            "range" => r.range = Some((words[0].parse().unwrap(), words[1].parse().unwrap())),
            "connections" => {}
            "connection" => r.connections.push(rest.to_string()),
            "count" => {
                r.counts
                    .insert(words[0].into(), (words[1].parse().unwrap(), words[2].parse().unwrap(), words[3].into()));
            }
            "total" => r.total = rest.parse().expect("a count"),
            _ => {}
        }
    }
    r
}

/// What the program must print for `bag` read through `filter`, from rbag-bag directly.
fn expected(bag: &Bag, filter: &Filter) -> Report {
    let info = bag.info().expect("info");
    let storage = bag.storage_info().expect("storage info");
    let connections = bag
        .connections()
        .iter()
        .map(|c| {
            format!(
                "{} {} {} {} {} {} {}",
                c.id,
                c.topic,
                c.message_type,
                c.encoding,
                if c.definition_encoding.is_empty() { "-" } else { &c.definition_encoding },
                storage.connections.get(&c.id).map_or(0, |s| s.message_count),
                c.definition.split('\0').next().unwrap_or("").len()
            )
        })
        .collect();
    let mut counts: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    let mut total = 0;
    for m in bag.messages(filter).expect("messages") {
        let m = m.expect("message");
        let topic = bag.connection(m.connection).expect("its connection").topic.clone();
        let e = counts.entry(topic).or_insert((0, 0, 0xcbf29ce484222325));
        e.0 += 1;
        e.1 += m.data.len() as u64;
        for &b in m.data.iter() {
            e.2 ^= u64::from(b);
            e.2 = e.2.wrapping_mul(0x100000001b3);
        }
        total += 1;
    }
    Report {
        info: serde_json::to_string(&info).expect("info serializes"),
        messages: storage.message_count,
        range: storage.start_ns.zip(storage.end_ns),
        connections,
        counts: counts.into_iter().map(|(t, (n, b, h))| (t, (n, b, format!("{h:016x}")))).collect(),
        total,
    }
}

fn reads_corpus_bags(test: &str, lang: Lang) {
    let (Some(ros1), Some(mcap)) =
        (rbag_testkit::corpus(test, "ros1/multi_lz4.bag"), rbag_testkit::corpus(test, "ros2/mcap/talker"))
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(exe) = build(test, lang, dir.path()) else { return };
    for path in [&ros1, &mcap] {
        let bag = Bag::open(path).expect("the corpus bag opens");
        let shown = path.to_str().expect("corpus paths are UTF-8");

        // Everything.
        let got = parse(&ok_stdout(&exe, &["read", shown, "-", "-"]));
        let want = expected(&bag, &Filter::default());
        assert_eq!(got, want, "{}: {shown}, every message", lang.name());
        // The counts agree with the index's too.
        let info = bag.info().expect("info");
        for t in info.topics.iter().filter(|t| t.message_count > 0) {
            assert_eq!(
                got.counts.get(&t.name).map(|c| c.0),
                Some(t.message_count),
                "{}: {shown} {}",
                lang.name(),
                t.name
            );
        }
        assert_eq!(got.total, info.message_count, "{}: {shown}", lang.name());

        // One topic, in the middle half of the bag.
        let (start, end) = want.range.expect("the corpus bag has messages");
        let (from, to) = (start + (end - start) / 4, start + (end - start) / 4 * 3);
        let topic = info.topics.iter().max_by_key(|t| t.message_count).expect("a topic").name.clone();
        let got = parse(&ok_stdout(&exe, &["read", shown, &from.to_string(), &to.to_string(), &topic]));
        let filter = Filter { topics: vec![topic.clone()], start: Some(from), end: Some(to), ..Filter::default() };
        let want = expected(&bag, &filter);
        assert!(want.total > 0 && want.total < info.message_count, "{shown}: the window selects some messages");
        assert_eq!(got, want, "{}: {shown}, {topic} in [{from}, {to})", lang.name());
    }

    // A missing file and a topic the bag lacks are errors with clear messages.
    let missing = dir.path().join("missing.bag");
    let out = run(&exe, &["open", missing.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{}: {text}", lang.name());
    assert!(text.contains("error RBAG_ERR_NOT_FOUND") && text.contains("missing.bag"), "{}: {text}", lang.name());
    let out = run(&exe, &["read", ros1.to_str().unwrap(), "-", "-", "/no_such_topic"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("RBAG_ERR_NOT_FOUND") && err.contains("/no_such_topic"), "{err}");
}

#[test]
fn c_program_reads_corpus_bags() {
    reads_corpus_bags("c_program_reads_corpus_bags", Lang::C);
}

#[test]
fn cpp_program_reads_corpus_bags() {
    reads_corpus_bags("cpp_program_reads_corpus_bags", Lang::Cpp);
}

/// The messages the program writes: (topic, text, log time, publish time) in log-time order.
fn written(n: u64) -> Vec<(&'static str, String, u64, u64)> {
    (0..n)
        .flat_map(|i| {
            let t = 1_000_000_000 + i * 1_000_000;
            [("/chatter", format!("hello {i}"), t, t - 500), ("/echo", format!("echo {i}"), t + 1, t + 1)]
        })
        .collect()
}

fn cdr_string(text: &str) -> Vec<u8> {
    let mut out = vec![0, 1, 0, 0];
    out.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out.push(0);
    out
}

const ROSBAG_SCRIPT: &str = r#"
import json, sys, rosbag
with rosbag.Bag(sys.argv[1]) as bag:
    msgs = [[topic, msg._type, msg.data, t.to_nsec()] for topic, msg, t in bag.read_messages()]
    types = dict(bag.get_type_and_topic_info().msg_types)
print(json.dumps({"messages": msgs, "md5": types}))
"#;

const MCAP_SCRIPT: &str = r#"
import json, sys
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
with open(sys.argv[1], "rb") as f:
    reader = make_reader(f, decoder_factories=[DecoderFactory()])
    out = [[ch.topic, sch.name, sch.encoding, ch.message_encoding, m.log_time, m.publish_time, m.data.hex(), d.data]
           for sch, ch, m, d in reader.iter_decoded_messages()]
print(json.dumps(out))
"#;

fn writes_bags(test: &str, lang: Lang) {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(exe) = build(test, lang, dir.path()) else { return };
    let (bag, mcap, abandoned) =
        (dir.path().join("out.bag"), dir.path().join("out.mcap"), dir.path().join("gone.mcap"));
    let n = 10;
    let stdout = ok_stdout(
        &exe,
        &["write", bag.to_str().unwrap(), mcap.to_str().unwrap(), abandoned.to_str().unwrap(), &n.to_string()],
    );
    assert!(stdout.contains(&format!("wrote {n}")), "{stdout}");
    assert!(bag.is_file() && mcap.is_file(), "{}: the bags are written", lang.name());
    assert!(!abandoned.exists(), "{}: an abandoned writer left {}", lang.name(), abandoned.display());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{}: temporary files left: {leftovers:?}", lang.name());
    let want = written(n);

    // rbag reads both back.
    for path in [&bag, &mcap] {
        let b = Bag::open(path).expect("rbag opens what it wrote");
        assert_eq!(b.storage_info().unwrap().message_count, 2 * n, "{}", path.display());
    }

    // Debian's rosbag: the ROS 1 bag, with the types' real MD5 sums.
    if let Some(python) = rbag_testkit::rosbag_python(test) {
        let home = tempfile::tempdir().expect("temp dir");
        let mut cmd = Command::new(python);
        cmd.args(["-c", ROSBAG_SCRIPT]).arg(&bag);
        rbag_testkit::ros_env(&mut cmd, home.path());
        let out = cmd.output().expect("python runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "rosbag failed on {}: {stderr}", bag.display());
        assert!(!stderr.contains("md5sum"), "rosbag warns: {stderr}");
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let expected: Vec<serde_json::Value> =
            want.iter().map(|(topic, text, log, _)| serde_json::json!([topic, "std_msgs/String", text, log])).collect();
        assert_eq!(got["messages"], serde_json::Value::from(expected), "{}: rosbag reads", lang.name());
        assert_eq!(got["md5"]["std_msgs/String"], "992ce8a1687cec8c8bd883ec73ca41d1");
    }

    // The mcap library: the MCAP file, raw bytes and decoded strings.
    if let Some(python) = rbag_testkit::oracle_python(test) {
        let out = Command::new(python).args(["-c", MCAP_SCRIPT]).arg(&mcap).output().expect("python runs");
        assert!(
            out.status.success(),
            "the mcap library failed on {}: {}",
            mcap.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let expected: Vec<serde_json::Value> = want
            .iter()
            .map(|(topic, text, log, publish)| {
                let hex: String = cdr_string(text).iter().map(|b| format!("{b:02x}")).collect();
                serde_json::json!([topic, "std_msgs/msg/String", "ros2msg", "cdr", log, publish, hex, text])
            })
            .collect();
        assert_eq!(got, serde_json::Value::from(expected), "{}: the mcap library reads", lang.name());
    }
}

#[test]
fn c_program_writes_bags_rosbag_and_mcap_read() {
    writes_bags("c_program_writes_bags_rosbag_and_mcap_read", Lang::C);
}

#[test]
fn cpp_program_writes_bags_rosbag_and_mcap_read() {
    writes_bags("cpp_program_writes_bags_rosbag_and_mcap_read", Lang::Cpp);
}
