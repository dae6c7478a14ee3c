//! Floors for the raw-read benchmark (bench/ros1.sh): how fast can *any* reader touch every byte
//! of the file, with the same checksum as `bench_read` (wrapping sum of little-endian u64 words)?
//!
//! ```text
//! cargo run --release -p rbag-storage --example bench_floor -- FILE read|mmap
//! ```
//!
//! - `read`: pread(2) into one reused 1 MiB buffer, checksum each block (`cat` + the checksum).
//! - `mmap`: map the whole file read-only and checksum it in place (no copy at all).
//!
//! Prints `bytes=B sum=HEX elapsed=SECONDS`. The sums differ from `bench_read`'s: the floors
//! checksum the whole file (records, headers, index), not just message payloads.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Instant;

#[path = "common/checksum.rs"]
mod common;
use common::checksum;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_floor: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, mode] = <[String; 2]>::try_from(args).map_err(|_| "usage: bench_floor FILE read|mmap")?;
    let start = Instant::now();
    let file = File::open(&path)?;
    let len = file.metadata()?.len();
    let mut sum = 0u64;
    match mode.as_str() {
        "read" => {
            let mut buf = vec![0u8; 1 << 20];
            let mut off = 0u64;
            while off < len {
                let n = file.read_at(&mut buf, off)?;
                if n == 0 {
                    break;
                }
                sum = sum.wrapping_add(checksum(&buf[..n]));
                off += n as u64;
            }
        }
        "mmap" => {
            if len > 0 {
                // SAFETY: a read-only map of a file nobody truncates while we read it.
                let map = unsafe { memmap2::Mmap::map(&file)? };
                map.advise(memmap2::Advice::Sequential)?;
                sum = checksum(&map);
            }
        }
        other => return Err(format!("unknown mode {other:?} (read, mmap)").into()),
    }
    println!("bytes={len} sum={sum:016x} elapsed={:.6}", start.elapsed().as_secs_f64());
    Ok(())
}
