//! The Foxglove WebSocket protocol's messages, as this server sends and accepts them
//! (<https://github.com/foxglove/ws-protocol/blob/main/docs/spec.md>, plus the Foxglove SDK's
//! playback control). Both subprotocols carry the same messages; only the SDK's clients are sent
//! `PlaybackState`, which older clients cannot parse.

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{json, Map, Value};

use crate::channels::Channel;

/// Server binary opcodes.
const OP_MESSAGE_DATA: u8 = 1;
const OP_TIME: u8 = 2;
const OP_PLAYBACK_STATE: u8 = 5;

/// Client binary opcodes.
const OP_CLIENT_MESSAGE_DATA: u8 = 1;
const OP_SERVICE_CALL_REQUEST: u8 = 2;
const OP_PLAYBACK_CONTROL_REQUEST: u8 = 3;

/// Status levels.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Level {
    Info = 0,
    Warning = 1,
    Error = 2,
}

/// A playback control request (the SDK's `PlaybackControlRequest`): what the viewer's play
/// button, speed menu and time slider send. The server seeks first, then sets the speed, then
/// plays or pauses, as the SDK's servers do.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlRequest {
    /// Play (true) or pause (false).
    pub play: bool,
    /// The playback speed, a multiple of real time.
    pub speed: f32,
    /// Log time to seek to, nanoseconds.
    pub seek: Option<u64>,
    /// Echoed in the `PlaybackState` that answers it.
    pub request_id: String,
}

/// A client message this server understands.
#[derive(Debug, PartialEq)]
pub(crate) enum ClientMessage {
    /// `(subscription id, channel id)` pairs.
    Subscribe(Vec<(u32, u64)>),
    Unsubscribe(Vec<u32>),
    Control(ControlRequest),
}

/// Why a client message was refused; the text is the error status the client gets.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum ProtocolError {
    #[error("invalid JSON message: {0}")]
    Json(String),
    #[error("message has no \"op\" string")]
    NoOp,
    #[error("unknown op {0:?}")]
    UnknownOp(String),
    #[error("op {0:?} is not supported by rbag serve (it serves bags: no client publishing, parameters, services or assets)")]
    Unsupported(String),
    #[error("invalid {op} message: {reason}")]
    Invalid { op: &'static str, reason: String },
    #[error("empty binary message")]
    EmptyBinary,
    #[error("unknown binary opcode {0}")]
    UnknownOpcode(u8),
    #[error("binary opcode {0} ({1}) is not supported by rbag serve")]
    UnsupportedOpcode(u8, &'static str),
    #[error("truncated playback control request: {0} bytes")]
    Truncated(usize),
}

/// Parses a JSON (text) client message.
pub(crate) fn parse_text(text: &str) -> Result<ClientMessage, ProtocolError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ProtocolError::Json(e.to_string()))?;
    let op = value.get("op").and_then(Value::as_str).ok_or(ProtocolError::NoOp)?;
    match op {
        "subscribe" => {
            let invalid = |reason: &str| ProtocolError::Invalid { op: "subscribe", reason: reason.into() };
            let subs = value
                .get("subscriptions")
                .and_then(Value::as_array)
                .ok_or_else(|| invalid("\"subscriptions\" is not an array"))?;
            subs.iter()
                .map(|s| {
                    let id = s.get("id").and_then(Value::as_u64).and_then(|i| u32::try_from(i).ok());
                    let channel = s.get("channelId").and_then(Value::as_u64);
                    match (id, channel) {
                        (Some(id), Some(channel)) => Ok((id, channel)),
                        _ => Err(invalid("each subscription needs an \"id\" (u32) and a \"channelId\"")),
                    }
                })
                .collect::<Result<_, _>>()
                .map(ClientMessage::Subscribe)
        }
        "unsubscribe" => {
            let invalid = || ProtocolError::Invalid {
                op: "unsubscribe",
                reason: "\"subscriptionIds\" must be an array of u32".into(),
            };
            let ids = value.get("subscriptionIds").and_then(Value::as_array).ok_or_else(invalid)?;
            ids.iter()
                .map(|i| i.as_u64().and_then(|i| u32::try_from(i).ok()).ok_or_else(invalid))
                .collect::<Result<_, _>>()
                .map(ClientMessage::Unsubscribe)
        }
        "advertise"
        | "unadvertise"
        | "getParameters"
        | "setParameters"
        | "subscribeParameterUpdates"
        | "unsubscribeParameterUpdates"
        | "subscribeConnectionGraph"
        | "unsubscribeConnectionGraph"
        | "fetchAsset" => Err(ProtocolError::Unsupported(op.into())),
        other => Err(ProtocolError::UnknownOp(other.chars().take(64).collect())),
    }
}

