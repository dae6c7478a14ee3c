//! The channels advertised to clients: one per distinct topic, encoding and schema of the bags,
//! so a rosbag2 bag split into files, or the same topic in several bags, is one channel.

use std::collections::HashMap;

use rbag_bag::decode::Dialect;
use rbag_bag::{Bag, Connection};

use crate::Error;

/// Where a channel's schema text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaSource {
    /// The bag's own definition (ROS 1 connection record, MCAP schema, rosbag2 definitions).
    Bag,
    /// rbag's bundled type store: the bag has no definition (a rosbag2 `.db3` before Iron).
    Bundled,
    /// Neither: advertised with an empty schema, which viewers cannot decode.
    Missing,
}

/// One advertised channel.
#[derive(Debug, Clone)]
pub struct Channel {
    /// The channel id clients subscribe to.
    pub id: u32,
    /// Topic name.
    pub topic: String,
    /// Message encoding as recorded: `ros1`, `cdr`, or what an MCAP file says.
    pub encoding: String,
    /// The message type (`std_msgs/String`, `std_msgs/msg/String`).
    pub schema_name: String,
    /// The full definition text (nested types concatenated), empty when unknown.
    pub schema: String,
    /// The dialect of `schema`: `ros1msg`, `ros2msg`, `ros2idl`, ...
    pub schema_encoding: String,
    /// Where `schema` came from.
    pub schema_source: SchemaSource,
    /// Messages on this channel, over every bag (from the index).
    pub message_count: u64,
}

/// The channels of all bags and the map from each bag's connections to them.
pub(crate) struct Catalog {
    pub channels: Vec<Channel>,
    /// Per bag: connection id -> index into `channels`.
    by_connection: Vec<HashMap<u32, usize>>,
    /// First and last log time over all bags.
    pub range: Option<(u64, u64)>,
    /// Messages over all bags.
    pub message_count: u64,
    /// What clients and the user should know (schemas that could not be found).
    pub warnings: Vec<String>,
}

impl Catalog {
    pub fn build(bags: &[Bag]) -> Result<Catalog, Error> {
        let mut channels: Vec<Channel> = Vec::new();
        let mut by_key: HashMap<(String, String, String, String, String), usize> = HashMap::new();
        let mut by_connection = Vec::with_capacity(bags.len());
        let mut range: Option<(u64, u64)> = None;
        let mut message_count = 0;
        let mut warnings = Vec::new();
        for bag in bags {
            let summary = |source| Error::Summary { path: bag.path().to_path_buf(), source };
            let stats = bag.storage_info().map_err(summary)?;
            message_count += stats.message_count;
            if let (Some(s), Some(e)) = (stats.start_ns, stats.end_ns) {
                range = Some(range.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
            }
            // The bundled store is only read for connections without a definition.
            let mut sources = None;
            let mut map = HashMap::new();
            for c in bag.connections() {
                let (schema, schema_encoding, source) = schema_of(c, || {
                    sources.get_or_insert_with(|| rbag_bag::types::sources_for(&stats.properties, &[]).ok()).clone()
                });
                if source == SchemaSource::Missing {
                    warnings.push(format!(
                        "{}: no definition of {} for {} in the bag or rbag's bundled types: advertised with an empty schema",
                        bag.path().display(),
                        if c.message_type.is_empty() { "its type" } else { &c.message_type },
                        c.topic
                    ));
                }
                let key = (
                    c.topic.clone(),
                    c.encoding.clone(),
                    c.message_type.clone(),
                    schema_encoding.clone(),
                    schema.clone(),
                );
                let count = stats.connections.get(&c.id).map_or(0, |s| s.message_count);
                let index = *by_key.entry(key).or_insert_with(|| {
                    channels.push(Channel {
                        id: channels.len() as u32 + 1,
                        topic: c.topic.clone(),
                        encoding: c.encoding.clone(),
                        schema_name: c.message_type.clone(),
                        schema,
                        schema_encoding,
                        schema_source: source,
                        message_count: 0,
                    });
                    channels.len() - 1
                });
                channels[index].message_count += count;
                map.insert(c.id, index);
            }
            by_connection.push(map);
        }
        Ok(Catalog { channels, by_connection, range, message_count, warnings })
    }

    /// The channel index of connection `connection` of bag `bag`.
    pub fn channel_of(&self, bag: usize, connection: u32) -> Option<usize> {
        self.by_connection.get(bag)?.get(&connection).copied()
    }

    /// The channel with protocol id `id`.
    pub fn by_id(&self, id: u64) -> Option<&Channel> {
        let index = usize::try_from(id).ok()?.checked_sub(1)?;
        self.channels.get(index)
    }
}

/// The schema text and its encoding for a connection: the bag's definition when it has one,
/// else the bundled store's (ROS types only), else empty.
fn schema_of(
    c: &Connection,
    sources: impl FnOnce() -> Option<rbag_bag::decode::TypeSources>,
) -> (String, String, SchemaSource) {
    let dialect = match c.encoding.as_str() {
        "ros1" => Some((Dialect::Ros1, "ros1msg")),
        "cdr" => Some((Dialect::Ros2, "ros2msg")),
        _ => None,
    };
    if !c.definition.is_empty() {
        let encoding = if !c.definition_encoding.is_empty() {
            c.definition_encoding.clone()
        } else {
            dialect.map_or_else(String::new, |(_, e)| e.to_string())
        };
        return (c.definition.clone(), encoding, SchemaSource::Bag);
    }
    let Some((dialect, encoding)) = dialect else {
        return (String::new(), c.definition_encoding.clone(), SchemaSource::Missing);
    };
    if c.message_type.is_empty() {
        return (String::new(), encoding.into(), SchemaSource::Missing);
    }
    match sources().map(|s| rbag_bag::transcode::connection_for(&c.topic, &c.message_type, dialect, &s)) {
        Some(Ok(full)) if !full.definition.is_empty() => (full.definition, encoding.into(), SchemaSource::Bundled),
        _ => (String::new(), encoding.into(), SchemaSource::Missing),
    }
}
