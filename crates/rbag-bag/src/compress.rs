//! Compressing and decompressing bags in place, as `rosbag compress` / `rosbag decompress` do:
//! a ROS 1 bag's chunks (bz2, lz4), an MCAP file's chunks (zstd, lz4), a rosbag2 directory's
//! zstd (whole files or each message, rosbag2's `compression_mode`). The original is kept as
//! `NAME.orig.EXT` (`DIR.orig` for a directory) unless asked not to.
//!
//! # The original is never lost
//!
//! Whatever instant the process dies at (SIGKILL, power loss after the syncs), the bag `X` or
//! its backup `B` (or both) is a complete bag, and running the command again does the right
//! thing. All the work happens in a hidden work directory `W` = `.NAME.rbag-compress` beside
//! `X` (same file system, so renames are atomic), locked by `W/lock` (an advisory lock, released
//! by the kernel when the process dies) so that two runs never rewrite one bag together:
//!
//! 1. The new bag is written to `N` = `W/NAME` (staged and synced by [`crate::convert`]), its
//!    messages counted against the original's. Until here `X` is untouched; dying leaves only
//!    `W`, which the next run empties.
//! 2. A file, with a backup: `B` is made a hard link to `X` (`link(2)`; with `force` an earlier
//!    backup is replaced by renaming a fresh link over it), then `N` is renamed over `X`
//!    (`rename(2)` replaces atomically). `X` exists at every instant: the original, then the
//!    new bag. Dying between the two leaves `B` and `X` the same file; the next run sees that
//!    (same device and inode), drops the extra name and starts again. (On a file system
//!    without hard links, `X` is renamed to `B` instead, as for a directory.)
//! 3. A directory, with a backup: `X` is renamed to `B`, then `N` to `X`. Dying between the
//!    two leaves `X` missing, `B` complete and `W` present: the next run says so and renames
//!    `B` back to `X` before starting again. (A missing `X` with `B` but no `W` is not ours to
//!    guess about: it is an error saying how to restore it.)
//! 4. A file without a backup: `N` is renamed over `X` (atomic). A directory without a backup:
//!    `X` is renamed to `W/orig`, `N` to `X`, then `W` is removed. Dying between the renames
//!    leaves `X` missing and the original complete in `W/orig`, which the next run renames back
//!    before anything else, and never deletes while `X` is missing.
//! 5. The parent directory is synced after each rename, and `W` removed last.
//!
//! Nothing in `W` is ever the only copy of the bag except `W/orig` while `X` is missing, and
//! that case is recovered before `W` is cleaned. See `docs/compress.md`.
//!
//! What is kept: every message (topic, log and publish time, bytes), the connections, MCAP
//! attachments and metadata records (as [`crate::convert`] carries them), the chunk size (about:
//! estimated from the original's chunks), rosbag2's metadata version and distro.
//! What is not: a split rosbag2 directory comes out as one storage file.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rbag_storage::{Compression, CompressionMode, Format, StorageInfo, WriteOptions};

use crate::{Bag, ConvertOptions, Progress};

/// How to compress.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompressOptions {
    /// Chunk compression of a ROS 1 bag (bz2, lz4) or an MCAP file (zstd, lz4); `None` is the
    /// format's usual one (bz2 as `rosbag compress`, zstd as rosbag2's MCAP). Not for a rosbag2
    /// directory.
    pub compression: Option<Compression>,
    /// rosbag2 directories only: zstd on whole files ([`CompressionMode::File`], the default)
    /// or each message ([`CompressionMode::Message`], SQLite3 only).
    pub mode: Option<CompressionMode>,
}

/// What to keep when a bag is rewritten in place.
#[derive(Debug, Clone, Copy, Default)]
pub struct InPlace {
    /// Keep no backup of the original (by default it is kept as [`backup_path`]).
    pub no_backup: bool,
    /// Replace an existing backup (only a bag; refused otherwise).
    pub force: bool,
}

/// What [`compress`] or [`decompress`] did to one bag.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompressReport {
    /// The bag.
    pub path: PathBuf,
    /// False when the bag already had the compression asked for and was left alone.
    pub rewritten: bool,
    /// Its compression before, as `rbag info` words it (`bz2`, `none`, `zstd file`).
    pub before: String,
    /// Its compression now.
    pub after: String,
    /// Bytes on disk before.
    pub size_before: u64,
    /// Bytes on disk now.
    pub size_after: u64,
    /// Messages in the bag.
    pub messages: u64,
    /// Where the original was kept.
    pub backup: Option<PathBuf>,
    /// What was put right from an earlier run that was interrupted, if anything.
    pub recovered: Option<String>,
}

