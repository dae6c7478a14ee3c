//! One module per verb. Each has an `Args` (clap) and a `run` returning an [`crate::Outcome`].

pub mod convert;
pub mod info;
pub mod reindex;

use std::path::Path;

use anyhow::{Context, Result};

/// Opens a bag for reading, naming it in any error.
pub fn open(path: &Path) -> Result<Box<dyn rbag_storage::StorageReader>> {
    rbag_storage::open(path).with_context(|| format!("cannot read {}", path.display()))
}
