//! The entry points that pick a backend: every one dispatches through the registry
//! ([`crate::registry`]), so registered backends are reached exactly like the built-ins.

use std::path::Path;
use std::sync::Arc;

use crate::output::{self, Staged, StagedWriter};
use crate::registry::{self, Backend, IntoBackend};
use crate::{
    Error, OutputPolicy, ReadOptions, ReindexReport, Result, StorageOptions, StorageReader, StorageWriter, WriteOptions,
};

/// A built-in storage. It names one of the built-in backends; every backend (these and the
/// registered ones) is reached through [`crate::backend`] by name, and every `create*` entry
/// point takes a `Format`, a name or a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// ROS 1 bag v2.0.
    Ros1,
    /// rosbag2 SQLite3 (`.db3`).
    Sqlite3,
    /// MCAP.
    Mcap,
}

impl Format {
    /// The built-ins, in registration order.
    pub const ALL: [Format; 3] = [Format::Ros1, Format::Sqlite3, Format::Mcap];

    /// The backend name (storage id): `ros1`, `sqlite3`, `mcap`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Ros1 => "ros1",
            Format::Sqlite3 => "sqlite3",
            Format::Mcap => "mcap",
        }
    }

    /// The built-in named `name`; `None` for any other name, including registered backends
    /// (look those up with [`crate::backend`]).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The registered backend of this storage.
    pub fn backend(self) -> Arc<dyn Backend> {
        // The built-ins are registered when the registry is made, and a replacement keeps the name.
        registry::lookup(self.name()).expect("built-in backends are always registered")
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Format::from_name(s)
            .ok_or_else(|| Error::UnknownStorage { name: s.into(), known: Format::ALL.map(Format::name).join(", ") })
    }
}

/// Recognises a bag of a built-in storage by its first bytes; a directory is a rosbag2 bag,
/// recognised by its metadata.yaml or its first storage file. Goes through the registry: a bag
/// a registered backend recognises is an [`Error::UnknownFormat`] here, naming that backend
/// ([`detect_backend`](crate::detect_backend) returns any backend).
pub fn detect(path: &Path) -> Result<Format> {
    let backend = registry::detect_backend(path)?;
    Format::from_name(backend.name()).ok_or_else(|| Error::UnknownFormat {
        path: path.into(),
        reason: format!("a {} bag, which is not a built-in storage", backend.name()),
    })
}

/// Opens a bag for reading, whatever its storage.
pub fn open(path: &Path) -> Result<Box<dyn StorageReader>> {
    open_with(path, &ReadOptions::default())
}

/// Opens a bag for reading, whatever its storage, with `options` ([`open`] uses the defaults:
/// a message on an undeclared connection fails the read).
pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Box<dyn StorageReader>> {
    if let Some(url) = crate::source::as_url(path) {
        return open_url(url, options);
    }
    let backend = registry::detect_backend(path)?;
    if !backend.capabilities().read {
        return Err(Error::Unsupported { backend: backend.name().into(), what: "reading" });
    }
    backend.open(path, options)
}

/// Opens the bag at `url` through the registered remote opener ([`crate::source`]): by its
/// first bytes, a ROS 1 bag or a single MCAP or SQLite file; or, at a URL prefix with a
/// metadata.yaml, a rosbag2 directory.
fn open_url(url: &str, options: &ReadOptions) -> Result<Box<dyn StorageReader>> {
    use crate::rosbag2::Rosbag2Reader;
    let dir = |e: Error| match Rosbag2Reader::from_url_dir(url, options)? {
        Some(r) => Ok(Box::new(r) as Box<dyn StorageReader>),
        None => Err(e),
    };
    if url.ends_with('/') || url.ends_with(crate::rosbag2::metadata::FILE_NAME) {
        return dir(Error::Remote {
            url: url.into(),
            reason: format!("no {} there", crate::rosbag2::metadata::FILE_NAME),
        });
    }
    // A directory is no object of its own: a failed open may still find its metadata.yaml.
    let source = match crate::source::open_url(url) {
        Ok(s) => s,
        Err(e) => return dir(e),
    };
    // The format's magic, and for ROS 1 the whole bag header record.
    let head = crate::source::head(&*source)?;
    match crate::sniff::file_format(std::path::Path::new(url), &head)? {
        Some(Format::Ros1) => Ok(Box::new(crate::ros1::Ros1Reader::from_source(source, head, options)?)),
        Some(Format::Mcap | Format::Sqlite3) => Ok(Box::new(Rosbag2Reader::from_source(source, head, options)?)),
        // A web server's page for a directory, say.
        None => dir(Error::Remote { url: url.into(), reason: "not a bag: unrecognised first bytes".into() }),
    }
}

