//! One topic of one or more bags as a stream of Arrow record batches.

use std::path::PathBuf;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use rbag_bag::decode::{first_message, unshare, Decoders, TypeSources};
use rbag_bag::{Bag, Filter, TimeMerge};

use crate::columns::Columns;
use crate::Error;

/// What to read of the topic.
#[derive(Debug, Clone)]
pub struct TableOptions {
    /// Only these columns (a nested message's name selects every column under it); all when
    /// `None`.
    pub columns: Option<Vec<String>>,
    /// Only messages at or after this log time (ns).
    pub start: Option<u64>,
    /// Only messages before this log time (ns).
    pub end: Option<u64>,
    /// A batch ends after this many rows...
    pub batch_rows: usize,
    /// ...or once its messages held this many bytes on the wire.
    pub batch_bytes: usize,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions { columns: None, start: None, end: None, batch_rows: 64 * 1024, batch_bytes: 64 << 20 }
    }
}

/// The messages of one topic, merged over bags in log-time order as `rbag convert` merges
/// them, as record batches of one [`schema`](TopicBatches::schema).
///
/// Every connection of the topic must decode to the same columns: a topic whose type changed
/// between connections (or bags) is refused before any row is read.
pub struct TopicBatches<'a> {
    bags: &'a [Bag],
    decoders: Vec<Decoders>,
    iter: TimeMerge<'a>,
    columns: Columns,
    topic: String,
    options: TableOptions,
    /// Messages still expected, from the bags' indexes (an estimate: a window reads fewer).
    expected: u64,
    done: bool,
}

impl<'a> TopicBatches<'a> {
    /// Compiles the topic's type in every bag (`types[i]` gives the types `bags[i]` lacks) and
    /// settles it on the first message of each connection.
    pub fn new(bags: &'a [Bag], types: &[TypeSources], topic: &str, options: TableOptions) -> Result<Self, Error> {
        if !bags.iter().any(|b| b.connections().iter().any(|c| c.topic == topic)) {
            match bags.first() {
                Some(b) => b.check_topics(&[topic])?,
                None => return Err(Error::NoBag),
            }
        }
        let mut decoders: Vec<Decoders> = types.iter().map(|t| Decoders::new(t.clone())).collect();
        decoders.resize_with(bags.len(), Decoders::default);
        let mut columns: Option<(Columns, PathBuf, String)> = None;
        for (bag, decoders) in bags.iter().zip(&mut decoders) {
            let at = |e| Error::Bag(rbag_bag::Error::decode_in(bag.path(), e));
            for c in bag.connections().iter().filter(|c| c.topic == topic) {
                // The type first, so that a type rbag cannot decode is told apart from a
                // message that does not decode.
                decoders.schema(c).map_err(|e| at(unshare(&e)))?;
                if let Some(first) = first_message(bag.reader(), c).map_err(rbag_bag::Error::from)? {
                    decoders.decode(c, 0, &first).map_err(at)?;
                }
                let (schema, _) = decoders.schema(c).map_err(|e| at(unshare(&e)))?;
                let these = Columns::new(&schema, options.columns.as_deref())
                    .map_err(|source| Error::NoColumn { topic: topic.to_string(), source })?;
                match &columns {
                    None => columns = Some((these, bag.path().to_path_buf(), c.message_type.clone())),
                    Some((first, path, ty)) if first.schema() != these.schema() => {
                        return Err(Error::MixedTypes {
                            topic: topic.to_string(),
                            first: format!("{ty} in {}", path.display()),
                            other: format!("{} in {}", c.message_type, bag.path().display()),
                        })
                    }
                    Some(_) => {}
                }
            }
        }
        let Some((columns, ..)) = columns else {
            return Err(Error::NoBag);
        };
        let filter =
            Filter { topics: vec![topic.to_string()], start: options.start, end: options.end, ..Filter::default() };
        let iter = rbag_bag::merged(bags, &filter)?;
        // What the indexes say the topic holds (all of it, whatever the window): batches are
        // sized from it.
        let mut expected = 0;
        for bag in bags {
            let info = bag.storage_info()?;
            let ids = bag.connections().iter().filter(|c| c.topic == topic).map(|c| c.id);
            expected += ids.filter_map(|id| info.connections.get(&id)).map(|c| c.message_count).sum::<u64>();
        }
        Ok(TopicBatches { bags, decoders, iter, columns, topic: topic.to_string(), options, expected, done: false })
    }

    /// The schema of every batch: `log_time`, then the columns.
    pub fn schema(&self) -> SchemaRef {
        self.columns.schema().clone()
    }

    /// The columns' names, without `log_time`.
    pub fn column_names(&self) -> &[String] {
        self.columns.names()
    }

    /// The next batch; `None` once the topic is read.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>, Error> {
        if self.done {
            return Ok(None);
        }
        let mut bytes = 0;
        let rows = usize::try_from(self.expected).unwrap_or(usize::MAX).min(self.options.batch_rows);
        self.columns.reserve(rows);
        while self.columns.len() < self.options.batch_rows && bytes < self.options.batch_bytes {
            let Some(next) = self.iter.next() else {
                self.done = true;
                break;
            };
            let (k, msg) = next.inspect_err(|_| self.done = true).map_err(rbag_bag::Error::from)?;
            let bag = &self.bags[k];
            // A message on a connection the bag does not declare has no type to decode with.
            let Some(c) = bag.connection(msg.connection) else { continue };
            bytes += msg.data.len();
            let at = |e| Error::Bag(rbag_bag::Error::decode_in(bag.path(), e));
            let m = self.decoders[k].view(c, msg.log_time, &msg.data).map_err(at)?;
            self.columns.push(msg.log_time, m).map_err(|(column, problem)| {
                self.done = true;
                Error::Value {
                    path: bag.path().to_path_buf(),
                    topic: self.topic.clone(),
                    log_time: msg.log_time,
                    column,
                    problem,
                }
            })?;
        }
        if self.columns.is_empty() {
            return Ok(None);
        }
        self.expected = self.expected.saturating_sub(self.columns.len() as u64);
        let topic = &self.topic;
        self.columns.finish().map(Some).map_err(|source| Error::Arrow { topic: topic.clone(), source })
    }

    /// Every remaining batch.
    pub fn collect_batches(mut self) -> Result<Vec<RecordBatch>, Error> {
        let mut out = Vec::new();
        while let Some(b) = self.next_batch()? {
            out.push(b);
        }
        Ok(out)
    }
}

impl Iterator for TopicBatches<'_> {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map_err(|e| ArrowError::ExternalError(Box::new(e))).transpose()
    }
}

impl RecordBatchReader for TopicBatches<'_> {
    fn schema(&self) -> SchemaRef {
        TopicBatches::schema(self)
    }
}
