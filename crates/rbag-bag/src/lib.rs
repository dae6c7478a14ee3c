//! The rosbag API: one view of any bag, whatever its storage.
//!
//! [`info`] summarises a bag from its index alone; [`convert`] copies messages from one or more
//! bags into a new one, merged in time order, filtered and rechunked. Both sit on
//! [`rbag_storage`], so they work the same for every backend.

mod convert;
pub mod decode;
mod info;
pub mod transcode;

pub use convert::{convert, ConvertOptions, ConvertReport, Progress, Skipped};
pub use info::{info, BagInfo, CompressionInfo, TopicInfo, TypeInfo, UndeclaredInfo};
pub use rbag_storage as storage;
