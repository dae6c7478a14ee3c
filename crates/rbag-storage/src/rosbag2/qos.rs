//! QoS profiles as rosbag2 records them: a YAML string with integer enums (metadata v4–8 and
//! every storage file before Jazzy) or string enums (v9), or a YAML list (metadata.yaml v9).
//! Reading accepts every form; writing picks the one the target version's readers expect.

use serde::Deserialize;

use super::metadata::quote;
use crate::{Error, Result};

/// One offered QoS profile; enums hold rmw's integer values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QosProfile {
    /// [`policy`] `KEEP_LAST`/`KEEP_ALL` (0 is system default).
    pub history: i64,
    /// Queue depth for keep-last.
    pub depth: u64,
    /// [`policy`] `RELIABLE`/`BEST_EFFORT`.
    pub reliability: i64,
    /// [`policy`] `TRANSIENT_LOCAL`/`VOLATILE`.
    pub durability: i64,
    /// Deadline period.
    pub deadline: Duration,
    /// How long a message stays valid.
    pub lifespan: Duration,
    /// [`policy`] `AUTOMATIC`/`MANUAL_BY_TOPIC`.
    pub liveliness: i64,
    /// Liveliness lease duration.
    pub liveliness_lease_duration: Duration,
    /// Whether the topic name skips ROS namespace conventions.
    pub avoid_ros_namespace_conventions: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
/// A QoS duration as rosbag2 writes it.
pub struct Duration {
    #[serde(default)]
    /// Whole seconds.
    pub sec: i64,
    #[serde(default)]
    /// Nanoseconds past `sec`.
    pub nsec: u64,
}

/// An enum written either way.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Policy {
    Int(i64),
    Name(String),
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RawProfile {
    #[serde(default)]
    history: Option<Policy>,
    #[serde(default)]
    depth: u64,
    #[serde(default)]
    reliability: Option<Policy>,
    #[serde(default)]
    durability: Option<Policy>,
    #[serde(default)]
    deadline: Duration,
    #[serde(default)]
    lifespan: Duration,
    #[serde(default)]
    liveliness: Option<Policy>,
    #[serde(default)]
    liveliness_lease_duration: Duration,
    #[serde(default)]
    avoid_ros_namespace_conventions: bool,
}

/// The YAML forms `offered_qos_profiles` takes.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum QosField {
    Text(String),
    List(Vec<RawProfile>),
}

const HISTORY: &[&str] = &["system_default", "keep_last", "keep_all", "unknown"];
const RELIABILITY: &[&str] = &["system_default", "reliable", "best_effort", "unknown", "best_available"];
const DURABILITY: &[&str] = &["system_default", "transient_local", "volatile", "unknown", "best_available"];
const LIVELINESS: &[&str] =
    &["system_default", "automatic", "manual_by_node", "manual_by_topic", "unknown", "best_available"];

/// rmw's policy values, for code that builds or compares profiles.
pub mod policy {
    /// Every enum's 0: the middleware's default.
    pub const SYSTEM_DEFAULT: i64 = 0;
    /// History: keep the last `depth` messages.
    pub const KEEP_LAST: i64 = 1;
    /// History: keep all messages.
    pub const KEEP_ALL: i64 = 2;
    /// Reliability: retransmit until received.
    pub const RELIABLE: i64 = 1;
    /// Reliability: send once.
    pub const BEST_EFFORT: i64 = 2;
    /// Durability: late joiners get the last messages (latched).
    pub const TRANSIENT_LOCAL: i64 = 1;
    /// Durability: only messages sent after joining.
    pub const VOLATILE: i64 = 2;
    /// Liveliness: asserted by the middleware.
    pub const AUTOMATIC: i64 = 1;
    /// Liveliness: asserted by the publisher per topic.
    pub const MANUAL_BY_TOPIC: i64 = 3;
}

/// The four enum-valued policies, to read their short names (`ros2 topic pub --help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyKind {
    /// The history policy.
    History,
    /// The reliability policy.
    Reliability,
    /// The durability policy.
    Durability,
    /// The liveliness policy.
    Liveliness,
}

impl PolicyKind {
    fn names(self) -> &'static [&'static str] {
        match self {
            PolicyKind::History => HISTORY,
            PolicyKind::Reliability => RELIABILITY,
            PolicyKind::Durability => DURABILITY,
            PolicyKind::Liveliness => LIVELINESS,
        }
    }

    /// rmw's value for a short name (`reliable`, `transient_local`…), any case.
    pub fn value(self, name: &str) -> Option<i64> {
        self.names().iter().position(|x| x.eq_ignore_ascii_case(name)).map(|i| i as i64)
    }

    /// The short name of a value (`unknown` for values rmw does not define).
    pub fn name(self, value: i64) -> &'static str {
        name(value, self.names())
    }
}

impl Duration {
    /// rmw's "infinite" as rosbag2 writes it (`RMW_DURATION_INFINITE`: i64::MAX ns).
    pub const INFINITE: Duration = Duration { sec: 9_223_372_036, nsec: 854_775_807 };

    /// Nanoseconds, saturating; 0/0 is "unspecified".
    pub fn as_nanos(self) -> i128 {
        self.sec as i128 * 1_000_000_000 + self.nsec as i128
    }
}

fn policy(p: &Option<Policy>, names: &[&str]) -> i64 {
    match p {
        None => 0,
        Some(Policy::Int(v)) => *v,
        Some(Policy::Name(n)) => names.iter().position(|x| x.eq_ignore_ascii_case(n)).map_or(3, |i| i as i64),
    }
}

