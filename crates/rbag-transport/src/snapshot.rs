//! Snapshot recording: keep only the latest messages in memory, write them out on demand.
//!
//! Like `rosbag record --snapshot` (a byte-bounded buffer written to a new bag on each
//! trigger, then emptied) with the time bound of `rosbag_snapshot`: messages older than the
//! newest by more than the duration, or past the byte bound, are forgotten, oldest first. What
//! triggers a snapshot (a signal, a topic, a key) is the caller's business.
//!
//! The newest messages of latched (ROS 1) and transient-local (ROS 2) connections are kept
//! beside the ring, outside its bounds, and written first in every snapshot: a `/tf_static`
//! published once at start-up would otherwise leave the ring as soon as it wraps, and every
//! snapshot after that would be unusable (ros2/rosbag2#1886).

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use rbag_storage::Connection;

use crate::key::ConnKey;
use crate::record::{RecordError, RecordOptions, RecordReport, Recorder};

/// A kept latched message: log time, data, sequence number.
type Kept = (u64, Bytes, u64);

/// A ring of raw messages bounded by duration and/or payload bytes.
#[derive(Debug, Default)]
pub struct SnapshotBuffer {
    max_duration_ns: Option<u64>,
    max_bytes: Option<u64>,
    conns: BTreeMap<ConnKey, Connection>,
    next_key: u32,
    /// Messages, oldest first, with their sequence number.
    ring: VecDeque<(ConnKey, u64, Bytes, u64)>,
    bytes: u64,
    newest_ns: u64,
    /// Per latched connection: its depth and newest messages (time, data, sequence number).
    latched: BTreeMap<ConnKey, (usize, VecDeque<Kept>)>,
    next_seq: u64,
}

impl SnapshotBuffer {
    /// A buffer keeping messages within `max_duration_ns` of the newest and at most
    /// `max_bytes` of payload (`None`: no such bound).
    pub fn new(max_duration_ns: Option<u64>, max_bytes: Option<u64>) -> Self {
        SnapshotBuffer { max_duration_ns, max_bytes, ..Self::default() }
    }

    /// Adds a connection under the next free key.
    pub fn add_connection(&mut self, conn: Connection) -> ConnKey {
        let key = ConnKey(self.next_key);
        self.add_connection_with_key(key, conn);
        key
    }

    /// Adds (or replaces) a connection under a key chosen elsewhere (the queue's).
    pub fn add_connection_with_key(&mut self, key: ConnKey, conn: Connection) {
        match conn.latched_depth() {
            Some(depth) => {
                self.latched.entry(key).or_insert_with(|| (depth, VecDeque::new())).0 = depth;
            }
            None => {
                self.latched.remove(&key);
            }
        }
        self.conns.insert(key, conn);
        self.next_key = self.next_key.max(key.0.saturating_add(1));
    }

    /// Keeps a message; returns how many old ones were forgotten to respect the bounds (the
    /// new one too, when it alone is over the byte bound).
    pub fn push(&mut self, key: ConnKey, log_time_ns: u64, data: Bytes) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        if let Some((depth, kept)) = self.latched.get_mut(&key) {
            if kept.len() == *depth {
                kept.pop_front();
            }
            kept.push_back((log_time_ns, data.clone(), seq));
        }
        self.bytes += data.len() as u64;
        self.newest_ns = self.newest_ns.max(log_time_ns);
        self.ring.push_back((key, log_time_ns, data, seq));
        let mut evicted = 0;
        while let Some((_, t, d, _)) = self.ring.front() {
            let too_old = self.max_duration_ns.is_some_and(|max| self.newest_ns.saturating_sub(*t) > max);
            let too_big = self.max_bytes.is_some_and(|max| self.bytes > max);
            if !(too_old || too_big) {
                break;
            }
            self.bytes -= d.len() as u64;
            self.ring.pop_front();
            evicted += 1;
        }
        evicted
    }

    /// Messages held.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether no message is held.
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Payload bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Hands over a snapshot and empties the ring (for callers that write it into a bag of
    /// their own, as `ros2 bag record --snapshot-mode` does): first the kept messages of
    /// latched connections that the ring no longer holds, then the ring, oldest first. The
    /// latched messages stay kept for the next snapshot.
    pub fn take(&mut self) -> Vec<(ConnKey, u64, Bytes)> {
        let out = self.snapshot();
        self.clear();
        out
    }

    /// The messages a snapshot writes, in order (see [`SnapshotBuffer::take`]).
    fn snapshot(&self) -> Vec<(ConnKey, u64, Bytes)> {
        let oldest_in_ring = self.ring.front().map_or(u64::MAX, |m| m.3);
        let mut head: Vec<(u64, ConnKey, u64, Bytes)> = self
            .latched
            .iter()
            .flat_map(|(key, (_, kept))| kept.iter().map(move |(t, d, seq)| (*seq, *key, *t, d.clone())))
            .filter(|m| m.0 < oldest_in_ring)
            .collect();
        head.sort_by_key(|m| m.0);
        let ring = self.ring.iter().map(|(k, t, d, _)| (*k, *t, d.clone()));
        head.into_iter().map(|(_, k, t, d)| (k, t, d)).chain(ring).collect()
    }

    /// Latched messages held outside the ring's bounds, for every latched connection.
    pub fn latched_len(&self) -> usize {
        self.latched.values().map(|(_, kept)| kept.len()).sum()
    }

    /// Forgets every message in the ring (connections, and the newest messages of latched
    /// ones, stay known).
    pub fn clear(&mut self) {
        self.ring.clear();
        self.bytes = 0;
        self.newest_ns = 0;
    }

    /// Writes the buffered messages, with their connections, to a fresh bag named by `opts`
    /// (opened at `now_ns`), then empties the buffer. The buffer is kept when writing fails.
    pub fn write_to(&mut self, opts: RecordOptions, now_ns: u64) -> Result<RecordReport, RecordError> {
        let mut rec = Recorder::create(opts, now_ns)?;
        let mut added = BTreeMap::new();
        for (key, time, data) in &self.snapshot() {
            if !added.contains_key(key) {
                let conn = self.conns.get(key).ok_or(RecordError::UnknownConnection { key: *key })?;
                rec.add_connection_with_key(*key, conn.clone())?;
                added.insert(*key, ());
            }
            rec.write(*key, *time, data)?;
        }
        let report = rec.finish()?;
        self.clear();
        Ok(report)
    }
}
