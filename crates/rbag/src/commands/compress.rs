//! `rbag compress` / `rbag decompress`: rewrite bags in place with another compression, as
//! `rosbag compress` / `rosbag decompress` do, keeping the original as a backup.

use std::path::PathBuf;

use anyhow::Result;
use rbag_bag::compress::{CompressError, CompressOptions, CompressReport, InPlace};
use rbag_bag::{Compression, CompressionMode, Progress};

use crate::{output, Outcome};

/// Compress bags in place, like `rosbag compress`: a ROS 1 bag's chunks with bz2 (the default)
/// or lz4, an MCAP file's chunks with zstd (the default) or lz4, a rosbag2 directory with zstd
/// per file (the default) or per message (SQLite3 only), as rosbag2's compression modes.
///
/// The original is kept as NAME.orig.EXT (`run.bag` → `run.orig.bag`; a directory `DIR` →
/// `DIR.orig`) unless --no-backup. The new bag is written beside it under a hidden name and
/// renamed into place only when complete: if the command is killed at any point, the bag or its
/// backup is complete (without a backup, a directory waits in the hidden `.NAME.rbag-compress`
/// for the instant between two renames), and running the command again puts that right. A bag
/// already compressed so is skipped with a note. Messages (topics, times, bytes), connections,
/// MCAP attachments and metadata records, and the chunk size are kept.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  rbag compress run.bag                  bz2 chunks, original kept as run.orig.bag
  rbag compress --lz4 *.bag              lz4 chunks
  rbag compress --lz4 run.mcap           lz4 chunks in an MCAP file (zstd by default)
  rbag compress rosbag2_dir              zstd per storage file (rosbag2's file mode)
  rbag compress --compression-mode message sqlite_dir --no-backup
  rbag decompress run.bag                undo it (add -f when run.orig.bag is there)")]
pub struct Args {
    /// Bags to compress: ROS 1 `.bag`, `.mcap` files, rosbag2 directories.
    #[arg(required = true, value_name = "BAG")]
    bags: Vec<PathBuf>,
    /// bz2 chunks (ROS 1; the default there).
    #[arg(short = 'j', long, conflicts_with_all = ["lz4", "zstd"])]
    bz2: bool,
    /// lz4 chunks (ROS 1 and MCAP).
    #[arg(long, conflicts_with = "zstd")]
    lz4: bool,
    /// zstd chunks (MCAP; the default there).
    #[arg(long)]
    zstd: bool,
    /// rosbag2 directories: zstd on each storage file once closed (`file`, the default) or on
    /// each message (`message`, SQLite3 only).
    #[arg(long, value_name = "file|message", value_parser = parse_mode)]
    compression_mode: Option<CompressionMode>,
    #[command(flatten)]
    common: Common,
}

/// Decompress bags in place, like `rosbag decompress`: no chunk compression, no rosbag2 zstd.
///
/// The original is kept as NAME.orig.EXT (`DIR.orig` for a directory) unless --no-backup; the
/// same care as `rbag compress` takes keeps a complete bag whenever the command is killed. A bag
/// that is not compressed is skipped with a note.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  rbag decompress run.bag                original kept as run.orig.bag
  rbag decompress -f run.bag             replace an earlier run.orig.bag (a compress's backup)
  rbag decompress --no-backup rosbag2_dir")]
pub struct DecompressArgs {
    /// Bags to decompress: ROS 1 `.bag`, `.mcap` files, rosbag2 directories.
    #[arg(required = true, value_name = "BAG")]
    bags: Vec<PathBuf>,
    #[command(flatten)]
    common: Common,
}

/// What compress and decompress share.
#[derive(clap::Args)]
struct Common {
    /// Keep no backup of the original.
    #[arg(long)]
    no_backup: bool,
    /// Replace an existing backup (NAME.orig.EXT), if it is a bag.
    #[arg(short, long)]
    force: bool,
    /// Print nothing but errors: no progress bar, no summary.
    #[arg(short, long)]
    quiet: bool,
}

fn parse_mode(s: &str) -> Result<CompressionMode, String> {
    match s {
        "file" => Ok(CompressionMode::File),
        "message" => Ok(CompressionMode::Message),
        other => Err(format!("unknown compression mode {other:?} (file, message)")),
    }
}

pub fn run(args: Args, _compress: bool) -> Result<Outcome> {
    let compression = if args.bz2 {
        Some(Compression::Bz2)
    } else if args.lz4 {
        Some(Compression::Lz4)
    } else if args.zstd {
        Some(Compression::Zstd)
    } else {
        None
    };
    let options = CompressOptions { compression, mode: args.compression_mode };
    each(&args.bags, &args.common, "compressing", &mut |path, in_place, progress| {
        rbag_bag::compress::compress(path, &options, in_place, progress)
    })
}

pub fn run_decompress(args: DecompressArgs) -> Result<Outcome> {
    each(&args.bags, &args.common, "decompressing", &mut |path, in_place, progress| {
        rbag_bag::compress::decompress(path, in_place, progress)
    })
}

type Rewrite<'a> =
    dyn FnMut(&std::path::Path, &InPlace, &mut dyn FnMut(Progress)) -> Result<CompressReport, CompressError> + 'a;

/// Rewrites every bag, going on after a failure (as rosbag does); fails at the end if any did.
fn each(bags: &[PathBuf], common: &Common, what: &str, rewrite: &mut Rewrite) -> Result<Outcome> {
    let in_place = InPlace { no_backup: common.no_backup, force: common.force };
    let mut failed = Vec::new();
    for path in bags {
        let bar = if common.quiet {
            indicatif::ProgressBar::hidden()
        } else {
            output::progress_bar(0, &format!("{what} {}", path.display()))
        };
        let mut on_progress = |p: Progress| output::show_progress(&bar, &p);
        let result = rewrite(path, &in_place, &mut on_progress);
        bar.finish_and_clear();
        match result {
            Ok(report) if !common.quiet => say(&report),
            Ok(_) => {}
            Err(e) if bags.len() == 1 => return Err(hint(e)),
            Err(e) => {
                output::error(&hint(e));
                failed.push(path.display().to_string());
            }
        }
    }
    if failed.is_empty() {
        Ok(Outcome::Ok)
    } else {
        anyhow::bail!("{} of {} bags failed: {}", failed.len(), bags.len(), failed.join(", "))
    }
}

fn say(r: &CompressReport) {
    if let Some(rec) = &r.recovered {
        note!("note: {rec}");
    }
    if !r.rewritten {
        note!("{}: already {}, left as it is", r.path.display(), r.before);
        return;
    }
    let kept = match &r.backup {
        Some(b) => format!("; original kept as {}", b.display()),
        None => String::new(),
    };
    note!(
        "{}: {} -> {}, {} -> {} ({} messages){kept}",
        r.path.display(),
        r.before,
        r.after,
        size(r.size_before),
        size(r.size_after),
        r.messages
    );
}

fn size(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// The library's error with the flag that helps.
fn hint(e: CompressError) -> anyhow::Error {
    let extra = match &e {
        CompressError::BackupExists { .. } => Some("use -f to replace it, or --no-backup to keep none"),
        CompressError::Busy { .. } => Some("wait for it to finish"),
        _ => None,
    };
    match (e, extra) {
        (CompressError::Bag(b), _) => super::with_hint(b),
        (e, Some(h)) => {
            let msg = format!("{e}; {h}");
            anyhow::Error::new(e).context(msg)
        }
        (e, None) => anyhow::Error::new(e),
    }
}