/// Creates a bag for writing in `storage` (a [`Format`], a backend name or a backend): a ROS 1
/// file, or a rosbag2 directory (a single storage file when `path` ends in `.db3`/`.mcap`). An
/// existing output is an error.
///
/// The bag is written under a hidden temporary name beside `path` and renamed into place by
/// [`StorageWriter::finish`]; a writer dropped unfinished leaves nothing (see [`crate::output`]).
pub fn create(path: &Path, storage: impl IntoBackend, options: &WriteOptions) -> Result<Box<dyn StorageWriter>> {
    create_with(path, storage, options, &OutputPolicy::default())
}

/// [`create`] with the inputs the output must not touch, and whether an existing bag at `path`
/// is replaced (only once the new one is complete). See [`crate::output::check`].
pub fn create_with(
    path: &Path,
    storage: impl IntoBackend,
    options: &WriteOptions,
    policy: &OutputPolicy,
) -> Result<Box<dyn StorageWriter>> {
    create_named(path, storage, options, &StorageOptions::default(), policy)
}

/// The general entry point for writing: [`create_with`] plus the backend's own settings
/// (`storage`, checked against [`Backend::options`]). Front ends that take `-s NAME` pass the
/// name as it is.
///
/// ```no_run
/// use rbag_storage::{OutputPolicy, StorageOptions, WriteOptions};
/// let storage = StorageOptions::parse("preset=resilient")?;
/// let w = rbag_storage::create_named(
///     "out.db3".as_ref(), "sqlite3", &WriteOptions::default(), &storage, &OutputPolicy::default())?;
/// w.finish()?;
/// # Ok::<(), rbag_storage::Error>(())
/// ```
pub fn create_named(
    path: &Path,
    storage: impl IntoBackend,
    options: &WriteOptions,
    storage_options: &StorageOptions,
    policy: &OutputPolicy,
) -> Result<Box<dyn StorageWriter>> {
    let backend = writable(storage, storage_options)?;
    let staged = Staged::new(output::check(path, policy)?)?;
    let inner = backend.create(staged.temp(), staged.target(), options, storage_options)?;
    Ok(Box::new(StagedWriter::new(inner, staged)))
}

/// Creates the bag at `path` directly, named as `name` would be (a rosbag2 directory names its
/// files after it). Recorders use it for their `.active` files; everything else goes through
/// [`create`].
pub fn create_at(
    path: &Path,
    name: &Path,
    storage: impl IntoBackend,
    options: &WriteOptions,
) -> Result<Box<dyn StorageWriter>> {
    let backend = writable(storage, &StorageOptions::default())?;
    backend.create(path, name, options, &StorageOptions::default())
}

/// The backend `storage` names, checked to write and to accept every key of `options`.
fn writable(storage: impl IntoBackend, options: &StorageOptions) -> Result<Arc<dyn Backend>> {
    let backend = storage.into_backend()?;
    if !backend.capabilities().write {
        return Err(Error::Unsupported { backend: backend.name().into(), what: "writing" });
    }
    options.check(backend.name(), backend.options())?;
    Ok(backend)
}

/// Rebuilds the index of a bag that lost it, writing the repaired bag to `output` (and first
/// renaming the input to `backup` when repairing in place). The input is never modified when
/// this fails. An existing `output` is replaced only with `replace`, and only if it is a bag.
pub fn reindex(input: &Path, output: &Path, backup: Option<&Path>, replace: bool) -> Result<ReindexReport> {
    if input.is_dir() {
        // A broken metadata.yaml is what directory reindex repairs, so detection may fail: a
        // directory no backend claims is handed to rosbag2's reindex.
        if let Ok(backend) = registry::detect_backend(input) {
            if Format::from_name(backend.name()).is_none() {
                return backend.reindex(input, output, backup, replace);
            }
        }
        return crate::rosbag2::reindex(input);
    }
    let backend = registry::detect_backend(input)?;
    backend.reindex(input, output, backup, replace).map_err(|e| e.in_file(input))
}
