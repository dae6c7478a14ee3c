//! Decompressing the chunks a read will reach next on worker threads ([`crate::pool::Ordered`]),
//! so that a compressed bag is read on more than one core.
//!
//! A reader keeps one [`ReadAhead`]. Each time its merge opens a chunk it hands over the chunks
//! that come next, in reading order ([`ReadAhead::plan`]); the read-ahead asks the reader to
//! prepare a job for each compressed one it does not hold yet ([`Ahead`]), and the reader then
//! takes a chunk's records back ([`ReadAhead::take`]) instead of decompressing them itself. The
//! job is the reader's own decompression (same decoder, same checks, same error), so what is
//! read, and every error, is the same for any thread count; a chunk the read-ahead does not hold
//! is decompressed by the reading thread as before.
//!
//! # The memory bound
//!
//! Every read-ahead buffer is reserved from [`crate::budget`] before its job is queued, and the
//! reservation travels with the decompressed bytes. The read-ahead of one reader holds (queued,
//! running or done) at most [`window`] `= 2 × threads` chunks, and it reserves only while the
//! process's budget stays at most half used ([`reserve`]): over all readers, read-ahead buffers
//! never exceed half of the budget (256 MiB of the default 512 MiB), and the other half is left
//! to the reading threads. When the budget has no room for the next chunk, the read-ahead stops
//! looking further until the next chunk is opened. A reader that cannot hold a chunk for lack of
//! budget clears its read-ahead first ([`ReadAhead::clear`]), so that threads never turn a read
//! that fits into one that streams or fails.

use std::collections::VecDeque;

use bytes::Bytes;

use crate::budget::{self, Reservation};
use crate::pool::Ordered;
use crate::{Error, Result};

/// A chunk's decompression, run on a worker: the reader's own code over a map slice, with the
/// reservation that pays for its output.
pub(crate) type Job = Box<dyn FnOnce() -> Result<Bytes> + Send>;

/// A job for one chunk, with what names the chunk in errors.
pub(crate) struct Pending {
    /// File offset of the chunk record.
    pub offset: u64,
    /// The chunk kind, for the error of a job that panicked (`"chunk"`, `"MCAP chunk"`).
    pub what: &'static str,
    /// Bytes reserved for its output.
    pub bytes: u64,
    pub job: Job,
}

/// What to do ahead for one chunk, as the reader decides it.
pub(crate) enum Ahead {
    /// Nothing: uncompressed (a slice of the map), too large to hold, or not readable (the
    /// reading thread then meets the same error as without threads).
    Skip,
    /// The budget has no room: look no further this time.
    Stop,
    /// Decompress it on a worker.
    Job(Pending),
}

/// Chunks looked at per plan, per chunk of the window: how far past uncompressed chunks the
/// read-ahead looks for compressed ones.
const LOOK: usize = 4;

/// Plan steps a chunk that left the plan is still kept for: the chunk just opened (which the
/// merge no longer lists) is read right after, or a few chunks later when chunks overlap.
const GRACE: u64 = 2;

/// Chunks a reader decompresses ahead with `threads` threads: two per thread, so each worker has
/// one chunk to work on while the reading thread takes another.
pub(crate) fn window(threads: usize) -> usize {
    2 * threads
}

/// Reserves `bytes` for a read-ahead buffer if the process's budget stays at most half used:
/// the other half stays free for the reading threads (see the module doc).
pub(crate) fn reserve(bytes: u64) -> Option<Reservation> {
    if budget::used().saturating_add(bytes) > budget::limit() / 2 {
        return None;
    }
    budget::try_reserve(bytes)
}

/// One chunk given to the pool.
struct Slot {
    key: usize,
    offset: u64,
    what: &'static str,
    bytes: u64,
    /// Its records (or error) once the pool gave them back; `None` while it is queued or running.
    done: Option<Result<Bytes>>,
    /// The plan step at which it left the plan.
    passed: Option<u64>,
    /// Given up on while in the pool: its result is dropped when it comes back.
    dead: bool,
}

