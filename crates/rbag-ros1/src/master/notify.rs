//! Calls from the master to nodes (`publisherUpdate`, `paramUpdate`, `shutdown`): one worker
//! thread and queue per node API, so a node hears its updates in order and a slow or dead node
//! delays only itself (rosmaster's `MarkedThreadPool` does the same per API).
//!
//! Queuing never blocks, so the master may queue while holding its state lock; the calls
//! themselves happen on the workers, with no master lock held.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::api::{Callback, Notification};
use crate::xmlrpc::Client;

/// How long a node may take to answer one notification.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// A worker with nothing to do for this long ends (its node has probably gone).
const IDLE: Duration = Duration::from_secs(30);

/// Told when a node answers `paramUpdate` with code -1: `(api, key)`.
pub type OnRefused = Box<dyn Fn(&str, &str) + Send + Sync>;

struct Inner {
    queues: Mutex<HashMap<String, Sender<Notification>>>,
    stopped: AtomicBool,
    on_refused: OnRefused,
    call_timeout: Duration,
    idle: Duration,
}

impl Inner {
    fn queues(&self) -> MutexGuard<'_, HashMap<String, Sender<Notification>>> {
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Queues notifications to node APIs.
#[derive(Clone)]
pub struct Notifier {
    inner: Arc<Inner>,
}

impl Notifier {
    pub fn new(on_refused: OnRefused) -> Notifier {
        Notifier::with_timeouts(on_refused, CALL_TIMEOUT, IDLE)
    }

    fn with_timeouts(on_refused: OnRefused, call_timeout: Duration, idle: Duration) -> Notifier {
        Notifier {
            inner: Arc::new(Inner {
                queues: Mutex::default(),
                stopped: AtomicBool::new(false),
                on_refused,
                call_timeout,
                idle,
            }),
        }
    }

    /// Queues `n` behind earlier notifications to the same API. Never blocks on the network.
    pub fn send(&self, n: Notification) {
        if self.inner.stopped.load(Ordering::SeqCst) {
            return;
        }
        let mut queues = self.inner.queues();
        if let Some(tx) = queues.get(&n.api) {
            match tx.send(n) {
                Ok(()) => return,
                // The worker ended (it could not start a client): start again below.
                Err(mpsc::SendError(back)) => return self.spawn(&mut queues, back),
            }
        }
        self.spawn(&mut queues, n);
    }

    fn spawn(&self, queues: &mut HashMap<String, Sender<Notification>>, first: Notification) {
        let api = first.api.clone();
        let (tx, rx) = mpsc::channel();
        let _ = tx.send(first);
        let inner = self.inner.clone();
        let worker_api = api.clone();
        let spawned =
            std::thread::Builder::new().name("master-notify".into()).spawn(move || worker(&inner, &worker_api, rx));
        if spawned.is_ok() {
            queues.insert(api, tx);
        }
    }

    /// Drops what is queued and lets the workers end after their current call.
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        self.inner.queues().clear();
    }

    /// APIs with a live worker.
    #[cfg(test)]
    fn workers(&self) -> usize {
        self.inner.queues().len()
    }
}

