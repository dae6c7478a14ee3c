//! Topic frequencies from message times, shared by every backend.

use std::collections::BTreeMap;

/// The median gap between consecutive times, as rosbag computes topic frequency.
pub(crate) fn median_period(times: &mut [u64]) -> Option<u64> {
    times.sort_unstable();
    median_gap(times.windows(2).map(|w| w[1] - w[0]).collect())
}

/// The median of `gaps` (the mean of the middle two for an even count), when it is above 0.
fn median_gap(mut gaps: Vec<u64>) -> Option<u64> {
    if gaps.is_empty() {
        return None;
    }
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

/// A topic held by more chunks than `RUNS × RUN` gets its period from `RUNS` runs of `RUN`
/// consecutive chunks spread over the bag, not from all of them: `info` then reads a bounded
/// number of chunk indexes however large the bag is (a 10 GB bag has ~13 000 chunks, each a
/// page fault or a request away). Gaps are taken only within a run, so the figure is a median
/// of true gaps; on a bag whose rate changes, it is the rate of the sampled stretches.
pub(crate) const RUN: usize = 8;
/// See [`RUN`].
pub(crate) const RUNS: usize = 4;

/// Which positions of a topic's `n` chunks are read: all, or [`RUNS`] runs spread evenly.
fn runs(n: usize) -> Vec<std::ops::Range<usize>> {
    if n <= RUN * RUNS {
        let all = 0..n;
        return vec![all];
    }
    (0..RUNS).map(|k| k * (n - RUN) / (RUNS - 1)).map(|s| s..s + RUN).collect()
}

/// Median periods per topic from a bounded sample of chunk indexes (see [`RUN`]).
/// `chunks` are the chunks' ids in time order; `keys(id, visit)` calls `visit` with each key
/// (channel, connection) chunk `id` has messages of (a visitor, so no per-chunk list is built
/// for a bag of ~13 000 chunks); `topic` names a key's topic (a topic's keys are pooled);
/// `read(id, out)` reads one chunk's index, calling `out(key, log_time)` per message.
pub(crate) fn sampled<'t, K: Ord + Copy, E>(
    chunks: &[usize],
    mut keys: impl FnMut(usize, &mut dyn FnMut(K)),
    topic: impl Fn(K) -> &'t str,
    mut read: impl FnMut(usize, &mut dyn FnMut(K, u64)) -> Result<(), E>,
) -> Result<BTreeMap<String, u64>, E> {
    // Each topic's chunks (positions in `chunks`), and the runs of them to read.
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    let mut slot_of: BTreeMap<K, usize> = BTreeMap::new();
    let mut held: Vec<Vec<usize>> = Vec::new();
    // The first keys' slots, searched in a line before the map: a bag has a few keys, each
    // met in thousands of chunks.
    let mut near: Vec<(K, usize)> = Vec::new();
    for (pos, &id) in chunks.iter().enumerate() {
        keys(id, &mut |k| {
            let slot = match near.iter().find(|e| e.0 == k) {
                Some(&(_, s)) => s,
                None => {
                    let n = names.len();
                    let s = *slot_of.entry(k).or_insert_with(|| *names.entry(topic(k)).or_insert(n));
                    if near.len() < 16 {
                        near.push((k, s));
                    }
                    s
                }
            };
            if slot == held.len() {
                held.push(Vec::new());
            }
            if held[slot].last() != Some(&pos) {
                held[slot].push(pos);
            }
        });
    }
    let picked: Vec<Vec<Vec<usize>>> =
        held.iter().map(|h| runs(h.len()).into_iter().map(|r| h[r].to_vec()).collect()).collect();
    let mut wanted: Vec<usize> = picked.iter().flatten().flatten().copied().collect();
    wanted.sort_unstable();
    wanted.dedup();
    // Times by (topic slot, chunk position), for the chunks read.
    let mut times: BTreeMap<(usize, usize), Vec<u64>> = BTreeMap::new();
    for &pos in &wanted {
        read(chunks[pos], &mut |k, t| {
            if let Some(&slot) = slot_of.get(&k) {
                times.entry((slot, pos)).or_default().push(t);
            }
        })?;
    }
    let mut out = BTreeMap::new();
    for (name, slot) in names {
        let mut gaps = Vec::new();
        for run in &picked[slot] {
            let mut t: Vec<u64> = run.iter().filter_map(|&pos| times.get(&(slot, pos))).flatten().copied().collect();
            t.sort_unstable();
            gaps.extend(t.windows(2).map(|w| w[1] - w[0]));
        }
        if let Some(p) = median_gap(gaps) {
            out.insert(name.to_string(), p);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::median_period;

    #[test]
    fn sampled_is_exact_up_to_the_run_budget_and_bounded_past_it() {
        // One topic at 10 ns in 300 chunks of 3 messages; a second at 7 ns in every 50th.
        let n = 300usize;
        let chunks: Vec<usize> = (0..n).collect();
        let mut reads = 0;
        let got = super::sampled(
            &chunks,
            |i, visit: &mut dyn FnMut(u8)| {
                visit(0);
                if i % 50 == 0 {
                    visit(1);
                }
            },
            |k| if k == 0 { "/a" } else { "/b" },
            |id, out| {
                reads += 1;
                for m in 0..3u64 {
                    out(0, (id as u64 * 3 + m) * 10);
                    if id % 50 == 0 {
                        out(1, id as u64 * 1000 + m * 7);
                    }
                }
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        assert_eq!(got["/a"], 10);
        assert_eq!(got["/b"], 7);
        assert!(reads <= super::RUN * super::RUNS + 6, "{reads} chunks read");
        // Few chunks: every one is read, and the result is the exact median.
        let few: Vec<usize> = (0..10).collect();
        let exact = super::sampled(
            &few,
            |_, visit: &mut dyn FnMut(u8)| visit(0),
            |_| "/a",
            |id, out| {
                out(0, id as u64 * 100);
                out(0, id as u64 * 100 + 40);
                Ok::<(), ()>(())
            },
        );
        // 10 gaps of 40 and 9 of 60: the median is 40.
        assert_eq!(exact.unwrap()["/a"], 40);
    }

    #[test]
    fn median_of_gaps() {
        assert_eq!(median_period(&mut [0, 10, 20, 40]), Some(10));
        assert_eq!(median_period(&mut [5]), None);
        assert_eq!(median_period(&mut [0, 10, 30]), Some(15));
    }
}
