//! rosbag2's file compression off the writer's thread (`--compression-threads`,
//! `--compression-queue-size`): closed storage files are compressed by a pool of workers while
//! recording goes on in the next file. At most `queue_size` files wait for a worker; when one
//! more comes, the oldest waiting file is dropped from the queue ("queued for compression
//! before being dropped"), which leaves it in the bag uncompressed: no message is lost.
//!
//! Every compression thread, of this pool and of MESSAGE mode's (see the writer), is named
//! [`THREAD_NAME`]`-<i>` and runs at the nice value asked for ([`priority_hook`]).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// The name of the compression threads (`/proc/<pid>/task/*/comm`, `top -H`), numbered `-0`, `-1`...
pub(crate) const THREAD_NAME: &str = "rbag-compress";

/// What each compression thread runs first: sets its own nice value to `nice`
/// (`compression_threads_priority`; 0 leaves it at the process's). A value the OS refuses (a
/// negative one without the privilege) is one warning naming the value and the OS's reason, and
/// the threads run as they are. rosbag2's compression thread, as far as we know, does the same:
/// it logs a warning naming the value and `strerror(errno)` and goes on (one per thread there).
pub(crate) fn priority_hook(nice: i32) -> impl Fn(usize) + Send + Sync + Clone + 'static {
    let warned = Arc::new(std::sync::atomic::AtomicBool::new(false));
    move |_| {
        if nice == 0 {
            return;
        }
        if let Err(e) = set_thread_nice(nice) {
            if !warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                crate::notice::warn(&format!("could not set the nice value of the compression threads to {nice}: {e}"));
            }
        }
    }
}

/// Sets the calling thread's nice value. On Linux a thread has its own: `setpriority` with
/// `PRIO_PROCESS` and the thread id changes that thread alone.
#[cfg(target_os = "linux")]
fn set_thread_nice(nice: i32) -> std::io::Result<()> {
    // SAFETY: gettid takes no arguments and cannot fail.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
    // SAFETY: plain syscall on our own thread id; the result is checked.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Elsewhere `setpriority(PRIO_PROCESS, 0, ..)` would renice the whole process, not one thread.
#[cfg(not(target_os = "linux"))]
fn set_thread_nice(_nice: i32) -> std::io::Result<()> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "per-thread nice values are set on Linux only"))
}

/// Compresses one file; returns the compressed file's path.
pub(crate) type Job = Arc<dyn Fn(&Path) -> std::io::Result<PathBuf> + Send + Sync>;

/// What became of a file handed to the compressor.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Done {
    /// `plain` was replaced by `packed`.
    Compressed { plain: PathBuf, packed: PathBuf },
    /// Compressing `plain` failed; it stays as it was.
    Failed { plain: PathBuf, error: String },
    /// The queue was full: `plain` stays uncompressed.
    Dropped(PathBuf),
}

#[derive(Default)]
struct State {
    queue: VecDeque<PathBuf>,
    busy: usize,
    done: Vec<Done>,
    closing: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Work arrived, or closing.
    work: Condvar,
    /// A job ended.
    idle: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A pool of compression workers with a bounded queue.
pub(crate) struct FileCompressor {
    shared: Arc<Shared>,
    queue_size: usize,
    workers: Vec<JoinHandle<()>>,
}

impl FileCompressor {
    /// `threads` workers (0: one per core) running `job` at nice value `priority` (see
    /// [`priority_hook`]); at most `queue_size` files wait (0: no limit).
    pub(crate) fn new(threads: usize, queue_size: usize, priority: i32, job: Job) -> std::io::Result<FileCompressor> {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let shared = Arc::new(Shared::default());
        let mut workers = Vec::new();
        let start = priority_hook(priority);
        for i in 0..threads {
            let (shared, job, start) = (shared.clone(), job.clone(), start.clone());
            workers.push(std::thread::Builder::new().name(format!("{THREAD_NAME}-{i}")).spawn(move || {
                start(i);
                worker(&shared, &job)
            })?);
        }
        Ok(FileCompressor { shared, queue_size, workers })
    }

