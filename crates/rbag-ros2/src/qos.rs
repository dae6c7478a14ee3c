//! QoS as `ros2 bag` chooses it.
//!
//! - Recording requests what every publisher of a topic offers: reliable only when all offer
//!   reliable, transient-local only when all offer transient-local. Asking for more would
//!   leave the weaker publishers unmatched; asking for less would lose latched messages.
//! - Playback offers the recorded profile when all recorded publishers agree on the policies
//!   that decide compatibility, and rosbag2's default (reliable, volatile, keep last 10)
//!   otherwise.
//! - `--qos-profile-overrides-path` replaces both per topic.

use std::collections::BTreeMap;
use std::path::Path;

use rbag_storage::rosbag2::qos::{policy, Duration, PolicyKind, QosProfile};
use serde::Deserialize;

/// rosbag2's default profile (`Rosbag2QoS{}`): keep last 10, reliable, volatile.
pub fn default_profile() -> QosProfile {
    QosProfile {
        history: policy::KEEP_LAST,
        depth: 10,
        reliability: policy::RELIABLE,
        durability: policy::VOLATILE,
        ..QosProfile::default()
    }
}

/// The profile to subscribe to `topic` with, given its publishers' offers, and the warnings
/// rosbag2 prints for mixed offers.
pub fn adapt_request_to_offers(topic: &str, offers: &[QosProfile]) -> (QosProfile, Vec<String>) {
    let mut warnings = Vec::new();
    if offers.is_empty() {
        return (default_profile(), warnings);
    }
    let reliable = offers.iter().filter(|p| p.reliability == policy::RELIABLE).count();
    let latched = offers.iter().filter(|p| p.durability == policy::TRANSIENT_LOCAL).count();
    let mut request = default_profile();
    request.reliability = if reliable == offers.len() { policy::RELIABLE } else { policy::BEST_EFFORT };
    if reliable > 0 && reliable < offers.len() {
        warnings.push(format!(
            "some, but not all, publishers on topic {topic} offer reliable; subscribing best-effort to reach them all (messages from reliable publishers may be dropped)"
        ));
    }
    request.durability = if latched == offers.len() { policy::TRANSIENT_LOCAL } else { policy::VOLATILE };
    if latched > 0 && latched < offers.len() {
        warnings.push(format!(
            "some, but not all, publishers on topic {topic} offer transient-local; subscribing volatile to reach them all (earlier latched messages are not received)"
        ));
    }
    (request, warnings)
}

/// The profile to publish `topic` with, given the profiles recorded for it.
pub fn adapt_offer_to_recorded_offers(topic: &str, recorded: &[QosProfile]) -> (QosProfile, Option<String>) {
    let Some(first) = recorded.first() else {
        return (default_profile(), None);
    };
    let same = recorded.iter().all(|p| {
        p.reliability == first.reliability
            && p.durability == first.durability
            && p.deadline == first.deadline
            && p.liveliness == first.liveliness
            && p.liveliness_lease_duration == first.liveliness_lease_duration
    });
    if same {
        let mut offer = *first;
        offer.history = policy::KEEP_LAST;
        offer.depth = default_profile().depth;
        return (offer, None);
    }
    (
        default_profile(),
        Some(format!("the recorded publishers on topic {topic} offered different QoS profiles; publishing it with the default profile (reliable, volatile)")),
    )
}

/// Whether a reader with `request` matches a writer offering `offer` (DDS's request/offered
/// rule for the policies ROS uses; `system_default` on either side is taken as compatible).
pub fn compatible(offer: &QosProfile, request: &QosProfile) -> bool {
    let reliability_ok = !(request.reliability == policy::RELIABLE && offer.reliability == policy::BEST_EFFORT);
    let durability_ok = !(request.durability == policy::TRANSIENT_LOCAL && offer.durability == policy::VOLATILE);
    reliability_ok && durability_ok
}

