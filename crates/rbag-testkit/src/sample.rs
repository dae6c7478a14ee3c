//! A deterministic sample of real ROS 1 messages (valid serialisations with their real
//! definitions and MD5 sums), for writer tests and the README demo.

use rbag_storage::ros1::keys;
use rbag_storage::{Connection, StorageWriter};

/// One topic of the sample.
pub struct SampleTopic {
    /// Topic name.
    pub topic: &'static str,
    /// ROS 1 message type.
    pub message_type: &'static str,
    /// The type's MD5 sum.
    pub md5sum: &'static str,
    /// The type's definition text.
    pub definition: &'static str,
    /// Period between messages, ns.
    pub period_ns: u64,
    /// Published latched (one message at the start).
    pub latching: bool,
}

/// std_msgs/String, std_msgs/Float64, geometry_msgs/Point and a latched std_msgs/String.
pub const TOPICS: &[SampleTopic] = &[
    SampleTopic {
        topic: "/chatter",
        message_type: "std_msgs/String",
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1",
        definition: "string data\n",
        period_ns: 10_000_000,
        latching: false,
    },
    SampleTopic {
        topic: "/speed",
        message_type: "std_msgs/Float64",
        md5sum: "fdb28210bfa9d7c91146260178d9a584",
        definition: "float64 data\n",
        period_ns: 20_000_000,
        latching: false,
    },
    SampleTopic {
        topic: "/point",
        message_type: "geometry_msgs/Point",
        md5sum: "4a842b65f413084dc2b10fb484ea7f17",
        definition: "# This contains the position of a point in free space\nfloat64 x\nfloat64 y\nfloat64 z\n",
        period_ns: 33_000_000,
        latching: false,
    },
    SampleTopic {
        topic: "/robot_description",
        message_type: "std_msgs/String",
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1",
        definition: "string data\n",
        period_ns: 0,
        latching: true,
    },
];

/// The connection record of a sample topic.
pub fn connection(t: &SampleTopic) -> Connection {
    let mut c = Connection {
        topic: t.topic.into(),
        message_type: t.message_type.into(),
        encoding: "ros1".into(),
        definition: t.definition.into(),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    };
    c.metadata.insert(keys::MD5SUM.into(), t.md5sum.into());
    c.metadata.insert(keys::CALLERID.into(), "/rbag_sample".into());
    if t.latching {
        c.metadata.insert(keys::LATCHING.into(), "1".into());
    }
    c
}

/// The serialised `i`-th message of topic `t`.
pub fn payload(t: &SampleTopic, i: u64) -> Vec<u8> {
    match t.message_type {
        "std_msgs/String" => {
            let s = if t.latching { "<robot name=\"sample\"/>".to_string() } else { format!("hello world {i}") };
            let mut v = (s.len() as u32).to_le_bytes().to_vec();
            v.extend_from_slice(s.as_bytes());
            v
        }
        "std_msgs/Float64" => (i as f64 * 0.25).to_le_bytes().to_vec(),
        _ => [i as f64, -(i as f64), 0.5].iter().flat_map(|f| f.to_le_bytes()).collect(),
    }
}

/// Every sample message over `duration_ns` from `start_ns`, in time order: (topic index, time,
/// payload). The latched topic has one message at the start.
pub fn messages(start_ns: u64, duration_ns: u64) -> Vec<(usize, u64, Vec<u8>)> {
    let mut out = Vec::new();
    for (k, t) in TOPICS.iter().enumerate() {
        if t.period_ns == 0 {
            out.push((k, start_ns, payload(t, 0)));
            continue;
        }
        let mut i = 0;
        while i * t.period_ns < duration_ns {
            out.push((k, start_ns + i * t.period_ns, payload(t, i)));
            i += 1;
        }
    }
    out.sort_by_key(|m| (m.1, m.0));
    out
}

/// Writes the sample into `w`; returns the messages written.
pub fn write(
    w: &mut dyn StorageWriter,
    start_ns: u64,
    duration_ns: u64,
) -> rbag_storage::Result<Vec<(usize, u64, Vec<u8>)>> {
    let ids = TOPICS.iter().map(|t| w.add_connection(&connection(t))).collect::<rbag_storage::Result<Vec<_>>>()?;
    let msgs = messages(start_ns, duration_ns);
    for (k, time, data) in &msgs {
        w.write(ids[*k], *time, *time, data)?;
    }
    Ok(msgs)
}

/// The ROS 2 sample: the same topics as [`TOPICS`] (without the latched one) as CDR with
/// rosbag2's QoS text, for rosbag2 writers.
#[path = "../../rbag-storage/tests/common/cdr.rs"]
pub mod cdr;

/// A `std_msgs/String` connection on `topic` in the encoding `format` stores natively: ROS 1
/// (`ros1`, with its MD5 sum) for ROS 1 bags, CDR for rosbag2 storages.
pub fn string_connection(format: rbag_storage::Format, topic: &str) -> Connection {
    let mut c = Connection { topic: topic.into(), definition: "string data\n".into(), ..Connection::default() };
    if format == rbag_storage::Format::Ros1 {
        c.message_type = "std_msgs/String".into();
        c.encoding = "ros1".into();
        c.definition_encoding = "ros1msg".into();
        c.metadata.insert("md5sum".into(), "992ce8a1687cec8c8bd883ec73ca41d1".into());
        c.metadata.insert("callerid".into(), "/sample".into());
    } else {
        c.message_type = "std_msgs/msg/String".into();
        c.encoding = "cdr".into();
        c.definition_encoding = "ros2msg".into();
    }
    c
}

/// A ROS 1 `std_msgs/Float64` connection on `topic` (a message is the value's 8 LE bytes).
pub fn float64_connection(topic: &str) -> Connection {
    let mut c = Connection {
        topic: topic.into(),
        message_type: "std_msgs/Float64".into(),
        encoding: "ros1".into(),
        definition: "float64 data\n".into(),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    };
    c.metadata.insert("md5sum".into(), "fdb28210bfa9d7c91146260178d9a584".into());
    c.metadata.insert("callerid".into(), "/sample".into());
    c
}
