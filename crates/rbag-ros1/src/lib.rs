//! ROS 1 on the wire, with no ROS installed.
//!
//! ROS 1 nodes find each other through the master's XML-RPC API and move messages over TCPROS.
//! This crate speaks both: an XML-RPC codec and blocking HTTP/1.1 layer ([`xmlrpc`]), the master
//! and node ("slave") APIs, TCPROS publishers and subscribers, and an embedded master that can
//! stand in for `roscore`. It never interprets message bytes: a connection header's `type`,
//! `md5sum` and `message_definition` are text it passes on.
//!
//! Everything is blocking std threads: ROS 1 graphs have tens of connections, and roscpp and
//! rospy themselves use a thread per connection (see `docs/ros1-live-spike.md`).

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod master;
pub mod master_client;
pub mod names;
pub mod node;
pub mod record;
mod slave;
pub mod tcpros;
pub mod xmlrpc;
