//! Outputs never destroy inputs (issue 13, D1/D2/D5/D6): every spelling of a path, links,
//! `--force`, failed and killed runs. Each test checks the exit code, the message, and the file
//! system afterwards.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;

use rbag_testkit::corpus;

mod common;
use common::*;

/// Every file under `root` (not following links) with its bytes: what must survive.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p);
            } else if t.is_symlink() {
                out.insert(p.clone(), std::fs::read_link(&p).unwrap().into_os_string().into_encoded_bytes());
            } else if t.is_file() {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            } else {
                // A FIFO or device: its existence is what must survive (reading would block).
                out.insert(p.clone(), b"<special>".to_vec());
            }
        }
    }
    out
}

/// No hidden staging file is left anywhere under `root`.
fn assert_no_temporaries(root: &Path) {
    let left: Vec<_> = snapshot(root).into_keys().filter(|p| p.to_string_lossy().contains(".rbag-")).collect();
    assert!(left.is_empty(), "temporaries left behind: {left:?}");
}

fn convert_in(cwd: &Path, args: &[&str]) -> Output {
    rbag().current_dir(cwd).arg("convert").args(args).output().unwrap()
}

/// A refusal: exit 1, no panic, says it refused and names the input.
fn assert_refused(o: &Output, names: &[&str]) {
    assert_clear_error(o, names);
    assert!(stderr(o).contains("refused as the output"), "{}", stderr(o));
}

/// A rosbag2 MCAP directory of three files, made from the sample bag.
fn sample_dir_bag(dir: &Path, name: &str) -> PathBuf {
    let bag = sample_bag(dir, &format!("{name}-src.bag"), 3);
    let out = dir.join(name);
    let o = run(&[&"convert", &bag, &"-o", &out, &"-s", &"mcap", &"--max-bag-duration", &"1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(bag).unwrap();
    out
}

#[test]
fn convert_force_never_deletes_its_input_however_the_output_is_spelled() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let input =
        match corpus("convert_force_never_deletes_its_input_however_the_output_is_spelled", "ros1/multi_lz4.bag") {
            Some(c) => {
                std::fs::copy(c, root.join("in.bag")).unwrap();
                root.join("in.bag")
            }
            None => sample_bag(root, "in.bag", 3),
        };
    std::fs::create_dir(root.join("sub")).unwrap();
    symlink(root, root.join("sub/up")).unwrap();
    std::fs::hard_link(&input, root.join("hard.bag")).unwrap();
    symlink(&input, root.join("soft.bag")).unwrap();
    let before = snapshot(root);
    let abs = input.to_str().unwrap().to_string();
    for out in ["./in.bag", abs.as_str(), "sub/../in.bag", "sub/up/in.bag", "hard.bag", "./sub/.././in.bag"] {
        for force in [false, true] {
            let mut args = vec!["in.bag", "-o", out];
            if force {
                args.push("--force");
            }
            let o = convert_in(root, &args);
            assert_refused(&o, &["in.bag"]);
            assert_eq!(snapshot(root), before, "-o {out} force={force} changed the tree");
        }
    }
    // The output given as a link to the input: links are never written through.
    let o = convert_in(root, &["in.bag", "-o", "soft.bag", "--force"]);
    assert_refused(&o, &["soft.bag", "symbolic link"]);
    assert_eq!(snapshot(root), before);
}

#[test]
fn convert_force_never_deletes_an_input_bag_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let wb = sample_dir_bag(root, "wb");
    assert_eq!(std::fs::read_dir(&wb).unwrap().count(), 4, "metadata.yaml and three files");
    let before = snapshot(root);
    let cases: [(&Path, &[&str]); 5] = [
        (root, &["wb", "-o", "./wb", "--force"]),
        (root, &["wb", "-o", "wb/inside.mcap", "--force"]),
        (root, &["wb/wb_0.mcap", "-o", "wb", "--force"]),
        (root, &["wb/wb_1.mcap", "-o", "wb/other.mcap"]),
        (&wb, &["wb_0.mcap", "-o", ".", "--force"]),
    ];
    for (cwd, args) in cases {
        let o = convert_in(cwd, args);
        assert_refused(&o, &[]);
        assert_eq!(snapshot(root), before, "{args:?} changed the tree");
    }
    let o = rbag().current_dir(root).args(["convert", "wb", "-o", root.to_str().unwrap(), "--force"]).output().unwrap();
    assert_refused(&o, &["contains the input"]);
    assert_eq!(snapshot(root), before);
}

