//! Write benchmark (bench/ros1.sh): loads every message of IN (connections, times, payloads) into
//! memory, one owned buffer per message, then times only writing them to OUT as an uncompressed
//! ROS 1 bag with the default chunk size (768 KiB): create + add connections + write + finish.
//! No fsync.
//!
//! ```text
//! cargo run --release -p rbag-storage --example bench_write -- IN.bag OUT.bag [--runs N]
//! ```
//!
//! Prints `messages=N bytes=B elapsed=SECONDS` per run (OUT is removed before each run).

use std::path::PathBuf;
use std::time::Instant;

use rbag_storage::ros1::Ros1Writer;
use rbag_storage::{Filter, StorageWriter, WriteOptions};

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_write: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut runs = 1usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().ok_or("--runs needs a value")?.parse()?,
            _ if paths.len() < 2 => paths.push(a.into()),
            other => return Err(format!("unexpected argument {other:?}").into()),
        }
    }
    let [input, output] =
        <[PathBuf; 2]>::try_from(paths).map_err(|_| "usage: bench_write IN.bag OUT.bag [--runs N]")?;

    // The message list, built before any timing.
    let reader = rbag_storage::open(&input)?;
    let conns = reader.connections().to_vec();
    let mut messages: Vec<(usize, u64, Vec<u8>)> = Vec::new();
    for msg in reader.messages(&Filter::default())? {
        let msg = msg?;
        let k = conns.iter().position(|c| c.id == msg.connection).ok_or("message on an unknown connection")?;
        messages.push((k, msg.log_time, msg.data.to_vec()));
    }
    drop(reader);
    let bytes: u64 = messages.iter().map(|m| m.2.len() as u64).sum();

    for _ in 0..runs {
        let _ = std::fs::remove_file(&output);
        let start = Instant::now();
        let mut w = Box::new(Ros1Writer::create(&output, WriteOptions::default())?);
        let mut ids = Vec::with_capacity(conns.len());
        for c in &conns {
            ids.push(w.add_connection(c)?);
        }
        for (k, t, data) in &messages {
            w.write(ids[*k], *t, *t, data)?;
        }
        w.finish()?;
        let elapsed = start.elapsed();
        println!("messages={} bytes={bytes} elapsed={:.6}", messages.len(), elapsed.as_secs_f64());
    }
    Ok(())
}
