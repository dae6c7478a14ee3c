//! `rbag compress` / `rbag decompress` (issue 17, part 5): round trips keep every message for
//! each storage and compression, Debian's rosbag reads what rbag compressed, and a run killed at
//! any point (SIGKILL after a random delay, or an abort injected between the renames) never
//! leaves the user without a complete copy of the bag; a rerun finishes the job.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Output};
use std::time::{Duration, Instant};

use rbag_storage::{Connection, Format};
use rbag_testkit::{corpus, rosbag_cli, rosbag_python};

mod common;
use common::*;

type Messages = Vec<(String, u64, Vec<u8>)>;

fn ok(o: &Output) -> String {
    let err = stderr(o);
    assert!(o.status.success(), "exit {:?}; stderr: {err}", o.status);
    assert!(!err.contains("panicked at"), "{err}");
    err
}

/// `rbag <job> <args>`.
fn job(job: &str, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut all: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&job];
    all.extend_from_slice(args);
    run(&all)
}

fn compress(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    job("compress", args)
}

fn decompress(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    job("decompress", args)
}

/// Chunk compressions (name → chunks) and the rosbag2 mode (`zstd file`, …; empty for none).
fn compression_of(path: &Path) -> (Vec<String>, String) {
    let bag = rbag_bag::Bag::open(path).unwrap();
    let info = bag.storage_info().unwrap();
    (info.compression.keys().cloned().collect(), info.properties.get("compression").cloned().unwrap_or_default())
}

fn assert_chunks(path: &Path, want: &str) {
    let (chunks, mode) = compression_of(path);
    assert_eq!(chunks, vec![want.to_string()], "{}", path.display());
    assert_eq!(mode, "", "{}", path.display());
}

/// Same messages: every topic, time and byte, in order.
fn assert_same(path: &Path, original: &Messages) {
    let now = read_all(path);
    assert_eq!(now.len(), original.len(), "{}: message count", path.display());
    for (i, (a, b)) in now.iter().zip(original).enumerate() {
        assert!(a == b, "{}: message {i} differs: {:?} {} vs {:?} {}", path.display(), a.0, a.1, b.0, b.1);
    }
}

/// No work directory or staging file is left beside the bag.
fn assert_no_leftovers(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".rbag-"))
        .collect();
    assert!(left.is_empty(), "leftovers: {left:?}");
}

fn convert_to(src: &Path, out: &Path, storage: &str) {
    ok(&run(&[&"convert", &src, &"-o", &out, &"-s", &storage]));
}

/// A sample bag of `n` messages converted to `storage` at `dir/name`, and its messages.
fn converted(dir: &Path, n: u64, name: &str, storage: &str) -> (PathBuf, Messages) {
    let src = sample_bag(dir, "src.bag", n);
    let bag = dir.join(name);
    convert_to(&src, &bag, storage);
    let original = read_all(&bag);
    (bag, original)
}

/// The rosbag2 compression mode of `path` is `mode` (`""`: none) and it holds `original`.
fn assert_mode(path: &Path, mode: &str, original: &Messages) {
    assert_eq!(compression_of(path).1, mode, "{}", path.display());
    assert_same(path, original);
}

