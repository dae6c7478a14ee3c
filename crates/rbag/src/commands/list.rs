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

/// One registered storage backend as `rbag list` shows it.
#[derive(Serialize)]
struct Backend {
    name: String,
    description: String,
    read: bool,
    write: bool,
    reindex: bool,
    /// File extensions, the one written by default first.
    extensions: Vec<String>,
    /// Chunk compressions it writes (besides none).
    compressions: Vec<&'static str>,
    /// Whether a bag may span several files.
    splits: bool,
    /// `key=value` storage options it takes.
    options: Vec<StorageOption>,
}

#[derive(Serialize)]
struct StorageOption {
    key: &'static str,
    values: &'static str,
    doc: &'static str,
}

/// Every backend in the storage registry, built-in or registered at start, in registry order.
fn registered_storage() -> Vec<Backend> {
    rbag_bag::backends()
        .iter()
        .map(|b| {
            let caps = b.capabilities();
            Backend {
                name: b.name().into(),
                description: b.description().into(),
                read: caps.read,
                write: caps.write,
                reindex: caps.reindex,
                extensions: b.extensions().iter().map(|e| e.to_string()).collect(),
                compressions: caps.compressions.iter().map(|c| c.name()).collect(),
                splits: caps.splits,
                options: b
                    .options()
                    .iter()
                    .map(|o| StorageOption { key: o.key, values: o.values, doc: o.doc })
                    .collect(),
            }
        })
        .collect()
}

#[derive(Serialize)]
struct Compressor {
    name: &'static str,
    /// Where it applies.
    applies_to: &'static str,
}

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
            v.insert("storage".into(), serde_json::to_value(registered_storage())?);
        }
        if compressor {
            v.insert("compressor".into(), serde_json::to_value(COMPRESSORS)?);
        }
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        if storage {
            writeln!(out, "storage:")?;
            for b in registered_storage() {
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
