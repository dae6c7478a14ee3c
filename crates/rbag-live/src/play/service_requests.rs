//! `ros2 bag play --publish-service-requests`: recorded service events (`<svc>/_service_event`,
//! `pkg/srv/S_Event`) are replayed as requests to the live service, the way a client on
//! rmw_cyclonedds or rmw_zenoh sends them, instead of being published as events. Which events
//! count as requests is `--service-requests-source`: those the service received (its
//! introspection) or those clients sent. Responses are not awaited, as in rosbag2. Taking the
//! request out of an event ([`request_of`]) is the same for both middlewares.

use std::time::Duration;

use rbag_bag::decode::{compile, TypeSources};
use rbag_msg::Registry;
use rbag_msg::{Encoding, Schema, Value};
use rbag_ros2::dds::{Participant, RawReader, RawWriter};
use rbag_ros2::names::{service_to_dds, type_to_dds};
use rbag_ros2::qos::default_profile;
use rbag_storage::Connection;
use rbag_transport::play::PlayError;

use super::spec::Error;

/// `service_msgs/msg/ServiceEventInfo`'s event type of a request a client sent.
pub const REQUEST_SENT: u8 = 0;
/// `service_msgs/msg/ServiceEventInfo`'s event type of a request a service received.
pub const REQUEST_RECEIVED: u8 = 1;

/// What carries one service's requests.
enum Calls {
    /// As rmw_cyclonedds: a request writer, the 16-byte request header before the fields.
    Dds {
        writer: RawWriter,
        /// A reader on the reply topic, so that the service finds a reply reader and the
        /// client looks like one to `ros2 service list` (the replies themselves are ignored).
        _replies: RawReader,
        client_id: [u8; 8],
        seq: i64,
    },
    /// As rmw_zenoh: a client (`SC` token) whose queries carry the request and its attachment.
    #[cfg(feature = "zenoh")]
    Zenoh(rbag_ros2::zenoh::ZenohClient),
}

/// Sends the requests of one service-event connection.
pub(crate) struct RequestSender {
    service: String,
    calls: Calls,
    event: Schema,
    request: Schema,
    kind: u8,
    buf: Vec<u8>,
}

/// What a service-event connection replays: its service, its service type less `_Event`
/// (`pkg/srv/S`), the event and request schemas, and the definitions they came from.
type Parts = (String, String, Schema, Schema, Registry);

fn parts(conn: &Connection, sources: &TypeSources) -> Result<Option<Parts>, Error> {
    let (Some(service), Some(base)) =
        (conn.topic.strip_suffix("/_service_event"), conn.message_type.strip_suffix("_Event"))
    else {
        return Ok(None);
    };
    if conn.encoding != "cdr" || !base.contains("/srv/") {
        return Ok(None);
    }
    let failed = |reason: String| Error::ServiceRequests { topic: conn.topic.clone(), reason };
    let (registry, event) = compile(conn, sources).map_err(|e| failed(e.to_string()))?;
    let request = Schema::compile(&registry, &format!("{base}_Request")).map_err(|e| failed(e.to_string()))?;
    Ok(Some((service.to_string(), base.to_string(), event, request, registry)))
}

/// The RIHS01 hash of the service type `base` (`pkg/srv/S`), from its request and response as
/// the bag defines them, for the client's token; `None` when they do not resolve.
fn service_hash(mut registry: Registry, base: &str) -> Option<String> {
    let request = registry.get(&format!("{base}_Request"))?.clone();
    let response = registry.get(&format!("{base}_Response"))?.clone();
    registry.add_service(base, request, response).ok()?;
    registry.rihs01(base).ok()
}

/// The DDS name of `base`'s `suffix` type (`pkg::srv::dds_::S_Request_`).
fn dds_type(conn: &Connection, base: &str, suffix: &str) -> Result<String, Error> {
    type_to_dds(&format!("{base}_{suffix}")).ok_or_else(|| Error::ServiceRequests {
        topic: conn.topic.clone(),
        reason: format!("type {base} has no DDS name"),
    })
}

