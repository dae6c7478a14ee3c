//! ROS 1 bag v2.0: every record walked with the reader's bounds-checked parser, chunks
//! decompressed, the bag header's index position and counts, the chunk-info records (counts per
//! connection, time ranges) and the index-data records (times and offsets) against what each
//! chunk holds, connections against their index copies, and log-time order. ROS 1 bags have no
//! CRCs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use super::{FileSummary, Kind, Report, Severity, Sink, Visitor};
use crate::ros1::chunk::{self, ChunkMeta, Entry};
use crate::ros1::record::{self, op, Limits, Records};
use crate::{Compression, Connection};

struct Chunk {
    /// Entries found in its data; `None` when the data could not be read.
    entries: Option<Vec<Entry>>,
    /// Index-data entries after it, per connection.
    index: BTreeMap<u32, (u64, Vec<Entry>)>,
}

struct Ctx<'a> {
    out: Sink<'a>,
    connections: HashMap<u32, Connection>,
    index_connections: BTreeSet<u32>,
    unknown: BTreeSet<u32>,
    /// Messages per (declared) connection.
    counts: HashMap<u32, u64>,
    chunks: BTreeMap<u64, Chunk>,
    last_chunk: Option<u64>,
    infos: Vec<(u64, ChunkMeta)>,
    latest: Option<u64>,
}

