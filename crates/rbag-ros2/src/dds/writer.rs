//! A raw writer: publishes serialized samples (with their encapsulation header) as they are.

use std::mem::MaybeUninit;

use cyclors::{
    dds_create_writer, dds_delete, dds_entity_t, dds_forwardcdr, dds_get_entity_sertype,
    dds_get_publication_matched_status, dds_publication_matched_status_t, dds_wait_for_acks, ddsi_serdata_from_ser_iov,
    ddsi_serdata_kind_SDK_DATA, ddsi_sertype, ddsrt_iovec_t,
};
use rbag_storage::rosbag2::qos::QosProfile;

use super::qos::{to_native_qos, Role};
use super::{blob_topic, check, DdsError, Participant};

/// A writer on one topic.
pub struct RawWriter {
    handle: dds_entity_t,
    sertype: *const ddsi_sertype,
    topic: String,
}

// SAFETY: the handle is an integer; the sertype is immutable and owned by the topic, which
// lives as long as the writer.
unsafe impl Send for RawWriter {}
unsafe impl Sync for RawWriter {}

impl RawWriter {
    /// Publishes on the DDS topic `topic` of type `type_name` with `qos`; `user_data` is the
    /// endpoint's user data (rmw's `typehash=…;`).
    pub fn new(
        participant: &Participant,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
        user_data: Option<&str>,
    ) -> Result<RawWriter, DdsError> {
        let t = blob_topic(participant, topic, type_name)?;
        let native = to_native_qos(qos, Role::Writer, user_data);
        // SAFETY: valid participant and topic handles; the QoS is copied.
        let handle = unsafe { dds_create_writer(participant.handle(), t, native.0, std::ptr::null()) };
        check(handle, || format!("publishing on {topic}"))?;
        let mut sertype: *const ddsi_sertype = std::ptr::null();
        // SAFETY: valid out pointer.
        check(unsafe { dds_get_entity_sertype(handle, &mut sertype) }, || format!("reading the type of {topic}"))?;
        Ok(RawWriter { handle, sertype, topic: topic.to_string() })
    }

    /// Sends one serialized sample, waiting for slow reliable readers as a ROS 2 publisher
    /// does, until `give_up` says to stop (checked every `MAX_BLOCKING_NS`, 1 s).
    pub fn write_waiting(
        &self,
        data: &[u8],
        source_timestamp: i64,
        give_up: &dyn Fn() -> bool,
    ) -> Result<(), DdsError> {
        loop {
            match self.write(data, source_timestamp) {
                Err(e) if e.timed_out() && !give_up() => continue,
                other => return other,
            }
        }
    }

    /// Sends one serialized sample stamped with `source_timestamp` (ns since the epoch); the
    /// subscriber sees that time, as a rosbag2 player's subscribers see the send time. Fails
    /// with a timeout ([`DdsError::timed_out`]) when reliable readers are too far behind.
    pub fn write(&self, data: &[u8], source_timestamp: i64) -> Result<(), DdsError> {
        if data.len() < 4 {
            return Err(DdsError::own(
                format!("publishing on {}", self.topic),
                format!("a sample of {} bytes has no encapsulation header", data.len()),
            ));
        }
        let iov = ddsrt_iovec_t { iov_base: data.as_ptr() as *mut _, iov_len: data.len() as _ };
        // SAFETY: cyclocut copies the bytes into a new serdata; forwardcdr consumes our
        // reference and keeps the timestamp we set.
        let rc = unsafe {
            let sd = ddsi_serdata_from_ser_iov(self.sertype, ddsi_serdata_kind_SDK_DATA, 1, &iov, data.len());
            if sd.is_null() {
                return Err(DdsError::own(format!("publishing on {}", self.topic), "out of memory"));
            }
            (*sd).statusinfo = 0;
            (*sd).timestamp.v = source_timestamp;
            dds_forwardcdr(self.handle, sd)
        };
        check(rc, || format!("publishing on {}", self.topic)).map(drop)
    }

    /// Readers matched now.
    pub fn matched(&self) -> u32 {
        let mut st = MaybeUninit::<dds_publication_matched_status_t>::zeroed();
        // SAFETY: valid out pointer; zeroed is a valid status.
        unsafe {
            dds_get_publication_matched_status(self.handle, st.as_mut_ptr());
            st.assume_init().current_count
        }
    }

    /// Waits until every matched reliable reader acknowledged everything written, or the
    /// timeout passes (`--wait-for-all-acked`, and before leaving the graph).
    pub fn wait_for_acks(&self, timeout: std::time::Duration) -> Result<(), DdsError> {
        let ns = i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX);
        // SAFETY: valid writer handle.
        check(unsafe { dds_wait_for_acks(self.handle, ns) }, || {
            format!("waiting for acknowledgements on {}", self.topic)
        })
        .map(drop)
    }

    /// The DDS topic it writes.
    pub fn topic(&self) -> &str {
        &self.topic
    }
}

impl Drop for RawWriter {
    fn drop(&mut self) {
        // SAFETY: deleting twice (after the participant) only returns an error.
        unsafe { dds_delete(self.handle) };
    }
}
