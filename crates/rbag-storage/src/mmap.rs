//! The one place with `unsafe`: mapping a bag read-only, so uncompressed chunks are served
//! without copying them, and keeping a file that shrinks under the map from crashing the
//! process.
//!
//! # A file that shrinks while it is mapped
//!
//! Reading a page of a file mapping past the file's current end raises SIGBUS, whose default
//! action kills the process without a message (exit 135). Another process truncating a bag
//! while rbag reads it would do that, anywhere a zero-copy [`Bytes`] slice of the map is
//! touched: a decoder, a writer copying the payload, far from the reader. Reading through
//! `pread` instead would cost the zero copy for every bag; a size or mtime check at open
//! cannot see a truncation that happens later. So the map stays, and the fault is caught:
//!
//! - A process-wide SIGBUS handler is installed once ([`std::sync::Once`], `sigaction` with
//!   `SA_SIGINFO | SA_ONSTACK`), the first time a file is mapped. The handler it replaces is
//!   kept and chained to.
//! - Each map's address range is registered in a fixed table of atomics (a seqlock per slot),
//!   which the handler reads without locks or allocation: async-signal-safe.
//! - A fault with `BUS_ADRERR` inside a registered map gets a private anonymous zero page mapped
//!   over the faulting page (`MAP_FIXED`, read-only), and the map's lowest faulting offset is
//!   recorded. The handler returns, the access is retried and reads zeros.
//!   Any other SIGBUS goes to the previous handler, or, when that was the default (or ignored),
//!   the default action is restored and the access faults again: the process ends as before.
//! - The zeros are not passed off as data: readers check the map ([`Mapped::fault`], one
//!   atomic load) after every message they hand out and [`Mapped::check`] (which also `fstat`s
//!   the file: bytes past the new end on the file's last page read as zeros without any fault)
//!   when they finish or fail. Either turns into [`Error::Shrank`] (in [`Error::InFile`], so
//!   the message names the file), with the file's new size and the offset of the first lost
//!   read; an error the zeros caused meanwhile is replaced by it. See [`checked_iter`] and
//!   [`checked`].
//!
//! What is not covered: a message slice touched only after its reader's iterator has ended reads
//! zeros unnoticed; a slice of the map passed straight to a syscall (`write(2)`) fails that
//! syscall with `EFAULT` instead of faulting (an error, not a crash). A bag that grows while it
//! is read (a recorder's `.active` file) is safe: the map covers the length seen at open. If the
//! table of maps (1024 open files) is full, or the handler cannot be installed, the file is not
//! mapped: ROS 1 bags are then read with `pread`, MCAP files fail to open. Outside Linux the
//! map is not guarded, as before.

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use memmap2::{Mmap, MmapOptions, UncheckedAdvice};

use crate::{Error, Message, MessageIter, Result};

/// A read-only map of a whole file, guarded against the file shrinking (see the module doc).
/// Clones share the map.
#[derive(Clone)]
pub struct Mapped {
    region: Arc<Region>,
    bytes: Bytes,
}

/// The map and its slot in the fault table; unregistered before it is unmapped.
struct Region {
    map: Mmap,
    slot: Option<usize>,
    /// A duplicate of the mapped file's descriptor, to `fstat` it.
    file: File,
    path: PathBuf,
}

impl Drop for Region {
    fn drop(&mut self) {
        // Field `map` is dropped (unmapped) after this: the handler never sees a stale range.
        if let Some(slot) = self.slot {
            guard::unregister(slot);
        }
    }
}

struct Owner(Arc<Region>);

impl AsRef<[u8]> for Owner {
    fn as_ref(&self) -> &[u8] {
        &self.0.map
    }
}

