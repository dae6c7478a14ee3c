//! `rbag man`: man pages, generated from the CLI definition (clap_mangen), so they never
//! disagree with `--help`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::Outcome;

/// Write man pages: rbag(1) and one page per verb, rbag-VERB(1).
#[derive(clap::Args)]
#[command(after_help = "Examples:
  rbag man ~/.local/share/man/man1      (then: man rbag-convert)
  rbag man /tmp/rbag-man && man -l /tmp/rbag-man/rbag.1")]
pub struct Args {
    /// The directory to write the pages into (created if missing).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

pub fn run(args: Args) -> Result<Outcome> {
    std::fs::create_dir_all(&args.dir).with_context(|| format!("cannot create {}", args.dir.display()))?;
    let cmd = crate::Cli::command();
    let mut written = 0;
    let mut write = |name: String, cmd: clap::Command| -> Result<()> {
        let path = args.dir.join(format!("{name}.1"));
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd.name(name.clone())).render(&mut out)?;
        std::fs::write(&path, out).with_context(|| format!("cannot write {}", path.display()))?;
        written += 1;
        Ok(())
    };
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write(format!("rbag-{}", sub.get_name()), sub.clone())?;
    }
    write("rbag".into(), cmd.clone())?;
    note!("wrote {written} man pages to {}", args.dir.display());
    Ok(Outcome::Ok)
}