#[test]
fn force_with_a_missing_input_keeps_the_existing_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let keep = root.join("keep.mcap");
    let src = sample_bag(root, "s.bag", 1);
    assert!(run(&[&"convert", &src, &"-o", &keep]).status.success());
    let before = snapshot(root);
    let o = convert_in(root, &["does_not_exist.bag", "-o", "keep.mcap", "--force"]);
    assert_clear_error(&o, &["does_not_exist.bag"]);
    assert_eq!(snapshot(root), before);
}

#[test]
fn force_replaces_only_a_directory_that_is_provably_a_bag() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = sample_bag(root, "s.bag", 1);
    // metadata.yaml that is not a bag's, beside a user's file.
    let thesis = root.join("thesis");
    std::fs::create_dir(&thesis).unwrap();
    std::fs::write(thesis.join("metadata.yaml"), "hello: world\n").unwrap();
    std::fs::write(thesis.join("thesis.tex"), "\\documentclass{article}").unwrap();
    // A real bag directory with one stray file.
    let bag = sample_dir_bag(root, "bag");
    std::fs::write(bag.join("notes.txt"), "mine").unwrap();
    let before = snapshot(root);
    let o = run(&[&"convert", &src, &"-o", &thesis, &"--force"]);
    assert_refused(&o, &["thesis"]);
    let o = run(&[&"convert", &src, &"-o", &bag, &"--force"]);
    assert_refused(&o, &["notes.txt"]);
    assert_eq!(snapshot(root), before);
    assert_no_temporaries(root);
    // Without the stray file the bag is replaced, and only once the new one is complete.
    std::fs::remove_file(bag.join("notes.txt")).unwrap();
    let o = run(&[&"convert", &src, &"-o", &bag, &"--force", &"--topics", &"/chatter"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let topics: Vec<String> = read_all(&bag).into_iter().map(|m| m.0).collect();
    assert!(!topics.is_empty() && topics.iter().all(|t| t == "/chatter"), "{topics:?}");
    assert_no_temporaries(root);
}

#[test]
fn force_refuses_symlinks_devices_and_fifos() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = sample_bag(root, "s.bag", 1);
    let target = sample_bag(root, "target.bag", 1);
    symlink(&target, root.join("link.bag")).unwrap();
    symlink("/dev/null", root.join("null.bag")).unwrap();
    let fifo = root.join("fifo.bag");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let before = snapshot(root);
    for (out, why) in [("link.bag", "symbolic link"), ("null.bag", "symbolic link"), ("fifo.bag", "FIFO")] {
        let o = run(&[&"convert", &src, &"-o", &root.join(out), &"--force"]);
        assert_refused(&o, &[out, why]);
    }
    let o = run(&[&"convert", &src, &"-o", &"/dev/null", &"--force"]);
    assert_refused(&o, &["/dev/null"]);
    assert!(Path::new("/dev/null").exists());
    // As root, this once deleted the system's /dev/stdout link.
    let o = run(&[&"convert", &src, &"-o", &"/dev/stdout", &"--force"]);
    assert_refused(&o, &["/dev/stdout"]);
    assert!(std::fs::symlink_metadata("/dev/stdout").is_ok_and(|m| m.file_type().is_symlink()));
    assert_eq!(snapshot(root), before);
}

#[test]
fn a_file_that_is_not_a_bag_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = sample_bag(root, "s.bag", 1);
    std::fs::write(root.join("thesis.tex"), "\\documentclass{article}").unwrap();
    let before = snapshot(root);
    let o = run(&[&"convert", &src, &"-o", &root.join("thesis.tex"), &"-s", &"mcap", &"--force"]);
    assert_refused(&o, &["thesis.tex", "not a bag"]);
    assert_eq!(snapshot(root), before);
}

