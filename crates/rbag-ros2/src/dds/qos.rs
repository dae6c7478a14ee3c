//! ROS QoS profiles ⇄ Cyclone QoS, as rmw_cyclonedds maps them.
//!
//! - keep-last depth 0 means depth 1; keep-all has no depth;
//! - a transient-local writer serves late joiners from its durability-service history, so
//!   that history gets the profile's depth (Cyclone's default of 1 would hand a late
//!   subscriber only the last message);
//! - rmw's "unspecified" (0) and "infinite" durations both mean DDS's infinity;
//! - policies a remote endpoint leaves unset read back as DDS's defaults (volatile, keep last
//!   1, automatic liveliness, infinite durations; best effort for readers, reliable for
//!   writers).

use cyclors::qos::{
    Deadline, Durability, DurabilityKind, DurabilityService, History, HistoryKind, Lifespan, Liveliness,
    LivelinessKind, Qos, Reliability, ReliabilityKind, WriterDataLifecycle,
};
use cyclors::{dds_delete_qos, dds_qos_t};
use rbag_storage::rosbag2::qos::{policy, Duration, QosProfile};

const DDS_INFINITY: i64 = i64::MAX;

/// How long one reliable write waits for slow readers before returning a timeout.
/// rmw_cyclonedds waits forever; rbag waits in slices so Ctrl-C still works
/// ([`super::RawWriter::write_waiting`]).
pub const MAX_BLOCKING_NS: i64 = 1_000_000_000;

/// Which side an endpoint is: DDS defaults differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A data reader.
    Reader,
    /// A data writer.
    Writer,
}

fn to_dds_duration(d: Duration) -> i64 {
    let ns = d.as_nanos();
    // rosbags and rosbag2 write "infinite" two ways; anything past i32::MAX seconds is one.
    if ns == 0 || ns >= DDS_INFINITY as i128 || d.sec >= i32::MAX as i64 {
        DDS_INFINITY
    } else {
        ns.clamp(0, DDS_INFINITY as i128) as i64
    }
}

fn from_dds_duration(ns: i64) -> Duration {
    if !(0..DDS_INFINITY).contains(&ns) {
        return Duration::INFINITE;
    }
    Duration { sec: ns / 1_000_000_000, nsec: (ns % 1_000_000_000) as u64 }
}

/// The Cyclone QoS for a ROS profile. `user_data` carries rmw's `typehash=…;` for peers that
/// check it.
#[allow(clippy::field_reassign_with_default)] // the policies are set one by one, with their reasons
pub fn profile_to_qos(p: &QosProfile, role: Role, user_data: Option<&str>) -> Qos {
    let depth = p.depth.clamp(1, i32::MAX as u64) as i32;
    let mut q = Qos::default();
    q.history = Some(match p.history {
        policy::KEEP_ALL => History { kind: HistoryKind::KEEP_ALL, depth: 1 },
        _ => History { kind: HistoryKind::KEEP_LAST, depth },
    });
    let reliable = match p.reliability {
        policy::RELIABLE => true,
        policy::BEST_EFFORT => false,
        // system default: what rmw_cyclonedds leaves to DDS.
        _ => role == Role::Writer,
    };
    q.reliability = Some(if reliable {
        Reliability { kind: ReliabilityKind::RELIABLE, max_blocking_time: MAX_BLOCKING_NS }
    } else {
        Reliability { kind: ReliabilityKind::BEST_EFFORT, max_blocking_time: 0 }
    });
    let latched = p.durability == policy::TRANSIENT_LOCAL;
    q.durability =
        Some(Durability { kind: if latched { DurabilityKind::TRANSIENT_LOCAL } else { DurabilityKind::VOLATILE } });
    if latched && role == Role::Writer {
        let (history_kind, history_depth) = match p.history {
            policy::KEEP_ALL => (HistoryKind::KEEP_ALL, 1),
            _ => (HistoryKind::KEEP_LAST, depth),
        };
        q.durability_service = Some(DurabilityService {
            service_cleanup_delay: 0,
            history_kind,
            history_depth,
            max_samples: -1,
            max_instances: -1,
            max_samples_per_instance: -1,
        });
    }
    let deadline = to_dds_duration(p.deadline);
    if deadline != DDS_INFINITY {
        q.deadline = Some(Deadline { period: deadline });
    }
    let lifespan = to_dds_duration(p.lifespan);
    if lifespan != DDS_INFINITY && role == Role::Writer {
        q.lifespan = Some(Lifespan { duration: lifespan });
    }
    let lease = to_dds_duration(p.liveliness_lease_duration);
    let kind = if p.liveliness == policy::MANUAL_BY_TOPIC {
        LivelinessKind::MANUAL_BY_TOPIC
    } else {
        LivelinessKind::AUTOMATIC
    };
    if lease != DDS_INFINITY || kind != LivelinessKind::AUTOMATIC {
        q.liveliness = Some(Liveliness { kind, lease_duration: lease });
    }
    if let Some(u) = user_data {
        q.user_data = Some(u.as_bytes().to_vec());
    }
    if role == Role::Writer {
        // A publisher that leaves says "no writers", not "disposed", as rmw_cyclonedds does.
        q.writer_data_lifecycle = Some(WriterDataLifecycle { autodispose_unregistered_instances: false });
    }
    q
}

