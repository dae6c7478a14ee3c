//! Live recording: one pipeline for ROS 1 and ROS 2.
