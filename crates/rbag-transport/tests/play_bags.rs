//! BagSource: real bags merged in time order, with one connection id space.

use std::path::Path;
use std::sync::mpsc::channel;

use rbag_storage::{Connection, Format, Message, WriteOptions};
use rbag_transport::clock::{Clock, VirtualClock};
use rbag_transport::play::{BagSource, PlayError, PlayOptions, PlaySink, PlaySource, Player};

const S: u64 = 1_000_000_000;
const BAG0: u64 = 1_600_000_000 * S;

fn conn(topic: &str) -> Connection {
    let mut c = Connection {
        topic: topic.into(),
        message_type: "std_msgs/String".into(),
        encoding: "ros1".into(),
        definition: "string data\n".into(),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    };
    c.metadata.insert("md5sum".into(), "992ce8a1687cec8c8bd883ec73ca41d1".into());
    c.metadata.insert("callerid".into(), "/talker".into());
    c
}

/// Writes a ROS 1 bag with `(topic, seconds after BAG0, text)` messages.
fn write_bag(path: &Path, messages: &[(&str, u64, &str)]) {
    let mut w = rbag_storage::create(path, Format::Ros1, &WriteOptions::default()).unwrap();
    let mut ids = std::collections::BTreeMap::new();
    for (topic, secs, text) in messages {
        let id = *ids.entry(*topic).or_insert_with(|| w.add_connection(&conn(topic)).unwrap());
        let mut data = (text.len() as u32).to_le_bytes().to_vec();
        data.extend_from_slice(text.as_bytes());
        w.write(id, BAG0 + secs * S, BAG0 + secs * S, &data).unwrap();
    }
    w.finish().unwrap();
}

/// Two bags: /a and /x in the first, /b in the second, with a tie at 3 s.
fn two_bags(dir: &Path) -> Vec<Box<dyn rbag_storage::StorageReader>> {
    let a = dir.join("a.bag");
    let b = dir.join("b.bag");
    write_bag(&a, &[("/a", 1, "a1"), ("/a", 3, "a3"), ("/x", 4, "x4"), ("/a", 5, "a5")]);
    write_bag(&b, &[("/b", 0, "b0"), ("/b", 3, "b3"), ("/b", 6, "b6")]);
    vec![rbag_storage::open(&a).unwrap(), rbag_storage::open(&b).unwrap()]
}

/// Records (clock seconds, topic, text), looking topics up through the source's connections.
struct Rec<'c> {
    clock: &'c VirtualClock,
    connections: Vec<Connection>,
    sent: Vec<(u64, String, String)>,
}

impl PlaySink for Rec<'_> {
    fn publish(&mut self, m: &Message) -> Result<(), PlayError> {
        let topic = self.connections.iter().find(|c| c.id == m.connection).unwrap().topic.clone();
        let text = String::from_utf8(m.data[4..].to_vec()).unwrap();
        self.sent.push((self.clock.now() / S, topic, text));
        Ok(())
    }
}

fn play(source: &mut BagSource, options: PlayOptions) -> Vec<(u64, String, String)> {
    let clock = VirtualClock::new(0);
    let (_tx, rx) = channel();
    let mut sink = Rec { clock: &clock, connections: source.connections().to_vec(), sent: Vec::new() };
    Player::new(options).unwrap().run(source, &mut sink, &clock, &rx).unwrap();
    sink.sent
}

fn row(at: u64, topic: &str, text: &str) -> (u64, String, String) {
    (at, topic.to_string(), text.to_string())
}

#[test]
fn bags_are_merged_in_time_order_with_ties_to_the_earlier_bag() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = BagSource::new(two_bags(dir.path()), None).unwrap();
    assert_eq!(source.time_range(), Some((BAG0, BAG0 + 6 * S)));
    let topics: Vec<(u32, &str)> = source.connections().iter().map(|c| (c.id, c.topic.as_str())).collect();
    assert_eq!(topics, [(0, "/a"), (1, "/x"), (2, "/b")]);
    assert_eq!(source.origin(2), Some((1, source.readers()[1].connections()[0].id)));
    assert_eq!(source.connection(1).unwrap().metadata["md5sum"], "992ce8a1687cec8c8bd883ec73ca41d1");

    let sent = play(&mut source, PlayOptions::default());
    assert_eq!(
        sent,
        [
            row(0, "/b", "b0"),
            row(1, "/a", "a1"),
            row(3, "/a", "a3"),
            row(3, "/b", "b3"),
            row(4, "/x", "x4"),
            row(5, "/a", "a5"),
            row(6, "/b", "b6")
        ]
    );
}

#[test]
fn topic_selection_keeps_the_whole_bag_for_the_start_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = BagSource::new(two_bags(dir.path()), Some(vec!["/a".into(), "/x".into()])).unwrap();
    assert_eq!(source.connections().iter().map(|c| c.topic.as_str()).collect::<Vec<_>>(), ["/a", "/x"]);
    // The offset counts from /b's first message at 0 s; the first selected message goes out at once.
    let sent = play(&mut source, PlayOptions { start_offset_ns: 2 * S, ..PlayOptions::default() });
    assert_eq!(sent, [row(0, "/a", "a3"), row(1, "/x", "x4"), row(2, "/a", "a5")]);
}

#[test]
fn reopening_from_a_time_seeks_every_bag() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = BagSource::new(two_bags(dir.path()), None).unwrap();
    let times: Vec<u64> = source.open(BAG0 + 3 * S).unwrap().map(|m| (m.unwrap().log_time - BAG0) / S).collect();
    assert_eq!(times, [3, 3, 4, 5, 6]);
    // Open again: the same stream from the start.
    assert_eq!(source.open(0).unwrap().count(), 7);
}