/// The next number of a xorshift sequence.
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[test]
fn ros1_bz2_and_lz4_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "run.bag", 20);
    let original = read_all(&bag);
    let bytes = std::fs::read(&bag).unwrap();
    assert_chunks(&bag, "none");

    // rosbag's default: bz2, original kept as run.orig.bag.
    let err = ok(&compress(&[&bag]));
    assert!(err.contains("none -> bz2") && err.contains("run.orig.bag"), "{err}");
    assert_chunks(&bag, "bz2");
    assert_same(&bag, &original);
    let backup = dir.path().join("run.orig.bag");
    assert_eq!(std::fs::read(&backup).unwrap(), bytes, "the backup is the original, byte for byte");
    assert_no_leftovers(dir.path());

    // Again: already so, skipped with a note, nothing touched.
    let err = ok(&compress(&[&bag]));
    assert!(err.contains("already bz2"), "{err}");

    // Decompress: the backup is there, so it needs -f (or --no-backup).
    let o = decompress(&[&bag]);
    assert_clear_error(&o, &["run.orig.bag", "already exists", "-f"]);
    assert_chunks(&bag, "bz2");
    ok(&decompress(&[&"-f", &bag]));
    assert_chunks(&bag, "none");
    assert_same(&bag, &original);
    assert_chunks(&backup, "bz2");

    // lz4, without a backup, and back.
    ok(&compress(&[&"--lz4", &"--no-backup", &bag]));
    assert_chunks(&bag, "lz4");
    assert_same(&bag, &original);
    assert_chunks(&backup, "bz2");
    ok(&decompress(&[&"--no-backup", &bag]));
    assert_chunks(&bag, "none");
    assert_same(&bag, &original);
    // -j is bz2; lz4 → bz2 directly.
    ok(&compress(&[&"--lz4", &"--no-backup", &bag]));
    ok(&compress(&[&"-j", &"--no-backup", &"-q", &bag]));
    assert_chunks(&bag, "bz2");
    assert_same(&bag, &original);
    assert_no_leftovers(dir.path());
}

#[test]
fn mcap_zstd_and_lz4_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, original) = converted(dir.path(), 20, "run.mcap", "mcap");
    assert_chunks(&bag, "none");

    ok(&compress(&[&bag]));
    assert_chunks(&bag, "zstd");
    assert_same(&bag, &original);
    assert_chunks(&dir.path().join("run.orig.mcap"), "none");
    ok(&decompress(&[&"--no-backup", &bag]));
    assert_chunks(&bag, "none");
    assert_same(&bag, &original);
    ok(&compress(&[&"--lz4", &"--force", &bag]));
    assert_chunks(&bag, "lz4");
    assert_same(&bag, &original);
    ok(&decompress(&[&"-f", &bag]));
    assert_chunks(&bag, "none");
    assert_same(&bag, &original);
    assert_chunks(&dir.path().join("run.orig.mcap"), "lz4");

    // bz2 is ROS 1's only: refused, nothing touched.
    let before = std::fs::read(&bag).unwrap();
    let o = compress(&[&"-j", &bag]);
    assert_clear_error(&o, &["run.mcap", "bz2"]);
    assert_eq!(std::fs::read(&bag).unwrap(), before);
    assert_no_leftovers(dir.path());
}

#[test]
fn rosbag2_sqlite3_file_and_message_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, original) = converted(dir.path(), 20, "run", "sqlite3");

    ok(&compress(&[&bag]));
    assert!(std::fs::read_dir(&bag).unwrap().flatten().any(|e| e.file_name().to_string_lossy().ends_with(".db3.zstd")));
    assert_mode(&bag, "zstd file", &original);
    let backup = dir.path().join("run.orig");
    assert_mode(&backup, "", &original);
    let err = ok(&compress(&[&bag]));
    assert!(err.contains("already zstd file"), "{err}");

    ok(&decompress(&[&"--no-backup", &bag]));
    assert_mode(&bag, "", &original);

    ok(&compress(&[&"--compression-mode", &"message", &"--no-backup", &bag]));
    assert_mode(&bag, "zstd message", &original);
    // From message mode to file mode directly, then back to none, replacing the backup.
    ok(&compress(&[&"--compression-mode", &"file", &"-f", &bag]));
    assert_eq!(compression_of(&bag).1, "zstd file");
    assert_mode(&backup, "zstd message", &original);
    ok(&decompress(&[&"-f", &bag]));
    assert_mode(&bag, "", &original);
    assert_no_leftovers(dir.path());
}

