//! MCAP: every record walked and parsed (bounds-checked by `crate::mcap::parse`), chunks
//! decompressed and their CRCs checked, the data section, summary and attachment CRCs, message
//! indexes, chunk indexes and statistics against what the chunks hold, and log-time order.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use super::{FileSummary, Kind, Report, Severity, Sink, Visitor};
use crate::mcap::parse::{self, Cursor};
use crate::mcap::reader::connection;
use crate::mcap::records::{self, op, Walk, MAGIC};
use crate::{Compression, Connection};

const ATTACHMENT: u8 = 0x09;
const ATTACHMENT_INDEX: u8 = 0x0A;
const SUMMARY_OFFSET: u8 = 0x0E;

/// A chunk as its record and the records after it describe it.
struct Chunk {
    length: u64,
    start: u64,
    end: u64,
    compression: String,
    compressed_size: u64,
    uncompressed_size: u64,
    /// `(log_time, offset in the chunk's records)` of its messages, per channel; `None` for a
    /// chunk whose records could not be read.
    messages: Option<BTreeMap<u16, Vec<(u64, u64)>>>,
    /// Message index records after it: channel -> offset.
    indexes: BTreeMap<u16, u64>,
}

struct Statistics {
    offset: u64,
    message_count: u64,
    chunk_count: u32,
    start: u64,
    end: u64,
    channel_counts: BTreeMap<u16, u64>,
}

struct Ctx<'a> {
    out: Sink<'a>,
    schemas: HashMap<u16, parse::Schema>,
    channels: BTreeMap<u16, parse::Channel>,
    connections: HashMap<u16, Connection>,
    summary_schemas: BTreeSet<u16>,
    summary_channels: BTreeSet<u16>,
    unknown_channels: BTreeSet<u16>,
    counts: BTreeMap<u16, u64>,
    /// The latest log time of any message before the current chunk.
    latest: Option<u64>,
    last_top_level: Option<u64>,
    chunks: BTreeMap<u64, Chunk>,
    last_chunk: Option<u64>,
    chunk_indexes: BTreeMap<u64, (u64, parse::ChunkIndex)>,
    statistics: Option<Statistics>,
    in_summary: bool,
}

