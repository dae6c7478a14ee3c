//! `rbag reindex`: repair bags whose index was never written (a recorder that was killed).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::Outcome;

/// Rebuild the index of bags whose recorder died (e.g. `X.bag.active`), or the metadata.yaml
/// of a rosbag2 directory from its storage files (like `ros2 bag reindex`).
///
/// `X.bag.active` is written to `X.bag`; `X.bag` is repaired in place with the original kept as
/// `X.orig.bag`. Every complete message is kept; a torn tail is dropped and reported (exit code 3).
/// The input is never modified: a failed reindex leaves it as it was.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag reindex run.bag.active      (writes run.bag)\n  rbag reindex run.bag             (in place; the original kept as run.orig.bag)\n  rbag reindex rosbag2_dir --ros-distro humble"
)]
pub struct Args {
    /// Bags to repair.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Write the repaired bag here instead (one input only).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Replace an existing output (only a bag, and only once the repaired one is complete).
    #[arg(long)]
    force: bool,
    /// Write a rosbag2 directory's metadata.yaml as this distro's rosbag2 reads it (humble,
    /// iron, jazzy...); default: ROS_DISTRO when it names a ROS 2 distro, else the old file's
    /// version.
    #[arg(long, value_name = "DISTRO")]
    ros_distro: Option<String>,
}

pub fn run(args: Args) -> Result<Outcome> {
    if args.output.is_some() && args.paths.len() > 1 {
        bail!("-o/--output takes one input bag; {} were given", args.paths.len());
    }
    let mut outcome = Outcome::Ok;
    for input in &args.paths {
        if input.is_dir() {
            if args.output.is_some() {
                bail!("a rosbag2 directory is reindexed in place (its metadata.yaml is rewritten); drop -o");
            }
            let distro = args.ros_distro.clone().or_else(super::rosbag2_args::env_distro);
            let report = rbag_bag::reindex_rosbag2(input, distro.as_deref())
                .with_context(|| format!("cannot reindex {}", input.display()))?;
            for r in &report.repairs {
                note!("repaired {r}");
            }
            note!("{}: wrote {} for {} messages", input.display(), report.output.display(), report.messages_kept);
            continue;
        }
        let (output, backup) = match &args.output {
            Some(o) => (o.clone(), None),
            None => rbag_bag::reindex_target(input),
        };
        let report = rbag_bag::reindex(input, &output, backup.as_deref(), args.force).map_err(|e| {
            let hint = match e.storage() {
                Some(rbag_bag::StorageError::OutputExists { .. }) => {
                    "; use --force to replace it or -o to choose another output"
                }
                _ => "",
            };
            anyhow::Error::new(e).context(format!("cannot reindex {} (it is left unchanged{hint})", input.display()))
        })?;
        let chunks =
            if report.chunks_written > 0 { format!(" in {} chunks", report.chunks_written) } else { String::new() };
        let torn = if report.bytes_dropped + report.messages_dropped > 0 || report.chunks_written > 0 {
            format!("; dropped {} bytes and {} messages of torn tail", report.bytes_dropped, report.messages_dropped)
        } else {
            String::new()
        };
        let kept_as = backup.filter(|b| b.exists()).map(|b| format!("; original kept as {}", b.display()));
        note!(
            "{} -> {}: kept {} messages{chunks}{torn}{}",
            input.display(),
            report.output.display(),
            report.messages_kept,
            kept_as.unwrap_or_default()
        );
        for r in &report.repairs {
            note!("{r}");
        }
        for l in &report.lost {
            note!("dropped: {l}");
        }
        if report.bytes_dropped > 0 || report.messages_dropped > 0 || !report.lost.is_empty() {
            outcome = Outcome::Dropped;
        }
    }
    Ok(outcome)
}