/// A QoS overrides file failed to load.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct OverridesError {
    /// The file.
    pub path: String,
    /// What is wrong (unreadable, or the [`OverridesParseError`]).
    pub message: String,
}

/// Why QoS overrides text does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OverridesParseError {
    /// The YAML is not a map of topics to policy maps.
    #[error("not a QoS overrides map (topic: {{policy: value}}): {0}")]
    NotAMap(String),
    /// A policy value is not one of the policy's names.
    #[error("topic {topic}: unknown {kind} policy {value:?}")]
    UnknownPolicy {
        /// The topic.
        topic: String,
        /// The policy (`History`, `Reliability`, ...).
        kind: String,
        /// The value given.
        value: String,
    },
}

/// Per-topic profiles from a `--qos-profile-overrides-path` file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides(BTreeMap<String, QosProfile>);

#[derive(Deserialize)]
#[serde(untagged)]
enum Enum {
    Int(i64),
    Name(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOverride {
    history: Option<Enum>,
    depth: Option<u64>,
    reliability: Option<Enum>,
    durability: Option<Enum>,
    deadline: Option<Duration>,
    lifespan: Option<Duration>,
    liveliness: Option<Enum>,
    liveliness_lease_duration: Option<Duration>,
    avoid_ros_namespace_conventions: Option<bool>,
}

impl Overrides {
    /// Reads an overrides file: a map of topic names to policies by their short names
    /// (`reliability: reliable`, `durability: transient_local`, `deadline: {sec, nsec}`…).
    /// A policy left out takes rosbag2's default.
    pub fn load(path: &Path) -> Result<Overrides, OverridesError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| OverridesError { path: path.display().to_string(), message: e.to_string() })?;
        Self::parse(&text).map_err(|e| OverridesError { path: path.display().to_string(), message: e.to_string() })
    }

    /// [`Overrides::load`] on text.
    pub fn parse(text: &str) -> Result<Overrides, OverridesParseError> {
        if text.trim().is_empty() {
            return Ok(Overrides::default());
        }
        let raw: BTreeMap<String, RawOverride> =
            serde_saphyr::from_str(text).map_err(|e| OverridesParseError::NotAMap(e.to_string()))?;
        let mut out = BTreeMap::new();
        for (topic, r) in raw {
            let mut p = default_profile();
            let e = |v: Option<Enum>, kind: PolicyKind, current: i64| -> Result<i64, OverridesParseError> {
                match v {
                    None => Ok(current),
                    Some(Enum::Int(i)) => Ok(i),
                    Some(Enum::Name(n)) => kind.value(&n).ok_or_else(|| OverridesParseError::UnknownPolicy {
                        topic: topic.clone(),
                        kind: format!("{kind:?}"),
                        value: n.clone(),
                    }),
                }
            };
            p.history = e(r.history, PolicyKind::History, p.history)?;
            p.reliability = e(r.reliability, PolicyKind::Reliability, p.reliability)?;
            p.durability = e(r.durability, PolicyKind::Durability, p.durability)?;
            p.liveliness = e(r.liveliness, PolicyKind::Liveliness, p.liveliness)?;
            p.depth = r.depth.unwrap_or(p.depth);
            p.deadline = r.deadline.unwrap_or(p.deadline);
            p.lifespan = r.lifespan.unwrap_or(p.lifespan);
            p.liveliness_lease_duration = r.liveliness_lease_duration.unwrap_or(p.liveliness_lease_duration);
            p.avoid_ros_namespace_conventions = r.avoid_ros_namespace_conventions.unwrap_or(false);
            let topic = if topic.starts_with('/') { topic } else { format!("/{topic}") };
            out.insert(topic, p);
        }
        Ok(Overrides(out))
    }

    /// The profile given for `topic`, if any.
    pub fn get(&self, topic: &str) -> Option<&QosProfile> {
        self.0.get(topic)
    }

