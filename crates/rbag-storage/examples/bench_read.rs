//! Raw-read benchmark (bench/ros1.sh): opens a bag with `rbag_storage::open`, iterates every
//! message in log-time order and touches every payload byte (wrapping sum of little-endian u64
//! words, tail bytes added one by one; the per-message sums are combined order-sensitively).
//!
//! ```text
//! cargo run --release -p rbag-storage --example bench_read -- BAG [--phases]
//! ```
//!
//! Prints `messages=N bytes=B sum=HEX elapsed=SECONDS checksum=SECONDS` where `elapsed` covers
//! open + iterate + checksum and, with `--net`, `checksum` is that minus a first pass that only
//! iterates. `--phases` also prints
//! how long open and iteration (index, chunk loads, merge) took, and the reader's I/O counters.

use std::path::PathBuf;
use std::time::Instant;

use rbag_storage::Filter;

#[path = "common/checksum.rs"]
mod common;
use common::checksum;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_read: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut path: Option<PathBuf> = None;
    let mut phases = false;
    let mut net = false;
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--phases" => phases = true,
            "--net" => net = true,
            _ if path.is_none() => path = Some(a.into()),
            other => return Err(format!("unexpected argument {other:?}").into()),
        }
    }
    let path = path.ok_or("usage: bench_read BAG [--phases] [--net]")?;

    // With --net, a first pass iterates without touching payloads, so the checksum's share of
    // the reported pass can be told. No per-message timer: clock reads would cost more than
    // rbag's own work per message.
    let iterate_only = net
        .then(|| -> Result<_, Box<dyn std::error::Error>> {
            let start = Instant::now();
            let reader = rbag_storage::open(&path)?;
            let mut n = 0u64;
            for msg in reader.messages(&Filter::default())? {
                n += msg?.data.len() as u64;
            }
            std::hint::black_box(n);
            Ok(start.elapsed())
        })
        .transpose()?;
    let start = Instant::now();
    let reader = rbag_storage::open(&path)?;
    let opened = start.elapsed();
    let (mut n, mut bytes, mut sum) = (0u64, 0u64, 0u64);
    for msg in reader.messages(&Filter::default())? {
        let msg = msg?;
        // Order-sensitive combination, so bags with the same messages in another order differ.
        sum = sum.wrapping_mul(0x0000_0100_0000_01b3).wrapping_add(checksum(&msg.data));
        n += 1;
        bytes += msg.data.len() as u64;
    }
    let elapsed = start.elapsed();
    print!("messages={n} bytes={bytes} sum={sum:016x} elapsed={:.6}", elapsed.as_secs_f64());
    let in_checksum = iterate_only.map(|i| elapsed.saturating_sub(i)).unwrap_or_default();
    if iterate_only.is_some() {
        print!(" checksum={:.6}", in_checksum.as_secs_f64());
    }
    println!();
    if phases {
        let stats = reader.stats();
        let iterate = elapsed - opened - in_checksum;
        eprintln!(
            "phases: open {:.4}s  iterate (index+chunk reads+merge) {:.4}s  checksum {:.4}s  \
             [chunks read {}, bytes read {} = {:.2}x payload]",
            opened.as_secs_f64(),
            iterate.as_secs_f64(),
            in_checksum.as_secs_f64(),
            stats.chunks_read,
            stats.bytes_read,
            stats.bytes_read as f64 / bytes.max(1) as f64
        );
    }
    Ok(())
}
