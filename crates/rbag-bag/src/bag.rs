//! An opened bag: the front door for reading, whatever the storage.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rbag_storage::{
    Connection, Filter, Message, MessageIter, ReadOptions, ReadStats, StorageInfo, StorageReader, TimeMerge,
};

use crate::info::BagInfo;
use crate::Result;

/// How to open a bag.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenOptions {
    /// Read messages on connections the bag never declares (a ROS 1 connection with no
    /// connection record, an MCAP channel with no Channel record, a rosbag2 topic id missing
    /// from the topics table) on stand-in topics `/rbag/undeclared/<id>` with no type, instead
    /// of failing on the first one. [`Bag::undeclared_read`] counts them.
    pub lenient: bool,
    /// Download a remote file that can only be read by scanning it (an MCAP file without a
    /// summary) instead of refusing it.
    pub allow_remote_scan: bool,
}

/// A bag opened for reading: a ROS 1 bag, a rosbag2 directory, a single `.db3`/`.mcap`, or any
/// format a registered storage backend reads.
///
/// ```no_run
/// use rbag_bag::{Bag, Filter};
/// let bag = Bag::open("run.bag")?;
/// let info = bag.info()?;
/// println!("{} messages on {} topics", info.message_count, info.topics.len());
/// let imu = Filter { topics: vec!["/imu".into()], ..Filter::default() };
/// for msg in bag.messages(&imu)? {
///     let msg = msg?;
///     println!("{} {} bytes", msg.log_time, msg.data.len());
/// }
/// # Ok::<(), rbag_bag::Error>(())
/// ```
pub struct Bag {
    path: PathBuf,
    reader: Box<dyn StorageReader>,
    /// Stand-in connections (sorted) whose messages are counted, under `lenient`.
    stand_ins: Vec<u32>,
    undeclared: Arc<AtomicU64>,
}

