//! ROS 2 services as rmw_cyclonedds carries them, so `ros2 service call` on a Cyclone-based
//! ROS 2 system reaches rbag.
//!
//! A service `/a/b` of type `pkg/srv/S` is a reader on `rq/a/bRequest`
//! (`pkg::srv::dds_::S_Request_`) and a writer on `rr/a/bReply` (`pkg::srv::dds_::S_Response_`).
//! rmw_cyclonedds puts a 16-byte request header in the payload, after the encapsulation
//! header and before the request's fields: the client's id (8 bytes) and a sequence number (8
//! bytes). The reply carries the same 16 bytes, which is how a client finds its answer among
//! everyone's. (Fast DDS puts the request identity in RTPS inline QoS instead; rmw_fastrtps
//! clients are not served.) The header is 16 bytes, so the fields after it keep the alignment
//! they would have at the start of the stream.

#![warn(missing_docs)]

#[cfg(feature = "dds")]
pub use server::ServiceServer;

/// Where services are served: a DDS participant, or a node on a Zenoh session.
pub trait ServiceHost: Send + Sync {
    /// Serves `service` (a ROS name) of type `srv_type` (`pkg/srv/S`, whose RIHS01 hash is
    /// `type_hash`) with `handler`, on a thread of its own, until the returned guard drops.
    fn serve(
        &self,
        service: &str,
        srv_type: &str,
        type_hash: &str,
        handler: Handler,
        log: crate::record::Log,
    ) -> Result<Box<dyn Send>, crate::graph::GraphError>;
}

impl<T: ServiceHost + ?Sized> ServiceHost for std::sync::Arc<T> {
    fn serve(
        &self,
        service: &str,
        srv_type: &str,
        type_hash: &str,
        handler: Handler,
        log: crate::record::Log,
    ) -> Result<Box<dyn Send>, crate::graph::GraphError> {
        (**self).serve(service, srv_type, type_hash, handler, log)
    }
}

#[cfg(feature = "dds")]
impl ServiceHost for crate::dds::Participant {
    fn serve(
        &self,
        service: &str,
        srv_type: &str,
        _type_hash: &str,
        handler: Handler,
        log: crate::record::Log,
    ) -> Result<Box<dyn Send>, crate::graph::GraphError> {
        Ok(Box::new(ServiceServer::new(self, service, srv_type, handler, log)?))
    }
}

#[cfg(feature = "dds")]
impl ServiceHost for crate::dds::DdsNode {
    fn serve(
        &self,
        service: &str,
        srv_type: &str,
        type_hash: &str,
        handler: Handler,
        log: crate::record::Log,
    ) -> Result<Box<dyn Send>, crate::graph::GraphError> {
        self.participant().serve(service, srv_type, type_hash, handler, log)
    }
}

#[cfg(feature = "zenoh")]
impl ServiceHost for crate::zenoh::ZenohServices {
    fn serve(
        &self,
        service: &str,
        srv_type: &str,
        type_hash: &str,
        handler: Handler,
        log: crate::record::Log,
    ) -> Result<Box<dyn Send>, crate::graph::GraphError> {
        Ok(Box::new(crate::zenoh::ZenohServices::serve(self, service, srv_type, type_hash, handler, log)?))
    }
}

/// rmw's default QoS for services' requests and replies (`rmw_qos_profile_services_default`):
/// reliable, volatile, keep last 10, the same as rosbag2's default profile.
pub fn services_qos() -> rbag_storage::rosbag2::qos::QosProfile {
    crate::qos::default_profile()
}

/// Bytes before a request's fields: encapsulation (4) and rmw_cyclonedds' header (16).
const PREFIX: usize = 4 + 16;

/// A request too large for any control service is not read.
pub const MAX_REQUEST_BYTES: usize = 64 << 10;

/// A request's fields, read as rosidl lays them out in CDR, and the service type hash the
/// client named, where the middleware carries it (the layout of a service can differ between
/// distros under the same name).
pub struct Fields<'a> {
    bytes: &'a [u8],
    type_hash: Option<&'a str>,
}