#[test]
fn a_failed_convert_leaves_no_output_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = sample_bag(root, "a.bag", 3);
    // zstd is not a ROS 1 compression: refused, and no 0-byte x.bag is left.
    let o = run(&[&"convert", &src, &"-o", &root.join("x.bag"), &"--compression", &"zstd"]);
    assert_clear_error(&o, &["x.bag", "zstd"]);
    assert!(!root.join("x.bag").exists());
    // One flipped byte in a chunk's data: the convert fails part way, for every output kind.
    let mut bytes = std::fs::read(&src).unwrap();
    let at = bytes.len() * 2 / 3;
    bytes[at] ^= 0xff;
    bytes[at + 1] ^= 0xff;
    bytes[at + 2] ^= 0xff;
    bytes[at + 3] ^= 0xff;
    let bad = root.join("bad.bag");
    std::fs::write(&bad, &bytes).unwrap();
    for out in ["f.mcap", "f.db3", "f_dir", "f.bag"] {
        let o = run(&[&"convert", &bad, &"-o", &root.join(out)]);
        if o.status.code() == Some(0) {
            // The flip may land in a payload; then the output is complete and correct to read.
            assert!(rbag_storage::open(&root.join(out)).is_ok());
            continue;
        }
        assert_clear_error(&o, &["bad.bag"]);
        assert!(stderr(&o).contains("nothing was written there"), "{}", stderr(&o));
        assert!(!root.join(out).exists(), "{out} left behind");
    }
    assert_no_temporaries(root);
}

#[test]
fn an_existing_bag_survives_a_failed_replacement() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = sample_bag(root, "a.bag", 2);
    let out = root.join("out.bag");
    std::fs::copy(&src, &out).unwrap();
    let before = snapshot(root);
    let o = run(&[&"convert", &src, &"-o", &out, &"--compression", &"zstd", &"--force"]);
    assert_clear_error(&o, &["out.bag"]);
    assert_eq!(snapshot(root), before);
    let o = run(&[&"convert", &src, &"-o", &out]);
    assert_clear_error(&o, &["out.bag", "--force"]);
    assert_eq!(snapshot(root), before);
}

#[test]
fn reindex_never_overwrites_the_first_backup() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let bag = sample_bag(root, "t.bag", 2);
    let original = std::fs::read(&bag).unwrap();
    for (run_no, force) in [(1, false), (2, true), (3, false)] {
        let mut c = rbag();
        c.arg("reindex").arg(&bag);
        if force {
            c.arg("--force");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "run {run_no}: {}", stderr(&o));
        let expect = if run_no == 1 { "t.orig.bag".to_string() } else { format!("t.orig.{}.bag", run_no - 1) };
        assert!(
            stderr(&o).contains(&format!("original kept as {}", root.join(&expect).display())),
            "run {run_no}: {}",
            stderr(&o)
        );
        assert!(root.join(&expect).exists());
    }
    assert_eq!(std::fs::read(root.join("t.orig.bag")).unwrap(), original, "the first backup holds the original bytes");
    assert_eq!(read_all(&bag).len(), read_all(&root.join("t.orig.bag")).len());
    assert_no_temporaries(root);
}

#[test]
fn reindex_into_an_existing_directory_is_refused_without_a_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let bag = sample_bag(root, "t.bag", 1);
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("d/keep.txt"), "x").unwrap();
    let before = snapshot(root);
    for force in [false, true] {
        let mut c = rbag();
        c.arg("reindex").arg(&bag).arg("-o").arg(root.join("d"));
        if force {
            c.arg("--force");
        }
        let o = c.output().unwrap();
        assert_clear_error(&o, &["d"]);
        assert_eq!(snapshot(root), before);
    }
    // reindex -o the input itself (another spelling) is refused too.
    let o = rbag().current_dir(root).args(["reindex", "t.bag", "-o", "./t.bag", "--force"]).output().unwrap();
    assert_refused(&o, &["t.bag"]);
    assert_eq!(snapshot(root), before);
}

/// A tiny deterministic generator (xorshift), so a failing case can be replayed from its seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[(self.next() % v.len() as u64) as usize]
    }
}