impl Bag {
    /// Opens a bag with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Bag> {
        Bag::open_with(path, &OpenOptions::default())
    }

    /// Opens a bag.
    pub fn open_with(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Bag> {
        let path = path.as_ref();
        let reader = rbag_storage::open_with(
            path,
            &ReadOptions {
                lenient: options.lenient,
                allow_remote_scan: options.allow_remote_scan,
                ..ReadOptions::default()
            },
        )?;
        let stand_ins = if options.lenient {
            reader.info()?.undeclared.keys().copied().filter(|&id| reader.connection(id).is_some()).collect()
        } else {
            Vec::new()
        };
        Ok(Bag { path: path.into(), reader, stand_ins, undeclared: Arc::default() })
    }

    /// Wraps a reader opened some other way (a backend's own constructor).
    pub fn from_reader(path: impl Into<PathBuf>, reader: Box<dyn StorageReader>) -> Bag {
        Bag { path: path.into(), reader, stand_ins: Vec::new(), undeclared: Arc::default() }
    }

    /// The path the bag was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every connection, ordered by id.
    pub fn connections(&self) -> &[Connection] {
        self.reader.connections()
    }

    /// The connection a message refers to.
    pub fn connection(&self, id: u32) -> Option<&Connection> {
        self.reader.connection(id)
    }

    /// The summary `rbag info` prints, from index and summary data only.
    pub fn info(&self) -> Result<BagInfo> {
        crate::info::info(&self.path, self.reader.as_ref())
    }

    /// The storage's own summary: per-connection counts, files, compression, properties.
    pub fn storage_info(&self) -> Result<StorageInfo> {
        Ok(self.reader.info()?)
    }

    /// Raw messages accepted by `filter`, in log-time order (ties in file order).
    pub fn messages<'a>(&'a self, filter: &Filter) -> Result<MessageIter<'a>> {
        Ok(self.count(self.reader.messages(filter)?))
    }

    /// An error naming the first of `topics` that no connection of the bag carries, with the
    /// topics it has: a typo fails instead of reading nothing.
    pub fn check_topics(&self, topics: &[impl AsRef<str>]) -> Result<()> {
        let connections = self.connections();
        let Some(missing) = topics.iter().map(AsRef::as_ref).find(|t| !connections.iter().any(|c| c.topic == *t))
        else {
            return Ok(());
        };
        let known = connections.iter().map(|c| c.topic.as_str()).collect::<std::collections::BTreeSet<_>>();
        Err(crate::Error::NoTopic {
            path: self.path.clone(),
            topic: missing.into(),
            known: known.into_iter().collect::<Vec<_>>().join(", "),
        })
    }

    /// Topics of `bags` that nearly match `topic` (a typo, another case, a missing slash),
    /// closest first: for errors that name what was probably meant.
    pub fn near_topics(bags: &[Bag], topic: &str) -> Vec<String> {
        Self::near_names(bags.iter().flat_map(|b| b.connections().iter().map(|c| c.topic.as_str())), topic)
    }

    /// Names among `known` that nearly match `topic`, closest first, as [`Bag::near_topics`].
    pub fn near_names<'a>(known: impl IntoIterator<Item = &'a str>, topic: &str) -> Vec<String> {
        let known: std::collections::BTreeSet<&str> = known.into_iter().collect();
        let wanted = topic.trim_start_matches('/').to_lowercase();
        let mut near: Vec<(usize, &str)> = known
            .into_iter()
            .filter_map(|k| {
                let other = k.trim_start_matches('/').to_lowercase();
                let d = edit_distance(&wanted, &other);
                let close = d <= (wanted.len().max(other.len()) / 4).max(2)
                    || other.ends_with(&wanted)
                    || wanted.ends_with(&other);
                close.then_some((d, k))
            })
            .collect();
        near.sort();
        near.into_iter().take(5).map(|(_, k)| k.to_string()).collect()
    }

    /// The `n`-th message (0-based, log-time order) of `topic`.
    pub fn nth(&self, topic: &str, n: u64) -> Result<Option<Message>> {
        Ok(self.reader.nth(topic, n)?)
    }

    /// Median period between consecutive messages, per topic, in nanoseconds.
    pub fn median_periods(&self) -> Result<BTreeMap<String, u64>> {
        Ok(self.reader.median_periods()?)
    }

    /// Files attached to the bag (MCAP attachments), in file order; CRCs are checked by
    /// [`crate::attachments::check`], not here.
    pub fn attachments(&self) -> Result<Vec<rbag_storage::Attachment>> {
        Ok(self.reader.attachments()?)
    }

    /// The bag's metadata records (MCAP Metadata; rosbag2's own is named `rosbag2`).
    pub fn metadata(&self) -> Result<Vec<rbag_storage::MetadataRecord>> {
        Ok(self.reader.metadata()?)
    }

    /// The chunks of a ROS 1 or MCAP bag, from the index (`rbag list chunks`).
    pub fn chunks(&self) -> Result<Vec<rbag_storage::ChunkInfo>> {
        Ok(self.reader.chunks()?)
    }

    /// The schemas of the bag's connections (`rbag list schemas`).
    pub fn schemas(&self) -> Result<Vec<rbag_storage::SchemaInfo>> {
        Ok(self.reader.schemas()?)
    }

    /// Problems found at open that did not stop reading (a scanned file, a skipped chunk).
    pub fn warnings(&self) -> Vec<String> {
        self.reader.warnings()
    }

    /// What the file holds that cannot be read (a torn tail, a damaged chunk), one line each.
    pub fn lost(&self) -> Vec<String> {
        self.reader.lost()
    }

    /// Messages read so far on stand-ins for undeclared connections (see
    /// [`OpenOptions::lenient`]).
    pub fn undeclared_read(&self) -> u64 {
        self.undeclared.load(Ordering::Relaxed)
    }

    /// I/O counters so far (chunks read and decompressed, bytes read).
    pub fn stats(&self) -> ReadStats {
        self.reader.stats()
    }

    /// The storage reader underneath, for the layers that drive storage directly (playback).
    pub fn reader(&self) -> &dyn StorageReader {
        self.reader.as_ref()
    }

    /// The storage reader, owned.
    pub fn into_reader(self) -> Box<dyn StorageReader> {
        self.reader
    }

    fn count<'a>(&'a self, iter: MessageIter<'a>) -> MessageIter<'a> {
        if self.stand_ins.is_empty() {
            return iter;
        }
        Box::new(iter.inspect(|m| {
            if m.as_ref().is_ok_and(|m| self.stand_ins.binary_search(&m.connection).is_ok()) {
                self.undeclared.fetch_add(1, Ordering::Relaxed);
            }
        }))
    }
}

/// Messages of several bags merged in log-time order, each with the index of its bag: how
/// `convert` reads its inputs. Ties keep the order the bags are given in, then each bag's own
/// order, so every run gives the same sequence.
pub fn merged<'a>(bags: impl IntoIterator<Item = &'a Bag>, filter: &Filter) -> Result<TimeMerge<'a>> {
    let streams = bags.into_iter().map(|b| b.messages(filter)).collect::<Result<Vec<_>>>()?;
    Ok(TimeMerge::new(streams))
}

/// Levenshtein distance over chars, for near-match suggestions (short strings only).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
