//! Topic frequencies from message times, shared by every backend.

use std::collections::BTreeMap;

/// The median gap between consecutive times, as rosbag computes topic frequency.
pub(crate) fn median_period(times: &mut [u64]) -> Option<u64> {
    if times.len() < 2 {
        return None;
    }
    times.sort_unstable();
    let mut gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let mid = gaps.len() / 2;
    let median = if gaps.len() % 2 == 1 {
        *gaps.select_nth_unstable(mid).1
    } else {
        let hi = *gaps.select_nth_unstable(mid).1;
        let lo = *gaps[..mid].iter().max()?;
        (lo + hi) / 2
    };
    (median > 0).then_some(median)
}

/// Median periods per topic from `(topic, times)` pairs; a topic's connections are pooled.
pub(crate) fn by_topic<'a>(times: impl IntoIterator<Item = (&'a str, Vec<u64>)>) -> BTreeMap<String, u64> {
    let mut pooled: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (topic, t) in times {
        pooled.entry(topic).or_default().extend(t);
    }
    pooled.into_iter().filter_map(|(topic, mut t)| median_period(&mut t).map(|p| (topic.to_string(), p))).collect()
}

#[cfg(test)]
mod tests {
    use super::median_period;

    #[test]
    fn median_of_gaps() {
        assert_eq!(median_period(&mut [0, 10, 20, 40]), Some(10));
        assert_eq!(median_period(&mut [5]), None);
        assert_eq!(median_period(&mut [0, 10, 30]), Some(15));
    }
}
