//! Joining a ROS 2 graph: the DDS domain and discovery range a sourced ROS 2 shell would use.

use anyhow::{Context, Result};
use rbag_ros2::dds::Participant;

/// The participant for `ROS_DOMAIN_ID` (0 by default). `ROS_LOCALHOST_ONLY=1` or
/// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` keep discovery on this host, unless
/// `CYCLONEDDS_URI` already says how (rmw_cyclonedds gives the user's configuration precedence).
pub fn participant() -> Result<Participant> {
    let domain = match std::env::var("ROS_DOMAIN_ID") {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|d| *d <= 232)
            .with_context(|| format!("ROS_DOMAIN_ID={v:?} is not a domain id (0 to 232)"))?,
        _ => 0,
    };
    let localhost = std::env::var("ROS_LOCALHOST_ONLY").is_ok_and(|v| v.trim() == "1")
        || std::env::var("ROS_AUTOMATIC_DISCOVERY_RANGE").is_ok_and(|v| v.trim().eq_ignore_ascii_case("LOCALHOST"));
    if localhost && std::env::var_os("CYCLONEDDS_URI").is_none() {
        rbag_ros2::dds::configure_domain(domain, rbag_ros2::dds::LOCALHOST_CONFIG)?;
    }
    Ok(Participant::new(domain)?)
}
