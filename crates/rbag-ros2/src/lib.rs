//! ROS 2 on the wire, with no ROS 2 installed.
//!
//! ROS 2 nodes are DDS participants that follow naming and QoS conventions. This crate holds
//! those conventions ([`names`], [`qos`]) apart from the DDS stack that carries the bytes, so
//! they are tested without a network.

#![warn(missing_docs)]

#[cfg(feature = "dds")]
pub mod dds;
pub mod names;
pub mod qos;
#[cfg(feature = "dds")]
pub mod record;
pub mod select;
pub mod service;
