//! Live recording: one pipeline for ROS 1 and ROS 2.
//!
//! A front end describes the recording with a [`RecordSpec`] (what the bag is, how the
//! pipeline runs, and a [`Source`]: which middleware and what to subscribe to), starts it with
//! [`Recording::start`], drives it through its [`Controls`] (pause, split, snapshot: a
//! keyboard, a signal, a control service), and runs it with [`Recording::run`] until the front
//! end, the graph or the recording itself ends it. The middleware side only turns publishers
//! into connections and samples into queued bytes; everything after the queue is
//! [`rbag_transport::Pipeline`], the same for both.
//!
//! Three parties: the middleware's threads push raw messages into a byte-bounded queue; a
//! writer thread runs the pipeline; the thread calling [`Recording::run`] discovers topics and
//! reacts to the writer's events.

mod ros1;
#[cfg(feature = "ros2")]
mod ros2;
#[cfg(feature = "ros2")]
mod session;

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rbag_transport::pipeline::{wall_clock, Now};
use rbag_transport::{Controls, Event, Notice, Pipeline, RecordError, RecordQueue, StopReason};

use crate::graph::GraphError;
#[cfg(feature = "ros2")]
pub use rbag_ros2::{
    qos::Overrides,
    record::{load_static_topics, Ros2RecordSpec, SimClock, StaticTopicsError},
    select::Ros2Selection,
};
pub use rbag_transport::{
    now_ns, Layout, OutputName, PipelineOptions, RecordOptions, RecordReport, SnapshotOptions, Split,
};
pub use ros1::Ros1Source;
#[cfg(feature = "ros2")]
pub use ros2::{default_dir_name, unused_dir_name, Ros2Join, Ros2Source};
#[cfg(feature = "ros2")]
pub use session::RecorderSession;

/// Where the recording's notices go (one line each; a line starting with `error` or `warning`
/// is one). The front end prints them.
pub type Log = Arc<dyn Fn(String) + Send + Sync>;

