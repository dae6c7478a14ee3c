//! ROS 2 names on DDS, as rmw_cyclonedds and rmw_fastrtps map them.
//!
//! - A topic `/chatter` is the DDS topic `rt/chatter`; a service `/add` is the request topic
//!   `rq/addRequest` and the reply topic `rr/addReply`. Other prefixes (`rs/`, `ra/`…) belong
//!   to actions' internals or to rmw itself and are not ROS topics.
//! - A type `std_msgs/msg/String` is the DDS type `std_msgs::msg::dds_::String_`; a service's
//!   request `example_interfaces/srv/AddTwoInts_Request` is
//!   `example_interfaces::srv::dds_::AddTwoInts_Request_`.
//! - A topic is hidden when one of its name's tokens starts with `_` (rcl's rule, which
//!   `ros2 topic list` and `ros2 bag record` follow unless told to include them).
//! - rosbag2 records services through their `<service>/_service_event` topics (Iron and later).

/// What a DDS topic is in ROS 2 terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RosTopic {
    /// `rt/…`: an ordinary topic, with its ROS name.
    Topic(String),
    /// `rq/…Request`: a service's request stream, with the service's ROS name.
    Request(String),
    /// `rr/…Reply`: a service's reply stream, with the service's ROS name.
    Reply(String),
}

/// The DDS topic name for the ROS topic `name` (`/chatter` → `rt/chatter`).
pub fn topic_to_dds(name: &str) -> String {
    format!("rt{}", absolute(name))
}

/// The DDS request and reply topic names for the ROS service `name`.
pub fn service_to_dds(name: &str) -> (String, String) {
    let name = absolute(name);
    (format!("rq{name}Request"), format!("rr{name}Reply"))
}

/// The ROS meaning of a DDS topic name, or `None` for names outside the ROS conventions
/// (`DCPSParticipant`, `ros_discovery_info`, or a plain DDS application's topic).
pub fn topic_from_dds(dds: &str) -> Option<RosTopic> {
    let (prefix, rest) = (dds.get(..2)?, dds.get(2..)?);
    if !rest.starts_with('/') || rest.len() < 2 {
        return None;
    }
    match prefix {
        "rt" => Some(RosTopic::Topic(rest.to_string())),
        "rq" => rest.strip_suffix("Request").filter(|s| s.len() > 1).map(|s| RosTopic::Request(s.to_string())),
        "rr" => rest.strip_suffix("Reply").filter(|s| s.len() > 1).map(|s| RosTopic::Reply(s.to_string())),
        _ => None,
    }
}

fn absolute(name: &str) -> String {
    if name.starts_with('/') {
        name.to_string()
    } else {
        format!("/{name}")
    }
}

/// The DDS type name for a ROS type (`pkg/msg/Type` → `pkg::msg::dds_::Type_`). A name that
/// is not `pkg/kind/Type` (or the older `pkg/Type`, taken as `msg`) gives `None`.
pub fn type_to_dds(ros: &str) -> Option<String> {
    let parts: Vec<&str> = ros.split('/').collect();
    let (pkg, kind, name) = match parts.as_slice() {
        [pkg, kind, name] => (*pkg, *kind, *name),
        [pkg, name] => (*pkg, "msg", *name),
        _ => return None,
    };
    if ![pkg, kind, name].iter().all(|p| is_identifier(p)) {
        return None;
    }
    Some(format!("{pkg}::{kind}::dds_::{name}_"))
}

/// The ROS type for a DDS type name (`pkg::msg::dds_::Type_` → `pkg/msg/Type`); `None` when
/// the name does not follow the convention (a plain DDS type).
pub fn type_from_dds(dds: &str) -> Option<String> {
    let parts: Vec<&str> = dds.split("::").collect();
    match parts.as_slice() {
        [pkg, kind, "dds_", name] => {
            let name = name.strip_suffix('_')?;
            [pkg, kind, name].iter().all(|p| is_identifier(p)).then(|| format!("{pkg}/{kind}/{name}"))
        }
        _ => None,
    }
}

