//! ROS 2 on the wire, with no ROS 2 installed.
//!
//! ROS 2 nodes are DDS participants (or, with rmw_zenoh, Zenoh sessions) that follow naming
//! and QoS conventions. This crate holds those conventions ([`names`], [`qos`], [`zenoh_wire`])
//! apart from the stacks that carry the bytes ([`dds`], [`zenoh`]), so they are tested without
//! a network; [`record`] is written once over either, through [`graph::Graph`].

#![warn(missing_docs)]

#[cfg(feature = "dds")]
pub mod dds;
pub mod graph;
pub mod names;
pub mod qos;
pub mod record;
pub mod select;
pub mod service;
#[cfg(feature = "zenoh")]
pub mod zenoh;
pub mod zenoh_wire;
