//! Bags that are not local files: objects in a bucket or on a web server, read by byte range.
//!
//! This crate knows only the [`RangeSource`] trait; the crate that talks to object stores
//! (rbag-remote, with its async runtime) implements it and [registers](register_opener) an
//! opener for URLs. Readers then ask for exactly the ranges they need: a ROS 1 bag's header and
//! index section for its summary, and the chunks a read or a time window needs.

use std::collections::VecDeque;
use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use crate::mmap::Mapped;
use crate::{budget, Error, ReadStats, Result};

/// Requests made and bytes fetched so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceStats {
    /// Requests made (the opening `HEAD` included).
    pub requests: u64,
    /// Bytes fetched.
    pub bytes: u64,
}

impl From<SourceStats> for ReadStats {
    /// A remote source's counters, as the reader's I/O counters.
    fn from(s: SourceStats) -> ReadStats {
        ReadStats { requests: s.requests, bytes_fetched: s.bytes, ..ReadStats::default() }
    }
}

/// A remote object read by byte range.
pub trait RangeSource: Send + Sync + 'static {
    /// The URL it was opened from (what errors name).
    fn url(&self) -> &str;
    /// Its size in bytes.
    fn len(&self) -> u64;
    /// Whether it is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `len` bytes from `offset`: exactly that many, or an error naming the URL.
    fn read(&self, offset: u64, len: u64) -> Result<Bytes>;
    /// Requests and bytes so far.
    fn stats(&self) -> SourceStats;
    /// Starts fetching `ranges` in the background, so that a [`read`](Self::read) of exactly
    /// one of them later finds it fetched or on its way. The default does nothing.
    fn prefetch(&self, ranges: &[Range<u64>]) {
        let _ = ranges;
    }
}

type Opener = fn(&str) -> Result<Arc<dyn RangeSource>>;

static OPENER: OnceLock<Opener> = OnceLock::new();

/// Sets how URLs are opened (once; later calls are ignored).
pub fn register_opener(open: Opener) {
    let _ = OPENER.set(open);
}

/// An object found under a URL prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its URL.
    pub url: String,
    /// Its size in bytes.
    pub size: u64,
    /// What changes when it is rewritten: its ETag, or else its last-modified time.
    pub version: Option<String>,
}

type Lister = fn(&str) -> Result<Vec<Listed>>;

static LISTER: OnceLock<Lister> = OnceLock::new();

/// Sets how URL prefixes are listed (once; later calls are ignored).
pub fn register_lister(list: Lister) {
    let _ = LISTER.set(list);
}

/// Every object under the URL prefix `url` (`s3://bucket/runs/`), at any depth, through the
/// registered lister.
pub fn list_url(url: &str) -> Result<Vec<Listed>> {
    match LISTER.get() {
        Some(list) => list(url),
        None => Err(Error::Remote {
            url: url.to_string(),
            reason: "this program was built without remote reading (rbag-remote is not registered)".into(),
        }),
    }
}

/// The URL `path` spells (`s3://bucket/key`, `https://host/x.bag`), if it is one: a scheme of
/// letters, digits, `+`, `-` or `.`, then `://`.
pub fn as_url(path: &Path) -> Option<&str> {
    let s = path.to_str()?;
    let (scheme, rest) = s.split_once("://")?;
    let ok = !scheme.is_empty()
        && scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    (ok && !rest.is_empty()).then_some(s)
}

/// Opens `url` through the registered opener.
pub fn open_url(url: &str) -> Result<Arc<dyn RangeSource>> {
    match OPENER.get() {
        Some(open) => open(url),
        None => Err(Error::Remote {
            url: url.to_string(),
            reason: "this program was built without remote reading (rbag-remote is not registered)".into(),
        }),
    }
}

/// Objects up to this size are read whole by their first request.
const SMALL: u64 = 64 << 10;

/// The first bytes of `source`, which tell its format and hold a ROS 1 bag's header record
/// and an MCAP file's Header: all of a small object (one request instead of a head and a
/// tail).
pub(crate) fn head(source: &dyn RangeSource) -> Result<Bytes> {
    let len = source.len();
    source.read(0, if len <= SMALL { len } else { crate::ros1::FIRST_RECORD.min(len) })
}

/// How many unpinned regions [`Regions`] keeps: the chunks a merge has open at once, mostly.
const RECENT: usize = 4;
/// How many regions may be asked for ahead of their reading, at most.
pub(crate) const READ_AHEAD: usize = 4;

/// A fetched region: the object's bytes from `start`, and what they cost of the memory budget.
struct Region {
    start: u64,
    bytes: Bytes,
    _paid: Option<budget::Reservation>,
}

impl Region {
    fn holds(&self, range: &Range<u64>) -> bool {
        self.start <= range.start && range.end <= self.start + self.bytes.len() as u64
    }
}

/// A remote object's bytes, fetched a region at a time and kept: pinned regions (the head and
/// the summary, fetched at open and needed for the reader's life) and the last few others (the
/// chunks being read), paid for from the memory budget. A read inside a kept region makes no
/// request. Regions a read will need next can be asked for ahead ([`Regions::ahead`]).
pub(crate) struct Regions {
    source: Arc<dyn RangeSource>,
    pinned: Mutex<Vec<Region>>,
    recent: Mutex<VecDeque<Region>>,
    /// Ranges asked for ahead and not read yet, with the budget they hold.
    asked: Mutex<VecDeque<(Range<u64>, budget::Reservation)>>,
}

impl Regions {
    pub(crate) fn new(source: Arc<dyn RangeSource>) -> Self {
        Regions {
            source,
            pinned: Mutex::new(Vec::new()),
            recent: Mutex::new(VecDeque::new()),
            asked: Mutex::new(VecDeque::new()),
        }
    }

