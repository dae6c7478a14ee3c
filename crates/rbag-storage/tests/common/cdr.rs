//! The ROS 2 sample: connections and CDR messages of a few std_msgs types, with rosbag2's QoS
//! text. One file serves rbag-testkit (`sample::cdr`) and rbag-storage's own tests, which cannot
//! depend on rbag-testkit (it depends on rbag-storage).

use rbag_storage::{Connection, StorageWriter};

/// A reliable, volatile keep-last(10) publisher, as Jazzy's rosbag2 stores it.
pub const QOS: &str = "- history: keep_last\n  depth: 10\n  reliability: reliable\n  durability: volatile\n  deadline:\n    sec: 9223372036\n    nsec: 854775807\n  lifespan:\n    sec: 9223372036\n    nsec: 854775807\n  liveliness: automatic\n  liveliness_lease_duration:\n    sec: 9223372036\n    nsec: 854775807\n  avoid_ros_namespace_conventions: false";

/// (topic, type, definition, period ns).
pub const TOPICS: &[(&str, &str, &str, u64)] = &[
    ("/chatter", "std_msgs/msg/String", "string data\n", 10_000_000),
    ("/speed", "std_msgs/msg/Float64", "float64 data\n", 20_000_000),
    ("/point", "geometry_msgs/msg/Point", "float64 x\nfloat64 y\nfloat64 z\n", 33_000_000),
];

/// A CDR connection of `topic` with the sample's QoS text.
pub fn connection(topic: &str, ty: &str, definition: &str) -> Connection {
    let mut c = Connection {
        topic: topic.into(),
        message_type: ty.into(),
        encoding: "cdr".into(),
        definition: definition.into(),
        definition_encoding: "ros2msg".into(),
        ..Connection::default()
    };
    c.metadata.insert("offered_qos_profiles".into(), QOS.into());
    c
}

/// A CDR (little-endian) payload of message `i` on topic `k`.
pub fn payload(k: usize, i: u64) -> Vec<u8> {
    let mut out = vec![0, 1, 0, 0];
    match k {
        0 => {
            let s = format!("hello world {i}");
            out.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
            out.push(0);
        }
        1 => out.extend_from_slice(&(i as f64 * 0.5).to_le_bytes()),
        _ => {
            for v in [i as f64, -(i as f64), 1.5] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    out
}

/// (topic, log time, publish time, payload).
pub type Written = (String, u64, u64, Vec<u8>);

/// Writes `duration_ns` of the sample from `start_ns`, with publish time 1 ms before the log
/// time; returns (topic, log time, publish time, payload) in write order.
pub fn write(w: &mut dyn StorageWriter, start_ns: u64, duration_ns: u64) -> rbag_storage::Result<Vec<Written>> {
    let ids: Vec<u32> =
        TOPICS.iter().map(|t| w.add_connection(&connection(t.0, t.1, t.2))).collect::<Result<_, _>>()?;
    let mut events: Vec<(u64, usize, u64)> = Vec::new();
    for (k, t) in TOPICS.iter().enumerate() {
        let mut i = 0;
        while i * t.3 < duration_ns {
            events.push((start_ns + i * t.3, k, i));
            i += 1;
        }
    }
    events.sort();
    let mut written = Vec::new();
    for (time, k, i) in events {
        let data = payload(k, i);
        w.write(ids[k], time, time - 1_000_000, &data)?;
        written.push((TOPICS[k].0.to_string(), time, time - 1_000_000, data));
    }
    Ok(written)
}
