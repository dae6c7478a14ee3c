//! How many messages each topic has over time, in equal bins: the timeline of a quick look.

use std::collections::BTreeMap;

use rbag_bag::{Bag, Filter};

use crate::Result;

/// Per-topic message counts in `bins` equal slices of `start..=end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Density {
    /// First log time (ns).
    pub start: u64,
    /// Last log time (ns).
    pub end: u64,
    /// Per topic, `bins` counts.
    pub topics: BTreeMap<String, Vec<u64>>,
}

/// Counts every message of `bags` (reading them once, without decoding) into `bins` bins over
/// their common time span.
pub fn density(bags: &[Bag], bins: usize) -> Result<Density> {
    let bins = bins.max(1);
    let infos: Vec<_> = bags.iter().map(|b| b.info()).collect::<Result<_, _>>()?;
    let start = infos.iter().filter_map(|i| i.start_ns).min().unwrap_or(0);
    let end = infos.iter().filter_map(|i| i.end_ns).max().unwrap_or(start).max(start);
    let span = (end - start).max(1) as u128;
    let mut topics: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for bag in bags {
        let mut by_connection: BTreeMap<u32, String> = BTreeMap::new();
        for c in bag.connections() {
            by_connection.insert(c.id, c.topic.clone());
            topics.entry(c.topic.clone()).or_insert_with(|| vec![0; bins]);
        }
        for m in bag.messages(&Filter::default())? {
            let m = m.map_err(rbag_bag::Error::from)?;
            let Some(topic) = by_connection.get(&m.connection) else { continue };
            let t = m.log_time.clamp(start, end) - start;
            let bin = ((t as u128 * bins as u128) / span).min(bins as u128 - 1) as usize;
            if let Some(counts) = topics.get_mut(topic) {
                counts[bin] += 1;
            }
        }
    }
    Ok(Density { start, end, topics })
}
