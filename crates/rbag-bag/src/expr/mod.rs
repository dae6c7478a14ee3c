//! The filter expression language of `rbag filter`: Python's expression syntax over `topic`,
//! `m` (the decoded message) and `t` (its log time, as genpy's `Time`), so that expressions
//! written for `rosbag filter` mostly work as written, but parsed and evaluated here, never by
//! a Python `eval`. See `docs/filter.md` for the language.
//!
//! Everything is bounded ([`Limits`]): the expression's length, nesting and literals when it is
//! parsed; regular expressions are compiled by the `regex` crate (linear time) within a size
//! limit; and on each message a fuel budget caps the work and memory an evaluation may take.
//!
//! ```
//! use rbag_bag::expr::Expression;
//!
//! let e = Expression::parse("topic in ['/a', '/b'] and t.to_sec() >= 1.5")?;
//! assert!(e.matches("/a", 2_000_000_000, None)?);
//! assert!(!e.matches("/c", 2_000_000_000, None)?);
//! assert!(Expression::parse("((((((((((((((((((((1))))))))))))))))))))".repeat(4).as_str()).is_err());
//! # Ok::<(), rbag_bag::expr::ExprError>(())
//! ```

mod eval;
mod lexer;
mod parser;

use std::collections::HashMap;

use rbag_msg::MessageRef;
use rbag_storage::{Connection, Message};
use regex::bytes::Regex;

use crate::convert::Select;
use crate::decode::{Decoders, TypeSources};
use crate::{Bag, Error, Result};

use eval::{Eval, Fault, LazyM, RegexCache};
use parser::Node;

/// The bounds an expression is held to.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The expression's length in bytes.
    pub max_len: usize,
    /// How deep the expression's tree may nest (parentheses, operators, field accesses).
    pub max_depth: u32,
    /// A string literal's length in bytes.
    pub max_literal: usize,
    /// A number literal's length in characters.
    pub max_number: usize,
    /// A name's length.
    pub max_name: usize,
    /// Items of a list literal or arguments of a call.
    pub max_items: usize,
    /// A string or list an evaluation makes (`'a' * n`, `+`, `split`), in bytes.
    pub max_value: usize,
    /// Work and memory per message: one unit per operation and per byte scanned or made.
    pub fuel: u64,
    /// A compiled regular expression's size in bytes (the `regex` crate's size limit).
    pub regex_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_len: 10_000,
            max_depth: 64,
            max_literal: 4096,
            max_number: 64,
            max_name: 256,
            max_items: 1024,
            max_value: 1 << 20,
            fuel: 64 << 20,
            regex_size: 1 << 20,
        }
    }
}

/// Where parsing stopped, and why.
#[derive(Debug, Clone)]
pub(crate) struct ParseError {
    pub(crate) pos: usize,
    pub(crate) msg: String,
}

impl ParseError {
    pub(crate) fn new(pos: usize, msg: impl Into<String>) -> Self {
        ParseError { pos, msg: msg.into() }
    }
}

/// What went wrong on a message, by kind (front ends and tests match on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultKind {
    /// The message's type has no field of that name (`AttributeError` in Python).
    UnknownField,
    /// An operation on values of the wrong type (`TypeError`).
    Type,
    /// An index past the end (`IndexError`).
    Index,
    /// A value an operation refuses (`ZeroDivisionError`, `ValueError`).
    Value,
    /// The expression needs more work or memory on one message than the limits allow.
    Limit,
}

/// A filter expression that does not parse, or that fails on a message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExprError {
    /// The expression is not valid, or breaks a limit: where (column, from 1) and why.
    #[error("filter expression, column {column}: {reason}\n  {excerpt}\n  {caret}")]
    Parse {
        /// The column (characters from 1).
        column: usize,
        /// What is wrong.
        reason: String,
        /// The expression around the place (cut when long).
        excerpt: String,
        /// A `^` under the place in the excerpt.
        caret: String,
    },
    /// The expression cannot be evaluated on a message.
    #[error("topic {topic}, message at {log_time} ns: in `{at}`: {reason}")]
    Eval {
        /// The message's topic.
        topic: String,
        /// The message's log time.
        log_time: u64,
        /// The part of the expression that failed.
        at: String,
        /// What failed (for an unknown field: the type, the field and the type's fields).
        reason: String,
        /// The field that does not exist, for [`FaultKind::UnknownField`].
        field: Option<String>,
        /// What kind of failure.
        kind: FaultKind,
    },
}