    /// Keeps `bytes` (the object's bytes from `start`) for the reader's life.
    pub(crate) fn pin(&self, start: u64, bytes: Bytes) {
        lock(&self.pinned).push(Region { start, bytes, _paid: None });
    }

    fn clamp(&self, range: Range<u64>) -> Range<u64> {
        let end = range.end.min(self.source.len());
        range.start.min(end)..end
    }

    fn kept(&self, range: &Range<u64>) -> Option<(Bytes, u64)> {
        let found = |r: &Region| r.holds(range).then(|| (r.bytes.clone(), r.start));
        lock(&self.pinned).iter().find_map(found).or_else(|| lock(&self.recent).iter().find_map(found))
    }

    /// Bytes that hold all of `range` (perhaps more), and the object offset of the first: from
    /// a kept region, or fetched in one request and kept (for the reader's life when `pin`).
    pub(crate) fn get(&self, range: Range<u64>, pin: bool) -> Result<(Bytes, u64)> {
        let range = self.clamp(range);
        if let Some(kept) = self.kept(&range) {
            return Ok(kept);
        }
        // A region is held whole in memory: one larger than the whole budget is refused
        // before it is asked for (a huge chunk length would otherwise be an allocation).
        let len = range.end - range.start;
        if len > budget::limit() {
            return Err(budget::over(len, range.start, "remote region (a chunk and its index)")
                .in_file(std::path::Path::new(self.source.url())));
        }
        let asked = {
            let mut asked = lock(&self.asked);
            asked.iter().position(|(r, _)| *r == range).and_then(|i| asked.remove(i)).map(|(_, paid)| paid)
        };
        let bytes = self.source.read(range.start, range.end - range.start)?;
        if pin {
            self.pin(range.start, bytes.clone());
        } else {
            let paid = asked.or_else(|| budget::try_reserve(bytes.len() as u64));
            let mut recent = lock(&self.recent);
            if recent.len() == RECENT {
                recent.pop_front();
            }
            recent.push_back(Region { start: range.start, bytes: bytes.clone(), _paid: paid });
        }
        Ok((bytes, range.start))
    }

    /// Asks for `ranges` (the regions a read needs next, in order) ahead of their reading, as
    /// far as the memory budget has room for them: the source fetches them in parallel, in the
    /// background, while the reader works on what it has.
    pub(crate) fn ahead(&self, ranges: impl IntoIterator<Item = Range<u64>>) {
        let mut wanted = Vec::new();
        {
            let mut asked = lock(&self.asked);
            for range in ranges.into_iter().take(READ_AHEAD).map(|r| self.clamp(r)) {
                if range.is_empty() || asked.iter().any(|(r, _)| *r == range) || self.kept(&range).is_some() {
                    continue;
                }
                let Some(paid) = budget::try_reserve(range.end - range.start) else { break };
                if asked.len() == 2 * READ_AHEAD {
                    asked.pop_front();
                }
                asked.push_back((range.clone(), paid));
                wanted.push(range);
            }
        }
        if !wanted.is_empty() {
            self.source.prefetch(&wanted);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Pieces a whole-object download is fetched in.
const DOWNLOAD_PIECE: u64 = 8 << 20;

/// Copies all of `source` into `file` (at `path`, which errors name), for what cannot be read
/// by range: an MCAP file without a summary, a SQLite database. Costs the object's size in
/// fetched bytes and in local disk.
pub(crate) fn download(source: &dyn RangeSource, file: &mut std::fs::File, path: &Path) -> Result<()> {
    let fail = |e: std::io::Error| Error::io(path, e);
    let mut at = 0;
    while at < source.len() {
        let n = DOWNLOAD_PIECE.min(source.len() - at);
        file.write_all(&source.read(at, n)?).map_err(fail)?;
        at += n;
    }
    file.flush().map_err(fail)
}

/// Where a reader's bytes come from: a mapped local file, or a remote object's regions.
pub(crate) enum Backing {
    Local(Mapped),
    Remote(Regions),
}

impl Backing {
    pub(crate) fn len(&self) -> u64 {
        match self {
            Backing::Local(m) => m.len() as u64,
            Backing::Remote(r) => r.source.len(),
        }
    }

    /// Bytes that hold all of `range`, and the file offset of the first: the whole map for a
    /// local file (offset 0), a kept or newly fetched region of a remote one (kept for the
    /// reader's life when `pin`).
    pub(crate) fn around(&self, range: Range<u64>, pin: bool) -> Result<(Bytes, u64)> {
        match self {
            Backing::Local(m) => Ok((m.slice(0..m.len()), 0)),
            Backing::Remote(r) => r.get(range, pin),
        }
    }

    /// The map of a local file (for the page-fault checks).
    pub(crate) fn map(&self) -> Option<&Mapped> {
        match self {
            Backing::Local(m) => Some(m),
            Backing::Remote(_) => None,
        }
    }

    /// The remote requests and bytes so far, as [`ReadStats`] fields (zeros for a local file).
    pub(crate) fn fetched(&self) -> ReadStats {
        match self {
            Backing::Local(_) => ReadStats::default(),
            Backing::Remote(r) => r.source.stats().into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::as_url;
    use std::path::Path;

    #[test]
    fn urls_are_told_from_paths() {
        assert_eq!(as_url(Path::new("s3://b/k.bag")), Some("s3://b/k.bag"));
        assert_eq!(as_url(Path::new("https://h/x.mcap")), Some("https://h/x.mcap"));
        assert_eq!(as_url(Path::new("runs/a.bag")), None);
        assert_eq!(as_url(Path::new("./odd://name")), None);
        assert_eq!(as_url(Path::new("s3://")), None);
    }
}
