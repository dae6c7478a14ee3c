//! `rbag info`: a bag's summary from its index, like `rosbag info` and `ros2 bag info`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use rbag_bag::{InfoOptions, TopicSort};

use crate::{Outcome, UsageError};

/// Summarise a bag: files, duration, sizes, compression, types and topics. Reads only the index
/// or summary (a ROS 1 bag, an MCAP file, a rosbag2 directory or a single .db3/.mcap).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag info run.bag\n  rbag info run.mcap --json\n  rbag info run.bag -y -k duration\n  rbag info rosbag2_dir -v --sort size"
)]
pub struct Args {
    /// Bags to summarise.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Print JSON: one object for one bag; for several, one object per line (NDJSON), so that
    /// `jq` reads one or many alike.
    #[arg(long, conflicts_with_all = ["yaml", "topic_name"])]
    json: bool,
    /// Print YAML as `rosbag info -y` does (path, version, duration, start, end, size, messages,
    /// indexed, compression, types, topics); several bags are separated by `---`.
    #[arg(short = 'y', long, conflicts_with = "topic_name")]
    yaml: bool,
    /// Print one key of the YAML summary, as `rosbag info -y -k KEY` does: `duration`,
    /// `topics`, `topics[0].type`. Implies --yaml.
    #[arg(short = 'k', long, value_name = "KEY", conflicts_with_all = ["json", "topic_name"])]
    key: Option<String>,
    /// Print only the topic names, one per line (as `ros2 bag info -t`).
    #[arg(short = 't', long)]
    topic_name: bool,
    /// Order of the topics (as `ros2 bag info --sort`): by name, by type, most messages
    /// first, or largest first (payload bytes where the storage knows them).
    #[arg(long, value_enum, default_value = "name")]
    sort: SortArg,
    /// Also show each topic's QoS profiles and definition hashes, the stored definitions (their
    /// text in JSON), and each service's request and response counts (which reads the service
    /// event messages).
    #[arg(short = 'v', long)]
    verbose: bool,
    #[command(flatten)]
    read: super::ReadArgs,
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum SortArg {
    Name,
    Type,
    Count,
    Size,
}

pub fn run(args: Args) -> Result<Outcome> {
    let sort = match args.sort {
        SortArg::Name => TopicSort::Name,
        SortArg::Type => TopicSort::Type,
        SortArg::Count => TopicSort::Count,
        SortArg::Size => TopicSort::Size,
    };
    let options = InfoOptions { verbose: args.verbose, sort };
    let mut infos = Vec::new();
    for path in &args.paths {
        let bag = super::open_with(path, &args.read)?;
        let info = bag
            .info_with(&options)
            .map_err(super::with_hint)
            .with_context(|| format!("cannot summarise {}", path.display()))?;
        infos.push(info);
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        if let [one] = infos.as_slice() {
            serde_json::to_writer_pretty(&mut out, one)?;
            writeln!(out)?;
        } else {
            for info in &infos {
                serde_json::to_writer(&mut out, info)?;
                writeln!(out)?;
            }
        }
    } else if let Some(key) = &args.key {
        let mut values = Vec::new();
        for info in &infos {
            let value = info.rosbag_yaml_key(key).ok_or_else(|| {
                anyhow::Error::new(UsageError(format!(
                    "no key {key:?} in the summary of {}; keys: {} (a list's items as topics[0].type)",
                    info.path,
                    info.rosbag_yaml_keys().join(", ")
                )))
            })?;
            values.push(value);
        }
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                writeln!(out, "---")?;
            }
            writeln!(out, "{v}")?;
        }
    } else if args.yaml {
        // Laid out as rosbag prints it: each summary, a blank line, `---` between bags.
        for (i, info) in infos.iter().enumerate() {
            if i > 0 {
                writeln!(out, "---")?;
            }
            writeln!(out, "{}", info.to_rosbag_yaml())?;
        }
    } else if args.topic_name {
        for info in &infos {
            for t in &info.topics {
                writeln!(out, "{}", t.name)?;
            }
        }
    } else {
        for (i, info) in infos.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            write!(out, "{}", info.to_text(args.verbose))?;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
