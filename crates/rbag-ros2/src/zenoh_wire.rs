//! ROS 2 names on Zenoh, as rmw_zenoh_cpp maps them: data key expressions, liveliness tokens
//! (graph discovery, QoS included), and the attachment every sample carries. Pure conventions,
//! tested without a network; the session that carries them is [`crate::zenoh`].
//!
//! Read from rmw_zenoh's released sources (release tags `0.2.10` jazzy, `0.6.7` kilted,
//! `0.10.5` lyrical, `0.12.0` rolling; the files below are the same in all four for ordinary
//! messages): `rmw_zenoh_cpp/src/detail/liveliness_utils.cpp` (keys, tokens, QoS text),
//! `attachment_helpers.cpp` (attachment), `type_support_common.cpp` (type names). Jazzy
//! releases up to 0.2.3 wrote a keyed attachment, which [`Attachment::decode`] also reads.
//!
//! - Data key: `<domain>/<name without its leading and trailing '/'>/<dds type>/<RIHS01 hash>`,
//!   e.g. `0/chatter/std_msgs::msg::dds_::String_/RIHS01_df66…`. A service uses the same form
//!   for its queryable, with the request type's name less `Request_`.
//! - Token: `@ros2_lv/<domain>/<zid>/<nid>/<eid>/<kind>/<enclave>/<namespace>/<node>` and, for
//!   endpoints, `/<topic>/<type>/<hash>/<qos>`, with every `/` inside a field written `%`.
//! - QoS text: `rel:dur:hist,depth:dl_s,dl_ns:ls_s,ls_ns:liv,lease_s,lease_ns`, each value
//!   written only where it differs from rmw_zenoh's default (reliable, volatile, keep-last 42,
//!   infinite durations, automatic).
//! - Attachment: i64 LE sequence number (from 1), i64 LE source timestamp (ns), the byte 16
//!   (the length of the array that follows), 16 bytes of GID: 33 bytes in all.

use rbag_storage::rosbag2::qos::{policy, Duration, QosProfile};

/// The liveliness admin space every rmw_zenoh token lives in.
pub const ADMIN_SPACE: &str = "@ros2_lv";

/// rmw_zenoh's default depth: the depth a token with an empty depth field means.
pub const DEFAULT_DEPTH: u64 = 42;

/// The data key expression of a topic or service.
pub fn data_key(domain: u32, name: &str, dds_type: &str, type_hash: &str) -> String {
    let name = name.strip_prefix('/').unwrap_or(name);
    let name = name.strip_suffix('/').unwrap_or(name);
    format!("{domain}/{name}/{dds_type}/{type_hash}")
}

/// What a liveliness token stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntityKind {
    /// `NN`: a node.
    Node,
    /// `MP`: a publisher.
    Publisher,
    /// `MS`: a subscription.
    Subscription,
    /// `SS`: a service server.
    Service,
    /// `SC`: a service client.
    Client,
}

impl EntityKind {
    fn code(self) -> &'static str {
        match self {
            EntityKind::Node => "NN",
            EntityKind::Publisher => "MP",
            EntityKind::Subscription => "MS",
            EntityKind::Service => "SS",
            EntityKind::Client => "SC",
        }
    }

    fn from_code(code: &str) -> Option<EntityKind> {
        Some(match code {
            "NN" => EntityKind::Node,
            "MP" => EntityKind::Publisher,
            "MS" => EntityKind::Subscription,
            "SS" => EntityKind::Service,
            "SC" => EntityKind::Client,
            _ => return None,
        })
    }
}

/// A topic or service endpoint's part of a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenTopic {
    /// The ROS name, with its leading `/` (`/chatter`).
    pub name: String,
    /// The DDS-style type name (`std_msgs::msg::dds_::String_`).
    pub dds_type: String,
    /// `RIHS01_…`.
    pub type_hash: String,
    /// The QoS the endpoint offers or requests.
    pub qos: QosProfile,
}

