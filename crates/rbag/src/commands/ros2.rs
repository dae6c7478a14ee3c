//! Joining a ROS 2 graph: the DDS domain and discovery range a sourced ROS 2 shell would use.

pub use rbag_live::graph::participant;
