//! A service server as rmw_zenoh declares one: a queryable on the service's data key, an `SS`
//! token, requests read from the query's payload (CDR, no header) and attachment (the client's
//! sequence number and GID), and each reply sent with an attachment carrying that sequence
//! number and GID back (rmw_service_data.cpp L129-176 and L438-454 at rmw_zenoh 0.2.10; the same
//! at 0.6.7 and 0.10.5, two lines lower).
//!
//! The queryable takes any type hash in the last chunk of the key, so clients of every distro's
//! layout reach it; the handler sees the hash the client named ([`Fields::type_hash`]).

use std::sync::mpsc;
use std::sync::Arc;

use zenoh::Wait;

use super::{Node, ZenohError, ZenohSession};
use crate::names::type_to_dds;
use crate::record::{now_ns, Log};
use crate::service::{parse_plain_request, Handler, MAX_REQUEST_BYTES};
use crate::zenoh_wire::{data_key, Attachment, EntityKind, TokenTopic};

/// Requests waiting for the handler; more are dropped, as over DDS.
const QUEUED_REQUESTS: usize = 32;

/// One service served on a node; dropping it undeclares the queryable and the token.
pub struct ZenohServiceServer {
    _queryable: zenoh::query::Queryable<()>,
    _token: zenoh::liveliness::LivelinessToken,
}

/// A node that serves services: what [`crate::service::ServiceHost`] needs on Zenoh.
pub struct ZenohServices {
    session: Arc<ZenohSession>,
    node: Node,
}

impl ZenohServices {
    /// Declares node `name` (in `/`) on `session` to hold services.
    pub fn new(session: Arc<ZenohSession>, name: &str) -> Result<ZenohServices, ZenohError> {
        let node = Node::new(&session, "/", name.trim_start_matches('/'))?;
        Ok(ZenohServices { session, node })
    }

    /// Services of an existing node.
    pub fn with_node(session: Arc<ZenohSession>, node: Node) -> ZenohServices {
        ZenohServices { session, node }
    }

    /// The node, for the node's other entities (publishers).
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// Serves `service` (a ROS name) of type `srv_type` (`pkg/srv/S`), announced with
    /// `type_hash`, with `handler` on a thread of its own, one request at a time.
    pub fn serve(
        &self,
        service: &str,
        srv_type: &str,
        type_hash: &str,
        mut handler: Handler,
        log: Log,
    ) -> Result<ZenohServiceServer, ZenohError> {
        let dds = type_to_dds(srv_type).ok_or_else(|| {
            ZenohError::new(format!("serve {service}"), format!("type {srv_type:?} is not pkg/srv/Type"))
        })?;
        let key = data_key(self.session.domain(), service, &dds, "*");
        let qos = crate::service::services_qos();
        let token = self.node.entity_token(
            &self.session,
            EntityKind::Service,
            TokenTopic { name: service.into(), dds_type: dds.clone(), type_hash: type_hash.into(), qos },
        );
        let (tx, rx) = mpsc::sync_channel::<zenoh::query::Query>(QUEUED_REQUESTS);
        let queryable = self
            .session
            .session()
            .declare_queryable(&key)
            .complete(true)
            .callback(move |q| {
                let _ = tx.try_send(q);
            })
            .wait()
            .map_err(|e| ZenohError::new(format!("declare a queryable on {key}"), e))?;
        let name = service.to_string();
        std::thread::Builder::new()
            .name("service".into())
            .spawn(move || {
                // Ends when the queryable (and with it the sender) is dropped.
                for query in rx {
                    if let Err(why) = answer(&query, &mut handler) {
                        log(format!("warning: service {name}: {why}"));
                    }
                }
            })
            .map_err(|e| ZenohError::new(format!("serve {service}"), e))?;
        let token = self.session.token(&token.key_expr())?;
        Ok(ZenohServiceServer { _queryable: queryable, _token: token })
    }
}

/// Answers one query, or says why it was not answered.
fn answer(query: &zenoh::query::Query, handler: &mut Handler) -> Result<(), String> {
    let key = query.key_expr().clone();
    let request = query
        .attachment()
        .and_then(|a| Attachment::decode(&a.to_bytes()))
        .ok_or_else(|| format!("ignored a request on {key} without rmw_zenoh's attachment"))?;
    let payload = query.payload().map(|p| p.to_bytes().into_owned()).unwrap_or_default();
    if payload.len() > MAX_REQUEST_BYTES {
        return Err(format!("ignored a request of {} bytes on {key}", payload.len()));
    }
    let hash = key.as_str().rsplit('/').next().filter(|h| h.starts_with("RIHS01_"));
    let fields = parse_plain_request(&payload, hash)
        .ok_or_else(|| format!("ignored a request of {} bytes on {key}: not little-endian CDR", payload.len()))?;
    let mut reply = vec![0, 1, 0, 0];
    reply.extend_from_slice(&handler(&fields));
    let attachment = Attachment { source_timestamp: now_ns() as i64, ..request };
    query
        .reply(key.clone(), reply)
        .attachment(attachment.encode().to_vec())
        .wait()
        .map_err(|e| format!("reply on {key} not sent: {e}"))
}
