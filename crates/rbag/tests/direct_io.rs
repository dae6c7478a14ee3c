//! `--direct-io` (rosbag_direct_write's `O_DIRECT` writing) and `--threads`: what the files
//! hold, checked with Debian's rosbag and the mcap library; what stays in the page cache,
//! measured on the file itself with util-linux's `fincore`; and the fallback where a filesystem
//! refuses `O_DIRECT` (injected: ext4 and tmpfs both accept it here).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_clear_error, read_all, run, stderr, START};
use rbag_storage::{Connection, Format, WriteOptions};

const BLOCK: u64 = 4096;

/// A ROS 1 bag of std_msgs/String messages of 1–40 KB of pseudo-random letters (compressible,
/// like camera data is, but not trivially), plus the small sample topics: about `mb` MB.
fn input_bag(dir: &Path, mb: u64) -> PathBuf {
    let path = dir.join("in.bag");
    let mut w = rbag_storage::create(&path, Format::Ros1, &WriteOptions::default()).unwrap();
    rbag_testkit::sample::write(w.as_mut(), START, 2_000_000_000).unwrap();
    let mut conn: Connection = rbag_testkit::sample::connection(&rbag_testkit::sample::TOPICS[0]);
    conn.topic = "/camera".into();
    let id = w.add_connection(&conn).unwrap();
    let (mut state, mut total, mut i) = (0x9e37_79b9_7f4a_7c15u64, 0u64, 0u64);
    while total < mb << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = 1024 + (state % 40_000) as usize;
        let text: Vec<u8> = (0..len)
            .map(|j| {
                let x = state.wrapping_mul(j as u64 + 1).rotate_left((j % 61) as u32);
                b'a' + (x % 8) as u8
            })
            .collect();
        let mut data = (len as u32).to_le_bytes().to_vec();
        data.extend_from_slice(&text);
        w.write(id, START + i * 1_000_000, START + i * 1_000_000, &data).unwrap();
        total += data.len() as u64;
        i += 1;
    }
    w.finish().unwrap();
    path
}

fn convert(input: &Path, out: &Path, compression: &str, extra: &[&str]) -> std::process::Output {
    let mut c = common::rbag();
    c.arg("convert").arg(input).arg("-o").arg(out).args(["--compression", compression]).args(extra);
    if out.extension().is_some_and(|e| e == "mcap") {
        c.args(["--encoding", "ros1"]);
    }
    c.output().unwrap()
}

/// Chunk offsets from the file's index.
fn chunk_offsets(path: &Path) -> Vec<u64> {
    rbag_storage::open(path).unwrap().chunks().unwrap().iter().map(|c| c.offset).collect()
}

/// Every chunk after the first starts on a block boundary: the one before it was padded.
fn assert_padded(path: &Path) {
    let offsets = chunk_offsets(path);
    assert!(offsets.len() > 3, "{}: {} chunks", path.display(), offsets.len());
    for o in &offsets[1..] {
        assert_eq!(o % BLOCK, 0, "{}: chunk at {o} is not block-aligned ({offsets:?})", path.display());
    }
}

