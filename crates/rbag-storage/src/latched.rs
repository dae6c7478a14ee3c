//! Which connections carry state a reader needs from before any window it reads: a ROS 1
//! latched publisher, or a ROS 2 connection offered only as transient-local (`/tf_static`,
//! `/robot_description`). Cutting, splitting and snapshotting keep their last messages.

use crate::ros1::keys;
use crate::rosbag2::{qos, QOS_KEY};
use crate::Connection;

impl Connection {
    /// How many of this connection's last messages stand for its latched state: 1 for a ROS 1
    /// publisher whose header says `latching: 1`, the largest offered depth (at least 1) when
    /// every offered QoS profile is transient-local, `None` for any other connection.
    pub fn latched_depth(&self) -> Option<usize> {
        if self.metadata.get(keys::LATCHING).is_some_and(|l| l == "1") {
            return Some(1);
        }
        let profiles = self.metadata.get(QOS_KEY).and_then(|q| qos::parse(q).ok()).unwrap_or_default();
        if !profiles.is_empty() && profiles.iter().all(|p| p.durability == qos::policy::TRANSIENT_LOCAL) {
            return Some(profiles.iter().map(|p| p.depth as usize).max().unwrap_or(1).max(1));
        }
        None
    }
}
