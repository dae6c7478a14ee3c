//! One module per verb. Each has an `Args` (clap) and a `run` returning an [`crate::Outcome`].

pub mod completions;
pub mod convert;
pub mod info;
pub mod list;
pub mod reindex;

use std::path::Path;

use anyhow::Result;

/// Opens a bag for reading and prints what the storage warned about (a scanned file, a
/// skipped chunk). Storage errors already name the file.
pub fn open(path: &Path) -> Result<Box<dyn rbag_storage::StorageReader>> {
    let reader = rbag_storage::open(path)?;
    for w in reader.warnings() {
        eprintln!("warning: {}: {w}", path.display());
    }
    Ok(reader)
}
