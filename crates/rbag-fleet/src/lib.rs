//! Many bags: catalogs of their summaries, and partition plans for distributed engines.
//!
//! [`catalog`] finds the bags under local directories and URL prefixes (`s3://bucket/runs/`)
//! and reads each one's summary only (a ROS 1 bag's index, an MCAP summary, a rosbag2
//! directory's metadata), never its messages: one row per bag and topic, with the bag's size,
//! version, storage, time range, and each topic's type, type hash, message count and mean rate.
//! With the `parquet` feature, a catalog is a Parquet file that DuckDB, Polars or pandas query
//! directly, and an earlier catalog is updated in place: bags whose size and version did not
//! change are not opened again (docs/catalog.md).
//!
//! ```no_run
//! use rbag_fleet::catalog;
//!
//! let (rows, report) = catalog::catalog(&["runs/".to_string()], None, 16)?;
//! println!("{} rows from {} bags, {} failed", rows.len(), report.read, report.failed.len());
//! # Ok::<(), rbag_fleet::Error>(())
//! ```
//!
//! URLs are listed and opened through what rbag-storage has registered: a program that reads
//! buckets calls `rbag_remote::register()` first.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::path::PathBuf;

pub mod catalog;
pub mod plan;

/// A result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, naming the path, URL or bag.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A local file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A local path whose name is not UTF-8: catalogs name bags by text.
    #[error("{}: the path is not valid UTF-8, which a catalog cannot name", path.display())]
    NotUtf8 {
        /// The path (its invalid bytes replaced).
        path: PathBuf,
    },
    /// A URL could not be listed or opened (the storage error names the URL).
    #[error(transparent)]
    Remote(rbag_storage::Error),
    /// Nothing is at a URL: no object, and no object under it as a prefix.
    #[error("{url}: no object there, and none under it")]
    NotFound {
        /// The URL.
        url: String,
    },
    /// A bag could not be opened or summarised (the error names the bag).
    #[error(transparent)]
    Bag(#[from] rbag_bag::Error),
    /// A bag's summary holds what a catalog cannot (a time past the year 2262).
    #[error("{bag}: {reason}")]
    Summary {
        /// The bag's URL or path.
        bag: String,
        /// What did not fit.
        reason: String,
    },
    /// A file is not an rbag catalog of this version (another Parquet file, another schema).
    #[error("{}: not an rbag catalog: {reason}", path.display())]
    NotCatalog {
        /// The file.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// A catalog could not be written or read.
    #[error("{}: {reason}", path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// Rows could not be made into a table, or a table into rows.
    #[error("catalog table: {0}")]
    Table(String),
}