/// Parses a binary client message.
pub(crate) fn parse_binary(data: &[u8]) -> Result<ClientMessage, ProtocolError> {
    let (&op, rest) = data.split_first().ok_or(ProtocolError::EmptyBinary)?;
    match op {
        OP_PLAYBACK_CONTROL_REQUEST => parse_control(rest).map(ClientMessage::Control),
        OP_CLIENT_MESSAGE_DATA => Err(ProtocolError::UnsupportedOpcode(op, "client message data")),
        OP_SERVICE_CALL_REQUEST => Err(ProtocolError::UnsupportedOpcode(op, "service call request")),
        other => Err(ProtocolError::UnknownOpcode(other)),
    }
}

/// `command u8, speed f32, has_seek u8, seek u64, request_id_len u32, request_id`, little-endian.
fn parse_control(data: &[u8]) -> Result<ControlRequest, ProtocolError> {
    const FIXED: usize = 1 + 4 + 1 + 8 + 4;
    let truncated = || ProtocolError::Truncated(data.len() + 1);
    if data.len() < FIXED {
        return Err(truncated());
    }
    let invalid = |reason: String| ProtocolError::Invalid { op: "playback control request", reason };
    let play = match data[0] {
        0 => true,
        1 => false,
        c => return Err(invalid(format!("unknown command {c} (0 play, 1 pause)"))),
    };
    let speed = f32::from_le_bytes([data[1], data[2], data[3], data[4]]);
    let has_seek = data[5] != 0;
    let mut seek = [0u8; 8];
    seek.copy_from_slice(&data[6..14]);
    let seek = has_seek.then_some(u64::from_le_bytes(seek));
    let len = u32::from_le_bytes([data[14], data[15], data[16], data[17]]) as usize;
    let id = data.get(FIXED..).and_then(|rest| rest.get(..len)).ok_or_else(truncated)?;
    let request_id = std::str::from_utf8(id).map_err(|_| invalid("the request id is not UTF-8".into()))?.to_string();
    Ok(ControlRequest { play, speed, seek, request_id })
}

/// `serverInfo`. `dataStartTime`/`dataEndTime` are the SDK's playback range.
pub(crate) fn server_info(
    name: &str,
    session_id: &str,
    range: Option<(u64, u64)>,
    metadata: Map<String, Value>,
) -> String {
    let mut info = json!({
        "op": "serverInfo",
        "name": name,
        "capabilities": ["time", "playbackControl"],
        "supportedEncodings": [],
        "metadata": metadata,
        "sessionId": session_id,
    });
    if let (Some((start, end)), Some(obj)) = (range, info.as_object_mut()) {
        obj.insert("dataStartTime".into(), timestamp(start));
        obj.insert("dataEndTime".into(), timestamp(end));
    }
    info.to_string()
}

fn timestamp(ns: u64) -> Value {
    json!({ "sec": ns / 1_000_000_000, "nsec": ns % 1_000_000_000 })
}

/// `advertise` for `channels`.
pub(crate) fn advertise(channels: &[Channel]) -> String {
    let channels: Vec<Value> = channels
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "topic": c.topic,
                "encoding": c.encoding,
                "schemaName": c.schema_name,
                "schema": c.schema,
                "schemaEncoding": c.schema_encoding,
            })
        })
        .collect();
    json!({ "op": "advertise", "channels": channels }).to_string()
}

/// `status`; `id` lets clients replace or remove it (`removeStatus`).
pub(crate) fn status(level: Level, message: &str, id: Option<&str>) -> String {
    let mut v = json!({ "op": "status", "level": level as u8, "message": message });
    if let (Some(id), Some(obj)) = (id, v.as_object_mut()) {
        obj.insert("id".into(), Value::String(id.into()));
    }
    v.to_string()
}