/// Answers one request: its fields (little-endian CDR) → the response's fields.
pub type Handler = Box<dyn FnMut(&Fields) -> Vec<u8> + Send>;

/// Splits a received request into rmw_cyclonedds' 16-byte header and the fields; `None`
/// unless it is little-endian CDR (encapsulation 0x0001) of a plausible size.
pub fn parse_request(data: &[u8]) -> Option<(&[u8], Fields<'_>)> {
    if data.len() < PREFIX || data.len() > MAX_REQUEST_BYTES || data[..2] != [0, 1] {
        return None;
    }
    Some((&data[4..PREFIX], Fields::new(&data[PREFIX..], None)))
}

/// The fields of a request that carries no header in its payload (rmw_zenoh's): `None` unless
/// it is little-endian CDR of a plausible size.
pub fn parse_plain_request<'a>(data: &'a [u8], type_hash: Option<&'a str>) -> Option<Fields<'a>> {
    if data.len() < 4 || data.len() > MAX_REQUEST_BYTES || data[..2] != [0, 1] {
        return None;
    }
    Some(Fields::new(&data[4..], type_hash))
}

/// The reply to a request with `header`: encapsulation, the header, the fields, padded to a
/// multiple of 4 as Cyclone pads payloads.
pub fn reply_bytes(header: &[u8], fields: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + header.len() + fields.len() + 3);
    out.extend_from_slice(&[0, 1, 0, 0]);
    out.extend_from_slice(header);
    out.extend_from_slice(fields);
    out.resize(out.len().div_ceil(4) * 4, 0);
    out
}

impl<'a> Fields<'a> {
    /// The fields in `bytes` (after any header), of a client that named `type_hash`.
    pub fn new(bytes: &'a [u8], type_hash: Option<&'a str>) -> Fields<'a> {
        Fields { bytes, type_hash }
    }

    /// The service type hash (`RIHS01_…`) the client's endpoint named, if the middleware says.
    pub fn type_hash(&self) -> Option<&str> {
        self.type_hash
    }

    /// The first field as `float64` (`SetRate.rate`).
    pub fn f64(&self) -> Option<f64> {
        Some(f64::from_le_bytes(self.bytes.get(..8)?.try_into().ok()?))
    }

    /// The first field as `uint64` (`Burst.num_messages`).
    pub fn u64(&self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes.get(..8)?.try_into().ok()?))
    }

    /// The first field as `builtin_interfaces/Time`, in ns (`Seek.time`); `None` before 1970.
    pub fn time_ns(&self) -> Option<u64> {
        self.time_ns_at(0)
    }

    /// A `builtin_interfaces/Time` or `Duration` at byte `at` of the fields, in ns; `None`
    /// when negative or short.
    pub fn time_ns_at(&self, at: usize) -> Option<u64> {
        let sec = i32::from_le_bytes(self.bytes.get(at..at + 4)?.try_into().ok()?);
        let nanosec = u32::from_le_bytes(self.bytes.get(at + 4..at + 8)?.try_into().ok()?);
        u64::try_from(sec).ok().map(|s| s * 1_000_000_000 + u64::from(nanosec))
    }

    /// The raw field bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes
    }

    /// An `int32` at byte `at`.
    pub fn i32_at(&self, at: usize) -> Option<i32> {
        Some(i32::from_le_bytes(self.bytes.get(at..at + 4)?.try_into().ok()?))
    }

    /// A `string` at byte `at` (aligned to 4 first), and the offset after it; `None` when it
    /// runs past the request or is not UTF-8.
    pub fn string_at(&self, at: usize) -> Option<(String, usize)> {
        let at = at.div_ceil(4) * 4;
        let len = u32::from_le_bytes(self.bytes.get(at..at + 4)?.try_into().ok()?) as usize;
        let body = self.bytes.get(at + 4..(at + 4).checked_add(len)?)?;
        let text = body.strip_suffix(&[0]).unwrap_or(body);
        Some((String::from_utf8(text.to_vec()).ok()?, at + 4 + len))
    }
}