impl Mapped {
    /// Maps `file` (opened from `path`), or `None` when it is empty or cannot be mapped safely
    /// (callers then use `pread`).
    pub fn new(file: &File, path: &Path) -> Option<Self> {
        if file.metadata().ok()?.len() == 0 {
            return None;
        }
        let guarded = guard::install();
        if cfg!(target_os = "linux") && !guarded {
            return None;
        }
        let dup = file.try_clone().ok()?;
        // SAFETY: the map is read-only; it lives as long as the `Bytes` slices handed out (they
        // own an `Arc` of it). Pages the file loses later are replaced by zero pages in the
        // SIGBUS handler (module doc) before any access to them completes.
        let map = unsafe { MmapOptions::new().map(file) }.ok()?;
        let slot = if guarded { Some(guard::register(map.as_ptr() as usize, map.len())?) } else { None };
        let _ = map.advise(memmap2::Advice::Sequential);
        let region = Arc::new(Region { map, slot, file: dup, path: path.into() });
        let bytes = Bytes::from_owner(Owner(region.clone()));
        Some(Mapped { region, bytes })
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// A zero-copy slice of the file.
    pub fn slice(&self, range: Range<usize>) -> Bytes {
        self.bytes.slice(range)
    }

    /// The error for a file that lost pages while mapped, if it did: one atomic load, cheap
    /// enough for every message. Does not see a truncation inside the file's last page.
    pub fn fault(&self) -> Option<Error> {
        let slot = self.region.slot?;
        let offset = guard::first_fault(slot)?;
        let len = self.region.file.metadata().map(|m| m.len()).unwrap_or(offset as u64);
        Some(Error::Shrank { len, offset: offset as u64 }.in_file(&self.region.path))
    }

    /// Fails with [`Error::Shrank`] if the file is now shorter than the map or lost pages while
    /// mapped (one `fstat`).
    pub fn check(&self) -> Result<()> {
        if let Some(e) = self.fault() {
            return Err(e);
        }
        let len = self.region.file.metadata().map_err(|e| Error::io(&self.region.path, e))?.len();
        if len < self.len() as u64 {
            return Err(Error::Shrank { len, offset: len }.in_file(&self.region.path));
        }
        Ok(())
    }

    /// Drops the pages of `range` from this process's resident set once a reader is done with
    /// them, so reading a bag does not grow RSS with its size. The pages stay in the page
    /// cache; a slice still held elsewhere faults them back in with the same contents.
    pub fn release(&self, range: Range<usize>) {
        let page = guard::page_size();
        let start = range.start.div_ceil(page) * page;
        let end = (range.end.min(self.len()) / page) * page;
        if end > start {
            // SAFETY: MADV_DONTNEED on a read-only private file mapping only discards clean
            // pages, which later accesses re-read from the file: no data is lost or changed.
            // A zero page the handler put in is anonymous and private: it comes back as zeros.
            let _ = unsafe { self.region.map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start) };
        }
    }
}

/// `r`, unless the file under `map` shrank: then [`Error::Shrank`], which also replaces the
/// error the lost pages (read as zeros) may have caused.
pub fn checked<T>(map: Option<&Mapped>, r: Result<T>) -> Result<T> {
    match map.map(Mapped::check) {
        Some(Err(e)) if shrank(&e) || r.is_ok() => Err(e),
        _ => r,
    }
}

/// Wraps a reader's message iterator so that a file shrinking under `map` ends it with
/// [`Error::Shrank`] instead of handing out (or having handed out) zeros: checked after every
/// message (one atomic load) and, with an `fstat`, on every error and at the end.
pub fn checked_iter<'a>(map: Option<&'a Mapped>, inner: MessageIter<'a>) -> MessageIter<'a> {
    match map {
        Some(map) => Box::new(Checked { inner, map, done: false }),
        None => inner,
    }
}

/// Whether `e` is [`Error::Shrank`] (as [`Mapped`] makes it: in [`Error::InFile`]).
pub fn shrank(e: &Error) -> bool {
    match e {
        Error::Shrank { .. } => true,
        Error::InFile { inner, .. } => shrank(inner),
        _ => false,
    }
}

struct Checked<'a> {
    inner: MessageIter<'a>,
    map: &'a Mapped,
    done: bool,
}

impl Iterator for Checked<'_> {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        if self.done {
            return None;
        }
        let item = self.inner.next();
        let shrank = match &item {
            Some(Ok(_)) => self.map.fault(),
            Some(Err(_)) | None => self.map.check().err().filter(shrank),
        };
        if let Some(e) = shrank {
            self.done = true;
            return Some(Err(e));
        }
        item
    }
}

#[cfg(target_os = "linux")]
mod guard {
    //! The SIGBUS handler and its table of maps. Everything the handler touches is a static
    //! atomic or a raw syscall: no locks, no allocation.

