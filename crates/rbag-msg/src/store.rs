//! The bundled type store: the standard message definitions of ROS 1 noetic and ROS 2 humble,
//! iron, jazzy and kilted, embedded in the binary.
//!
//! Why: a bag does not always carry its definitions (rosbag2's SQLite files before iron have
//! none; a split or repaired file may have lost them), and writing or converting a bag needs a
//! definition for every type it writes. Standard message definitions are interface data, so the
//! store embeds them; `crates/rbag-msg/store/README.md` says where each file came from and under
//! which license. Definitions a bag carries win over the store ([`Registry::fill_from`]).
//!
//! ROS 1 noetic holds Debian 12's real `.msg` files (with comments). ROS 2 humble is written from
//! rosbags' store (fields and constants, no comments or defaults); a later ROS 2 distro is humble
//! with an overlay of the types that differ or are new in it (`scripts/gen-store.py`).

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::{Dialect, Registry, Result};

/// A ROS distribution the store has definitions for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // the distributions' own names
pub enum Distro {
    Noetic,
    Humble,
    Iron,
    Jazzy,
    Kilted,
}

impl Distro {
    /// Every distro the store has, oldest first.
    pub const ALL: [Distro; 5] = [Distro::Noetic, Distro::Humble, Distro::Iron, Distro::Jazzy, Distro::Kilted];

    /// The lower-case name (`noetic`, `humble`, …).
    pub fn name(self) -> &'static str {
        match self {
            Distro::Noetic => "noetic",
            Distro::Humble => "humble",
            Distro::Iron => "iron",
            Distro::Jazzy => "jazzy",
            Distro::Kilted => "kilted",
        }
    }

    /// ROS 1 for noetic, ROS 2 for the others.
    pub fn dialect(self) -> Dialect {
        match self {
            Distro::Noetic => Dialect::Ros1,
            _ => Dialect::Ros2,
        }
    }

    /// The embedded `(type name, .msg text)` pairs: a later ROS 2 distro's overlay follows
    /// humble's and replaces the types it names.
    fn files(self) -> impl Iterator<Item = &'static (&'static str, &'static str)> {
        let (base, overlay): (&[_], &[_]) = match self {
            Distro::Noetic => (NOETIC, &[]),
            Distro::Humble => (HUMBLE, &[]),
            Distro::Iron => (HUMBLE, IRON),
            Distro::Jazzy => (HUMBLE, JAZZY),
            Distro::Kilted => (HUMBLE, KILTED),
        };
        base.iter().chain(overlay)
    }
}

impl fmt::Display for Distro {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A distro name the store does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDistro(pub String);

impl fmt::Display for UnknownDistro {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = Distro::ALL.iter().map(|d| d.name()).collect();
        write!(f, "unknown ROS distro {:?} (known: {})", self.0, known.join(", "))
    }
}

impl std::error::Error for UnknownDistro {}

impl FromStr for Distro {
    type Err = UnknownDistro;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Distro::ALL.into_iter().find(|d| d.name().eq_ignore_ascii_case(s)).ok_or_else(|| UnknownDistro(s.to_string()))
    }
}

/// Services whose derived types bags record in every ROS 2 distro: the cancel service every
/// action has (its `CancelGoal_Event` is what `--all-actions` records on
/// `<action>/_action/cancel_goal/_service_event`). Written as the generated files are (fields
/// and constants, from ros2/rcl_interfaces' action_msgs, unchanged since humble).
const ROS2_SERVICES: &[(&str, &str)] =
    &[("action_msgs/srv/CancelGoal", include_str!("../store/ros2_humble/action_msgs/srv/CancelGoal.srv"))];

/// Parses a distro's embedded definitions into a fresh registry.
pub fn build(distro: Distro) -> Result<Registry> {
    let mut reg = Registry::new(distro.dialect());
    for (name, text) in distro.files() {
        reg.add(name, text)?;
    }
    Ok(reg)
}

/// Adds the bundled ROS 2 services (action_msgs' `CancelGoal`) and their derived types to `reg` (a
/// ROS 2 registry holding `action_msgs`), leaving any it has.
pub fn add_services(reg: &mut Registry) -> Result<()> {
    for (name, text) in ROS2_SERVICES {
        if !reg.contains(&format!("{name}_Event")) {
            reg.add_srv(name, text)?;
        }
    }
    Ok(())
}

/// The distro's definitions, parsed once and kept.
///
/// # Panics
/// If an embedded definition does not parse: the files are fixed at compile time and the tests
/// parse every distro, so that is a bug in the store, not in any input.
pub fn registry(distro: Distro) -> &'static Registry {
    static CACHE: [OnceLock<Registry>; 5] = [const { OnceLock::new() }; 5];
    CACHE[distro as usize].get_or_init(|| build(distro).unwrap_or_else(|e| panic!("bundled {distro} type store: {e}")))
}

/// The distro's type names, sorted (`pkg/Type` for noetic, `pkg/msg/Type` for ROS 2).
pub fn types(distro: Distro) -> impl Iterator<Item = &'static str> {
    registry(distro).names()
}

/// The `.msg` text of a type as the store holds it (ROS 1 with comments; ROS 2 without).
pub fn text(distro: Distro, name: &str) -> Option<&'static str> {
    let name = crate::registry::normalize(name, distro.dialect());
    distro.files().filter(|(n, _)| *n == name).last().map(|(_, text)| *text)
}

