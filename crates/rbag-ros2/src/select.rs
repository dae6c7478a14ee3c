//! Which topics and services `ros2 bag record` takes (rosbag2's `TopicFilter`, Jazzy).
//!
//! - Services are recorded through their `<service>/_service_event` topics; the service flags
//!   (`--all-services`, `--services`, `--exclude-services`) and the patterns see the service's
//!   name, without the suffix.
//! - Hidden topics (a token starting with `_`) are left out unless `--include-hidden-topics`,
//!   or unless named with `--topics`: naming a topic is asking for it.
//! - `--exclude-topics`/`--exclude-services` and `--exclude-regex` win over everything else;
//!   then `-a`/`--all-topics`/`--all-services`, the named lists and `-e` take a topic.
//! - Patterns match whole names (`std::regex_match`).
//! - Actions (Kilted and later) are recorded through their five topics (see
//!   [`rbag_storage::rosbag2::actions`]): `--all-actions` (and `-a`), `--actions`,
//!   `--exclude-actions`, and `-e`/`-x` on the action's name. A topic is an action's only
//!   when its name and its type both fit, so selection needs the type; action topics are
//!   taken although hidden (`_action`), as rosbag2's `TopicFilter` takes them.

use std::collections::BTreeSet;

use rbag_transport::select::{whole, SelectError};
use regex::Regex;

use rbag_storage::rosbag2::actions::{action_of, action_topics};

use crate::names::{is_hidden, is_service_event, SERVICE_EVENT_SUFFIX};

/// `ros2 bag record`'s selection flags.
#[derive(Debug, Clone, Default)]
pub struct Ros2Selection {
    /// Every topic (`--all-topics`, `-a`).
    pub all_topics: bool,
    /// Every service's event topic (`--all-services`, `-a`).
    pub all_services: bool,
    /// Topics named (absolute).
    pub topics: BTreeSet<String>,
    /// Services named (absolute); their `/_service_event` topics are recorded.
    pub services: BTreeSet<String>,
    /// Topics and services whose whole name matches (`-e`).
    pub regex: Option<Regex>,
    /// Topics and services left out (`-x`).
    pub exclude_regex: Option<Regex>,
    /// Topics left out by name.
    pub exclude_topics: BTreeSet<String>,
    /// Services left out by name.
    pub exclude_services: BTreeSet<String>,
    /// Also hidden topics (a name token starting with `_`).
    pub include_hidden: bool,
    /// Every action's five topics (`--all-actions`, `-a` from Kilted on).
    pub all_actions: bool,
    /// Actions named (absolute); their five topics are recorded.
    pub actions: BTreeSet<String>,
    /// Actions left out by name.
    pub exclude_actions: BTreeSet<String>,
}

impl Ros2Selection {
    /// `-a`: every topic, every service and (as from Kilted) every action.
    pub fn all() -> Self {
        Ros2Selection { all_topics: true, all_services: true, all_actions: true, ..Self::default() }
    }

    /// Sets `-e` (`None` or empty: none).
    pub fn with_regex(mut self, pattern: Option<&str>) -> Result<Self, SelectError> {
        self.regex = pattern.filter(|p| !p.is_empty()).map(whole).transpose()?;
        Ok(self)
    }

    /// Sets `--exclude-regex`.
    pub fn with_exclude_regex(mut self, pattern: Option<&str>) -> Result<Self, SelectError> {
        self.exclude_regex = pattern.filter(|p| !p.is_empty()).map(whole).transpose()?;
        Ok(self)
    }

    /// Whether nothing can be selected (the CLI asks for `-a`, topics, services, actions or
    /// `-e`).
    pub fn is_empty(&self) -> bool {
        !self.all_topics
            && !self.all_services
            && !self.all_actions
            && self.topics.is_empty()
            && self.services.is_empty()
            && self.actions.is_empty()
            && self.regex.is_none()
    }

