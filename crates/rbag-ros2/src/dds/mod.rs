//! A DDS participant that moves serialized samples without type support, on Cyclone DDS (the
//! stack rmw_cyclonedds uses) through the `cyclors` bindings. See `docs/ros2-dds-choice.md`
//! for why this stack and not a pure-Rust one.
//!
//! Every topic is a cyclocut "blob" topic: Cyclone matches endpoints by topic and type name
//! and hands over each sample's serialized bytes (with the 4-byte encapsulation header), which
//! is what rosbag2 stores. All FFI lives in this module; what leaves it is safe Rust.
//!
//! Rules the wrappers keep:
//! - only the `*cdr` calls touch blob readers and writers (cyclocut aborts on `dds_take`);
//! - the data-available listener runs on Cyclone's receive thread: it copies the bytes out and
//!   calls the owner's callback, which must hand them off and return;
//! - entities are deleted before the state their listeners point to is freed.

#![warn(missing_docs)]

mod discovery;
mod node_info;
mod qos;
mod reader;
mod writer;

use std::ffi::{CStr, CString};

use cyclors::{dds_create_participant, dds_delete, dds_entity_t, dds_get_guid, dds_guid_t, dds_strretcode};

pub use discovery::{Endpoint, EndpointEvent, EndpointKind, Endpoints};
pub use node_info::{encode as participant_entities_info, DdsNode, NodeAnnouncer, NodeEntities};
pub use qos::{from_native_qos, profile_to_qos, qos_to_profile, to_native_qos, NativeQos, Role};
pub use reader::{RawReader, Sample, SampleCallback, MAX_SAMPLE_BYTES};
pub use writer::RawWriter;

/// A DDS domain as a [`crate::graph::Graph`]: the participant's discovery and raw readers.
pub struct DdsGraph {
    participant: std::sync::Arc<Participant>,
    endpoints: Endpoints,
}

impl DdsGraph {
    /// Follows `participant`'s domain.
    pub fn new(participant: std::sync::Arc<Participant>) -> Result<DdsGraph, DdsError> {
        let endpoints = Endpoints::new(&participant)?;
        Ok(DdsGraph { participant, endpoints })
    }
}

impl crate::graph::Subscription for RawReader {
    fn oversized(&self) -> u64 {
        RawReader::oversized(self)
    }
}

impl crate::graph::Graph for DdsGraph {
    fn poll(&mut self) -> Vec<EndpointEvent> {
        self.endpoints.poll()
    }

    fn endpoints(&self) -> Vec<Endpoint> {
        self.endpoints.all().cloned().collect()
    }

    fn subscribe(
        &self,
        topic: &str,
        dds_type: &str,
        _type_hash: Option<&str>,
        qos: &rbag_storage::rosbag2::qos::QosProfile,
        on_sample: SampleCallback,
    ) -> Result<Box<dyn crate::graph::Subscription>, crate::graph::GraphError> {
        let dds_topic = crate::names::topic_to_dds(topic);
        Ok(Box::new(RawReader::new(&self.participant, &dds_topic, dds_type, qos, on_sample)?))
    }
}

/// A DDS call failed; says which call, on what, and Cyclone's reason.
#[derive(Debug, thiserror::Error)]
#[error("DDS: {what}: {reason}")]
pub struct DdsError {
    /// The call and what it acted on (`publishing on rt/chatter`).
    pub what: String,
    /// Cyclone's (or rbag's) reason.
    pub reason: String,
    /// Cyclone's return code (0 when the error is rbag's own).
    pub code: i32,
}

impl DdsError {
    pub(crate) fn own(what: String, reason: impl Into<String>) -> DdsError {
        DdsError { what, reason: reason.into(), code: 0 }
    }

    /// A reliable write waited its maximum blocking time for slow readers: the sample was not
    /// taken and can be written again.
    pub fn timed_out(&self) -> bool {
        self.code == cyclors::DDS_RETCODE_TIMEOUT
    }
}

