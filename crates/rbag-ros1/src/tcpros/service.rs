//! TCPROS services, the serving side. A client's connection header names a `service` instead of
//! a topic; the server answers with its own header (`type`, `md5sum`, `request_type`,
//! `response_type`), then reads request frames and answers each with an ok byte (1, or 0 and an
//! error text) and a response frame. A `probe=1` client (`rosservice info`) only wants the header;
//! without `persistent=1` the connection serves one request.

use rbag_storage::ros1::keys;
use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;

use super::header::{read_frame, write_frame, write_header, Header};
use super::Limits;

/// Answers one serialized request with the serialized response, or a failure the client is
/// told about.
pub type ServiceHandler = Arc<dyn Fn(&[u8]) -> Result<Vec<u8>, ServiceFailure> + Send + Sync>;

/// Why a service could not answer a request: the text goes to the client (rospy raises it as a
/// `ServiceException`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ServiceFailure(pub String);

impl From<&str> for ServiceFailure {
    fn from(text: &str) -> Self {
        ServiceFailure(text.to_string())
    }
}

impl From<String> for ServiceFailure {
    fn from(text: String) -> Self {
        ServiceFailure(text)
    }
}

/// A service a node serves.
#[derive(Clone)]
pub struct ServiceDef {
    /// Resolved name (`/node/pause_playback`).
    pub name: String,
    /// `pkg/Srv` (`std_srvs/SetBool`).
    pub srv_type: String,
    /// The service type's MD5 sum, checked against each client's.
    pub md5sum: String,
    /// The serving node's name, sent in the reply header.
    pub caller_id: String,
    /// Turns each request into a response (or an error text sent to the client).
    pub handler: ServiceHandler,
}

/// Serves one client connection whose header `h` was read already.
pub(super) fn serve(mut stream: TcpStream, def: &ServiceDef, h: &Header, limits: &Limits) {
    if let Some(md5) = h.get(keys::MD5SUM).filter(|m| *m != "*" && *m != def.md5sum) {
        let caller = h.get(keys::CALLERID).unwrap_or("");
        let msg = format!("request from [{caller}]: md5sums do not match: [{md5}] vs. [{}]", def.md5sum);
        let _ = write_header(&mut stream, &Header::from_pairs([("error", msg)]));
        return;
    }
    let reply = Header::from_pairs([
        (keys::CALLERID, def.caller_id.clone()),
        (keys::MD5SUM, def.md5sum.clone()),
        ("request_type", format!("{}Request", def.srv_type)),
        ("response_type", format!("{}Response", def.srv_type)),
        ("type", def.srv_type.clone()),
    ]);
    if write_header(&mut stream, &reply).is_err() || h.get("probe").is_some_and(|p| p.trim() == "1") {
        return;
    }
    let persistent = h.get("persistent").is_some_and(|p| p.trim() == "1");
    if persistent && stream.set_read_timeout(None).is_err() {
        return;
    }
    // A frame over the limit, a garbled one or a hang-up ends this client's connection only.
    while let Ok(Some(request)) = read_frame(&mut stream, limits) {
        let (ok, body) = match (def.handler)(&request) {
            Ok(response) => (1u8, response),
            Err(ServiceFailure(text)) => (0u8, text.into_bytes()),
        };
        if stream.write_all(&[ok]).is_err() || write_frame(&mut stream, &body).is_err() || !persistent {
            return;
        }
    }
}