/// For random (input, output spelling, --force) over a tree of bags, directories, links and a
/// user's files, no input byte changes and no file outside the output disappears. About 500
/// cases by default; `RBAG_OUTPUT_CASES=10000` for a long run.
#[test]
fn property_no_spelling_of_an_output_loses_a_file() {
    let cases: u64 = std::env::var("RBAG_OUTPUT_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(500);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let template = root.join("template");
    std::fs::create_dir(&template).unwrap();
    sample_bag(&template, "a.bag", 1);
    sample_dir_bag(&template, "wb");
    std::fs::create_dir(template.join("sub")).unwrap();
    std::fs::write(template.join("sub/notes.txt"), "user data").unwrap();
    std::fs::write(template.join("wbx.txt"), "more").unwrap();
    let tree = root.join("t");
    let reset = || {
        let _ = std::fs::remove_dir_all(&tree);
        assert!(std::process::Command::new("cp").arg("-a").arg(&template).arg(&tree).status().unwrap().success());
        symlink("../a.bag", tree.join("sub/link.bag")).unwrap();
        symlink("..", tree.join("sub/up")).unwrap();
        std::fs::hard_link(tree.join("a.bag"), tree.join("sub/hard.bag")).unwrap();
    };
    reset();
    let inputs = ["a.bag", "wb", "wb/wb_0.mcap", "wb/wb_2.mcap", "sub/link.bag", "sub/hard.bag", "sub/up/a.bag"];
    let outputs = [
        "a.bag",
        "./a.bag",
        "sub/../a.bag",
        "sub/up/a.bag",
        "sub/hard.bag",
        "sub/link.bag",
        "wb",
        "./wb/",
        "wb/x.mcap",
        "sub/up/wb",
        ".",
        "sub",
        "sub/notes.txt",
        "wbx.txt",
        "new.mcap",
        "new.db3",
        "new.bag",
        "newdir",
        "sub/up/sub/new.bag",
        "sub/..",
        "wb/..",
        "wb/wb_1.mcap",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut refused, mut written) = (0, 0);
    for case in 0..cases {
        let input = *rng.pick(&inputs);
        let output = *rng.pick(&outputs);
        let force = rng.next().is_multiple_of(2);
        let before = snapshot(&tree);
        let mut args = vec![input, "-o", output];
        if force {
            args.push("--force");
        }
        let o = convert_in(&tree, &args);
        let err = stderr(&o);
        assert!(matches!(o.status.code(), Some(0..=3)) && !err.contains("panicked at"), "case {case} {args:?}: {err}");
        let after = snapshot(&tree);
        let out_real = std::fs::canonicalize(tree.join(output)).ok();
        for (path, bytes) in &before {
            // What the output replaced may go; everything else stays byte for byte.
            let replaced = out_real.as_ref().is_some_and(|o| {
                std::fs::canonicalize(path.parent().unwrap())
                    .map(|p| p.join(path.file_name().unwrap()))
                    .is_ok_and(|p| p.starts_with(o))
            });
            if replaced && o.status.success() {
                continue;
            }
            assert_eq!(after.get(path), Some(bytes), "case {case} {args:?} changed or removed {path:?}: {err}");
        }
        if o.status.success() {
            written += 1;
            reset();
        } else {
            refused += 1;
            assert!(
                after.keys().all(|p| !p.to_string_lossy().contains(".rbag-")),
                "case {case} {args:?} left a temporary"
            );
        }
    }
    eprintln!("{cases} cases: {written} written, {refused} refused");
    assert!(written > 0 && refused > 0);
}

/// A ROS 1 bag of `n` std_msgs/String messages of about 100 bytes.
fn string_bag(path: &Path, n: u64) {
    let mut w = rbag_storage::create(path, rbag_storage::Format::Ros1, &Default::default()).unwrap();
    let c = w.add_connection(&rbag_testkit::sample::connection(&rbag_testkit::sample::TOPICS[0])).unwrap();
    let text = "x".repeat(96);
    for i in 0..n {
        let s = format!("{i:08}{text}");
        let mut data = (s.len() as u32).to_le_bytes().to_vec();
        data.extend_from_slice(s.as_bytes());
        w.write(c, START + i * 1000, START + i * 1000, &data).unwrap();
    }
    w.finish().unwrap();
}

/// SIGKILL at 20 points spread over a convert that runs at least a second, to each output
/// format: the output's name holds either nothing or a complete bag.
#[test]
fn a_killed_convert_leaves_nothing_or_a_complete_bag() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let input = root.join("in.bag");
    let mut n = 800_000;
    string_bag(&input, n);
    for (out, extra) in [
        ("o.mcap", &[][..]),
        ("o.db3", &[][..]),
        ("odir", &["-s", "sqlite3", "--max-bag-size", "4MiB"][..]),
        ("o.bag", &["--compression", "lz4"][..]),
    ] {
        let target = root.join(out);
        let convert = || {
            let mut c = rbag();
            c.current_dir(root).args(["convert", "in.bag", "-o", out]).args(extra);
            c
        };
        // Grow the input until this convert takes a second.
        let full = loop {
            let t = std::time::Instant::now();
            let o = convert().output().unwrap();
            assert!(o.status.success(), "{out}: {}", stderr(&o));
            let took = t.elapsed();
            let _ = std::fs::remove_dir_all(&target).or_else(|_| std::fs::remove_file(&target));
            if took >= std::time::Duration::from_secs(1) || n >= 12_800_000 {
                break took;
            }
            n *= 2;
            std::fs::remove_file(&input).unwrap();
            string_bag(&input, n);
        };
        let (mut nothing, mut complete) = (0, 0);
        for k in 1..=20u32 {
            let mut child = convert().stderr(std::process::Stdio::null()).spawn().unwrap();
            std::thread::sleep(full * k / 21);
            let _ = child.kill();
            let status = child.wait().unwrap();
            if std::fs::symlink_metadata(&target).is_err() {
                nothing += 1;
            } else {
                // A kill can land after the rename, while rbag exits: the bag must be whole,
                // whatever the exit status says.
                let r = rbag_storage::open(&target)
                    .unwrap_or_else(|e| panic!("{out} at {k}/21 ({status}): the output is not a bag: {e}"));
                assert!(r.warnings().is_empty(), "{out}: {:?}", r.warnings());
                assert_eq!(r.info().unwrap().message_count, n, "{out} at {k}/21 ({status})");
                complete += 1;
                let _ = std::fs::remove_dir_all(&target).or_else(|_| std::fs::remove_file(&target));
            }
            // What a kill leaves is hidden and named as partial; clear it for the next round.
            for e in std::fs::read_dir(root).unwrap().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && name.contains(".rbag-") {
                    assert!(name.ends_with(".partial") || name.contains(".partial-"), "{name}");
                    let _ = std::fs::remove_dir_all(e.path()).or_else(|_| std::fs::remove_file(e.path()));
                }
            }
        }
        eprintln!("{out}: full convert {full:?} of {n} messages; killed runs left nothing {nothing} times, a complete bag {complete} times");
        // The property above is the point; this only makes sure the kills did land mid-run.
        assert!(nothing > 0, "{out}: no kill landed before the convert finished");
    }
}

