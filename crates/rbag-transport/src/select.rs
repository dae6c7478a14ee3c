//! Which topics a recorder subscribes to: `rosbag record`'s TOPIC list, `-a`, `-e` and `-x`.
//!
//! The rules are rosbag's (`Recorder::shouldSubscribeToTopic` and `Recorder::run`):
//! - topics named explicitly (without `-e`) are always recorded, even when `-x` matches them,
//!   because rosbag subscribes to them directly and only filters discovered topics;
//! - a discovered topic is recorded when `-a` is given or one of the `-e` patterns matches it,
//!   unless the `-x` pattern matches it;
//! - patterns match the **whole** name, as `boost::regex_match` does (`/a` does not match
//!   `/ab`).
//!
//! Names must already be resolved (`/ns/chatter`, not `chatter`); resolving is the middleware's
//! job.

use std::collections::BTreeSet;

use regex::Regex;

/// A pattern given with `-e` or `-x` that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid topic regular expression {pattern:?}: {source}")]
pub struct SelectError {
    /// The pattern as given.
    pub pattern: String,
    /// What the regex compiler said.
    #[source]
    pub source: regex::Error,
}

/// The topics to record.
#[derive(Debug, Clone, Default)]
pub struct TopicSelection {
    all: bool,
    topics: BTreeSet<String>,
    regexes: Vec<Regex>,
    exclude: Option<Regex>,
}

/// Compiles `pattern` so it only matches whole names, like `boost::regex_match` and
/// `std::regex_match` (rosbag2).
pub fn whole(pattern: &str) -> Result<Regex, SelectError> {
    Regex::new(&format!("^(?:{pattern})$")).map_err(|source| SelectError { pattern: pattern.into(), source })
}

impl TopicSelection {
    /// Every topic (`-a`).
    pub fn all() -> Self {
        TopicSelection { all: true, ..Self::default() }
    }

    /// Exactly these (resolved) topic names.
    pub fn topics<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        TopicSelection { topics: names.into_iter().map(Into::into).collect(), ..Self::default() }
    }

    /// Topics matching any of these patterns as a whole (`-e`).
    pub fn regexes<I, S>(patterns: I) -> Result<Self, SelectError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let regexes = patterns.into_iter().map(|p| whole(p.as_ref())).collect::<Result<_, _>>()?;
        Ok(TopicSelection { regexes, ..Self::default() })
    }

    /// Adds `-a` to a selection (explicit topics given with `-a` are kept, as in rosbag).
    pub fn with_all(mut self) -> Self {
        self.all = true;
        self
    }

    /// Adds an explicit topic.
    pub fn with_topic(mut self, name: impl Into<String>) -> Self {
        self.topics.insert(name.into());
        self
    }

    /// Leaves out discovered topics whose whole name matches `pattern` (`-x`).
    pub fn with_exclude(mut self, pattern: &str) -> Result<Self, SelectError> {
        self.exclude = Some(whole(pattern)?);
        Ok(self)
    }

    /// Whether a topic seen on the graph (from the master's topic list, or named) is recorded.
    pub fn matches(&self, topic: &str) -> bool {
        if self.topics.contains(topic) {
            return true;
        }
        if self.excluded(topic) {
            return false;
        }
        self.all || self.regexes.iter().any(|r| r.is_match(topic))
    }

    /// Whether a topic a `--node` subscribes to is recorded: rosbag takes every such topic but
    /// still applies `-x`.
    pub fn allows_node_topic(&self, topic: &str) -> bool {
        self.topics.contains(topic) || !self.excluded(topic)
    }

    /// Whether `-x` removes `topic`.
    pub fn excluded(&self, topic: &str) -> bool {
        self.exclude.as_ref().is_some_and(|x| x.is_match(topic))
    }

    /// True for `-a`.
    pub fn is_all(&self) -> bool {
        self.all
    }

    /// The explicit names, which the middleware subscribes to at once without waiting to
    /// discover them.
    pub fn explicit_topics(&self) -> impl Iterator<Item = &str> {
        self.topics.iter().map(String::as_str)
    }

    /// True when only explicit names are selected, so nothing needs discovering.
    pub fn is_explicit_only(&self) -> bool {
        !self.all && self.regexes.is_empty()
    }
}
