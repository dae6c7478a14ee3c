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

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use rbag_storage::source::{RangeSource, SourceStats};
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

/// Makes rbag-storage open URLs through this crate. Call once, early (the CLI and the Python
/// module do); later calls do nothing.
pub fn register() {
    rbag_storage::source::register_opener(|url| Ok(Arc::new(RemoteObject::open(url)?) as Arc<dyn RangeSource>));
}

/// One object in a bucket or on a web server, opened for range reads.
pub struct RemoteObject {
    url: String,
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    size: u64,
    etag: Option<String>,
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl std::fmt::Debug for RemoteObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteObject").field("url", &self.url).field("size", &self.size).finish()
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
        let parsed = url::Url::parse(url).map_err(|e| failed(url, format!("not a URL: {e}")))?;
        // An `http://` URL asks for plain HTTP itself; object stores need AWS_ALLOW_HTTP and the like.
        let plain = (parsed.scheme() == "http").then(|| ("allow_http".to_string(), "true".to_string()));
        let options = std::env::vars().chain(plain);
        let (store, path) = object_store::parse_url_opts(&parsed, options).map_err(|e| failed(url, e))?;
        let store: Arc<dyn ObjectStore> = Arc::from(store);
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
            requests: AtomicU64::new(1),
            bytes: AtomicU64::new(0),
        })
    }

    /// The object's ETag, when the server gives one.
    pub fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }

    fn get(&self, range: Range<u64>) -> Result<Bytes> {
        let (store, path) = (self.store.clone(), self.path.clone());
        let r = range.clone();
        let got =
            runtime()?.block_on(async move { store.get_range(&path, r).await }).map_err(|e| failed(&self.url, e))?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(got.len() as u64, Ordering::Relaxed);
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
        SourceStats { requests: self.requests.load(Ordering::Relaxed), bytes: self.bytes.load(Ordering::Relaxed) }
    }
}