/// Why a bag could not be compressed or decompressed. Whatever the error, the bag (or, after
/// an interrupted run, its backup) is left complete.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompressError {
    /// Reading the bag or writing the new one failed.
    #[error(transparent)]
    Bag(#[from] crate::Error),
    /// A file-system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path it failed on.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The bag does not exist.
    #[error("{} does not exist{}", path.display(), match backup {
        Some(b) => format!("; its backup {} does (restore it with `mv {} {}`)", b.display(), b.display(), path.display()),
        None => String::new(),
    })]
    Missing {
        /// The bag asked for.
        path: PathBuf,
        /// Its backup, when that exists.
        backup: Option<PathBuf>,
    },
    /// The backup name is taken and replacing it was not asked for.
    #[error("{}: its backup {} already exists; nothing was changed", path.display(), backup.display())]
    BackupExists {
        /// The bag.
        path: PathBuf,
        /// The existing backup.
        backup: PathBuf,
    },
    /// Another run is rewriting the same bag.
    #[error("{}: another rbag run is rewriting it (it holds {}); nothing was changed", path.display(), lock.display())]
    Busy {
        /// The bag.
        path: PathBuf,
        /// The lock file held.
        lock: PathBuf,
    },
    /// This bag cannot take that compression, or cannot be rewritten in place.
    #[error("{}: {reason}", path.display())]
    Unsupported {
        /// The bag.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The rewritten bag does not hold what the original holds; the original is untouched.
    #[error("{}: the rewritten bag would not hold every message ({reason}); the original is left unchanged", path.display())]
    Incomplete {
        /// The bag.
        path: PathBuf,
        /// What differs.
        reason: String,
    },
}

/// The result of [`compress`] and [`decompress`].
pub type Result<T, E = CompressError> = std::result::Result<T, E>;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CompressError + '_ {
    move |source| CompressError::Io { path: path.into(), source }
}

/// Compresses the bag at `path` in place (see the [module docs](self) for how the original is
/// kept safe). A bag already compressed so is left alone and reported as not rewritten.
pub fn compress(
    path: &Path,
    options: &CompressOptions,
    in_place: &InPlace,
    progress: &mut dyn FnMut(Progress),
) -> Result<CompressReport> {
    rewrite(path, Some(options), in_place, progress)
}

/// Decompresses the bag at `path` in place: no chunk compression, no rosbag2 zstd.
pub fn decompress(path: &Path, in_place: &InPlace, progress: &mut dyn FnMut(Progress)) -> Result<CompressReport> {
    rewrite(path, None, in_place, progress)
}

/// The backup name of `path`, as rosbag names it: `NAME.orig.EXT` for a file (`run.bag` →
/// `run.orig.bag`), `NAME.orig` for a directory or a file without extension.
pub fn backup_path(path: &Path) -> PathBuf {
    backup_path_for(path, path.is_dir())
}

/// [`backup_path`] for a bag that is a directory (`dir`) or a file, whether it exists or not.
pub fn backup_path_for(path: &Path, dir: bool) -> PathBuf {
    use std::ffi::OsString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let name = path.file_name().map(|n| n.as_bytes()).unwrap_or_default();
    let split = if dir { None } else { name.iter().rposition(|&b| b == b'.').filter(|&i| i > 0) };
    let (stem, ext) = match split {
        Some(i) => name.split_at(i),
        None => (name, &b""[..]),
    };
    let mut v = stem.to_vec();
    v.extend_from_slice(b".orig");
    v.extend_from_slice(ext);
    path.with_file_name(OsString::from_vec(v))
}

/// The hidden work directory beside `path`.
pub fn work_dir(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "bag".into());
    path.with_file_name(format!(".{name}.rbag-compress"))
}

/// What a bag is and how it is compressed now.
struct Current {
    format: Format,
    dir: bool,
    /// Chunk compression name → chunks, over every storage file.
    chunks: BTreeMap<String, u64>,
    mode: CompressionMode,
    info: StorageInfo,
}