/// The ROS profile of a Cyclone QoS, as `ros2 topic info -v` and rosbag2 report it.
pub fn qos_to_profile(q: &Qos, role: Role) -> QosProfile {
    let (history, depth) = match &q.history {
        Some(History { kind: HistoryKind::KEEP_ALL, .. }) => (policy::KEEP_ALL, 0),
        Some(History { depth, .. }) => (policy::KEEP_LAST, (*depth).max(0) as u64),
        None => (policy::KEEP_LAST, 1),
    };
    let reliability = match &q.reliability {
        Some(Reliability { kind: ReliabilityKind::RELIABLE, .. }) => policy::RELIABLE,
        Some(_) => policy::BEST_EFFORT,
        None if role == Role::Writer => policy::RELIABLE,
        None => policy::BEST_EFFORT,
    };
    let durability = match &q.durability {
        Some(Durability { kind: DurabilityKind::VOLATILE }) | None => policy::VOLATILE,
        Some(_) => policy::TRANSIENT_LOCAL,
    };
    let (liveliness, lease) = match &q.liveliness {
        Some(Liveliness { kind: LivelinessKind::AUTOMATIC, lease_duration }) => (policy::AUTOMATIC, *lease_duration),
        Some(Liveliness { lease_duration, .. }) => (policy::MANUAL_BY_TOPIC, *lease_duration),
        None => (policy::AUTOMATIC, DDS_INFINITY),
    };
    QosProfile {
        history,
        depth,
        reliability,
        durability,
        deadline: from_dds_duration(q.deadline.as_ref().map_or(DDS_INFINITY, |d| d.period)),
        lifespan: from_dds_duration(q.lifespan.as_ref().map_or(DDS_INFINITY, |d| d.duration)),
        liveliness,
        liveliness_lease_duration: from_dds_duration(lease),
        avoid_ros_namespace_conventions: false,
    }
}

/// A native QoS object, deleted on drop.
pub struct NativeQos(pub(crate) *mut dds_qos_t);

impl Drop for NativeQos {
    fn drop(&mut self) {
        // SAFETY: created by `to_native_qos`, deleted once.
        unsafe { dds_delete_qos(self.0) };
    }
}

/// [`profile_to_qos`] as a native object for entity creation.
pub fn to_native_qos(p: &QosProfile, role: Role, user_data: Option<&str>) -> NativeQos {
    // SAFETY: to_qos_native allocates a fresh dds_qos_t from a safe Rust value.
    NativeQos(unsafe { profile_to_qos(p, role, user_data).to_qos_native() })
}

/// Reads a native QoS (from discovery data) as a ROS profile, with its user data.
///
/// # Safety
/// `q` must be null or point to a valid `dds_qos_t` for the duration of the call.
pub unsafe fn from_native_qos(q: *const dds_qos_t, role: Role) -> (QosProfile, Option<Vec<u8>>) {
    if q.is_null() {
        return (qos_to_profile(&Qos::default(), role), None);
    }
    // SAFETY: the caller guarantees `q` is valid.
    let qos = unsafe { Qos::from_qos_native(q as *mut _) };
    (qos_to_profile(&qos, role), qos.user_data.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_survive_the_round_trip() {
        for (reliability, durability, history, depth) in [
            (policy::RELIABLE, policy::TRANSIENT_LOCAL, policy::KEEP_LAST, 7),
            (policy::BEST_EFFORT, policy::VOLATILE, policy::KEEP_LAST, 1),
            (policy::RELIABLE, policy::VOLATILE, policy::KEEP_ALL, 0),
        ] {
            let p = QosProfile {
                history,
                depth,
                reliability,
                durability,
                deadline: Duration { sec: 2, nsec: 5 },
                lifespan: Duration::INFINITE,
                liveliness: policy::AUTOMATIC,
                liveliness_lease_duration: Duration::INFINITE,
                avoid_ros_namespace_conventions: false,
            };
            let q = profile_to_qos(&p, Role::Writer, None);
            assert_eq!(qos_to_profile(&q, Role::Writer), p);
        }
    }

    #[test]
    fn latched_writers_keep_their_depth_for_late_joiners() {
        let p = QosProfile {
            history: policy::KEEP_LAST,
            depth: 5,
            reliability: policy::RELIABLE,
            durability: policy::TRANSIENT_LOCAL,
            ..QosProfile::default()
        };
        let q = profile_to_qos(&p, Role::Writer, Some("typehash=RIHS01_00;"));
        assert_eq!(q.durability_service.as_ref().map(|d| d.history_depth), Some(5));
        assert_eq!(q.user_data.as_deref(), Some(&b"typehash=RIHS01_00;"[..]));
        assert!(profile_to_qos(&p, Role::Reader, None).durability_service.is_none());
    }

    #[test]
    fn unset_policies_read_as_dds_defaults() {
        let w = qos_to_profile(&Qos::default(), Role::Writer);
        assert_eq!(
            (w.reliability, w.durability, w.history, w.depth),
            (policy::RELIABLE, policy::VOLATILE, policy::KEEP_LAST, 1)
        );
        assert_eq!(w.deadline, Duration::INFINITE);
        assert_eq!(qos_to_profile(&Qos::default(), Role::Reader).reliability, policy::BEST_EFFORT);
        // rosbags' "infinite" and rmw's unspecified both become DDS infinity.
        assert_eq!(to_dds_duration(Duration { sec: 2_147_483_647, nsec: 4_294_967_295 }), DDS_INFINITY);
        assert_eq!(to_dds_duration(Duration::default()), DDS_INFINITY);
    }
}
