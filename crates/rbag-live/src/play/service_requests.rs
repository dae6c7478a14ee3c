//! `ros2 bag play --publish-service-requests`: recorded service events (`<svc>/_service_event`,
//! `pkg/srv/S_Event`) are replayed as requests to the live service, the way a client on
//! rmw_cyclonedds sends them, instead of being published as events. Which events count as
//! requests is `--service-requests-source`: those the service received (its introspection) or
//! those clients sent. Responses are not awaited, as in rosbag2.

use rbag_bag::decode::{compile, TypeSources};
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

/// Sends the requests of one service-event connection.
pub(crate) struct RequestSender {
    service: String,
    writer: RawWriter,
    /// A reader on the reply topic, so that the service finds a reply reader and the client
    /// looks like one to `ros2 service list` (the replies themselves are ignored).
    _replies: RawReader,
    event: Schema,
    request: Schema,
    kind: u8,
    client_id: [u8; 8],
    seq: i64,
    buf: Vec<u8>,
}

impl RequestSender {
    /// For a CDR connection of type `pkg/srv/S_Event` on `<service>/_service_event`; `None` for
    /// any other connection.
    pub fn new(
        participant: &Participant,
        conn: &Connection,
        sources: &TypeSources,
        kind: u8,
    ) -> Result<Option<RequestSender>, Error> {
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
        let dds = |suffix: &str| {
            type_to_dds(&format!("{base}_{suffix}")).ok_or_else(|| failed(format!("type {base} has no DDS name")))
        };
        let (rq, rr) = service_to_dds(service);
        let writer = RawWriter::new(participant, &rq, &dds("Request")?, &default_profile(), None)?;
        let replies = RawReader::new(participant, &rr, &dds("Response")?, &default_profile(), Box::new(|_| {}))?;
        let id = rbag_transport::now_ns() ^ u64::from(std::process::id()) << 32;
        Ok(Some(RequestSender {
            service: service.to_string(),
            writer,
            _replies: replies,
            event,
            request,
            kind,
            client_id: id.to_le_bytes(),
            seq: 0,
            buf: Vec::new(),
        }))
    }

    /// The request writer (playback waits for it to match the services discovery knows).
    pub fn writer(&self) -> &RawWriter {
        &self.writer
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
        self.seq += 1;
        let mut out = Vec::with_capacity(self.buf.len() + 16);
        out.extend_from_slice(&self.buf[..4]);
        out.extend_from_slice(&self.client_id);
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&self.buf[4..]);
        self.writer.write(&out, now_ns).map_err(PlayError::sink)?;
        Ok(true)
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
