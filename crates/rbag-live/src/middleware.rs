//! Which middleware a live verb talks to: the one place that decides it.

/// The live middleware of a recording or a playback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Middleware {
    /// ROS 1: a master, XML-RPC and TCPROS.
    Ros1,
    /// ROS 2: DDS.
    Ros2,
}

/// Which ROS 2 middleware carries a ROS 2 recording or playback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ros2Middleware {
    /// DDS (Cyclone DDS, wire-compatible with rmw_cyclonedds and rmw_fastrtps).
    #[default]
    Dds,
    /// Zenoh, as rmw_zenoh_cpp speaks it.
    Zenoh,
}

impl Ros2Middleware {
    /// `--middleware NAME` (`dds`, `cyclonedds`, `fastrtps`, `zenoh`, or an rmw name), else
    /// `RMW_IMPLEMENTATION` (`rmw_zenoh_cpp` means Zenoh), else DDS.
    pub fn choose(flag: Option<&str>, rmw_implementation: Option<&str>) -> Result<Ros2Middleware, MiddlewareError> {
        let name = flag.or(rmw_implementation.filter(|v| !v.trim().is_empty()));
        match name.map(|n| n.trim().to_ascii_lowercase()).as_deref() {
            None => Ok(Ros2Middleware::Dds),
            Some("zenoh" | "rmw_zenoh_cpp" | "rmw_zenoh") => Ok(Ros2Middleware::Zenoh),
            Some("dds" | "cyclonedds" | "fastrtps" | "fastdds" | "rmw_cyclonedds_cpp" | "rmw_fastrtps_cpp") => {
                Ok(Ros2Middleware::Dds)
            }
            Some(other) => Err(MiddlewareError::UnknownRos2(other.to_string())),
        }
    }

    /// [`Ros2Middleware::choose`] with `RMW_IMPLEMENTATION` read from the environment.
    pub fn from_env(flag: Option<&str>) -> Result<Ros2Middleware, MiddlewareError> {
        Self::choose(flag, std::env::var("RMW_IMPLEMENTATION").ok().as_deref())
    }
}

/// Neither middleware was asked for, and `ROS_VERSION` does not say.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MiddlewareError {
    /// `ROS_VERSION` holds something else than 1 or 2.
    #[error("ROS_VERSION={0:?} is neither 1 nor 2")]
    BadRosVersion(String),
    /// Nothing chose a middleware.
    #[error("no middleware chosen (ROS 1 or ROS 2) and ROS_VERSION is not set")]
    Unspecified,
    /// A ROS 2 middleware rbag does not speak.
    #[error("ROS 2 middleware {0:?} is neither DDS (rmw_cyclonedds_cpp, rmw_fastrtps_cpp) nor Zenoh (rmw_zenoh_cpp)")]
    UnknownRos2(String),
}

impl Middleware {
    /// The middleware asked for (`ros1`, `ros2`); with neither, `ros_version` (the
    /// `ROS_VERSION` variable a sourced ROS shell sets) decides.
    pub fn choose(ros1: bool, ros2: bool, ros_version: Option<&str>) -> Result<Middleware, MiddlewareError> {
        if ros1 {
            return Ok(Middleware::Ros1);
        }
        if ros2 {
            return Ok(Middleware::Ros2);
        }
        match ros_version.map(str::trim) {
            Some("1") => Ok(Middleware::Ros1),
            Some("2") => Ok(Middleware::Ros2),
            Some(other) => Err(MiddlewareError::BadRosVersion(other.to_string())),
            None => Err(MiddlewareError::Unspecified),
        }
    }

    /// [`Middleware::choose`] with `ROS_VERSION` read from the environment.
    pub fn from_env(ros1: bool, ros2: bool) -> Result<Middleware, MiddlewareError> {
        Self::choose(ros1, ros2, std::env::var("ROS_VERSION").ok().as_deref())
    }
}

/// Splits ROS remapping arguments (`from:=to`, `__name:=x`) from the other arguments.
pub fn split_remaps(args: &[String]) -> (Vec<String>, Vec<String>) {
    args.iter().cloned().partition(|a| a.contains(":="))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_then_ros_version() {
        assert_eq!(Middleware::choose(true, false, Some("2")), Ok(Middleware::Ros1));
        assert_eq!(Middleware::choose(false, true, None), Ok(Middleware::Ros2));
        assert_eq!(Middleware::choose(false, false, Some(" 2 ")), Ok(Middleware::Ros2));
        assert_eq!(Middleware::choose(false, false, Some("3")), Err(MiddlewareError::BadRosVersion("3".into())));
        assert_eq!(Middleware::choose(false, false, None), Err(MiddlewareError::Unspecified));
    }

    #[test]
    fn ros2_middleware_from_the_flag_then_rmw_implementation() {
        assert_eq!(Ros2Middleware::choose(None, None), Ok(Ros2Middleware::Dds));
        assert_eq!(Ros2Middleware::choose(None, Some("rmw_zenoh_cpp")), Ok(Ros2Middleware::Zenoh));
        assert_eq!(Ros2Middleware::choose(Some("dds"), Some("rmw_zenoh_cpp")), Ok(Ros2Middleware::Dds));
        assert_eq!(Ros2Middleware::choose(Some("zenoh"), None), Ok(Ros2Middleware::Zenoh));
        assert!(matches!(Ros2Middleware::choose(Some("iceoryx"), None), Err(MiddlewareError::UnknownRos2(_))));
    }
}
