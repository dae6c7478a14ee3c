//! Numeric fields of a bag's messages as time series: what a chart draws.
//!
//! A field is named as `rbag echo` names it (`/imu.linear_acceleration.z`,
//! `/imu/linear_acceleration/z`, `/tf.transforms[0].transform.translation.x`). A path that
//! selects several numbers (a slice `[0:3]`, `[*]`, or a whole numeric array) gives one series
//! per element, labelled with its index.

use std::collections::BTreeMap;

use rbag_bag::decode::render::{select_ref, Selection};
use rbag_bag::decode::{TypeSources, ValueRef};
use rbag_bag::read::{resolve_topic, DecodedReader, ReadSpec, Resolved};
use rbag_bag::Bag;

use crate::{Error, Result};

/// One numeric series: a value per message, at the message's log time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// What the user asked for (`/imu.linear_acceleration.z`), with `[i]` appended for the
    /// i-th value of a path that selects several.
    pub label: String,
    /// The topic the values come from.
    pub topic: String,
    /// Log times, ns since the epoch, in the bag's order (non-decreasing).
    pub times: Vec<u64>,
    /// The values, one per time.
    pub values: Vec<f64>,
}

/// What to read: field arguments, a window of log time, and the types to decode with.
#[derive(Debug, Clone, Default)]
pub struct SeriesSpec {
    /// Field arguments, as `rbag echo` takes them.
    pub fields: Vec<String>,
    /// Only messages at or after this log time (ns).
    pub start: Option<u64>,
    /// Only messages before this log time (ns).
    pub end: Option<u64>,
    /// Types for bags that carry no definitions.
    pub types: TypeSources,
}

/// What [`read`] found: the series in the order asked (a field selecting several values
/// expands in place), and per field how many messages had no value there (an index past the
/// end of that message's array).
#[derive(Debug, Clone, Default)]
pub struct Read {
    pub series: Vec<Series>,
    /// Per field argument, the messages skipped because an index was past an array's end.
    pub missing: Vec<(String, u64)>,
    /// Which field argument each series came from (an index into [`SeriesSpec::fields`]).
    pub origin: Vec<usize>,
}

/// A field argument resolved against the bag: its topic and path within the message.
struct Field {
    arg: String,
    topic: String,
    path: Option<String>,
    /// One series per selected value (more are added when a message selects more).
    series: Vec<Series>,
    missing: u64,
}

/// Reads the fields of `spec` from `bag`, in one pass over the bag.
///
/// Every field is checked before reading (the topic exists, the path fits its type), so a typo
/// fails at once, naming the field. A value that is not a number is an error naming the field
/// and what it found; `bool` reads as 0 or 1.
pub fn read(bag: &Bag, spec: &SeriesSpec) -> Result<Read> {
    let known: Vec<&str> = bag.connections().iter().map(|c| c.topic.as_str()).collect();
    let mut fields = Vec::with_capacity(spec.fields.len());
    for arg in &spec.fields {
        // Building a reader for the field alone checks it: topic, ambiguity, path against type.
        DecodedReader::new(
            bag,
            ReadSpec { topics: vec![arg.clone()], types: spec.types.clone(), ..Default::default() },
        )?;
        let Resolved::Topic(topic, path) = resolve_topic(arg, &known) else {
            return Err(Error::Path { field: arg.clone(), reason: "names no single topic of the bag".into() });
        };
        fields.push(Field { arg: arg.clone(), topic, path, series: Vec::new(), missing: 0 });
    }
    let mut by_topic: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, f) in fields.iter().enumerate() {
        by_topic.entry(f.topic.clone()).or_default().push(i);
    }
    let read_spec = ReadSpec {
        topics: by_topic.keys().cloned().collect(),
        start: spec.start,
        end: spec.end,
        types: spec.types.clone(),
        settle: false,
    };
    let mut reader = DecodedReader::new(bag, read_spec)?;
    let mut values: Vec<f64> = Vec::new();
    while let Some(m) = reader.next_message()? {
        let Some(indices) = by_topic.get(&m.connection.topic) else { continue };
        for &fi in indices {
            let f = &mut fields[fi];
            let selection = match &f.path {
                Some(p) => {
                    select_ref(m.message, p).map_err(|e| Error::Path { field: f.arg.clone(), reason: e.to_string() })?
                }
                None => Selection::One(ValueRef::Message(m.message)),
            };
            values.clear();
            match selection {
                Selection::OutOfRange(_) => {
                    f.missing += 1;
                    continue;
                }
                Selection::One(v) => push_numbers(&f.arg, &v, &mut values)?,
                Selection::Many(vs) => {
                    for v in &vs {
                        let n = number(&f.arg, v)?;
                        values.push(n);
                    }
                }
            }
            while f.series.len() < values.len() {
                f.series.push(Series { topic: f.topic.clone(), ..Default::default() });
            }
            for (s, &v) in f.series.iter_mut().zip(&values) {
                s.times.push(m.log_time);
                s.values.push(v);
            }
        }
    }
    let missing = fields.iter().filter(|f| f.missing > 0).map(|f| (f.arg.clone(), f.missing)).collect();
    // Labels, and the asked order: field by field, elements in index order.
    let (mut series, mut origin) = (Vec::new(), Vec::new());
    for (fi, f) in fields.into_iter().enumerate() {
        let several = f.series.len() > 1 || f.path.as_deref().is_some_and(|p| p.contains(['*', ':']));
        for (k, mut s) in f.series.into_iter().enumerate() {
            s.label = if several { format!("{}[{k}]", f.arg) } else { f.arg.clone() };
            series.push(s);
            origin.push(fi);
        }
    }
    Ok(Read { series, missing, origin })
}

/// The numbers in one selected value: itself, or the elements of a numeric array.
fn push_numbers(field: &str, v: &ValueRef, out: &mut Vec<f64>) -> Result<()> {
    if let Some(p) = v.as_prims() {
        if let Some(first) = p.get(0) {
            number(field, &first)?;
        }
        out.extend(p.to_f64s());
        return Ok(());
    }
    out.push(number(field, v)?);
    Ok(())
}

/// A scalar as a number (`bool` as 0 or 1), or an error saying what the field holds instead.
fn number(field: &str, v: &ValueRef) -> Result<f64> {
    if let Some(n) = v.as_f64() {
        return Ok(n);
    }
    if let ValueRef::Bool(b) = v {
        return Ok(f64::from(u8::from(*b)));
    }
    let found = match v {
        ValueRef::String(_) => "a string".to_string(),
        ValueRef::Message(m) => {
            let names: Vec<String> = m.fields().take(6).map(|(n, _)| format!("{field}.{n}")).collect();
            let more = if m.len() > 6 { ", ..." } else { "" };
            format!("a {} message; plot its fields: {}{more}", m.type_name(), names.join(", "))
        }
        ValueRef::Array(_) => "an array of messages or strings".to_string(),
        _ => "not a number".to_string(),
    };
    Err(Error::NotNumeric { field: field.to_string(), found })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_from_scalars_and_bools() {
        assert_eq!(number("/a.x", &ValueRef::F32(1.5)).unwrap(), 1.5);
        assert_eq!(number("/a.x", &ValueRef::U64(7)).unwrap(), 7.0);
        assert_eq!(number("/a.b", &ValueRef::Bool(true)).unwrap(), 1.0);
        let e = number("/a.s", &ValueRef::String(b"hi")).unwrap_err().to_string();
        assert!(e.contains("/a.s") && e.contains("string"), "{e}");
    }
}