#[test]
fn rosbag2_mcap_file_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, original) = converted(dir.path(), 20, "run", "mcap");

    ok(&compress(&[&bag]));
    assert_mode(&bag, "zstd file", &original);
    assert_same(&dir.path().join("run.orig"), &original);
    ok(&decompress(&[&"--no-backup", &bag]));
    assert_mode(&bag, "", &original);

    // Message mode is SQLite3's only, as in rosbag2: refused, untouched.
    let o = compress(&[&"--compression-mode", &"message", &bag]);
    assert_clear_error(&o, &["run", "message"]);
    assert_eq!(compression_of(&bag).1, "");
    // Chunk flags are for files; a directory takes a mode.
    let o = compress(&[&"--lz4", &bag]);
    assert_clear_error(&o, &["compression mode"]);
    assert_no_leftovers(dir.path());
}

/// The shared corpus, compressed and decompressed in temp copies (never in place).
#[test]
fn corpus_bags_round_trip() {
    let test = "corpus_bags_round_trip";
    let (Some(ros1), Some(ros2)) = (corpus(test, "ros1"), corpus(test, "ros2")) else { return };
    let dir = tempfile::tempdir().unwrap();
    for name in ["multi_none.bag", "multi_bz2.bag", "multi_lz4.bag", "small_chunks.bag"] {
        let bag = dir.path().join(name);
        std::fs::copy(ros1.join(name), &bag).unwrap();
        std::fs::set_permissions(&bag, std::fs::Permissions::from_mode(0o644)).unwrap();
        let original = read_all(&bag);
        let chunks = chunk_count(&bag);
        for (flag, want) in [("--lz4", "lz4"), ("--bz2", "bz2")] {
            ok(&compress(&[&flag, &"--no-backup", &bag]));
            assert_chunks(&bag, want);
            assert_same(&bag, &original);
            // The chunk size is kept (about: it is estimated from the chunks' sizes).
            let now = chunk_count(&bag);
            assert!(now * 10 >= chunks * 8 && now * 10 <= chunks * 12, "{name}: {chunks} chunks became {now}");
        }
        ok(&decompress(&[&"--no-backup", &bag]));
        assert_chunks(&bag, "none");
        assert_same(&bag, &original);
    }
    for storage in ["sqlite3", "mcap"] {
        for name in ["talker", "cdr_test"] {
            let from = ros2.join(storage).join(name);
            if !from.exists() {
                continue;
            }
            let bag = dir.path().join(format!("{storage}-{name}"));
            copy_dir(&from, &bag);
            let original = read_all(&bag);
            ok(&compress(&[&"--no-backup", &bag]));
            assert_mode(&bag, "zstd file", &original);
            ok(&decompress(&[&"--no-backup", &bag]));
            assert_mode(&bag, "", &original);
        }
    }
    assert_no_leftovers(dir.path());
}

use std::os::unix::fs::PermissionsExt;

fn chunk_count(path: &Path) -> u64 {
    rbag_bag::Bag::open(path).unwrap().storage_info().unwrap().chunk_count
}

/// Copies a rosbag2 directory (its files only), writable.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let out = to.join(e.file_name());
        std::fs::copy(e.path(), &out).unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
}

