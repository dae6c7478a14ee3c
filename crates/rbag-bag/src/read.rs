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

use rbag_msg::render::{self, Selection};
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

/// How a topic argument resolved against a bag's topics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// The topic, and the field path (dotted) if any.
    Topic(String, Option<String>),
    /// No topic fits.
    NoTopic,
    /// Several topics fit equally well.
    Ambiguous(Vec<String>),
}

/// Resolves a topic argument as `rostopic echo` takes it: `/imu.linear_acceleration.z`, or
/// `/imu/linear_acceleration/z` (the longest topic that is a prefix at a `/` wins; the rest is
/// the field path), and relative names (`chatter` is `/chatter`; failing that, a topic in a
/// namespace that ends with the name, such as `/camera/image_raw` for `image_raw`, when only
/// one does).
pub fn resolve_topic(arg: &str, topics: &[&str]) -> Resolved {
    let (head, tail) = match arg.find(['.', '[']) {
        Some(i) => (&arg[..i], &arg[i..]),
        None => (arg, ""),
    };
    let path_of = |rest: &str| {
        let p = format!("{rest}{tail}").replace('/', ".");
        let p = p.trim_start_matches('.');
        (!p.is_empty()).then(|| p.to_string())
    };
    let absolute = head.starts_with('/');
    let q = if absolute { head.to_string() } else { format!("/{head}") };
    // A service name, as `info` lists services: its events, which carry request and response.
    let events = format!("{}/_service_event", q.trim_end_matches('/'));
    if topics.contains(&events.as_str()) {
        return Resolved::Topic(events, path_of(""));
    }
    let fits = |t: &str| t.len() > 1 && q.strip_prefix(t).is_some_and(|r| r.is_empty() || r.starts_with('/'));
    if let Some(t) = topics.iter().filter(|t| fits(t)).max_by_key(|t| t.len()) {
        return Resolved::Topic(t.to_string(), path_of(&q[t.len()..]));
    }
    if absolute || head.is_empty() {
        return Resolved::NoTopic;
    }
    // A relative name in a namespace: topics that end with the name or a leading part of it.
    let prefixes: Vec<&str> =
        head.match_indices('/').map(|(i, _)| &head[..i]).chain([head]).filter(|p| !p.is_empty()).collect();
    let mut best: (usize, BTreeSet<&str>) = (0, BTreeSet::new());
    for t in topics {
        for p in &prefixes {
            if t.strip_suffix(p).is_some_and(|ns| ns.ends_with('/')) {
                if p.len() > best.0 {
                    best = (p.len(), BTreeSet::new());
                }
                if p.len() == best.0 {
                    best.1.insert(t);
                }
            }
        }
    }
    match best.1.len() {
        0 => Resolved::NoTopic,
        1 => {
            let t = best.1.into_iter().next().unwrap_or_default();
            Resolved::Topic(t.to_string(), path_of(&head[best.0..]))
        }
        _ => Resolved::Ambiguous(best.1.into_iter().map(str::to_string).collect()),
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
    /// A message [`peek_time`](DecodedReader::peek_time) read ahead.
    pending: Option<Message>,
    finished: bool,
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
    /// A path with a slice (`[*]`, `[1:3]`) selects several values: an error here, see
    /// [`select`](Self::select).
    pub fn selected(&self) -> Result<Option<ValueRef<'a>>, PathError> {
        match self.select()? {
            Selection::One(v) => Ok(Some(v)),
            Selection::OutOfRange(_) => Ok(None),
            Selection::Many(_) => Err(PathError::Syntax {
                path: self.path.unwrap_or_default().into(),
                reason: "a slice selects several values".into(),
            }),
        }
    }

    /// What [`path`](Self::path) selects (the whole message without one): one value, the
    /// values of a slice, or the index past an array's end and that array's length.
    pub fn select(&self) -> Result<Selection<'a>, PathError> {
        match self.path {
            Some(p) => render::select_ref(self.message, p),
            None => Ok(Selection::One(ValueRef::Message(self.message))),
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
        let known: Vec<&str> =
            connections.iter().map(|c| c.topic.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
        for t in &spec.topics {
            match resolve_topic(t, &known) {
                Resolved::Topic(topic, path) => {
                    paths.insert(topic, path);
                }
                Resolved::Ambiguous(topics) => {
                    return Err(Error::AmbiguousTopic { path: bag.path().into(), arg: t.clone(), topics })
                }
                Resolved::NoTopic => {
                    let topic = split_topic(t).0;
                    bag.check_topics(&[topic])?;
                    return Err(Error::NoTopic {
                        path: bag.path().into(),
                        topic: topic.into(),
                        known: known.join(", "),
                    });
                }
            }
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
        Ok(DecodedReader {
            bag,
            decoders,
            schemas,
            paths,
            skipped,
            topics,
            iter: None,
            filter,
            current: None,
            pending: None,
            finished: false,
        })
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

    /// The next raw message of a topic read, not yet decoded.
    fn pull(&mut self) -> Result<Option<Message>> {
        if self.finished || (self.topics.is_empty() && !self.paths.is_empty()) {
            return Ok(None);
        }
        let bag = self.bag;
        if self.iter.is_none() {
            self.iter = Some(bag.messages(&self.filter)?);
        }
        let iter = self.iter.as_mut().expect("set above");
        loop {
            let Some(m) = iter.next() else {
                self.finished = true;
                return Ok(None);
            };
            let m = m?;
            if self.schemas.contains_key(&m.connection) && bag.connection(m.connection).is_some() {
                return Ok(Some(m));
            }
        }
    }

    /// The log time of the message [`next_message`](Self::next_message) gives next, without
    /// decoding it; `None` at the end. For merging the messages of several bags in time order.
    pub fn peek_time(&mut self) -> Result<Option<u64>> {
        if self.pending.is_none() {
            self.pending = self.pull()?;
        }
        Ok(self.pending.as_ref().map(|m| m.log_time))
    }

    /// The next message, decoded; `None` at the end.
    pub fn next_message(&mut self) -> Result<Option<DecodedMessage<'_>>> {
        let bag = self.bag;
        let msg = match self.pending.take() {
            Some(m) => m,
            None => match self.pull()? {
                Some(m) => m,
                None => return Ok(None),
            },
        };
        let Some(c) = bag.connection(msg.connection) else { return Ok(None) };
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
    fn topic_names_resolve_against_the_bag() {
        use super::{resolve_topic, Resolved};
        let topics = ["/imu", "/imu/raw", "/camera/image_raw", "/chatter", "/a/x", "/b/x"];
        let t = |t: &str, p: Option<&str>| Resolved::Topic(t.into(), p.map(str::to_string));
        assert_eq!(resolve_topic("/imu/linear_acceleration/z", &topics), t("/imu", Some("linear_acceleration.z")));
        assert_eq!(resolve_topic("/imu.linear_acceleration.z", &topics), t("/imu", Some("linear_acceleration.z")));
        assert_eq!(resolve_topic("/imu/raw/header/stamp", &topics), t("/imu/raw", Some("header.stamp")));
        assert_eq!(resolve_topic("/imu/raw", &topics), t("/imu/raw", None));
        assert_eq!(resolve_topic("chatter", &topics), t("/chatter", None));
        assert_eq!(resolve_topic("chatter/data", &topics), t("/chatter", Some("data")));
        assert_eq!(resolve_topic("image_raw/height", &topics), t("/camera/image_raw", Some("height")));
        assert_eq!(
            resolve_topic("/tf/transforms[0]/child_frame_id", &["/tf"]),
            t("/tf", Some("transforms[0].child_frame_id"))
        );
        assert_eq!(resolve_topic("x", &topics), Resolved::Ambiguous(vec!["/a/x".into(), "/b/x".into()]));
        assert_eq!(resolve_topic("/imux", &topics), Resolved::NoTopic);
        assert_eq!(resolve_topic("/camera", &topics), Resolved::NoTopic);
    }

    #[test]
    fn topic_and_field_path() {
        assert_eq!(split_topic("/imu.linear_acceleration.x"), ("/imu", Some("linear_acceleration.x")));
        assert_eq!(split_topic("/tf[0]"), ("/tf", Some("[0]")));
        assert_eq!(split_topic("/a/b"), ("/a/b", None));
    }
}
