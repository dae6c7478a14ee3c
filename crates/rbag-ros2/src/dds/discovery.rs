//! What the graph holds: remote writers and readers with their topic, type and QoS, from
//! DDS's built-in DCPSPublication and DCPSSubscription topics (SEDP).

use std::collections::HashMap;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::raw::c_void;

use cyclors::{
    dds_builtintopic_endpoint_t, dds_create_reader, dds_entity_t, dds_instance_handle_t, dds_return_loan,
    dds_sample_info_t, dds_take, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION,
};

use super::qos::{from_native_qos, Role};
use super::{check, DdsError, Guid, Participant};
use crate::names::type_hash_from_user_data;

pub use crate::graph::{Endpoint, EndpointEvent, EndpointKind};

/// Follows the built-in discovery topics; call [`Endpoints::poll`] to learn what changed.
pub struct Endpoints {
    readers: [(dds_entity_t, EndpointKind); 2],
    own: Guid,
    known: HashMap<(EndpointKind, dds_instance_handle_t), Endpoint>,
}

// SAFETY: only integer handles.
unsafe impl Send for Endpoints {}

impl Endpoints {
    /// Starts following discovery on `participant`'s domain.
    pub fn new(participant: &Participant) -> Result<Endpoints, DdsError> {
        let mut readers = [(0, EndpointKind::Writer), (0, EndpointKind::Reader)];
        for (slot, topic) in
            readers.iter_mut().zip([DDS_BUILTIN_TOPIC_DCPSPUBLICATION, DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION])
        {
            // SAFETY: built-in topics take null QoS and listener.
            let r = unsafe { dds_create_reader(participant.handle(), topic, std::ptr::null(), std::ptr::null()) };
            slot.0 = check(r, || "reading the discovery topics".into())?;
        }
        Ok(Endpoints { readers, own: participant.guid().participant(), known: HashMap::new() })
    }

    /// Every endpoint known now.
    pub fn all(&self) -> impl Iterator<Item = &Endpoint> {
        self.known.values()
    }

    /// What appeared or left since the last call.
    pub fn poll(&mut self) -> Vec<EndpointEvent> {
        let mut events = Vec::new();
        for (reader, kind) in self.readers {
            loop {
                const N: usize = 32;
                let mut buf: [*mut c_void; N] = [std::ptr::null_mut(); N];
                let mut infos: [MaybeUninit<dds_sample_info_t>; N] = [const { MaybeUninit::zeroed() }; N];
                // SAFETY: loaned samples of the built-in topic, returned below.
                let n = unsafe {
                    dds_take(reader, buf.as_mut_ptr(), infos.as_mut_ptr() as *mut dds_sample_info_t, N, N as u32)
                };
                if n <= 0 {
                    break;
                }
                for i in 0..n as usize {
                    // SAFETY: take filled the first n infos.
                    let info = unsafe { infos[i].assume_init_ref() };
                    let key = (kind, info.instance_handle);
                    let alive = info.instance_state == cyclors::DDS_ALIVE_INSTANCE_STATE;
                    if info.valid_data && alive {
                        // SAFETY: a valid built-in sample is a dds_builtintopic_endpoint_t.
                        if let Some(e) = unsafe { self.endpoint(kind, buf[i] as *const dds_builtintopic_endpoint_t) } {
                            if self.known.insert(key, e.clone()).as_ref() != Some(&e) {
                                events.push(EndpointEvent::Appeared(e));
                            }
                        }
                    } else if !alive {
                        if let Some(e) = self.known.remove(&key) {
                            events.push(EndpointEvent::Gone(e));
                        }
                    }
                }
                // SAFETY: returning exactly the loan taken.
                unsafe { dds_return_loan(reader, buf.as_mut_ptr(), n) };
                if (n as usize) < N {
                    break;
                }
            }
        }
        events
    }

    /// # Safety
    /// `e` must point to a valid endpoint sample.
    unsafe fn endpoint(&self, kind: EndpointKind, e: *const dds_builtintopic_endpoint_t) -> Option<Endpoint> {
        // SAFETY: the caller guarantees `e`.
        let e = unsafe { e.as_ref()? };
        if e.topic_name.is_null() || e.type_name.is_null() {
            return None;
        }
        // SAFETY: non-null C strings owned by the loan.
        let topic = unsafe { CStr::from_ptr(e.topic_name) }.to_string_lossy().into_owned();
        let type_name = unsafe { CStr::from_ptr(e.type_name) }.to_string_lossy().into_owned();
        let role = if kind == EndpointKind::Writer { Role::Writer } else { Role::Reader };
        // cyclors panics on enum values it does not know; a remote peer's QoS must not
        // take the process down.
        let qos = e.qos;
        let (qos, user_data) = std::panic::catch_unwind(|| unsafe { from_native_qos(qos, role) }).ok()?;
        let participant = Guid::from(e.participant_key);
        Some(Endpoint {
            kind,
            guid: Guid::from(e.key),
            participant,
            topic,
            type_name,
            qos,
            type_hash: user_data.as_deref().and_then(type_hash_from_user_data),
            local: participant == self.own,
        })
    }
}

impl Drop for Endpoints {
    fn drop(&mut self) {
        for (r, _) in self.readers {
            // SAFETY: deleting twice only returns an error.
            unsafe { cyclors::dds_delete(r) };
        }
    }
}
