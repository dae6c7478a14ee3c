//! Bags read where they lie: `s3://`, `gs://`, `az://`/`abfs://` and `http(s)://` objects,
//! read by byte range through [`object_store`].
//!
//! [`register`] hands rbag-storage an opener for URLs, so every front end that calls it reads
//! URLs wherever it reads paths: the storage readers ask for the byte ranges they need (a ROS 1
//! bag's header and index section for `info`, then only the chunks a read needs) through
//! [`rbag_storage::source::RangeSource`].
//!
//! Credentials and endpoints come from the environment, as object_store reads them: `AWS_*`
//! (with `AWS_ENDPOINT_URL`, and `AWS_ALLOW_HTTP=true` for plain-HTTP test servers),
//! `GOOGLE_*`, `AZURE_*`, and instance or web identity. `~/.aws` profiles are not read.
//!
//! object_store is async. Its runtime is private to this crate: two worker threads, entered
//! only by [`RemoteObject`]'s blocking calls, so the layers above stay synchronous
//! (docs/fleet.md).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use rbag_storage::source::{Listed, RangeSource, SourceStats};
use rbag_storage::{Error, Result};

/// The runtime every remote read runs on, made on first use.
fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            // reqwest is built without a TLS crypto provider of its own (Cargo.toml): install
            // ring's for the process, unless the host program installed one already.
            let _ = rustls::crypto::ring::default_provider().install_default();
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("rbag-remote")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Error::Remote { url: String::new(), reason: format!("cannot start the I/O runtime: {e}") })
}

/// Requests and bytes of every remote object this process opened.
static TOTAL_REQUESTS: AtomicU64 = AtomicU64::new(0);
static TOTAL_BYTES: AtomicU64 = AtomicU64::new(0);

/// Requests made and bytes fetched by every remote read of this process so far (what the
/// CLI's `--stats` prints).
pub fn totals() -> SourceStats {
    SourceStats { requests: TOTAL_REQUESTS.load(Ordering::Relaxed), bytes: TOTAL_BYTES.load(Ordering::Relaxed) }
}

/// What to tell a user who set `AWS_PROFILE` and reads `url`: object_store does not read
/// `~/.aws` profiles, so the profile's credentials and region are not used.
pub fn profile_warning(url: &str) -> Option<String> {
    let profile = std::env::var("AWS_PROFILE").ok().filter(|p| !p.is_empty())?;
    url.starts_with("s3://").then(|| {
        format!(
            "AWS_PROFILE={profile} is set, but profiles in ~/.aws are not read: give AWS_ACCESS_KEY_ID, \
             AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) and AWS_REGION, or use instance or web identity"
        )
    })
}

/// Makes rbag-storage open URLs through this crate. Call once, early (the CLI and the Python
/// module do); later calls do nothing.
pub fn register() {
    rbag_storage::source::register_opener(|url| Ok(Arc::new(RemoteObject::open(url)?) as Arc<dyn RangeSource>));
    rbag_storage::source::register_lister(list);
}

/// The store and object path a URL names, with credentials and endpoints from the environment.
fn store_for(url: &str) -> Result<(Arc<dyn ObjectStore>, ObjectPath)> {
    let parsed = url::Url::parse(url).map_err(|e| failed(url, format!("not a URL: {e}")))?;
    // An `http://` URL asks for plain HTTP itself; object stores need AWS_ALLOW_HTTP and the like.
    let plain = (parsed.scheme() == "http").then(|| ("allow_http".to_string(), "true".to_string()));
    let options = std::env::vars().chain(plain);
    let (store, path) = object_store::parse_url_opts(&parsed, options).map_err(|e| failed(url, e))?;
    Ok((Arc::from(store), path))
}

/// Every object under the URL prefix `url`, at any depth: one `LIST` request per page.
pub fn list(url: &str) -> Result<Vec<Listed>> {
    use futures_util::TryStreamExt;
    let runtime = runtime()?;
    let (store, prefix) = store_for(url)?;
    // An object's URL is the prefix URL with the object's path in place of the URL's path.
    let mut base = url::Url::parse(url).map_err(|e| failed(url, format!("not a URL: {e}")))?;
    base.set_path("");
    base.set_query(None);
    let base = base.as_str().trim_end_matches('/').to_string();
    let found = runtime
        .block_on(async move { store.list(Some(&prefix)).try_collect::<Vec<_>>().await })
        .map_err(|e| failed(url, e))?;
    TOTAL_REQUESTS.fetch_add(1, Ordering::Relaxed);
    Ok(found
        .into_iter()
        .map(|m| Listed {
            url: format!("{base}/{}", m.location),
            size: m.size,
            version: m.e_tag.or_else(|| Some(m.last_modified.to_rfc3339())),
        })
        .collect())
}

