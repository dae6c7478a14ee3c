//! The one place with `unsafe`: mapping a bag read-only, so uncompressed chunks are served
//! without copying them.

use std::fs::File;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use memmap2::{Mmap, MmapOptions, UncheckedAdvice};

/// A read-only map of a whole file.
///
/// A mapped file that another process truncates makes later reads of the lost pages fault
/// (SIGBUS), as with every mmap-based reader. A bag that grows while it is read (a recorder's
/// `.active` file) is safe: the map covers the length seen at open.
pub struct Mapped {
    map: Arc<Mmap>,
    bytes: Bytes,
}

const PAGE: usize = 4096;

struct Owner(Arc<Mmap>);

impl AsRef<[u8]> for Owner {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Mapped {
    /// Maps `file`, or `None` when it cannot be mapped (callers then use `pread`).
    pub fn new(file: &File) -> Option<Self> {
        if file.metadata().ok()?.len() == 0 {
            return None;
        }
        // SAFETY: the map is read-only and private; it lives as long as the `Bytes` slices
        // handed out (they own an `Arc` of it). Truncation by another process is documented.
        let map = Arc::new(unsafe { MmapOptions::new().map(file) }.ok()?);
        let _ = map.advise(memmap2::Advice::Sequential);
        let bytes = Bytes::from_owner(Owner(map.clone()));
        Some(Mapped { map, bytes })
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// A zero-copy slice of the file.
    pub fn slice(&self, range: Range<usize>) -> Bytes {
        self.bytes.slice(range)
    }

    /// Drops the pages of `range` from this process's resident set once a reader is done with
    /// them, so reading a bag does not grow RSS with its size. The pages stay in the page
    /// cache; a slice still held elsewhere faults them back in with the same contents.
    pub fn release(&self, range: Range<usize>) {
        let start = range.start.div_ceil(PAGE) * PAGE;
        let end = (range.end / PAGE) * PAGE;
        if end > start {
            // SAFETY: MADV_DONTNEED on a read-only private file mapping only discards clean
            // pages, which later accesses re-read from the file: no data is lost or changed.
            let _ = unsafe { self.map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start) };
        }
    }
}