/// Debian's `rosbag info` reads the bags rbag compressed and names their compression; Debian's
/// rosbag reads every message of them as in the original.
#[test]
fn rosbag_reads_what_rbag_compressed() {
    let test = "rosbag_reads_what_rbag_compressed";
    let (Some(rosbag), Some(python)) = (rosbag_cli(test), rosbag_python(test)) else { return };
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "run.bag", 30);
    let original = rbag_testkit::ros1_dump(&python, "rosbag", &bag);
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let rosbag_run = |args: &[&std::ffi::OsStr]| {
        let mut cmd = std::process::Command::new(&rosbag);
        cmd.args(args);
        rbag_testkit::ros_env(&mut cmd, &home);
        cmd.output().unwrap()
    };
    for (flag, name) in [("--bz2", "bz2"), ("--lz4", "lz4")] {
        ok(&compress(&[&flag, &"--no-backup", &bag]));
        let o = rosbag_run(&["info".as_ref(), bag.as_os_str()]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "rosbag info: {}{}", out, String::from_utf8_lossy(&o.stderr));
        let line = out.lines().find(|l| l.starts_with("compression:")).unwrap_or_default();
        assert!(line.contains(name), "rosbag info shows {line:?}:\n{out}");
        let now = rbag_testkit::ros1_dump(&python, "rosbag", &bag);
        assert_eq!(now["messages"], original["messages"], "{name}: rosbag reads other messages");
        assert_eq!(now["decoded"], original["decoded"]);
        assert_eq!(now["topics"], original["topics"]);
    }
    // And its own compress of rbag's output, decompressed by rbag.
    let _ = rosbag_run(&["compress".as_ref(), "--lz4".as_ref(), bag.as_os_str()]);
    ok(&decompress(&[&"-f", &bag]));
    assert_chunks(&bag, "none");
    assert_eq!(rbag_testkit::ros1_dump(&python, "rosbag", &bag)["messages"], original["messages"]);
}

#[test]
fn refusals_leave_everything_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "run.bag", 5);
    let bytes = std::fs::read(&bag).unwrap();

    // A file that is not a bag: named, untouched.
    let junk = dir.path().join("notes.bag");
    std::fs::write(&junk, "not a bag").unwrap();
    assert_clear_error(&compress(&[&junk]), &["notes.bag"]);
    assert_eq!(std::fs::read(&junk).unwrap(), b"not a bag");

    // Missing, and missing with a backup beside it (no interrupted run): says how to restore.
    assert_clear_error(&compress(&[&dir.path().join("gone.bag")]), &["gone.bag", "does not exist"]);
    std::fs::copy(&bag, dir.path().join("lost.orig.bag")).unwrap();
    let o = compress(&[&dir.path().join("lost.bag")]);
    assert_clear_error(&o, &["lost.bag", "lost.orig.bag", "mv"]);
    assert!(!dir.path().join("lost.bag").exists());

    // A backup that is not a bag is never replaced, even with -f.
    std::fs::write(dir.path().join("run.orig.bag"), "thesis").unwrap();
    assert_clear_error(&compress(&[&"-f", &bag]), &["run.orig.bag"]);
    assert_eq!(std::fs::read(dir.path().join("run.orig.bag")).unwrap(), b"thesis");
    assert_eq!(std::fs::read(&bag).unwrap(), bytes);

    // A mode on a file, a symlink.
    assert_clear_error(&compress(&[&"--compression-mode", &"file", &"--no-backup", &bag]), &["rosbag2 directories"]);
    std::os::unix::fs::symlink(&bag, dir.path().join("link.bag")).unwrap();
    assert_clear_error(&compress(&[&"--no-backup", &dir.path().join("link.bag")]), &["symbolic link"]);
    assert_eq!(std::fs::read(&bag).unwrap(), bytes);

    // Several bags: the good one is done, the bad one named, exit 1.
    let other = sample_bag(dir.path(), "other.bag", 5);
    let o = compress(&[&"--no-backup", &other, &junk]);
    assert_clear_error(&o, &["notes.bag", "1 of 2"]);
    assert_chunks(&other, "bz2");
    assert_no_leftovers(dir.path());
}

/// Another run holding the bag's lock: refused, nothing touched.
#[test]
fn a_bag_being_rewritten_is_not_rewritten_twice() {
    let dir = tempfile::tempdir().unwrap();
    let bag = sample_bag(dir.path(), "run.bag", 5);
    let bytes = std::fs::read(&bag).unwrap();
    let work = dir.path().join(".run.bag.rbag-compress");
    std::fs::create_dir(&work).unwrap();
    let lock = std::fs::File::create(work.join("lock")).unwrap();
    lock.lock().unwrap();
    let o = compress(&[&bag]);
    assert_clear_error(&o, &["run.bag", "another rbag run"]);
    assert_eq!(std::fs::read(&bag).unwrap(), bytes);
    drop(lock);
    ok(&compress(&[&bag]));
    assert_chunks(&bag, "bz2");
    assert_no_leftovers(dir.path());
}