/// Response fields in CDR, for the shapes rosbag2's services have.
pub mod reply {
    /// A response with no fields: rosidl gives it one `uint8 structure_needs_at_least_one_member`.
    pub fn empty() -> Vec<u8> {
        vec![0]
    }

    /// A response whose one field is a `bool`.
    pub fn bool(b: bool) -> Vec<u8> {
        vec![u8::from(b)]
    }

    /// A response whose one field is a `float64`.
    pub fn f64(v: f64) -> Vec<u8> {
        v.to_le_bytes().to_vec()
    }

    /// A response whose one field is a `uint64`.
    pub fn u64(v: u64) -> Vec<u8> {
        v.to_le_bytes().to_vec()
    }

    /// A response of `int32 return_code` and `string error_string` (rosbag2's Lyrical layout).
    pub fn code(return_code: i32, error: &str) -> Vec<u8> {
        let mut out = return_code.to_le_bytes().to_vec();
        out.extend_from_slice(&(error.len() as u32 + 1).to_le_bytes());
        out.extend_from_slice(error.as_bytes());
        out.push(0);
        out
    }
}

#[cfg(feature = "dds")]
mod server {
    use std::sync::mpsc;
    use std::sync::{Arc, Weak};
    use std::time::{Duration, Instant};

    use super::{parse_request, reply_bytes, Fields, Handler, MAX_REQUEST_BYTES};
    use crate::dds::{DdsError, Participant, RawReader, RawWriter};
    use crate::names::{service_to_dds, type_to_dds};
    use crate::record::Log;

    /// How long a reply waits for the client's reply reader to be matched (discovery is not
    /// symmetric: the request can arrive before the replier knows the client's reader).
    const REPLY_MATCH_WAIT: Duration = Duration::from_secs(2);

    /// Requests waiting for the handler; more are dropped (a flood costs its senders their
    /// answers, not rbag its memory).
    const QUEUED_REQUESTS: usize = 32;

    /// One service being served; dropping it stops serving.
    pub struct ServiceServer {
        _reader: Arc<RawReader>,
    }