/// Why a recording could not start or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveRecordError {
    /// Writing the bag failed (or could not start: the output exists, the disk is full).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Joining the graph failed.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// A ROS 1 subscription or advertisement failed.
    #[error(transparent)]
    Node(#[from] rbag_ros1::node::NodeError),
    /// A DDS entity could not be created.
    #[cfg(feature = "ros2")]
    #[error(transparent)]
    Dds(#[from] rbag_ros2::dds::DdsError),
    /// A ROS 2 subscription (DDS or Zenoh) could not be made.
    #[error(transparent)]
    Ros2Graph(#[from] rbag_ros2::graph::GraphError),
    /// The Zenoh session or router could not start.
    #[cfg(feature = "zenoh")]
    #[error(transparent)]
    Zenoh(#[from] rbag_ros2::zenoh::ZenohError),
    /// A topic pattern does not compile.
    #[error(transparent)]
    Select(#[from] rbag_transport::SelectError),
    /// The writer thread could not start or panicked.
    #[error("the bag writer thread {0}")]
    Writer(&'static str),
}

impl LiveRecordError {
    /// Whether the recording refused to start because its output exists (a front end says how
    /// to replace it).
    pub fn output_exists(&self) -> bool {
        matches!(self, LiveRecordError::Record(RecordError::OutputExists { .. }))
    }

    /// Whether the recording refused to start for lack of free disk space (a front end names
    /// its option for the minimum).
    pub fn low_disk_space(&self) -> bool {
        matches!(self, LiveRecordError::Record(RecordError::LowDiskSpace { .. }))
    }
}

/// Which middleware to record from, and what to take from it.
#[non_exhaustive]
pub enum Source {
    /// A ROS 1 graph.
    Ros1(Ros1Source),
    /// A ROS 2 graph over DDS.
    #[cfg(feature = "ros2")]
    Ros2(Box<Ros2Source>),
}

/// Everything a recording needs.
pub struct RecordSpec {
    /// The bag: names, layout, format, splits, limits, disk space.
    pub output: RecordOptions,
    /// Checkpoints and snapshot mode.
    pub pipeline: PipelineOptions,
    /// Payload bytes queued between the network and the disk before the oldest are dropped
    /// (`None`: unbounded).
    pub queue_bytes: Option<u64>,
    /// Start paused (nothing is written until [`Controls::set_paused`]`(false)`).
    pub start_paused: bool,
    /// The middleware and what to subscribe to.
    pub source: Source,
    /// The clock of the pipeline's periodic work (checkpoints, idle splits, snapshot names);
    /// `None`: the wall clock. Tests pass a virtual one.
    pub clock: Option<Now>,
}

/// How a recording ended, besides what it wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOutcome {
    /// Files, messages, drops and snapshots.
    pub report: RecordReport,
    /// What the recording wrote to: the bag directory, or the first file's name.
    pub output: Option<PathBuf>,
    /// Why it ended when it was not asked to (the graph asked it to shut down).
    pub ended_by: Option<String>,
}

/// What a middleware does while the recording runs, called from [`Recording::run`].
trait Feed: Send {
    /// Periodic work: discovery. Called every loop turn; it keeps its own pace.
    fn poll(&mut self, log: &Log);
    /// A topic has its `-l` messages; returns true when every topic is done (stop).
    fn topic_done(&mut self, topic: &str) -> bool;
    /// A file was opened (ROS 1 `-p` publishes its name).
    fn opened(&mut self, _path: &std::path::Path) {}
    /// Where storage file splits are announced (rosbag2's `/events/write_split`); taken once at
    /// start, it outlives the feed so the close of the last file is announced too.
    fn split_events(&mut self) -> Option<Box<dyn SplitEvents>> {
        None
    }
    /// Why the graph wants the recording to end, if it does.
    fn shutdown_requested(&self) -> Option<String> {
        None
    }
    /// How long a loop turn waits for the writer's events.
    fn turn(&self) -> Duration;
    /// Leaves the graph.
    fn leave(self: Box<Self>);
}

/// Announces storage file splits to the graph, as rosbag2's recorder publishes
/// `rosbag2_interfaces/msg/WriteSplitEvent` on `/events/write_split`.
pub(crate) trait SplitEvents: Send {
    /// `closed` was finished and recording goes on in `opened` (empty at the end).
    fn publish(&mut self, closed: &std::path::Path, opened: &std::path::Path);
}

/// A recording joined to its graph, with its writer thread running.
pub struct Recording {
    controls: Arc<Controls>,
    queue: Arc<RecordQueue>,
    writer: JoinHandle<Result<RecordReport, RecordError>>,
    events: mpsc::Receiver<Event>,
    feed: Box<dyn Feed>,
    split_events: Option<Box<dyn SplitEvents>>,
    output: Option<PathBuf>,
    log: Log,
}

impl Recording {
    /// Checks the output, joins the graph, opens the bag and starts the writer thread.
    pub fn start(spec: RecordSpec, log: Log) -> Result<Recording, LiveRecordError> {
        let controls = Arc::new(Controls::new(spec.start_paused));
        let queue = Arc::new(RecordQueue::new(spec.queue_bytes));
        let now = spec.clock.unwrap_or_else(wall_clock);
        let output = match (&spec.output.layout, &spec.output.output) {
            (rbag_transport::Layout::Rosbag2Dir, rbag_transport::OutputName::Exact(dir)) => Some(dir.clone()),
            _ => None,
        };
        // The bag is opened before the graph is joined: a refused output costs no network.
        let pipeline = Pipeline::new(spec.output, spec.pipeline, queue.clone(), controls.clone(), now)?;
        let mut feed: Box<dyn Feed> = match spec.source {
            Source::Ros1(s) => Box::new(ros1::Ros1Feed::start(s, queue.clone(), controls.clone(), &log)?),
            #[cfg(feature = "ros2")]
            Source::Ros2(s) => Box::new(ros2::Ros2Feed::start(*s, queue.clone(), &log)?),
        };
        let (tx, events) = mpsc::channel();
        let writer = {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name("bag-writer".into())
                .spawn(move || {
                    let r = pipeline.run(|e| {
                        let _ = tx.send(e);
                    });
                    // A failed writer stops the recording: nothing would store what comes.
                    queue.close();
                    r
                })
                .map_err(|_| LiveRecordError::Writer("could not start"))?
        };
        let split_events = feed.split_events();
        Ok(Recording { controls, queue, writer, events, feed, split_events, output, log })
    }

    /// The controls the front end drives: pause, split, snapshot.
    pub fn controls(&self) -> Arc<Controls> {
        self.controls.clone()
    }

    /// Records until `keep_going` returns false (called every loop turn, a few times a
    /// second: a front end polls its signals and keys there), the graph asks the node to shut
    /// down, every topic has its `-l` messages, or the recording stops on its own (size,
    /// duration, disk space, a write error). Then leaves the graph, drains the queue and closes
    /// the bag.
    pub fn run(mut self, mut keep_going: impl FnMut(&Controls) -> bool) -> Result<RecordOutcome, LiveRecordError> {
        let mut ended_by = None;
        while keep_going(&self.controls) && !self.queue.is_closed() {
            if let Some(why) = self.feed.shutdown_requested() {
                ended_by = Some(format!("shutdown requested by the graph: {why}"));
                break;
            }
            self.feed.poll(&self.log);
            if !self.handle_events() {
                break;
            }
        }
        self.feed.leave();
        self.queue.close();
        let report = self.writer.join().map_err(|_| LiveRecordError::Writer("panicked"))??;
        // The feed has left; the last file's close is still announced.
        for event in self.events.try_iter() {
            if let Event::Notice(n) = event {
                announce_split(&mut self.split_events, &n);
            }
        }
        Ok(RecordOutcome { report, output: self.output, ended_by })
    }

    /// Waits one turn for the writer's events and acts on them; false when recording is over.
    fn handle_events(&mut self) -> bool {
        let first = match self.events.recv_timeout(self.feed.turn()) {
            Ok(e) => e,
            Err(mpsc::RecvTimeoutError::Timeout) => return true,
            Err(mpsc::RecvTimeoutError::Disconnected) => return false,
        };
        let mut go_on = true;
        for event in std::iter::once(first).chain(self.events.try_iter().collect::<Vec<_>>()) {
            go_on &= self.on_event(event);
        }
        go_on
    }

    fn on_event(&mut self, event: Event) -> bool {
        let log = &self.log;
        match event {
            Event::Notice(n) => match &n {
                Notice::Opened(p) => {
                    log(format!("Recording to '{}'.", p.display()));
                    self.feed.opened(p);
                }
                Notice::Closed(p) => log(format!("Closing '{}'.", p.display())),
                Notice::Split { closed, opened } => {
                    log(format!(
                        "Split: '{}' closed; recording goes on in a new file, '{}'.",
                        closed.display(),
                        opened.display()
                    ));
                    announce_split(&mut self.split_events, &n);
                }
                Notice::FileClosed(_) => announce_split(&mut self.split_events, &n),
                Notice::Deleted(p) => log(format!("Deleted split '{}' (keeping the newest files).", p.display())),
                Notice::LowSpace { dir, free, required } => log(format!(
                    "warning: only {free} bytes free on the disk of {} (minimum {required})",
                    dir.display()
                )),
                Notice::Warning(w) => log(format!("warning: {w}")),
                _ => {}
            },
            Event::TopicDone(t) => return !self.feed.topic_done(&t),
            Event::Stopped(_) => return false,
            Event::Snapshot { files, messages } => {
                for f in &files {
                    log(format!("snapshot written to {}", f.display()));
                }
                if files.is_empty() {
                    log(format!("Snapshot: wrote {messages} message(s) from the cache into the bag."));
                }
            }
            Event::RingDrops { key, count } => {
                log(format!("warning: dropped {count} message(s) of connection {key} before the snapshot ring"))
            }
            Event::Checkpoint => {}
            _ => {}
        }
        true
    }
}

/// Publishes the write_split event a notice stands for, if any.
fn announce_split(events: &mut Option<Box<dyn SplitEvents>>, notice: &Notice) {
    let Some(events) = events.as_mut() else { return };
    match notice {
        Notice::Split { closed, opened } => events.publish(closed, opened),
        Notice::FileClosed(closed) => events.publish(closed, std::path::Path::new("")),
        _ => {}
    }
}

/// Whether a report's stop is one a front end treats as a failure (rosbag exits 1 when the
/// disk fills).
pub fn stopped_by_failure(report: &RecordReport) -> bool {
    matches!(report.stopped, Some(StopReason::LowDiskSpace { .. }))
}
