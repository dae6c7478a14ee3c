//! Both cores in long jobs: chunk (de)compression on worker threads, with results taken back in
//! the order the jobs were given, so what is written or read never depends on the thread count.
//!
//! The process-wide default thread count is one per core, unless a program (the CLI's
//! `--threads`) or `RBAG_THREADS` says otherwise; options that say 0 mean that default.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The environment variable that sets the default thread count.
pub const ENV: &str = "RBAG_THREADS";

static SET: AtomicUsize = AtomicUsize::new(0);

/// Sets the default thread count for the rest of the process (0: back to one per core).
pub fn set_default_threads(n: usize) {
    SET.store(n, Ordering::Relaxed);
}

/// The thread count a program or the environment asked for: [`set_default_threads`], else
/// `RBAG_THREADS`; `None` when neither did.
pub fn configured_threads() -> Option<usize> {
    match SET.load(Ordering::Relaxed) {
        0 => std::env::var(ENV).ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0),
        n => Some(n),
    }
}

/// The default thread count: [`configured_threads`], else one per core.
pub fn default_threads() -> usize {
    configured_threads().unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `n`, or the default when `n` is 0.
pub fn resolve(n: usize) -> usize {
    if n == 0 {
        default_threads()
    } else {
        n
    }
}

type Job<R> = Box<dyn FnOnce() -> R + Send>;

/// Runs jobs on `threads` workers and hands their results back in submission order.
///
/// At most `window` jobs are queued or running; [`Ordered::submit`] refuses more until the
/// oldest result is taken, so memory stays bounded by `window` inputs and outputs. A job that
/// panics is reported as `None` from [`Ordered::next`] instead of unwinding into the caller.
pub struct Ordered<R: Send + 'static> {
    jobs: Option<SyncSender<(SyncSender<R>, Job<R>)>>,
    workers: Vec<JoinHandle<()>>,
    /// One receiver per job in flight, oldest first.
    pending: VecDeque<Receiver<R>>,
    window: usize,
}

impl<R: Send + 'static> Ordered<R> {
    /// `threads` workers (at least 1), at most `window` jobs in flight (at least `threads`).
    pub fn new(name: &str, threads: usize, window: usize) -> std::io::Result<Self> {
        Self::with_start(name, threads, window, |_| {})
    }

    /// [`Ordered::new`], with `start(i)` run first on worker `i`'s own thread, before any job:
    /// per-thread settings (a compression thread's nice value) that a job cannot set for the
    /// workers that never get one.
    pub fn with_start(
        name: &str,
        threads: usize,
        window: usize,
        start: impl Fn(usize) + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        let start = Arc::new(start);
        let threads = threads.max(1);
        let window = window.max(threads);
        let (tx, rx) = sync_channel::<(SyncSender<R>, Job<R>)>(window);
        let rx = Arc::new(Mutex::new(rx));
        let mut workers = Vec::with_capacity(threads);
        for i in 0..threads {
            let rx = Arc::clone(&rx);
            let start = Arc::clone(&start);
            workers.push(std::thread::Builder::new().name(format!("{name}-{i}")).spawn(move || {
                // A panic here only skips the setting: the worker still serves jobs.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| start(i)));
                loop {
                    let next = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((reply, job)) = next else { return };
                    // A panicking job drops `reply` unsent; `next` sees the closed channel.
                    if let Ok(result) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
                        let _ = reply.send(result);
                    }
                }
            })?);
        }
        Ok(Ordered { jobs: Some(tx), workers, pending: VecDeque::new(), window })
    }

    /// Jobs given and not yet taken back.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Whether another job can be given now.
    pub fn has_room(&self) -> bool {
        self.pending.len() < self.window
    }

    /// Queues a job, or hands it back when `window` jobs are pending (take one with `next`).
    #[allow(clippy::type_complexity)]
    pub fn submit(&mut self, job: impl FnOnce() -> R + Send + 'static) -> Result<(), Job<R>> {
        let job: Job<R> = Box::new(job);
        let Some(jobs) = self.jobs.as_ref().filter(|_| self.has_room()) else { return Err(job) };
        let (reply, result) = sync_channel(1);
        match jobs.send((reply, job)) {
            Ok(()) => {
                self.pending.push_back(result);
                Ok(())
            }
            Err(e) => Err(e.0 .1),
        }
    }

    /// The oldest job's result if it is done: `Some(Some(r))`, `Some(None)` when that job
    /// panicked, `None` when nothing is pending or it is still running.
    pub fn try_next(&mut self) -> Option<Option<R>> {
        match self.pending.front()?.try_recv() {
            Ok(r) => {
                self.pending.pop_front();
                Some(Some(r))
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => None,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.pending.pop_front();
                Some(None)
            }
        }
    }

    /// The oldest result: waiting for it when `wait`, else only if it is done. `None`: nothing
    /// to take (none pending, or still running without `wait`); `Some(None)`: that job panicked.
    pub fn take(&mut self, wait: bool) -> Option<Option<R>> {
        match wait {
            true if self.pending.is_empty() => None,
            true => Some(self.next()),
            false => self.try_next(),
        }
    }

    /// The oldest job's result, waiting for it; `None` when nothing is pending, or when that
    /// job panicked. (Not an iterator: it blocks, and `None` does not always mean the end.)
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<R> {
        self.pending.pop_front()?.recv().ok()
    }
}

impl<R: Send + 'static> Drop for Ordered<R> {
    fn drop(&mut self) {
        self.pending.clear();
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_submission_order() {
        let mut pool = Ordered::new("t", 2, 4).unwrap();
        let mut out = Vec::new();
        for i in 0..50u64 {
            if !pool.has_room() {
                out.push(pool.next().unwrap());
            }
            pool.submit(move || {
                std::thread::sleep(std::time::Duration::from_micros((50 - i) * 20));
                i
            })
            .map_err(|_| ())
            .unwrap();
        }
        while let Some(v) = pool.next() {
            out.push(v);
        }
        assert_eq!(out, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn a_panicking_job_is_none_and_the_pool_goes_on() {
        let mut pool = Ordered::new("t", 1, 2).unwrap();
        pool.submit(|| -> u32 { panic!("job") }).map_err(|_| ()).unwrap();
        pool.submit(|| 7).map_err(|_| ()).unwrap();
        assert_eq!(pool.next(), None);
        assert_eq!(pool.next(), Some(7));
    }

    #[test]
    fn start_runs_on_every_worker_thread_before_its_jobs() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let mut pool = Ordered::with_start("t", 3, 3, move |i| {
            log.lock().unwrap().push((i, std::thread::current().name().map(String::from)));
        })
        .unwrap();
        // No job at all: every worker still ran its start.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while seen.lock().unwrap().len() < 3 {
            assert!(std::time::Instant::now() < deadline, "{:?}", seen.lock().unwrap());
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let mut got = seen.lock().unwrap().clone();
        got.sort();
        assert_eq!(got, (0..3).map(|i| (i, Some(format!("t-{i}")))).collect::<Vec<_>>());
        pool.submit(|| 5).map_err(|_| ()).unwrap();
        assert_eq!(pool.next(), Some(5));
    }

    #[test]
    fn a_full_window_hands_the_job_back() {
        let mut pool = Ordered::new("t", 1, 1).unwrap();
        pool.submit(|| 1).map_err(|_| ()).unwrap();
        assert!(pool.submit(|| 2).is_err());
        assert_eq!(pool.next(), Some(1));
    }
}
