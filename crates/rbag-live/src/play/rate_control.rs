//! `rosbag play --rate-control-topic`: a node downstream publishes, on a topic of its choice, a
//! message whose Header stamp says how far in bag time it has got; playback holds each message
//! until it is at most `max_delay` ahead of that stamp. Until the first such message nothing is
//! played, as in rosbag.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rbag_ros1::node::{Node, SubEvent};

use super::spec::{Error, Events, PlayEvent};

/// The latest stamp heard, shared with the subscription's link threads.
pub(crate) struct RateControl {
    stamp_ns: Arc<AtomicU64>,
    max_delay_ns: u64,
}

impl RateControl {
    /// Subscribes to `topic` (any type whose first field is a Header).
    pub fn subscribe(node: &Node, topic: &str, max_delay_ns: u64, events: &Events) -> Result<RateControl, Error> {
        let stamp_ns = Arc::new(AtomicU64::new(0));
        // Links whose type does not start with a Header: their messages are ignored.
        let bad: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());
        let stamp = stamp_ns.clone();
        let (name, events) = (topic.to_string(), events.clone());
        let handler = Arc::new(move |e: SubEvent| match e {
            SubEvent::Connected { link, header, .. } => {
                if !header_first(header.get("message_definition").unwrap_or("")) {
                    events.emit(PlayEvent::Warning(format!(
                        "rate control topic {name}: its type ({}) does not start with a Header; its messages are ignored",
                        header.get("type").unwrap_or("?")
                    )));
                    bad.lock().unwrap_or_else(|p| p.into_inner()).insert(link);
                }
            }
            SubEvent::Message { link, data, .. } => {
                if !bad.lock().unwrap_or_else(|p| p.into_inner()).contains(&link) {
                    if let Some(t) = header_stamp_ns(&data) {
                        stamp.store(t, Ordering::SeqCst);
                    }
                }
            }
            SubEvent::Closed { .. } => {}
        });
        node.subscribe(topic, "*", true, handler).map_err(|source| Error::Ros1 {
            what: format!("subscribing to the rate control topic {topic}"),
            source: Box::new(source),
        })?;
        Ok(RateControl { stamp_ns, max_delay_ns })
    }

    /// Whether the message logged at `bag_time_ns` must wait.
    pub fn hold(&self, bag_time_ns: u64) -> bool {
        bag_time_ns.saturating_sub(self.stamp_ns.load(Ordering::SeqCst)) > self.max_delay_ns
    }
}

/// Whether the first field of a ROS 1 definition is a `Header` (comments and blank lines
/// skipped), as rosbag checks.
fn header_first(definition: &str) -> bool {
    definition
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("Header ") || l.starts_with("std_msgs/Header "))
}

/// The stamp of a ROS 1 message that starts with a Header (`uint32 seq`, `time stamp`).
fn header_stamp_ns(data: &[u8]) -> Option<u64> {
    let sec = u32::from_le_bytes(data.get(4..8)?.try_into().ok()?);
    let nsec = u32::from_le_bytes(data.get(8..12)?.try_into().ok()?);
    Some(u64::from(sec) * 1_000_000_000 + u64::from(nsec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_header_first_types_count_and_stamps_need_twelve_bytes() {
        assert!(header_first("# comment\n\nHeader header\nfloat64 x\n"));
        assert!(header_first("std_msgs/Header header\n"));
        assert!(!header_first("string data\n"));
        assert!(!header_first(""));
        let mut m = 7u32.to_le_bytes().to_vec();
        m.extend_from_slice(&3u32.to_le_bytes());
        m.extend_from_slice(&9u32.to_le_bytes());
        assert_eq!(header_stamp_ns(&m), Some(3_000_000_009));
        assert_eq!(header_stamp_ns(&m[..11]), None);
    }
}