impl Ctx<'_> {
    fn topic(&self, conn: u32) -> String {
        self.connections.get(&conn).map(|c| c.topic.clone()).unwrap_or_else(|| format!("<connection {conn}>"))
    }

    fn connection(&mut self, rec: &record::Record<'_>, offset: u64, record: &'static str, in_index: bool) {
        let c = match chunk::parse_connection(rec) {
            Ok(c) => c,
            Err(e) => return self.out.add(Severity::Error, Kind::Structure, offset, record, e.to_string()),
        };
        if in_index {
            self.index_connections.insert(c.id);
        }
        if let Some(prev) = self.connections.get(&c.id) {
            if prev.topic != c.topic || prev.message_type != c.message_type || prev.definition != c.definition {
                let msg = format!("connection {} differs from an earlier record of the same id", c.id);
                self.out.add_topic(Severity::Error, Kind::Connection, offset, record, c.topic.clone(), msg);
            }
            return;
        }
        self.out.connection(&c, offset, record);
        self.connections.insert(c.id, c);
    }

    /// A chunk record; `open`: one its recorder never closed, whose records run to the end of the
    /// file (`rec.data` is then those bytes).
    fn chunk(&mut self, header: &record::Header<'_>, data: &[u8], offset: u64, limits: &Limits, open: bool) {
        const REC: &str = "ROS 1 chunk";
        self.out.report.checked.chunks += 1;
        self.last_chunk = Some(offset);
        self.chunks.insert(offset, Chunk { entries: None, index: BTreeMap::new() });
        let (compression, size) = match chunk::chunk_fields(header, offset) {
            Ok(f) => f,
            Err(e) => return self.out.add(Severity::Error, Kind::Structure, offset, REC, e.to_string()),
        };
        if open && compression != Compression::None {
            return self.out.add(
                Severity::Error,
                Kind::Decompress,
                offset,
                REC,
                "a compressed chunk its recorder never closed: not decoded (`rbag reindex` salvages it)".into(),
            );
        }
        let held: bytes::Bytes;
        let data: &[u8] = if compression == Compression::None {
            if !open && data.len() as u64 != size {
                self.out.add(
                    Severity::Error,
                    Kind::Structure,
                    offset,
                    REC,
                    format!("the header says {size} bytes, the uncompressed data holds {}", data.len()),
                );
            }
            data
        } else {
            match super::decompress(compression, data, size, offset, "chunk") {
                Ok(b) => {
                    held = b;
                    &held
                }
                Err(e) => return self.out.add(Severity::Error, Kind::Decompress, offset, REC, e.to_string()),
            }
        };
        let mut entries = Vec::new();
        let (mut prev, mut first, mut disorder) = (None::<u64>, None::<u64>, 0u64);
        let latest_before = self.latest;
        let mut records = Records::new(data, 0, *limits);
        loop {
            let at = records.position() as u64;
            let Some(r) = records.next() else { break };
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    self.bad_data(offset, at, e);
                    break;
                }
            };
            match r.op() {
                Ok(op::CONNECTION) => self.connection(&r, offset, REC, false),
                Ok(op::MSG_DATA) => {
                    let (conn, time) = match (r.header.u32("conn"), r.header.time("time")) {
                        (Ok(c), Ok(t)) => (c, t),
                        (Err(e), _) | (_, Err(e)) => {
                            self.bad_data(offset, at, e);
                            continue;
                        }
                    };
                    if let Some(p) = prev.filter(|&p| time < p) {
                        disorder += 1;
                        if disorder == 1 {
                            let msg = format!(
                                "message at byte {at} of the chunk's data has time {time}, before the previous message's {p}"
                            );
                            self.out.add_topic(Severity::Info, Kind::MessageOrder, offset, REC, self.topic(conn), msg);
                        }
                    }
                    prev = Some(time);
                    first = Some(first.map_or(time, |f| f.min(time)));
                    entries.push(Entry { time, offset: at as u32, conn });
                    self.message(conn, time, r.data, offset);
                }
                Ok(other) => self.out.add(
                    Severity::Error,
                    Kind::Structure,
                    offset,
                    REC,
                    format!("record at byte {at} of its data has op 0x{other:02x}, which may not be in a chunk"),
                ),
                Err(e) => self.bad_data(offset, at, e),
            }
        }
        if disorder > 1 {
            self.out.add(
                Severity::Info,
                Kind::MessageOrder,
                offset,
                REC,
                format!("{disorder} messages of the chunk are out of time order in all"),
            );
        }
        // Recorders interleave topics a little (rosbag record's messages are microseconds out of
        // order, within and across chunks); a chunk that starts before the one before it is out
        // of order.
        if let (Some(first), Some(l)) = (first, latest_before) {
            if first < l {
                self.out.add(
                    Severity::Warning,
                    Kind::ChunkOrder,
                    offset,
                    REC,
                    format!("its first message ({first} ns) is older than the first message of the chunk before it ({l} ns)"),
                );
            }
        }
        if first.is_some() {
            self.latest = first;
        }
        // A chunk never closed has no index data to compare with (the bag header says so).
        if let Some(c) = self.chunks.get_mut(&offset).filter(|_| !open) {
            c.entries = Some(entries);
        }
    }

    /// A record of a chunk's data at byte `at` that cannot be read.
    fn bad_data(&mut self, offset: u64, at: u64, e: crate::Error) {
        self.out.add(Severity::Error, Kind::Structure, offset, "ROS 1 chunk", format!("at byte {at} of its data: {e}"));
    }

    fn message(&mut self, conn: u32, time: u64, data: &[u8], offset: u64) {
        let c = self.connections.get(&conn);
        if c.is_some() {
            *self.counts.entry(conn).or_default() += 1;
        } else if self.unknown.insert(conn) {
            self.out.add(
                Severity::Error,
                Kind::Connection,
                offset,
                "ROS 1 chunk",
                format!("a message on connection {conn}, which no connection record before it declares"),
            );
        }
        self.out.message(c, time, data, offset, "ROS 1 chunk");
    }

    fn index_data(&mut self, rec: &record::Record<'_>, offset: u64) {
        const REC: &str = "ROS 1 index data";
        let mut entries = Vec::new();
        if let Err(e) = chunk::for_each_entry(rec, |e| entries.push(e)) {
            return self.out.add(Severity::Error, Kind::Structure, offset, REC, e.to_string());
        }
        let conn = rec.header.u32("conn").unwrap_or(u32::MAX);
        match self.last_chunk.and_then(|c| self.chunks.get_mut(&c)) {
            Some(c) => {
                c.index.insert(conn, (offset, entries));
            }
            None => {
                self.out.add(Severity::Error, Kind::Structure, offset, REC, "index data with no chunk before it".into())
            }
        }
    }

    /// The index (bag header, chunk infos, index data, index connections) against the data.
    fn cross_check(&mut self, index_pos: u64, conn_count: u32, chunk_count: u32, indexed: bool) {
        // Index data against each chunk's messages.
        let chunks = std::mem::take(&mut self.chunks);
        for (&at, c) in &chunks {
            let Some(actual) = &c.entries else { continue };
            let mut by_conn: BTreeMap<u32, Vec<(u64, u32)>> = BTreeMap::new();
            for e in actual {
                by_conn.entry(e.conn).or_default().push((e.time, e.offset));
            }
            let conns: BTreeSet<u32> = by_conn.keys().chain(c.index.keys()).copied().collect();
            for conn in conns {
                let mut found = by_conn.remove(&conn).unwrap_or_default();
                let topic = self.topic(conn);
                let Some((ioff, idx)) = c.index.get(&conn) else {
                    let msg =
                        format!("{} message(s) of connection {conn} have no index data after the chunk", found.len());
                    self.out.add_topic(Severity::Error, Kind::Index, at, "ROS 1 chunk", topic, msg);
                    continue;
                };
                let mut listed: Vec<(u64, u32)> = idx.iter().map(|e| (e.time, e.offset)).collect();
                let (whose, chunk) = (format!("connection {conn}"), format!("at {at}"));
                let Some(msg) = super::index_mismatch(&mut listed, &mut found, &whose, &chunk, "time") else {
                    continue;
                };
                self.out.add_topic(Severity::Error, Kind::Index, *ioff, "ROS 1 index data", topic, msg);
            }
        }
        if !indexed {
            return;
        }
        const HDR: &str = "ROS 1 bag header";
        if conn_count as usize != self.index_connections.len() {
            self.out.add(
                Severity::Error,
                Kind::Index,
                13,
                HDR,
                format!(
                    "conn_count {conn_count}, the index holds {} connection record(s)",
                    self.index_connections.len()
                ),
            );
        }
        if chunk_count as usize != self.infos.len() {
            self.out.add(
                Severity::Error,
                Kind::Index,
                13,
                HDR,
                format!("chunk_count {chunk_count}, the index holds {} chunk info record(s)", self.infos.len()),
            );
        }
        let missing: Vec<u32> =
            self.connections.keys().filter(|c| !self.index_connections.contains(c)).copied().collect();
        for conn in missing {
            let topic = self.topic(conn);
            let msg = format!("connection {conn} is not in the index section (after {index_pos})");
            self.out.add_topic(Severity::Error, Kind::Index, index_pos, HDR, topic, msg);
        }
        let infos = std::mem::take(&mut self.infos);
        let mut described = BTreeSet::new();
        for (ioff, info) in &infos {
            const REC: &str = "ROS 1 chunk info";
            let Some(c) = chunks.get(&info.pos) else {
                self.out.add(
                    Severity::Error,
                    Kind::Index,
                    *ioff,
                    REC,
                    format!("chunk_pos {} is not a chunk", info.pos),
                );
                continue;
            };
            described.insert(info.pos);
            let Some(actual) = &c.entries else { continue };
            let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
            for e in actual {
                *counts.entry(e.conn).or_default() += 1;
            }
            let said: BTreeMap<u32, u32> = info.counts.iter().copied().collect();
            let conns: BTreeSet<u32> = said.keys().chain(counts.keys()).copied().collect();
            for conn in conns {
                let (s, f) = (said.get(&conn).copied().unwrap_or(0), counts.get(&conn).copied().unwrap_or(0));
                if s != f {
                    let topic = self.topic(conn);
                    let msg = format!(
                        "connection {conn}: count {s} for the chunk at {}, which holds {f} of its messages",
                        info.pos
                    );
                    self.out.add_topic(Severity::Error, Kind::Index, *ioff, REC, topic, msg);
                }
            }
            let first = actual.iter().map(|e| e.time).min();
            let last = actual.iter().map(|e| e.time).max();
            if let (Some(first), Some(last)) = (first, last) {
                if first != info.start || last != info.end {
                    self.out.add(
                        Severity::Error,
                        Kind::Index,
                        *ioff,
                        REC,
                        format!(
                            "says the chunk at {} spans {}..{} ns, its messages span {first}..{last}",
                            info.pos, info.start, info.end
                        ),
                    );
                }
            }
        }
        for at in chunks.keys().filter(|k| !described.contains(k)) {
            self.out.add(
                Severity::Error,
                Kind::Index,
                *at,
                "ROS 1 chunk",
                "no chunk info record describes this chunk: readers that use the index skip it".into(),
            );
        }
    }
}

