//! Which messages a read returns.

use regex::Regex;

/// Selects messages by topic and log time. An empty filter accepts everything.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Accept only these topics (plus those `regex` accepts). Empty: every topic.
    pub topics: Vec<String>,
    /// Accept topics matching this pattern (anywhere in the name, like rosbag2's `--regex`).
    pub regex: Option<Regex>,
    /// Reject these topics, even when selected above.
    pub exclude_topics: Vec<String>,
    /// Reject topics matching this pattern.
    pub exclude_regex: Option<Regex>,
    /// Inclusive lower bound on log time, nanoseconds.
    pub start: Option<u64>,
    /// Exclusive upper bound on log time, nanoseconds.
    pub end: Option<u64>,
}

impl Filter {
    /// Whether messages of `topic` pass.
    pub fn accepts_topic(&self, topic: &str) -> bool {
        let selected = (self.topics.is_empty() && self.regex.is_none())
            || self.topics.iter().any(|t| t == topic)
            || self.regex.as_ref().is_some_and(|r| r.is_match(topic));
        selected
            && !self.exclude_topics.iter().any(|t| t == topic)
            && !self.exclude_regex.as_ref().is_some_and(|r| r.is_match(topic))
    }

    /// Whether messages on connection `id`, which the bag never declares, are selected: they
    /// count as messages of the topic [`crate::Connection::undeclared`] gives them, so a read
    /// of every topic meets them (and fails, or reads them leniently) and a topic selection
    /// leaves them out.
    pub fn accepts_undeclared(&self, id: u32) -> bool {
        self.accepts_topic(&format!("{}{id}", crate::UNDECLARED_TOPIC_PREFIX))
    }

    /// Whether [`Filter::accepts_undeclared`] can hold for some id.
    pub fn may_accept_undeclared(&self) -> bool {
        self.regex.is_some()
            || self.topics.is_empty()
            || self.topics.iter().any(|t| t.starts_with(crate::UNDECLARED_TOPIC_PREFIX))
    }

    /// Whether a message at `time` (ns) passes.
    pub fn accepts_time(&self, time: u64) -> bool {
        self.start.is_none_or(|s| time >= s) && self.end.is_none_or(|e| time < e)
    }

    /// Whether any time in `[first, last]` can pass.
    pub fn overlaps(&self, first: u64, last: u64) -> bool {
        self.start.is_none_or(|s| last >= s) && self.end.is_none_or(|e| first < e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_selection_and_exclusion() {
        let f = Filter {
            topics: vec!["/a".into()],
            regex: Some(Regex::new("^/cam").unwrap()),
            exclude_topics: vec!["/camera/info".into()],
            ..Filter::default()
        };
        assert!(f.accepts_topic("/a"));
        assert!(f.accepts_topic("/camera/image"));
        assert!(!f.accepts_topic("/camera/info"));
        assert!(!f.accepts_topic("/b"));
        assert!(Filter::default().accepts_topic("/anything"));
    }

    #[test]
    fn time_window_is_half_open() {
        let f = Filter { start: Some(10), end: Some(20), ..Filter::default() };
        assert!(!f.accepts_time(9));
        assert!(f.accepts_time(10));
        assert!(f.accepts_time(19));
        assert!(!f.accepts_time(20));
        assert!(f.overlaps(0, 10));
        assert!(!f.overlaps(20, 30));
        assert!(!f.overlaps(0, 9));
    }
}
