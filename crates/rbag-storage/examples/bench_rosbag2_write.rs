//! rosbag2 write benchmark (bench/rosbag2.sh): writes every SIZE-byte slice of PAYLOADS as one
//! `std_msgs/msg/UInt8MultiArray` message on one topic, 1 ms apart, to a new rosbag2 bag at
//! OUT with `rbag_storage::create` and the default `WriteOptions` (SQLite3 default preset;
//! MCAP default preset, uncompressed chunks), then fsyncs every file of the bag, the bag
//! directory and its parent, as the Python writer of the benchmark does.
//!
//! ```text
//! cargo run --release -p rbag-storage --example bench_rosbag2_write -- sqlite3|mcap PAYLOADS SIZE OUT
//! ```
//!
//! PAYLOADS is mapped read-only (no copy, no load before the timer). OUT must not exist; a
//! path ending in `.db3`/`.mcap` writes a single file, anything else a bag directory.
//! Prints `messages=N bytes=B write=SECONDS sync=SECONDS elapsed=SECONDS` where `write` covers
//! create + add connection + write + finish, `sync` the fsyncs, `elapsed` both.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rbag_storage::{Format, WriteOptions};

/// rbag-testkit's ROS 2 sample connection (QoS text as Jazzy stores it), shared with the tests.
#[path = "../tests/common/mod.rs"]
mod sample;

/// The definition and type hash rosbags generates for the type (`Stores.LATEST`).
const TYPE: &str = "std_msgs/msg/UInt8MultiArray";
const DEFINITION: &str = "std_msgs/MultiArrayLayout layout\nuint8[] data\n\
================================================================================\n\
MSG: std_msgs/MultiArrayLayout\nstd_msgs/MultiArrayDimension[] dim\nuint32 data_offset\n\
================================================================================\n\
MSG: std_msgs/MultiArrayDimension\nstring label\nuint32 size\nuint32 stride\n";
const TYPE_HASH: &str = "RIHS01_5687e861b8d307a5e48b7515467ae7a5fc2daf805bd0ce6d8e9e604bade9f385";
/// First log time (ns) and spacing of the messages; the Python writer uses the same.
const T0: u64 = 1_700_000_000_000_000_000;
const PERIOD: u64 = 1_000_000;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_rosbag2_write: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: bench_rosbag2_write sqlite3|mcap PAYLOADS SIZE OUT";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [format, payloads, size, out] = <[String; 4]>::try_from(args).map_err(|_| usage)?;
    let format = match format.as_str() {
        "sqlite3" => Format::Sqlite3,
        "mcap" => Format::Mcap,
        other => return Err(format!("unknown format {other:?}; {usage}").into()),
    };
    let size: usize = size.parse()?;
    let out = PathBuf::from(out);

    let file = File::open(&payloads)?;
    // SAFETY: the benchmark's payload file is not modified while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    if size == 0 || map.len() % size != 0 {
        return Err(format!("{payloads}: {} bytes is not a multiple of {size}", map.len()).into());
    }

    let mut conn = sample::connection("/bench/data", TYPE, DEFINITION);
    conn.metadata.insert("type_description_hash".into(), TYPE_HASH.into());

    let start = Instant::now();
    let mut w = rbag_storage::create(&out, format, &WriteOptions::default())?;
    let id = w.add_connection(&conn)?;
    let mut n = 0u64;
    for (i, data) in map.chunks_exact(size).enumerate() {
        let t = T0 + i as u64 * PERIOD;
        w.write(id, t, t, data)?;
        n += 1;
    }
    w.finish()?;
    let written = start.elapsed();
    sync_tree(&out)?;
    let elapsed = start.elapsed();
    println!(
        "messages={n} bytes={} write={:.6} sync={:.6} elapsed={:.6}",
        map.len(),
        written.as_secs_f64(),
        (elapsed - written).as_secs_f64(),
        elapsed.as_secs_f64()
    );
    Ok(())
}

/// fsyncs `path` (a file, or a directory and every file in it), then its parent directory.
fn sync_tree(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        for entry in std::fs::read_dir(path)? {
            let p = entry?.path();
            if p.is_file() {
                File::open(&p)?.sync_all()?;
            }
        }
    }
    File::open(path)?.sync_all()?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    File::open(parent)?.sync_all()
}
