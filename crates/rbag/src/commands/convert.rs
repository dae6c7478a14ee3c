//! `rbag convert`: copy bags into a new one: merge, filter, cut, rechunk, recompress.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rbag_bag::transcode::Targets;
use rbag_bag::{Compression, ConvertOptions, Filter, Format, Progress, StorageError, WriteOptions};
use regex::Regex;

use crate::{output, Outcome, UsageError};
use rbag_bag::units::{parse_size, parse_time};

/// Convert bags between storages: merge several inputs in time order, select topics, cut by
/// time, split, rechunk and recompress.
///
/// The output storage comes from -s, or else from OUT's extension: `.bag` is a ROS 1 bag,
/// `.db3` a single SQLite3 file, `.mcap` a single MCAP file, anything else an MCAP rosbag2
/// directory. With `-s sqlite3|mcap` and no such extension, OUT is a rosbag2 directory
/// (metadata.yaml plus `OUT_0.db3`...).
///
/// Messages are copied as bytes when the output stores their encoding. Between a ROS 1 bag and
/// rosbag2 (SQLite3 or MCAP), and back, they are decoded and re-encoded:
/// type names (`pkg/Type` ⇄ `pkg/msg/Type`), `std_msgs/Header` (seq dropped or added) and
/// `time`/`duration` ⇄ `builtin_interfaces` map across, standard types take ROS's own
/// definitions, and definitions are written in the target's dialect with MD5 sums or RIHS01
/// hashes. ROS 2 service events, which ROS 1 cannot hold, are skipped and counted.
///
/// With `--migrate DIR`, messages whose type DIR defines are rewritten into that newer
/// definition: shared fields are kept, new ones take their defaults, removed ones are dropped,
/// renames come from `--migrate-rules`, and a changed field type is an error naming the field.
#[derive(clap::Args)]
pub struct Args {
    /// Input bags, merged in time order.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// The bag to write.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Output storage: ros1, sqlite3, mcap or any other `rbag list storage` names (default:
    /// from OUT's extension).
    #[arg(short, long, value_name = "NAME")]
    storage: Option<String>,
    /// Chunk compression: ROS 1 lz4/bz2, MCAP lz4/zstd.
    #[arg(long, value_name = "none|lz4|bz2|zstd", default_value = "none")]
    compression: Compression,
    #[command(flatten)]
    rosbag2: super::rosbag2_args::Rosbag2Args,
    /// Encoding of MCAP output: cdr (rosbag2, the default) or ros1 (MCAP's ros1 profile, the
    /// ROS 1 bytes copied as they are). A ROS 1 bag holds ros1 and SQLite3 cdr.
    #[arg(long, value_name = "ros1|cdr")]
    encoding: Option<String>,
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
    /// Newer message definitions ([PKG=]DIR, laid out as for --msg-path): messages of the types
    /// they define are rewritten into them. Repeatable.
    #[arg(long, value_name = "[PKG=]DIR")]
    migrate: Vec<String>,
    /// Field renames for --migrate, as YAML: `renames: {pkg/msg/Type: {old_field: new_field}}`.
    #[arg(long, value_name = "FILE", requires = "migrate")]
    migrate_rules: Option<PathBuf>,
    #[command(flatten)]
    types: super::TypeArgs,
    #[command(flatten)]
    read: super::ReadArgs,
}

/// Output types: the bundled store for the output's distro, and `--migrate` definitions.
fn targets(args: &Args) -> Result<Targets> {
    rbag_bag::types::targets(args.rosbag2.ros_distro.as_deref(), &args.migrate, args.migrate_rules.as_deref())
        .context("--migrate")
}

/// Whether any rosbag2 output flag was given.
fn rosbag2_flags(args: &Args) -> bool {
    let r = &args.rosbag2;
    r.splits_or_compresses()
        || r.storage_preset_profile.is_some()
        || r.ros_distro.is_some()
        || r.metadata_version.is_some()
        || r.max_bag_files.is_some()
}

/// A failed convert leaves nothing at OUT; say so, with the flag that helps where one does.
fn output_error(e: rbag_bag::Error, out: &Path) -> anyhow::Error {
    let hint = match e.storage() {
        Some(StorageError::OutputExists { .. }) => " (use --force to replace it)",
        Some(StorageError::OutputIsInput { .. } | StorageError::UnsafeOutput { .. }) => "",
        _ => " (nothing was written there)",
    };
    super::with_hint(e).context(format!("cannot convert into {}{hint}", out.display()))
}

pub fn run(args: Args) -> Result<Outcome> {
    let storage = rbag_bag::storage_for(&args.output, args.storage.as_deref())
        .map_err(|e| anyhow::Error::new(UsageError(e.to_string())))?;
    let format = Format::from_name(storage.name());
    if let Some(s) = args.chunk_interval {
        if !(s.is_finite() && s > 0.0) {
            bail!("--chunk-interval must be a positive number of seconds");
        }
    }
    let rosbag2 = match format {
        Some(f) => args.rosbag2.options(f)?,
        None if !rosbag2_flags(&args) => Default::default(),
        None => bail!(
            "the rosbag2 output flags (splitting, --compression-mode, presets, distro) do not apply to {} output",
            storage.name()
        ),
    };
    if format == Some(Format::Ros1) && args.rosbag2.splits_or_compresses() {
        bail!("splitting and --compression-mode apply to rosbag2 output (-s sqlite3 or mcap)");
    }
    let mut inputs = Vec::new();
    for path in &args.inputs {
        inputs.push(super::open_with(path, &args.read)?);
    }
    if let Some(e) = args.encoding.as_deref().filter(|e| !matches!(*e, "ros1" | "cdr")) {
        bail!("unknown encoding {e:?}: use ros1 or cdr");
    }
    let properties = inputs[0].storage_info().map_err(super::with_hint)?.properties;
    let types = args.types.sources(&properties)?;
    let targets = targets(&args)?;
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
            rosbag2,
        },
        encoding: args.encoding.clone(),
        types,
        targets,
        storage: Default::default(),
        overwrite: args.force,
    };
    let bar = output::progress_bar(0, "converting");
    let mut on_progress = |p: Progress| {
        bar.set_length(p.messages_total);
        bar.set_position(p.messages_done);
    };
    let report = rbag_bag::convert(&inputs, &args.output, &storage, &options, &mut on_progress)
        .map_err(|e| output_error(e, &args.output))?;
    bar.finish_and_clear();
    let rewritten = if report.messages_rewritten > 0 {
        format!(" ({} re-encoded)", report.messages_rewritten)
    } else {
        String::new()
    };
    note!(
        "wrote {} messages{rewritten} on {} connections to {}",
        report.messages_written,
        report.connections_written,
        report.output.display()
    );
    for s in &report.skipped {
        note!("skipped {} messages on {}: {}", s.messages, s.topic, s.reason);
    }
    let mut lost = false;
    for bag in &inputs {
        lost |= super::done_reading(bag);
    }
    Ok(if report.skipped.is_empty() && !lost { Outcome::Ok } else { Outcome::Dropped })
}
