//! Bags as Arrow tables: one topic's messages as columns, built in Rust from the decoded
//! messages, for Python's `Reader.to_arrow` and `rbag export`.
//!
//! [`TopicBatches`] reads a topic of one or more bags as record batches; [`columns`] says how
//! a message type becomes columns. With the `export` feature, the `export` module writes every topic of
//! a bag to Parquet, Arrow IPC or CSV files.
//!
//! ```no_run
//! use rbag_arrow::{TableOptions, TopicBatches};
//! use rbag_bag::Bag;
//!
//! let bags = [Bag::open("run.bag")?];
//! let types = [rbag_bag::types::sources_for(&bags[0].storage_info()?.properties, &[])?];
//! let options = TableOptions { columns: Some(vec!["linear_acceleration".into()]), ..TableOptions::default() };
//! let mut rows = 0;
//! for batch in TopicBatches::new(&bags, &types, "/imu", options)? {
//!     rows += batch?.num_rows();
//! }
//! println!("{rows} rows");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::path::PathBuf;

pub mod columns;
#[cfg(feature = "export")]
pub mod export;
mod table;

pub use arrow_array;
pub use arrow_schema;
pub use table::{TableOptions, TopicBatches};

/// What went wrong, naming the bag, topic, column and message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Opening or reading a bag, or decoding a message, failed.
    #[error(transparent)]
    Bag(#[from] rbag_bag::Error),
    /// No bag was given.
    #[error("no bag to read")]
    NoBag,
    /// A selected column is not a field of the topic's type.
    #[error("topic {topic}: {source}")]
    NoColumn {
        /// The topic.
        topic: String,
        /// The column and the ones there are.
        source: columns::NoColumn,
    },
    /// The topic's connections have types that make different columns.
    #[error("topic {topic}: its connections have different types ({first}; {other}), which make different columns")]
    MixedTypes {
        /// The topic.
        topic: String,
        /// The first connection's type and bag.
        first: String,
        /// The type and bag of one that differs.
        other: String,
    },
    /// A value could not go into its column.
    #[error("{}: topic {topic}, message at {log_time} ns, column {column}: {problem}", path.display())]
    Value {
        /// The bag.
        path: PathBuf,
        /// The topic.
        topic: String,
        /// The message's log time.
        log_time: u64,
        /// The column.
        column: String,
        /// What was wrong with the value.
        problem: columns::ValueError,
    },
    /// A file could not be created or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A Parquet, Arrow IPC or CSV writer failed.
    #[error("{}: {reason}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The writer's reason.
        reason: String,
    },
    /// Arrow refused a batch (a bug in the builders, reported instead of a panic).
    #[error("topic {topic}: {source}")]
    Arrow {
        /// The topic.
        topic: String,
        /// Arrow's reason.
        source: arrow_schema::ArrowError,
    },
}