/// Bags written with `--direct-io=require` hold the same messages as buffered ones for every
/// chunk compression, as Debian's rosbag (ROS 1) and the mcap library (MCAP) read them; the
/// only difference is the padding that puts every closed chunk on a block boundary (a `_` field
/// in ROS 1 chunk headers, private records of opcode 0x80 in MCAP), and MCAP files still end
/// exactly at their closing magic.
#[test]
fn direct_io_files_read_like_buffered_ones_in_rosbag_and_the_mcap_library() {
    const T: &str = "direct_io_files_read_like_buffered_ones_in_rosbag_and_the_mcap_library";
    let dir = tempfile::tempdir().unwrap();
    let input = input_bag(dir.path(), 8);
    let rosbag = rbag_testkit::rosbag_python(T);
    let oracle = rbag_testkit::oracle_python(T);
    for (ext, compression) in
        [("bag", "none"), ("bag", "lz4"), ("bag", "bz2"), ("mcap", "none"), ("mcap", "zstd"), ("mcap", "lz4")]
    {
        let buffered = dir.path().join(format!("buffered-{compression}.{ext}"));
        let direct = dir.path().join(format!("direct-{compression}.{ext}"));
        let o = convert(&input, &buffered, compression, &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = convert(&input, &direct, compression, &["--direct-io=require"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
        assert_eq!(read_all(&direct), read_all(&buffered), "{ext} {compression}: rbag reads the same messages");
        assert_padded(&direct);
        assert_eq!(chunk_offsets(&direct).len(), chunk_offsets(&buffered).len(), "same chunks");
        let (d, b) = (std::fs::read(&direct).unwrap(), std::fs::read(&buffered).unwrap());
        assert!(d.len() > b.len(), "padding makes the direct file longer");
        if ext == "mcap" {
            assert!(d.ends_with(b"\x89MCAP0\r\n"), "ends at the closing magic");
            if let Some(py) = &oracle {
                let (dj, bj) =
                    (rbag_testkit::ros2_dump(py, "mcap", &direct), rbag_testkit::ros2_dump(py, "mcap", &buffered));
                assert_eq!(dj["messages"], bj["messages"], "mcap library: {compression}");
                assert!(dj["messages"].as_array().is_some_and(|m| !m.is_empty()));
            }
        } else if let Some(py) = &rosbag {
            let (dj, bj) =
                (rbag_testkit::ros1_dump(py, "rosbag", &direct), rbag_testkit::ros1_dump(py, "rosbag", &buffered));
            assert_eq!(dj, bj, "Debian's rosbag: {compression}");
            assert_eq!(
                dj["decoded"].as_u64(),
                dj["messages"].as_array().map(|m| m.len() as u64),
                "genpy decodes them all"
            );
        }
    }
}

/// `--threads 1` and `--threads 2` write byte-identical files, buffered and direct, for every
/// chunk compression.
#[test]
fn output_is_byte_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_bag(dir.path(), 6);
    for (ext, compression) in [("bag", "lz4"), ("bag", "bz2"), ("bag", "none"), ("mcap", "zstd"), ("mcap", "lz4")] {
        for direct in [false, true] {
            let files: Vec<Vec<u8>> = ["1", "2"]
                .iter()
                .map(|threads| {
                    // Same file name: an MCAP file's rosbag2 metadata names its own file.
                    let sub = dir.path().join(format!("t{threads}-{direct}-{compression}"));
                    std::fs::create_dir_all(&sub).unwrap();
                    let out = sub.join(format!("out.{ext}"));
                    let mut extra = vec!["--threads", threads];
                    if direct {
                        extra.push("--direct-io");
                    }
                    let o = convert(&input, &out, compression, &extra);
                    assert!(o.status.success(), "{}", stderr(&o));
                    std::fs::read(&out).unwrap()
                })
                .collect();
            assert!(files[0] == files[1], "{ext} {compression} direct={direct}: thread counts differ");
        }
    }
}

/// Resident bytes of `path` in the page cache, from `fincore --bytes`.
fn resident(path: &Path) -> u64 {
    let o = Command::new("fincore").args(["--bytes", "--noheadings", "--output", "RES"]).arg(path).output();
    let o = o.expect("fincore (util-linux) runs");
    assert!(o.status.success(), "fincore: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().parse().expect("fincore prints a byte count")
}

/// After a `--direct-io` write the page cache holds at most 1 % of the file; a buffered write
/// of the same file leaves most of it there.
#[test]
fn direct_io_leaves_the_output_out_of_the_page_cache() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_bag(dir.path(), 48);
    for ext in ["bag", "mcap"] {
        let direct = dir.path().join(format!("direct.{ext}"));
        let buffered = dir.path().join(format!("buffered.{ext}"));
        let o = convert(&input, &direct, "none", &["--direct-io=require"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = convert(&input, &buffered, "none", &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        let (size, cached) = (std::fs::metadata(&direct).unwrap().len(), resident(&direct));
        let (bsize, bcached) = (std::fs::metadata(&buffered).unwrap().len(), resident(&buffered));
        eprintln!(
            "{ext}: direct {cached} of {size} bytes cached ({:.2} %); buffered {bcached} of {bsize} ({:.1} %)",
            100.0 * cached as f64 / size as f64,
            100.0 * bcached as f64 / bsize as f64
        );
        assert!(cached * 100 <= size, "{ext}: {cached} of {size} bytes in the page cache after --direct-io");
        assert!(bcached * 2 >= bsize, "{ext}: a buffered write leaves most of the file cached ({bcached} of {bsize})");
    }
}

/// A filesystem that refuses `O_DIRECT` (EINVAL at open, injected through the debug-build seam
/// `RBAG_TEST_DIRECT_IO_EINVAL`): `--direct-io` warns, naming the file, and writes buffered;
/// `--direct-io=require` is a clear error that leaves no output.
#[test]
fn a_filesystem_refusing_direct_io_falls_back_or_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let input = common::sample_bag(dir.path(), "in.bag", 3);
    for ext in ["bag", "mcap"] {
        let out = dir.path().join(format!("fallback.{ext}"));
        let mut c = common::rbag();
        c.env("RBAG_TEST_DIRECT_IO_EINVAL", "1").arg("convert").arg(&input).arg("-o").arg(&out).arg("--direct-io");
        let o = c.output().unwrap();
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("warning") && err.contains("refuses direct I/O") && err.contains(ext), "{err}");
        assert_eq!(read_all(&out).len(), read_all(&input).len());

        let out = dir.path().join(format!("required.{ext}"));
        let mut c = common::rbag();
        c.env("RBAG_TEST_DIRECT_IO_EINVAL", "1")
            .arg("convert")
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .arg("--direct-io=require");
        let o = c.output().unwrap();
        assert_clear_error(&o, &["refuses direct I/O", &format!(".{ext}")]);
        assert!(!out.exists());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("required"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
    let o = run(&[&"convert", &input, &"-o", &dir.path().join("x.bag"), &"--direct-io=maybe"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