    use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Once, OnceLock};

    /// How many maps can be open at once (each open bag file holds one).
    const SLOTS: usize = 1024;

    struct Slot {
        used: AtomicBool,
        /// Odd while `start`/`len` change.
        seq: AtomicUsize,
        start: AtomicUsize,
        len: AtomicUsize,
        /// Lowest faulting offset; `usize::MAX` while none.
        first: AtomicUsize,
    }

    static TABLE: [Slot; SLOTS] = [const {
        Slot {
            used: AtomicBool::new(false),
            seq: AtomicUsize::new(0),
            start: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            first: AtomicUsize::new(usize::MAX),
        }
    }; SLOTS];
    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    static INSTALLED: AtomicBool = AtomicBool::new(false);

    /// The handler ours replaced: set once before ours is installed, only read afterwards.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    pub fn page_size() -> usize {
        PAGE.load(Ordering::Relaxed)
    }

    /// Installs the handler once; whether it is installed.
    pub fn install() -> bool {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            // SAFETY: all-zero is a valid `sigaction` (no handler, no flags, empty mask).
            let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: reads the current SIGBUS disposition into `old`, a valid out-pointer.
            if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) } != 0 {
                return;
            }
            let _ = PREVIOUS.set(old);
            // SAFETY: as above.
            let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
            new.sa_sigaction = on_sigbus as *const () as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            // SAFETY: `new.sa_mask` is a valid sigset_t; emptying it cannot fail.
            unsafe { libc::sigemptyset(&mut new.sa_mask) };
            // SAFETY: `on_sigbus` has the SA_SIGINFO signature and is async-signal-safe.
            if unsafe { libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) } == 0 {
                INSTALLED.store(true, Ordering::Release);
            }
        });
        INSTALLED.load(Ordering::Acquire)
    }

    /// Claims a slot for the map at `start` of `len` bytes; `None` when the table is full.
    pub fn register(start: usize, len: usize) -> Option<usize> {
        let k = TABLE
            .iter()
            .position(|s| s.used.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).is_ok())?;
        let s = &TABLE[k];
        s.seq.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::Release);
        s.start.store(start, Ordering::Relaxed);
        s.len.store(len, Ordering::Relaxed);
        s.first.store(usize::MAX, Ordering::Relaxed);
        s.seq.fetch_add(1, Ordering::Release);
        Some(k)
    }

    /// Frees slot `k`; its map is unmapped right after.
    pub fn unregister(k: usize) {
        let s = &TABLE[k];
        s.seq.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::Release);
        s.len.store(0, Ordering::Relaxed);
        s.start.store(0, Ordering::Relaxed);
        s.seq.fetch_add(1, Ordering::Release);
        s.used.store(false, Ordering::Release);
    }

    /// The lowest offset of slot `k`'s map that faulted, if any did.
    pub fn first_fault(k: usize) -> Option<usize> {
        Some(TABLE[k].first.load(Ordering::Acquire)).filter(|&f| f != usize::MAX)
    }

    /// The slot whose map holds `addr`, and the map's start. A slot being changed is skipped:
    /// its map is not in use (being set up, or unmapped once its last user is gone).
    fn lookup(addr: usize) -> Option<(&'static Slot, usize)> {
        TABLE.iter().find_map(|s| {
            let seq = s.seq.load(Ordering::Acquire);
            if seq % 2 == 1 {
                return None;
            }
            let start = s.start.load(Ordering::Relaxed);
            let len = s.len.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            let stable = s.seq.load(Ordering::Relaxed) == seq;
            (stable && len > 0 && addr >= start && addr - start < len).then_some((s, start))
        })
    }

    extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: errno is thread-local; saved and restored so the interrupted code sees its own.
        let errno = unsafe { *libc::__errno_location() };
        // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler; for SIGBUS,
        // `si_addr` is the faulting address.
        let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
        let handled = code == libc::BUS_ADRERR
            && lookup(addr).is_some_and(|(slot, start)| {
                let page = page_size();
                let at = addr & !(page - 1);
                // SAFETY: `at` is the page-aligned start of a page inside a live read-only map of
                // rbag's (registered, and unregistered only after its last user is gone); replacing
                // that one page with a private zero page changes what it reads (zeros instead of a
                // fault), nothing else. mmap is a plain system call.
                let p = unsafe {
                    libc::mmap(
                        at as *mut libc::c_void,
                        page,
                        libc::PROT_READ,
                        libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
                if p == libc::MAP_FAILED {
                    return false;
                }
                slot.first.fetch_min(addr - start, Ordering::AcqRel);
                true
            });
        if !handled {
            chain(sig, info, ctx);
        }
        // SAFETY: as above.
        unsafe { *libc::__errno_location() = errno };
    }

    /// Passes a SIGBUS that is not rbag's to the handler that was there before, or restores the
    /// default action so that the retried access ends the process as it would have.
    fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        let old = PREVIOUS.get().copied();
        match old {
            Some(old) if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN => {
                if old.sa_flags & libc::SA_SIGINFO != 0 {
                    // SAFETY: the previous handler was installed with SA_SIGINFO, so its address
                    // is a function of this signature.
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        unsafe { std::mem::transmute(old.sa_sigaction) };
                    f(sig, info, ctx);
                } else {
                    // SAFETY: without SA_SIGINFO, the handler takes the signal number only.
                    let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(old.sa_sigaction) };
                    f(sig);
                }
            }
            _ => {
                // SAFETY: all-zero is a valid `sigaction`; SIG_DFL is 0. sigaction is
                // async-signal-safe.
                unsafe {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(sig, &dfl, std::ptr::null_mut());
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod guard {
    //! No handler outside Linux: maps are not guarded (see the module doc).

    pub fn page_size() -> usize {
        4096
    }

    pub fn install() -> bool {
        false
    }

    pub fn register(_start: usize, _len: usize) -> Option<usize> {
        None
    }

    pub fn unregister(_k: usize) {}

    pub fn first_fault(_k: usize) -> Option<usize> {
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(pages: usize) -> (tempfile::NamedTempFile, usize) {
        let page = guard::page_size();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![0xAB; pages * page]).unwrap();
        f.flush().unwrap();
        (f, page)
    }

    #[test]
    fn lost_pages_read_as_zeros_and_are_reported() {
        let (f, page) = file_of(64);
        let map = Mapped::new(f.as_file(), f.path()).unwrap();
        assert!(map.check().is_ok() && map.fault().is_none());
        let cut = 10 * page + 100;
        f.as_file().set_len(cut as u64).unwrap();
        let all = map.slice(0..map.len());
        let sum: u64 = all.iter().map(|&b| b as u64).sum();
        assert_eq!(sum, 0xAB * cut as u64, "the bytes kept read as written, the rest as zeros");
        let e = map.fault().expect("the fault is recorded");
        assert!(shrank(&e));
        let text = e.to_string();
        assert!(text.starts_with(&f.path().display().to_string()), "{text}");
        assert!(
            text.contains(&format!("shrank to {cut} bytes")) && text.contains(&format!("offset {}", 11 * page)),
            "{text}"
        );
        assert!(map.check().is_err());
        // Errors are replaced by the shrink; success too.
        let other: Result<()> = Err(Error::Invalid("zeros".into()));
        assert!(checked(Some(&map), other).is_err_and(|e| shrank(&e)));
        assert!(checked(Some(&map), Ok(())).is_err_and(|e| shrank(&e)));
        // Released and read again: still zeros, still no crash.
        map.release(0..map.len());
        assert_eq!(all.iter().map(|&b| b as u64).sum::<u64>(), sum);
    }

    #[test]
    fn a_cut_inside_the_last_page_is_found_by_check() {
        let (f, _) = file_of(4);
        let map = Mapped::new(f.as_file(), f.path()).unwrap();
        let len = map.len() as u64;
        f.as_file().set_len(len - 10).unwrap();
        let _: u64 = map.slice(0..map.len()).iter().map(|&b| b as u64).sum();
        assert!(map.fault().is_none(), "no page was lost");
        let e = map.check().unwrap_err();
        assert!(e.to_string().contains(&format!("shrank to {} bytes", len - 10)), "{e}");
    }

    #[test]
    fn maps_free_their_slots() {
        let (f, _) = file_of(1);
        for _ in 0..3000 {
            assert!(Mapped::new(f.as_file(), f.path()).is_some());
        }
        let f2 = file_of(1).0;
        let kept: Vec<_> = (0..100).map(|_| Mapped::new(f2.as_file(), f2.path()).unwrap()).collect();
        let m = Mapped::new(f.as_file(), f.path()).unwrap();
        f2.as_file().set_len(0).unwrap();
        let _: u64 = kept[50].slice(0..kept[50].len()).iter().map(|&b| b as u64).sum();
        assert!(kept[50].fault().is_some() && m.fault().is_none(), "a fault is counted for its own map only");
    }

    /// A SIGBUS that is not in one of rbag's maps still ends the process, as without the
    /// handler: checked in a child process (this test binary, rerun for the one test below).
    #[test]
    fn a_foreign_sigbus_still_kills() {
        use std::os::unix::process::ExitStatusExt;
        let exe = std::env::current_exe().unwrap();
        let status = std::process::Command::new(exe)
            .args(["--exact", "mmap::tests::foreign_sigbus_child", "--nocapture", "--include-ignored"])
            .env("RBAG_FOREIGN_SIGBUS_CHILD", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.signal(), Some(libc::SIGBUS), "{status:?}");
    }

    #[test]
    #[ignore = "run by a_foreign_sigbus_still_kills in a child process"]
    fn foreign_sigbus_child() {
        if std::env::var_os("RBAG_FOREIGN_SIGBUS_CHILD").is_none() {
            return;
        }
        let (f, page) = file_of(4);
        let _ours = Mapped::new(f.as_file(), f.path()).unwrap();
        let other = file_of(4).0;
        // SAFETY: test only; a read-only shared map of a file this test owns.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4 * page,
                libc::PROT_READ,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(other.as_file()),
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        other.as_file().set_len(0).unwrap();
        // SAFETY: in bounds of the map; the page is gone, so this raises SIGBUS, which is the
        // point of the test.
        let b = unsafe { std::ptr::read_volatile((p as *const u8).add(2 * page)) };
        println!("survived a foreign SIGBUS: {b}");
        std::process::exit(0);
    }
}
