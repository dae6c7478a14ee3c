//! Merging several message streams into one, in log-time order: the files of a split bag, the
//! inputs of a conversion.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::{Message, MessageIter, Result};

/// Merges message streams by log time; ties go to the earlier stream. Yields each message with
/// the index of the stream it came from. The first error ends the merge.
///
/// A stream is advanced only when the merge is next asked for a message, after the caller is
/// done with the last one: readers release a finished chunk's pages when they move on, and a
/// message still in use would fault them back in.
pub struct TimeMerge<'a> {
    iters: Vec<MessageIter<'a>>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    heads: Vec<Option<Message>>,
    /// Streams to advance on the next call: all of them at first, then the one whose message
    /// was handed out last.
    to_pull: Vec<usize>,
    failed: bool,
}

impl<'a> TimeMerge<'a> {
    /// Merges `iters`, each already in log-time order.
    pub fn new(iters: Vec<MessageIter<'a>>) -> Self {
        let n = iters.len();
        TimeMerge { iters, heap: BinaryHeap::new(), heads: vec![None; n], to_pull: (0..n).collect(), failed: false }
    }

    fn pull(&mut self, k: usize) -> Result<()> {
        if let Some(m) = self.iters[k].next().transpose()? {
            self.heap.push(Reverse((m.log_time, k)));
            self.heads[k] = Some(m);
        }
        Ok(())
    }
}

impl Iterator for TimeMerge<'_> {
    type Item = Result<(usize, Message)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        for k in std::mem::take(&mut self.to_pull) {
            if let Err(e) = self.pull(k) {
                self.failed = true;
                return Some(Err(e));
            }
        }
        let Reverse((_, k)) = self.heap.pop()?;
        let m = self.heads[k].take()?;
        self.to_pull.push(k);
        Some(Ok((k, m)))
    }
}
