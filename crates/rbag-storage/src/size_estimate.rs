//! Payload bytes per connection from chunk totals alone: what `rbag info` shows for ROS 1 and
//! MCAP bags, whose summaries count each connection's messages per chunk and give each chunk's
//! size, but not any message's size.
//!
//! Each chunk is a block (of [`Blocks`]): its payload bytes (its uncompressed size less the
//! fixed bytes of its records) and how many messages of each connection it holds. The chunk
//! where a connection first appears is read from its index data instead, as one block per connection: a sample
//! of every connection's sizes, at the cost of one chunk's index per connection at most.
//!
//! Mean message sizes per connection start from those samples and are fitted to the blocks by
//! Richardson–Lucy iterations: multiplicative, so sizes stay non-negative and keep the samples'
//! proportions where the chunks cannot tell connections apart, and each step keeps the sum
//! equal to the blocks' sum. `rbag du` reads every chunk's index data (every block sampled, the
//! same estimate with nothing left to fit), or every payload with `--exact`.

use std::collections::BTreeMap;

/// Every chunk's payload bytes and message counts by connection id, in flat arrays: one
/// allocation for all blocks instead of a `Vec` per chunk (a 10 GB bag has ~13 000 chunks).
#[derive(Debug, Clone, Default)]
pub(crate) struct Blocks {
    payload: Vec<u64>,
    /// Where each block's counts end in `counts`.
    ends: Vec<usize>,
    counts: Vec<(u32, u64)>,
}

impl Blocks {
    pub fn with_capacity(blocks: usize, counts: usize) -> Self {
        Blocks {
            payload: Vec::with_capacity(blocks),
            ends: Vec::with_capacity(blocks),
            counts: Vec::with_capacity(counts),
        }
    }

    /// Adds one block: `payload` bytes holding `counts` messages by connection.
    pub fn push(&mut self, payload: u64, counts: impl IntoIterator<Item = (u32, u64)>) {
        self.counts.extend(counts);
        self.payload.push(payload);
        self.ends.push(self.counts.len());
    }

    fn iter(&self) -> impl Iterator<Item = (u64, &[(u32, u64)])> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        self.payload.iter().zip(starts.zip(self.ends.iter())).map(|(&p, (s, &e))| (p, &self.counts[s..e]))
    }
}

/// Sets every connection's [`crate::ConnectionStats::estimated_bytes`] from `blocks` (0 for
/// connections without messages).
pub(crate) fn fill(info: &mut crate::StorageInfo, blocks: Blocks) {
    let sizes = estimate(blocks);
    for (id, s) in info.connections.iter_mut() {
        s.estimated_bytes = Some(sizes.get(id).copied().unwrap_or(0));
    }
}

/// Iterations stop once no mean size moves by more than this share.
const TOLERANCE: f64 = 1e-7;

/// Upper bound on iterations times (block, connection) pairs: a bag with a hundred thousand
/// chunks still answers in well under a second.
const WORK: usize = 100_000_000;