impl Current {
    fn describe(&self) -> String {
        let chunks = match self.chunks.len() {
            0 => "none".to_string(),
            1 => self.chunks.keys().next().cloned().unwrap_or_default(),
            _ => self.chunks.iter().map(|(k, n)| format!("{k} ({n} chunks)")).collect::<Vec<_>>().join(", "),
        };
        match (self.mode, chunks.as_str()) {
            (CompressionMode::None, _) => chunks,
            (m, "none") => format!("zstd {}", mode_name(m)),
            (m, c) => format!("zstd {} ({c} chunks)", mode_name(m)),
        }
    }

    /// The chunk compression most chunks have (kept when only the rosbag2 mode changes).
    fn main_chunks(&self) -> Compression {
        self.chunks.iter().max_by_key(|(_, n)| **n).and_then(|(k, _)| k.parse().ok()).unwrap_or(Compression::None)
    }
}

fn mode_name(m: CompressionMode) -> &'static str {
    match m {
        CompressionMode::None => "none",
        CompressionMode::File => "file",
        CompressionMode::Message => "message",
    }
}

/// The compression a rewrite aims at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wanted {
    /// Chunk compression; `None`: kept as it is.
    chunks: Option<Compression>,
    mode: CompressionMode,
}

fn current(path: &Path, bag: &Bag) -> Result<Current> {
    let info = bag.storage_info()?;
    let format = Format::from_name(info.format).ok_or_else(|| CompressError::Unsupported {
        path: path.into(),
        reason: format!("rbag compresses ROS 1, MCAP and rosbag2 bags, not {} storage", info.format),
    })?;
    let dir = path.is_dir();
    let chunks = info.compression.iter().map(|(k, s)| (k.clone(), s.chunks)).collect();
    let mode = match info.properties.get("compression").map(|c| c.rsplit(' ').next().unwrap_or_default()) {
        Some("file") => CompressionMode::File,
        Some("message") => CompressionMode::Message,
        _ => CompressionMode::None,
    };
    Ok(Current { format, dir, chunks, mode, info })
}

/// What `options` asks of this bag (`None` options: decompress).
fn wanted(path: &Path, cur: &Current, options: Option<&CompressOptions>) -> Result<Wanted> {
    let unsupported = |reason: String| CompressError::Unsupported { path: path.into(), reason };
    let Some(o) = options else {
        return Ok(Wanted { chunks: Some(Compression::None), mode: CompressionMode::None });
    };
    if cur.dir {
        if let Some(c) = o.compression {
            return Err(unsupported(format!(
                "a rosbag2 directory is compressed with zstd per file or per message (a compression mode), not {} chunks",
                c.name()
            )));
        }
        let mode = o.mode.unwrap_or(CompressionMode::File);
        if mode == CompressionMode::Message && cur.format == Format::Mcap {
            return Err(unsupported(
                "an MCAP bag compresses whole chunks, not single messages (rosbag2's MCAP plugin refuses message mode too); use file mode".into(),
            ));
        }
        if mode == CompressionMode::None {
            return Err(unsupported("compression mode none is what decompress does".into()));
        }
        return Ok(Wanted { chunks: None, mode });
    }
    if let Some(m) = o.mode.filter(|m| *m != CompressionMode::None) {
        return Err(unsupported(format!(
            "compression mode {} applies to rosbag2 directories (metadata.yaml says how their files are compressed); this is a single {} file",
            mode_name(m),
            cur.format
        )));
    }
    let c = o.compression.unwrap_or(match cur.format {
        Format::Ros1 => Compression::Bz2,
        _ => Compression::Zstd,
    });
    let allowed = cur.format.backend().capabilities().compressions;
    if c != Compression::None && !allowed.contains(&c) {
        let names = allowed.iter().map(|c| c.name()).collect::<Vec<_>>().join(" or ");
        return Err(unsupported(format!("a {} bag's chunks take {names}, not {}", cur.format, c.name())));
    }
    Ok(Wanted { chunks: Some(c), mode: CompressionMode::None })
}

/// Whether the bag already is as wanted.
fn satisfied(cur: &Current, want: &Wanted) -> bool {
    if cur.mode != want.mode {
        return false;
    }
    match want.chunks {
        None => true,
        Some(Compression::None) => cur.chunks.keys().all(|k| k == "none"),
        Some(c) => (cur.info.message_count == 0 || !cur.chunks.is_empty()) && cur.chunks.keys().all(|k| k == c.name()),
    }
}

