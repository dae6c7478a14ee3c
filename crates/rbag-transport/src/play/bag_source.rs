//! Several opened bags played as one: merged by log time (ties to the earlier bag, then file
//! order), with their connections renumbered into one id space the sink looks them up in.

use std::collections::HashMap;

use rbag_storage::{Connection, Filter, StorageReader, TimeMerge};

use super::{MessageStream, PlayError, PlaySource};

/// A [`PlaySource`] over opened bags. Message `connection` fields carry global ids: index them
/// with [`BagSource::connection`].
pub struct BagSource {
    readers: Vec<Box<dyn StorageReader>>,
    filter: Filter,
    /// Selected connections, global id = position.
    connections: Vec<Connection>,
    /// Per bag: its own connection id → global id.
    global: Vec<HashMap<u32, u32>>,
    /// Per global id: (bag index, the bag's own id).
    origin: Vec<(usize, u32)>,
    range: Option<(u64, u64)>,
}

impl BagSource {
    /// Plays `topics` (every topic when `None` or empty) of `readers`, merged.
    pub fn new(readers: Vec<Box<dyn StorageReader>>, topics: Option<Vec<String>>) -> Result<Self, PlayError> {
        Self::with_filter(readers, Filter { topics: topics.unwrap_or_default(), ..Filter::default() })
    }

    /// Plays the topics `filter` selects (its time bounds are ignored: the player sets them).
    pub fn with_filter(readers: Vec<Box<dyn StorageReader>>, filter: Filter) -> Result<Self, PlayError> {
        let filter = Filter { start: None, end: None, ..filter };
        let mut connections = Vec::new();
        let mut global = Vec::new();
        let mut origin = Vec::new();
        let mut range: Option<(u64, u64)> = None;
        for (bag, reader) in readers.iter().enumerate() {
            let mut ids = HashMap::new();
            for c in reader.connections().iter().filter(|c| filter.accepts_topic(&c.topic)) {
                let id = connections.len() as u32;
                ids.insert(c.id, id);
                origin.push((bag, c.id));
                connections.push(Connection { id, ..c.clone() });
            }
            global.push(ids);
            let info = reader.info()?;
            if let (Some(s), Some(e)) = (info.start_ns, info.end_ns) {
                range = Some(range.map_or((s, e), |(rs, re)| (rs.min(s), re.max(e))));
            }
        }
        Ok(BagSource { readers, filter, connections, global, origin, range })
    }

    /// The selected connections, ordered by global id: what a sink advertises.
    pub fn connections(&self) -> &[Connection] {
        &self.connections
    }

    /// The selected connection with global id `id`.
    pub fn connection(&self, id: u32) -> Option<&Connection> {
        self.connections.get(id as usize)
    }

    /// Which bag (index in the readers given) a global id came from, and its id there.
    pub fn origin(&self, id: u32) -> Option<(usize, u32)> {
        self.origin.get(id as usize).copied()
    }

    /// The opened bags, in the order given.
    pub fn readers(&self) -> &[Box<dyn StorageReader>] {
        &self.readers
    }
}

impl PlaySource for BagSource {
    fn time_range(&self) -> Option<(u64, u64)> {
        self.range
    }

    fn open(&mut self, from_ns: u64) -> Result<MessageStream<'_>, PlayError> {
        let filter = Filter { start: Some(from_ns), ..self.filter.clone() };
        let iters = self.readers.iter().map(|r| r.messages(&filter)).collect::<Result<Vec<_>, _>>()?;
        let global = &self.global;
        Ok(Box::new(TimeMerge::new(iters).map(move |r| {
            let (bag, mut m) = r?;
            m.connection = *global[bag]
                .get(&m.connection)
                .ok_or(PlayError::UnknownConnection { bag, connection: m.connection })?;
            Ok(m)
        })))
    }
}
