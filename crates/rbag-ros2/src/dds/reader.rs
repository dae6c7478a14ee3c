//! A raw reader: every sample's serialized bytes, as they came off the wire.

use std::mem::MaybeUninit;
use std::os::raw::c_void;

use cyclors::{
    dds_create_listener, dds_create_reader, dds_delete, dds_delete_listener, dds_entity_t,
    dds_get_subscription_matched_status, dds_lset_data_available, dds_sample_info_t, dds_subscription_matched_status_t,
    dds_takecdr, ddsi_serdata, ddsi_serdata_size, ddsi_serdata_to_ser_ref, ddsi_serdata_to_ser_unref,
    ddsi_serdata_unref, ddsrt_iovec_t, DDS_ANY_STATE,
};
use rbag_storage::rosbag2::qos::QosProfile;

use super::qos::{to_native_qos, Role};
use super::{blob_topic, check, DdsError, Participant};

pub use crate::graph::{Sample, SampleCallback, MAX_SAMPLE_BYTES};

struct ListenerState {
    callback: SampleCallback,
    oversized: std::sync::atomic::AtomicU64,
}

/// A reader on one topic; dropping it stops the callbacks.
pub struct RawReader {
    handle: dds_entity_t,
    state: *mut ListenerState,
}

// SAFETY: the handle is an integer and the state is only read (through `Sync` types) by the
// listener until drop.
unsafe impl Send for RawReader {}
unsafe impl Sync for RawReader {}

unsafe extern "C" fn on_data_available(reader: dds_entity_t, arg: *mut c_void) {
    // SAFETY: `arg` is the ListenerState the RawReader owns; it outlives the reader entity.
    let state = unsafe { &*(arg as *const ListenerState) };
    let mut sd: *mut ddsi_serdata = std::ptr::null_mut();
    let mut info = MaybeUninit::<dds_sample_info_t>::zeroed();
    loop {
        // SAFETY: out pointers are valid; blob readers are only read through takecdr.
        let n = unsafe { dds_takecdr(reader, &mut sd, 1, info.as_mut_ptr(), DDS_ANY_STATE) };
        if n <= 0 {
            break;
        }
        // SAFETY: takecdr filled `info` and gave us one reference to `sd`.
        unsafe {
            let i = info.assume_init_ref();
            if i.valid_data {
                let size = ddsi_serdata_size(sd) as usize;
                if size > MAX_SAMPLE_BYTES {
                    state.oversized.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                } else {
                    let mut iov = ddsrt_iovec_t { iov_base: std::ptr::null_mut(), iov_len: 0 };
                    let r = ddsi_serdata_to_ser_ref(sd, 0, size, &mut iov);
                    let data = if iov.iov_base.is_null() {
                        Vec::new()
                    } else {
                        std::slice::from_raw_parts(iov.iov_base as *const u8, iov.iov_len as usize).to_vec()
                    };
                    ddsi_serdata_to_ser_unref(r, &iov);
                    let sample =
                        Sample { data, source_timestamp: i.source_timestamp, publication: i.publication_handle };
                    // A panicking callback must not unwind into C.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (state.callback)(sample)));
                }
            }
            ddsi_serdata_unref(sd);
        }
    }
}

impl RawReader {
    /// Subscribes to the DDS topic `topic` of type `type_name` with `qos`.
    pub fn new(
        participant: &Participant,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
        callback: SampleCallback,
    ) -> Result<RawReader, DdsError> {
        let t = blob_topic(participant, topic, type_name)?;
        let state = Box::into_raw(Box::new(ListenerState { callback, oversized: Default::default() }));
        let native = to_native_qos(qos, Role::Reader, None);
        // SAFETY: the listener is copied by dds_create_reader and deleted after; `state` lives
        // until this reader is deleted (Drop).
        let handle = unsafe {
            let l = dds_create_listener(state as *mut c_void);
            dds_lset_data_available(l, Some(on_data_available));
            let r = dds_create_reader(participant.handle(), t, native.0, l);
            dds_delete_listener(l);
            r
        };
        if let Err(e) = check(handle, || format!("subscribing to {topic}")) {
            // SAFETY: no reader holds `state`.
            drop(unsafe { Box::from_raw(state) });
            return Err(e);
        }
        Ok(RawReader { handle, state })
    }

    /// Writers matched now.
    pub fn matched(&self) -> u32 {
        let mut st = MaybeUninit::<dds_subscription_matched_status_t>::zeroed();
        // SAFETY: valid out pointer; zeroed is a valid status.
        unsafe {
            dds_get_subscription_matched_status(self.handle, st.as_mut_ptr());
            st.assume_init().current_count
        }
    }

    /// The `RIHS01_…` type hash a matched writer (by its sample's publication handle) names in
    /// its user data, as rmw_cyclonedds and rmw_fastrtps write it.
    pub fn writer_type_hash(&self, publication: u64) -> Option<String> {
        // SAFETY: the returned endpoint is read while alive and freed once.
        unsafe {
            let e = cyclors::dds_get_matched_publication_data(self.handle, publication);
            if e.is_null() {
                return None;
            }
            let q = (*e).qos;
            let user_data = std::panic::catch_unwind(|| super::qos::from_native_qos(q, Role::Writer).1).ok().flatten();
            cyclors::dds_builtintopic_free_endpoint(e);
            user_data.as_deref().and_then(crate::names::type_hash_from_user_data)
        }
    }

    /// Samples dropped for passing [`MAX_SAMPLE_BYTES`].
    pub fn oversized(&self) -> u64 {
        // SAFETY: state lives as long as self.
        unsafe { &*self.state }.oversized.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for RawReader {
    fn drop(&mut self) {
        // SAFETY: dds_delete waits for a listener call in progress, so the state is free after.
        unsafe {
            dds_delete(self.handle);
            drop(Box::from_raw(self.state));
        }
    }
}
