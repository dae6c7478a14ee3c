//! Partition plans: reading topics over many bags, cut into tasks of about `target_bytes`.
//!
//! A partition is one bag (a path or URL), one topic and a half-open slice of log time. A
//! distributed engine (Dask, Ray, Spark) runs one task per partition, and the task opens the
//! bag itself, so that nothing but the plan is shipped. Only each bag's summary is read to
//! plan: the topic's bytes are its share of the bag's messages (or its payload bytes, where
//! the storage knows them), spread evenly over the bag's time span.

use std::collections::BTreeMap;

use rbag_bag::{Bag, Result};

/// What to plan.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// Topics to read; all of each bag's topics when empty.
    pub topics: Vec<String>,
    /// First log time to read (ns), inclusive.
    pub start: Option<u64>,
    /// Log time to stop at (ns), exclusive.
    pub end: Option<u64>,
    /// About how many bytes of messages one partition holds.
    pub target_bytes: u64,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { topics: Vec::new(), start: None, end: None, target_bytes: 64 << 20 }
    }
}

/// One task's share: the messages of `topic` in `bag` with `start <= log_time < end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// The bag's path or URL, as given.
    pub bag: String,
    /// The topic.
    pub topic: String,
    /// First log time (ns), inclusive.
    pub start: u64,
    /// Log time the slice stops at (ns), exclusive.
    pub end: u64,
    /// Estimated messages.
    pub messages: u64,
    /// Estimated bytes of message data.
    pub bytes: u64,
    /// Its place in the plan.
    pub index: usize,
}

/// Partitions for `bags`, in their order, then by topic, then by time. Within one topic of
/// one bag the slices neither overlap nor leave gaps. A bag with no message in the window, or
/// without the topics, gives none; a bag that cannot be opened is an error naming it.
pub fn plan(bags: &[String], options: &PlanOptions) -> Result<Vec<Partition>> {
    let mut parts = Vec::new();
    for bag in bags {
        plan_bag(bag, options, &mut parts)?;
    }
    for (i, p) in parts.iter_mut().enumerate() {
        p.index = i;
    }
    Ok(parts)
}

fn plan_bag(path: &str, options: &PlanOptions, parts: &mut Vec<Partition>) -> Result<()> {
    let bag = Bag::open(path)?;
    let info = bag.storage_info()?;
    let (Some(first), Some(last)) = (info.start_ns, info.end_ns) else { return Ok(()) };
    // The bag's span and the window, both half-open.
    let span = (first, last.saturating_add(1));
    let lo = options.start.map_or(span.0, |s| s.max(span.0));
    let hi = options.end.map_or(span.1, |e| e.min(span.1));
    if lo >= hi {
        return Ok(());
    }
    let share = (hi - lo) as f64 / (span.1 - span.0) as f64;
    let total = info.message_count.max(1);
    // Messages and known (or estimated, ROS 1 and MCAP) payload bytes per topic.
    let mut topics: BTreeMap<&str, (u64, Option<u64>)> = BTreeMap::new();
    for c in bag.connections() {
        if !options.topics.is_empty() && !options.topics.contains(&c.topic) {
            continue;
        }
        let stats = info.connections.get(&c.id).cloned().unwrap_or_default();
        let e = topics.entry(c.topic.as_str()).or_insert((0, Some(0)));
        e.0 += stats.message_count;
        e.1 = e.1.zip(stats.data_bytes.or(stats.estimated_bytes)).map(|(a, b)| a + b);
    }
    for (topic, (count, data_bytes)) in topics {
        if count == 0 {
            continue;
        }
        let bytes = data_bytes.unwrap_or_else(|| (info.size_bytes as u128 * count as u128 / total as u128) as u64);
        let (bytes, messages) = ((bytes as f64 * share) as u64, (count as f64 * share).ceil() as u64);
        // No more slices than messages, nor than nanoseconds: none is empty by construction.
        let k = bytes.div_ceil(options.target_bytes.max(1)).clamp(1, messages.max(1).min(hi - lo));
        for j in 0..k {
            let at = |j: u64| lo + ((hi - lo) as u128 * j as u128 / k as u128) as u64;
            parts.push(Partition {
                bag: path.to_string(),
                topic: topic.to_string(),
                start: at(j),
                end: at(j + 1),
                messages: messages / k,
                bytes: bytes / k,
                index: 0,
            });
        }
    }
    Ok(())
}