    /// Whether to record the ROS topic `topic` (absolute name) of type `ros_type`
    /// (`pkg/msg/Type`; the type decides whether an `_action/...` topic is an action's).
    pub fn takes(&self, topic: &str, ros_type: &str) -> bool {
        if let Some((action, _)) = action_of(topic, ros_type) {
            return self.takes_action(action);
        }
        if is_service_event(topic) {
            let service = &topic[..topic.len() - SERVICE_EVENT_SUFFIX.len()];
            return self.takes_service(service);
        }
        if self.exclude_topics.contains(topic) || self.exclude_regex.as_ref().is_some_and(|r| r.is_match(topic)) {
            return false;
        }
        if self.topics.contains(topic) {
            return true;
        }
        if !self.include_hidden && is_hidden(topic) {
            return false;
        }
        self.all_topics || self.regex.as_ref().is_some_and(|r| r.is_match(topic))
    }

    fn takes_action(&self, action: &str) -> bool {
        if self.exclude_actions.contains(action) || self.exclude_regex.as_ref().is_some_and(|r| r.is_match(action)) {
            return false;
        }
        self.all_actions || self.actions.contains(action) || self.regex.as_ref().is_some_and(|r| r.is_match(action))
    }

    fn takes_service(&self, service: &str) -> bool {
        if self.exclude_services.contains(service) || self.exclude_regex.as_ref().is_some_and(|r| r.is_match(service)) {
            return false;
        }
        if self.services.contains(service) {
            return true;
        }
        if !self.include_hidden && is_hidden(service) {
            return false;
        }
        self.all_services || self.regex.as_ref().is_some_and(|r| r.is_match(service))
    }

