//! The `/rbag/dropped` topic: the recorder's note, inside the bag, of what it lost.
//!
//! When messages were dropped (the queue overflowed) while a file was open, one message is
//! written on `/rbag/dropped` just before that file is closed. Its type is `std_msgs/String`
//! and its `data` is YAML, one `<topic>: <count>` line per topic, counting the drops since the
//! previous file was closed (so the counts of all files add up to the recording's total). A
//! file with no drops has no such message. Readers of the bag find the loss without any side
//! file.
//!
//! The message is serialised here by hand, for the encoding the recorded connections use
//! (ROS 1: `u32` little-endian length + bytes; CDR: encapsulation header, length with the
//! NUL, bytes, NUL). This builds a message of our own; it is not deserialisation of recorded
//! data, which stays untouched bytes.

use rbag_storage::ros1::keys;
use std::collections::BTreeMap;

use rbag_storage::Connection;

/// Topic of the drop report.
pub const DROPPED_TOPIC: &str = "/rbag/dropped";

/// MD5 of ROS 1 `std_msgs/String` (`string data`).
const STRING_MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";

/// The drop report's lines: `<topic>: <count>\n` per topic with drops.
pub fn drops_yaml(drops: &BTreeMap<String, u64>) -> String {
    drops.iter().filter(|(_, &n)| n > 0).map(|(t, n)| format!("{t}: {n}\n")).collect()
}

/// The connection of the report, in the encoding of the recorded data (`cdr` or ROS 1).
pub(crate) fn connection(encoding: &str) -> Connection {
    if encoding == "cdr" {
        return Connection {
            id: 0,
            topic: DROPPED_TOPIC.into(),
            message_type: "std_msgs/msg/String".into(),
            encoding: "cdr".into(),
            definition: "string data\n".into(),
            definition_encoding: "ros2msg".into(),
            metadata: BTreeMap::new(),
        };
    }
    Connection {
        id: 0,
        topic: DROPPED_TOPIC.into(),
        message_type: "std_msgs/String".into(),
        encoding: "ros1".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros1msg".into(),
        metadata: BTreeMap::from([
            (keys::CALLERID.to_string(), "/rbag".to_string()),
            (keys::LATCHING.to_string(), "0".to_string()),
            (keys::MD5SUM.to_string(), STRING_MD5.to_string()),
        ]),
    }
}

/// A `std_msgs/String` holding `text`, serialised for `encoding`.
pub(crate) fn string_message(encoding: &str, text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + 9);
    if encoding == "cdr" {
        out.extend_from_slice(&[0, 1, 0, 0]); // CDR little-endian encapsulation
        out.extend_from_slice(&(bytes.len() as u32 + 1).to_le_bytes());
        out.extend_from_slice(bytes);
        out.push(0);
    } else {
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros1_and_cdr_strings() {
        assert_eq!(string_message("ros1", "hi"), b"\x02\0\0\0hi");
        assert_eq!(string_message("cdr", "hi"), b"\0\x01\0\0\x03\0\0\0hi\0");
        let drops = BTreeMap::from([("/a".to_string(), 2), ("/b".to_string(), 0), ("/c".to_string(), 7)]);
        assert_eq!(drops_yaml(&drops), "/a: 2\n/c: 7\n");
    }
}
