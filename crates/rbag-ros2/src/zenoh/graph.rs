//! Discovery and subscriptions on a Zenoh graph: rmw_zenoh's liveliness tokens, read with
//! history, become [`Endpoint`]s in DDS names (the tokens carry the DDS type names already),
//! and each subscription declares its own token, as an rmw_zenoh subscription does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rbag_storage::rosbag2::qos::{policy, QosProfile};
use zenoh::Wait;

use super::{gid_of, Node, ZenohError, ZenohSession};
use crate::graph::{
    Endpoint, EndpointEvent, EndpointKind, Graph, GraphError, Guid, Sample, SampleCallback, Subscription,
    MAX_SAMPLE_BYTES,
};
use crate::zenoh_wire::{data_key, Attachment, EntityKind, Token, TokenTopic};

#[derive(Default)]
struct Known {
    endpoints: HashMap<String, Endpoint>,
    events: Vec<EndpointEvent>,
}

/// A Zenoh graph seen from one node (`rbag_recorder` by default).
pub struct ZenohGraph {
    session: Arc<ZenohSession>,
    node: Node,
    known: Arc<Mutex<Known>>,
    _tokens: zenoh::pubsub::Subscriber<()>,
}

/// The endpoint a token stands for, or `None` for nodes and services.
fn endpoint(token: &Token, key: &str, own: &str) -> Option<Endpoint> {
    let kind = match token.kind {
        EntityKind::Publisher => EndpointKind::Writer,
        EntityKind::Subscription => EndpointKind::Reader,
        _ => return None,
    };
    let topic = token.topic.as_ref()?;
    let mut participant = [0u8; 16];
    let zid = token.zid.as_bytes();
    participant[..zid.len().min(16)].copy_from_slice(&zid[..zid.len().min(16)]);
    Some(Endpoint {
        kind,
        guid: Guid(gid_of(key)),
        participant: Guid(participant),
        topic: crate::names::topic_to_dds(&topic.name),
        type_name: topic.dds_type.clone(),
        qos: topic.qos,
        type_hash: Some(topic.type_hash.clone()),
        local: token.zid == own,
    })
}

impl ZenohGraph {
    /// Follows the graph of `session`'s domain as node `name`.
    pub fn new(session: Arc<ZenohSession>, name: &str) -> Result<ZenohGraph, ZenohError> {
        let node = Node::new(&session, "/", name)?;
        Self::with_node(session, node)
    }

    /// Follows the graph of `session`'s domain as `node` (its subscriptions are that node's).
    pub fn with_node(session: Arc<ZenohSession>, node: Node) -> Result<ZenohGraph, ZenohError> {
        let known: Arc<Mutex<Known>> = Arc::default();
        let (k, own) = (known.clone(), session.zid().to_string());
        let tokens = session.watch_tokens(move |key, token| {
            let mut known = k.lock().unwrap_or_else(|p| p.into_inner());
            match token {
                Some(t) => {
                    let Some(e) = endpoint(&t, key, &own) else { return };
                    if known.endpoints.insert(key.to_string(), e.clone()).is_none() {
                        known.events.push(EndpointEvent::Appeared(e));
                    }
                }
                None => {
                    if let Some(e) = known.endpoints.remove(key) {
                        known.events.push(EndpointEvent::Gone(e));
                    }
                }
            }
        })?;
        Ok(ZenohGraph { session, node, known, _tokens: tokens })
    }

    /// The session it runs on.
    pub fn session(&self) -> &Arc<ZenohSession> {
        &self.session
    }

    /// The node it follows the graph as (its subscriptions are this node's).
    pub fn node(&self) -> &Node {
        &self.node
    }
}

/// A subscription and its token; dropping it undeclares both.
struct ZenohSubscription {
    _subscriber: Box<dyn Send + Sync>,
    _token: zenoh::liveliness::LivelinessToken,
    oversized: Arc<AtomicU64>,
}

impl Subscription for ZenohSubscription {
    fn oversized(&self) -> u64 {
        self.oversized.load(Ordering::Relaxed)
    }
}

/// The handler every subscription shares: rmw_zenoh's rules (a sample without an attachment
/// is dropped), the size bound, and the source timestamp from the attachment.
fn on_sample(on_sample: SampleCallback, oversized: Arc<AtomicU64>) -> impl Fn(zenoh::sample::Sample) + Send + Sync {
    move |sample| {
        let Some(att) = sample.attachment().and_then(|a| Attachment::decode(&a.to_bytes())) else { return };
        if sample.payload().len() > MAX_SAMPLE_BYTES {
            oversized.fetch_add(1, Ordering::Relaxed);
            return;
        }
        on_sample(Sample {
            data: sample.payload().to_bytes().into_owned(),
            source_timestamp: att.source_timestamp,
            publication: u64::from_le_bytes(att.gid[..8].try_into().unwrap_or_default()),
        });
    }
}

impl Graph for ZenohGraph {
    fn poll(&mut self) -> Vec<EndpointEvent> {
        std::mem::take(&mut self.known.lock().unwrap_or_else(|p| p.into_inner()).events)
    }

    fn endpoints(&self) -> Vec<Endpoint> {
        self.known.lock().unwrap_or_else(|p| p.into_inner()).endpoints.values().cloned().collect()
    }

    fn subscribe(
        &self,
        topic: &str,
        dds_type: &str,
        type_hash: Option<&str>,
        qos: &QosProfile,
        callback: SampleCallback,
    ) -> Result<Box<dyn Subscription>, GraphError> {
        let hash = type_hash.unwrap_or("*");
        let key = data_key(self.session.domain(), topic, dds_type, hash);
        let token = self.node.entity_token(
            &self.session,
            EntityKind::Subscription,
            TokenTopic { name: topic.into(), dds_type: dds_type.into(), type_hash: hash.into(), qos: *qos },
        );
        let oversized = Arc::new(AtomicU64::new(0));
        let handler = on_sample(callback, oversized.clone());
        let what = || format!("subscribe to {key}");
        let subscriber: Box<dyn Send + Sync> = if qos.durability == policy::TRANSIENT_LOCAL {
            // As rmw_zenoh: an advanced subscriber that fetches each publisher's cache, late
            // joiners included.
            use zenoh_ext::{AdvancedSubscriberBuilderExt, HistoryConfig};
            let history = HistoryConfig::default().detect_late_publishers().max_samples(qos.depth.max(1) as usize);
            Box::new(
                self.session
                    .session()
                    .declare_subscriber(&key)
                    .history(history)
                    .subscriber_detection()
                    .callback(handler)
                    .wait()
                    .map_err(|e| ZenohError::new(what(), e))?,
            )
        } else {
            Box::new(
                self.session
                    .session()
                    .declare_subscriber(&key)
                    .callback(handler)
                    .wait()
                    .map_err(|e| ZenohError::new(what(), e))?,
            )
        };
        let token = self.session.token(&token.key_expr())?;
        Ok(Box::new(ZenohSubscription { _subscriber: subscriber, _token: token, oversized }))
    }
}