impl Ctx<'_> {
    fn topic(&self, channel: u16) -> String {
        self.channels.get(&channel).map(|c| c.topic.clone()).unwrap_or_else(|| format!("<channel {channel}>"))
    }

    fn schema(&mut self, body: &[u8], offset: u64) {
        let s = match parse::schema(body, offset) {
            Ok(s) => s,
            Err(e) => return self.out.add(Severity::Error, Kind::Structure, offset, "MCAP schema", e.to_string()),
        };
        if s.id == 0 {
            self.out.add(Severity::Error, Kind::Structure, offset, "MCAP schema", "schema id 0 is reserved".into());
        }
        if let Some(prev) = self.schemas.get(&s.id) {
            if prev.name != s.name || prev.encoding != s.encoding || prev.data != s.data {
                self.out.add(
                    Severity::Error,
                    Kind::Connection,
                    offset,
                    "MCAP schema",
                    format!(
                        "schema {} ({}) differs from an earlier schema record of the same id ({})",
                        s.id, s.name, prev.name
                    ),
                );
            }
        } else if self.in_summary {
            // rosbag2 writes the schemas and channels of topics that got no message only to the
            // summary (`mcap doctor` calls that an error; no reader loses anything by it).
            self.out.add(
                Severity::Info,
                Kind::Index,
                offset,
                "MCAP schema",
                format!("schema {} ({}) is only in the summary section", s.id, s.name),
            );
        }
        if self.in_summary {
            self.summary_schemas.insert(s.id);
        }
        self.schemas.entry(s.id).or_insert(s);
    }

    fn channel(&mut self, body: &[u8], offset: u64) {
        let c = match parse::channel(body, offset) {
            Ok(c) => c,
            Err(e) => return self.out.add(Severity::Error, Kind::Structure, offset, "MCAP channel", e.to_string()),
        };
        if c.schema_id != 0 && !self.schemas.contains_key(&c.schema_id) {
            self.out.add_topic(
                Severity::Error,
                Kind::Connection,
                offset,
                "MCAP channel",
                c.topic.clone(),
                format!("channel {} names schema {}, which no earlier record declares", c.id, c.schema_id),
            );
        }
        if let Some(prev) = self.channels.get(&c.id) {
            if prev.topic != c.topic
                || prev.schema_id != c.schema_id
                || prev.message_encoding != c.message_encoding
                || prev.metadata != c.metadata
            {
                self.out.add_topic(
                    Severity::Error,
                    Kind::Connection,
                    offset,
                    "MCAP channel",
                    c.topic.clone(),
                    format!("channel {} differs from an earlier channel record of the same id", c.id),
                );
            }
        } else if self.in_summary {
            self.out.add_topic(
                Severity::Info,
                Kind::Index,
                offset,
                "MCAP channel",
                c.topic.clone(),
                format!("channel {} is only in the summary section (no message in the data section uses it)", c.id),
            );
        }
        if self.in_summary {
            self.summary_channels.insert(c.id);
        }
        if self.channels.contains_key(&c.id) {
            return;
        }
        let conn = connection(&self.schemas, &c);
        self.out.connection(&conn, offset, "MCAP channel");
        self.connections.insert(c.id, conn);
        self.channels.insert(c.id, c);
    }

    /// A message record: counted, its channel checked, handed to the visitor.
    fn message(&mut self, channel: u16, log_time: u64, data: &[u8], offset: u64, record: &'static str) {
        *self.counts.entry(channel).or_default() += 1;
        let conn = self.connections.get(&channel);
        if conn.is_none() && self.unknown_channels.insert(channel) {
            self.out.add(
                Severity::Error,
                Kind::Connection,
                offset,
                record,
                format!("a message on channel {channel}, which no earlier Channel record declares"),
            );
        }
        self.out.message(conn, log_time, data, offset, record);
    }

    fn top_level_message(&mut self, body: &[u8], offset: u64) {
        let m = match records::message(body, offset) {
            Ok(m) => m,
            Err(e) => return self.out.add(Severity::Error, Kind::Structure, offset, "MCAP message", e.to_string()),
        };
        if let Some(prev) = self.last_top_level.filter(|&p| m.log_time < p) {
            self.out.add_topic(
                Severity::Warning,
                Kind::MessageOrder,
                offset,
                "MCAP message",
                self.topic(m.channel),
                format!("log time {} is before the previous message's {prev}", m.log_time),
            );
        }
        self.last_top_level = Some(m.log_time);
        self.latest = Some(self.latest.map_or(m.log_time, |l| l.max(m.log_time)));
        self.message(m.channel, m.log_time, &body[m.data.clone()], offset, "MCAP message");
    }

    fn chunk(&mut self, body: &[u8], offset: u64) {
        const REC: &str = "MCAP chunk";
        self.out.report.checked.chunks += 1;
        self.last_chunk = Some(offset);
        let head = match records::chunk(body, offset) {
            Ok(h) => h,
            Err(e) => return self.out.add(Severity::Error, Kind::Structure, offset, REC, e.to_string()),
        };
        let mut chunk = Chunk {
            length: 9 + body.len() as u64,
            start: head.start,
            end: head.end,
            compression: head.compression.clone(),
            compressed_size: head.records.len() as u64,
            uncompressed_size: head.uncompressed_size,
            messages: None,
            indexes: BTreeMap::new(),
        };
        let compressed = &body[head.records.clone()];
        let held: bytes::Bytes;
        let data: &[u8] = match head.compression.as_str() {
            "" => {
                if compressed.len() as u64 != head.uncompressed_size {
                    self.out.add(
                        Severity::Error,
                        Kind::Structure,
                        offset,
                        REC,
                        format!(
                            "uncompressed chunk says it holds {} bytes, its records take {}",
                            head.uncompressed_size,
                            compressed.len()
                        ),
                    );
                }
                compressed
            }
            name => {
                let c = match name {
                    "lz4" => Compression::Lz4,
                    "zstd" => Compression::Zstd,
                    other => {
                        self.out.add(
                            Severity::Error,
                            Kind::Decompress,
                            offset,
                            REC,
                            format!("unknown compression {other:?}"),
                        );
                        self.chunks.insert(offset, chunk);
                        return;
                    }
                };
                match super::decompress(c, compressed, head.uncompressed_size, offset, "MCAP chunk") {
                    Ok(b) => {
                        held = b;
                        &held
                    }
                    Err(e) => {
                        self.out.add(Severity::Error, Kind::Decompress, offset, REC, e.to_string());
                        self.chunks.insert(offset, chunk);
                        return;
                    }
                }
            }
        };
        if head.crc != 0 {
            let crc = crc32fast::hash(data);
            if crc != head.crc {
                self.out.add(
                    Severity::Error,
                    Kind::Crc,
                    offset,
                    REC,
                    format!("CRC mismatch: the chunk says {:08x}, its records hash to {crc:08x}", head.crc),
                );
            }
        }
        let mut messages: BTreeMap<u16, Vec<(u64, u64)>> = BTreeMap::new();
        let (mut first, mut last, mut prev): (Option<u64>, Option<u64>, Option<u64>) = (None, None, None);
        let mut disorder = 0u64;
        let latest_before = self.latest;
        for rec in Walk::new(data, 0, offset, true) {
            let rec = match rec {
                Ok(r) => r,
                Err(e) => {
                    self.out.add(Severity::Error, Kind::Structure, offset, REC, format!("in its records: {e}"));
                    break;
                }
            };
            let at = rec.body.start as u64 - 9;
            let rbody = &data[rec.body.clone()];
            match rec.op {
                op::SCHEMA => self.schema(rbody, offset),
                op::CHANNEL => self.channel(rbody, offset),
                op::MESSAGE => {
                    let m = match records::message(rbody, offset) {
                        Ok(m) => m,
                        Err(e) => {
                            self.out.add(
                                Severity::Error,
                                Kind::Structure,
                                offset,
                                REC,
                                format!("record at byte {at}: {e}"),
                            );
                            continue;
                        }
                    };
                    if let Some(p) = prev.filter(|&p| m.log_time < p) {
                        disorder += 1;
                        if disorder == 1 {
                            self.out.add_topic(Severity::Warning, Kind::MessageOrder, offset, REC, self.topic(m.channel), format!(
                                        "message at byte {at} of the chunk has log time {}, before the previous message's {p}",
                                        m.log_time
                                    ));
                        }
                    }
                    prev = Some(m.log_time);
                    first = Some(first.map_or(m.log_time, |f| f.min(m.log_time)));
                    last = Some(last.map_or(m.log_time, |l| l.max(m.log_time)));
                    messages.entry(m.channel).or_default().push((m.log_time, at));
                    self.message(m.channel, m.log_time, &rbody[m.data.clone()], offset, REC);
                }
                other => self.out.add(
                    Severity::Error,
                    Kind::Structure,
                    offset,
                    REC,
                    format!("record at byte {at} has op 0x{other:02x}, which may not be in a chunk"),
                ),
            }
        }
        if disorder > 1 {
            self.out.add(
                Severity::Warning,
                Kind::MessageOrder,
                offset,
                REC,
                format!("{disorder} messages of the chunk are out of log-time order in all"),
            );
        }
        if let (Some(first), Some(last)) = (first, last) {
            if first != head.start || last != head.end {
                self.out.add(
                    Severity::Error,
                    Kind::Index,
                    offset,
                    REC,
                    format!(
                        "the chunk header says its messages span {}..{} ns, they span {first}..{last}",
                        head.start, head.end
                    ),
                );
            }
            if let Some(l) = latest_before.filter(|&l| first < l) {
                self.out.add(
                    Severity::Warning,
                    Kind::ChunkOrder,
                    offset,
                    REC,
                    format!("its first message ({first} ns) is older than the latest message before it ({l} ns)"),
                );
            }
            self.latest = Some(latest_before.map_or(last, |l| l.max(last)));
        }
        chunk.messages = Some(messages);
        self.chunks.insert(offset, chunk);
    }

    fn message_index(&mut self, body: &[u8], offset: u64) {
        const REC: &str = "MCAP message index";
        let mut entries = Vec::new();
        let mut channel = None;
        if let Err(e) = records::message_index(body, offset, &mut |ch, t, o| {
            channel = Some(ch);
            entries.push((t, o));
        }) {
            return self.out.add(Severity::Error, Kind::Structure, offset, REC, e.to_string());
        }
        let channel = channel.unwrap_or_else(|| u16::from_le_bytes([body[0], body[1]]));
        let topic = self.topic(channel);
        let Some(chunk) = self.last_chunk.and_then(|c| self.chunks.get_mut(&c)) else {
            return self.out.add(
                Severity::Error,
                Kind::Structure,
                offset,
                REC,
                "a message index with no chunk before it".into(),
            );
        };
        chunk.indexes.insert(channel, offset);
        let Some(messages) = &chunk.messages else { return };
        let mut actual = messages.get(&channel).cloned().unwrap_or_default();
        let whose = format!("channel {channel}");
        if let Some(msg) = super::index_mismatch(&mut entries, &mut actual, &whose, "before it", "log time") {
            self.out.add_topic(Severity::Error, Kind::Index, offset, REC, topic, msg);
        }
    }

    fn statistics(&mut self, body: &[u8], offset: u64) {
        let parsed = (|| {
            let mut c = Cursor::new(body, offset, "MCAP statistics");
            let message_count = c.u64()?;
            c.u16()?;
            for _ in 0..3 {
                c.u32()?;
            }
            let chunk_count = c.u32()?;
            let start = c.u64()?;
            let end = c.u64()?;
            let map = c.bytes()?;
            let mut channel_counts = BTreeMap::new();
            let mut m = Cursor::new(map, offset, "MCAP statistics");
            for _ in 0..map.len() / 10 {
                channel_counts.insert(m.u16()?, m.u64()?);
            }
            if map.len() % 10 != 0 {
                return Err(crate::Error::Malformed {
                    offset,
                    what: "MCAP statistics",
                    reason: format!("channel counts of {} bytes are not whole entries", map.len()),
                });
            }
            Ok(Statistics { offset, message_count, chunk_count, start, end, channel_counts })
        })();
        match parsed {
            Ok(s) => {
                if self.statistics.is_some() {
                    self.out.add(
                        Severity::Error,
                        Kind::Structure,
                        offset,
                        "MCAP statistics",
                        "a second statistics record".into(),
                    );
                }
                self.statistics = Some(s);
            }
            Err(e) => self.out.add(Severity::Error, Kind::Structure, offset, "MCAP statistics", e.to_string()),
        }
    }

    /// The summary against the data: chunk indexes, statistics, summary channels.
    fn cross_check(&mut self) {
        const CI: &str = "MCAP chunk index";
        let indexes = std::mem::take(&mut self.chunk_indexes);
        let chunks = std::mem::take(&mut self.chunks);
        for (&at, (offset, ci)) in &indexes {
            let offset = *offset;
            let Some(chunk) = chunks.get(&at) else {
                self.out.add(
                    Severity::Error,
                    Kind::Index,
                    offset,
                    CI,
                    format!("points at offset {at}, where no chunk is"),
                );
                continue;
            };
            let mut differ = Vec::new();
            let mut cmp = |what: &str, index: String, chunk: String| {
                if index != chunk {
                    differ.push(format!("{what} {index} (the chunk's: {chunk})"));
                }
            };
            cmp("length", ci.chunk_length.to_string(), chunk.length.to_string());
            cmp("start time", ci.message_start_time.to_string(), chunk.start.to_string());
            cmp("end time", ci.message_end_time.to_string(), chunk.end.to_string());
            cmp("compression", format!("{:?}", ci.compression), format!("{:?}", chunk.compression));
            cmp("compressed size", ci.compressed_size.to_string(), chunk.compressed_size.to_string());
            cmp("uncompressed size", ci.uncompressed_size.to_string(), chunk.uncompressed_size.to_string());
            if !differ.is_empty() {
                self.out.add(
                    Severity::Error,
                    Kind::Index,
                    offset,
                    CI,
                    format!("for the chunk at {at} says {}", differ.join(", ")),
                );
            }
            let mut bad_index = Vec::new();
            for (ch, off) in &ci.message_index_offsets {
                if chunk.indexes.get(ch) != Some(off) {
                    bad_index.push(format!("channel {ch} at {off}"));
                }
            }
            if let Some(msgs) = &chunk.messages {
                for ch in msgs.keys() {
                    if !ci.message_index_offsets.contains_key(ch) && !ci.message_index_offsets.is_empty() {
                        bad_index.push(format!("nothing for channel {ch}, which has messages in the chunk"));
                    }
                }
            }
            if !bad_index.is_empty() {
                self.out.add(
                    Severity::Error,
                    Kind::Index,
                    offset,
                    CI,
                    format!(
                        "its message index offsets for the chunk at {at} do not match the message indexes there: {}",
                        bad_index.join(", ")
                    ),
                );
            }
        }
        if !indexes.is_empty() {
            let missing: Vec<u64> = chunks.keys().filter(|k| !indexes.contains_key(k)).copied().collect();
            for at in missing {
                self.out.add(
                    Severity::Error,
                    Kind::Index,
                    at,
                    "MCAP chunk",
                    "the summary has chunk indexes but none for this chunk: indexed readers skip its messages".into(),
                );
            }
        }
        if !self.summary_channels.is_empty() || !indexes.is_empty() {
            let used: Vec<u16> = self.counts.keys().filter(|c| !self.summary_channels.contains(c)).copied().collect();
            for ch in used {
                let topic = self.topic(ch);
                let offset = indexes.values().next().map(|v| v.0).unwrap_or(0);
                self.out.add_topic(
                    Severity::Error,
                    Kind::Index,
                    offset,
                    "MCAP summary",
                    topic,
                    format!("channel {ch} has messages but is not repeated in the summary section"),
                );
            }
        }
        if let Some(s) = self.statistics.take() {
            const REC: &str = "MCAP statistics";
            let total: u64 = self.counts.values().sum();
            if s.message_count != total {
                self.out.add(
                    Severity::Error,
                    Kind::Index,
                    s.offset,
                    REC,
                    format!("message count {}, the file holds {total}", s.message_count),
                );
            }
            if s.chunk_count as usize != chunks.len() {
                self.out.add(
                    Severity::Error,
                    Kind::Index,
                    s.offset,
                    REC,
                    format!("chunk count {}, the file holds {}", s.chunk_count, chunks.len()),
                );
            }
            if let (Some(start), Some(end)) = (self.out.summary.start, self.out.summary.end) {
                if s.start != start || s.end != end {
                    self.out.add(
                        Severity::Error,
                        Kind::Index,
                        s.offset,
                        REC,
                        format!("says messages span {}..{} ns, they span {start}..{end}", s.start, s.end),
                    );
                }
            }
            if !s.channel_counts.is_empty() {
                let ids: BTreeSet<u16> = s.channel_counts.keys().chain(self.counts.keys()).copied().collect();
                for ch in ids {
                    let said = s.channel_counts.get(&ch).copied().unwrap_or(0);
                    let found = self.counts.get(&ch).copied().unwrap_or(0);
                    if said != found {
                        let topic = self.topic(ch);
                        self.out.add_topic(
                            Severity::Error,
                            Kind::Index,
                            s.offset,
                            REC,
                            topic,
                            format!("channel {ch}: message count {said}, the file holds {found}"),
                        );
                    }
                }
            }
        }
    }
}

