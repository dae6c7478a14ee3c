//! Reading a bag decoded: chosen topics, each with an optional field path
//! (`/imu.linear_acceleration.x`, `/tf.transforms[0].child_frame_id`), in a time window. Every
//! selected type is compiled before the first message is read, so a missing type fails before
//! any output; topics that cannot be decoded are skipped with a reason when none were chosen.
//!
//! ```no_run
//! use rbag_bag::read::{DecodedReader, ReadSpec};
//! use rbag_bag::Bag;
//!
//! let bag = Bag::open("run.bag")?;
//! let types = rbag_bag::types::sources_for(&bag.storage_info()?.properties, &[])?;
//! let spec = ReadSpec { topics: vec!["/imu.linear_acceleration.z".into()], types, ..ReadSpec::default() };
//! let mut reader = DecodedReader::new(&bag, spec)?;
//! while let Some(m) = reader.next_message()? {
//!     if let Some(z) = m.selected()?.and_then(|v| v.as_f64()) {
//!         println!("{} {z}", m.log_time);
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rbag_msg::render;
use rbag_storage::{Connection, Filter, Message, MessageIter};

use crate::decode::{unshare, DecodeError, Decoders, MessageRef, PathError, Schema, TypeSources, ValueRef};
use crate::{Bag, Error, Result};

/// What to read.
#[derive(Default)]
pub struct ReadSpec {
    /// Topics, each optionally followed by a field path; every decodable topic when empty.
    pub topics: Vec<String>,
    /// Only messages at or after this log time (ns).
    pub start: Option<u64>,
    /// Only messages before this log time (ns).
    pub end: Option<u64>,
    /// Where types the bag lacks come from.
    pub types: TypeSources,
    /// Decode each topic's first message before reading, so that [`DecodedReader::schemas`]
    /// are final (a bag's definition that does not fit its messages is replaced by the one from
    /// `types`): what a table header needs.
    pub settle: bool,
}

/// A topic left out because its messages cannot be decoded.
#[derive(Debug)]
pub struct SkippedTopic {
    /// The topic.
    pub topic: String,
    /// Why, naming the type or connection.
    pub reason: DecodeError,
}

/// `/imu.linear_acceleration.x` → (`/imu`, `linear_acceleration.x`). Topic names hold no `.`.
pub fn split_topic(arg: &str) -> (&str, Option<&str>) {
    match arg.find(['.', '[']) {
        Some(i) => (&arg[..i], Some(arg[i..].trim_start_matches('.'))),
        None => (arg, None),
    }
}

/// Decoded messages of a bag, one at a time (each borrows the reader until the next).
pub struct DecodedReader<'b> {
    bag: &'b Bag,
    decoders: Decoders,
    /// Per connection read: its schema as compiled (or settled).
    schemas: BTreeMap<u32, Arc<Schema>>,
    /// Per selected topic, its field path.
    paths: BTreeMap<String, Option<String>>,
    skipped: Vec<SkippedTopic>,
    topics: Vec<String>,
    iter: Option<MessageIter<'b>>,
    filter: Filter,
    current: Option<Message>,
}

/// One decoded message.
pub struct DecodedMessage<'a> {
    /// Its connection.
    pub connection: &'a Connection,
    /// Log time, ns since the epoch.
    pub log_time: u64,
    /// Publish time (ROS 1 bags repeat the log time).
    pub publish_time: u64,
    /// The message.
    pub message: MessageRef<'a>,
    /// The field path chosen for its topic, if any.
    pub path: Option<&'a str>,
}

impl<'a> DecodedMessage<'a> {
    /// The value at [`path`](Self::path) (the whole message without one); `None` when an index
    /// in the path is past this message's array.
    pub fn selected(&self) -> Result<Option<ValueRef<'a>>, PathError> {
        match self.path {
            Some(p) => self.message.path(p),
            None => Ok(Some(ValueRef::Message(self.message))),
        }
    }
}

