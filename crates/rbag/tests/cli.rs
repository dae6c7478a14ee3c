//! The `rbag` binary, run as a user runs it: output, exit codes, and bad input.

use std::process::{Command, Stdio};

use rbag_testkit::{corpus, ros_env, rosbag_cli, sample};

mod common;
use common::*;

#[test]
fn help_is_clear_for_every_verb() {
    let o = run(&[&"--help"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for verb in ["info", "reindex", "convert", "Exit codes"] {
        assert!(text.contains(verb), "{text}");
    }
    for verb in ["info", "reindex", "convert"] {
        let o = run(&[&verb, &"--help"]);
        assert!(o.status.success() && o.stdout.len() > 200, "{verb} --help");
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&[&"convert", &"in.bag"]).status.code(), Some(2), "missing -o");
    assert_eq!(run(&[&"info", &"--no-such-flag", &"x.bag"]).status.code(), Some(2));
    assert_eq!(run(&[&"frobnicate"]).status.code(), Some(2));
    assert_eq!(run(&[&"convert", &"a.bag", &"-o", &"b.bag", &"--start", &"yesterday"]).status.code(), Some(2));
}

#[test]
fn info_json_names_topics_with_counts() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 3);
    let o = run(&[&"info", &"--json", &bag]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let written = sample::messages(START, 3_000_000_000);
    assert_eq!(v["message_count"], written.len() as u64);
    assert_eq!(v["start_ns"], START);
    assert_eq!(v["version"], "2.0");
    assert_eq!(v["indexed"], true);
    for (k, t) in sample::TOPICS.iter().enumerate() {
        let topic = v["topics"].as_array().unwrap().iter().find(|x| x["name"] == t.topic).unwrap();
        assert_eq!(topic["type"], t.message_type);
        assert_eq!(topic["message_count"], written.iter().filter(|m| m.0 == k).count() as u64);
    }
    assert!(v["types"].as_array().unwrap().iter().any(|t| t["md5sum"] == "992ce8a1687cec8c8bd883ec73ca41d1"));
    let chatter = v["topics"].as_array().unwrap().iter().find(|x| x["name"] == "/chatter").unwrap();
    assert!((chatter["frequency_hz"].as_f64().unwrap() - 100.0).abs() < 0.01);

    let text = run(&[&"info", &bag]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("/chatter") && text.contains("300 msgs") && text.contains(" 100 Hz"), "{text}");
}

#[test]
fn info_on_the_crashed_bag_says_unindexed_and_suggests_reindex() {
    let Some(dir) = corpus("info_on_the_crashed_bag_says_unindexed_and_suggests_reindex", "ros1") else { return };
    let o = run(&[&"info", &dir.join("crashed.bag.active")]);
    assert!(o.status.success());
    assert!(stderr(&o).contains("unindexed") && stderr(&o).contains("rbag reindex"), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("UNINDEXED"));
}

#[test]
fn piping_into_head_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 1);
    let mut cmd = rbag();
    cmd.arg("info");
    for _ in 0..400 {
        cmd.arg(&bag);
    }
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    drop(out); // like `head` exiting
    let o = child.wait_with_output().unwrap();
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn bad_input_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(sample_bag(dir.path(), "good.bag", 2)).unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    // Truncated: inside the header, inside the index. (Cut inside a chunk, a bag is read by
    // scanning: tests/first_day.rs.)
    for (name, cut) in [("t1.bag", 100), ("t3.bag", good.len() - 10)] {
        let p = write(name, &good[..cut]);
        for verb in ["info", "convert"] {
            let out = dir.path().join(format!("{name}.{verb}.bag"));
            let o = if verb == "info" { run(&[&"info", &p]) } else { run(&[&"convert", &p, &"-o", &out]) };
            assert_clear_error(&o, &[name]);
            assert!(stderr(&o).contains("offset") || stderr(&o).contains("truncated"), "{}", stderr(&o));
        }
    }
    let mut random = b"#ROSBAG V2.0\n".to_vec();
    let mut x: u64 = 0x9E3779B97F4A7C15;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        random.push(x as u8);
    }
    assert_clear_error(&run(&[&"info", &write("random.bag", &random)]), &["random.bag", "offset"]);
    assert_clear_error(&run(&[&"info", &write("noise.bag", &random[13..])]), &["noise.bag"]);

    // A chunk whose data length claims 4 GiB.
    let chunk = 4117usize;
    let hl = u32::from_le_bytes(good[chunk..chunk + 4].try_into().unwrap()) as usize;
    let mut lying = good.clone();
    lying[chunk + 4 + hl..chunk + 8 + hl].copy_from_slice(&u32::MAX.to_le_bytes());
    let o = run(&[&"convert", &write("lying.bag", &lying), &"-o", &dir.path().join("l.bag")]);
    assert_clear_error(&o, &["lying.bag", "offset 4117"]);

    // A bad op code where the chunk should be.
    let mut badop = good.clone();
    let op_at = (chunk + 4..chunk + 4 + hl).find(|&i| &good[i..i + 3] == b"op=").unwrap() + 3;
    badop[op_at] = 0x42;
    let o = run(&[&"convert", &write("badop.bag", &badop), &"-o", &dir.path().join("b.bag")]);
    assert_clear_error(&o, &["badop.bag", "offset 4117", "0x42"]);

    let o = run(&[&"info", &dir.path().join("missing.bag")]);
    assert_clear_error(&o, &["missing.bag"]);
}

