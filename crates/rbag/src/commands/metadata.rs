//! `rbag metadata` (being written).

use anyhow::Result;

use crate::Outcome;

/// (being written)
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<Outcome> {
    anyhow::bail!("rbag metadata: not built yet")
}