/// The read-ahead of one reader (see the module doc). With one thread it does nothing.
pub(crate) struct ReadAhead {
    threads: usize,
    window: usize,
    /// Started at the first job; stopped when a read has taken everything it planned.
    pool: Option<Ordered<Result<Bytes>>>,
    /// In submission order: those done first, then those in the pool.
    slots: VecDeque<Slot>,
    /// Chunks of the last plan that need nothing ahead (not asked again while planned).
    skipped: Vec<usize>,
    step: u64,
    /// The last plan had no chunks left.
    last: bool,
    /// The pool could not be started: read on the reading thread.
    off: bool,
}

impl ReadAhead {
    /// A read-ahead with `threads` workers (1: none).
    pub(crate) fn new(threads: usize) -> Self {
        ReadAhead {
            threads,
            window: window(threads),
            pool: None,
            slots: VecDeque::new(),
            skipped: Vec::new(),
            step: 0,
            last: false,
            off: threads <= 1,
        }
    }

    /// Whether chunks are decompressed ahead at all.
    pub(crate) fn enabled(&self) -> bool {
        !self.off
    }

    /// Bytes reserved by the chunks held (queued, running or done).
    pub(crate) fn held_bytes(&self) -> u64 {
        self.slots.iter().map(|s| s.bytes).sum()
    }

