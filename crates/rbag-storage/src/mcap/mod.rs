//! MCAP files (<https://mcap.dev/spec>), with the `ros2` profile rosbag2 writes and the `ros1`
//! profile for ROS 1 data.

mod chunks;
mod parse;
mod reader;
mod records;
mod writer;

pub use reader::{McapReader, MCAP_TYPE_HASH_KEY};
pub use writer::McapWriter;