/// Directory reindex is for a broken metadata.yaml: it rebuilds it from the files, keeps the
/// old one beside it (never overwriting an earlier backup), and keeps the old version.
#[test]
fn directory_reindex_repairs_a_broken_metadata_yaml_and_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_dir_bag(dir.path(), "wb");
    let expected = read_all(&bag).len();
    let meta = bag.join("metadata.yaml");
    // A parseable metadata.yaml of version 4 with a wrong count: the version is kept.
    let v4 = std::fs::read_to_string(&meta).unwrap().replace("version: 9", "version: 4");
    std::fs::write(&meta, &v4).unwrap();
    let o = run(&[&"reindex", &bag]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(bag.join("metadata.orig.yaml")).unwrap(), v4.as_bytes());
    assert!(std::fs::read_to_string(&meta).unwrap().contains("version: 4"));
    // A broken one: repaired, and the first backup survives.
    std::fs::write(&meta, "rosbag2_bagfile_information: [unclosed").unwrap();
    assert_clear_error(&run(&[&"info", &bag]), &["metadata.yaml"]);
    let o = run(&[&"reindex", &bag]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("metadata.orig.1.yaml"), "{}", stderr(&o));
    assert_eq!(std::fs::read(bag.join("metadata.orig.yaml")).unwrap(), v4.as_bytes());
    assert_eq!(std::fs::read(bag.join("metadata.orig.1.yaml")).unwrap(), b"rosbag2_bagfile_information: [unclosed");
    assert_eq!(read_all(&bag).len(), expected);
}

