//! The open storage seam: a [`Backend`] describes one storage (detect, open, create, reindex,
//! its name and what it can do), and a process-wide registry holds every backend this process
//! knows. [`crate::open`], [`crate::create`] and [`crate::reindex`] dispatch through it, so a
//! backend registered by another crate is found by all of them with no edit here.
//!
//! The built-ins (`ros1`, `sqlite3`, `mcap`) are registered first, in that order.
//!
//! ```
//! let names: Vec<String> = rbag_storage::backends().iter().map(|b| b.name().to_string()).collect();
//! assert_eq!(names[..3], ["ros1", "sqlite3", "mcap"]);
//! assert!(rbag_storage::backend("mcap").unwrap().capabilities().write);
//! ```

use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};

use crate::{
    Compression, Error, Format, ReadOptions, ReindexReport, Result, StorageOptions, StorageReader, StorageWriter,
    WriteOptions,
};

/// What a backend can do, for front ends that list backends or pick one for a job.
///
/// Construct it with `..Capabilities::default()` so new fields do not break a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Capabilities {
    /// [`Backend::open`] reads bags.
    pub read: bool,
    /// [`Backend::create`] writes bags.
    pub write: bool,
    /// [`Backend::reindex`] repairs bags that lost their index.
    pub reindex: bool,
    /// Chunk compressions [`WriteOptions::compression`] may ask for (besides none).
    pub compressions: &'static [Compression],
    /// A bag may be split across several files.
    pub splits: bool,
    /// A bag is (or may be) a directory rather than one file.
    pub directory: bool,
    /// Message encodings the storage can hold (`ros1`, `cdr`), the one written by default
    /// first; empty means any, and a copy keeps each message's own encoding.
    pub encodings: &'static [&'static str],
}

/// One key a backend accepts in [`StorageOptions`], for listing and validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct OptionSpec {
    /// The key, e.g. `preset`.
    pub key: &'static str,
    /// The values it takes, as a user reads them (`fastwrite|zstd_fast|zstd_small`).
    pub values: &'static str,
    /// What it does, one line.
    pub doc: &'static str,
}

/// A backend as listings show it (`rbag list storage --json`, a binding's list of storages).
#[derive(Debug, Clone, serde::Serialize)]
pub struct BackendSummary {
    /// [`Backend::name`].
    pub name: String,
    /// [`Backend::description`].
    pub description: String,
    /// [`Backend::extensions`], the one written by default first.
    pub extensions: Vec<String>,
    /// [`Backend::capabilities`].
    #[serde(flatten)]
    pub capabilities: Capabilities,
    /// [`Backend::options`].
    pub options: Vec<OptionSpec>,
}

/// Every registered backend, in registry order, as listings show it.
pub fn summaries() -> Vec<BackendSummary> {
    backends()
        .iter()
        .map(|b| BackendSummary {
            name: b.name().into(),
            description: b.description().into(),
            extensions: b.extensions().iter().map(|e| e.to_string()).collect(),
            capabilities: b.capabilities(),
            options: b.options().to_vec(),
        })
        .collect()
}

/// A storage backend. Implement it, then [`register`] it once at start.
///
/// Only `name`, `description`, `extensions`, `capabilities`, `detect` and `open` are
/// required; a read-only backend keeps the default `create`, and one without a repair keeps
/// the default `reindex`, both of which fail with [`Error::Unsupported`].
pub trait Backend: Send + Sync {
    /// The storage id users select it by (`-s NAME`), as rosbag2's `storage_identifier`.
    fn name(&self) -> &str;

    /// One line saying what the storage is.
    fn description(&self) -> &str;

    /// File extensions (no dot) a bag of this storage is written with; the first is the one a
    /// front end proposes. Extensions alone never make [`crate::detect`] pick a backend.
    fn extensions(&self) -> &[&str];

    /// What the backend can do.
    fn capabilities(&self) -> Capabilities;

    /// The keys of [`StorageOptions`] the backend accepts. [`crate::create_named`] refuses any
    /// other key with [`Error::BadOption`] before calling [`Backend::create`].
    fn options(&self) -> &[OptionSpec] {
        &[]
    }

    /// Whether `path` holds a bag of this storage. `head` is the start of the file (up to
    /// [`HEAD_LEN`] bytes; empty for a directory). An error means the bag is of this storage
    /// but cannot be read (an unsupported version, a broken description file), and is
    /// reported if no other backend claims the path.
    fn detect(&self, path: &Path, head: &[u8]) -> Result<bool>;

    /// Opens the bag at `path` for reading.
    fn open(&self, path: &Path, options: &ReadOptions) -> Result<Box<dyn StorageReader>>;

