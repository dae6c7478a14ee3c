//! The lines of the format, as serde types, and the payload encodings.

use std::borrow::Cow;
use std::collections::BTreeMap;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// How message payloads are written in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Payload {
    /// Standard base64 with padding: a third larger than the payload.
    #[default]
    Base64,
    /// Lower-case hex: twice the payload, readable with a hex dump in mind.
    Hex,
}

impl Payload {
    /// The name in the header line and in the `payload` option.
    pub fn name(self) -> &'static str {
        match self {
            Payload::Base64 => "base64",
            Payload::Hex => "hex",
        }
    }

    pub(crate) fn encode(self, data: &[u8], out: &mut String) {
        match self {
            Payload::Base64 => base64::engine::general_purpose::STANDARD.encode_string(data, out),
            Payload::Hex => {
                const DIGITS: &[u8; 16] = b"0123456789abcdef";
                out.reserve(data.len() * 2);
                for b in data {
                    out.push(DIGITS[(b >> 4) as usize] as char);
                    out.push(DIGITS[(b & 15) as usize] as char);
                }
            }
        }
    }

    pub(crate) fn decode(self, text: &str) -> Result<Vec<u8>, String> {
        match self {
            Payload::Base64 => {
                base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| format!("bad base64 payload: {e}"))
            }
            Payload::Hex => {
                let t = text.as_bytes();
                if !t.len().is_multiple_of(2) {
                    return Err("bad hex payload: odd number of digits".into());
                }
                let nibble = |c: u8| match c {
                    b'0'..=b'9' => Ok(c - b'0'),
                    b'a'..=b'f' => Ok(c - b'a' + 10),
                    b'A'..=b'F' => Ok(c - b'A' + 10),
                    _ => Err(format!("bad hex payload: {:?} is not a hex digit", c as char)),
                };
                t.chunks_exact(2).map(|p| Ok(nibble(p[0])? << 4 | nibble(p[1])?)).collect()
            }
        }
    }

    /// The payload size `text` decodes to, without decoding it (checked when it is decoded).
    pub(crate) fn decoded_len(self, text: &str) -> u64 {
        let n = text.len() as u64;
        match self {
            Payload::Base64 => {
                (n / 4 * 3).saturating_sub(text.bytes().rev().take(2).filter(|&b| b == b'=').count() as u64)
            }
            Payload::Hex => n / 2,
        }
    }
}

impl std::str::FromStr for Payload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "base64" => Ok(Payload::Base64),
            "hex" => Ok(Payload::Hex),
            other => Err(format!("{other:?} is not a payload encoding (base64, hex)")),
        }
    }
}

/// The first line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Header {
    /// Format version; the key is the magic.
    pub rbag_jsonl: u32,
    /// [`Payload::name`].
    pub payload: String,
}

/// Every line after the header: one key naming what it is.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Line<'a> {
    Connection(ConnectionLine),
    Message(#[serde(borrow)] MessageLine<'a>),
}

/// A connection, field for field.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConnectionLine {
    pub id: u32,
    pub topic: String,
    #[serde(rename = "type")]
    pub message_type: String,
    pub encoding: String,
    pub definition: String,
    pub definition_encoding: String,
    pub metadata: BTreeMap<String, String>,
}

/// A message; `data` is the encoded payload.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessageLine<'a> {
    pub connection: u32,
    pub log_time: u64,
    pub publish_time: u64,
    #[serde(borrow)]
    pub data: Cow<'a, str>,
}

#[cfg(test)]
mod tests {
    use super::Payload;

    #[test]
    fn payloads_round_trip_and_measure() {
        let all: Vec<u8> = (0..=255).collect();
        for p in [Payload::Base64, Payload::Hex] {
            for data in [&b""[..], b"a", b"ab", b"abc", b"abcd", &all] {
                let mut text = String::new();
                p.encode(data, &mut text);
                assert_eq!(p.decode(&text).unwrap(), data, "{p:?}");
                assert_eq!(p.decoded_len(&text), data.len() as u64, "{p:?} {text}");
            }
        }
        assert_eq!(Payload::Hex.decode("0aFF").unwrap(), [10, 255]);
        assert!(Payload::Hex.decode("0g").unwrap_err().contains("not a hex digit"));
        assert!(Payload::Hex.decode("abc").is_err());
        assert!(Payload::Base64.decode("!!!!").is_err());
        assert_eq!(Payload::Base64.decoded_len("a"), 0);
    }
}
