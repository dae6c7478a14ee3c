//! Reading in time order across chunks that may overlap or be out of order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::chunk::Entry;
use super::reader::{ChunkData, Ros1Reader};
use crate::{Error, Filter, Message, Result};

/// A chunk being drained by the merge.
struct Cursor {
    entries: Vec<Entry>,
    next: usize,
    chunk_pos: u64,
    chunk: usize,
    /// Read when the merge first wants one of its messages.
    data: Option<ChunkData>,
    /// Its held data was given back to the memory budget: read it again as a stream.
    stream_only: bool,
}

/// K-way merge over the chunks that overlap in time. A chunk's index entries are read when the
/// merge reaches its start time; its data only when one of its messages is next, so memory
/// holds the chunks whose messages interleave, not all that overlap (chunks of one instant are
/// read one after the other). Data is held whole while the memory budget has room, and
/// streamed beyond it; when a message (or a decoder) does not fit, the other chunks' data is
/// given back and they are streamed again when their turn comes.
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
        Merge {
            reader,
            order,
            next: 0,
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            want,
            filter,
            done: false,
            drained: None,
        }
    }

    fn open_next(&mut self) -> Result<()> {
        let i = self.order[self.next];
        self.next += 1;
        self.reader.read_ahead(self.order[self.next..].iter().copied());
        let (want, filter) = (&self.want, &self.filter);
        let reader = self.reader;
        let keep = |conn: u32, t: u64| reader.keep(want, filter, conn, t);
        let entries = self.reader.entries(i, &keep)?;
        if let Some(first) = entries.first() {
            let pos = self.reader.chunks[i].pos;
            let slot = match self.slots.iter().position(Option::is_none) {
                Some(s) => s,
                None => {
                    self.slots.push(None);
                    self.slots.len() - 1
                }
            };
            self.heap.push(Reverse((first.time, pos, first.offset, slot)));
            self.slots[slot] =
                Some(Cursor { entries, next: 1, chunk_pos: pos, chunk: i, data: None, stream_only: false });
        } else {
            self.reader.release(i);
        }
        Ok(())
    }

    /// Gives the data (or streaming decoder) of every chunk but `keep` back to the memory
    /// budget; they are streamed, from their start, when their turn comes. Whether any was held.
    fn give_back(&mut self, keep: usize) -> bool {
        let mut any = false;
        for (k, c) in self.slots.iter_mut().enumerate() {
            if let Some(c) = c.as_mut().filter(|c| k != keep && c.data.is_some()) {
                c.data = None;
                c.stream_only = true;
                any = true;
            }
        }
        any
    }

    /// The message of the entry just taken from `slot`: its chunk's data is read first if
    /// need be. A budget shortfall gives the other chunks' held data back and tries once more.
    fn message(&mut self, slot: usize, e: Entry) -> Result<Message> {
        let mut retried = false;
        loop {
            let result = self.try_message(slot, e);
            match result {
                Err(Error::OverBudget { .. }) if !retried && self.give_back(slot) => retried = true,
                other => return other,
            }
        }
    }

    fn try_message(&mut self, slot: usize, e: Entry) -> Result<Message> {
        let reader = self.reader;
        let cursor = self.slots[slot].as_mut().ok_or_else(|| Error::Invalid("merge slot is empty".into()))?;
        if cursor.data.is_none() {
            cursor.data = Some(reader.chunk_data(cursor.chunk, !cursor.stream_only)?);
        }
        let data = cursor.data.as_mut().ok_or_else(|| Error::Invalid("chunk data is missing".into()))?;
        reader.message_of(data, e, cursor.chunk_pos)
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
        let cursor = self.slots[slot].as_ref()?;
        let entry = cursor.entries[cursor.next - 1];
        let msg = self.message(slot, entry);
        let cursor = self.slots[slot].as_mut()?;
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