// ---- Interruptions -------------------------------------------------------------------------

/// A ROS 1 bag big enough that compressing it takes a moment: `n` messages of 2 KiB of
/// compressible, non-repeating text on two topics.
fn big_bag(dir: &Path, name: &str, n: u64) -> PathBuf {
    let path = dir.join(name);
    let mut w = rbag_storage::create(&path, Format::Ros1, &Default::default()).unwrap();
    let conns: Vec<Connection> =
        ["/a", "/b"].iter().map(|t| rbag_testkit::sample::string_connection(Format::Ros1, t)).collect();
    let ids: Vec<u32> = conns.iter().map(|c| w.add_connection(c).unwrap()).collect();
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for i in 0..n {
        let mut text = String::with_capacity(2048);
        while text.len() < 2040 {
            xorshift(&mut x);
            text.push_str(["alpha ", "beta ", "gamma ", "delta ", "42 ", "pose ", "x=", "1.5 "][(x % 8) as usize]);
            if x.is_multiple_of(97) {
                text.push_str(&format!("{x:x} "));
            }
        }
        let mut data = (text.len() as u32).to_le_bytes().to_vec();
        data.extend_from_slice(text.as_bytes());
        w.write(ids[(i % 2) as usize], START + i * 1_000_000, START + i * 1_000_000, &data).unwrap();
    }
    w.finish().unwrap();
    path
}

/// Whether `path` is a complete bag holding exactly `original`.
fn complete(path: &Path, original: &Messages) -> bool {
    let Ok(bag) = rbag_bag::Bag::open(path) else { return false };
    let Ok(iter) = bag.messages(&Default::default()) else { return false };
    let mut n = 0;
    for m in iter {
        let Ok(m) = m else { return false };
        let Some(o) = original.get(n) else { return false };
        let topic = &bag.connection(m.connection).unwrap().topic;
        if *topic != o.0 || m.log_time != o.1 || m.data[..] != o.2[..] {
            return false;
        }
        n += 1;
    }
    n == original.len() && bag.lost().is_empty()
}

/// A temporary directory with `src` and `work` in it.
fn src_and_work() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (src, work) = (dir.path().join("src"), dir.path().join("work"));
    std::fs::create_dir(&src).unwrap();
    std::fs::create_dir(&work).unwrap();
    (dir, src, work)
}

/// `rbag compress -q [--no-backup] <bag>`.
fn compress_cmd(bag: &Path, backup: bool) -> std::process::Command {
    let mut cmd = rbag();
    cmd.arg("compress").arg("-q");
    if !backup {
        cmd.arg("--no-backup");
    }
    cmd.arg(bag);
    cmd
}

/// How long a whole compress of a fresh copy of `source` at `bag` takes here.
fn whole_run(source: &Path, bag: &Path) -> Duration {
    reset(source, bag);
    let t = Instant::now();
    ok(&compress(&[&"-q", &bag]));
    t.elapsed()
}

/// A compress of a fresh copy of `source` at `bag`, killed (SIGKILL) after `delay` unless it
/// finished first: how it ended.
fn killed_after(source: &Path, bag: &Path, backup: bool, delay: Duration) -> ExitStatus {
    reset(source, bag);
    let mut child = compress_cmd(bag, backup).spawn().unwrap();
    std::thread::sleep(delay);
    let _ = child.kill();
    child.wait().unwrap()
}