/// A file name that is not UTF-8 keeps its exact bytes in the backup and the repaired name.
#[test]
fn reindex_keeps_non_utf8_names_byte_for_byte() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 1);
    let odd = dir.path().join(OsStr::from_bytes(b"t\xff.bag"));
    std::fs::rename(&bag, &odd).unwrap();
    let o = rbag().arg("reindex").arg(&odd).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join(OsStr::from_bytes(b"t\xff.orig.bag")).exists());
    let active = dir.path().join(OsStr::from_bytes(b"u\xfe.bag.active"));
    std::fs::copy(&odd, &active).unwrap();
    let o = rbag().arg("reindex").arg(&active).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join(OsStr::from_bytes(b"u\xfe.bag")).exists());
}

/// A full disk mid-convert: exit 1 naming the output and the cause, and nothing left on the
/// full file system. The disk is a 2 MiB tmpfs in a private mount namespace (needs root).
#[test]
fn a_full_disk_leaves_no_output_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.bag");
    string_bag(&input, 100_000);
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    for out in ["out.mcap", "out.db3", "out", "out.bag"] {
        let script = format!(
            "mount -t tmpfs -o size=2m tmpfs {d} || exit 99; {rbag} convert {i} -o {d}/{out}; rc=$?; ls -A {d}; exit $rc",
            d = disk.display(),
            rbag = env!("CARGO_BIN_EXE_rbag"),
            i = input.display()
        );
        let o = std::process::Command::new("unshare").args(["-m", "sh", "-c", &script]).output().unwrap();
        if o.status.code() == Some(99) || (!o.status.success() && stderr(&o).contains("unshare")) {
            rbag_testkit::skip(
                "a_full_disk_leaves_no_output_and_no_temporary",
                &format!("cannot mount a tmpfs in a private namespace: {}", stderr(&o)),
            );
            return;
        }
        assert_clear_error(&o, &[out]);
        assert!(stderr(&o).contains("No space left") || stderr(&o).contains("disk is full"), "{}", stderr(&o));
        let listing = String::from_utf8_lossy(&o.stdout);
        assert!(listing.trim().is_empty(), "{out}: the full disk holds {listing:?}");
    }
}

/// A closed stdout (`| head -c1`) is a quiet exit 0 for every reading verb.
#[test]
fn a_closed_stdout_is_a_quiet_exit() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "s.bag", 3);
    for args in
        [vec!["info", "--json"], vec!["info"], vec!["echo", "--json"], vec!["echo"], vec!["echo", "--csv", "/chatter"]]
    {
        let script = format!(
            "{} {} {} {} | head -c1 >/dev/null; exit ${{PIPESTATUS[0]}}",
            env!("CARGO_BIN_EXE_rbag"),
            args[0],
            bag.display(),
            args[1..].join(" ")
        );
        let o = std::process::Command::new("bash").args(["-c", &script]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).is_empty(), "{args:?}: {}", stderr(&o));
    }
}

/// A storage file in a bag directory that metadata.yaml does not list (a recorder killed
/// before it listed its last file) is not ignored silently.
#[test]
fn an_unlisted_storage_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_dir_bag(dir.path(), "wb");
    std::fs::copy(bag.join("wb_2.mcap"), bag.join("wb_3.mcap")).unwrap();
    let o = run(&[&"info", &bag]);
    assert!(stderr(&o).contains("wb_3.mcap") && stderr(&o).contains("not read"), "{}", stderr(&o));
}
