//! The one recording pipeline: what the writer thread of every live recording (ROS 1 and ROS 2)
//! runs between the [`RecordQueue`] the network threads fill and the bag.
//!
//! Each [`Pipeline::step`] takes one entry from the queue (waiting a little when it is empty)
//! and does the periodic work around it:
//! - drops the queue counted go to the recorder (its report and the `/rbag/dropped` topic);
//! - every [`PipelineOptions::checkpoint_every_ns`] of the pipeline's clock, what was written
//!   is handed to the OS ([`Recorder::checkpoint`]): a killed recorder loses about that much;
//! - [`Controls`] requests are carried out: pause (messages are discarded, connections still
//!   learned), split now, snapshot;
//! - while idle, [`Recorder::tick`] splits or stops on time and checks the disk;
//! - in snapshot mode ([`PipelineOptions::snapshot`]) messages go to a [`SnapshotBuffer`] and
//!   each trigger writes it out: into a new bag of its own (`rosbag record --snapshot`) or into
//!   the recording's bag (`ros2 bag record --snapshot-mode`).
//!
//! Splitting, retention, limits, latched repeats and disk space are the [`Recorder`]'s. The
//! clock is a parameter ([`Now`]), so a test drives the checkpoint and split times with a
//! virtual clock.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::key::ConnKey;
use crate::queue::{Popped, Queued, RecordQueue};
use crate::record::{Notice, RecordError, RecordOptions, RecordReport, Recorder, StopReason, WriteOutcome};
use crate::snapshot::SnapshotBuffer;

/// Nanoseconds since the epoch, as the pipeline reads them: [`crate::now_ns`] when live, a
/// virtual clock in tests.
pub type Now = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The wall clock, [`crate::now_ns`], as a [`Now`].
pub fn wall_clock() -> Now {
    Arc::new(crate::key::now_ns)
}

/// Requests to a running recording, from any thread: a keyboard, a signal handler's poller, a
/// control service. The pipeline acts on them at its next step, and counts here what it took.
#[derive(Debug, Default)]
pub struct Controls {
    /// While set, messages are discarded (connections are still learned).
    pub paused: AtomicBool,
    /// Snapshot triggers not yet carried out.
    pub snapshots: AtomicU64,
    /// Split requests not yet carried out.
    pub splits: AtomicU64,
    /// Messages the pipeline has taken from the queue so far (written, held in a snapshot ring
    /// or discarded while paused): what a caller waits on before a trigger.
    pub taken: AtomicU64,
}

impl Controls {
    /// Controls of a recording that starts paused or not.
    pub fn new(paused: bool) -> Self {
        Controls { paused: AtomicBool::new(paused), ..Controls::default() }
    }

    /// Pauses (`true`) or resumes; returns whether that changed anything.
    pub fn set_paused(&self, paused: bool) -> bool {
        self.paused.swap(paused, Ordering::SeqCst) != paused
    }

    /// Flips pause; returns whether the recording is now paused.
    pub fn toggle_paused(&self) -> bool {
        !self.paused.fetch_xor(true, Ordering::SeqCst)
    }

    /// Whether messages are being discarded.
    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Asks for a snapshot (only a snapshot-mode recording acts on it).
    pub fn snapshot(&self) {
        self.snapshots.fetch_add(1, Ordering::SeqCst);
    }

    /// Asks for the current file to end and the next to begin.
    pub fn split(&self) {
        self.splits.fetch_add(1, Ordering::SeqCst);
    }

    /// Messages taken from the queue so far.
    pub fn taken(&self) -> u64 {
        self.taken.load(Ordering::SeqCst)
    }
}

/// Snapshot mode: messages are held in a ring and written only when triggered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// The ring keeps messages within this much log time of the newest.
    pub max_duration_ns: Option<u64>,
    /// The ring keeps at most this many payload bytes.
    pub max_bytes: Option<u64>,
    /// Each trigger writes a new bag named by the [`RecordOptions`] (`rosbag record
    /// --snapshot`); otherwise triggers write into the one recording (`ros2 bag record
    /// --snapshot-mode`), which is opened at the start.
    pub each_to_new_bag: bool,
}

/// How the pipeline runs, besides what the [`RecordOptions`] say of the bag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineOptions {
    /// Checkpoint this often (clock time) while something was written since the last one.
    pub checkpoint_every_ns: Option<u64>,
    /// Snapshot mode.
    pub snapshot: Option<SnapshotOptions>,
    /// How long [`Pipeline::run`] waits for the queue before doing its periodic work.
    pub idle_wait: Duration,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            checkpoint_every_ns: Some(1_000_000_000),
            snapshot: None,
            idle_wait: Duration::from_millis(100),
        }
    }
}

