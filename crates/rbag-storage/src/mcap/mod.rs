//! MCAP files (<https://mcap.dev/spec>), with the `ros2` profile rosbag2 writes and the `ros1`
//! profile for ROS 1 data.

mod amend;
mod chunks;
mod encode;
pub(crate) mod parse;
pub(crate) mod reader;
pub(crate) mod records;
mod reindex;
mod writer;

pub use amend::amend;
pub use reader::{McapReader, MCAP_TYPE_HASH_KEY};
pub use reindex::reindex;
pub use writer::McapWriter;
