//! `rbag compress` (being written).

use anyhow::Result;

use crate::Outcome;

/// (being written)
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _compress: bool) -> Result<Outcome> {
    anyhow::bail!("rbag compress: not built yet")
}
