//! Playing by send time: storage gives messages in log-time order, and a message's send time
//! can be earlier than one logged before it (a slow transport, several publishers). As
//! rosbag2's player does, a bounded read-ahead window is kept sorted by send time and the
//! earliest goes next, so reordering reaches only as far as the window.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use rbag_storage::Message;

use super::{MessageOrder, MessageStream};

/// `stream` in `order`: unchanged for [`MessageOrder::Received`] (storage order is log-time
/// order); for [`MessageOrder::Sent`], reordered by send time within `window` messages (at
/// least 1: storage order). Equal send times keep storage order.
pub fn reorder(stream: MessageStream<'_>, order: MessageOrder, window: usize) -> MessageStream<'_> {
    match order {
        MessageOrder::Received => stream,
        MessageOrder::Sent => {
            Box::new(Reorder { inner: stream, heap: BinaryHeap::new(), window: window.max(1), seq: 0, done: false })
        }
    }
}

struct Reorder<'a> {
    inner: MessageStream<'a>,
    heap: BinaryHeap<Reverse<Entry>>,
    window: usize,
    /// Storage position of the next message read: the tie-breaker.
    seq: u64,
    done: bool,
}

struct Entry {
    key: u64,
    seq: u64,
    msg: Message,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.key, self.seq) == (other.key, other.seq)
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.key, self.seq).cmp(&(other.key, other.seq))
    }
}

impl Iterator for Reorder<'_> {
    type Item = <MessageStream<'static> as Iterator>::Item;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done && self.heap.len() < self.window {
            match self.inner.next() {
                Some(Ok(msg)) => {
                    self.heap.push(Reverse(Entry { key: MessageOrder::Sent.time(&msg), seq: self.seq, msg }));
                    self.seq += 1;
                }
                // An error ends the run: it goes out before what is still queued.
                Some(Err(e)) => return Some(Err(e)),
                None => self.done = true,
            }
        }
        self.heap.pop().map(|Reverse(e)| Ok(e.msg))
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::play::PlayError;

    /// Messages with these (log, send) times, tagged with their storage index.
    fn msgs(times: &[(u64, u64)]) -> Vec<Message> {
        times
            .iter()
            .enumerate()
            .map(|(i, &(log, sent))| Message {
                connection: 0,
                log_time: log,
                publish_time: sent,
                data: Bytes::from(i.to_string()),
            })
            .collect()
    }

    fn played(order: MessageOrder, window: usize, times: &[(u64, u64)]) -> Vec<String> {
        let stream: MessageStream<'_> = Box::new(msgs(times).into_iter().map(Ok));
        reorder(stream, order, window).map(|m| String::from_utf8(m.unwrap().data.to_vec()).unwrap()).collect()
    }

    const TIMES: &[(u64, u64)] = &[(10, 40), (20, 10), (30, 30), (40, 20), (50, 50)];

    #[test]
    fn sent_order_sorts_by_send_time_within_the_window() {
        assert_eq!(played(MessageOrder::Sent, 1000, TIMES), ["1", "3", "2", "0", "4"]);
        // Window 2: message 0 (sent at 40) waits beside one other, so 1 and 3 overtake it only
        // one at a time.
        assert_eq!(played(MessageOrder::Sent, 2, TIMES), ["1", "2", "3", "0", "4"]);
    }

    #[test]
    fn a_window_of_one_and_received_order_keep_storage_order() {
        let storage = ["0", "1", "2", "3", "4"];
        assert_eq!(played(MessageOrder::Sent, 1, TIMES), storage);
        assert_eq!(played(MessageOrder::Sent, 0, TIMES), storage, "0 counts as 1");
        assert_eq!(played(MessageOrder::Received, 1000, TIMES), storage);
    }

    #[test]
    fn equal_send_times_keep_storage_order() {
        assert_eq!(played(MessageOrder::Sent, 10, &[(1, 5), (2, 5), (3, 1), (4, 5)]), ["2", "0", "1", "3"]);
    }

    #[test]
    fn an_error_from_storage_is_passed_on() {
        let items: Vec<Result<Message, PlayError>> =
            vec![Ok(msgs(&[(1, 1)]).remove(0)), Err(PlayError::Options("bad chunk".into()))];
        let mut s = reorder(Box::new(items.into_iter()), MessageOrder::Sent, 10);
        assert!(matches!(s.next(), Some(Err(PlayError::Options(_)))));
        assert!(s.next().unwrap().is_ok());
        assert!(s.next().is_none());
    }
}
