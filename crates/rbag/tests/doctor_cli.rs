//! `rbag doctor`: a table of damage, each case made here (a clean bag written by rbag's own
//! writers, then a copy damaged in a temp dir), with what `rbag doctor` reports and, for MCAP,
//! what Foxglove's `mcap doctor` reports on the same file: rbag must find at least what it finds.
//! Then the real corpus (clean bags exit 0; the crashed recording is an error; the SQLite3
//! talker's wrong stored definition is a warning under --decode), and damage at random places
//! never panics.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use rbag_storage::{Compression, Connection, Format, WriteOptions};
use rbag_testkit::sample;
use serde_json::Value;

const S: u64 = 1_000_000_000;

/// `rbag doctor --json [--decode] PATH`: exit code, and (severity, kind) of each finding.
fn doctor(path: &Path, decode: bool) -> (i32, Vec<(String, String)>, String) {
    let mut c = rbag();
    c.arg("doctor").arg("--json");
    if decode {
        c.arg("--decode");
    }
    let o = c.arg(path).output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut found = Vec::new();
    for line in out.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        for f in v["findings"].as_array().unwrap() {
            found.push((f["severity"].as_str().unwrap().to_string(), f["kind"].as_str().unwrap().to_string()));
            assert!(f["file"].is_string() && f["record"].is_string(), "{f}");
        }
    }
    (o.status.code().unwrap_or(-1), found, out)
}

/// `mcap doctor PATH`: exit code and its output (warnings and errors go to stderr).
fn mcap_doctor(mcap: &Path, path: &Path) -> (i32, String) {
    let o = Command::new(mcap).arg("doctor").arg(path).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    (o.status.code().unwrap_or(-1), text)
}