/// One rmw_zenoh liveliness token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The ROS domain id.
    pub domain: u32,
    /// The session's Zenoh id (lowercase hex, as `ZenohId`'s `Display`).
    pub zid: String,
    /// The node's id in its session.
    pub nid: String,
    /// The entity's id (the node's own for a node token).
    pub eid: String,
    /// What it is.
    pub kind: EntityKind,
    /// The security enclave (`/` by default).
    pub enclave: String,
    /// The node's namespace (`/` at the root).
    pub namespace: String,
    /// The node's name.
    pub node: String,
    /// For every kind but nodes: the topic or service.
    pub topic: Option<TokenTopic>,
}

fn mangle(s: &str) -> String {
    s.replace('/', "%")
}

fn unmangle(s: &str) -> String {
    s.replace('%', "/")
}

impl Token {
    /// The token's key expression.
    pub fn key_expr(&self) -> String {
        let mut k = format!(
            "{ADMIN_SPACE}/{}/{}/{}/{}/{}/{}/{}/{}",
            self.domain,
            self.zid,
            self.nid,
            self.eid,
            self.kind.code(),
            mangle(&self.enclave),
            mangle(&self.namespace),
            mangle(&self.node)
        );
        if let Some(t) = &self.topic {
            k.push_str(&format!(
                "/{}/{}/{}/{}",
                mangle(&t.name),
                mangle(&t.dds_type),
                mangle(&t.type_hash),
                qos_to_text(&t.qos)
            ));
        }
        k
    }

    /// Reads a token's key expression; `None` for anything that is not one (a 14th field,
    /// rolling's buffer backends, is accepted and ignored).
    pub fn parse(key: &str) -> Option<Token> {
        let parts: Vec<&str> = key.split('/').collect();
        if parts.len() < 9 || parts[0] != ADMIN_SPACE || parts.iter().any(|p| p.is_empty()) {
            return None;
        }
        let kind = EntityKind::from_code(parts[5])?;
        let topic = match (kind, parts.len()) {
            (EntityKind::Node, 9) => None,
            (EntityKind::Node, _) => return None,
            (_, 13 | 14) => Some(TokenTopic {
                name: unmangle(parts[9]),
                dds_type: unmangle(parts[10]),
                type_hash: unmangle(parts[11]),
                qos: qos_from_text(parts[12])?,
            }),
            _ => return None,
        };
        Some(Token {
            domain: parts[1].parse().ok()?,
            zid: parts[2].to_string(),
            nid: parts[3].to_string(),
            eid: parts[4].to_string(),
            kind,
            enclave: unmangle(parts[6]),
            namespace: unmangle(parts[7]),
            node: unmangle(parts[8]),
            topic,
        })
    }
}

/// rmw's infinite duration, which tokens leave empty.
const INFINITE: Duration = Duration::INFINITE;

/// Whether a profile's duration means "not set" (infinite, or rmw's unspecified 0).
fn unset(d: Duration) -> bool {
    (d.sec == 0 && d.nsec == 0) || d.sec >= i32::MAX as i64 || d == INFINITE
}

/// A profile as a token's QoS field.
pub fn qos_to_text(q: &QosProfile) -> String {
    let value = |v: i64, default: i64| if v == default || v == 0 { String::new() } else { v.to_string() };
    let duration = |d: Duration| if unset(d) { ",".to_string() } else { format!("{},{}", d.sec, d.nsec) };
    let depth = if q.history == policy::KEEP_ALL || q.depth == 0 || q.depth == DEFAULT_DEPTH {
        String::new()
    } else {
        q.depth.to_string()
    };
    format!(
        "{}:{}:{},{}:{}:{}:{},{}",
        value(q.reliability, policy::RELIABLE),
        value(q.durability, policy::VOLATILE),
        value(q.history, policy::KEEP_LAST),
        depth,
        duration(q.deadline),
        duration(q.lifespan),
        value(q.liveliness, policy::AUTOMATIC),
        duration(q.liveliness_lease_duration)
    )
}

