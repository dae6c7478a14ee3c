//! `rbag info`: a bag's summary from its index, like `rosbag info` and `ros2 bag info`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::Outcome;

/// Summarise a bag: files, duration, sizes, compression, types and topics. Reads only the index
/// or summary (a ROS 1 bag, an MCAP file, a rosbag2 directory or a single .db3/.mcap).
#[derive(clap::Args)]
pub struct Args {
    /// Bags to summarise.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Print JSON (one object per bag, or an array for several).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    read: super::ReadArgs,
}

pub fn run(args: Args) -> Result<Outcome> {
    let mut infos = Vec::new();
    for path in &args.paths {
        let bag = super::open_with(path, &args.read)?;
        let info =
            bag.info().map_err(super::with_hint).with_context(|| format!("cannot summarise {}", path.display()))?;
        infos.push(info);
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        if infos.len() == 1 {
            serde_json::to_writer_pretty(&mut out, &infos[0])?;
        } else {
            serde_json::to_writer_pretty(&mut out, &infos)?;
        }
        writeln!(out)?;
    } else {
        for (i, info) in infos.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            write!(out, "{info}")?;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
