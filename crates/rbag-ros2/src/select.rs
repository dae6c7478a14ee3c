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

use std::collections::BTreeSet;

use rbag_transport::select::{whole, SelectError};
use regex::Regex;

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
}

impl Ros2Selection {
    /// `-a`: every topic and every service.
    pub fn all() -> Self {
        Ros2Selection { all_topics: true, all_services: true, ..Self::default() }
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

    /// Whether nothing can be selected (the CLI asks for `-a`, topics, services or `-e`).
    pub fn is_empty(&self) -> bool {
        !self.all_topics
            && !self.all_services
            && self.topics.is_empty()
            && self.services.is_empty()
            && self.regex.is_none()
    }

    /// Whether to record the ROS topic `topic` (absolute name).
    pub fn takes(&self, topic: &str) -> bool {
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
        self.topics.iter().cloned().chain(self.services.iter().map(|s| crate::names::service_event_topic(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn all_takes_topics_and_services_but_not_hidden_ones() {
        let s = Ros2Selection::all();
        assert!(s.takes("/chatter"));
        assert!(s.takes("/add/_service_event"));
        assert!(!s.takes("/_hidden"));
        assert!(!s.takes("/a/_b"));
        assert!(!s.takes("/_private/srv/_service_event"));
        let s = Ros2Selection { include_hidden: true, ..Ros2Selection::all() };
        assert!(s.takes("/_hidden"));
    }

    #[test]
    fn topics_and_services_flags_are_separate() {
        let t = Ros2Selection { all_topics: true, ..Default::default() };
        assert!(t.takes("/chatter") && !t.takes("/add/_service_event"));
        let v = Ros2Selection { all_services: true, ..Default::default() };
        assert!(!v.takes("/chatter") && v.takes("/add/_service_event"));
        let named = Ros2Selection { topics: set(&["/a", "/_h"]), services: set(&["/add"]), ..Default::default() };
        assert!(named.takes("/a") && named.takes("/_h") && named.takes("/add/_service_event"));
        assert!(!named.takes("/b") && !named.takes("/sub/_service_event"));
        assert_eq!(named.named_topics().collect::<Vec<_>>(), ["/_h", "/a", "/add/_service_event"]);
    }

    #[test]
    fn regexes_match_whole_names_and_excludes_win() {
        let s =
            Ros2Selection::default().with_regex(Some("/cam.*")).unwrap().with_exclude_regex(Some(".*/raw")).unwrap();
        assert!(s.takes("/cam/image"));
        assert!(!s.takes("/cam/raw"));
        assert!(!s.takes("/x/cam"));
        assert!(s.takes("/camsrv/_service_event"), "-e sees the service name");
        let all =
            Ros2Selection { exclude_topics: set(&["/b"]), exclude_services: set(&["/s"]), ..Ros2Selection::all() };
        assert!(!all.takes("/b") && all.takes("/c"));
        assert!(!all.takes("/s/_service_event") && all.takes("/t/_service_event"));
        let named_but_excluded =
            Ros2Selection { topics: set(&["/b"]), exclude_topics: set(&["/b"]), ..Default::default() };
        assert!(!named_but_excluded.takes("/b"));
        assert!(Ros2Selection::default().with_regex(Some("(")).is_err());
        assert!(Ros2Selection::default().is_empty());
        assert!(Ros2Selection::default().with_regex(Some("")).unwrap().is_empty());
    }
}