impl From<ExprError> for Error {
    fn from(e: ExprError) -> Self {
        Error::Expr(Box::new(e))
    }
}

/// How a regular expression is anchored: `re.match` at the start, `re.fullmatch` at both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Anchor {
    None,
    Start,
    Both,
    /// Not a pattern: the bytes themselves, found anywhere (substrings of non-UTF-8 strings).
    Literal,
}

/// Compiles a Python-style pattern with the `regex` crate, within the size limits.
pub(crate) fn build_regex(pattern: &[u8], anchor: Anchor, limits: &Limits) -> std::result::Result<Regex, String> {
    if anchor == Anchor::Literal {
        let mut p = String::from("(?-u)");
        for b in pattern {
            p.push_str(&format!(r"\x{b:02X}"));
        }
        return build_regex(p.as_bytes(), Anchor::None, &Limits { max_literal: p.len(), ..limits.clone() });
    }
    let p = std::str::from_utf8(pattern).map_err(|_| "the pattern is not UTF-8".to_string())?;
    if p.len() > limits.max_literal {
        return Err(format!("a pattern longer than {} bytes", limits.max_literal));
    }
    let full = match anchor {
        Anchor::None | Anchor::Literal => p.to_string(),
        Anchor::Start => format!(r"\A(?:{p})"),
        Anchor::Both => format!(r"\A(?:{p})\z"),
    };
    regex::bytes::RegexBuilder::new(&full)
        .size_limit(limits.regex_size)
        .dfa_size_limit(limits.regex_size)
        .nest_limit(limits.max_depth)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(n) => {
                format!("the regular expression compiles to more than {n} bytes (the limit)")
            }
            other => {
                let text = other.to_string();
                let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(&text).trim().to_string();
                format!("bad regular expression {p:?}: {last}")
            }
        })
}

/// A parsed filter expression.
#[derive(Debug)]
pub struct Expression {
    src: String,
    root: Node,
    limits: Limits,
    regexes: HashMap<Anchor, HashMap<Vec<u8>, Regex>>,
    uses_m: bool,
    m_spans: Vec<(u32, u32)>,
}

impl Expression {
    /// Parses `src` within the default [`Limits`].
    pub fn parse(src: &str) -> std::result::Result<Expression, ExprError> {
        Self::with_limits(src, Limits::default())
    }

    /// Parses `src` within `limits`.
    pub fn with_limits(src: &str, limits: Limits) -> std::result::Result<Expression, ExprError> {
        let parse_error = |e: ParseError| parse_error(src, e);
        if src.len() > limits.max_len {
            return Err(parse_error(ParseError::new(
                limits.max_len,
                format!("the expression is longer than {} bytes ({})", limits.max_len, src.len()),
            )));
        }
        if src.trim().is_empty() {
            return Err(parse_error(ParseError::new(0, "the expression is empty")));
        }
        let tokens = lexer::tokens(src, &limits).map_err(parse_error)?;
        let root = parser::parse(src, tokens, &limits).map_err(parse_error)?;
        let mut regexes: HashMap<Anchor, HashMap<Vec<u8>, Regex>> = HashMap::new();
        for (pattern, name, at) in root.literal_patterns() {
            let anchor = match name.as_str() {
                "match" => Anchor::Start,
                "fullmatch" => Anchor::Both,
                _ => Anchor::None,
            };
            let r = build_regex(&pattern, anchor, &limits).map_err(|m| parse_error(ParseError::new(at as usize, m)))?;
            regexes.entry(anchor).or_default().insert(pattern, r);
        }
        let uses_m = root.uses_m();
        let m_spans = root.m_spans();
        Ok(Expression { src: src.to_string(), root, limits, regexes, uses_m, m_spans })
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.src
    }