    impl ServiceServer {
        /// Serves `service` (a ROS name) of type `srv_type` (`pkg/srv/S`) with `handler`, called
        /// on a thread of its own, one request at a time.
        pub fn new(
            participant: &Participant,
            service: &str,
            srv_type: &str,
            mut handler: Handler,
            log: Log,
        ) -> Result<ServiceServer, DdsError> {
            let (rq, rr) = service_to_dds(service);
            let base = type_to_dds(srv_type).ok_or_else(|| {
                DdsError::own(format!("serving {service}"), format!("type {srv_type:?} is not pkg/srv/Type"))
            })?;
            let base = base.strip_suffix('_').unwrap_or(&base);
            let qos = crate::service::services_qos();
            let writer = RawWriter::new(participant, &rr, &format!("{base}_Response_"), &qos, None)?;
            let (tx, rx) = mpsc::sync_channel::<(Vec<u8>, u64)>(QUEUED_REQUESTS);
            let reader = Arc::new(RawReader::new(
                participant,
                &rq,
                &format!("{base}_Request_"),
                &qos,
                Box::new(move |s| {
                    if s.data.len() <= MAX_REQUEST_BYTES {
                        let _ = tx.try_send((s.data, s.publication));
                    }
                }),
            )?);
            let weak: Weak<RawReader> = Arc::downgrade(&reader);
            let name = service.to_string();
            std::thread::Builder::new()
                .name("service".into())
                .spawn(move || {
                    // Ends when the reader (and with it the sender) is dropped.
                    for (data, publication) in rx {
                        let Some((header, fields)) = parse_request(&data) else {
                            log(format!("warning: service {name}: ignored a request of {} bytes (not a little-endian CDR request with rmw_cyclonedds' header)", data.len()));
                            continue;
                        };
                        // The client's request writer names the service type's hash.
                        let hash = weak.upgrade().and_then(|r| r.writer_type_hash(publication));
                        let fields = Fields::new(fields.bytes(), hash.as_deref());
                        let out = reply_bytes(header, &handler(&fields));
                        let clients = weak.upgrade().map_or(0, |r| r.matched());
                        let start = Instant::now();
                        while writer.matched() < clients && start.elapsed() < REPLY_MATCH_WAIT {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        if let Err(e) = writer.write(&out, crate::record::now_ns() as i64) {
                            log(format!("warning: service {name}: reply not sent: {e}"));
                        }
                    }
                })
                .map_err(|e| DdsError::own(format!("serving {service}"), e.to_string()))?;
            Ok(ServiceServer { _reader: reader })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_need_the_encapsulation_and_the_header() {
        let header = |d: &[u8]| parse_request(d).map(|(h, _)| h.to_vec());
        let mut req = vec![0, 1, 0, 0];
        req.extend_from_slice(&[7; 16]);
        req.extend_from_slice(&2.5f64.to_le_bytes());
        assert_eq!(header(&req), Some(vec![7u8; 16]));
        assert_eq!(parse_request(&req).and_then(|(_, f)| f.f64()), Some(2.5));
        assert_eq!(header(&req[..19]), None);
        req[1] = 0; // big-endian
        assert_eq!(header(&req), None);
        assert_eq!(
            header(&[0, 1, 0, 0].into_iter().chain(std::iter::repeat_n(0, MAX_REQUEST_BYTES)).collect::<Vec<u8>>()),
            None
        );
    }

    #[test]
    fn replies_echo_the_header_and_pad_to_four() {
        let r = reply_bytes(&[9; 16], &reply::bool(true));
        assert_eq!(r.len(), 24);
        assert_eq!((&r[..4], &r[4..20], r[20], &r[21..]), (&[0u8, 1, 0, 0][..], &[9u8; 16][..], 1, &[0u8, 0, 0][..]));
        assert_eq!(reply_bytes(&[0; 16], &reply::f64(1.0)).len(), 28);
    }

    #[test]
    fn fields_read_rosidl_layouts_and_refuse_short_input() {
        assert_eq!(Fields::new(&2.5f64.to_le_bytes(), None).f64(), Some(2.5));
        assert_eq!(Fields::new(&9u64.to_le_bytes(), None).u64(), Some(9));
        let t: Vec<u8> = 3i32.to_le_bytes().into_iter().chain(7u32.to_le_bytes()).collect();
        assert_eq!(Fields::new(&t, None).time_ns(), Some(3_000_000_007));
        let before_1970: Vec<u8> = (-1i32).to_le_bytes().into_iter().chain(0u32.to_le_bytes()).collect();
        assert_eq!(Fields::new(&before_1970, None).time_ns(), None);
        assert_eq!(Fields::new(&[1, 2, 3], None).f64(), None);
        assert_eq!(Fields::new(&[], None).u64(), None);
        // Record (Lyrical): string uri "ab", then a Time at the next multiple of 4.
        let mut rec = 3u32.to_le_bytes().to_vec();
        rec.extend(b"ab\0\0");
        rec.extend(5i32.to_le_bytes());
        rec.extend(6u32.to_le_bytes());
        let f = Fields::new(&rec, None);
        assert_eq!(f.string_at(0), Some(("ab".to_string(), 7)));
        assert_eq!(f.time_ns_at(8), Some(5_000_000_006));
        assert_eq!(Fields::new(&[9, 0, 0, 0, b'x'], None).string_at(0), None, "a length past the end");
        assert_eq!(reply::code(1, "no"), [1, 0, 0, 0, 3, 0, 0, 0, b'n', b'o', 0]);
    }
}