/// The chunk size the original was written with, about. A chunk is flushed once it reaches the
/// threshold `T`, so every chunk but the last holds `T` plus about half a message, and the last
/// about half of `T`: with `n` chunks of `bytes` in all and messages of `m` bytes on average,
/// `bytes ≈ (n - 1)(T + m/2) + T/2`.
fn chunk_size(info: &StorageInfo) -> u64 {
    let default = WriteOptions::default().chunk_size;
    let chunks: u64 = info.compression.values().map(|s| s.chunks).sum();
    let bytes: u64 = info.compression.values().map(|s| s.uncompressed_bytes).sum();
    match chunks {
        0 => default,
        1 => default.max(bytes + 1),
        n => {
            let (n, bytes) = (n as f64, bytes as f64);
            let m = bytes / (info.message_count.max(1) as f64);
            ((bytes - (n - 1.0) * m / 2.0) / (n - 0.5)).max(1.0) as u64
        }
    }
}

fn write_options(path: &Path, bag: &Bag, cur: &Current, want: &Wanted) -> Result<ConvertOptions> {
    let mut write = WriteOptions {
        compression: want.chunks.unwrap_or_else(|| cur.main_chunks()),
        chunk_size: chunk_size(&cur.info),
        ..WriteOptions::default()
    };
    if cur.format == Format::Sqlite3 {
        write.compression = Compression::None;
    }
    write.rosbag2.compression_mode = want.mode;
    let props = &cur.info.properties;
    if let Some(v) = props.get("metadata_version").and_then(|v| v.parse().ok()) {
        write.rosbag2.metadata_version = v;
    }
    if let Some(d) = props.get("ros_distro").filter(|d| !d.is_empty()) {
        write.rosbag2.ros_distro = d.clone();
    }
    // The same encoding out as in: an MCAP file of ROS 1 messages stays one.
    let encodings: std::collections::BTreeSet<&str> = bag.connections().iter().map(|c| c.encoding.as_str()).collect();
    if encodings.len() > 1 {
        return Err(CompressError::Unsupported {
            path: path.into(),
            reason: format!(
                "its connections hold several encodings ({}); rbag rewrites bags of one encoding",
                encodings.into_iter().collect::<Vec<_>>().join(", ")
            ),
        });
    }
    Ok(ConvertOptions { write, encoding: encodings.into_iter().next().map(String::from), ..ConvertOptions::default() })
}

/// Test-only: dies at `point` when `RBAG_TEST_COMPRESS_ABORT` names it (debug builds only), as
/// a SIGKILL would: no destructor runs and nothing is cleaned up.
fn test_abort(point: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("RBAG_TEST_COMPRESS_ABORT").is_ok_and(|p| p == point) {
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
}

/// fsyncs a directory so the renames in it survive a crash (best effort: some file systems
/// refuse to sync a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

fn remove_any(path: &Path) -> Result<()> {
    let r = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    r.map_err(io(path))
}

/// The locked work directory of one bag.
struct Work {
    dir: PathBuf,
    /// The bag it is the work directory of.
    bag: PathBuf,
    _lock: File,
}

impl Drop for Work {
    /// On every way out (an error included), removes the work directory, unless it holds the
    /// original moved aside while the bag is missing and putting it back fails.
    fn drop(&mut self) {
        let aside = self.aside();
        if exists(&aside) && !exists(&self.bag) && std::fs::rename(&aside, &self.bag).is_err() {
            return;
        }
        let _ = remove_any(&self.dir);
    }
}

impl Work {
    /// Creates (or reuses a leftover) `W` and takes its lock.
    fn lock(path: &Path, dir: PathBuf) -> Result<Work> {
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let m = std::fs::symlink_metadata(&dir).map_err(io(&dir))?;
                if !m.is_dir() {
                    return Err(CompressError::Unsupported {
                        path: path.into(),
                        reason: format!("{} is in the way of rbag's work directory; move it away", dir.display()),
                    });
                }
            }
            Err(e) => return Err(io(&dir)(e)),
        }
        let lock_path = dir.join("lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        match lock.try_lock() {
            Ok(()) => Ok(Work { dir, bag: path.into(), _lock: lock }),
            Err(std::fs::TryLockError::WouldBlock) => Err(CompressError::Busy { path: path.into(), lock: lock_path }),
            Err(std::fs::TryLockError::Error(e)) => Err(io(&lock_path)(e)),
        }
    }

    fn new_bag(&self, path: &Path) -> PathBuf {
        self.dir.join(path.file_name().unwrap_or_default())
    }

    fn aside(&self) -> PathBuf {
        self.dir.join("orig")
    }

    /// Empties the work directory of an earlier run's leftovers (never the only copy: an
    /// original moved aside is restored before this runs).
    fn clean(&self) -> Result<()> {
        for e in std::fs::read_dir(&self.dir).map_err(io(&self.dir))? {
            let e = e.map_err(io(&self.dir))?;
            if e.file_name() != "lock" {
                remove_any(&e.path())?;
            }
        }
        Ok(())
    }

    /// Removes the work directory (the lock goes with it; it is released when `self` drops).
    fn remove(self) -> Result<()> {
        remove_any(&self.dir)
    }
}

