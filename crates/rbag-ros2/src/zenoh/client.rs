//! A service client as rmw_zenoh declares one (rmw_client_data.cpp L132-149 and L383-397 at
//! 0.2.10): an `SC` token, and each request a query on the service's data key with the
//! request's CDR (encapsulation header included) as payload and the attachment (the client's
//! sequence number from 1, the time, its GID); the reply's payload is the response's CDR and its
//! attachment carries the sequence number back.
//!
//! The data key ends in the type hash the server announced (its `SS` token, followed here), as a
//! client built from the same interface would name it; before a server is seen the hash chunk
//! is `*`, which any server's queryable intersects.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zenoh::Wait;

use super::{gid_of, Node, ZenohError, ZenohSession};
use crate::record::now_ns;
use crate::zenoh_wire::{data_key, Attachment, EntityKind, TokenTopic};

/// What an unknown type hash is written as in our own token.
const UNKNOWN_HASH: &str = "RIHS01_0000000000000000000000000000000000000000000000000000000000000000";

/// The servers of one service the graph shows: token key → its type hash.
type Servers = Arc<Mutex<BTreeMap<String, String>>>;

/// One service's client on a node; dropping it undeclares its token (replies still due are
/// dropped).
pub struct ZenohClient {
    session: Arc<ZenohSession>,
    service: String,
    dds_type: String,
    gid: [u8; 16],
    sequence: AtomicI64,
    /// Queries whose server has not finished answering (see [`ZenohClient::flush`]).
    pending: Arc<AtomicUsize>,
    servers: Servers,
    _servers_sub: zenoh::pubsub::Subscriber<()>,
    _token: zenoh::liveliness::LivelinessToken,
}

impl ZenohClient {
    /// Declares a client of `node` for `service` (a ROS name) whose request type is
    /// `<dds_type>Request_` (`example_interfaces::action::dds_::Fibonacci_SendGoal_`).
    pub fn new(
        session: &Arc<ZenohSession>,
        node: &Node,
        service: &str,
        dds_type: &str,
    ) -> Result<ZenohClient, ZenohError> {
        Self::with_type_hash(session, node, service, dds_type, None)
    }

    /// [`ZenohClient::new`], with the service type's own hash in the token when known (as an
    /// rmw_zenoh client writes its type support's); else the hash of a server already seen,
    /// else zeros.
    pub fn with_type_hash(
        session: &Arc<ZenohSession>,
        node: &Node,
        service: &str,
        dds_type: &str,
        type_hash: Option<&str>,
    ) -> Result<ZenohClient, ZenohError> {
        let servers: Servers = Arc::default();
        let (known, name) = (servers.clone(), service.to_string());
        let servers_sub = session.watch_tokens(move |key, token| {
            let mut known = known.lock().unwrap_or_else(|p| p.into_inner());
            match token {
                Some(t) => {
                    if t.kind != EntityKind::Service {
                        return;
                    }
                    if let Some(topic) = t.topic.filter(|tt| tt.name == name) {
                        known.insert(key.to_string(), topic.type_hash);
                    }
                }
                None => {
                    known.remove(key);
                }
            }
        })?;
        let qos = crate::service::services_qos();
        let hash = match type_hash {
            Some(h) => h.to_string(),
            None => servers.lock().ok().and_then(|s| s.values().next().cloned()).unwrap_or_else(|| UNKNOWN_HASH.into()),
        };
        let token = node.entity_token(
            session,
            EntityKind::Client,
            TokenTopic { name: service.into(), dds_type: dds_type.into(), type_hash: hash, qos },
        );
        let text = token.key_expr();
        let token_handle = session.token(&text)?;
        Ok(ZenohClient {
            session: session.clone(),
            service: service.to_string(),
            dds_type: dds_type.to_string(),
            gid: gid_of(&text),
            sequence: AtomicI64::new(0),
            pending: Arc::default(),
            servers,
            _servers_sub: servers_sub,
            _token: token_handle,
        })
    }

    /// Whether a server of the service is in the graph.
    pub fn server_ready(&self) -> bool {
        self.servers.lock().map(|s| !s.is_empty()).unwrap_or(false)
    }

    /// The service's name.
    pub fn service(&self) -> &str {
        &self.service
    }

    /// Sends `request` (CDR with its encapsulation header); `on_reply` gets the response (CDR
    /// with its header) with the request's sequence number, which this returns, from Zenoh's
    /// thread. A reply whose attachment names another request is ignored.
    pub fn call(
        &self,
        request: &[u8],
        on_reply: impl Fn(i64, Vec<u8>) + Send + Sync + 'static,
    ) -> Result<i64, ZenohError> {
        let sequence_number = self.sequence.fetch_add(1, Ordering::Relaxed) + 1;
        let hash = self.servers.lock().ok().and_then(|s| s.values().next().cloned()).unwrap_or_else(|| "*".into());
        let key = data_key(self.session.domain(), &self.service, &self.dds_type, &hash);
        let attachment =
            Attachment { sequence_number, source_timestamp: now_ns() as i64, gid: self.gid }.encode().to_vec();
        // Zenoh drops the callback when the query ends (answered in full, timed out or failed).
        let pending = Pending::new(&self.pending);
        self.session
            .session()
            .get(&key)
            .payload(request.to_vec())
            .attachment(attachment)
            .target(zenoh::query::QueryTarget::AllComplete)
            .consolidation(zenoh::query::ConsolidationMode::None)
            .callback(move |reply| {
                let _in_flight = &pending;
                let Ok(sample) = reply.result() else { return };
                let echoed = sample.attachment().and_then(|a| Attachment::decode(&a.to_bytes()));
                if echoed.is_some_and(|a| a.sequence_number != sequence_number) {
                    return;
                }
                on_reply(sequence_number, sample.payload().to_bytes().into_owned());
            })
            .wait()
            .map_err(|e| ZenohError::new(format!("query {key}"), e))?;
        Ok(sequence_number)
    }

    /// Waits up to `timeout` until every query sent has ended (its server answered in full, or
    /// Zenoh gave up on it): Zenoh has no acknowledgement, and a query still queued when the
    /// session closes is lost. Returns how many had not ended.
    pub fn flush(&self, timeout: Duration) -> usize {
        let start = Instant::now();
        loop {
            let left = self.pending.load(Ordering::Acquire);
            if left == 0 || start.elapsed() >= timeout {
                return left;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// One query in flight, counted in its client's `pending` until dropped with the query's
/// callback.
struct Pending(Arc<AtomicUsize>);

impl Pending {
    fn new(count: &Arc<AtomicUsize>) -> Pending {
        count.fetch_add(1, Ordering::AcqRel);
        Pending(count.clone())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