/// A package, interface kind or type name: letters, digits and `_` (what rosidl accepts, and
/// what keeps the two name forms each other's inverse).
fn is_identifier(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether a ROS name is hidden: one of its tokens starts with `_`.
pub fn is_hidden(name: &str) -> bool {
    name.split('/').any(|token| token.starts_with('_'))
}

/// The suffix of the topics that carry service events (`/add/_service_event`).
pub const SERVICE_EVENT_SUFFIX: &str = "/_service_event";

/// Whether `topic` carries a service's events; these are services, not topics, to
/// `ros2 bag record` (`--all-services`, `--services`), and are recorded even though hidden.
pub fn is_service_event(topic: &str) -> bool {
    topic.ends_with(SERVICE_EVENT_SUFFIX) && topic.len() > SERVICE_EVENT_SUFFIX.len()
}

/// The event topic of the service `name` (`/add` → `/add/_service_event`).
pub fn service_event_topic(name: &str) -> String {
    format!("{}{SERVICE_EVENT_SUFFIX}", absolute(name).trim_end_matches('/'))
}

/// Reads rmw's `typehash=…;` entry out of an endpoint's user data (`key=value;` pairs that
/// rmw_cyclonedds and rmw_fastrtps put there from Iron on).
pub fn type_hash_from_user_data(user_data: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(user_data).ok()?;
    text.split(';').find_map(|kv| kv.trim().strip_prefix("typehash=")).filter(|h| !h.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_hash_comes_from_rmw_user_data() {
        assert_eq!(type_hash_from_user_data(b"typehash=RIHS01_abc;").as_deref(), Some("RIHS01_abc"));
        assert_eq!(type_hash_from_user_data(b"enclave=/;typehash=RIHS01_x;").as_deref(), Some("RIHS01_x"));
        assert_eq!(type_hash_from_user_data(b"typehash=;"), None);
        assert_eq!(type_hash_from_user_data(b"\xff"), None);
    }

    #[test]
    fn topics_and_services_map_both_ways() {
        assert_eq!(topic_to_dds("/chatter"), "rt/chatter");
        assert_eq!(topic_to_dds("ns/chatter"), "rt/ns/chatter");
        assert_eq!(service_to_dds("/add"), ("rq/addRequest".into(), "rr/addReply".into()));
        assert_eq!(topic_from_dds("rt/a/b"), Some(RosTopic::Topic("/a/b".into())));
        assert_eq!(topic_from_dds("rq/addRequest"), Some(RosTopic::Request("/add".into())));
        assert_eq!(topic_from_dds("rr/addReply"), Some(RosTopic::Reply("/add".into())));
        for other in
            ["DCPSParticipant", "ros_discovery_info", "rt", "rt/", "rq/Request", "rr/add", "xx/a", "rtchatter", "é"]
        {
            assert_eq!(topic_from_dds(other), None, "{other}");
        }
    }

    #[test]
    fn types_map_both_ways() {
        assert_eq!(type_to_dds("std_msgs/msg/String").as_deref(), Some("std_msgs::msg::dds_::String_"));
        assert_eq!(type_to_dds("std_msgs/String").as_deref(), Some("std_msgs::msg::dds_::String_"));
        assert_eq!(
            type_to_dds("example_interfaces/srv/AddTwoInts_Request").as_deref(),
            Some("example_interfaces::srv::dds_::AddTwoInts_Request_")
        );
        assert_eq!(type_to_dds("String"), None);
        assert_eq!(type_to_dds("a//b"), None);
        assert_eq!(type_from_dds("std_msgs::msg::dds_::String_").as_deref(), Some("std_msgs/msg/String"));
        assert_eq!(type_from_dds("sensor_msgs::msg::dds_::Imu_").as_deref(), Some("sensor_msgs/msg/Imu"));
        assert_eq!(type_from_dds("MyType"), None);
        assert_eq!(type_from_dds("a::msg::dds_::T"), None);
        assert_eq!(type_from_dds("a::msg::dds_::_"), None);
        // Found by fuzzing (ros2_names_qos): a stray ':' made a ROS name with no way back.
        assert_eq!(type_from_dds("stdd_msgs::msg::dds_:::dds_C:String_"), None);
        assert_eq!(type_to_dds("a/msg/B:C"), None);
        assert_eq!(type_to_dds("a b/msg/C"), None);
    }

    #[test]
    fn hidden_topics_and_service_events() {
        assert!(is_hidden("/_private/x"));
        assert!(is_hidden("/a/_x"));
        assert!(!is_hidden("/a/b_c"));
        assert!(is_service_event("/add/_service_event"));
        assert!(!is_service_event("/_service_event"));
        assert_eq!(service_event_topic("add"), "/add/_service_event");
    }
}