fn worker(inner: &Inner, api: &str, rx: Receiver<Notification>) {
    let mut client = match Client::new(api) {
        Ok(c) => c.with_timeout(inner.call_timeout),
        Err(_) => {
            // Not an http:// API: nothing can be delivered. Forget the queue.
            inner.queues().remove(api);
            return;
        }
    };
    loop {
        let n = match rx.recv_timeout(inner.idle) {
            Ok(n) => n,
            Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {
                // Senders queue under this lock, so nothing can arrive between the check and
                // the removal.
                let mut queues = inner.queues();
                match rx.try_recv() {
                    Ok(n) => {
                        drop(queues);
                        n
                    }
                    Err(_) => {
                        queues.remove(api);
                        return;
                    }
                }
            }
        };
        if inner.stopped.load(Ordering::SeqCst) {
            return;
        }
        let reply = client.call(n.method(), &n.params());
        if let (Callback::ParamUpdate { key, .. }, Ok(reply)) = (&n.callback, reply) {
            let code = reply.as_array().and_then(|r| r.first()).and_then(|c| c.as_i32());
            if code == Some(-1) {
                (inner.on_refused)(api, key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xmlrpc::{Handler, Server, Value};
    use std::net::TcpListener;
    use std::sync::Mutex;

    /// Records calls; answers `paramUpdate` with -1 when told to.
    struct Node {
        seen: Mutex<Vec<(String, Vec<Value>)>>,
        refuse: bool,
        delay: Duration,
    }

    impl Handler for Node {
        fn call(&self, method: &str, params: Vec<Value>) -> Result<Value, (i32, String)> {
            std::thread::sleep(self.delay);
            self.seen.lock().expect("lock").push((method.to_string(), params));
            let code = if self.refuse && method == "paramUpdate" { -1 } else { 1 };
            Ok(Value::Array(vec![Value::Int(code), Value::Str(String::new()), Value::Int(0)]))
        }
    }

    fn node(refuse: bool, delay: Duration) -> (Server, String, Arc<Node>) {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let n = Arc::new(Node { seen: Mutex::default(), refuse, delay });
        let s = Server::start(l, n.clone()).expect("server");
        let uri = format!("http://{}/", s.local_addr());
        (s, uri, n)
    }

    fn param(api: &str, key: &str, v: i32) -> Notification {
        Notification { api: api.into(), callback: Callback::ParamUpdate { key: key.into(), value: Value::Int(v) } }
    }

    fn wait_for(what: impl Fn() -> bool) {
        for _ in 0..500 {
            if what() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("timed out");
    }

    #[test]
    fn in_order_per_node_and_a_slow_node_delays_only_itself() {
        let (_s1, slow, slow_node) = node(false, Duration::from_millis(50));
        let (_s2, fast, fast_node) = node(false, Duration::ZERO);
        let notifier = Notifier::new(Box::new(|_, _| {}));
        for i in 0..10 {
            notifier.send(param(&slow, "/k/", i));
            notifier.send(param(&fast, "/k/", i));
        }
        wait_for(|| fast_node.seen.lock().expect("lock").len() == 10);
        assert!(slow_node.seen.lock().expect("lock").len() < 10, "the fast node waited for the slow one");
        wait_for(|| slow_node.seen.lock().expect("lock").len() == 10);
        for n in [&slow_node, &fast_node] {
            let values: Vec<i32> = n.seen.lock().expect("lock").iter().filter_map(|(_, p)| p[2].as_i32()).collect();
            assert_eq!(values, (0..10).collect::<Vec<_>>());
            assert_eq!(
                n.seen.lock().expect("lock")[0].1[..2],
                [Value::Str("/master".into()), Value::Str("/k/".into())]
            );
        }
    }

    #[test]
    fn a_refusal_is_reported_and_idle_workers_end() {
        let (_s, api, _n) = node(true, Duration::ZERO);
        let refused = Arc::new(Mutex::new(Vec::new()));
        let r = refused.clone();
        let notifier = Notifier::with_timeouts(
            Box::new(move |api, key| r.lock().expect("lock").push((api.to_string(), key.to_string()))),
            Duration::from_secs(5),
            Duration::from_millis(200),
        );
        notifier.send(param(&api, "/cached/", 7));
        wait_for(|| refused.lock().expect("lock").len() == 1);
        assert_eq!(refused.lock().expect("lock")[0], (api.clone(), "/cached/".to_string()));
        wait_for(|| notifier.workers() == 0);
        // A new notification starts a new worker.
        notifier.send(param(&api, "/cached/", 8));
        wait_for(|| refused.lock().expect("lock").len() == 2);
    }

    #[test]
    fn dead_and_odd_apis_do_not_block_anything() {
        let notifier = Notifier::new(Box::new(|_, _| {}));
        let dead = {
            let l = TcpListener::bind("127.0.0.1:0").expect("bind");
            format!("http://{}/", l.local_addr().expect("addr"))
        };
        let start = std::time::Instant::now();
        notifier.send(param(&dead, "/k/", 1));
        notifier.send(param("rosrpc://x:1", "/k/", 1));
        assert!(start.elapsed() < Duration::from_millis(100));
        wait_for(|| notifier.workers() <= 1);
        notifier.stop();
        assert_eq!(notifier.workers(), 0);
    }
}