impl RequestSender {
    /// For a CDR connection of type `pkg/srv/S_Event` on `<service>/_service_event`, sending
    /// as an rmw_cyclonedds client in `participant`'s domain; `None` for any other connection.
    pub fn new(
        participant: &Participant,
        conn: &Connection,
        sources: &TypeSources,
        kind: u8,
    ) -> Result<Option<RequestSender>, Error> {
        let Some((service, base, event, request, _)) = parts(conn, sources)? else { return Ok(None) };
        let (rq, rr) = service_to_dds(&service);
        let writer = RawWriter::new(participant, &rq, &dds_type(conn, &base, "Request")?, &default_profile(), None)?;
        let replies = RawReader::new(
            participant,
            &rr,
            &dds_type(conn, &base, "Response")?,
            &default_profile(),
            Box::new(|_| {}),
        )?;
        let id = rbag_transport::now_ns() ^ u64::from(std::process::id()) << 32;
        let calls = Calls::Dds { writer, _replies: replies, client_id: id.to_le_bytes(), seq: 0 };
        Ok(Some(RequestSender { service, calls, event, request, kind, buf: Vec::new() }))
    }

    /// The same, sending as an rmw_zenoh client of `node` on `session`'s domain.
    #[cfg(feature = "zenoh")]
    pub fn zenoh(
        session: &std::sync::Arc<rbag_ros2::zenoh::ZenohSession>,
        node: &rbag_ros2::zenoh::Node,
        conn: &Connection,
        sources: &TypeSources,
        kind: u8,
    ) -> Result<Option<RequestSender>, Error> {
        let Some((service, base, event, request, registry)) = parts(conn, sources)? else { return Ok(None) };
        // rmw_zenoh names a service by its request type less `Request_`.
        let request_type = dds_type(conn, &base, "Request")?;
        let prefix = request_type.strip_suffix("Request_").unwrap_or(&request_type);
        let hash = service_hash(registry, &base);
        let client = rbag_ros2::zenoh::ZenohClient::with_type_hash(session, node, &service, prefix, hash.as_deref())?;
        Ok(Some(RequestSender { service, calls: Calls::Zenoh(client), event, request, kind, buf: Vec::new() }))
    }

    /// The service's name.
    pub fn service(&self) -> &str {
        &self.service
    }

    /// The DDS request writer, whose matches playback waits for; `None` over Zenoh.
    pub fn writer(&self) -> Option<&RawWriter> {
        match &self.calls {
            Calls::Dds { writer, .. } => Some(writer),
            #[cfg(feature = "zenoh")]
            Calls::Zenoh(_) => None,
        }
    }

    /// Whether the service's server is known: over Zenoh, by its `SS` token (over DDS,
    /// [`RequestSender::writer`]'s matches say it).
    pub fn server_ready(&self) -> bool {
        match &self.calls {
            Calls::Dds { writer, .. } => writer.matched() > 0,
            #[cfg(feature = "zenoh")]
            Calls::Zenoh(client) => client.server_ready(),
        }
    }

    /// Sends the request in one recorded event, when the event is of the chosen kind and
    /// carries one; returns whether it did.
    pub fn send(&mut self, event: &[u8], now_ns: i64) -> Result<bool, PlayError> {
        let Some(request) = request_of(&self.event, event, self.kind)
            .map_err(|e| PlayError::sink(format!("service {}: {e}", self.service)))?
        else {
            return Ok(false);
        };
        self.buf.clear();
        rbag_msg::encode(&self.request, &request, Encoding::Cdr, false, &mut self.buf)
            .map_err(|e| PlayError::sink(format!("service {}: {e}", self.service)))?;
        match &mut self.calls {
            Calls::Dds { writer, client_id, seq, .. } => {
                *seq += 1;
                let mut out = Vec::with_capacity(self.buf.len() + 16);
                out.extend_from_slice(&self.buf[..4]);
                out.extend_from_slice(client_id);
                out.extend_from_slice(&seq.to_le_bytes());
                out.extend_from_slice(&self.buf[4..]);
                writer.write(&out, now_ns).map_err(PlayError::sink)?;
            }
            #[cfg(feature = "zenoh")]
            Calls::Zenoh(client) => {
                // The response is not read, as rosbag2 does not await it.
                client.call(&self.buf, |_, _| {}).map_err(PlayError::sink)?;
            }
        }
        Ok(true)
    }