/// What happened in a step, for the caller to act on or print.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// Something the recorder says (files opened, closed, split, deleted; low space).
    Notice(Notice),
    /// This topic has its `-l` messages: the middleware can unsubscribe it.
    TopicDone(String),
    /// Recording ended on its own (size, duration, disk); the caller stops feeding the queue.
    Stopped(StopReason),
    /// A snapshot trigger was carried out.
    Snapshot {
        /// New bags written by it (none when it wrote into the recording).
        files: Vec<PathBuf>,
        /// Messages it wrote.
        messages: u64,
    },
    /// A checkpoint handed what was written to the OS.
    Checkpoint,
    /// Messages dropped before a snapshot ring, which has no file to report them in.
    RingDrops {
        /// The connection they came on.
        key: ConnKey,
        /// How many.
        count: u64,
    },
}

enum Target {
    Recorder(Recorder),
    Ring { ring: SnapshotBuffer, into: RingInto },
}

/// One per pipeline, so the size difference of the variants does not matter.
#[allow(clippy::large_enum_variant)]
enum RingInto {
    NewBag(Box<RecordOptions>),
    Recorder(Recorder),
}

/// The writer side of a live recording. Single-threaded: the writer thread owns it.
pub struct Pipeline {
    target: Target,
    queue: Arc<RecordQueue>,
    controls: Arc<Controls>,
    now: Now,
    opts: PipelineOptions,
    last_checkpoint: u64,
    dirty: bool,
    stop_sent: bool,
    topics: HashMap<ConnKey, String>,
    /// What the snapshot bags of `each_to_new_bag` wrote.
    snapshot_report: RecordReport,
    snapshots: u64,
}

impl Pipeline {
    /// Opens the recording (unless each snapshot makes a bag of its own) at the clock's now.
    pub fn new(
        record: RecordOptions,
        opts: PipelineOptions,
        queue: Arc<RecordQueue>,
        controls: Arc<Controls>,
        now: Now,
    ) -> Result<Pipeline, RecordError> {
        let t = now();
        let target = match opts.snapshot {
            None => Target::Recorder(Recorder::create(record, t)?),
            Some(s) => Target::Ring {
                ring: SnapshotBuffer::new(s.max_duration_ns, s.max_bytes),
                into: if s.each_to_new_bag {
                    RingInto::NewBag(Box::new(record))
                } else {
                    RingInto::Recorder(Recorder::create(record, t)?)
                },
            },
        };
        Ok(Pipeline {
            target,
            queue,
            controls,
            now,
            opts,
            last_checkpoint: t,
            dirty: false,
            stop_sent: false,
            topics: HashMap::new(),
            snapshot_report: RecordReport::default(),
            snapshots: 0,
        })
    }

    /// The controls this pipeline obeys.
    pub fn controls(&self) -> &Arc<Controls> {
        &self.controls
    }

    fn recorder(&mut self) -> Option<&mut Recorder> {
        match &mut self.target {
            Target::Recorder(r) | Target::Ring { into: RingInto::Recorder(r), .. } => Some(r),
            Target::Ring { into: RingInto::NewBag(_), .. } => None,
        }
    }