    /// Creates a bag at `path`, laid out and named as `name` would be (`path` is a staging
    /// name beside `name`; see [`crate::create_at`]). `path` does not exist yet.
    fn create(
        &self,
        path: &Path,
        name: &Path,
        options: &WriteOptions,
        storage: &StorageOptions,
    ) -> Result<Box<dyn StorageWriter>> {
        let _ = (path, name, options, storage);
        Err(Error::Unsupported { backend: self.name().into(), what: "writing" })
    }

    /// Rebuilds the index of a bag that lost it into `output` (after renaming the input to
    /// `backup` when repairing in place); see [`crate::reindex`].
    fn reindex(&self, input: &Path, output: &Path, backup: Option<&Path>, replace: bool) -> Result<ReindexReport> {
        let _ = (input, output, backup, replace);
        Err(Error::Unsupported { backend: self.name().into(), what: "reindex" })
    }
}

impl std::fmt::Debug for dyn Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Backend({})", self.name())
    }
}

impl PartialEq<Format> for Arc<dyn Backend> {
    fn eq(&self, other: &Format) -> bool {
        self.name() == other.name()
    }
}

/// How many bytes of a file [`Backend::detect`] is shown.
pub const HEAD_LEN: usize = 256;

fn registry() -> &'static RwLock<Vec<Arc<dyn Backend>>> {
    static REGISTRY: OnceLock<RwLock<Vec<Arc<dyn Backend>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(crate::builtin::all()))
}

/// Adds `backend` to the process-wide registry, after those already there. A backend with the
/// same name is replaced in its place, so registering twice is harmless.
pub fn register(backend: Arc<dyn Backend>) {
    let mut all = registry().write().unwrap_or_else(|e| e.into_inner());
    match all.iter().position(|b| b.name() == backend.name()) {
        Some(i) => all[i] = backend,
        None => all.push(backend),
    }
}

/// Every registered backend, in registration order (built-ins first).
pub fn backends() -> Vec<Arc<dyn Backend>> {
    registry().read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The registered backend named `name`, if any.
pub fn backend(name: &str) -> Option<Arc<dyn Backend>> {
    registry().read().unwrap_or_else(|e| e.into_inner()).iter().find(|b| b.name() == name).cloned()
}

/// [`backend`], or [`Error::UnknownStorage`] naming the ones there are.
pub fn lookup(name: &str) -> Result<Arc<dyn Backend>> {
    backend(name).ok_or_else(|| Error::UnknownStorage { name: name.into(), known: names().join(", ") })
}

/// The names of every registered backend, in registration order.
pub fn names() -> Vec<String> {
    backends().iter().map(|b| b.name().to_string()).collect()
}

/// The first registered backend that writes and lists `ext` (no dot) among its extensions.
pub fn backend_for_extension(ext: &str) -> Option<Arc<dyn Backend>> {
    backends()
        .into_iter()
        .find(|b| b.capabilities().write && b.extensions().iter().any(|e| e.eq_ignore_ascii_case(ext)))
}

/// Something that names a backend: a [`Format`], a name, or the backend itself. The `create*`
/// entry points take any of them.
pub trait IntoBackend {
    /// The registered backend this names.
    fn into_backend(self) -> Result<Arc<dyn Backend>>;
}

impl IntoBackend for Format {
    fn into_backend(self) -> Result<Arc<dyn Backend>> {
        lookup(self.name())
    }
}

impl IntoBackend for &str {
    fn into_backend(self) -> Result<Arc<dyn Backend>> {
        lookup(self)
    }
}

impl IntoBackend for &String {
    fn into_backend(self) -> Result<Arc<dyn Backend>> {
        lookup(self)
    }
}

impl IntoBackend for Arc<dyn Backend> {
    fn into_backend(self) -> Result<Arc<dyn Backend>> {
        Ok(self)
    }
}

impl IntoBackend for &Arc<dyn Backend> {
    fn into_backend(self) -> Result<Arc<dyn Backend>> {
        Ok(self.clone())
    }
}

/// The backend that recognises `path`: the first, in registration order, whose
/// [`Backend::detect`] says yes. When none does, the first error a backend gave (a bag of its
/// storage it cannot read), else [`Error::UnknownFormat`].
pub fn detect_backend(path: &Path) -> Result<Arc<dyn Backend>> {
    let is_dir = path.is_dir();
    let head = if is_dir { Vec::new() } else { crate::sniff::head(path, HEAD_LEN)? };
    let mut first_error = None;
    for b in backends() {
        match b.detect(path, &head) {
            Ok(true) => return Ok(b),
            Ok(false) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| Error::UnknownFormat {
        path: path.into(),
        reason: if is_dir {
            "a directory without metadata.yaml or .db3/.mcap files".into()
        } else {
            "unrecognised magic bytes".into()
        },
    }))
}