pub(crate) fn check(rc: i32, what: impl FnOnce() -> String) -> Result<i32, DdsError> {
    if rc >= 0 {
        return Ok(rc);
    }
    // SAFETY: dds_strretcode returns a static C string for any code.
    let reason = unsafe { CStr::from_ptr(dds_strretcode(rc)) }.to_string_lossy().into_owned();
    Err(DdsError { what: what(), reason, code: rc })
}

pub(crate) fn cstring(s: &str, what: &str) -> Result<CString, DdsError> {
    CString::new(s).map_err(|_| DdsError::own(format!("{what} {s:?}"), "contains a NUL byte"))
}

pub use crate::graph::Guid;

impl From<dds_guid_t> for Guid {
    fn from(g: dds_guid_t) -> Guid {
        Guid(g.v)
    }
}

/// One DDS domain participant. Readers and writers borrow it; dropping it deletes everything
/// it created.
pub struct Participant {
    handle: dds_entity_t,
    guid: Guid,
    domain: u32,
}

// SAFETY: Cyclone's API is thread-safe; the handle is a plain integer.
unsafe impl Send for Participant {}
unsafe impl Sync for Participant {}

impl Participant {
    /// Joins `domain`. Cyclone reads its configuration from `CYCLONEDDS_URI`, as a ROS 2 node
    /// on rmw_cyclonedds does; ROS_LOCALHOST_ONLY is the caller's to apply (see [`configure_domain`]).
    pub fn new(domain: u32) -> Result<Participant, DdsError> {
        // SAFETY: null QoS and listener are allowed.
        let handle = unsafe { dds_create_participant(domain, std::ptr::null(), std::ptr::null()) };
        check(handle, || format!("joining domain {domain}"))?;
        let mut g = dds_guid_t { v: [0; 16] };
        // SAFETY: `g` is a valid out pointer.
        check(unsafe { dds_get_guid(handle, &mut g) }, || "reading the participant GUID".into())?;
        Ok(Participant { handle, guid: g.into(), domain })
    }

    /// The participant's GUID.
    pub fn guid(&self) -> Guid {
        self.guid
    }

    /// The DDS domain it joined.
    pub fn domain(&self) -> u32 {
        self.domain
    }

    pub(crate) fn handle(&self) -> dds_entity_t {
        self.handle
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        // SAFETY: deleting a participant deletes its children; readers free their callback
        // state only after their own delete, which then fails harmlessly.
        unsafe { dds_delete(self.handle) };
    }
}

/// Cyclone's configuration for a host-only graph (`ROS_LOCALHOST_ONLY=1`): the loopback
/// interface, unicast discovery to this host's participants.
pub const LOCALHOST_CONFIG: &str = "<General><Interfaces><NetworkInterface name=\"lo\" multicast=\"false\"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex><Peers><Peer address=\"127.0.0.1\"/></Peers></Discovery>";

/// Configures `domain` with Cyclone XML before its first participant is created.
pub fn configure_domain(domain: u32, xml: &str) -> Result<(), DdsError> {
    let c = cstring(xml, "configuration")?;
    // SAFETY: Cyclone copies the configuration string.
    let rc = unsafe { cyclors::dds_create_domain(domain, c.as_ptr()) };
    check(rc, || format!("configuring domain {domain}")).map(drop)
}

/// Creates (or finds) the blob topic `topic` with the DDS type name `type_name`.
pub(crate) fn blob_topic(p: &Participant, topic: &str, type_name: &str) -> Result<dds_entity_t, DdsError> {
    let t = cstring(topic, "topic name")?;
    let y = cstring(type_name, "type name")?;
    // SAFETY: cyclocut only reads the names (it copies them).
    let handle = unsafe { cyclors::cdds_create_blob_topic(p.handle, t.as_ptr() as *mut _, y.as_ptr() as *mut _, true) };
    check(handle, || format!("creating topic {topic} of type {type_name}"))
}
