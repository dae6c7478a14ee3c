//! What `play --ros1` and `play --ros2` share: which bag connections are published and how
//! their bytes are turned into the middleware's encoding, and the keys thread.

use std::collections::BTreeMap;
use std::sync::mpsc::Sender;

use anyhow::{Context, Result};
use bytes::Bytes;
use rbag_bag::decode::{first_message, Decoders};
use rbag_bag::transcode::{self, ConnectionPlan, Rewrite, Targets};
use rbag_msg::store::{self, Distro};
use rbag_storage::{Connection, Message};
use rbag_transport::play::{BagSource, Control, PlayError, PlayReport};

use super::{keyboard, TypeArgs};

/// One bag connection to publish: the connection as the middleware sees it, and the rewrite
/// its bytes need (`None`: they are in the target encoding already).
pub struct Planned {
    /// The global connection id in the [`BagSource`].
    pub id: u32,
    pub conn: Connection,
    pub rewrite: Option<Box<Rewrite>>,
}

/// Rewrites bag messages into the target encoding, with a decoder per bag.
pub struct Converter {
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
pub fn plan_all(
    source: &BagSource,
    types: &TypeArgs,
    target: &str,
    native: impl Fn(&mut Connection),
) -> Result<(Converter, Vec<Planned>)> {
    let standard =
        rbag_bag::decode::TypeSources::new(store::registry(Distro::Noetic).clone(), super::store_ros2(Distro::Humble));
    let targets = Targets { standard, ..Targets::default() };
    let mut decoders = Vec::new();
    for r in source.readers() {
        decoders.push(Decoders::new(types.sources(&r.info()?.properties)?));
    }
    let mut planned = Vec::new();
    let mut bag_of = BTreeMap::new();
    for c in source.connections() {
        let bag = source.origin(c.id).map(|o| o.0).unwrap_or(0);
        let (conn, rewrite) = if c.encoding == target {
            let mut conn = c.clone();
            native(&mut conn);
            (conn, None)
        } else {
            match plan_one(source, c, &mut decoders[bag], &targets, target)? {
                Some(p) => p,
                None => continue,
            }
        };
        bag_of.insert(c.id, bag);
        planned.push(Planned { id: c.id, conn, rewrite });
    }
    Ok((Converter { decoders, bag_of, buf: Vec::new() }, planned))
}

fn plan_one(
    source: &BagSource,
    c: &Connection,
    decoders: &mut Decoders,
    targets: &Targets,
    target: &str,
) -> Result<Option<(Connection, Option<Box<Rewrite>>)>> {
    let (bag, own) = source.origin(c.id).context("connection without a bag")?;
    let reader = &source.readers()[bag];
    let own_conn = reader.connection(own).cloned().unwrap_or_else(|| c.clone());
    let first = first_message(reader.as_ref(), &own_conn)?;
    match transcode::plan(c, target, first.as_deref(), decoders, targets).map_err(anyhow::Error::msg)? {
        ConnectionPlan::Copy => Ok(Some((c.clone(), None))),
        ConnectionPlan::Rewrite(rw) => Ok(Some((rw.target.clone(), Some(rw)))),
        ConnectionPlan::Skip(why) => {
            note!("warning: topic {} is not played: {why}", c.topic);
            Ok(None)
        }
    }
}

/// Reads keys from the terminal (when stdin is one) and sends the controls `map` gives them.
/// The returned guard restores the terminal.
pub fn keys_to_controls(
    controls: Sender<Control>,
    enabled: bool,
    map: fn(keyboard::Key) -> Option<Control>,
) -> Result<Option<keyboard::RawMode>> {
    if !enabled {
        return Ok(None);
    }
    let (keys_tx, keys) = std::sync::mpsc::channel();
    let raw = keyboard::start(keys_tx);
    std::thread::Builder::new().name("keys".into()).spawn(move || {
        for k in keys {
            if let Some(c) = map(k) {
                if controls.send(c).is_err() {
                    break;
                }
            }
        }
    })?;
    Ok(raw)
}

/// What both players print at the end: the `--stats` JSON line (with `dropped` when the
/// middleware counts drops) and, unless quiet, the summary. `wall0` is the wall time at which
/// the player's clock started counting.
pub fn report(report: &PlayReport, wall0: u64, dropped: Option<u64>, stats: bool, quiet: bool) {
    if stats {
        let l = &report.lateness;
        let started_ns = wall0 + report.anchored_at.unwrap_or(0);
        let dropped = dropped.map(|d| format!("\"dropped\":{d},")).unwrap_or_default();
        note!(
            "{{\"published\":{},{dropped}\"started_wall_ns\":{started_ns},\"lateness_count\":{},\"lateness_p50_ns\":{},\"lateness_p99_ns\":{},\"lateness_max_ns\":{}}}",
            report.published, l.count, l.p50_ns, l.p99_ns, l.max_ns
        );
    }
    if !quiet {
        let loops = if report.loops > 0 { format!(", {} loop(s)", report.loops) } else { String::new() };
        note!("Done: {} message(s) published{loops}.", report.published);
    }
}
