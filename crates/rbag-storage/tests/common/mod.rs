//! The ROS 2 sample (`cdr.rs`, shared with rbag-testkit's `sample::cdr`) and its ROS 1
//! `/chatter` connection.
#![allow(dead_code)]

mod cdr;
pub use cdr::*;

use rbag_storage::Connection;

/// rbag-testkit's `sample::connection(&sample::TOPICS[0])`: ROS 1 `/chatter`.
pub fn ros1_chatter() -> Connection {
    let mut c = Connection {
        topic: "/chatter".into(),
        message_type: "std_msgs/String".into(),
        encoding: "ros1".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    };
    c.metadata.insert("md5sum".into(), "992ce8a1687cec8c8bd883ec73ca41d1".into());
    c.metadata.insert("callerid".into(), "/rbag_sample".into());
    c
}