/// Puts right what an interrupted run left, under the lock: a missing bag whose original is in
/// `W/orig` or in its backup is renamed back.
fn recover(path: &Path, work: &Work, backup: &Path) -> Result<Option<String>> {
    if exists(path) {
        return Ok(None);
    }
    let from = if exists(&work.aside()) { work.aside() } else { backup.to_path_buf() };
    if !exists(&from) {
        return Err(CompressError::Missing { path: path.into(), backup: None });
    }
    std::fs::rename(&from, path).map_err(io(path))?;
    sync_dir(parent(path));
    Ok(Some(format!(
        "{} was missing after an interrupted run; its original was put back from {}",
        path.display(),
        from.display()
    )))
}

fn parent(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::symlink_metadata(a), std::fs::symlink_metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

fn disk_size(path: &Path) -> u64 {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::read_dir(path)
            .map(|d| d.flatten().filter_map(|e| e.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

fn rewrite(
    path: &Path,
    options: Option<&CompressOptions>,
    in_place: &InPlace,
    progress: &mut dyn FnMut(Progress),
) -> Result<CompressReport> {
    let unsupported = |reason: &str| CompressError::Unsupported { path: path.into(), reason: reason.into() };
    if path.file_name().is_none() {
        return Err(unsupported("give the bag by its name (not `.`, `..` or `/`)"));
    }
    let work_path = work_dir(path);
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(unsupported(
                "it is a symbolic link; give the bag's own path (rewriting in place would replace the link)",
            ))
        }
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {
            if !exists(&work_path) {
                let backup = backup_path_either(path);
                return Err(CompressError::Missing { path: path.into(), backup: exists(&backup).then_some(backup) });
            }
        }
        Err(e) => return Err(io(path)(e)),
    }
    let work = Work::lock(path, work_path)?;
    // The backup name depends on whether the bag is a directory; decide it once it is back.
    let recovered = recover(path, &work, &backup_path_either(path))?;
    let backup = backup_path(path);
    work.clean()?;
    let is_dir = path.is_dir();
    if !is_dir && path.parent().is_some_and(|p| p.join("metadata.yaml").is_file()) {
        return Err(unsupported(
            "it is a storage file of a rosbag2 directory (metadata.yaml is beside it); compress the directory",
        ));
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if is_dir && matches!(ext, "db3" | "mcap") {
        return Err(unsupported("a rosbag2 directory whose name ends in .db3 or .mcap cannot be rewritten in place"));
    }

    let bag = Bag::open(path)?;
    let cur = current(path, &bag)?;
    if !is_dir && cur.format == Format::Sqlite3 {
        return Err(unsupported(
            "a single .db3 file has no chunks, and rosbag2's zstd modes are recorded in a bag directory's metadata.yaml; convert it into a directory first",
        ));
    }
    let want = wanted(path, &cur, options)?;
    let before = cur.describe();
    let size_before = disk_size(path);
    let mut report = CompressReport {
        path: path.into(),
        rewritten: false,
        before: before.clone(),
        after: before,
        size_before,
        size_after: size_before,
        messages: cur.info.message_count,
        backup: None,
        recovered,
    };
    if satisfied(&cur, &want) {
        drop(bag);
        work.remove()?;
        return Ok(report);
    }
    let lost = bag.lost();
    if !lost.is_empty() {
        return Err(CompressError::Incomplete {
            path: path.into(),
            reason: format!("the original itself cannot be read whole: {}; reindex it first", lost.join("; ")),
        });
    }

    // The backup: an earlier one is replaced only when asked, and only if it is a bag; a
    // hard link to the bag itself is what an interrupted run left.
    let mut old_backup = false;
    if !in_place.no_backup && exists(&backup) {
        if same_file(path, &backup) {
            std::fs::remove_file(&backup).map_err(io(&backup))?;
            sync_dir(parent(path));
        } else if !in_place.force {
            return Err(CompressError::BackupExists { path: path.into(), backup });
        } else {
            let policy = rbag_storage::OutputPolicy { inputs: vec![path.into()], replace: true };
            rbag_storage::output::check(&backup, &policy).map_err(crate::Error::from)?;
            old_backup = true;
        }
    }

    // 1. The new bag, complete and synced, in the work directory.
    let new = work.new_bag(path);
    let storage = cur.format.backend();
    let convert_options = write_options(path, &bag, &cur, &want)?;
    let converted = crate::convert(std::slice::from_ref(&bag), &new, &storage, &convert_options, progress)?;
    if let Some(s) = converted.skipped.first() {
        return Err(CompressError::Incomplete {
            path: path.into(),
            reason: format!("{} messages on {} could not be written: {}", s.messages, s.topic, s.reason),
        });
    }
    let lost = bag.lost();
    drop(bag);
    if !lost.is_empty() {
        return Err(CompressError::Incomplete { path: path.into(), reason: lost.join("; ") });
    }
    let check = Bag::open(&new)?;
    let check_cur = current(&new, &check)?;
    let n = check_cur.info.message_count;
    drop(check);
    if n != cur.info.message_count || converted.messages_written != cur.info.message_count {
        return Err(CompressError::Incomplete {
            path: path.into(),
            reason: format!("{} messages written of {}", n.min(converted.messages_written), cur.info.message_count),
        });
    }
    test_abort("written");

    // 2-4. Into place. A rename that fails puts the original back where it was.
    let dir = parent(path);
    let put_back = |from: &Path, e: std::io::Error| {
        let _ = std::fs::rename(from, path);
        sync_dir(dir);
        io(path)(e)
    };
    if in_place.no_backup {
        if is_dir {
            std::fs::rename(path, work.aside()).map_err(io(path))?;
            sync_dir(dir);
            test_abort("aside");
            std::fs::rename(&new, path).map_err(|e| put_back(&work.aside(), e))?;
        } else {
            std::fs::rename(&new, path).map_err(io(path))?;
        }
    } else {
        let moved = if is_dir {
            if old_backup {
                let old = work.dir.join("old-backup");
                std::fs::rename(&backup, &old).map_err(io(&backup))?;
            }
            rename_fresh(path, &backup)?;
            true
        } else {
            link_backup(path, &backup, &work, old_backup)?
        };
        sync_dir(dir);
        test_abort("backup");
        std::fs::rename(&new, path).map_err(|e| if moved { put_back(&backup, e) } else { io(path)(e) })?;
        report.backup = Some(backup);
    }
    sync_dir(dir);
    test_abort("renamed");
    work.remove()?;
    sync_dir(dir);

    report.rewritten = true;
    report.after = check_cur.describe();
    report.size_after = disk_size(path);
    Ok(report)
}

/// The backup a missing bag may have: as a file's or as a directory's, whichever exists.
fn backup_path_either(path: &Path) -> PathBuf {
    let file = backup_path_for(path, false);
    let dir = backup_path_for(path, true);
    if exists(&file) || !exists(&dir) {
        file
    } else {
        dir
    }
}

/// Renames `from` to `to`, which must not exist.
fn rename_fresh(from: &Path, to: &Path) -> Result<()> {
    if exists(to) {
        return Err(CompressError::BackupExists { path: from.into(), backup: to.into() });
    }
    std::fs::rename(from, to).map_err(io(from))
}

/// Makes `backup` a second name of the file `path` (replacing an old backup when `replace`);
/// where hard links are not possible, renames `path` to `backup` instead and says so (true).
fn link_backup(path: &Path, backup: &Path, work: &Work, replace: bool) -> Result<bool> {
    let linked = if replace {
        let temp = work.dir.join("backup");
        std::fs::hard_link(path, &temp).and_then(|()| std::fs::rename(&temp, backup))
    } else {
        std::fs::hard_link(path, backup)
    };
    match linked {
        Ok(()) => Ok(false),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            Err(CompressError::BackupExists { path: path.into(), backup: backup.into() })
        }
        // No hard links here (some FUSE and network file systems): the rename way, whose
        // window without `path` the next run recovers from.
        Err(_) => std::fs::rename(path, backup).map(|()| true).map_err(io(path)),
    }
}