    /// Whether the expression reads the message (`m`); if not, messages are never decoded.
    pub fn uses_message(&self) -> bool {
        self.uses_m
    }

    /// Evaluates the expression on a message of `topic` logged at `log_time` (ns), decoded as
    /// `m` (`None` when there is none to read), and says whether it is true.
    pub fn matches(
        &self,
        topic: &str,
        log_time: u64,
        m: Option<MessageRef<'_>>,
    ) -> std::result::Result<bool, ExprError> {
        let lazy = match m {
            Some(m) => LazyM::Ready(m),
            None => LazyM::Absent,
        };
        let mut cache = RegexCache::default();
        self.run(topic, log_time, lazy, &mut cache).map_err(|f| match f {
            Failure::Expr(e, _) => e,
            Failure::Decode(d) => ExprError::Eval {
                topic: topic.into(),
                log_time,
                at: "m".into(),
                reason: d.to_string(),
                field: None,
                kind: FaultKind::Value,
            },
        })
    }

    fn run<'d>(
        &self,
        topic: &'d str,
        log_time: u64,
        m: LazyM<'d>,
        cache: &mut RegexCache,
    ) -> std::result::Result<bool, Failure> {
        let mut ev = Eval { expr: self, cache, topic, log_time, m, fuel: self.limits.fuel };
        match ev.eval(&self.root) {
            Ok(v) => Ok(eval::truthy(&v)),
            Err(f) => {
                let reads_m = self.m_spans.iter().any(|&(s, e)| s >= f.start && e <= f.end);
                let at = self.src.get(f.start as usize..f.end as usize).unwrap_or("").to_string();
                let at = if at.chars().count() > 80 {
                    format!("{}…", at.chars().take(80).collect::<String>())
                } else {
                    at
                };
                let (kind, reason, field) = match f.fault {
                    Fault::Decode(d) => return Err(Failure::Decode(d)),
                    Fault::Field { ty, field, fields } => (
                        FaultKind::UnknownField,
                        format!("{ty} has no field {field} (its fields: {fields})"),
                        Some(field),
                    ),
                    Fault::Type(r) => (FaultKind::Type, r, None),
                    Fault::Index(r) => (FaultKind::Index, r, None),
                    Fault::Value(r) => (FaultKind::Value, r, None),
                    Fault::Limit(r) => (FaultKind::Limit, r, None),
                    Fault::Nested(_) => (FaultKind::Value, "internal: a nested fault".into(), None),
                };
                let e = ExprError::Eval { topic: topic.to_string(), log_time, at, reason, field, kind };
                Err(Failure::Expr(e, reads_m))
            }
        }
    }
}

enum Failure {
    /// The expression failed; whether the part that failed reads the message.
    Expr(ExprError, bool),
    Decode(crate::decode::DecodeError),
}

/// A parse error with the expression around the place, cut to a line that fits a terminal.
fn parse_error(src: &str, e: ParseError) -> ExprError {
    let pos = e.pos.min(src.len());
    let pos = (0..=pos).rev().find(|&p| src.is_char_boundary(p)).unwrap_or(0);
    let column = src[..pos].chars().count() + 1;
    let before: Vec<char> = src[..pos].chars().collect();
    let after: Vec<char> = src[pos..].chars().collect();
    let from = before.len().saturating_sub(40);
    let head: String = before[from..].iter().collect();
    let tail: String = after.iter().take(40).collect();
    let lead = if from > 0 { "…" } else { "" };
    let trail = if after.len() > 40 { "…" } else { "" };
    let excerpt = format!("{lead}{head}{tail}{trail}").replace(['\n', '\t'], " ");
    let caret = format!("{}^", " ".repeat(lead.chars().count() + head.chars().count()));
    ExprError::Parse { column, reason: e.msg, excerpt, caret }
}

/// What to do with a message the expression fails on (a field its type lacks, a type error,
/// an index past the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unmatched {
    /// Leave it out (the default).
    #[default]
    Drop,
    /// Write it.
    Keep,
    /// Stop with the error (what `rosbag filter` does: its Python exception ends the run).
    Fail,
}