/// Checks the ROS 1 bag `buf` (the whole of `path`).
pub(super) fn check(
    path: &Path,
    file_index: usize,
    buf: &[u8],
    report: &mut Report,
    visitor: &mut dyn Visitor,
) -> FileSummary {
    let limits = Limits::default();
    let mut cx = Ctx {
        out: Sink::new(path, file_index, report, visitor),
        connections: HashMap::new(),
        index_connections: BTreeSet::new(),
        unknown: BTreeSet::new(),
        counts: HashMap::new(),
        chunks: BTreeMap::new(),
        last_chunk: None,
        infos: Vec::new(),
        latest: None,
    };
    const HDR: &str = "ROS 1 bag header";
    if !buf.starts_with(crate::ros1::MAGIC) {
        cx.out.add(
            Severity::Error,
            Kind::Structure,
            0,
            "ROS 1 magic",
            "the file does not start with #ROSBAG V2.0".into(),
        );
        return cx.out.summary;
    }
    let start = crate::ros1::MAGIC.len();
    let header = match record::parse_record(&buf[start..], start as u64, &limits) {
        Ok(r) => r,
        Err(e) => {
            cx.out.add(Severity::Error, Kind::Structure, start as u64, HDR, e.to_string());
            return cx.out.summary;
        }
    };
    let fields = (|| {
        if header.op()? != op::BAG_HEADER {
            return Err(crate::Error::Malformed {
                offset: start as u64,
                what: "bag header",
                reason: "the first record is not a bag header".into(),
            });
        }
        Ok((header.header.u64("index_pos")?, header.header.u32("conn_count")?, header.header.u32("chunk_count")?))
    })();
    let (index_pos, conn_count, chunk_count) = match fields {
        Ok(f) => f,
        Err(e) => {
            cx.out.add(Severity::Error, Kind::Structure, start as u64, HDR, e.to_string());
            (0, 0, 0)
        }
    };
    let len = buf.len() as u64;
    let indexed = index_pos != 0 && index_pos <= len;
    if index_pos == 0 {
        cx.out.add(
            Severity::Error,
            Kind::Index,
            start as u64,
            HDR,
            "index_pos is 0: the bag was never closed (a killed recorder?) and has no index; `rbag reindex` rebuilds it"
                .into(),
        );
    } else if index_pos > len {
        cx.out.add(
            Severity::Error,
            Kind::Index,
            start as u64,
            HDR,
            format!("index_pos {index_pos} is past the end of the file ({len} bytes)"),
        );
    }
    let mut pos = (start + header.len) as u64;
    let mut index_found = !indexed;
    while pos < len {
        if pos == index_pos {
            index_found = true;
        }
        let in_index = indexed && pos >= index_pos;
        let rec = match record::parse_record(&buf[pos as usize..], pos, &limits) {
            Ok(r) => r,
            Err(e) => {
                cx.out.add(Severity::Error, Kind::Structure, pos, "ROS 1 record", e.to_string());
                break;
            }
        };
        let next = pos + rec.len as u64;
        match rec.op() {
            Ok(op::CHUNK) => {
                if in_index {
                    cx.out.add(
                        Severity::Error,
                        Kind::Structure,
                        pos,
                        "ROS 1 chunk",
                        "a chunk inside the index section".into(),
                    );
                }
                let size = chunk::chunk_fields(&rec.header, pos).map(|f| f.1).unwrap_or(1);
                if rec.data.is_empty() && size == 0 && next < len {
                    cx.out.add(
                        Severity::Error,
                        Kind::Structure,
                        pos,
                        "ROS 1 chunk",
                        "a chunk its recorder never closed (sizes 0): its records run to the end of the file".into(),
                    );
                    let end = (len - next).min(limits.max_data_len) + next;
                    cx.chunk(&rec.header, &buf[next as usize..end as usize], pos, &limits, true);
                    break;
                }
                cx.chunk(&rec.header, rec.data, pos, &limits, false)
            }
            Ok(op::INDEX_DATA) => cx.index_data(&rec, pos),
            Ok(op::CONNECTION) => cx.connection(&rec, pos, "ROS 1 connection", in_index),
            Ok(op::CHUNK_INFO) => match chunk::parse_chunk_info(&rec) {
                Ok(info) => cx.infos.push((pos, info)),
                Err(e) => cx.out.add(Severity::Error, Kind::Structure, pos, "ROS 1 chunk info", e.to_string()),
            },
            Ok(op::MSG_DATA) => cx.out.add(
                Severity::Warning,
                Kind::Structure,
                pos,
                "ROS 1 message",
                "a message outside any chunk".into(),
            ),
            Ok(op::BAG_HEADER) => cx.out.add(Severity::Error, Kind::Structure, pos, HDR, "a second bag header".into()),
            Ok(other) => {
                cx.out.add(Severity::Warning, Kind::Structure, pos, "ROS 1 record", format!("unknown op 0x{other:02x}"))
            }
            Err(e) => cx.out.add(Severity::Error, Kind::Structure, pos, "ROS 1 record", e.to_string()),
        }
        pos = next;
    }
    if !index_found {
        cx.out.add(
            Severity::Error,
            Kind::Index,
            start as u64,
            HDR,
            format!("index_pos {index_pos} does not point at the start of a record"),
        );
    }
    cx.cross_check(index_pos, conn_count, chunk_count, indexed);
    for (id, n) in &cx.counts {
        if let Some(c) = cx.connections.get(id) {
            cx.out.summary.topic(&c.topic, &c.message_type, *n);
        }
    }
    cx.out.summary
}