    /// Chunks held (queued, running or done).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.slots.len()
    }

    /// Plans chunk `current` (being opened, if the reader names it) and the chunks `upcoming`
    /// (the next ones, in reading order): chunks held that left the plan are dropped after
    /// [`GRACE`] steps, and `prepare` is asked for a job for each chunk not held yet, in order,
    /// while the window has room and the budget allows.
    pub(crate) fn plan(
        &mut self,
        current: Option<usize>,
        upcoming: &mut dyn Iterator<Item = usize>,
        prepare: &mut dyn FnMut(usize) -> Ahead,
    ) {
        if self.off {
            return;
        }
        self.step += 1;
        let look: Vec<usize> = current.into_iter().chain(upcoming.take(LOOK * self.window)).collect();
        self.last = look.len() == usize::from(current.is_some());
        let step = self.step;
        for s in self.slots.iter_mut() {
            if look.contains(&s.key) {
                s.passed = None;
            } else if s.passed.is_none() {
                s.passed = Some(step);
            }
        }
        self.expire();
        self.skipped.retain(|k| look.contains(k));
        for key in look {
            if self.slots.len() >= self.window {
                break;
            }
            if self.skipped.contains(&key) || self.slots.iter().any(|s| s.key == key && !s.dead) {
                continue;
            }
            match prepare(key) {
                Ahead::Skip => self.skipped.push(key),
                Ahead::Stop => break,
                Ahead::Job(p) => {
                    if !self.submit(key, p) {
                        break;
                    }
                }
            }
        }
    }

    /// Drops what left the plan more than [`GRACE`] steps ago: held results now, queued or
    /// running ones when the pool gives them back.
    fn expire(&mut self) {
        let step = self.step;
        let stale = |s: &Slot| s.passed.is_some_and(|p| step - p >= GRACE);
        self.slots.retain(|s| !(s.done.is_some() && stale(s)));
        for s in self.slots.iter_mut().filter(|s| stale(s)) {
            s.dead = true;
        }
    }

    /// Queues `p` for chunk `key`; false when the pool cannot take it (it then runs nowhere,
    /// and its reservation is returned).
    fn submit(&mut self, key: usize, p: Pending) -> bool {
        if self.pool.is_none() {
            match Ordered::new("rbag-read", self.threads, self.window) {
                Ok(pool) => self.pool = Some(pool),
                Err(_) => {
                    self.off = true;
                    return false;
                }
            }
        }
        let Some(pool) = self.pool.as_mut() else { return false };
        if pool.submit(p.job).is_err() {
            return false;
        }
        self.slots.push_back(Slot {
            key,
            offset: p.offset,
            what: p.what,
            bytes: p.bytes,
            done: None,
            passed: None,
            dead: false,
        });
        true
    }

    /// Waits for the oldest job in the pool and files its result (a panic as an error naming
    /// the chunk); a dead one is dropped.
    fn receive(&mut self) {
        let Some(q) = self.slots.iter().position(|s| s.done.is_none()) else { return };
        let got = self.pool.as_mut().and_then(Ordered::next);
        let s = &mut self.slots[q];
        if s.dead {
            self.slots.remove(q);
            return;
        }
        s.done = Some(got.unwrap_or_else(|| {
            Err(Error::Malformed {
                offset: s.offset,
                what: s.what,
                reason: "decompressing it on a read-ahead thread failed unexpectedly (the thread panicked)".into(),
            })
        }));
    }

    /// Chunk `key`'s records (or its decompression error) if the read-ahead holds them, waiting
    /// for its job if need be; `None` when the chunk was never given to it (or given up on).
    /// Chunk `key`'s records of `size` bytes if they were decompressed ahead, as the reading
    /// thread would have them: kept only where it would hold them itself (`hold`, and room in
    /// the budget without the read-ahead's share), else dropped and read as without threads.
    pub(crate) fn take_as_reader(&mut self, key: usize, hold: bool, size: u64) -> Option<Result<Bytes>> {
        if !self.enabled() {
            return None;
        }
        let others = self.held_bytes();
        let done = self.take(key)?;
        let without = crate::budget::used().saturating_sub(others);
        (hold && without.saturating_add(size) <= crate::budget::limit()).then_some(done)
    }

    pub(crate) fn take(&mut self, key: usize) -> Option<Result<Bytes>> {
        if self.off {
            return None;
        }
        let found = |slots: &VecDeque<Slot>| slots.iter().position(|s| s.key == key && !s.dead);
        let mut p = found(&self.slots)?;
        while self.slots[p].done.is_none() {
            self.receive();
            p = found(&self.slots)?;
        }
        let slot = self.slots.remove(p)?;
        if self.last && self.slots.is_empty() {
            // The read has taken all it planned: its workers are not kept waiting.
            self.pool = None;
        }
        slot.done
    }

    /// Drops everything held (waiting for jobs running now) and returns its budget; whether
    /// anything was held.
    pub(crate) fn clear(&mut self) -> bool {
        let any = !self.slots.is_empty();
        for s in self.slots.iter_mut() {
            s.dead = true;
        }
        while self.slots.iter().any(|s| s.done.is_none()) {
            self.receive();
        }
        self.slots.clear();
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A job that returns `key` as 8 bytes after a delay that makes later keys finish first.
    fn job(key: usize, bytes: u64, ran: &Arc<AtomicUsize>) -> Ahead {
        let ran = Arc::clone(ran);
        let r = budget::try_reserve(bytes).expect("room in the budget");
        Ahead::Job(Pending {
            offset: key as u64 * 100,
            what: "chunk",
            bytes,
            job: Box::new(move || {
                std::thread::sleep(std::time::Duration::from_millis(5 * (10 - key as u64 % 10)));
                ran.fetch_add(1, Ordering::SeqCst);
                Ok(budget::Budgeted::bytes((key as u64).to_le_bytes().to_vec(), r))
            }),
        })
    }

    fn value(b: &Bytes) -> usize {
        u64::from_le_bytes(b[..8].try_into().unwrap()) as usize
    }

    #[test]
    fn one_thread_does_nothing() {
        let mut ra = ReadAhead::new(1);
        let ran = Arc::new(AtomicUsize::new(0));
        ra.plan(None, &mut (0..10), &mut |k| job(k, 8, &ran));
        assert!(!ra.enabled());
        assert_eq!(ra.held(), 0);
        assert!(ra.take(0).is_none());
        assert_eq!(ran.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn chunks_come_back_by_key_and_the_window_bounds_what_is_held() {
        let mut ra = ReadAhead::new(2);
        let ran = Arc::new(AtomicUsize::new(0));
        let mut got = Vec::new();
        for i in 0..20usize {
            ra.plan(None, &mut (i + 1..20), &mut |k| job(k, 8, &ran));
            assert!(ra.held() <= window(2), "at most 2 × threads chunks held");
            // Chunk 0 is never planned ahead: it is read on this thread.
            match ra.take(i) {
                Some(r) => got.push(value(&r.unwrap())),
                None => got.push(i),
            }
        }
        assert_eq!(got, (0..20).collect::<Vec<_>>());
        assert!(ran.load(Ordering::SeqCst) >= 15, "most chunks were decompressed ahead");
        assert_eq!(ra.held(), 0);
        assert!(ra.pool.is_none(), "the workers stop once the read has taken all it planned");
    }

    #[test]
    fn a_chunk_taken_out_of_order_keeps_the_others() {
        let mut ra = ReadAhead::new(2);
        let ran = Arc::new(AtomicUsize::new(0));
        ra.plan(None, &mut (0..4), &mut |k| job(k, 8, &ran));
        assert_eq!(value(&ra.take(2).unwrap().unwrap()), 2);
        assert_eq!(value(&ra.take(0).unwrap().unwrap()), 0);
        assert_eq!(value(&ra.take(3).unwrap().unwrap()), 3);
        assert_eq!(value(&ra.take(1).unwrap().unwrap()), 1);
        assert!(ra.take(1).is_none());
    }

    #[test]
    fn the_chunk_being_opened_is_planned_first_and_the_last_plan_stops_the_workers() {
        let mut ra = ReadAhead::new(2);
        let ran = Arc::new(AtomicUsize::new(0));
        ra.plan(Some(5), &mut (6..8), &mut |k| job(k, 8, &ran));
        assert_eq!(ra.slots.iter().map(|s| s.key).collect::<Vec<_>>(), vec![5, 6, 7]);
        assert_eq!(value(&ra.take(5).unwrap().unwrap()), 5);
        ra.plan(Some(6), &mut (7..8), &mut |k| job(k, 8, &ran));
        assert_eq!(value(&ra.take(6).unwrap().unwrap()), 6);
        ra.plan(Some(7), &mut (8..8), &mut |k| job(k, 8, &ran));
        assert!(ra.pool.is_some());
        assert_eq!(value(&ra.take(7).unwrap().unwrap()), 7);
        assert!(ra.pool.is_none());
    }

    #[test]
    fn a_stop_ends_the_look_ahead_and_a_skip_does_not() {
        let mut ra = ReadAhead::new(2);
        let ran = Arc::new(AtomicUsize::new(0));
        ra.plan(None, &mut (0..8), &mut |k| match k {
            1 => Ahead::Skip,
            3 => Ahead::Stop,
            k => job(k, 8, &ran),
        });
        assert_eq!(ra.slots.iter().map(|s| s.key).collect::<Vec<_>>(), vec![0, 2]);
        assert!(ra.take(1).is_none());
    }

    #[test]
    fn chunks_that_left_the_plan_are_dropped_and_their_budget_returned() {
        let mut ra = ReadAhead::new(2);
        let ran = Arc::new(AtomicUsize::new(0));
        let before = budget::used();
        ra.plan(None, &mut (0..4), &mut |k| job(k, 1000, &ran));
        assert_eq!(ra.held_bytes(), 4000);
        // Another read, elsewhere in the file: the old chunks are given up after the grace.
        for _ in 0..=GRACE {
            ra.plan(None, &mut (100..100), &mut |k| job(k, 1000, &ran));
        }
        assert!(ra.take(0).is_none(), "a chunk that left the plan is given up");
        ra.clear();
        assert_eq!(ra.held(), 0);
        assert!(budget::used() <= before, "every reservation is returned");
    }

    #[test]
    fn a_panicking_job_is_an_error_naming_the_chunk() {
        let mut ra = ReadAhead::new(2);
        ra.plan(None, &mut (0..2), &mut |k| {
            Ahead::Job(Pending {
                offset: 4242 + k as u64,
                what: "chunk",
                bytes: 0,
                job: Box::new(move || if k == 0 { panic!("decoder bug") } else { Ok(Bytes::from_static(b"ok")) }),
            })
        });
        let e = ra.take(0).unwrap().unwrap_err();
        assert!(matches!(e, Error::Malformed { offset: 4242, what: "chunk", .. }), "{e}");
        assert_eq!(ra.take(1).unwrap().unwrap(), Bytes::from_static(b"ok"));
    }

    #[test]
    fn reserve_leaves_half_the_budget() {
        assert!(reserve(budget::limit() / 2 + 1).is_none());
        assert!(reserve(1).is_some());
    }
}
