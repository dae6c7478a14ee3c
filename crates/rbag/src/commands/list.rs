//! `rbag list`: what this build reads and writes, like `ros2 bag list storage|compressor`.

use std::io::Write;

use anyhow::Result;
use rbag_bag::Compression;

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

pub fn run(args: Args) -> Result<Outcome> {
    let storage = args.what.as_deref() != Some("compressor");
    let compressor = args.what.as_deref() != Some("storage");
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::Map::new();
        if storage {
            v.insert("storage".into(), serde_json::to_value(rbag_bag::summaries())?);
        }
        if compressor {
            let list = Compression::ALL.map(|c| serde_json::json!({"name": c.name(), "applies_to": c.applies_to()}));
            v.insert("compressor".into(), serde_json::Value::from(list.to_vec()));
        }
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        if storage {
            writeln!(out, "storage:")?;
            for b in rbag_bag::summaries() {
                let rw = match (b.capabilities.read, b.capabilities.write) {
                    (true, true) => "read, write",
                    (true, false) => "read",
                    _ => "write",
                };
                writeln!(out, "  {:<9} {} [{rw}]", b.name, b.description)?;
            }
        }
        if compressor {
            writeln!(out, "compressor:")?;
            for c in Compression::ALL {
                writeln!(out, "  {:<9} {}", c.name(), c.applies_to())?;
            }
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