/// One object in a bucket or on a web server, opened for range reads.
pub struct RemoteObject {
    url: String,
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    size: u64,
    etag: Option<String>,
    counts: Arc<Counts>,
    /// Ranges being fetched ahead of their reading ([`RangeSource::prefetch`]), oldest first.
    ahead: Mutex<VecDeque<(Range<u64>, Fetch)>>,
}

type Fetch = tokio::task::JoinHandle<object_store::Result<Bytes>>;

/// Ranges fetched ahead and not read are dropped (their requests cancelled) beyond this many.
const MAX_AHEAD: usize = 8;

/// Requests made and bytes fetched, by one object and by the process.
#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl Counts {
    fn add(&self, bytes: usize) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        TOTAL_REQUESTS.fetch_add(1, Ordering::Relaxed);
        TOTAL_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for RemoteObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteObject").field("url", &self.url).field("size", &self.size).finish()
    }
}

impl Drop for RemoteObject {
    /// Cancels the fetches ahead that nobody will read.
    fn drop(&mut self) {
        for (_, f) in self.ahead.get_mut().unwrap_or_else(|e| e.into_inner()).drain(..) {
            f.abort();
        }
    }
}

/// A failed request, naming the URL; object_store's message carries the HTTP status.
fn failed(url: &str, e: impl std::fmt::Display) -> Error {
    Error::Remote { url: url.to_string(), reason: e.to_string() }
}

impl RemoteObject {
    /// Opens `url`: one `HEAD` request for its size and ETag.
    pub fn open(url: &str) -> Result<RemoteObject> {
        let runtime = runtime()?;
        let (store, path) = store_for(url)?;
        let counts = Arc::new(Counts::default());
        counts.add(0);
        let head = {
            let (store, path) = (store.clone(), path.clone());
            runtime.block_on(async move { store.head(&path).await }).map_err(|e| failed(url, e))?
        };
        Ok(RemoteObject {
            url: url.to_string(),
            store,
            path,
            size: head.size,
            etag: head.e_tag,
            counts,
            ahead: Mutex::new(VecDeque::new()),
        })
    }

    /// The object's ETag, when the server gives one.
    pub fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }

    /// A request for `range`, counted when its answer arrives.
    fn fetch(
        &self,
        range: Range<u64>,
    ) -> impl std::future::Future<Output = object_store::Result<Bytes>> + Send + 'static {
        let (store, path, counts) = (self.store.clone(), self.path.clone(), self.counts.clone());
        async move {
            let got = store.get_range(&path, range).await?;
            counts.add(got.len());
            Ok(got)
        }
    }

    fn get(&self, range: Range<u64>) -> Result<Bytes> {
        let runtime = runtime()?;
        let asked = {
            let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
            ahead.iter().position(|(r, _)| *r == range).and_then(|i| ahead.remove(i)).map(|(_, f)| f)
        };
        let got = match asked {
            Some(f) => runtime.block_on(f).map_err(|e| failed(&self.url, e))?,
            None => runtime.block_on(self.fetch(range.clone())),
        }
        .map_err(|e| failed(&self.url, e))?;
        if got.len() as u64 != range.end - range.start {
            return Err(failed(
                &self.url,
                format!("asked for bytes {}..{}, the server sent {}", range.start, range.end, got.len()),
            ));
        }
        Ok(got)
    }
}

impl RangeSource for RemoteObject {
    fn url(&self) -> &str {
        &self.url
    }

    fn len(&self) -> u64 {
        self.size
    }

    fn read(&self, offset: u64, len: u64) -> Result<Bytes> {
        if len == 0 {
            return Ok(Bytes::new());
        }
        self.get(offset..offset + len)
    }

    fn stats(&self) -> SourceStats {
        SourceStats {
            requests: self.counts.requests.load(Ordering::Relaxed),
            bytes: self.counts.bytes.load(Ordering::Relaxed),
        }
    }

    fn prefetch(&self, ranges: &[Range<u64>]) {
        let Ok(runtime) = runtime() else { return };
        let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
        for r in ranges.iter().filter(|r| !r.is_empty()) {
            if ahead.iter().any(|(a, _)| a == r) {
                continue;
            }
            if ahead.len() == MAX_AHEAD {
                if let Some((_, f)) = ahead.pop_front() {
                    f.abort();
                }
            }
            ahead.push_back((r.clone(), runtime.spawn(self.fetch(r.clone()))));
        }
    }
}