    /// Topics that are asked for by name, so they can be subscribed to before any publisher
    /// appears (`--include-unpublished-topics` for named topics, and `--no-discovery`).
    pub fn named_topics(&self) -> impl Iterator<Item = String> + '_ {
        self.topics
            .iter()
            .cloned()
            .chain(self.services.iter().map(|s| crate::names::service_event_topic(s)))
            .chain(self.actions.iter().flat_map(|a| action_topics(a)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSG: &str = "std_msgs/msg/String";
    const SRV: &str = "example_interfaces/srv/AddTwoInts_Event";

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn all_takes_topics_and_services_but_not_hidden_ones() {
        let s = Ros2Selection::all();
        assert!(s.takes("/chatter", MSG));
        assert!(s.takes("/add/_service_event", SRV));
        assert!(!s.takes("/_hidden", MSG));
        assert!(!s.takes("/a/_b", MSG));
        assert!(!s.takes("/_private/srv/_service_event", SRV));
        let s = Ros2Selection { include_hidden: true, ..Ros2Selection::all() };
        assert!(s.takes("/_hidden", MSG));
    }

    #[test]
    fn topics_and_services_flags_are_separate() {
        let t = Ros2Selection { all_topics: true, ..Default::default() };
        assert!(t.takes("/chatter", MSG) && !t.takes("/add/_service_event", SRV));
        let v = Ros2Selection { all_services: true, ..Default::default() };
        assert!(!v.takes("/chatter", MSG) && v.takes("/add/_service_event", SRV));
        let named = Ros2Selection { topics: set(&["/a", "/_h"]), services: set(&["/add"]), ..Default::default() };
        assert!(named.takes("/a", MSG) && named.takes("/_h", MSG) && named.takes("/add/_service_event", SRV));
        assert!(!named.takes("/b", MSG) && !named.takes("/sub/_service_event", SRV));
        assert_eq!(named.named_topics().collect::<Vec<_>>(), ["/_h", "/a", "/add/_service_event"]);
    }

    #[test]
    fn regexes_match_whole_names_and_excludes_win() {
        let s =
            Ros2Selection::default().with_regex(Some("/cam.*")).unwrap().with_exclude_regex(Some(".*/raw")).unwrap();
        assert!(s.takes("/cam/image", MSG));
        assert!(!s.takes("/cam/raw", MSG));
        assert!(!s.takes("/x/cam", MSG));
        assert!(s.takes("/camsrv/_service_event", SRV), "-e sees the service name");
        let all =
            Ros2Selection { exclude_topics: set(&["/b"]), exclude_services: set(&["/s"]), ..Ros2Selection::all() };
        assert!(!all.takes("/b", MSG) && all.takes("/c", MSG));
        assert!(!all.takes("/s/_service_event", SRV) && all.takes("/t/_service_event", SRV));
        let named_but_excluded =
            Ros2Selection { topics: set(&["/b"]), exclude_topics: set(&["/b"]), ..Default::default() };
        assert!(!named_but_excluded.takes("/b", MSG));
        assert!(Ros2Selection::default().with_regex(Some("(")).is_err());
        assert!(Ros2Selection::default().is_empty());
        assert!(Ros2Selection::default().with_regex(Some("")).unwrap().is_empty());
    }

    /// The five topics of `/fibonacci`, with their types.
    fn fibonacci() -> Vec<(String, &'static str)> {
        let t = |s: &str| format!("/fibonacci/_action/{s}");
        vec![
            (t("send_goal/_service_event"), "example_interfaces/action/Fibonacci_SendGoal_Event"),
            (t("cancel_goal/_service_event"), "action_msgs/srv/CancelGoal_Event"),
            (t("get_result/_service_event"), "example_interfaces/action/Fibonacci_GetResult_Event"),
            (t("feedback"), "example_interfaces/action/Fibonacci_FeedbackMessage"),
            (t("status"), "action_msgs/msg/GoalStatusArray"),
        ]
    }

    fn takes_all(s: &Ros2Selection) -> bool {
        fibonacci().iter().all(|(t, ty)| s.takes(t, ty))
    }

    fn takes_none(s: &Ros2Selection) -> bool {
        fibonacci().iter().all(|(t, ty)| !s.takes(t, ty))
    }

    #[test]
    fn actions_are_taken_by_their_flags_though_hidden() {
        assert!(takes_all(&Ros2Selection::all()), "-a takes actions (Kilted)");
        assert!(takes_all(&Ros2Selection { all_actions: true, ..Default::default() }));
        let topics_and_services = Ros2Selection { all_topics: true, all_services: true, ..Default::default() };
        assert!(takes_none(&topics_and_services), "neither --all-topics nor --all-services takes actions");
        let named = Ros2Selection { actions: set(&["/fibonacci"]), ..Default::default() };
        assert!(takes_all(&named) && !named.is_empty());
        assert!(!named.takes("/other/_action/status", "action_msgs/msg/GoalStatusArray"));
        assert_eq!(named.named_topics().count(), 5);
        let excluded = Ros2Selection { exclude_actions: set(&["/fibonacci"]), ..Ros2Selection::all() };
        assert!(takes_none(&excluded));
        assert!(excluded.takes("/other/_action/status", "action_msgs/msg/GoalStatusArray"));
        assert!(excluded.takes("/chatter", MSG));
    }

    #[test]
    fn regexes_see_the_action_name() {
        let s = Ros2Selection::default().with_regex(Some("/fib.*")).unwrap();
        assert!(takes_all(&s));
        let s = Ros2Selection::default().with_regex(Some(".*_action.*")).unwrap();
        assert!(takes_none(&s), "-e matches the action's name, not its topics'");
        let s = Ros2Selection::all().with_exclude_regex(Some("/fibo.*")).unwrap();
        assert!(takes_none(&s) && s.takes("/chatter", MSG));
    }

    #[test]
    fn a_topic_is_an_actions_only_with_the_right_type() {
        // A plain topic named like an action's status is a hidden topic, not an action's.
        let actions = Ros2Selection { all_actions: true, ..Default::default() };
        assert!(!actions.takes("/fibonacci/_action/status", MSG));
        let hidden = Ros2Selection { all_topics: true, include_hidden: true, ..Default::default() };
        assert!(hidden.takes("/fibonacci/_action/status", MSG));
        // And an action's service event is not a service to --all-services.
        let services = Ros2Selection { all_services: true, ..Default::default() };
        assert!(!services.takes("/fibonacci/_action/send_goal/_service_event", fibonacci()[0].1));
    }
}
