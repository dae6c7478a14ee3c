//! rosbag2 raw-read benchmark (bench/rosbag2.sh): opens a bag (directory, `.db3` or `.mcap`)
//! with `rbag_storage::open`, iterates every message in log-time order and touches every
//! payload byte with the checksum of the other rbag benchmarks (`common/checksum.rs`), combined
//! order-sensitively over the messages.
//!
//! ```text
//! cargo run --release -p rbag-storage --example bench_rosbag2_read -- BAG
//! cargo run --release -p rbag-storage --example bench_rosbag2_read -- --payloads PAYLOADS SIZE
//! ```
//!
//! Prints `messages=N bytes=B sum=HEX open=SECONDS elapsed=SECONDS` (`open`: `rbag_storage::open`
//! alone; `elapsed`: open + iterate + checksum).
//! With `--payloads`, the same line for the SIZE-byte slices of the benchmark's payload file,
//! i.e. what a correctly written bag must read back as.

use std::time::Instant;

use rbag_storage::Filter;

#[path = "common/checksum.rs"]
mod common;
use common::checksum;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_rosbag2_read: {e}");
        std::process::exit(1);
    }
}

#[derive(Default)]
struct Tally {
    n: u64,
    bytes: u64,
    sum: u64,
}

impl Tally {
    #[inline]
    fn add(&mut self, data: &[u8]) {
        self.sum = self.sum.wrapping_mul(0x0000_0100_0000_01b3).wrapping_add(checksum(data));
        self.n += 1;
        self.bytes += data.len() as u64;
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let start = Instant::now();
    let mut t = Tally::default();
    let mut opened = None;
    match args.as_slice() {
        [flag, payloads, size] if flag == "--payloads" => {
            let size: usize = size.parse()?;
            let data = std::fs::read(payloads)?;
            for m in data.chunks(size) {
                t.add(m);
            }
        }
        [bag] => {
            let reader = rbag_storage::open(bag.as_ref())?;
            opened = Some(start.elapsed());
            for msg in reader.messages(&Filter::default())? {
                t.add(&msg?.data);
            }
        }
        _ => return Err("usage: bench_rosbag2_read BAG | --payloads PAYLOADS SIZE".into()),
    }
    let elapsed = start.elapsed();
    print!("messages={} bytes={} sum={:016x}", t.n, t.bytes, t.sum);
    if let Some(o) = opened {
        print!(" open={:.6}", o.as_secs_f64());
    }
    println!(" elapsed={:.6}", elapsed.as_secs_f64());
    Ok(())
}
