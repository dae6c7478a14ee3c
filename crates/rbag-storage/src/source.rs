//! Bags that are not local files: objects in a bucket or on a web server, read by byte range.
//!
//! This crate knows only the [`RangeSource`] trait; the crate that talks to object stores
//! (rbag-remote, with its async runtime) implements it and [registers](register_opener) an
//! opener for URLs. Readers then ask for exactly the ranges they need: a ROS 1 bag's header and
//! index section for its summary, and the chunks a read or a time window needs.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::{Error, Result};

/// Requests made and bytes fetched so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceStats {
    /// Requests made (the opening `HEAD` included).
    pub requests: u64,
    /// Bytes fetched.
    pub bytes: u64,
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
}

type Opener = fn(&str) -> Result<Arc<dyn RangeSource>>;

static OPENER: OnceLock<Opener> = OnceLock::new();

/// Sets how URLs are opened (once; later calls are ignored).
pub fn register_opener(open: Opener) {
    let _ = OPENER.set(open);
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
