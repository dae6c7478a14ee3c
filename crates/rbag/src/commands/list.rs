//! `rbag list`: what this build reads and writes, like `ros2 bag list storage|compressor`.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::Outcome;

/// List the storage backends and compressors this build has.
#[derive(clap::Args)]
pub struct Args {
    /// Only `storage` or `compressor` (as `ros2 bag list`); both when absent.
    #[arg(value_name = "WHAT", value_parser = ["storage", "compressor"])]
    what: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Backend {
    name: &'static str,
    description: &'static str,
    read: bool,
    write: bool,
}

#[derive(Serialize)]
struct Compressor {
    name: &'static str,
    /// Where it applies.
    applies_to: &'static str,
}

const STORAGE: &[Backend] = &[
    Backend { name: "ros1", description: "ROS 1 bag v2.0 (.bag)", read: true, write: true },
    Backend {
        name: "sqlite3",
        description: "rosbag2 SQLite3 (.db3, schema 1-4 read, 4 written)",
        read: true,
        write: true,
    },
    Backend { name: "mcap", description: "MCAP (.mcap; ros2 and ros1 profiles)", read: true, write: true },
];

const COMPRESSORS: &[Compressor] = &[
    Compressor { name: "lz4", applies_to: "ROS 1 chunks, MCAP chunks" },
    Compressor { name: "bz2", applies_to: "ROS 1 chunks" },
    Compressor { name: "zstd", applies_to: "MCAP chunks; rosbag2 file and message modes" },
];

pub fn run(args: Args) -> Result<Outcome> {
    let storage = args.what.as_deref() != Some("compressor");
    let compressor = args.what.as_deref() != Some("storage");
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::Map::new();
        if storage {
            v.insert("storage".into(), serde_json::to_value(STORAGE)?);
        }
        if compressor {
            v.insert("compressor".into(), serde_json::to_value(COMPRESSORS)?);
        }
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        if storage {
            writeln!(out, "storage:")?;
            for b in STORAGE {
                let rw = match (b.read, b.write) {
                    (true, true) => "read, write",
                    (true, false) => "read",
                    _ => "write",
                };
                writeln!(out, "  {:<9} {} [{rw}]", b.name, b.description)?;
            }
        }
        if compressor {
            writeln!(out, "compressor:")?;
            for c in COMPRESSORS {
                writeln!(out, "  {:<9} {}", c.name, c.applies_to)?;
            }
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
