//! A publisher as rmw_zenoh declares one: its token, puts with the 33-byte attachment
//! (sequence numbers from 1), and for transient local topics an advanced publisher whose cache
//! late subscribers query.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use rbag_storage::rosbag2::qos::{policy, QosProfile};
use zenoh::Wait;

use super::{gid_of, Node, ZenohError, ZenohSession};
use crate::zenoh_wire::{data_key, Attachment, EntityKind, TokenTopic};

enum Inner {
    Plain(zenoh::pubsub::Publisher<'static>),
    Cached(zenoh_ext::AdvancedPublisher<'static>),
}

/// One topic's publisher; dropping it undeclares it and its token.
pub struct ZenohPublisher {
    inner: Inner,
    key: String,
    gid: [u8; 16],
    sequence: AtomicI64,
    _token: zenoh::liveliness::LivelinessToken,
}

impl ZenohPublisher {
    /// Declares a publisher of `node` on the ROS topic `topic`.
    pub fn new(
        session: &Arc<ZenohSession>,
        node: &Node,
        topic: &str,
        dds_type: &str,
        type_hash: &str,
        qos: &QosProfile,
    ) -> Result<ZenohPublisher, ZenohError> {
        let key = data_key(session.domain(), topic, dds_type, type_hash);
        let token = node.entity_token(
            session,
            EntityKind::Publisher,
            TokenTopic { name: topic.into(), dds_type: dds_type.into(), type_hash: type_hash.into(), qos: *qos },
        );
        let text = token.key_expr();
        // rmw_zenoh: BLOCK for reliable keep-all, else DROP.
        let congestion = if qos.reliability != policy::BEST_EFFORT && qos.history == policy::KEEP_ALL {
            zenoh::qos::CongestionControl::Block
        } else {
            zenoh::qos::CongestionControl::Drop
        };
        let what = || format!("declare a publisher on {key}");
        let z = session.session();
        let inner = if qos.durability == policy::TRANSIENT_LOCAL {
            use zenoh_ext::{AdvancedPublisherBuilderExt, CacheConfig};
            let cache = CacheConfig::default().max_samples(qos.depth.max(1) as usize);
            Inner::Cached(
                z.declare_publisher(key.clone())
                    .congestion_control(congestion)
                    .cache(cache)
                    .publisher_detection()
                    .wait()
                    .map_err(|e| ZenohError::new(what(), e))?,
            )
        } else {
            Inner::Plain(
                z.declare_publisher(key.clone())
                    .congestion_control(congestion)
                    .wait()
                    .map_err(|e| ZenohError::new(what(), e))?,
            )
        };
        let token_handle = session.token(&text)?;
        Ok(ZenohPublisher { inner, key, gid: gid_of(&text), sequence: AtomicI64::new(0), _token: token_handle })
    }

    /// Publishes one serialized message (with its encapsulation header).
    pub fn write(&self, data: &[u8], source_timestamp: i64) -> Result<(), ZenohError> {
        let sequence_number = self.sequence.fetch_add(1, Ordering::Relaxed) + 1;
        let attachment = Attachment { sequence_number, source_timestamp, gid: self.gid }.encode().to_vec();
        let result = match &self.inner {
            Inner::Plain(p) => p.put(data.to_vec()).attachment(attachment).wait(),
            Inner::Cached(p) => p.put(data.to_vec()).attachment(attachment).wait(),
        };
        result.map_err(|e| ZenohError::new(format!("put on {}", self.key), e))
    }

    /// Whether a subscriber matches (for waiting before the first message).
    pub fn matched(&self) -> bool {
        let status = match &self.inner {
            Inner::Plain(p) => p.matching_status().wait(),
            Inner::Cached(p) => p.matching_status().wait(),
        };
        status.map(|s| s.matching()).unwrap_or(false)
    }

    /// The data key it publishes on.
    pub fn key(&self) -> &str {
        &self.key
    }
}