fn reset(from: &Path, to: &Path) {
    for p in [to.to_path_buf(), rbag_bag::compress::backup_path(to)] {
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_dir_all(&p);
    }
    let _ = std::fs::remove_dir_all(rbag_bag::compress::work_dir(to));
    if from.is_dir() {
        std::fs::create_dir(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            // Named after the directory: rename the copies' files as the original's are.
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

/// After an interruption: the bag or its backup is complete; a rerun finishes with the bag
/// compressed, the backup (if asked) the original, and nothing left over.
fn check_after_interruption(bag: &Path, backup: bool, original: &Messages, what: &str, want_mode: Option<&str>) {
    let b = rbag_bag::compress::backup_path_for(bag, bag.extension().is_none());
    // Without a backup, a directory is moved aside into the work directory for the instant
    // between its two renames (a non-empty directory cannot be replaced by one rename).
    let aside = rbag_bag::compress::work_dir(bag).join("orig");
    let safe = [bag, b.as_path(), aside.as_path()].into_iter().find(|p| complete(p, original));
    assert!(safe.is_some(), "{what}: none of {}, {}, {} is complete", bag.display(), b.display(), aside.display());
    assert!(backup || !bag.is_file() || safe != Some(aside.as_path()), "{what}: a file is never moved aside");
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"-q"];
    if !backup {
        args.push(&"--no-backup");
    }
    args.push(&bag);
    let o = compress(&args);
    ok(&o);
    assert!(complete(bag, original), "{what}: the rerun left an incomplete bag");
    match want_mode {
        Some(m) => assert_eq!(compression_of(bag).1, m, "{what}"),
        None => assert_chunks(bag, "bz2"),
    }
    if backup {
        assert!(complete(&b, original), "{what}: the backup is not the original");
        match want_mode {
            Some(_) => assert_eq!(compression_of(&b).1, "", "{what}"),
            None => assert_chunks(&b, "none"),
        }
    }
    assert_no_leftovers(bag.parent().unwrap());
}

/// Killed with SIGKILL after random delays over the whole run: never without a complete copy.
#[test]
fn sigkill_at_random_points_never_loses_the_bag() {
    let (_dir, src_dir, work) = src_and_work();
    let source = big_bag(&src_dir, "big.bag", 4_000);
    let original = read_all(&source);
    let bag = work.join("big.bag");

    let full = whole_run(&source, &bag);
    eprintln!("a whole compress takes {full:?}");

    let mut seed: u64 = std::process::id() as u64 ^ 0x2545f4914f6cdd1d;
    let mut killed = 0;
    for round in 0..12 {
        let backup = round % 2 == 0;
        let delay = full.mul_f64((xorshift(&mut seed) % 1000) as f64 / 1000.0 * 1.1);
        let status = killed_after(&source, &bag, backup, delay);
        if status.signal() == Some(9) {
            killed += 1;
        }
        let phase = if !bag.exists() {
            "between the renames"
        } else if compression_of(&bag).0 == ["bz2"] {
            "after the bag was replaced"
        } else if rbag_bag::compress::work_dir(&bag).exists() {
            "while writing the new bag"
        } else {
            "before it started"
        };
        eprintln!("round {round} (backup {backup}): killed after {delay:?}, {phase}");
        check_after_interruption(&bag, backup, &original, &format!("round {round}, killed after {delay:?}"), None);
    }
    assert!(killed >= 6, "only {killed} of 12 runs were killed before finishing");
}

/// The same for a rosbag2 directory (whose replacement is two renames, never one).
#[test]
fn sigkill_during_a_directory_compress_never_loses_the_bag() {
    let (_dir, src_dir, work) = src_and_work();
    let ros1 = big_bag(&src_dir, "big.bag", 5_000);
    let source = src_dir.join("big");
    convert_to(&ros1, &source, "sqlite3");
    let original = read_all(&source);
    let bag = work.join("big");

    let full = whole_run(&source, &bag);
    eprintln!("a whole directory compress takes {full:?}");

    let mut seed: u64 = std::process::id() as u64 ^ 0x94d049bb133111eb;
    for round in 0..10 {
        let backup = round % 2 == 1;
        let delay = full.mul_f64((xorshift(&mut seed) % 1000) as f64 / 1000.0 * 1.1);
        killed_after(&source, &bag, backup, delay);
        check_after_interruption(&bag, backup, &original, &format!("round {round} after {delay:?}"), Some("zstd file"));
    }
}

/// Dying at each step between writing the new bag and removing the work directory
/// (`RBAG_TEST_COMPRESS_ABORT`, honoured by debug builds only), for files and directories, with
/// and without a backup.
#[test]
fn dying_between_the_renames_is_recovered() {
    let (_dir, src_dir, work) = src_and_work();
    let file_src = sample_bag(&src_dir, "run.bag", 10);
    let dir_src = src_dir.join("run");
    convert_to(&file_src, &dir_src, "sqlite3");
    let mut seen = Vec::new();
    for (source, mode) in [(&file_src, None), (&dir_src, Some("zstd file"))] {
        let original = read_all(source);
        let bag = work.join(source.file_name().unwrap());
        for backup in [true, false] {
            for point in ["written", "backup", "aside", "renamed"] {
                reset(source, &bag);
                let o = compress_cmd(&bag, backup).env("RBAG_TEST_COMPRESS_ABORT", point).output().unwrap();
                let what = format!("{} backup={backup} died at {point}", bag.display());
                let died = o.status.signal() == Some(6);
                if !died {
                    ok(&o);
                    continue;
                }
                seen.push(what.clone());
                let missing = !bag.exists();
                check_after_interruption(&bag, backup, &original, &what, mode);
                if missing {
                    // The rerun said it put the original back.
                    eprintln!("{what}: the bag was missing and was recovered");
                }
            }
        }
    }
    // Every step each path passes: files 3 (written, backup, renamed) with a backup and 2
    // without; directories 3 with and 3 (written, aside, renamed) without.
    assert_eq!(seen.len(), 11, "{seen:#?}");
}

/// A missing bag after a directory run died between its renames: the rerun says so and puts
/// the original back before starting again.
#[test]
fn a_missing_directory_is_put_back_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, original) = converted(dir.path(), 5, "run", "mcap");
    let o = rbag().env("RBAG_TEST_COMPRESS_ABORT", "backup").arg("compress").arg(&bag).output().unwrap();
    assert_eq!(o.status.signal(), Some(6), "{}", stderr(&o));
    assert!(!bag.exists());
    assert!(complete(&dir.path().join("run.orig"), &original));
    let err = ok(&compress(&[&bag]));
    assert!(err.contains("was missing after an interrupted run") && err.contains("run.orig"), "{err}");
    assert!(complete(&bag, &original));
    assert_eq!(compression_of(&bag).1, "zstd file");
}

