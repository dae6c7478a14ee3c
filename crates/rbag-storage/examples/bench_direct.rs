//! Writes COUNT messages of SIZE bytes (one topic, noisy but compressible bytes prepared up
//! front) to OUT through `rbag_storage::create`, and prints the seconds the write took, from
//! create to the finished, synced file. `bench/direct_io.sh` compares it with `dd oflag=direct`.
//!
//!     bench_direct OUT COUNT SIZE [--direct-io] [--compression none|lz4|bz2|zstd]

use std::time::Instant;

use rbag_storage::{Compression, Connection, DirectIo, Format, WriteOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        return Err("usage: bench_direct OUT COUNT SIZE [--direct-io] [--compression C]".into());
    }
    let out = std::path::PathBuf::from(&args[1]);
    let (count, size): (u64, usize) = (args[2].parse()?, args[3].parse()?);
    let direct = args.iter().any(|a| a == "--direct-io");
    let compression = match args.iter().position(|a| a == "--compression") {
        Some(i) => args.get(i + 1).ok_or("--compression needs a value")?.parse::<Compression>()?,
        None => Compression::None,
    };
    let format = if out.extension().is_some_and(|e| e == "bag") { Format::Ros1 } else { Format::Mcap };
    // A camera-like payload: a gradient with noise in the low bits.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let payload: Vec<u8> = (0..size)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((i / 64) as u8).wrapping_add((state & 7) as u8)
        })
        .collect();
    let conn = Connection {
        topic: "/camera/raw".into(),
        message_type: if format == Format::Ros1 { "std_msgs/UInt8MultiArray" } else { "std_msgs/msg/UInt8MultiArray" }
            .into(),
        encoding: if format == Format::Ros1 { "ros1" } else { "cdr" }.into(),
        ..Connection::default()
    };
    let options = WriteOptions {
        compression,
        direct_io: if direct { DirectIo::Require } else { DirectIo::Off },
        ..WriteOptions::default()
    };
    let start = Instant::now();
    let mut w = rbag_storage::create(&out, format, &options)?;
    let id = w.add_connection(&conn)?;
    for i in 0..count {
        w.write(id, 1_700_000_000_000_000_000 + i * 33_000_000, 0, &payload)?;
    }
    w.finish()?;
    println!("{:.6}", start.elapsed().as_secs_f64());
    Ok(())
}