// BEGIN GENERATED by scripts/gen-store.py (do not edit by hand)
const NOETIC: &[(&str, &str)] = &[
    ("actionlib_msgs/GoalID", include_str!("../store/ros1_noetic/actionlib_msgs/msg/GoalID.msg")),
    ("actionlib_msgs/GoalStatus", include_str!("../store/ros1_noetic/actionlib_msgs/msg/GoalStatus.msg")),
    ("actionlib_msgs/GoalStatusArray", include_str!("../store/ros1_noetic/actionlib_msgs/msg/GoalStatusArray.msg")),
    ("diagnostic_msgs/DiagnosticArray", include_str!("../store/ros1_noetic/diagnostic_msgs/msg/DiagnosticArray.msg")),
    ("diagnostic_msgs/DiagnosticStatus", include_str!("../store/ros1_noetic/diagnostic_msgs/msg/DiagnosticStatus.msg")),
    ("diagnostic_msgs/KeyValue", include_str!("../store/ros1_noetic/diagnostic_msgs/msg/KeyValue.msg")),
    ("geometry_msgs/Accel", include_str!("../store/ros1_noetic/geometry_msgs/msg/Accel.msg")),
    ("geometry_msgs/AccelStamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/AccelStamped.msg")),
    (
        "geometry_msgs/AccelWithCovariance",
        include_str!("../store/ros1_noetic/geometry_msgs/msg/AccelWithCovariance.msg"),
    ),
    (
        "geometry_msgs/AccelWithCovarianceStamped",
        include_str!("../store/ros1_noetic/geometry_msgs/msg/AccelWithCovarianceStamped.msg"),
    ),
    ("geometry_msgs/Inertia", include_str!("../store/ros1_noetic/geometry_msgs/msg/Inertia.msg")),
    ("geometry_msgs/InertiaStamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/InertiaStamped.msg")),
    ("geometry_msgs/Point", include_str!("../store/ros1_noetic/geometry_msgs/msg/Point.msg")),
    ("geometry_msgs/Point32", include_str!("../store/ros1_noetic/geometry_msgs/msg/Point32.msg")),
    ("geometry_msgs/PointStamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/PointStamped.msg")),
    ("geometry_msgs/Polygon", include_str!("../store/ros1_noetic/geometry_msgs/msg/Polygon.msg")),
    ("geometry_msgs/PolygonStamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/PolygonStamped.msg")),
    ("geometry_msgs/Pose", include_str!("../store/ros1_noetic/geometry_msgs/msg/Pose.msg")),
    ("geometry_msgs/Pose2D", include_str!("../store/ros1_noetic/geometry_msgs/msg/Pose2D.msg")),
    ("geometry_msgs/PoseArray", include_str!("../store/ros1_noetic/geometry_msgs/msg/PoseArray.msg")),
    ("geometry_msgs/PoseStamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/PoseStamped.msg")),
    ("geometry_msgs/PoseWithCovariance", include_str!("../store/ros1_noetic/geometry_msgs/msg/PoseWithCovariance.msg")),
    (
        "geometry_msgs/PoseWithCovarianceStamped",
        include_str!("../store/ros1_noetic/geometry_msgs/msg/PoseWithCovarianceStamped.msg"),
    ),
    ("geometry_msgs/Quaternion", include_str!("../store/ros1_noetic/geometry_msgs/msg/Quaternion.msg")),
    ("geometry_msgs/QuaternionStamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/QuaternionStamped.msg")),
    ("geometry_msgs/Transform", include_str!("../store/ros1_noetic/geometry_msgs/msg/Transform.msg")),
    ("geometry_msgs/TransformStamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/TransformStamped.msg")),
    ("geometry_msgs/Twist", include_str!("../store/ros1_noetic/geometry_msgs/msg/Twist.msg")),
    ("geometry_msgs/TwistStamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/TwistStamped.msg")),
    (
        "geometry_msgs/TwistWithCovariance",
        include_str!("../store/ros1_noetic/geometry_msgs/msg/TwistWithCovariance.msg"),
    ),
    (
        "geometry_msgs/TwistWithCovarianceStamped",
        include_str!("../store/ros1_noetic/geometry_msgs/msg/TwistWithCovarianceStamped.msg"),
    ),
    ("geometry_msgs/Vector3", include_str!("../store/ros1_noetic/geometry_msgs/msg/Vector3.msg")),
    ("geometry_msgs/Vector3Stamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/Vector3Stamped.msg")),
    ("geometry_msgs/Wrench", include_str!("../store/ros1_noetic/geometry_msgs/msg/Wrench.msg")),
    ("geometry_msgs/WrenchStamped", include_str!("../store/ros1_noetic/geometry_msgs/msg/WrenchStamped.msg")),
    ("nav_msgs/GetMapAction", include_str!("../store/ros1_noetic/nav_msgs/msg/GetMapAction.msg")),
    ("nav_msgs/GetMapActionFeedback", include_str!("../store/ros1_noetic/nav_msgs/msg/GetMapActionFeedback.msg")),
    ("nav_msgs/GetMapActionGoal", include_str!("../store/ros1_noetic/nav_msgs/msg/GetMapActionGoal.msg")),
    ("nav_msgs/GetMapActionResult", include_str!("../store/ros1_noetic/nav_msgs/msg/GetMapActionResult.msg")),
    ("nav_msgs/GetMapFeedback", include_str!("../store/ros1_noetic/nav_msgs/msg/GetMapFeedback.msg")),
    ("nav_msgs/GetMapGoal", include_str!("../store/ros1_noetic/nav_msgs/msg/GetMapGoal.msg")),
    ("nav_msgs/GetMapResult", include_str!("../store/ros1_noetic/nav_msgs/msg/GetMapResult.msg")),
    ("nav_msgs/GridCells", include_str!("../store/ros1_noetic/nav_msgs/msg/GridCells.msg")),
    ("nav_msgs/MapMetaData", include_str!("../store/ros1_noetic/nav_msgs/msg/MapMetaData.msg")),
    ("nav_msgs/OccupancyGrid", include_str!("../store/ros1_noetic/nav_msgs/msg/OccupancyGrid.msg")),
    ("nav_msgs/Odometry", include_str!("../store/ros1_noetic/nav_msgs/msg/Odometry.msg")),
    ("nav_msgs/Path", include_str!("../store/ros1_noetic/nav_msgs/msg/Path.msg")),
    ("rosgraph_msgs/Clock", include_str!("../store/ros1_noetic/rosgraph_msgs/msg/Clock.msg")),
    ("rosgraph_msgs/Log", include_str!("../store/ros1_noetic/rosgraph_msgs/msg/Log.msg")),
    ("rosgraph_msgs/TopicStatistics", include_str!("../store/ros1_noetic/rosgraph_msgs/msg/TopicStatistics.msg")),
    ("sensor_msgs/BatteryState", include_str!("../store/ros1_noetic/sensor_msgs/msg/BatteryState.msg")),
    ("sensor_msgs/CameraInfo", include_str!("../store/ros1_noetic/sensor_msgs/msg/CameraInfo.msg")),
    ("sensor_msgs/ChannelFloat32", include_str!("../store/ros1_noetic/sensor_msgs/msg/ChannelFloat32.msg")),
    ("sensor_msgs/CompressedImage", include_str!("../store/ros1_noetic/sensor_msgs/msg/CompressedImage.msg")),
    ("sensor_msgs/FluidPressure", include_str!("../store/ros1_noetic/sensor_msgs/msg/FluidPressure.msg")),
    ("sensor_msgs/Illuminance", include_str!("../store/ros1_noetic/sensor_msgs/msg/Illuminance.msg")),
    ("sensor_msgs/Image", include_str!("../store/ros1_noetic/sensor_msgs/msg/Image.msg")),
    ("sensor_msgs/Imu", include_str!("../store/ros1_noetic/sensor_msgs/msg/Imu.msg")),
    ("sensor_msgs/JointState", include_str!("../store/ros1_noetic/sensor_msgs/msg/JointState.msg")),
    ("sensor_msgs/Joy", include_str!("../store/ros1_noetic/sensor_msgs/msg/Joy.msg")),
    ("sensor_msgs/JoyFeedback", include_str!("../store/ros1_noetic/sensor_msgs/msg/JoyFeedback.msg")),
    ("sensor_msgs/JoyFeedbackArray", include_str!("../store/ros1_noetic/sensor_msgs/msg/JoyFeedbackArray.msg")),
    ("sensor_msgs/LaserEcho", include_str!("../store/ros1_noetic/sensor_msgs/msg/LaserEcho.msg")),
    ("sensor_msgs/LaserScan", include_str!("../store/ros1_noetic/sensor_msgs/msg/LaserScan.msg")),
    ("sensor_msgs/MagneticField", include_str!("../store/ros1_noetic/sensor_msgs/msg/MagneticField.msg")),
    ("sensor_msgs/MultiDOFJointState", include_str!("../store/ros1_noetic/sensor_msgs/msg/MultiDOFJointState.msg")),
    ("sensor_msgs/MultiEchoLaserScan", include_str!("../store/ros1_noetic/sensor_msgs/msg/MultiEchoLaserScan.msg")),
    ("sensor_msgs/NavSatFix", include_str!("../store/ros1_noetic/sensor_msgs/msg/NavSatFix.msg")),
    ("sensor_msgs/NavSatStatus", include_str!("../store/ros1_noetic/sensor_msgs/msg/NavSatStatus.msg")),
    ("sensor_msgs/PointCloud", include_str!("../store/ros1_noetic/sensor_msgs/msg/PointCloud.msg")),
    ("sensor_msgs/PointCloud2", include_str!("../store/ros1_noetic/sensor_msgs/msg/PointCloud2.msg")),
    ("sensor_msgs/PointField", include_str!("../store/ros1_noetic/sensor_msgs/msg/PointField.msg")),
    ("sensor_msgs/Range", include_str!("../store/ros1_noetic/sensor_msgs/msg/Range.msg")),
    ("sensor_msgs/RegionOfInterest", include_str!("../store/ros1_noetic/sensor_msgs/msg/RegionOfInterest.msg")),
    ("sensor_msgs/RelativeHumidity", include_str!("../store/ros1_noetic/sensor_msgs/msg/RelativeHumidity.msg")),
    ("sensor_msgs/Temperature", include_str!("../store/ros1_noetic/sensor_msgs/msg/Temperature.msg")),
    ("sensor_msgs/TimeReference", include_str!("../store/ros1_noetic/sensor_msgs/msg/TimeReference.msg")),
    ("std_msgs/Bool", include_str!("../store/ros1_noetic/std_msgs/msg/Bool.msg")),
    ("std_msgs/Byte", include_str!("../store/ros1_noetic/std_msgs/msg/Byte.msg")),
    ("std_msgs/ByteMultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/ByteMultiArray.msg")),
    ("std_msgs/Char", include_str!("../store/ros1_noetic/std_msgs/msg/Char.msg")),
    ("std_msgs/ColorRGBA", include_str!("../store/ros1_noetic/std_msgs/msg/ColorRGBA.msg")),
    ("std_msgs/Duration", include_str!("../store/ros1_noetic/std_msgs/msg/Duration.msg")),
    ("std_msgs/Empty", include_str!("../store/ros1_noetic/std_msgs/msg/Empty.msg")),
    ("std_msgs/Float32", include_str!("../store/ros1_noetic/std_msgs/msg/Float32.msg")),
    ("std_msgs/Float32MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/Float32MultiArray.msg")),
    ("std_msgs/Float64", include_str!("../store/ros1_noetic/std_msgs/msg/Float64.msg")),
    ("std_msgs/Float64MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/Float64MultiArray.msg")),
    ("std_msgs/Header", include_str!("../store/ros1_noetic/std_msgs/msg/Header.msg")),
    ("std_msgs/Int16", include_str!("../store/ros1_noetic/std_msgs/msg/Int16.msg")),
    ("std_msgs/Int16MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/Int16MultiArray.msg")),
    ("std_msgs/Int32", include_str!("../store/ros1_noetic/std_msgs/msg/Int32.msg")),
    ("std_msgs/Int32MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/Int32MultiArray.msg")),
    ("std_msgs/Int64", include_str!("../store/ros1_noetic/std_msgs/msg/Int64.msg")),
    ("std_msgs/Int64MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/Int64MultiArray.msg")),
    ("std_msgs/Int8", include_str!("../store/ros1_noetic/std_msgs/msg/Int8.msg")),
    ("std_msgs/Int8MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/Int8MultiArray.msg")),
    ("std_msgs/MultiArrayDimension", include_str!("../store/ros1_noetic/std_msgs/msg/MultiArrayDimension.msg")),
    ("std_msgs/MultiArrayLayout", include_str!("../store/ros1_noetic/std_msgs/msg/MultiArrayLayout.msg")),
    ("std_msgs/String", include_str!("../store/ros1_noetic/std_msgs/msg/String.msg")),
    ("std_msgs/Time", include_str!("../store/ros1_noetic/std_msgs/msg/Time.msg")),
    ("std_msgs/UInt16", include_str!("../store/ros1_noetic/std_msgs/msg/UInt16.msg")),
    ("std_msgs/UInt16MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/UInt16MultiArray.msg")),
    ("std_msgs/UInt32", include_str!("../store/ros1_noetic/std_msgs/msg/UInt32.msg")),
    ("std_msgs/UInt32MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/UInt32MultiArray.msg")),
    ("std_msgs/UInt64", include_str!("../store/ros1_noetic/std_msgs/msg/UInt64.msg")),
    ("std_msgs/UInt64MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/UInt64MultiArray.msg")),
    ("std_msgs/UInt8", include_str!("../store/ros1_noetic/std_msgs/msg/UInt8.msg")),
    ("std_msgs/UInt8MultiArray", include_str!("../store/ros1_noetic/std_msgs/msg/UInt8MultiArray.msg")),
    ("tf2_msgs/LookupTransformAction", include_str!("../store/ros1_noetic/tf2_msgs/msg/LookupTransformAction.msg")),
    (
        "tf2_msgs/LookupTransformActionFeedback",
        include_str!("../store/ros1_noetic/tf2_msgs/msg/LookupTransformActionFeedback.msg"),
    ),
    (
        "tf2_msgs/LookupTransformActionGoal",
        include_str!("../store/ros1_noetic/tf2_msgs/msg/LookupTransformActionGoal.msg"),
    ),
    (
        "tf2_msgs/LookupTransformActionResult",
        include_str!("../store/ros1_noetic/tf2_msgs/msg/LookupTransformActionResult.msg"),
    ),
    ("tf2_msgs/LookupTransformFeedback", include_str!("../store/ros1_noetic/tf2_msgs/msg/LookupTransformFeedback.msg")),
    ("tf2_msgs/LookupTransformGoal", include_str!("../store/ros1_noetic/tf2_msgs/msg/LookupTransformGoal.msg")),
    ("tf2_msgs/LookupTransformResult", include_str!("../store/ros1_noetic/tf2_msgs/msg/LookupTransformResult.msg")),
    ("tf2_msgs/TF2Error", include_str!("../store/ros1_noetic/tf2_msgs/msg/TF2Error.msg")),
    ("tf2_msgs/TFMessage", include_str!("../store/ros1_noetic/tf2_msgs/msg/TFMessage.msg")),
    ("visualization_msgs/ImageMarker", include_str!("../store/ros1_noetic/visualization_msgs/msg/ImageMarker.msg")),
    (
        "visualization_msgs/InteractiveMarker",
        include_str!("../store/ros1_noetic/visualization_msgs/msg/InteractiveMarker.msg"),
    ),
    (
        "visualization_msgs/InteractiveMarkerControl",
        include_str!("../store/ros1_noetic/visualization_msgs/msg/InteractiveMarkerControl.msg"),
    ),
    (
        "visualization_msgs/InteractiveMarkerFeedback",
        include_str!("../store/ros1_noetic/visualization_msgs/msg/InteractiveMarkerFeedback.msg"),
    ),
    (
        "visualization_msgs/InteractiveMarkerInit",
        include_str!("../store/ros1_noetic/visualization_msgs/msg/InteractiveMarkerInit.msg"),
    ),
    (
        "visualization_msgs/InteractiveMarkerPose",
        include_str!("../store/ros1_noetic/visualization_msgs/msg/InteractiveMarkerPose.msg"),
    ),
    (
        "visualization_msgs/InteractiveMarkerUpdate",
        include_str!("../store/ros1_noetic/visualization_msgs/msg/InteractiveMarkerUpdate.msg"),
    ),
    ("visualization_msgs/Marker", include_str!("../store/ros1_noetic/visualization_msgs/msg/Marker.msg")),
    ("visualization_msgs/MarkerArray", include_str!("../store/ros1_noetic/visualization_msgs/msg/MarkerArray.msg")),
    ("visualization_msgs/MenuEntry", include_str!("../store/ros1_noetic/visualization_msgs/msg/MenuEntry.msg")),
];
const HUMBLE: &[(&str, &str)] = &[
    ("action_msgs/msg/GoalInfo", include_str!("../store/ros2_humble/action_msgs/msg/GoalInfo.msg")),
    ("action_msgs/msg/GoalStatus", include_str!("../store/ros2_humble/action_msgs/msg/GoalStatus.msg")),
    ("action_msgs/msg/GoalStatusArray", include_str!("../store/ros2_humble/action_msgs/msg/GoalStatusArray.msg")),
    ("builtin_interfaces/msg/Duration", include_str!("../store/ros2_humble/builtin_interfaces/msg/Duration.msg")),
    ("builtin_interfaces/msg/Time", include_str!("../store/ros2_humble/builtin_interfaces/msg/Time.msg")),
    (
        "diagnostic_msgs/msg/DiagnosticArray",
        include_str!("../store/ros2_humble/diagnostic_msgs/msg/DiagnosticArray.msg"),
    ),
    (
        "diagnostic_msgs/msg/DiagnosticStatus",
        include_str!("../store/ros2_humble/diagnostic_msgs/msg/DiagnosticStatus.msg"),
    ),
    ("diagnostic_msgs/msg/KeyValue", include_str!("../store/ros2_humble/diagnostic_msgs/msg/KeyValue.msg")),
    ("geometry_msgs/msg/Accel", include_str!("../store/ros2_humble/geometry_msgs/msg/Accel.msg")),
    ("geometry_msgs/msg/AccelStamped", include_str!("../store/ros2_humble/geometry_msgs/msg/AccelStamped.msg")),
    (
        "geometry_msgs/msg/AccelWithCovariance",
        include_str!("../store/ros2_humble/geometry_msgs/msg/AccelWithCovariance.msg"),
    ),
    (
        "geometry_msgs/msg/AccelWithCovarianceStamped",
        include_str!("../store/ros2_humble/geometry_msgs/msg/AccelWithCovarianceStamped.msg"),
    ),
    ("geometry_msgs/msg/Inertia", include_str!("../store/ros2_humble/geometry_msgs/msg/Inertia.msg")),
    ("geometry_msgs/msg/InertiaStamped", include_str!("../store/ros2_humble/geometry_msgs/msg/InertiaStamped.msg")),
    ("geometry_msgs/msg/Point", include_str!("../store/ros2_humble/geometry_msgs/msg/Point.msg")),
    ("geometry_msgs/msg/Point32", include_str!("../store/ros2_humble/geometry_msgs/msg/Point32.msg")),
    ("geometry_msgs/msg/PointStamped", include_str!("../store/ros2_humble/geometry_msgs/msg/PointStamped.msg")),
    ("geometry_msgs/msg/Polygon", include_str!("../store/ros2_humble/geometry_msgs/msg/Polygon.msg")),
    ("geometry_msgs/msg/PolygonStamped", include_str!("../store/ros2_humble/geometry_msgs/msg/PolygonStamped.msg")),
    ("geometry_msgs/msg/Pose", include_str!("../store/ros2_humble/geometry_msgs/msg/Pose.msg")),
    ("geometry_msgs/msg/Pose2D", include_str!("../store/ros2_humble/geometry_msgs/msg/Pose2D.msg")),
    ("geometry_msgs/msg/PoseArray", include_str!("../store/ros2_humble/geometry_msgs/msg/PoseArray.msg")),
    ("geometry_msgs/msg/PoseStamped", include_str!("../store/ros2_humble/geometry_msgs/msg/PoseStamped.msg")),
    (
        "geometry_msgs/msg/PoseWithCovariance",
        include_str!("../store/ros2_humble/geometry_msgs/msg/PoseWithCovariance.msg"),
    ),
    (
        "geometry_msgs/msg/PoseWithCovarianceStamped",
        include_str!("../store/ros2_humble/geometry_msgs/msg/PoseWithCovarianceStamped.msg"),
    ),
    ("geometry_msgs/msg/Quaternion", include_str!("../store/ros2_humble/geometry_msgs/msg/Quaternion.msg")),
    (
        "geometry_msgs/msg/QuaternionStamped",
        include_str!("../store/ros2_humble/geometry_msgs/msg/QuaternionStamped.msg"),
    ),
    ("geometry_msgs/msg/Transform", include_str!("../store/ros2_humble/geometry_msgs/msg/Transform.msg")),
    ("geometry_msgs/msg/TransformStamped", include_str!("../store/ros2_humble/geometry_msgs/msg/TransformStamped.msg")),
    ("geometry_msgs/msg/Twist", include_str!("../store/ros2_humble/geometry_msgs/msg/Twist.msg")),
    ("geometry_msgs/msg/TwistStamped", include_str!("../store/ros2_humble/geometry_msgs/msg/TwistStamped.msg")),
    (
        "geometry_msgs/msg/TwistWithCovariance",
        include_str!("../store/ros2_humble/geometry_msgs/msg/TwistWithCovariance.msg"),
    ),
    (
        "geometry_msgs/msg/TwistWithCovarianceStamped",
        include_str!("../store/ros2_humble/geometry_msgs/msg/TwistWithCovarianceStamped.msg"),
    ),
    ("geometry_msgs/msg/Vector3", include_str!("../store/ros2_humble/geometry_msgs/msg/Vector3.msg")),
    ("geometry_msgs/msg/Vector3Stamped", include_str!("../store/ros2_humble/geometry_msgs/msg/Vector3Stamped.msg")),
    ("geometry_msgs/msg/Wrench", include_str!("../store/ros2_humble/geometry_msgs/msg/Wrench.msg")),
    ("geometry_msgs/msg/WrenchStamped", include_str!("../store/ros2_humble/geometry_msgs/msg/WrenchStamped.msg")),
    ("nav_msgs/msg/GridCells", include_str!("../store/ros2_humble/nav_msgs/msg/GridCells.msg")),
    ("nav_msgs/msg/MapMetaData", include_str!("../store/ros2_humble/nav_msgs/msg/MapMetaData.msg")),
    ("nav_msgs/msg/OccupancyGrid", include_str!("../store/ros2_humble/nav_msgs/msg/OccupancyGrid.msg")),
    ("nav_msgs/msg/Odometry", include_str!("../store/ros2_humble/nav_msgs/msg/Odometry.msg")),
    ("nav_msgs/msg/Path", include_str!("../store/ros2_humble/nav_msgs/msg/Path.msg")),
    (
        "rcl_interfaces/msg/FloatingPointRange",
        include_str!("../store/ros2_humble/rcl_interfaces/msg/FloatingPointRange.msg"),
    ),
    ("rcl_interfaces/msg/IntegerRange", include_str!("../store/ros2_humble/rcl_interfaces/msg/IntegerRange.msg")),
    (
        "rcl_interfaces/msg/ListParametersResult",
        include_str!("../store/ros2_humble/rcl_interfaces/msg/ListParametersResult.msg"),
    ),
    ("rcl_interfaces/msg/Log", include_str!("../store/ros2_humble/rcl_interfaces/msg/Log.msg")),
    ("rcl_interfaces/msg/Parameter", include_str!("../store/ros2_humble/rcl_interfaces/msg/Parameter.msg")),
    (
        "rcl_interfaces/msg/ParameterDescriptor",
        include_str!("../store/ros2_humble/rcl_interfaces/msg/ParameterDescriptor.msg"),
    ),
    ("rcl_interfaces/msg/ParameterEvent", include_str!("../store/ros2_humble/rcl_interfaces/msg/ParameterEvent.msg")),
    (
        "rcl_interfaces/msg/ParameterEventDescriptors",
        include_str!("../store/ros2_humble/rcl_interfaces/msg/ParameterEventDescriptors.msg"),
    ),
    ("rcl_interfaces/msg/ParameterType", include_str!("../store/ros2_humble/rcl_interfaces/msg/ParameterType.msg")),
    ("rcl_interfaces/msg/ParameterValue", include_str!("../store/ros2_humble/rcl_interfaces/msg/ParameterValue.msg")),
    (
        "rcl_interfaces/msg/SetParametersResult",
        include_str!("../store/ros2_humble/rcl_interfaces/msg/SetParametersResult.msg"),
    ),
    (
        "rosbag2_interfaces/msg/ReadSplitEvent",
        include_str!("../store/ros2_humble/rosbag2_interfaces/msg/ReadSplitEvent.msg"),
    ),
    (
        "rosbag2_interfaces/msg/WriteSplitEvent",
        include_str!("../store/ros2_humble/rosbag2_interfaces/msg/WriteSplitEvent.msg"),
    ),
    ("rosgraph_msgs/msg/Clock", include_str!("../store/ros2_humble/rosgraph_msgs/msg/Clock.msg")),
    ("sensor_msgs/msg/BatteryState", include_str!("../store/ros2_humble/sensor_msgs/msg/BatteryState.msg")),
    ("sensor_msgs/msg/CameraInfo", include_str!("../store/ros2_humble/sensor_msgs/msg/CameraInfo.msg")),
    ("sensor_msgs/msg/ChannelFloat32", include_str!("../store/ros2_humble/sensor_msgs/msg/ChannelFloat32.msg")),
    ("sensor_msgs/msg/CompressedImage", include_str!("../store/ros2_humble/sensor_msgs/msg/CompressedImage.msg")),
    ("sensor_msgs/msg/FluidPressure", include_str!("../store/ros2_humble/sensor_msgs/msg/FluidPressure.msg")),
    ("sensor_msgs/msg/Illuminance", include_str!("../store/ros2_humble/sensor_msgs/msg/Illuminance.msg")),
    ("sensor_msgs/msg/Image", include_str!("../store/ros2_humble/sensor_msgs/msg/Image.msg")),
    ("sensor_msgs/msg/Imu", include_str!("../store/ros2_humble/sensor_msgs/msg/Imu.msg")),
    ("sensor_msgs/msg/JointState", include_str!("../store/ros2_humble/sensor_msgs/msg/JointState.msg")),
    ("sensor_msgs/msg/Joy", include_str!("../store/ros2_humble/sensor_msgs/msg/Joy.msg")),
    ("sensor_msgs/msg/JoyFeedback", include_str!("../store/ros2_humble/sensor_msgs/msg/JoyFeedback.msg")),
    ("sensor_msgs/msg/JoyFeedbackArray", include_str!("../store/ros2_humble/sensor_msgs/msg/JoyFeedbackArray.msg")),
    ("sensor_msgs/msg/LaserEcho", include_str!("../store/ros2_humble/sensor_msgs/msg/LaserEcho.msg")),
    ("sensor_msgs/msg/LaserScan", include_str!("../store/ros2_humble/sensor_msgs/msg/LaserScan.msg")),
    ("sensor_msgs/msg/MagneticField", include_str!("../store/ros2_humble/sensor_msgs/msg/MagneticField.msg")),
    ("sensor_msgs/msg/MultiDOFJointState", include_str!("../store/ros2_humble/sensor_msgs/msg/MultiDOFJointState.msg")),
    ("sensor_msgs/msg/MultiEchoLaserScan", include_str!("../store/ros2_humble/sensor_msgs/msg/MultiEchoLaserScan.msg")),
    ("sensor_msgs/msg/NavSatFix", include_str!("../store/ros2_humble/sensor_msgs/msg/NavSatFix.msg")),
    ("sensor_msgs/msg/NavSatStatus", include_str!("../store/ros2_humble/sensor_msgs/msg/NavSatStatus.msg")),
    ("sensor_msgs/msg/PointCloud", include_str!("../store/ros2_humble/sensor_msgs/msg/PointCloud.msg")),
    ("sensor_msgs/msg/PointCloud2", include_str!("../store/ros2_humble/sensor_msgs/msg/PointCloud2.msg")),
    ("sensor_msgs/msg/PointField", include_str!("../store/ros2_humble/sensor_msgs/msg/PointField.msg")),
    ("sensor_msgs/msg/Range", include_str!("../store/ros2_humble/sensor_msgs/msg/Range.msg")),
    ("sensor_msgs/msg/RegionOfInterest", include_str!("../store/ros2_humble/sensor_msgs/msg/RegionOfInterest.msg")),
    ("sensor_msgs/msg/RelativeHumidity", include_str!("../store/ros2_humble/sensor_msgs/msg/RelativeHumidity.msg")),
    ("sensor_msgs/msg/Temperature", include_str!("../store/ros2_humble/sensor_msgs/msg/Temperature.msg")),
    ("sensor_msgs/msg/TimeReference", include_str!("../store/ros2_humble/sensor_msgs/msg/TimeReference.msg")),
    ("std_msgs/msg/Bool", include_str!("../store/ros2_humble/std_msgs/msg/Bool.msg")),
    ("std_msgs/msg/Byte", include_str!("../store/ros2_humble/std_msgs/msg/Byte.msg")),
    ("std_msgs/msg/ByteMultiArray", include_str!("../store/ros2_humble/std_msgs/msg/ByteMultiArray.msg")),
    ("std_msgs/msg/Char", include_str!("../store/ros2_humble/std_msgs/msg/Char.msg")),
    ("std_msgs/msg/ColorRGBA", include_str!("../store/ros2_humble/std_msgs/msg/ColorRGBA.msg")),
    ("std_msgs/msg/Empty", include_str!("../store/ros2_humble/std_msgs/msg/Empty.msg")),
    ("std_msgs/msg/Float32", include_str!("../store/ros2_humble/std_msgs/msg/Float32.msg")),
    ("std_msgs/msg/Float32MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/Float32MultiArray.msg")),
    ("std_msgs/msg/Float64", include_str!("../store/ros2_humble/std_msgs/msg/Float64.msg")),
    ("std_msgs/msg/Float64MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/Float64MultiArray.msg")),
    ("std_msgs/msg/Header", include_str!("../store/ros2_humble/std_msgs/msg/Header.msg")),
    ("std_msgs/msg/Int16", include_str!("../store/ros2_humble/std_msgs/msg/Int16.msg")),
    ("std_msgs/msg/Int16MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/Int16MultiArray.msg")),
    ("std_msgs/msg/Int32", include_str!("../store/ros2_humble/std_msgs/msg/Int32.msg")),
    ("std_msgs/msg/Int32MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/Int32MultiArray.msg")),
    ("std_msgs/msg/Int64", include_str!("../store/ros2_humble/std_msgs/msg/Int64.msg")),
    ("std_msgs/msg/Int64MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/Int64MultiArray.msg")),
    ("std_msgs/msg/Int8", include_str!("../store/ros2_humble/std_msgs/msg/Int8.msg")),
    ("std_msgs/msg/Int8MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/Int8MultiArray.msg")),
    ("std_msgs/msg/MultiArrayDimension", include_str!("../store/ros2_humble/std_msgs/msg/MultiArrayDimension.msg")),
    ("std_msgs/msg/MultiArrayLayout", include_str!("../store/ros2_humble/std_msgs/msg/MultiArrayLayout.msg")),
    ("std_msgs/msg/String", include_str!("../store/ros2_humble/std_msgs/msg/String.msg")),
    ("std_msgs/msg/UInt16", include_str!("../store/ros2_humble/std_msgs/msg/UInt16.msg")),
    ("std_msgs/msg/UInt16MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/UInt16MultiArray.msg")),
    ("std_msgs/msg/UInt32", include_str!("../store/ros2_humble/std_msgs/msg/UInt32.msg")),
    ("std_msgs/msg/UInt32MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/UInt32MultiArray.msg")),
    ("std_msgs/msg/UInt64", include_str!("../store/ros2_humble/std_msgs/msg/UInt64.msg")),
    ("std_msgs/msg/UInt64MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/UInt64MultiArray.msg")),
    ("std_msgs/msg/UInt8", include_str!("../store/ros2_humble/std_msgs/msg/UInt8.msg")),
    ("std_msgs/msg/UInt8MultiArray", include_str!("../store/ros2_humble/std_msgs/msg/UInt8MultiArray.msg")),
    ("tf2_msgs/msg/TF2Error", include_str!("../store/ros2_humble/tf2_msgs/msg/TF2Error.msg")),
    ("tf2_msgs/msg/TFMessage", include_str!("../store/ros2_humble/tf2_msgs/msg/TFMessage.msg")),
    ("unique_identifier_msgs/msg/UUID", include_str!("../store/ros2_humble/unique_identifier_msgs/msg/UUID.msg")),
    ("visualization_msgs/msg/ImageMarker", include_str!("../store/ros2_humble/visualization_msgs/msg/ImageMarker.msg")),
    (
        "visualization_msgs/msg/InteractiveMarker",
        include_str!("../store/ros2_humble/visualization_msgs/msg/InteractiveMarker.msg"),
    ),
    (
        "visualization_msgs/msg/InteractiveMarkerControl",
        include_str!("../store/ros2_humble/visualization_msgs/msg/InteractiveMarkerControl.msg"),
    ),
    (
        "visualization_msgs/msg/InteractiveMarkerFeedback",
        include_str!("../store/ros2_humble/visualization_msgs/msg/InteractiveMarkerFeedback.msg"),
    ),
    (
        "visualization_msgs/msg/InteractiveMarkerInit",
        include_str!("../store/ros2_humble/visualization_msgs/msg/InteractiveMarkerInit.msg"),
    ),
    (
        "visualization_msgs/msg/InteractiveMarkerPose",
        include_str!("../store/ros2_humble/visualization_msgs/msg/InteractiveMarkerPose.msg"),
    ),
    (
        "visualization_msgs/msg/InteractiveMarkerUpdate",
        include_str!("../store/ros2_humble/visualization_msgs/msg/InteractiveMarkerUpdate.msg"),
    ),
    ("visualization_msgs/msg/Marker", include_str!("../store/ros2_humble/visualization_msgs/msg/Marker.msg")),
    ("visualization_msgs/msg/MarkerArray", include_str!("../store/ros2_humble/visualization_msgs/msg/MarkerArray.msg")),
    ("visualization_msgs/msg/MenuEntry", include_str!("../store/ros2_humble/visualization_msgs/msg/MenuEntry.msg")),
    ("visualization_msgs/msg/MeshFile", include_str!("../store/ros2_humble/visualization_msgs/msg/MeshFile.msg")),
    (
        "visualization_msgs/msg/UVCoordinate",
        include_str!("../store/ros2_humble/visualization_msgs/msg/UVCoordinate.msg"),
    ),
];
const IRON: &[(&str, &str)] = &[
    ("rcl_interfaces/msg/LoggerLevel", include_str!("../store/ros2_iron/rcl_interfaces/msg/LoggerLevel.msg")),
    (
        "rcl_interfaces/msg/SetLoggerLevelsResult",
        include_str!("../store/ros2_iron/rcl_interfaces/msg/SetLoggerLevelsResult.msg"),
    ),
    ("sensor_msgs/msg/BatteryState", include_str!("../store/ros2_iron/sensor_msgs/msg/BatteryState.msg")),
    ("sensor_msgs/msg/Range", include_str!("../store/ros2_iron/sensor_msgs/msg/Range.msg")),
    ("service_msgs/msg/ServiceEventInfo", include_str!("../store/ros2_iron/service_msgs/msg/ServiceEventInfo.msg")),
];
const JAZZY: &[(&str, &str)] = &[
    ("geometry_msgs/msg/PolygonInstance", include_str!("../store/ros2_jazzy/geometry_msgs/msg/PolygonInstance.msg")),
    (
        "geometry_msgs/msg/PolygonInstanceStamped",
        include_str!("../store/ros2_jazzy/geometry_msgs/msg/PolygonInstanceStamped.msg"),
    ),
    ("geometry_msgs/msg/VelocityStamped", include_str!("../store/ros2_jazzy/geometry_msgs/msg/VelocityStamped.msg")),
    ("rcl_interfaces/msg/Log", include_str!("../store/ros2_jazzy/rcl_interfaces/msg/Log.msg")),
    ("rcl_interfaces/msg/LoggerLevel", include_str!("../store/ros2_jazzy/rcl_interfaces/msg/LoggerLevel.msg")),
    (
        "rcl_interfaces/msg/SetLoggerLevelsResult",
        include_str!("../store/ros2_jazzy/rcl_interfaces/msg/SetLoggerLevelsResult.msg"),
    ),
    (
        "rosbag2_interfaces/msg/ReadSplitEvent",
        include_str!("../store/ros2_jazzy/rosbag2_interfaces/msg/ReadSplitEvent.msg"),
    ),
    (
        "rosbag2_interfaces/msg/WriteSplitEvent",
        include_str!("../store/ros2_jazzy/rosbag2_interfaces/msg/WriteSplitEvent.msg"),
    ),
    ("sensor_msgs/msg/BatteryState", include_str!("../store/ros2_jazzy/sensor_msgs/msg/BatteryState.msg")),
    ("sensor_msgs/msg/NavSatStatus", include_str!("../store/ros2_jazzy/sensor_msgs/msg/NavSatStatus.msg")),
    ("sensor_msgs/msg/Range", include_str!("../store/ros2_jazzy/sensor_msgs/msg/Range.msg")),
    ("service_msgs/msg/ServiceEventInfo", include_str!("../store/ros2_jazzy/service_msgs/msg/ServiceEventInfo.msg")),
    ("visualization_msgs/msg/Marker", include_str!("../store/ros2_jazzy/visualization_msgs/msg/Marker.msg")),
];
const KILTED: &[(&str, &str)] = &[
    ("geometry_msgs/msg/PolygonInstance", include_str!("../store/ros2_kilted/geometry_msgs/msg/PolygonInstance.msg")),
    (
        "geometry_msgs/msg/PolygonInstanceStamped",
        include_str!("../store/ros2_kilted/geometry_msgs/msg/PolygonInstanceStamped.msg"),
    ),
    ("geometry_msgs/msg/VelocityStamped", include_str!("../store/ros2_kilted/geometry_msgs/msg/VelocityStamped.msg")),
    ("nav_msgs/msg/Goals", include_str!("../store/ros2_kilted/nav_msgs/msg/Goals.msg")),
    ("rcl_interfaces/msg/Log", include_str!("../store/ros2_kilted/rcl_interfaces/msg/Log.msg")),
    ("rcl_interfaces/msg/LoggerLevel", include_str!("../store/ros2_kilted/rcl_interfaces/msg/LoggerLevel.msg")),
    (
        "rcl_interfaces/msg/SetLoggerLevelsResult",
        include_str!("../store/ros2_kilted/rcl_interfaces/msg/SetLoggerLevelsResult.msg"),
    ),
    (
        "rosbag2_interfaces/msg/ReadSplitEvent",
        include_str!("../store/ros2_kilted/rosbag2_interfaces/msg/ReadSplitEvent.msg"),
    ),
    (
        "rosbag2_interfaces/msg/WriteSplitEvent",
        include_str!("../store/ros2_kilted/rosbag2_interfaces/msg/WriteSplitEvent.msg"),
    ),
    ("sensor_msgs/msg/BatteryState", include_str!("../store/ros2_kilted/sensor_msgs/msg/BatteryState.msg")),
    ("sensor_msgs/msg/NavSatStatus", include_str!("../store/ros2_kilted/sensor_msgs/msg/NavSatStatus.msg")),
    ("sensor_msgs/msg/Range", include_str!("../store/ros2_kilted/sensor_msgs/msg/Range.msg")),
    ("service_msgs/msg/ServiceEventInfo", include_str!("../store/ros2_kilted/service_msgs/msg/ServiceEventInfo.msg")),
    ("visualization_msgs/msg/Marker", include_str!("../store/ros2_kilted/visualization_msgs/msg/Marker.msg")),
];
// END GENERATED
