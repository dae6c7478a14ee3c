//! What ROS 1 and ROS 2 playback share: which bag connections are published and how their bytes
//! are turned into the middleware's encoding (a CDR bag plays into ROS 1, a `.bag` into ROS 2).

use std::collections::BTreeMap;

use bytes::Bytes;
use rbag_bag::decode::{first_message, Decoders};
use rbag_bag::transcode::{self, ConnectionPlan, Rewrite, Targets};
use rbag_bag::types::{self, Distro};
use rbag_storage::{Connection, Message};
use rbag_transport::play::{BagSource, PlayError};

use super::spec::{Error, Events, PlayEvent, UserTypes};

/// One bag connection to publish: the connection as the middleware sees it, and the rewrite
/// its bytes need (`None`: they are in the target encoding already).
pub(crate) struct Planned {
    /// The global connection id in the [`BagSource`].
    pub id: u32,
    /// The connection as published (converted type and definition when rewritten).
    pub conn: Connection,
    /// How each message's bytes are rewritten, when the encodings differ.
    pub rewrite: Option<Box<Rewrite>>,
}

/// Rewrites bag messages into the target encoding, with a decoder per bag.
#[derive(Default)]
pub(crate) struct Converter {
    decoders: Vec<Decoders>,
    bag_of: BTreeMap<u32, usize>,
    buf: Vec<u8>,
}

impl Converter {
    /// The bytes to send for `msg` under `rewrite`.
    pub fn bytes(&mut self, rewrite: Option<&Rewrite>, msg: &Message) -> Result<Bytes, PlayError> {
        let Some(rw) = rewrite else { return Ok(msg.data.clone()) };
        let bag = self.bag_of.get(&msg.connection).copied().unwrap_or(0);
        rw.apply(&mut self.decoders[bag], msg.log_time, &msg.data, &mut self.buf).map_err(PlayError::sink)?;
        Ok(Bytes::copy_from_slice(&self.buf))
    }
}

/// Plans every connection of `source` for `target` encoding (`ros1` or `cdr`). `native`
/// adjusts a connection already in that encoding (ROS 1 fills in a missing MD5 sum).
/// Connections that cannot be converted are left out with a warning.
pub(crate) fn plan_all(
    source: &BagSource,
    types: &UserTypes,
    target: &str,
    native: impl Fn(&mut Connection),
    events: &Events,
) -> Result<(Converter, Vec<Planned>), Error> {
    let targets = Targets { standard: types::bundled(Distro::Humble), ..Targets::default() };
    let mut decoders = Vec::new();
    for r in source.readers() {
        decoders.push(Decoders::new(types.sources(&r.info()?.properties)));
    }
    let mut planned = Vec::new();
    let mut bag_of = BTreeMap::new();
    for c in source.connections() {
        let bag = source.origin(c.id).map_or(0, |o| o.0);
        let (conn, rewrite) = if c.encoding == target {
            let mut conn = c.clone();
            native(&mut conn);
            (conn, None)
        } else {
            match plan_one(source, c, &mut decoders[bag], &targets, target, events)? {
                Some(p) => p,
                None => continue,
            }
        };
        bag_of.insert(c.id, bag);
        planned.push(Planned { id: c.id, conn, rewrite });
    }
    Ok((Converter { decoders, bag_of, buf: Vec::new() }, planned))
}

type PlanOne = Option<(Connection, Option<Box<Rewrite>>)>;

fn plan_one(
    source: &BagSource,
    c: &Connection,
    decoders: &mut Decoders,
    targets: &Targets,
    target: &str,
    events: &Events,
) -> Result<PlanOne, Error> {
    let (bag, own) = source.origin(c.id).ok_or_else(|| Error::Plan {
        topic: c.topic.clone(),
        reason: format!("connection {} belongs to no bag", c.id),
    })?;
    let reader = &source.readers()[bag];
    let own_conn = reader.connection(own).cloned().unwrap_or_else(|| c.clone());
    let first = first_message(reader.as_ref(), &own_conn)?;
    let plan = transcode::plan(c, target, first.as_deref(), decoders, targets)
        .map_err(|e| Error::Plan { topic: c.topic.clone(), reason: e.to_string() })?;
    match plan {
        ConnectionPlan::Copy => Ok(Some((c.clone(), None))),
        ConnectionPlan::Rewrite(rw) => Ok(Some((rw.target.clone(), Some(rw)))),
        ConnectionPlan::Skip(why) => {
            events.emit(PlayEvent::Warning(format!("topic {} is not played: {why}", c.topic)));
            Ok(None)
        }
    }
}

pub(crate) use rbag_transport::now_ns;

/// The connection ids of `spec.pause_topics` among `source`'s.
pub(crate) fn pause_connections(
    source: &rbag_transport::play::BagSource,
    topics: &[String],
) -> std::collections::BTreeSet<u32> {
    source.connections().iter().filter(|c| topics.contains(&c.topic)).map(|c| c.id).collect()
}