/// A topic the expression failed on, reported once with the first failure.
#[derive(Debug, Clone)]
pub struct UnmatchedTopic {
    /// The topic.
    pub topic: String,
    /// The log time of the first message it failed on.
    pub log_time: u64,
    /// The part of the expression that failed there.
    pub at: String,
    /// Why (for an unknown field: the type, the field and the type's fields).
    pub reason: String,
    /// What kind of failure the first was.
    pub kind: FaultKind,
    /// Messages of the topic the expression failed on.
    pub messages: u64,
}

/// What a filter did.
#[derive(Debug, Clone, Default)]
pub struct FilterReport {
    /// Messages the expression was true for (and unmatched ones kept with [`Unmatched::Keep`]).
    pub kept: u64,
    /// Messages left out.
    pub dropped: u64,
    /// Topics the expression failed on, in the order met.
    pub unmatched: Vec<UnmatchedTopic>,
}

/// A [`Select`] for [`convert_selecting`](crate::convert_selecting) that keeps the messages an
/// expression is true for. Messages are decoded only when the expression reaches `m`.
pub struct ExprFilter {
    expr: Expression,
    policy: Unmatched,
    types: TypeSources,
    decoders: Vec<Decoders>,
    cache: RegexCache,
    report: FilterReport,
    unmatched_index: HashMap<String, usize>,
}

impl ExprFilter {
    /// A filter by `expr`; types the bags lack come from `types`.
    pub fn new(expr: Expression, policy: Unmatched, types: TypeSources) -> Self {
        ExprFilter {
            expr,
            policy,
            types,
            decoders: Vec::new(),
            cache: RegexCache::default(),
            report: FilterReport::default(),
            unmatched_index: HashMap::new(),
        }
    }

    /// What the filter has done so far.
    pub fn report(&self) -> &FilterReport {
        &self.report
    }

    /// The expression.
    pub fn expression(&self) -> &Expression {
        &self.expr
    }
}

impl Select for ExprFilter {
    fn select(&mut self, input: usize, bag: &Bag, connection: &Connection, msg: &Message) -> Result<bool> {
        while self.decoders.len() <= input {
            self.decoders.push(Decoders::new(self.types.clone()));
        }
        let m = if self.expr.uses_m {
            LazyM::Pending { decoders: &mut self.decoders[input], connection, log_time: msg.log_time, data: &msg.data }
        } else {
            LazyM::Absent
        };
        let keep = match self.expr.run(&connection.topic, msg.log_time, m, &mut self.cache) {
            Ok(keep) => keep,
            Err(Failure::Decode(d)) => return Err(Error::decode_in(bag.path(), d)),
            Err(Failure::Expr(e, reads_m)) => {
                // A failure that does not come from the message (`t > 5`, `1 / 0`) would fail
                // on every message: an error of the expression, not a topic it does not fit.
                if self.policy == Unmatched::Fail || !reads_m {
                    return Err(e.into());
                }
                let ExprError::Eval { log_time, at, reason, kind, .. } = e else {
                    return Err(e.into());
                };
                if kind == FaultKind::Limit {
                    // Too costly is an error of the expression, not of the topic.
                    let topic = connection.topic.clone();
                    return Err(ExprError::Eval { topic, log_time, at, reason, field: None, kind }.into());
                }
                match self.unmatched_index.get(&connection.topic) {
                    Some(&i) => self.report.unmatched[i].messages += 1,
                    None => {
                        self.unmatched_index.insert(connection.topic.clone(), self.report.unmatched.len());
                        self.report.unmatched.push(UnmatchedTopic {
                            topic: connection.topic.clone(),
                            log_time,
                            at,
                            reason,
                            kind,
                            messages: 1,
                        });
                    }
                }
                self.policy == Unmatched::Keep
            }
        };
        if keep {
            self.report.kept += 1;
        } else {
            self.report.dropped += 1;
        }
        Ok(keep)
    }
}

#[cfg(test)]
mod tests;