/// Checks the MCAP file `buf` (the whole of `path`).
pub(super) fn check(
    path: &Path,
    file_index: usize,
    buf: &[u8],
    report: &mut Report,
    visitor: &mut dyn Visitor,
) -> FileSummary {
    let mut cx = Ctx {
        out: Sink::new(path, file_index, report, visitor),
        schemas: HashMap::new(),
        channels: BTreeMap::new(),
        connections: HashMap::new(),
        summary_schemas: BTreeSet::new(),
        summary_channels: BTreeSet::new(),
        unknown_channels: BTreeSet::new(),
        counts: BTreeMap::new(),
        latest: None,
        last_top_level: None,
        chunks: BTreeMap::new(),
        last_chunk: None,
        chunk_indexes: BTreeMap::new(),
        statistics: None,
        in_summary: false,
    };
    if !buf.starts_with(MAGIC) {
        cx.out.add(
            Severity::Error,
            Kind::Structure,
            0,
            "MCAP magic",
            "the file does not start with the MCAP magic".into(),
        );
        return cx.out.summary;
    }
    let len = buf.len();
    let end_magic = len >= 2 * MAGIC.len() && buf.ends_with(MAGIC);
    if !end_magic {
        cx.out.add(
            Severity::Error,
            Kind::Structure,
            len as u64,
            "MCAP magic",
            "the file does not end with the MCAP magic: it is truncated, or its writer never finished".into(),
        );
    }
    let limit = if end_magic { len - MAGIC.len() } else { len };
    let (mut saw_header, mut data_end, mut footer) = (false, None::<u64>, None::<u64>);
    for (i, rec) in Walk::new(&buf[..limit], MAGIC.len(), 0, false).enumerate() {
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                let offset = match &e {
                    crate::Error::Truncated { offset, .. } => *offset,
                    _ => 0,
                };
                cx.out.add(Severity::Error, Kind::Structure, offset, "MCAP record", e.to_string());
                break;
            }
        };
        let body = &buf[rec.body.clone()];
        let offset = rec.offset;
        if i == 0 && rec.op != op::HEADER {
            cx.out.add(
                Severity::Error,
                Kind::Structure,
                offset,
                "MCAP header",
                "the first record is not a Header".into(),
            );
        }
        if footer.is_some() {
            cx.out.add(Severity::Error, Kind::Structure, offset, "MCAP record", "a record after the footer".into());
        }
        if data_end.is_some() && matches!(rec.op, op::MESSAGE | op::CHUNK | op::MESSAGE_INDEX) {
            cx.out.add(
                Severity::Error,
                Kind::Structure,
                offset,
                "MCAP record",
                format!("op 0x{:02x} in the summary section", rec.op),
            );
        }
        match rec.op {
            op::HEADER => {
                if saw_header {
                    cx.out.add(
                        Severity::Error,
                        Kind::Structure,
                        offset,
                        "MCAP header",
                        "a second Header record".into(),
                    );
                }
                saw_header = true;
                match parse::header(body, offset) {
                    Ok(h) if !["", "ros1", "ros2"].contains(&h.profile.as_str()) => cx.out.add(
                        Severity::Warning,
                        Kind::Structure,
                        offset,
                        "MCAP header",
                        format!("profile {:?} is not a well-known one", h.profile),
                    ),
                    Ok(_) => {}
                    Err(e) => cx.out.add(Severity::Error, Kind::Structure, offset, "MCAP header", e.to_string()),
                }
            }
            op::SCHEMA => cx.schema(body, offset),
            op::CHANNEL => cx.channel(body, offset),
            op::MESSAGE => cx.top_level_message(body, offset),
            op::CHUNK => cx.chunk(body, offset),
            op::MESSAGE_INDEX => cx.message_index(body, offset),
            op::CHUNK_INDEX => match parse::chunk_index(body, offset) {
                Ok(ci) => {
                    if let Some((prev, _)) = cx.chunk_indexes.insert(ci.chunk_start_offset, (offset, ci)) {
                        cx.out.add(
                            Severity::Error,
                            Kind::Index,
                            offset,
                            "MCAP chunk index",
                            format!("a second index of the chunk the index at {prev} is for"),
                        );
                    }
                }
                Err(e) => cx.out.add(Severity::Error, Kind::Structure, offset, "MCAP chunk index", e.to_string()),
            },
            op::STATISTICS => cx.statistics(body, offset),
            op::DATA_END => {
                cx.in_summary = true;
                data_end = Some(offset + 9 + body.len() as u64);
                match body.get(..4) {
                    Some(b) => {
                        let said = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        let crc = if said != 0 { crc32fast::hash(&buf[..offset as usize]) } else { 0 };
                        if crc != said {
                            cx.out.add(
                                Severity::Error,
                                Kind::Crc,
                                offset,
                                "MCAP data end",
                                format!("data section CRC mismatch: the record says {said:08x}, the data section hashes to {crc:08x}"),
                            );
                        }
                    }
                    None => cx.out.add(
                        Severity::Error,
                        Kind::Structure,
                        offset,
                        "MCAP data end",
                        "shorter than its CRC".into(),
                    ),
                }
            }
            op::FOOTER => {
                footer = Some(offset);
                if body.len() < 20 {
                    cx.out.add(
                        Severity::Error,
                        Kind::Structure,
                        offset,
                        "MCAP footer",
                        "shorter than its fields".into(),
                    );
                    continue;
                }
                let u64_at = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().unwrap_or_default());
                let summary_start = u64_at(0);
                let said = u32::from_le_bytes([body[16], body[17], body[18], body[19]]);
                if summary_start != 0 && Some(summary_start) != data_end {
                    cx.out.add(
                        Severity::Error,
                        Kind::Index,
                        offset,
                        "MCAP footer",
                        format!(
                            "summary start {summary_start}, but the summary section starts at {}",
                            data_end.map_or("<no data end>".into(), |d| d.to_string())
                        ),
                    );
                }
                let from = if summary_start == 0 { offset } else { summary_start };
                if said != 0 && from <= offset {
                    let crc = crc32fast::hash(&buf[from as usize..offset as usize + 9 + 16]);
                    if crc != said {
                        cx.out.add(
                            Severity::Error,
                            Kind::Crc,
                            offset,
                            "MCAP footer",
                            format!(
                                "summary CRC mismatch: the footer says {said:08x}, the summary hashes to {crc:08x}"
                            ),
                        );
                    }
                }
            }
            ATTACHMENT => {
                if let Some(err) = attachment(body, offset) {
                    let kind = if err.contains("CRC") { Kind::Crc } else { Kind::Structure };
                    cx.out.add(Severity::Error, kind, offset, "MCAP attachment", err);
                }
            }
            ATTACHMENT_INDEX | op::METADATA | op::METADATA_INDEX | SUMMARY_OFFSET => {}
            other => cx.out.add(
                Severity::Warning,
                Kind::Structure,
                offset,
                "MCAP record",
                format!("unknown op 0x{other:02x}"),
            ),
        }
    }
    if data_end.is_none() {
        cx.out.add(
            Severity::Error,
            Kind::Structure,
            len as u64,
            "MCAP data end",
            "the file has no DataEnd record".into(),
        );
    }
    if footer.is_none() && end_magic {
        cx.out.add(Severity::Error, Kind::Structure, len as u64, "MCAP footer", "the file has no Footer record".into());
    }
    cx.cross_check();
    for (ch, n) in &cx.counts {
        match cx.connections.get(ch) {
            Some(c) => cx.out.summary.topic(&c.topic, &c.message_type, *n),
            None => cx.out.summary.topic(&format!("<channel {ch}>"), "", *n),
        }
    }
    cx.out.summary
}

/// An attachment's problem: fields that do not fit, or a CRC that does not match.
fn attachment(body: &[u8], _offset: u64) -> Option<String> {
    let short = || Some("its fields run past the record".to_string());
    let mut pos = 16usize;
    for _ in 0..2 {
        let Some(b) = body.get(pos..pos + 4) else { return short() };
        let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        pos = match pos.checked_add(4 + n) {
            Some(p) if p <= body.len() => p,
            _ => return short(),
        };
    }
    let Some(b) = body.get(pos..pos + 8) else { return short() };
    let n = u64::from_le_bytes(b.try_into().unwrap_or_default());
    let end = match usize::try_from(n).ok().and_then(|n| (pos + 8).checked_add(n)) {
        Some(e) if e.checked_add(4) == Some(body.len()) => e,
        _ => return Some(format!("its data of {n} bytes does not fit the record")),
    };
    let said = u32::from_le_bytes(body[end..].try_into().unwrap_or_default());
    if said != 0 {
        let crc = crc32fast::hash(&body[..end]);
        if crc != said {
            return Some(format!("CRC mismatch: the attachment says {said:08x}, its fields hash to {crc:08x}"));
        }
    }
    None
}
