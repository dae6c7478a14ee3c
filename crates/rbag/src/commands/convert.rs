//! `rbag convert`: copy bags into a new one: merge, filter, cut, rechunk, recompress.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rbag_bag::{ConvertOptions, Progress};
use rbag_storage::{Compression, Filter, Format, WriteOptions};
use regex::Regex;

use crate::units::{parse_size, parse_time};
use crate::{output, Outcome};

/// Convert bags: merge several inputs in time order, select topics, cut by time, rechunk and
/// recompress.
///
/// The output format comes from -s, or else from OUT's extension: `.bag` is a ROS 1 bag.
#[derive(clap::Args)]
pub struct Args {
    /// Input bags, merged in time order.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// The bag to write.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Output storage (default: from OUT's extension).
    #[arg(short, long, value_name = "ros1|sqlite3|mcap")]
    storage: Option<String>,
    /// Chunk compression.
    #[arg(long, value_name = "none|lz4|bz2|zstd", default_value = "none")]
    compression: Compression,
    /// Flush a chunk once it holds this much uncompressed data (units allowed: 768KiB, 4MB).
    #[arg(long, value_name = "BYTES", default_value = "768KiB", value_parser = parse_size)]
    chunk_size: u64,
    /// Also flush a chunk once its messages span this many seconds.
    #[arg(long, value_name = "SECONDS")]
    chunk_interval: Option<f64>,
    /// Keep only these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    topics: Vec<String>,
    /// Drop these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    exclude_topics: Vec<String>,
    /// Keep topics matching this regular expression.
    #[arg(short = 'e', long, value_name = "RE")]
    regex: Option<Regex>,
    /// Drop topics matching this regular expression.
    #[arg(short = 'x', long, value_name = "RE")]
    exclude_regex: Option<Regex>,
    /// Keep messages at or after this time (seconds since the epoch, or integer ns with `ns`).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    start: Option<u64>,
    /// Keep messages before this time.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    end: Option<u64>,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    force: bool,
}

/// The storage for OUT: `-s` wins, else the extension decides.
pub fn output_format(out: &Path, storage: Option<&str>) -> Result<Format> {
    Ok(match storage {
        Some("ros1") => Format::Ros1,
        Some("sqlite3") => Format::Sqlite3,
        Some("mcap") => Format::Mcap,
        Some(other) => bail!("unknown storage {other:?}: use ros1, sqlite3 or mcap"),
        None => match out.extension().and_then(|e| e.to_str()) {
            Some("bag") => Format::Ros1,
            Some("db3") => Format::Sqlite3,
            _ => Format::Mcap,
        },
    })
}

pub fn run(args: Args) -> Result<Outcome> {
    let format = output_format(&args.output, args.storage.as_deref())?;
    if args.output.exists() && !args.force {
        bail!("{} exists; use --force to overwrite it", args.output.display());
    }
    if args.inputs.iter().any(|i| i == &args.output) {
        bail!("{} is both an input and the output", args.output.display());
    }
    if let Some(s) = args.chunk_interval {
        if !(s.is_finite() && s > 0.0) {
            bail!("--chunk-interval must be a positive number of seconds");
        }
    }
    let mut inputs = Vec::new();
    for path in &args.inputs {
        inputs.push((path.clone(), super::open(path)?));
    }
    let options = ConvertOptions {
        filter: Filter {
            topics: args.topics,
            regex: args.regex,
            exclude_topics: args.exclude_topics,
            exclude_regex: args.exclude_regex,
            start: args.start,
            end: args.end,
        },
        write: WriteOptions {
            compression: args.compression,
            chunk_size: args.chunk_size.max(1),
            chunk_interval_ns: args.chunk_interval.map(|s| (s * 1e9) as u64),
        },
    };
    let bar = output::progress_bar(0, "converting");
    let mut on_progress = |p: Progress| {
        bar.set_length(p.messages_total);
        bar.set_position(p.messages_done);
    };
    let report = rbag_bag::convert(&inputs, &args.output, format, &options, &mut on_progress)
        .with_context(|| format!("cannot convert into {} (what was written so far stays; `rbag reindex` recovers it)", args.output.display()))?;
    bar.finish_and_clear();
    eprintln!(
        "wrote {} messages on {} connections to {}",
        report.messages_written,
        report.connections_written,
        report.output.display()
    );
    Ok(Outcome::Ok)
}