    /// Queues `plain` and returns at once; a full queue drops its oldest file.
    pub(crate) fn submit(&self, plain: PathBuf) {
        let mut s = self.shared.lock();
        if self.queue_size > 0 && s.queue.len() >= self.queue_size {
            if let Some(old) = s.queue.pop_front() {
                s.done.push(Done::Dropped(old));
            }
        }
        s.queue.push_back(plain);
        self.shared.work.notify_one();
    }

    /// What finished since the last call.
    pub(crate) fn take_done(&self) -> Vec<Done> {
        std::mem::take(&mut self.shared.lock().done)
    }

    /// Whether files wait or are being compressed.
    pub(crate) fn busy(&self) -> bool {
        let s = self.shared.lock();
        !s.queue.is_empty() || s.busy > 0
    }

    /// Waits until every queued file is done.
    pub(crate) fn wait_idle(&self) {
        let mut s = self.shared.lock();
        while !s.queue.is_empty() || s.busy > 0 {
            s = self.shared.idle.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Compresses what is queued, stops the workers, and says what became of every file.
    pub(crate) fn finish(mut self) -> Vec<Done> {
        self.stop();
        self.take_done()
    }

    fn stop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.work.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

impl Drop for FileCompressor {
    /// Files queued are still compressed: a dropped writer leaves a complete bag.
    fn drop(&mut self) {
        self.stop();
    }
}

fn worker(shared: &Shared, job: &Job) {
    loop {
        let plain = {
            let mut s = shared.lock();
            loop {
                if let Some(p) = s.queue.pop_front() {
                    s.busy += 1;
                    break p;
                }
                if s.closing {
                    return;
                }
                s = shared.work.wait(s).unwrap_or_else(|p| p.into_inner());
            }
        };
        let done = match job(&plain) {
            Ok(packed) => Done::Compressed { plain, packed },
            Err(e) => Done::Failed { plain, error: e.to_string() },
        };
        let mut s = shared.lock();
        s.busy -= 1;
        s.done.push(done);
        shared.idle.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A job that reports which file it started and waits for a go before "compressing" it.
    fn gated() -> (Job, mpsc::Receiver<PathBuf>, mpsc::Sender<()>) {
        let (started_tx, started) = mpsc::channel();
        let (go, go_rx) = mpsc::channel::<()>();
        let (started_tx, go_rx) = (Mutex::new(started_tx), Mutex::new(go_rx));
        let job: Job = Arc::new(move |p: &Path| {
            started_tx.lock().unwrap().send(p.to_path_buf()).unwrap();
            go_rx.lock().unwrap().recv().unwrap();
            Ok(PathBuf::from(format!("{}.zstd", p.display())))
        });
        (job, started, go)
    }

    #[test]
    fn submitting_returns_while_a_file_compresses_and_a_full_queue_drops_its_oldest() {
        let (job, started, go) = gated();
        let c = FileCompressor::new(1, 1, 0, job).unwrap();
        c.submit("a".into());
        // The worker holds "a"; submitting more does not wait for it (recording goes on).
        assert_eq!(started.recv().unwrap(), PathBuf::from("a"));
        c.submit("b".into());
        c.submit("c".into());
        assert!(c.busy());
        // Queue size 1: "b" waited and was dropped for "c".
        assert_eq!(c.take_done(), [Done::Dropped("b".into())]);
        go.send(()).unwrap();
        assert_eq!(started.recv().unwrap(), PathBuf::from("c"));
        go.send(()).unwrap();
        let done = c.finish();
        assert_eq!(
            done,
            [
                Done::Compressed { plain: "a".into(), packed: "a.zstd".into() },
                Done::Compressed { plain: "c".into(), packed: "c.zstd".into() }
            ]
        );
    }

    #[test]
    fn queue_size_zero_keeps_every_file_and_finish_waits_for_them() {
        let job: Job = Arc::new(|p: &Path| Ok(PathBuf::from(format!("{}.z", p.display()))));
        let c = FileCompressor::new(2, 0, 0, job).unwrap();
        for n in 0..10 {
            c.submit(PathBuf::from(n.to_string()));
        }
        let done = c.finish();
        assert_eq!(done.len(), 10);
        assert!(done.iter().all(|d| matches!(d, Done::Compressed { .. })));
    }
}