    /// Waits up to `timeout` for the requests sent to reach the service (DDS: acknowledged;
    /// Zenoh: its queries ended); returns a warning when Zenoh's may not have.
    pub fn flush(&self, timeout: Duration) -> Option<String> {
        match &self.calls {
            Calls::Dds { writer, .. } => {
                // As for topics: a reader that does not acknowledge is not worth a warning.
                let _ = writer.wait_for_acks(timeout);
                None
            }
            #[cfg(feature = "zenoh")]
            Calls::Zenoh(client) => match client.flush(timeout) {
                0 => None,
                n => Some(format!(
                    "service {}: {n} requests not answered within {} s; the service may not have received them",
                    self.service,
                    timeout.as_secs()
                )),
            },
        }
    }
}

/// The request inside a `S_Event` (`ServiceEventInfo info`, `S_Request[<=1] request`, …) when
/// the event's type is `kind` and it holds one.
pub(super) fn request_of<'a>(schema: &Schema, event: &'a [u8], kind: u8) -> Result<Option<Value<'a>>, String> {
    let Value::Message(fields) = rbag_msg::decode(schema, event, Encoding::Cdr).map_err(|e| e.to_string())? else {
        return Err("an event that is not a message".into());
    };
    let mut fields = fields.into_iter();
    let (Some(Value::Message(info)), Some(request)) = (fields.next(), fields.next()) else {
        return Err("an event without info and request".into());
    };
    if info.first() != Some(&Value::U8(kind)) {
        return Ok(None);
    }
    Ok(match request {
        Value::Array(mut r) if !r.is_empty() => Some(r.swap_remove(0)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rosidl's hash of `example_interfaces/srv/AddTwoInts` (the one rclcpp's type support and
    /// an rmw_zenoh client's token carry).
    const ADD_TWO_INTS: &str = "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a";

    #[test]
    fn the_service_hash_comes_from_the_event_definitions_a_bag_stores() {
        let base = "example_interfaces/srv/AddTwoInts";
        // As rbag records it: the event with its nested types, concatenated.
        let concatenated = "service_msgs/msg/ServiceEventInfo info\n\
            example_interfaces/srv/AddTwoInts_Request[<=1] request\n\
            example_interfaces/srv/AddTwoInts_Response[<=1] response\n\
            ================================================================================\n\
            MSG: service_msgs/ServiceEventInfo\n\
            uint8 REQUEST_SENT=0\nuint8 REQUEST_RECEIVED=1\nuint8 RESPONSE_SENT=2\nuint8 RESPONSE_RECEIVED=3\n\
            uint8 event_type\nbuiltin_interfaces/Time stamp\nchar[16] client_gid\nint64 sequence_number\n\
            ================================================================================\n\
            MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n\
            ================================================================================\n\
            MSG: example_interfaces/srv/AddTwoInts_Request\nint64 a\nint64 b\n\
            ================================================================================\n\
            MSG: example_interfaces/srv/AddTwoInts_Response\nint64 sum\n";
        // As rosbag2 records it: the `.srv` text.
        let srv = "int64 a\nint64 b\n---\nint64 sum\n";
        for text in [concatenated, srv] {
            let mut registry = Registry::new(rbag_msg::Dialect::Ros2);
            registry.add_ros2_concatenated(&format!("{base}_Event"), text).unwrap();
            assert_eq!(service_hash(registry, base).as_deref(), Some(ADD_TWO_INTS), "{text}");
        }
        // Without the response's definition there is no hash to give.
        let mut registry = Registry::new(rbag_msg::Dialect::Ros2);
        registry.add_ros2_concatenated(&format!("{base}_Request"), "int64 a\nint64 b\n").unwrap();
        assert_eq!(service_hash(registry, base), None);
    }
}
