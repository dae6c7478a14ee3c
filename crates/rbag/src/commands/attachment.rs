//! `rbag attachment add|get|list`: files carried inside an MCAP bag, as `mcap add attachment`,
//! `mcap get attachment` and `mcap list attachments` handle them.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::Outcome;

/// Add, extract or list the attachments of an MCAP bag (a calibration, a map, a URDF).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag attachment add run.mcap -f calib.yaml --content-type application/yaml\n  rbag attachment list run.mcap\n  rbag attachment get run.mcap -n calib.yaml -o calib.yaml"
)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Attach a file to an MCAP bag (a .mcap file, or the first file of a rosbag2 MCAP
    /// directory). The bag is rewritten under a temporary name and renamed into place only
    /// when complete: an interrupted add leaves the original as it was.
    Add {
        /// The MCAP bag.
        bag: PathBuf,
        /// The file to attach.
        #[arg(short = 'f', long = "file", value_name = "FILE")]
        file: PathBuf,
        /// Name of the attachment (default: FILE as given).
        #[arg(short, long)]
        name: Option<String>,
        /// Media type of the attachment.
        #[arg(long, default_value = "application/octet-stream")]
        content_type: String,
        /// Log time: integer nanoseconds (as mcap), or seconds with a decimal point, or `Nns`
        /// (default: now).
        #[arg(long, value_name = "TIME", value_parser = parse_time)]
        log_time: Option<u64>,
        /// Creation time, as --log-time (default: FILE's modification time).
        #[arg(long, value_name = "TIME", value_parser = parse_time)]
        creation_time: Option<u64>,
    },
    /// Write an attachment's bytes to a file or stdout (not a terminal). Its CRC is checked
    /// first: a damaged attachment is an error, not bytes.
    Get {
        /// The bag.
        bag: PathBuf,
        /// Name of the attachment.
        #[arg(short, long)]
        name: String,
        /// Record offset (from `rbag attachment list`), when several share the name.
        #[arg(long)]
        offset: Option<u64>,
        /// Where to write it (default: stdout).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// List the attachments (as `rbag list attachments`).
    List {
        /// The bag.
        bag: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// A time as the mcap CLI takes one (integer nanoseconds), or as rbag does elsewhere (seconds
/// with a decimal point, `Nns`).
pub fn parse_time(s: &str) -> Result<u64, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().map_err(|e| format!("{s}: {e}"));
    }
    rbag_bag::units::parse_time(s).map_err(|e| e.to_string())
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.command {
        Sub::Add { bag, file, name, content_type, log_time, creation_time } => {
            let a = rbag_bag::attachments::from_file(&file, name.as_deref(), &content_type, log_time, creation_time)?;
            let (target, offsets) = rbag_bag::attachments::add(&bag, &[a], &[]).with_context(|| {
                format!("cannot add {} to {} (it is left unchanged)", file.display(), bag.display())
            })?;
            note!("{}: attached {} at offset {}", target.display(), file.display(), offsets[0]);
        }
        Sub::Get { bag, name, offset, output } => {
            if output.is_none() && std::io::stdout().is_terminal() {
                bail!("binary output can mess up a terminal: give -o FILE or redirect stdout to a file or pipe");
            }
            let opened = super::open_with(&bag, &super::ReadArgs::default())?;
            if let Some(o) = &output {
                let same = std::fs::canonicalize(o)
                    .ok()
                    .zip(opened.storage_info()?.files.first().and_then(|f| std::fs::canonicalize(f).ok()));
                if same.is_some_and(|(a, b)| a == b) {
                    bail!("{}: the output is the bag itself", o.display());
                }
            }
            let a = rbag_bag::attachments::get(&opened, &name, offset)?;
            match output {
                Some(o) => std::fs::write(&o, &a.data).with_context(|| format!("cannot write {}", o.display()))?,
                None => {
                    let mut out = std::io::stdout().lock();
                    out.write_all(&a.data)?;
                    out.flush()?;
                }
            }
        }
        Sub::List { bag, json } => {
            let args = super::list::Args::for_bag("attachments", bag, json);
            return super::list::run(args);
        }
    }
    Ok(Outcome::Ok)
}