fn ros1_string(s: &str) -> Vec<u8> {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

fn cdr_string(s: &str) -> Vec<u8> {
    let mut v = vec![0, 1, 0, 0];
    v.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    while v.len() % 4 != 0 {
        v.push(0);
    }
    v
}

fn string_payload(format: Format, s: &str) -> Vec<u8> {
    if format == Format::Ros1 {
        ros1_string(s)
    } else {
        cdr_string(s)
    }
}

/// A bag of one `std_msgs/String` topic with `msgs` (log time, payload).
fn write_bag(path: &Path, format: Format, options: &WriteOptions, conn: &Connection, msgs: &[(u64, Vec<u8>)]) {
    let mut w = rbag_storage::create(path, format, options).unwrap();
    let id = w.add_connection(conn).unwrap();
    for (t, data) in msgs {
        w.write(id, *t, *t, data).unwrap();
    }
    w.finish().unwrap();
}

fn strings(format: Format, times: &[u64]) -> Vec<(u64, Vec<u8>)> {
    times.iter().map(|&t| (t, string_payload(format, &format!("message at {t}")))).collect()
}

/// The clean sample (four topics, three seconds) in `format`, compressed, in small chunks.
fn clean(dir: &Path, format: Format) -> PathBuf {
    let (name, compression) = match format {
        Format::Ros1 => ("clean.bag", Compression::Lz4),
        _ => ("clean.mcap", Compression::Zstd),
    };
    let path = dir.join(name);
    let options = WriteOptions { compression, chunk_size: 4096, ..Default::default() };
    let mut w = rbag_storage::create(&path, format, &options).unwrap();
    sample::write(w.as_mut(), START, 3 * S).unwrap();
    w.finish().unwrap();
    path
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// MCAP records: (op, offset) of each top-level record.
fn mcap_records(b: &[u8]) -> Vec<(u8, usize)> {
    let mut out = Vec::new();
    let mut pos = 8;
    while pos + 9 <= b.len() - 8 {
        out.push((b[pos], pos));
        pos += 9 + u64_at(b, pos + 1) as usize;
    }
    out
}

fn mcap_first(b: &[u8], op: u8) -> usize {
    mcap_records(b).into_iter().find(|r| r.0 == op).unwrap_or_else(|| panic!("no op {op:#x}")).1
}

/// CRC-32 (IEEE), as MCAP uses it.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// Recomputes the footer's summary CRC after the summary was edited.
fn mcap_fix_summary_crc(b: &mut [u8]) {
    let footer = b.len() - 8 - 29;
    let start = u64_at(b, footer + 9) as usize;
    let crc = crc32(&b[start..footer + 9 + 16]);
    b[footer + 9 + 16..footer + 9 + 20].copy_from_slice(&crc.to_le_bytes());
}

/// ROS 1 records after the bag header: (op, offset, header length) of each.
fn ros1_records(b: &[u8]) -> Vec<(u8, usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 13;
    while pos + 8 <= b.len() {
        let hl = u32_at(b, pos) as usize;
        let mut op = 0;
        let mut f = pos + 4;
        while f < pos + 4 + hl {
            let n = u32_at(b, f) as usize;
            let field = &b[f + 4..f + 4 + n];
            if field.starts_with(b"op=") {
                op = field[3];
            }
            f += 4 + n;
        }
        let dl = u32_at(b, pos + 4 + hl) as usize;
        out.push((op, pos, hl));
        pos += 8 + hl + dl;
    }
    out
}

fn ros1_first(b: &[u8], op: u8) -> (usize, usize) {
    let r = ros1_records(b).into_iter().find(|r| r.0 == op).unwrap_or_else(|| panic!("no op {op:#x}"));
    (r.1, r.2)
}

/// Flips the bits of the 8 bytes at `at` (0xA5 each).
fn flip8(b: &mut [u8], at: usize) {
    for x in &mut b[at..at + 8] {
        *x ^= 0xA5;
    }
}

/// A copy of `clean` at `dir/name` with `damage` applied to its bytes.
fn damaged(clean: &Path, dir: &Path, name: &str, damage: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut b = std::fs::read(clean).unwrap();
    damage(&mut b);
    let p = dir.join(name);
    std::fs::write(&p, b).unwrap();
    p
}

/// One row of the table.
struct Case {
    name: &'static str,
    path: PathBuf,
    decode: bool,
    /// rbag's exit code, and the kinds of which at least one must be found at the severity
    /// that exit code stands for.
    code: i32,
    kinds: &'static [&'static str],
    /// For MCAP files: mcap doctor's exit code and a piece of its output (`None`: it finds
    /// nothing, exit 0 and no warning).
    mcap: Option<(i32, &'static str)>,
}

#[test]
fn damage_table() {
    let Some(mcap) = rbag_testkit::mcap_cli("doctor_cli::damage_table") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let clean_bag = clean(dir, Format::Ros1);
    let clean_mcap = clean(dir, Format::Mcap);
    let ros1 = |n: &str| sample::string_connection(Format::Ros1, n);
    let ros2 = |n: &str| sample::string_connection(Format::Mcap, n);
    let small = WriteOptions { chunk_size: 1, ..Default::default() };
    let mut cases = Vec::new();

    // Clean bags: nothing found by either.
    cases.push(Case { name: "clean", path: clean_bag.clone(), decode: true, code: 0, kinds: &[], mcap: None });
    cases.push(Case {
        name: "clean",
        path: clean_mcap.clone(),
        decode: true,
        code: 0,
        kinds: &[],
        mcap: Some((0, "")),
    });

    // Flipped bytes in the middle of a chunk's compressed data.
    let p = damaged(&clean_bag, dir, "flipped.bag", |b| {
        let (at, hl) = ros1_first(b, 0x05);
        let len = u32_at(b, at + 4 + hl) as usize;
        let mid = at + 8 + hl + len / 2;
        flip8(b, mid);
    });
    cases.push(Case {
        name: "flipped bytes in a chunk",
        path: p,
        decode: false,
        code: 1,
        kinds: &["decompress", "structure", "index"],
        mcap: None,
    });
    let p = damaged(&clean_mcap, dir, "flipped.mcap", |b| {
        let at = mcap_first(b, 0x06);
        let len = u64_at(b, at + 1) as usize;
        let mid = at + 9 + len / 2 + 20;
        flip8(b, mid);
    });
    cases.push(Case {
        name: "flipped bytes in a chunk",
        path: p,
        decode: false,
        code: 1,
        kinds: &["crc", "decompress"],
        mcap: Some((1, "Error")),
    });

    // A wrong CRC (MCAP only: ROS 1 bags have none).
    let p = damaged(&clean_mcap, dir, "crc.mcap", |b| {
        let at = mcap_first(b, 0x06);
        b[at + 9 + 24] ^= 0x01;
    });
    cases.push(Case {
        name: "wrong chunk CRC",
        path: p,
        decode: false,
        code: 1,
        kinds: &["crc"],
        mcap: Some((1, "Error")),
    });
    let p = damaged(&clean_mcap, dir, "data_crc.mcap", |b| {
        let at = mcap_first(b, 0x0F);
        b[at + 9] ^= 0x01;
    });
    cases.push(Case {
        name: "wrong data section CRC",
        path: p,
        decode: false,
        code: 1,
        kinds: &["crc"],
        mcap: Some((1, "Error")),
    });

    // Index counts that do not match the data.
    let p = damaged(&clean_bag, dir, "count.bag", |b| {
        let (at, hl) = ros1_first(b, 0x06);
        let data = at + 8 + hl;
        let n = u32_at(b, data + 4) + 1;
        b[data + 4..data + 8].copy_from_slice(&n.to_le_bytes());
    });
    cases.push(Case { name: "index count off by one", path: p, decode: false, code: 1, kinds: &["index"], mcap: None });
    let p = damaged(&clean_mcap, dir, "count.mcap", |b| {
        let at = mcap_first(b, 0x0B);
        let n = u64_at(b, at + 9) + 1;
        b[at + 9..at + 17].copy_from_slice(&n.to_le_bytes());
        mcap_fix_summary_crc(b);
    });
    cases.push(Case {
        name: "index count off by one",
        path: p,
        decode: false,
        code: 1,
        kinds: &["index"],
        mcap: Some((1, "message count")),
    });

    // A definition that does not match its MD5 sum (ROS 1) or RIHS01 hash (ROS 2).
    let p = dir.join("md5.bag");
    let mut c = ros1("/chatter");
    c.metadata.insert("md5sum".into(), "fdb28210bfa9d7c91146260178d9a584".into());
    write_bag(&p, Format::Ros1, &WriteOptions::default(), &c, &strings(Format::Ros1, &[START]));
    cases.push(Case { name: "definition vs MD5", path: p, decode: false, code: 1, kinds: &["hash"], mcap: None });
    let p = dir.join("rihs.mcap");
    let mut c = ros2("/chatter");
    c.metadata.insert("type_description_hash".into(), format!("RIHS01_{}", "ab".repeat(32)));
    write_bag(&p, Format::Mcap, &WriteOptions::default(), &c, &strings(Format::Mcap, &[START]));
    cases.push(Case {
        name: "definition vs RIHS01",
        path: p,
        decode: false,
        code: 1,
        kinds: &["hash"],
        mcap: Some((0, "")),
    });

    // A payload that does not decode (--decode), and one with bytes left over.
    for format in [Format::Ros1, Format::Mcap] {
        let (name, conn, bad) = match format {
            Format::Ros1 => ("undecodable.bag", ros1("/chatter"), b"\xff\x00\x00\x00hi".to_vec()),
            _ => ("undecodable.mcap", ros2("/chatter"), b"\x00\x01\x00\x00\xff\x00\x00\x00hi\x00\x00".to_vec()),
        };
        let p = dir.join(name);
        let mut msgs = strings(format, &[START, START + S]);
        msgs.push((START + 2 * S, bad));
        let mut long = string_payload(format, "four more bytes");
        long.extend_from_slice(b"\x01\x02\x03\x04\x05");
        msgs.push((START + 3 * S, long));
        write_bag(&p, format, &WriteOptions::default(), &conn, &msgs);
        let mcap = (format == Format::Mcap).then_some((0, ""));
        cases.push(Case {
            name: "payload does not decode",
            path: p.clone(),
            decode: true,
            code: 1,
            kinds: &["decode"],
            mcap,
        });
        cases.push(Case { name: "same, without --decode", path: p, decode: false, code: 0, kinds: &[], mcap });
    }

    // An out-of-order chunk (each message its own chunk; the third is older than the others).
    for (format, name) in [(Format::Ros1, "chunk_order.bag"), (Format::Mcap, "chunk_order.mcap")] {
        let p = dir.join(name);
        let c = if format == Format::Ros1 { ros1("/chatter") } else { ros2("/chatter") };
        write_bag(&p, format, &small, &c, &strings(format, &[START + 2 * S, START + 3 * S, START + S]));
        let mcap = (format == Format::Mcap).then_some((0, "less than the latest log time"));
        cases.push(Case { name: "out-of-order chunk", path: p, decode: false, code: 3, kinds: &["chunk_order"], mcap });
    }
    // Messages out of order inside one MCAP chunk.
    let p = dir.join("message_order.mcap");
    write_bag(
        &p,
        Format::Mcap,
        &WriteOptions::default(),
        &ros2("/chatter"),
        &strings(Format::Mcap, &[START + S, START]),
    );
    cases.push(Case {
        name: "messages out of order in a chunk",
        path: p,
        decode: false,
        code: 3,
        kinds: &["message_order"],
        mcap: Some((0, "less than the latest log time")),
    });

    // A truncated file.
    let p = damaged(&clean_bag, dir, "truncated.bag", |b| b.truncate(b.len() * 3 / 5));
    cases.push(Case { name: "truncated file", path: p, decode: false, code: 1, kinds: &["structure"], mcap: None });
    let p = damaged(&clean_mcap, dir, "truncated.mcap", |b| b.truncate(b.len() * 3 / 5));
    cases.push(Case {
        name: "truncated file",
        path: p,
        decode: false,
        code: 1,
        kinds: &["structure"],
        mcap: Some((1, "Error")),
    });

    // A rosbag2 metadata.yaml whose topic message count is wrong (MCAP and SQLite3 storage).
    for (format, name) in [(Format::Mcap, "meta_mcap"), (Format::Sqlite3, "meta_db3")] {
        let p = dir.join(name);
        let mut w = rbag_storage::rosbag2::Rosbag2Writer::create(&p, format, &WriteOptions::default()).unwrap();
        let id = rbag_storage::StorageWriter::add_connection(&mut w, &ros2("/chatter")).unwrap();
        for (t, d) in strings(Format::Mcap, &[START, START + S, START + 2 * S]) {
            rbag_storage::StorageWriter::write(&mut w, id, t, t, &d).unwrap();
        }
        rbag_storage::StorageWriter::finish(Box::new(w)).unwrap();
        let meta = p.join("metadata.yaml");
        let text = std::fs::read_to_string(&meta).unwrap();
        let topics = text.find("topics_with_message_count").unwrap();
        let at = topics + text[topics..].find("message_count: 3").unwrap();
        std::fs::write(&meta, format!("{}message_count: 4{}", &text[..at], &text[at + 16..])).unwrap();
        // mcap doctor reads the storage file, not metadata.yaml: it finds nothing.
        let mcap = (format == Format::Mcap).then_some((0, ""));
        cases.push(Case {
            name: "metadata.yaml count wrong",
            path: p,
            decode: false,
            code: 1,
            kinds: &["metadata"],
            mcap,
        });
    }

    let mut table = vec![format!("{:<34} {:<22} {:<40} {}", "damage", "file", "rbag doctor", "mcap doctor")];
    let mut failures = Vec::new();
    for case in &cases {
        let (code, found, out) = doctor(&case.path, case.decode);
        let severity = match case.code {
            1 => "error",
            3 => "warning",
            _ => "",
        };
        let got: BTreeSet<String> =
            found.iter().filter(|(s, _)| s == "error" || s == "warning").map(|(s, k)| format!("{s}:{k}")).collect();
        let hit = case.kinds.is_empty() || case.kinds.iter().any(|k| got.contains(&format!("{severity}:{k}")));
        let file = case.path.file_name().unwrap().to_string_lossy().into_owned();
        let rbag_says = format!("exit {code} {}", got.iter().cloned().collect::<Vec<_>>().join(","));
        if code != case.code || !hit || (case.code == 0 && !got.is_empty()) {
            failures.push(format!(
                "{} ({file}): rbag doctor {rbag_says}, expected exit {} with one of {:?}\n{out}",
                case.name, case.code, case.kinds
            ));
        }
        let mut mcap_says = "n/a".to_string();
        if let Some((want, needle)) = case.mcap {
            let target = if case.path.is_dir() {
                std::fs::read_dir(&case.path)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .find(|p| p.extension().is_some_and(|e| e == "mcap"))
                    .unwrap()
            } else {
                case.path.clone()
            };
            let (mcode, text) = mcap_doctor(&mcap, &target);
            let first = text.lines().find(|l| l.starts_with("Error") || l.starts_with("Warning")).unwrap_or("");
            mcap_says = format!("exit {mcode} {}", first.chars().take(70).collect::<String>());
            let quiet = needle.is_empty() && !text.contains("Error") && !text.contains("Warning");
            if mcode != want || !(quiet || (!needle.is_empty() && text.contains(needle))) {
                failures.push(format!(
                    "{} ({file}): mcap doctor {mcap_says}, expected exit {want} and {needle:?}\n{text}",
                    case.name
                ));
            }
            // What mcap doctor finds, rbag finds too.
            if mcode != 0 && code != 1 {
                failures
                    .push(format!("{} ({file}): mcap doctor fails it (exit {mcode}) but rbag exits {code}", case.name));
            }
            if text.contains("Warning") && code == 0 {
                failures.push(format!("{} ({file}): mcap doctor warns but rbag finds nothing", case.name));
            }
        }
        table.push(format!("{:<34} {:<22} {:<40} {}", case.name, file, rbag_says, mcap_says));
    }
    eprintln!("{}", table.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The text output names the file, the offset and the record; exit codes as documented.
#[test]
fn text_output_and_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let bag = clean(tmp.path(), Format::Ros1);
    let o = run(&[&"doctor", &bag]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(": ok (ros1;"));
    let broken = damaged(&bag, tmp.path(), "cut.bag", |b| b.truncate(b.len() - 100));
    let o = run(&[&"doctor", &bag, &broken]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("error[structure]") && out.contains("cut.bag @") && out.contains("(ROS 1"), "{out}");
    assert!(stderr(&o).contains("error(s) found"), "{}", stderr(&o));
    // Not a bag at all: exit 1 with the path named.
    let junk = tmp.path().join("junk.txt");
    std::fs::write(&junk, "not a bag, not at all").unwrap();
    assert_clear_error(&run(&[&"doctor", &junk]), &["junk.txt"]);
    // A missing path too.
    assert_clear_error(&run(&[&"doctor", &tmp.path().join("missing.bag")]), &["missing.bag"]);
}

/// Every clean corpus bag exits 0 under --decode; the crashed recording is an error, and the
/// SQLite3 talker's stored `rcl_interfaces/msg/Log` (`uint8 level` alone) a warning.
#[test]
fn corpus() {
    let Some(root) = rbag_testkit::corpus("doctor_cli::corpus", "") else { return };
    let mut bags = Vec::new();
    for sub in ["ros1", "ros2/sqlite3", "ros2/mcap"] {
        for e in std::fs::read_dir(root.join(sub)).unwrap() {
            bags.push(e.unwrap().path());
        }
    }
    bags.sort();
    assert!(bags.len() >= 14, "{bags:?}");
    for bag in bags {
        let sqlite_talker = bag.ends_with("sqlite3/talker");
        let (want, kind) = if bag.ends_with("crashed.bag.active") {
            (1, Some(("error", "index")))
        } else if sqlite_talker {
            (3, Some(("warning", "definition_mismatch")))
        } else {
            (0, None)
        };
        let (code, found, out) = doctor(&bag, true);
        assert_eq!(code, want, "{}: {out}", bag.display());
        if let Some((s, k)) = kind {
            assert!(found.contains(&(s.to_string(), k.to_string())), "{}: {found:?}", bag.display());
        }
        if want != 3 && !sqlite_talker {
            // Without --decode the talker is clean too.
            continue;
        }
        assert_eq!(doctor(&bag, false).0, 0, "{}", bag.display());
    }
}

/// Damage at random places (bytes flipped, the file cut) never panics.
#[test]
fn random_damage_never_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let options = rbag_bag::doctor::DoctorOptions { decode: true, ..Default::default() };
    for format in [Format::Ros1, Format::Mcap] {
        let clean = clean(tmp.path(), format);
        let bytes = std::fs::read(&clean).unwrap();
        for i in 0..300 {
            let mut b = bytes.clone();
            if i % 5 == 0 {
                b.truncate((next() % b.len() as u64) as usize);
            } else {
                for _ in 0..(1 + next() % 4) {
                    let at = (next() % b.len() as u64) as usize;
                    b[at] ^= (next() % 255 + 1) as u8;
                }
            }
            let p = tmp.path().join(format!("r{i}.{}", if format == Format::Ros1 { "bag" } else { "mcap" }));
            std::fs::write(&p, &b).unwrap();
            // Errors (not a bag any more) and reports are both fine; a panic fails the test.
            let _ = rbag_bag::doctor::check(&p, &options);
            std::fs::remove_file(&p).unwrap();
        }
    }
}
