//! `rbag completions`: shell completion scripts, generated from the CLI definition.

use std::io::Write;

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::Outcome;

/// Print a shell completion script (e.g. `rbag completions bash > /etc/bash_completion.d/rbag`).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag completions bash > ~/.local/share/bash-completion/completions/rbag\n  rbag completions zsh > \"${fpath[1]}/_rbag\""
)]
pub struct Args {
    /// The shell to complete for.
    shell: Shell,
}

pub fn run(args: Args) -> Result<Outcome> {
    let mut cmd = crate::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "rbag", &mut out);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out)?;
    stdout.flush()?;
    Ok(Outcome::Ok)
}
