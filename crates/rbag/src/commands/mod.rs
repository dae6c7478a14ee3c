//! One module per verb. Each has an `Args` (clap) and a `run` returning an [`crate::Outcome`].

pub mod completions;
pub mod convert;
pub mod info;
pub mod reindex;

use std::path::Path;

use anyhow::Result;

/// Opens a bag for reading. Storage errors already name the file.
pub fn open(path: &Path) -> Result<Box<dyn rbag_storage::StorageReader>> {
    Ok(rbag_storage::open(path)?)
}