/// Estimated payload bytes by connection; every connection counted in `blocks` gets an entry.
pub(crate) fn estimate(mut blocks: Blocks) -> BTreeMap<u32, u64> {
    let mut totals: BTreeMap<u32, u64> = BTreeMap::new();
    for &(c, n) in &blocks.counts {
        *totals.entry(c).or_default() += n;
    }
    let messages: u64 = totals.values().sum();
    let payload: u64 = blocks.payload.iter().sum();
    if messages == 0 {
        return totals;
    }
    let ids: Vec<u32> = totals.keys().copied().collect();
    // Connection ids become positions in `ids`, in place (no second copy of every block).
    // Pairs with no messages stay: they add exact zeros below, and are skipped where a block
    // is told apart by its connections with messages.
    for e in blocks.counts.iter_mut() {
        e.0 = ids.binary_search(&e.0).unwrap_or(0) as u32;
    }
    let with_messages = |counts: &[(u32, u64)]| counts.iter().filter(|x| x.1 > 0).count();
    let each = || blocks.iter().map(|(p, counts)| (p as f64, counts));
    let weight: Vec<f64> = ids.iter().map(|c| totals[c] as f64).collect();
    // Start from each connection's sampled mean (blocks of its own), else the bag's mean.
    let mut sampled = vec![(0f64, 0f64); ids.len()];
    for (payload, counts) in each().filter(|b| with_messages(b.1) == 1) {
        let Some(&(c, n)) = counts.iter().find(|x| x.1 > 0) else { continue };
        sampled[c as usize].0 += payload;
        sampled[c as usize].1 += n as f64;
    }
    let mean = payload as f64 / messages as f64;
    let mut size: Vec<f64> =
        sampled.iter().map(|&(b, n)| if n > 0.0 && b > 0.0 { b / n } else { mean.max(1.0) }).collect();
    let work = blocks.counts.iter().filter(|x| x.1 > 0).count().max(1);
    let mut ratio = vec![0f64; ids.len()];
    for _ in 0..(WORK / work).clamp(1, 500) {
        ratio.iter_mut().for_each(|r| *r = 0.0);
        for (payload, counts) in each() {
            let predicted: f64 = counts.iter().map(|&(c, n)| n as f64 * size[c as usize]).sum();
            if predicted <= 0.0 {
                continue;
            }
            let r = payload / predicted;
            for &(c, n) in counts {
                ratio[c as usize] += n as f64 * r;
            }
        }
        let mut moved = 0f64;
        for c in (0..ids.len()).filter(|&c| weight[c] > 0.0) {
            let next = size[c] * ratio[c] / weight[c];
            moved = moved.max((next - size[c]).abs() / size[c].max(1.0));
            size[c] = next;
        }
        if moved < TOLERANCE {
            break;
        }
    }
    ids.iter().zip(size).map(|(&c, s)| (c, (s * totals[&c] as f64).round().max(0.0) as u64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(payload: u64, counts: &[(u32, u64)]) -> (u64, Vec<(u32, u64)>) {
        (payload, counts.to_vec())
    }

    fn estimate(blocks: &[(u64, Vec<(u32, u64)>)]) -> BTreeMap<u32, u64> {
        let mut all = Blocks::default();
        for (p, c) in blocks {
            all.push(*p, c.iter().copied());
        }
        super::estimate(all)
    }

    /// Chunks whose mixes differ pin every connection's size down.
    #[test]
    fn differing_mixes_give_exact_sizes() {
        // Connection 1: 1000-byte messages; 2: 10-byte ones.
        let blocks = [block(1000 * 3 + 10 * 50, &[(1, 3), (2, 50)]), block(1000 + 10 * 90, &[(1, 1), (2, 90)])];
        let got = estimate(&blocks);
        assert!(got[&1].abs_diff(4000) <= 2, "{got:?}");
        assert!(got[&2].abs_diff(1400) <= 2, "{got:?}");
    }

    /// Chunks that cannot tell connections apart keep the sampled proportions.
    #[test]
    fn samples_set_what_the_chunks_cannot_tell() {
        // Sampled: 1 is 100 bytes a message, 2 is 10. Then a chunk mixing them 1:1, twice as big.
        let blocks = [block(100, &[(1, 1)]), block(10, &[(2, 1)]), block(2 * 110 * 4, &[(1, 4), (2, 4)])];
        let got = estimate(&blocks);
        assert!(got[&1].abs_diff(900) <= 2 && got[&2].abs_diff(90) <= 2, "{got:?}");
    }

    /// Connections in chunks of their own are exact after one step; the sum always holds.
    #[test]
    fn separate_chunks_are_exact_and_the_sum_holds() {
        let blocks = [block(700, &[(4, 7)]), block(30, &[(9, 3)]), block(0, &[])];
        assert_eq!(estimate(&blocks), BTreeMap::from([(4, 700), (9, 30)]));
        let shared = [block(1000, &[(1, 5), (2, 5)])];
        let got = estimate(&shared);
        assert_eq!(got.values().sum::<u64>(), 1000);
    }

    #[test]
    fn nothing_counted_gives_zeros() {
        assert!(estimate(&[]).is_empty());
        assert_eq!(estimate(&[block(0, &[(3, 0)])]), BTreeMap::from([(3, 0)]));
    }
}
