//! Copying messages between bags: merge several inputs in time order, filter, rechunk,
//! recompress. Later layers add encoding conversion on the same pipeline.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rbag_storage::{Connection, Error, Filter, Format, MessageIter, Result, StorageReader, TimeMerge, WriteOptions};

/// How to convert.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    pub filter: Filter,
    pub write: WriteOptions,
    /// The serialization the output must have (`ros1`, `cdr`); `None` keeps the input's.
    pub encoding: Option<String>,
}

/// Refuses a connection whose messages would need re-encoding: this pipeline copies bytes.
fn check_encoding(c: &Connection, format: Format, wanted: Option<&str>) -> Result<()> {
    let fail = |why: String| Err(Error::Invalid(format!("topic {}: {why}; converting between ROS 1 and CDR encodings needs the message layer, which is not built yet", c.topic)));
    if let Some(w) = wanted {
        if w != c.encoding {
            return fail(format!("its messages are {}-encoded, not {w}", c.encoding));
        }
    }
    match format {
        Format::Ros1 if c.encoding != "ros1" => fail(format!("a ROS 1 bag stores ros1-encoded messages, these are {}", c.encoding)),
        Format::Sqlite3 if c.encoding == "ros1" => fail("rosbag2 SQLite3 bags store CDR messages, these are ros1 (MCAP keeps them with its ros1 profile)".into()),
        _ => Ok(()),
    }
}

/// What a conversion did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConvertReport {
    pub output: PathBuf,
    pub messages_written: u64,
    pub connections_written: u64,
}

/// Progress of a running conversion, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub messages_done: u64,
    /// Messages the filter may select, from the inputs' indexes (an upper bound).
    pub messages_total: u64,
}

/// Converts `inputs` (already opened) into a new bag at `output` in `format`.
///
/// Messages from all inputs are merged by log time; ties keep input order, then each input's
/// own order. Identical connections from different inputs are written once.
pub fn convert(
    inputs: &[(PathBuf, Box<dyn StorageReader>)],
    output: &Path,
    format: Format,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<ConvertReport> {
    let mut total = 0;
    for (path, r) in inputs {
        for c in r.connections().iter().filter(|c| options.filter.accepts_topic(&c.topic)) {
            check_encoding(c, format, options.encoding.as_deref()).map_err(|e| e.in_file(path))?;
        }
        let info = r.info()?;
        for c in r.connections() {
            if options.filter.accepts_topic(&c.topic) {
                total += info.connections.get(&c.id).map_or(0, |s| s.message_count);
            }
        }
    }
    let mut writer = rbag_storage::create(output, format, &options.write)?;
    let mut ids: HashMap<(usize, u32), u32> = HashMap::new();
    let mut written: Vec<(Connection, u32)> = Vec::new();
    for (i, (_, r)) in inputs.iter().enumerate() {
        for c in r.connections().iter().filter(|c| options.filter.accepts_topic(&c.topic)) {
            let key = Connection { id: 0, ..c.clone() };
            let id = match written.iter().find(|(k, _)| *k == key) {
                Some(&(_, id)) => id,
                None => {
                    let id = writer.add_connection(c).map_err(|e| e.in_file(&inputs[i].0))?;
                    written.push((key, id));
                    id
                }
            };
            ids.insert((i, c.id), id);
        }
    }

    let mut streams: Vec<MessageIter<'_>> = Vec::with_capacity(inputs.len());
    for (_, r) in inputs {
        streams.push(r.messages(&options.filter)?);
    }
    let mut done = 0u64;
    for item in TimeMerge::new(streams) {
        let (i, msg) = item?;
        let id = *ids.get(&(i, msg.connection)).ok_or(Error::UnknownConnection { id: msg.connection })?;
        writer.write(id, msg.log_time, msg.publish_time, &msg.data)?;
        done += 1;
        if done.is_multiple_of(1024) {
            progress(Progress { messages_done: done, messages_total: total });
        }
    }
    writer.finish()?;
    progress(Progress { messages_done: done, messages_total: total.max(done) });
    Ok(ConvertReport { output: output.to_path_buf(), messages_written: done, connections_written: written.len() as u64 })
}