/// A token's QoS field as a profile (empty fields are rmw_zenoh's defaults).
pub fn qos_from_text(text: &str) -> Option<QosProfile> {
    let parts: Vec<&str> = text.split(':').collect();
    let [rel, dur, hist, deadline, lifespan, liv] = parts.as_slice() else { return None };
    let int = |s: &str, default: i64| if s.is_empty() { Some(default) } else { s.parse::<i64>().ok() };
    let duration = |s: &str| -> Option<Duration> {
        let (a, b) = s.split_once(',')?;
        if a.is_empty() && b.is_empty() {
            return Some(INFINITE);
        }
        Some(Duration {
            sec: if a.is_empty() { INFINITE.sec } else { a.parse().ok()? },
            nsec: if b.is_empty() { INFINITE.nsec } else { b.parse().ok()? },
        })
    };
    let (history, depth) = hist.split_once(',')?;
    let (liveliness, lease) = liv.split_once(',')?;
    Some(QosProfile {
        history: int(history, policy::KEEP_LAST)?,
        depth: if depth.is_empty() { DEFAULT_DEPTH } else { depth.parse().ok()? },
        reliability: int(rel, policy::RELIABLE)?,
        durability: int(dur, policy::VOLATILE)?,
        deadline: duration(deadline)?,
        lifespan: duration(lifespan)?,
        liveliness: int(liveliness, policy::AUTOMATIC)?,
        liveliness_lease_duration: duration(lease)?,
        avoid_ros_namespace_conventions: false,
    })
}

/// The attachment of a sample, request or reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attachment {
    /// The publisher's (or client's) sequence number, from 1.
    pub sequence_number: i64,
    /// When it was sent, in ns since the epoch.
    pub source_timestamp: i64,
    /// The sender's GID.
    pub gid: [u8; 16],
}

/// The keys of the attachment jazzy up to 0.2.3 wrote before each value.
const KEYED: [&[u8]; 3] = [b"sequence_number", b"source_timestamp", b"source_gid"];

impl Attachment {
    /// The 33 bytes rmw_zenoh writes.
    pub fn encode(&self) -> [u8; 33] {
        let mut out = [0u8; 33];
        out[..8].copy_from_slice(&self.sequence_number.to_le_bytes());
        out[8..16].copy_from_slice(&self.source_timestamp.to_le_bytes());
        out[16] = 16;
        out[17..].copy_from_slice(&self.gid);
        out
    }

    /// Reads the current form, or the keyed form of early jazzy releases; `None` otherwise.
    pub fn decode(bytes: &[u8]) -> Option<Attachment> {
        if bytes.len() == 33 && bytes[16] == 16 {
            let i64_at = |k: usize| i64::from_le_bytes(bytes[k..k + 8].try_into().unwrap_or_default());
            return Some(Attachment {
                sequence_number: i64_at(0),
                source_timestamp: i64_at(8),
                gid: bytes[17..33].try_into().ok()?,
            });
        }
        let mut r = Keyed { bytes, at: 0 };
        r.key(KEYED[0])?;
        let sequence_number = r.i64()?;
        r.key(KEYED[1])?;
        let source_timestamp = r.i64()?;
        r.key(KEYED[2])?;
        (r.take(1)? == [16]).then_some(())?;
        let gid = r.take(16)?.try_into().ok()?;
        (r.at == bytes.len()).then_some(Attachment { sequence_number, source_timestamp, gid })
    }
}