#[test]
fn convert_filters_cuts_recompresses_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 4);
    let all = read_all(&bag);
    let out = dir.path().join("f.bag");
    let (s, e) = (START + 1_000_000_000, START + 2_500_000_000);
    let o = run(&[
        &"convert",
        &bag,
        &"-o",
        &out,
        &"--compression",
        &"bz2",
        &"--chunk-size",
        &"4KiB",
        &"--topics",
        &"/chatter",
        &"/point",
        &"--start",
        &format!("{s}ns"),
        &"--end",
        &format!("{}.5", (START + 2_000_000_000) / 1_000_000_000),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = read_all(&out);
    let want: Vec<_> =
        all.iter().filter(|m| (m.0 == "/chatter" || m.0 == "/point") && m.1 >= s && m.1 < e).cloned().collect();
    assert_eq!(got, want);
    let info: serde_json::Value = serde_json::from_slice(&run(&[&"info", &"--json", &out]).stdout).unwrap();
    assert_eq!(info["compression"][0]["name"], "bz2");
    assert!(info["chunk_count"].as_u64().unwrap() > 1);

    // An existing output is refused without --force.
    let again = run(&[&"convert", &bag, &"-o", &out]);
    assert_clear_error(&again, &["f.bag", "--force"]);

    // Regex and exclusion; merging two bags keeps time order.
    let other = dir.path().join("other.bag");
    let mut w = rbag_storage::create(&other, rbag_storage::Format::Ros1, &Default::default()).unwrap();
    sample::write(w.as_mut(), START + 5_000_000, 1_000_000_000).unwrap();
    w.finish().unwrap();
    let merged = dir.path().join("m.bag");
    let o = run(&[&"convert", &bag, &other, &"-o", &merged, &"-e", &"^/(chat|spe)", &"--exclude-topics", &"/speed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = read_all(&merged);
    let mut want: Vec<_> = all.iter().chain(read_all(&other).iter()).filter(|m| m.0 == "/chatter").cloned().collect();
    want.sort_by_key(|m| m.1);
    assert_eq!(got.len(), want.len());
    assert!(got.windows(2).all(|w| w[0].1 <= w[1].1));
    assert_eq!(got.iter().map(|m| m.1).collect::<Vec<_>>(), want.iter().map(|m| m.1).collect::<Vec<_>>());
}

#[test]
fn reindex_repairs_the_crashed_bag_for_rosbag() {
    let test = "reindex_repairs_the_crashed_bag_for_rosbag";
    let (Some(dir), Some(rosbag)) = (corpus(test, "ros1"), rosbag_cli(test)) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let active = tmp.path().join("crashed.bag.active");
    std::fs::copy(dir.join("crashed.bag.active"), &active).unwrap();
    let o = run(&[&"reindex", &active]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("kept 253 messages") && stderr(&o).contains("dropped 0 bytes and 0 messages"),
        "{}",
        stderr(&o)
    );
    let fixed = tmp.path().join("crashed.bag");
    let mut cmd = Command::new(&rosbag);
    cmd.arg("info").arg(&fixed);
    ros_env(&mut cmd, tmp.path());
    let info = cmd.output().unwrap();
    assert!(info.status.success(), "rosbag info: {}", stderr(&info));
    assert!(
        String::from_utf8_lossy(&info.stdout).contains("messages:    253"),
        "{}",
        String::from_utf8_lossy(&info.stdout)
    );
    assert_eq!(read_all(&fixed), read_all(&active));

    // In place: X.bag is repaired, the original kept as X.orig.bag.
    let o = run(&[&"reindex", &fixed]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(tmp.path().join("crashed.orig.bag").exists());
    assert_eq!(read_all(&fixed), read_all(&active));

    // A torn tail is dropped and reported, with exit code 3.
    let bytes = std::fs::read(&active).unwrap();
    let torn = tmp.path().join("torn.bag.active");
    std::fs::write(&torn, &bytes[..bytes.len() - 40]).unwrap();
    let o = run(&[&"reindex", &torn]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("kept 252 messages") && stderr(&o).contains("and 1 messages of torn tail"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_failing_reindex_leaves_the_input_untouched() {
    let Some(dir) = corpus("a_failing_reindex_leaves_the_input_untouched", "ros1") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("x.bag");
    std::fs::copy(dir.join("multi_none.bag"), &bag).unwrap();
    let before = std::fs::read(&bag).unwrap();
    // The output directory does not exist.
    let o = run(&[&"reindex", &bag, &"-o", &tmp.path().join("no/such/dir/out.bag")]);
    assert_clear_error(&o, &["x.bag"]);
    // In place, with the disk "full" (a 64 KiB file size limit).
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f 64; exec {} reindex {}", env!("CARGO_BIN_EXE_rbag"), bag.display()))
        .output()
        .unwrap();
    assert_clear_error(&o, &["x.bag"]);
    assert_eq!(std::fs::read(&bag).unwrap(), before, "input unchanged");
    assert!(!tmp.path().join("x.orig.bag").exists());
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no temporary files left: {leftovers:?}");
}

#[test]
fn a_full_disk_is_a_clear_error_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 60);
    let out = dir.path().join("out.bag");
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 256; exec {} convert {} -o {} --chunk-size 16KiB",
            env!("CARGO_BIN_EXE_rbag"),
            bag.display(),
            out.display()
        ))
        .output()
        .unwrap();
    assert_clear_error(&o, &["out.bag"]);
    assert!(stderr(&o).contains("too large") || stderr(&o).contains("space"), "{}", stderr(&o));
    // Nothing under the output's name, and no temporary: a half-written bag never looks
    // complete (issue 13).
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, [std::ffi::OsString::from("s.bag")], "{left:?}");
}

/// Peak RSS of an rbag run, in KiB, as the process itself measured it (`VmHWM`).
fn peak_rss_kib(mut cmd: Command) -> (i32, u64) {
    let o = cmd.env("RBAG_REPORT_PEAK_RSS", "1").output().unwrap();
    let err = stderr(&o);
    let kib = err
        .lines()
        .find_map(|l| l.strip_prefix("rbag: peak RSS "))
        .and_then(|v| v.trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS report: {err}"));
    (o.status.code().unwrap_or(-1), kib)
}

#[test]
fn memory_stays_bounded_on_a_large_bag() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.bag");
    {
        let mut w = rbag_storage::create(&path, rbag_storage::Format::Ros1, &Default::default()).unwrap();
        let image = w.add_connection(&sample::connection(&sample::TOPICS[0])).unwrap();
        let small = w.add_connection(&sample::connection(&sample::TOPICS[1])).unwrap();
        let big = vec![0xABu8; 1 << 20];
        for i in 0..320u64 {
            w.write(image, START + i * 33_000_000, 0, &big).unwrap();
            for j in 0..30 {
                let t = START + i * 33_000_000 + j * 1_000_000;
                w.write(small, t, t, &(t as f64).to_le_bytes()).unwrap();
            }
        }
        w.finish().unwrap();
    }
    let size_mib = std::fs::metadata(&path).unwrap().len() >> 20;
    assert!(size_mib >= 320);
    let mut cmd = rbag();
    cmd.arg("convert").arg(&path).arg("-o").arg(dir.path().join("copy.bag"));
    let (code, rss) = peak_rss_kib(cmd);
    assert_eq!(code, 0);
    eprintln!("convert of a {size_mib} MiB bag: peak RSS {} MiB", rss >> 10);
    assert!(rss < 64 << 10, "peak RSS {} MiB for a {size_mib} MiB bag", rss >> 10);
    // info reads chunk headers and index data only: what it maps beyond the binary's own
    // footprint (`rbag list storage`, which grows with what is linked in) stays small.
    let mut cmd = rbag();
    cmd.args(["list", "storage"]);
    let (_, base) = peak_rss_kib(cmd);
    let mut cmd = rbag();
    cmd.arg("info").arg(&path);
    let (code, rss) = peak_rss_kib(cmd);
    assert_eq!(code, 0);
    let over = rss.saturating_sub(base);
    assert!(
        over < 28 << 10,
        "info peak RSS {} MiB, {} MiB over the binary's {} MiB",
        rss >> 10,
        over >> 10,
        base >> 10
    );
}
