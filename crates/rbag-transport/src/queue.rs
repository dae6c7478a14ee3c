//! The buffer between the network threads and the thread that writes the bag.
//!
//! It is bounded in **bytes** of message payload, like `rosbag record --buffsize` (256 MB by
//! default, 0 = unlimited). Producers never block: when a push takes the queue past its bound,
//! the oldest queued messages are dropped (rosbag: "rosbag record buffer exceeded. Dropping
//! oldest queued message.") and counted per connection, so the recorder can report and store
//! what was lost. A slow disk then costs the oldest data, never a stalled socket.
//!
//! Connections are announced through the queue too ([`RecordQueue::register`]), so the writer
//! learns of a connection before its first message, whichever thread it came from. Those
//! announcements take no room and are never dropped.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use rbag_storage::Connection;

use crate::key::ConnKey;

/// One entry of the queue, in arrival order.
#[derive(Debug, Clone, PartialEq)]
pub enum Queued {
    /// A new connection; its messages follow.
    Connection {
        /// The key its messages are pushed with.
        key: ConnKey,
        /// The connection (topic, type, definition, header fields).
        connection: Connection,
    },
    /// One raw message, exactly as it came off the wire.
    Message {
        /// The connection it came on.
        key: ConnKey,
        /// When it was received (nanoseconds since the epoch): its log time.
        receive_time_ns: u64,
        /// The serialised message.
        data: Bytes,
    },
}

/// What [`RecordQueue::pop`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Popped {
    /// The oldest entry.
    Item(Queued),
    /// Nothing arrived within the timeout; the writer can do periodic work (duration splits).
    Timeout,
    /// The queue was closed and everything in it has been taken.
    Closed,
}

/// What a push did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Push {
    /// Queued; `dropped_oldest` older messages (possibly this one, when it alone passes the
    /// bound) were dropped to make room. The caller warns, rate-limited, when it is not 0.
    Queued {
        /// Messages dropped to make room.
        dropped_oldest: u64,
    },
    /// The queue is closed; the message was discarded and not counted as a drop.
    Closed,
}

#[derive(Default)]
struct State {
    items: VecDeque<Queued>,
    bytes: u64,
    closed: bool,
    next_key: u32,
    /// Drops since the start.
    drops: BTreeMap<ConnKey, u64>,
    /// Drops not yet handed out by [`RecordQueue::take_drops`].
    fresh_drops: BTreeMap<ConnKey, u64>,
    /// The consumer is blocked in [`RecordQueue::pop`]: only then does a push wake it (a
    /// futex call per message was most of a busy recorder's overhead).
    waiting: bool,
}

/// A multi-producer, single-consumer queue bounded in payload bytes, dropping the oldest.
pub struct RecordQueue {
    max_bytes: Option<u64>,
    state: Mutex<State>,
    ready: Condvar,
}

impl RecordQueue {
    /// A queue holding at most `max_bytes` of payload; `None` is unbounded (rosbag `-b 0`).
    pub fn new(max_bytes: Option<u64>) -> Self {
        RecordQueue { max_bytes, state: Mutex::new(State::default()), ready: Condvar::new() }
    }

    /// A queue bounded as `rosbag record -b` takes it: `0` means unbounded.
    pub fn with_buffsize(bytes: u64) -> Self {
        Self::new((bytes > 0).then_some(bytes))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A producer that panicked while holding the lock left the queue consistent (every
        // mutation is completed before anything can panic), so keep going.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Announces a connection and returns the key its messages are pushed with. Keys are
    /// numbered from 0 in registration order.
    pub fn register(&self, connection: Connection) -> ConnKey {
        let mut s = self.lock();
        let key = ConnKey(s.next_key);
        s.next_key += 1;
        if !s.closed {
            s.items.push_back(Queued::Connection { key, connection });
            self.ready.notify_one();
        }
        key
    }

    /// Queues one message without blocking, dropping the oldest messages past the bound.
    pub fn push(&self, key: ConnKey, receive_time_ns: u64, data: Bytes) -> Push {
        let mut s = self.lock();
        if s.closed {
            return Push::Closed;
        }
        s.bytes += data.len() as u64;
        s.items.push_back(Queued::Message { key, receive_time_ns, data });
        let mut dropped = 0;
        if let Some(max) = self.max_bytes {
            while s.bytes > max {
                let Some(oldest) = s.items.iter().position(|q| matches!(q, Queued::Message { .. })) else { break };
                if let Some(Queued::Message { key, data, .. }) = s.items.remove(oldest) {
                    s.bytes -= data.len() as u64;
                    *s.drops.entry(key).or_default() += 1;
                    *s.fresh_drops.entry(key).or_default() += 1;
                    dropped += 1;
                }
            }
        }
        if s.waiting {
            self.ready.notify_one();
        }
        Push::Queued { dropped_oldest: dropped }
    }

    /// Takes the oldest entry, waiting up to `timeout` for one. After [`RecordQueue::close`]
    /// the rest is still handed out, then [`Popped::Closed`].
    pub fn pop(&self, timeout: Duration) -> Popped {
        let mut s = self.lock();
        if s.items.is_empty() && !s.closed && !timeout.is_zero() {
            s.waiting = true;
            s = self
                .ready
                .wait_timeout_while(s, timeout, |s| s.items.is_empty() && !s.closed)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            s.waiting = false;
        }
        match s.items.pop_front() {
            Some(item) => {
                if let Queued::Message { data, .. } = &item {
                    s.bytes -= data.len() as u64;
                }
                Popped::Item(item)
            }
            None if s.closed => Popped::Closed,
            None => Popped::Timeout,
        }
    }

    /// Stops accepting messages and wakes the consumer, which drains what is left.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// Whether [`RecordQueue::close`] was called (by the front end, or by a writer that
    /// failed).
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Messages dropped since the start, per connection.
    pub fn drops(&self) -> BTreeMap<ConnKey, u64> {
        self.lock().drops.clone()
    }

    /// Messages dropped since the last call, per connection: the writer hands these to
    /// [`crate::Recorder::note_drops`].
    pub fn take_drops(&self) -> BTreeMap<ConnKey, u64> {
        std::mem::take(&mut self.lock().fresh_drops)
    }

    /// Payload bytes queued now.
    pub fn queued_bytes(&self) -> u64 {
        self.lock().bytes
    }

    /// Entries queued now (messages and connection announcements).
    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.lock().items.is_empty()
    }
}