/// A reader of the keyed attachment: each value after its key, a length-prefixed string.
struct Keyed<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Keyed<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn key(&mut self, want: &[u8]) -> Option<()> {
        let len = usize::from(*self.take(1)?.first()?);
        (self.take(len)? == want).then_some(())
    }

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRING_HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

    fn keep_last(depth: u64) -> QosProfile {
        QosProfile {
            history: policy::KEEP_LAST,
            depth,
            reliability: policy::RELIABLE,
            durability: policy::VOLATILE,
            deadline: INFINITE,
            lifespan: INFINITE,
            liveliness: policy::AUTOMATIC,
            liveliness_lease_duration: INFINITE,
            avoid_ros_namespace_conventions: false,
        }
    }

    /// rmw_zenoh's design doc examples (docs/design.md, the same on every branch).
    #[test]
    fn data_keys_as_rmw_zenoh_writes_them() {
        let t = "std_msgs::msg::dds_::String_";
        assert_eq!(data_key(0, "/chatter", t, STRING_HASH), format!("0/chatter/{t}/{STRING_HASH}"));
        assert_eq!(data_key(0, "/robot1/chatter", t, STRING_HASH), format!("0/robot1/chatter/{t}/{STRING_HASH}"));
    }

    /// The talker's publisher token of rmw_zenoh's design doc, byte for byte, both ways.
    #[test]
    fn tokens_as_rmw_zenoh_writes_them() {
        let text = format!("@ros2_lv/0/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/{STRING_HASH}/::,7:,:,:,,");
        let token = Token::parse(&text).unwrap();
        assert_eq!(token.kind, EntityKind::Publisher);
        assert_eq!((token.namespace.as_str(), token.node.as_str()), ("/", "talker"));
        let topic = token.topic.as_ref().unwrap();
        assert_eq!((topic.name.as_str(), topic.qos), ("/chatter", keep_last(7)));
        assert_eq!(token.key_expr(), text);
        let node = "@ros2_lv/0/aac3178e146ba6f1fc6e6a4085e77f21/0/0/NN/%/%/listener";
        assert_eq!(Token::parse(node).unwrap().key_expr(), node);
        assert!(Token::parse("@ros2_lv/0/z/0/0/NN/%/%").is_none());
        assert!(Token::parse("@ros2_lv/0/z/0/1/MP/%/%/n").is_none());
        assert!(Token::parse("@ros2_lv/0/z/0/1/XX/%/%/n").is_none());
    }

    #[test]
    fn qos_text_writes_only_what_differs_from_the_defaults() {
        assert_eq!(qos_to_text(&keep_last(10)), "::,10:,:,:,,");
        assert_eq!(qos_to_text(&keep_last(42)), "::,:,:,:,,");
        let latched = QosProfile { durability: policy::TRANSIENT_LOCAL, ..keep_last(1) };
        assert_eq!(qos_to_text(&latched), ":1:,1:,:,:,,");
        let sensor = QosProfile { reliability: policy::BEST_EFFORT, ..keep_last(5) };
        assert_eq!(qos_to_text(&sensor), "2::,5:,:,:,,");
        let all = QosProfile { history: policy::KEEP_ALL, ..keep_last(0) };
        assert_eq!(qos_to_text(&all), "::2,:,:,:,,");
        let deadline = QosProfile { deadline: Duration { sec: 1, nsec: 0 }, ..keep_last(10) };
        assert_eq!(qos_to_text(&deadline), "::,10:1,0:,:,,");
        for q in [keep_last(10), latched, sensor, deadline] {
            assert_eq!(qos_from_text(&qos_to_text(&q)), Some(q));
        }
        assert!(qos_from_text("::,10:,").is_none());
    }

    #[test]
    fn attachments_in_both_forms() {
        let a = Attachment { sequence_number: 1, source_timestamp: 1_700_000_000_123_456_789, gid: [7; 16] };
        let bytes = a.encode();
        assert_eq!(&bytes[..8], &[1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(bytes[16], 0x10);
        assert_eq!(Attachment::decode(&bytes), Some(a));
        // Jazzy ≤ 0.2.3: each value after its key, as zenoh-ext serializes strings.
        let mut keyed = vec![15u8];
        keyed.extend_from_slice(b"sequence_number");
        keyed.extend_from_slice(&1i64.to_le_bytes());
        keyed.push(16);
        keyed.extend_from_slice(b"source_timestamp");
        keyed.extend_from_slice(&a.source_timestamp.to_le_bytes());
        keyed.push(10);
        keyed.extend_from_slice(b"source_gid");
        keyed.push(16);
        keyed.extend_from_slice(&[7; 16]);
        assert_eq!(Attachment::decode(&keyed), Some(a));
        assert_eq!(Attachment::decode(&bytes[..32]), None);
        assert_eq!(Attachment::decode(&keyed[..keyed.len() - 1]), None);
    }
}
