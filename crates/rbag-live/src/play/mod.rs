//! Live playback: the ROS 1 and ROS 2 sinks, rate control and control services.