    /// Takes one entry from the queue (waiting up to `wait`) and does the periodic work.
    /// Returns false once the queue is closed and drained: then call [`Pipeline::finish`].
    pub fn step(&mut self, wait: Duration, on_event: &mut dyn FnMut(Event)) -> Result<bool, RecordError> {
        for (key, n) in self.queue.take_drops() {
            match self.recorder() {
                Some(rec) => rec.note_drops(key, n),
                None => on_event(Event::RingDrops { key, count: n }),
            }
        }
        let popped = self.queue.pop(wait);
        let now = (self.now)();
        // The entry first: what arrived before a trigger is part of what the trigger acts on.
        let open = match popped {
            Popped::Closed => false,
            Popped::Timeout => {
                if let Some(reason) = self.recorder().map(|r| r.tick(now)).transpose()?.flatten() {
                    self.stopped(reason, on_event);
                }
                true
            }
            Popped::Item(Queued::Connection { key, connection }) => {
                self.topics.insert(key, connection.topic.clone());
                match &mut self.target {
                    Target::Recorder(rec) => rec.add_connection_with_key(key, connection)?,
                    Target::Ring { ring, into } => {
                        if let RingInto::Recorder(rec) = into {
                            rec.add_connection_with_key(key, connection.clone())?;
                        }
                        ring.add_connection_with_key(key, connection);
                    }
                }
                true
            }
            Popped::Item(Queued::Message { key, receive_time_ns, data }) => {
                self.controls.taken.fetch_add(1, Ordering::SeqCst);
                match &mut self.target {
                    Target::Ring { ring, .. } => {
                        ring.push(key, receive_time_ns, data);
                    }
                    Target::Recorder(_) if self.controls.is_paused() => {}
                    Target::Recorder(rec) => {
                        let outcome = rec.write(key, receive_time_ns, &data)?;
                        self.dirty = true;
                        self.outcome(key, outcome, on_event);
                    }
                }
                true
            }
        };
        if self.dirty
            && self.opts.checkpoint_every_ns.is_some_and(|every| now.saturating_sub(self.last_checkpoint) >= every)
        {
            if let Some(rec) = self.recorder() {
                rec.checkpoint()?;
            }
            (self.last_checkpoint, self.dirty) = (now, false);
            on_event(Event::Checkpoint);
        }
        if self.controls.splits.swap(0, Ordering::SeqCst) > 0 {
            if let Some(rec) = self.recorder() {
                rec.split_now(now)?;
            }
        }
        let due = self.controls.snapshots.swap(0, Ordering::SeqCst);
        if due > 0 {
            self.snapshot(now, due, on_event)?;
        }
        if let Some(rec) = self.recorder() {
            for n in rec.take_notices() {
                on_event(Event::Notice(n));
            }
        }
        Ok(open)
    }

    fn outcome(&mut self, key: ConnKey, outcome: WriteOutcome, on_event: &mut dyn FnMut(Event)) {
        match outcome {
            // "All" means all topics with a connection so far: a named topic with no publisher
            // yet still counts, so the middleware decides when everything is done (as rosbag).
            WriteOutcome::LimitReached | WriteOutcome::AllLimitsReached => {
                on_event(Event::TopicDone(self.topics.get(&key).cloned().unwrap_or_default()))
            }
            WriteOutcome::Stopped(reason) => self.stopped(reason, on_event),
            WriteOutcome::Written | WriteOutcome::Ignored | WriteOutcome::Throttled => {}
        }
    }

    fn stopped(&mut self, reason: StopReason, on_event: &mut dyn FnMut(Event)) {
        if !std::mem::replace(&mut self.stop_sent, true) {
            on_event(Event::Stopped(reason));
        }
    }

    /// Writes the snapshot ring out (`due` triggers at once count as one write).
    fn snapshot(&mut self, now: u64, due: u64, on_event: &mut dyn FnMut(Event)) -> Result<(), RecordError> {
        let Target::Ring { ring, into } = &mut self.target else { return Ok(()) };
        self.snapshots += due;
        match into {
            RingInto::NewBag(opts) => {
                let report = ring.write_to((**opts).clone(), now)?;
                let messages = report.messages.values().sum();
                self.snapshot_report.files.extend(report.files.iter().cloned());
                for (t, n) in report.messages {
                    *self.snapshot_report.messages.entry(t).or_default() += n;
                }
                on_event(Event::Snapshot { files: report.files, messages });
            }
            RingInto::Recorder(rec) => {
                let mut messages = 0;
                for (key, t, data) in ring.take() {
                    rec.write(key, t, &data)?;
                    messages += 1;
                }
                self.dirty = true;
                on_event(Event::Snapshot { files: Vec::new(), messages });
            }
        }
        Ok(())
    }

    /// Runs steps until the queue is closed and drained, then finishes the recording.
    pub fn run(mut self, mut on_event: impl FnMut(Event)) -> Result<RecordReport, RecordError> {
        let wait = self.opts.idle_wait;
        while self.step(wait, &mut on_event)? {}
        // The close's notices too: rosbag2 announces the last file closed (write_split).
        if let Some(rec) = self.recorder() {
            rec.close()?;
            for n in rec.take_notices() {
                on_event(Event::Notice(n));
            }
        }
        self.finish()
    }

    /// Closes the bag and says what was recorded (with the snapshots carried out).
    pub fn finish(self) -> Result<RecordReport, RecordError> {
        let snapshots = self.snapshots;
        let mut report = match self.target {
            Target::Recorder(rec) | Target::Ring { into: RingInto::Recorder(rec), .. } => rec.finish()?,
            Target::Ring { into: RingInto::NewBag(_), .. } => self.snapshot_report,
        };
        report.snapshots = snapshots;
        Ok(report)
    }
}