    /// Whether no topic has an override.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(reliability: i64, durability: i64) -> QosProfile {
        QosProfile { reliability, durability, depth: 7, history: policy::KEEP_ALL, ..QosProfile::default() }
    }

    #[test]
    fn requests_only_what_every_publisher_offers() {
        let (p, w) = adapt_request_to_offers("/t", &[]);
        assert_eq!(p, default_profile());
        assert!(w.is_empty());
        let (p, w) = adapt_request_to_offers("/t", &[offer(policy::RELIABLE, policy::TRANSIENT_LOCAL); 2]);
        assert_eq!((p.reliability, p.durability), (policy::RELIABLE, policy::TRANSIENT_LOCAL));
        assert!(w.is_empty());
        let (p, w) = adapt_request_to_offers(
            "/t",
            &[offer(policy::RELIABLE, policy::TRANSIENT_LOCAL), offer(policy::BEST_EFFORT, policy::VOLATILE)],
        );
        assert_eq!((p.reliability, p.durability), (policy::BEST_EFFORT, policy::VOLATILE));
        assert_eq!(w.len(), 2, "{w:?}");
        let (p, w) = adapt_request_to_offers("/t", &[offer(policy::BEST_EFFORT, policy::VOLATILE)]);
        assert_eq!((p.reliability, p.durability), (policy::BEST_EFFORT, policy::VOLATILE));
        assert!(w.is_empty());
        for o in [offer(policy::RELIABLE, policy::VOLATILE), offer(policy::BEST_EFFORT, policy::TRANSIENT_LOCAL)] {
            let (req, _) = adapt_request_to_offers("/t", std::slice::from_ref(&o));
            assert!(compatible(&o, &req));
        }
    }

    #[test]
    fn offers_the_recorded_profile_when_publishers_agree() {
        let (p, w) = adapt_offer_to_recorded_offers("/t", &[offer(policy::RELIABLE, policy::TRANSIENT_LOCAL); 2]);
        assert_eq!(
            (p.reliability, p.durability, p.history, p.depth),
            (policy::RELIABLE, policy::TRANSIENT_LOCAL, policy::KEEP_LAST, 10)
        );
        assert!(w.is_none());
        let (p, w) = adapt_offer_to_recorded_offers(
            "/t",
            &[offer(policy::RELIABLE, policy::TRANSIENT_LOCAL), offer(policy::BEST_EFFORT, policy::VOLATILE)],
        );
        assert_eq!(p, default_profile());
        assert!(w.is_some());
        assert_eq!(adapt_offer_to_recorded_offers("/t", &[]).0, default_profile());
    }

    #[test]
    fn compatibility_follows_request_offered() {
        let be = offer(policy::BEST_EFFORT, policy::VOLATILE);
        let rel_tl = offer(policy::RELIABLE, policy::TRANSIENT_LOCAL);
        assert!(!compatible(&be, &rel_tl));
        assert!(compatible(&rel_tl, &be));
        assert!(compatible(&rel_tl, &rel_tl));
    }

    #[test]
    fn overrides_take_short_names_and_default_the_rest() {
        let o = Overrides::parse(
            "/chatter:\n  reliability: best_effort\n  durability: transient_local\n  history: keep_all\n  deadline:\n    sec: 1\n    nsec: 5\nclock:\n  depth: 3\n",
        )
        .unwrap();
        let c = o.get("/chatter").unwrap();
        assert_eq!(
            (c.reliability, c.durability, c.history, c.depth),
            (policy::BEST_EFFORT, policy::TRANSIENT_LOCAL, policy::KEEP_ALL, 10)
        );
        assert_eq!(c.deadline, Duration { sec: 1, nsec: 5 });
        let k = o.get("/clock").unwrap();
        assert_eq!((k.reliability, k.depth), (policy::RELIABLE, 3));
        assert!(Overrides::parse("").unwrap().is_empty());
        assert!(Overrides::parse("/t:\n  reliability: sometimes\n").unwrap_err().to_string().contains("sometimes"));
        assert!(Overrides::parse("/t:\n  relability: reliable\n").is_err());
        assert!(Overrides::parse("- a\n").is_err());
    }
}