/// An MCAP file's attachments and metadata records survive a compress and a decompress.
#[test]
fn mcap_attachments_and_metadata_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, _) = converted(dir.path(), 5, "run.mcap", "mcap");
    let calib = dir.path().join("calib.yaml");
    std::fs::write(&calib, "fx: 500\n").unwrap();
    ok(&run(&[&"attachment", &"add", &"-f", &calib, &"-n", &"calib.yaml", &bag]));
    ok(&run(&[&"metadata", &"add", &"-n", &"robot", &"-k", &"serial=42", &bag]));
    let listing = |what: &str| {
        let o = run(&[&what, &"list", &bag]);
        ok(&o);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let (attachments, metadata) = (listing("attachment"), listing("metadata"));
    assert!(attachments.contains("calib.yaml") && metadata.contains("robot"), "{attachments}{metadata}");
    ok(&compress(&[&"--no-backup", &bag]));
    assert_chunks(&bag, "zstd");
    assert!(listing("attachment").contains("calib.yaml"), "{}", listing("attachment"));
    assert!(listing("metadata").contains("robot"), "{}", listing("metadata"));
    ok(&decompress(&[&"--no-backup", &bag]));
    let out = dir.path().join("out.yaml");
    ok(&run(&[&"attachment", &"get", &"-n", &"calib.yaml", &"-o", &out, &bag]));
    assert_eq!(std::fs::read(&out).unwrap(), b"fx: 500\n");
    assert!(listing("metadata").contains("robot"));
}
