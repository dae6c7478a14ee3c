//! Reading in time order across chunks that may overlap or be out of order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bytes::Bytes;

use super::chunk::Entry;
use super::reader::Ros1Reader;
use crate::{Filter, Message, Result};

/// A chunk being drained by the merge.
struct Cursor {
    data: Bytes,
    entries: Vec<Entry>,
    next: usize,
    chunk_pos: u64,
    chunk: usize,
}

/// K-way merge over the chunks that overlap in time. Chunks are opened in start-time order, only
/// when the merge reaches their start, so memory holds the overlapping chunks, not the bag.
pub(super) struct Merge<'a> {
    reader: &'a Ros1Reader,
    order: Vec<usize>,
    next: usize,
    /// (time, chunk position, offset, slot): ties fall back to file position, as in rosbag.
    heap: BinaryHeap<Reverse<(u64, u64, u32, usize)>>,
    slots: Vec<Option<Cursor>>,
    want: Vec<u32>,
    filter: Filter,
    done: bool,
    /// A drained chunk whose pages are released on the next call, once the caller is done
    /// with the last message it returned.
    drained: Option<usize>,
}

impl<'a> Merge<'a> {
    /// Merges the chunks in `order` (indices sorted by start time), keeping messages of the
    /// connections in `want` (sorted) that `filter` accepts.
    pub fn new(reader: &'a Ros1Reader, order: Vec<usize>, want: Vec<u32>, filter: Filter) -> Self {
        Merge { reader, order, next: 0, heap: BinaryHeap::new(), slots: Vec::new(), want, filter, done: false, drained: None }
    }

    fn open_next(&mut self) -> Result<()> {
        let i = self.order[self.next];
        self.next += 1;
        let (want, filter) = (&self.want, &self.filter);
        let reader = self.reader;
        let keep = |conn: u32, t: u64| reader.keep(want, filter, conn, t);
        let loaded = self.reader.load(i, &keep)?;
        if let Some(first) = loaded.entries.first() {
            let pos = self.reader.chunks[i].pos;
            let slot = match self.slots.iter().position(Option::is_none) {
                Some(s) => s,
                None => {
                    self.slots.push(None);
                    self.slots.len() - 1
                }
            };
            self.heap.push(Reverse((first.time, pos, first.offset, slot)));
            self.slots[slot] = Some(Cursor { data: loaded.data, entries: loaded.entries, next: 1, chunk_pos: pos, chunk: i });
        } else {
            self.reader.release(i);
        }
        Ok(())
    }
}

impl Drop for Merge<'_> {
    fn drop(&mut self) {
        if let Some(i) = self.drained.take() {
            self.reader.release(i);
        }
    }
}

impl Iterator for Merge<'_> {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        if let Some(i) = self.drained.take() {
            self.reader.release(i);
        }
        if self.done {
            return None;
        }
        while self.next < self.order.len() {
            let start = self.reader.chunks[self.order[self.next]].start;
            if self.heap.peek().is_some_and(|Reverse(top)| start > top.0) {
                break;
            }
            if let Err(e) = self.open_next() {
                self.done = true;
                return Some(Err(e));
            }
        }
        let Reverse((_, _, _, slot)) = self.heap.pop()?;
        let cursor = self.slots[slot].as_mut()?;
        let entry = cursor.entries[cursor.next - 1];
        let msg = self.reader.message(&cursor.data, entry, cursor.chunk_pos);
        if let Some(e) = cursor.entries.get(cursor.next) {
            self.heap.push(Reverse((e.time, cursor.chunk_pos, e.offset, slot)));
            cursor.next += 1;
        } else {
            self.drained = Some(cursor.chunk);
            self.slots[slot] = None;
        }
        if msg.is_err() {
            self.done = true;
        }
        Some(msg)
    }
}