impl<'b> DecodedReader<'b> {
    /// Compiles every selected topic's type. A chosen topic that the bag lacks, cannot decode,
    /// or whose field path does not exist is an error; without chosen topics, undecodable ones
    /// (and messages on connections the bag never declares) are [`skipped`](Self::skipped).
    pub fn new(bag: &'b Bag, spec: ReadSpec) -> Result<Self> {
        let connections = bag.connections();
        let mut paths: BTreeMap<String, Option<String>> = BTreeMap::new();
        for t in &spec.topics {
            let (topic, path) = split_topic(t);
            bag.check_topics(&[topic])?;
            paths.insert(topic.to_string(), path.map(str::to_string));
        }
        let explicit = !paths.is_empty();
        let undeclared = bag.storage_info()?.undeclared;
        let mut decoders = Decoders::new(spec.types);
        let mut schemas = BTreeMap::new();
        let mut skipped = Vec::new();
        for c in connections.iter().filter(|c| !explicit || paths.contains_key(&c.topic)) {
            // A lenient reader's stand-in for an undeclared connection: no type to decode with.
            if let Some(&n) = undeclared.get(&c.id) {
                let reason = format!("{n} message(s) on connection {}, which the bag never declares", c.id);
                let reason = DecodeError::Unconvertible { topic: c.topic.clone(), reason };
                skipped.push(SkippedTopic { topic: c.topic.clone(), reason });
                continue;
            }
            match decoders.schema(c) {
                Ok((schema, _)) => {
                    if let Some(Some(p)) = paths.get(&c.topic) {
                        render::check_path(&schema, p).map_err(|source| Error::Path {
                            path: bag.path().into(),
                            topic: c.topic.clone(),
                            source: Box::new(source),
                        })?;
                    }
                    schemas.insert(c.id, schema);
                }
                Err(e) if explicit => return Err(Error::decode_in(bag.path(), unshare(&e))),
                Err(e) => skipped.push(SkippedTopic { topic: c.topic.clone(), reason: unshare(&e) }),
            }
        }
        if spec.settle {
            for (id, schema) in schemas.iter_mut() {
                let Some(c) = bag.connection(*id) else { continue };
                if let Some(first) = crate::decode::first_message(bag.reader(), c)? {
                    decoders.decode(c, 0, &first).map_err(|e| Error::decode_in(bag.path(), e))?;
                    *schema = decoders.schema(c).map_err(|e| Error::decode_in(bag.path(), unshare(&e)))?.0;
                }
            }
        }
        let topics: Vec<String> = schemas
            .keys()
            .filter_map(|id| bag.connection(*id))
            .map(|c| c.topic.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // Without a selection, every topic but the undecodable ones is read, so that a message
        // on a connection the bag never declares fails the read instead of going unseen.
        let filter = if explicit {
            Filter { topics: topics.clone(), start: spec.start, end: spec.end, ..Filter::default() }
        } else {
            let exclude_topics = skipped.iter().map(|s| s.topic.clone()).filter(|t| !topics.contains(t)).collect();
            Filter { exclude_topics, start: spec.start, end: spec.end, ..Filter::default() }
        };
        Ok(DecodedReader { bag, decoders, schemas, paths, skipped, topics, iter: None, filter, current: None })
    }

    /// The topics that will be read, sorted.
    pub fn topics(&self) -> &[String] {
        &self.topics
    }

    /// Topics left out, and why.
    pub fn skipped(&self) -> &[SkippedTopic] {
        &self.skipped
    }

    /// Each connection read, with its compiled schema and its topic's field path.
    pub fn schemas(&self) -> impl Iterator<Item = (&'b Connection, &Arc<Schema>, Option<&str>)> {
        let bag = self.bag;
        self.schemas.iter().filter_map(move |(id, s)| {
            let c = bag.connection(*id)?;
            Some((c, s, self.paths.get(&c.topic).and_then(|p| p.as_deref())))
        })
    }

    /// Warnings about definitions replaced so far (a bag's definition that did not fit its
    /// messages), emptied by the call.
    pub fn take_warnings(&mut self) -> Vec<String> {
        self.decoders.take_warnings()
    }

    /// The next message, decoded; `None` at the end.
    pub fn next_message(&mut self) -> Result<Option<DecodedMessage<'_>>> {
        if self.topics.is_empty() && !self.paths.is_empty() {
            return Ok(None);
        }
        let bag = self.bag;
        if self.iter.is_none() {
            self.iter = Some(bag.messages(&self.filter)?);
        }
        let iter = self.iter.as_mut().expect("set above");
        let (msg, c) = loop {
            let Some(m) = iter.next() else { return Ok(None) };
            let m = m?;
            if !self.schemas.contains_key(&m.connection) {
                continue;
            }
            if let Some(c) = bag.connection(m.connection) {
                break (m, c);
            }
        };
        let current = self.current.insert(msg);
        let message =
            self.decoders.view(c, current.log_time, &current.data).map_err(|e| Error::decode_in(bag.path(), e))?;
        Ok(Some(DecodedMessage {
            connection: c,
            log_time: current.log_time,
            publish_time: current.publish_time,
            message,
            path: self.paths.get(&c.topic).and_then(|p| p.as_deref()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::split_topic;

    #[test]
    fn topic_and_field_path() {
        assert_eq!(split_topic("/imu.linear_acceleration.x"), ("/imu", Some("linear_acceleration.x")));
        assert_eq!(split_topic("/tf[0]"), ("/tf", Some("[0]")));
        assert_eq!(split_topic("/a/b"), ("/a/b", None));
    }
}