impl From<RawProfile> for QosProfile {
    fn from(r: RawProfile) -> Self {
        QosProfile {
            history: policy(&r.history, HISTORY),
            depth: r.depth,
            reliability: policy(&r.reliability, RELIABILITY),
            durability: policy(&r.durability, DURABILITY),
            deadline: r.deadline,
            lifespan: r.lifespan,
            liveliness: policy(&r.liveliness, LIVELINESS),
            liveliness_lease_duration: r.liveliness_lease_duration,
            avoid_ros_namespace_conventions: r.avoid_ros_namespace_conventions,
        }
    }
}

impl QosField {
    pub(crate) fn into_profiles(self) -> Result<Vec<QosProfile>> {
        match self {
            QosField::List(l) => Ok(l.into_iter().map(QosProfile::from).collect()),
            QosField::Text(t) => parse(&t),
        }
    }
}

/// Parses the string form (as stored in `.db3` topics and MCAP channel metadata).
pub fn parse(text: &str) -> Result<Vec<QosProfile>> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let raw: Vec<RawProfile> = serde_saphyr::from_str(text)
        .map_err(|e| Error::Invalid(format!("offered_qos_profiles is not a QoS list: {e}")))?;
    Ok(raw.into_iter().map(QosProfile::from).collect())
}

fn name(v: i64, names: &[&str]) -> &'static str {
    const UNKNOWN: &str = "unknown";
    usize::try_from(v).ok().and_then(|i| names.get(i)).map_or(UNKNOWN, |s| match *s {
        "system_default" => "system_default",
        "keep_last" => "keep_last",
        "keep_all" => "keep_all",
        "reliable" => "reliable",
        "best_effort" => "best_effort",
        "transient_local" => "transient_local",
        "volatile" => "volatile",
        "automatic" => "automatic",
        "manual_by_node" => "manual_by_node",
        "manual_by_topic" => "manual_by_topic",
        "best_available" => "best_available",
        _ => UNKNOWN,
    })
}

/// Writes profiles as a YAML block list indented by `indent` spaces, with integer enums for
/// metadata `version` ≤ 8 and string enums from 9 on — the field order rosbag2 uses.
pub fn emit(profiles: &[QosProfile], version: u32, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    let e = |v: i64, names: &[&str]| if version >= 9 { name(v, names).to_string() } else { v.to_string() };
    for p in profiles {
        let d = |label: &str, d: &Duration, out: &mut String| {
            out.push_str(&format!("{pad}  {label}:\n{pad}    sec: {}\n{pad}    nsec: {}\n", d.sec, d.nsec));
        };
        out.push_str(&format!("{pad}- history: {}\n", e(p.history, HISTORY)));
        out.push_str(&format!("{pad}  depth: {}\n", p.depth));
        out.push_str(&format!("{pad}  reliability: {}\n", e(p.reliability, RELIABILITY)));
        out.push_str(&format!("{pad}  durability: {}\n", e(p.durability, DURABILITY)));
        d("deadline", &p.deadline, out);
        d("lifespan", &p.lifespan, out);
        out.push_str(&format!("{pad}  liveliness: {}\n", e(p.liveliness, LIVELINESS)));
        d("liveliness_lease_duration", &p.liveliness_lease_duration, out);
        out.push_str(&format!("{pad}  avoid_ros_namespace_conventions: {}\n", p.avoid_ros_namespace_conventions));
    }
}

/// The string form for storage files and metadata v4–8 (no trailing newline, `""` for none).
pub fn to_text(profiles: &[QosProfile], version: u32) -> String {
    let mut s = String::new();
    emit(profiles, version, 0, &mut s);
    s.truncate(s.trim_end().len());
    s
}

/// Re-encodes a stored QoS string for readers of metadata `version` (integer enums before 9).
/// Text that does not parse is kept as it is.
pub fn convert_text(text: &str, version: u32) -> String {
    match parse(text) {
        Ok(p) => to_text(&p, version),
        Err(_) => text.to_string(),
    }
}

/// The metadata.yaml value: a quoted string before v9, a block list (or `[]`) from v9.
pub(crate) fn metadata_value(profiles: &[QosProfile], version: u32, indent: usize) -> String {
    if version >= 9 {
        if profiles.is_empty() {
            return " []\n".into();
        }
        let mut s = String::from("\n");
        emit(profiles, version, indent, &mut s);
        s
    } else {
        format!(" {}\n", quote(&to_text(profiles, version)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V8: &str = "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  deadline:\n    sec: 9223372036\n    nsec: 854775807\n  lifespan:\n    sec: 9223372036\n    nsec: 854775807\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 9223372036\n    nsec: 854775807\n  avoid_ros_namespace_conventions: false";

    #[test]
    fn integer_and_string_forms_round_trip() {
        let p = parse(V8).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].history, p[0].reliability, p[0].durability, p[0].liveliness), (3, 1, 2, 1));
        assert_eq!(to_text(&p, 8), V8);
        let v9 = to_text(&p, 9);
        assert!(
            v9.contains("reliability: reliable")
                && v9.contains("durability: volatile")
                && v9.contains("history: unknown")
        );
        assert_eq!(parse(&v9).unwrap(), p);
        assert!(parse("").unwrap().is_empty());
    }
}
