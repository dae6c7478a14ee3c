//! Disk usage by topic and connection (`rbag du`): the payload bytes each carries.
//!
//! By default the figures come from the index, with no payload read: SQLite3 gives exact sums
//! (`SUM(LENGTH(data))`); ROS 1 and MCAP give estimates from where each message's record
//! starts in its chunk (the next record's offset, less the record's fixed fields), which are
//! off only by records other than messages inside chunks (connection, schema and channel
//! records, where a writer puts them there), within [`ESTIMATE_ACCURACY`] of the total. A
//! storage whose index cannot tell (an MCAP file without message indexes, a rosbag2 bag in
//! MESSAGE compression mode) is read whole. `exact` always reads every message.

use std::collections::BTreeMap;

use rbag_storage::Filter;

use crate::{Bag, Result};

/// How close the index estimates of ROS 1 and MCAP bags are to the exact figures, as a share
/// of the bag's total payload bytes (measured over the test corpus; see docs/attachments.md).
pub const ESTIMATE_ACCURACY: f64 = 0.01;

/// How the figures were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Every message read and its payload size summed.
    Exact,
    /// Exact sums kept by the storage's index (SQLite3).
    IndexExact,
    /// Estimated from record offsets in the index (ROS 1, MCAP).
    IndexEstimate,
}

impl Method {
    /// Whether the figures are exact.
    pub fn is_exact(self) -> bool {
        !matches!(self, Method::IndexEstimate)
    }

    /// What the figures are, in words, for a listing's header or footer.
    pub fn describe(self) -> String {
        match self {
            Method::Exact => "exact: every message's payload read".into(),
            Method::IndexExact => "exact, from the index (no payload read)".into(),
            Method::IndexEstimate => format!(
                "estimated from the index (no payload read): within {}% of the total; --exact reads every message",
                ESTIMATE_ACCURACY * 100.0
            ),
        }
    }
}

/// One connection's share.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConnectionUsage {
    /// Its id in the bag.
    pub id: u32,
    /// Its topic.
    pub topic: String,
    /// Its message type.
    pub message_type: String,
    /// Messages on it.
    pub messages: u64,
    /// Their payload bytes.
    pub bytes: u64,
}

/// One topic's share: the sum of its connections'.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TopicUsage {
    /// The topic.
    pub topic: String,
    /// Its message type (the first connection's).
    pub message_type: String,
    /// How many connections carry it.
    pub connections: u64,
    /// Messages on it.
    pub messages: u64,
    /// Their payload bytes.
    pub bytes: u64,
}

/// What `rbag du` prints.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DuReport {
    /// How the figures were obtained.
    pub method: Method,
    /// Bytes of the bag's files on disk.
    pub file_bytes: u64,
    /// Payload bytes of every message.
    pub total_bytes: u64,
    /// Topics, largest first (then by name).
    pub topics: Vec<TopicUsage>,
    /// Connections, largest first (then by id).
    pub connections: Vec<ConnectionUsage>,
}

/// Payload bytes by topic and connection of `bag`: from the index unless `exact` (or the
/// index cannot tell), else by reading every message.
pub fn du(bag: &Bag, exact: bool) -> Result<DuReport> {
    let info = bag.storage_info()?;
    let indexed = if exact { None } else { bag.reader().indexed_sizes()? };
    let (method, bytes, counts) = match indexed {
        Some(s) => {
            let counts = info.connections.iter().map(|(&id, c)| (id, c.message_count)).collect();
            (if s.exact { Method::IndexExact } else { Method::IndexEstimate }, s.bytes, counts)
        }
        None => {
            let (mut bytes, mut counts): (BTreeMap<u32, u64>, BTreeMap<u32, u64>) = Default::default();
            for m in bag.messages(&Filter::default())? {
                let m = m?;
                *bytes.entry(m.connection).or_default() += m.data.len() as u64;
                *counts.entry(m.connection).or_default() += 1;
            }
            (Method::Exact, bytes, counts)
        }
    };
    let mut connections: Vec<ConnectionUsage> = bag
        .connections()
        .iter()
        .map(|c| ConnectionUsage {
            id: c.id,
            topic: c.topic.clone(),
            message_type: c.message_type.clone(),
            messages: counts.get(&c.id).copied().unwrap_or(0),
            bytes: bytes.get(&c.id).copied().unwrap_or(0),
        })
        .collect();
    let mut topics: Vec<TopicUsage> = Vec::new();
    for c in &connections {
        match topics.iter_mut().find(|t| t.topic == c.topic) {
            Some(t) => {
                t.connections += 1;
                t.messages += c.messages;
                t.bytes += c.bytes;
            }
            None => topics.push(TopicUsage {
                topic: c.topic.clone(),
                message_type: c.message_type.clone(),
                connections: 1,
                messages: c.messages,
                bytes: c.bytes,
            }),
        }
    }
    connections.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.id.cmp(&b.id)));
    topics.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.topic.cmp(&b.topic)));
    Ok(DuReport {
        method,
        file_bytes: info.size_bytes,
        total_bytes: connections.iter().map(|c| c.bytes).sum(),
        topics,
        connections,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Connection, Format, WriteOptions};

    /// Exact and index figures agree with what was written, for every built-in storage; the
    /// estimates stay within the stated accuracy.
    #[test]
    fn index_and_exact_agree_with_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        for (name, format) in [("a.bag", Format::Ros1), ("b.mcap", Format::Mcap), ("c.db3", Format::Sqlite3)] {
            let path = dir.path().join(name);
            let mut w = rbag_storage::create(&path, format, &WriteOptions::default()).unwrap();
            let mut want = BTreeMap::new();
            for (k, (topic, size)) in [("/big", 1000usize), ("/small", 10)].into_iter().enumerate() {
                let conn = Connection {
                    topic: topic.into(),
                    message_type: "std_msgs/msg/String".into(),
                    encoding: if format == Format::Ros1 { "ros1" } else { "cdr" }.into(),
                    definition: "string data".into(),
                    definition_encoding: if format == Format::Ros1 { "ros1msg" } else { "ros2msg" }.into(),
                    ..Connection::default()
                };
                let id = w.add_connection(&conn).unwrap();
                for i in 0..50u64 {
                    w.write(id, 1_000 + i * 10 + k as u64, 0, &vec![7u8; size + i as usize]).unwrap();
                    *want.entry(topic.to_string()).or_insert(0u64) += (size + i as usize) as u64;
                }
            }
            w.finish().unwrap();
            let bag = Bag::open(&path).unwrap();
            let exact = du(&bag, true).unwrap();
            assert_eq!(exact.method, Method::Exact);
            let got: BTreeMap<String, u64> = exact.topics.iter().map(|t| (t.topic.clone(), t.bytes)).collect();
            assert_eq!(got, want, "{name}");
            assert_eq!(exact.topics[0].topic, "/big");
            let index = du(&bag, false).unwrap();
            assert_ne!(index.method, Method::Exact, "{name}");
            for (t, e) in index.topics.iter().zip(&exact.topics) {
                assert_eq!((&t.topic, t.messages), (&e.topic, e.messages), "{name}");
                let off = t.bytes.abs_diff(e.bytes) as f64 / exact.total_bytes as f64;
                assert!(off <= ESTIMATE_ACCURACY, "{name} {}: {} vs {}", t.topic, t.bytes, e.bytes);
            }
        }
    }
}