/// Binary `messageData`: opcode, subscription id, log time, the payload as recorded.
pub(crate) fn message_data(subscription: u32, log_time: u64, payload: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(1 + 4 + 8 + payload.len());
    b.put_u8(OP_MESSAGE_DATA);
    b.put_u32_le(subscription);
    b.put_u64_le(log_time);
    b.put_slice(payload);
    b.freeze()
}

/// Binary `time`.
pub(crate) fn time(ns: u64) -> Bytes {
    let mut b = BytesMut::with_capacity(9);
    b.put_u8(OP_TIME);
    b.put_u64_le(ns);
    b.freeze()
}

/// Binary `PlaybackState` (SDK): status, current time, speed, whether it follows a seek, and
/// the id of the request it answers (empty when none).
pub(crate) fn playback_state(status: u8, current: u64, speed: f32, did_seek: bool, request_id: Option<&str>) -> Bytes {
    let id = request_id.unwrap_or("").as_bytes();
    let mut b = BytesMut::with_capacity(1 + 1 + 8 + 4 + 1 + 4 + id.len());
    b.put_u8(OP_PLAYBACK_STATE);
    b.put_u8(status);
    b.put_u64_le(current);
    b.put_f32_le(speed);
    b.put_u8(did_seek as u8);
    b.put_u32_le(id.len() as u32);
    b.put_slice(id);
    b.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(play: u8, speed: f32, seek: Option<u64>, id: &str) -> Vec<u8> {
        let mut b = vec![OP_PLAYBACK_CONTROL_REQUEST, play];
        b.extend(speed.to_le_bytes());
        b.push(seek.is_some() as u8);
        b.extend(seek.unwrap_or(0).to_le_bytes());
        b.extend((id.len() as u32).to_le_bytes());
        b.extend(id.as_bytes());
        b
    }

    #[test]
    fn control_requests_parse_and_bad_ones_are_refused() {
        let ok = control(0, 2.0, Some(42), "r1");
        assert_eq!(
            parse_binary(&ok),
            Ok(ClientMessage::Control(ControlRequest {
                play: true,
                speed: 2.0,
                seek: Some(42),
                request_id: "r1".into()
            }))
        );
        for cut in 0..ok.len() {
            assert!(parse_binary(&ok[..cut]).is_err(), "{cut} bytes");
        }
        let mut huge = control(1, 1.0, None, "");
        huge[15..19].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(parse_binary(&huge), Err(ProtocolError::Truncated(19)));
        assert!(parse_binary(&control(7, 1.0, None, "")).map_err(|e| e.to_string()).unwrap_err().contains("command 7"));
        assert_eq!(parse_binary(&[9]), Err(ProtocolError::UnknownOpcode(9)));
    }

    #[test]
    fn json_messages_parse_and_bad_ones_are_refused() {
        assert_eq!(
            parse_text(r#"{"op":"subscribe","subscriptions":[{"id":1,"channelId":3}]}"#),
            Ok(ClientMessage::Subscribe(vec![(1, 3)]))
        );
        assert_eq!(
            parse_text(r#"{"op":"unsubscribe","subscriptionIds":[1,2]}"#),
            Ok(ClientMessage::Unsubscribe(vec![1, 2]))
        );
        assert!(matches!(parse_text("{nope"), Err(ProtocolError::Json(_))));
        assert_eq!(parse_text(r#"{"op":"dance"}"#), Err(ProtocolError::UnknownOp("dance".into())));
        assert_eq!(parse_text(r#"[1]"#), Err(ProtocolError::NoOp));
        assert!(matches!(
            parse_text(r#"{"op":"subscribe","subscriptions":[{"id":-1,"channelId":3}]}"#),
            Err(ProtocolError::Invalid { .. })
        ));
        assert!(matches!(parse_text(r#"{"op":"advertise","channels":[]}"#), Err(ProtocolError::Unsupported(_))));
    }

    #[test]
    fn binary_frames_have_the_spec_layout() {
        let m = message_data(7, 0x0102030405060708, b"xy");
        assert_eq!(&m[..], &[1, 7, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1, b'x', b'y']);
        assert_eq!(&time(1)[..], &[2, 1, 0, 0, 0, 0, 0, 0, 0]);
        let s = playback_state(3, 5, 1.0, true, Some("a"));
        assert_eq!(s[0], 5);
        assert_eq!(s.len(), 1 + 1 + 8 + 4 + 1 + 4 + 1);
    }
}
