//! The little-endian layout of the MCAP records rbag writes (<https://mcap.dev/spec>): each
//! record is an opcode, a `u64` body length and the body. Strings are a `u32` byte length and
//! UTF-8; maps and arrays a `u32` byte length and their entries.
//!
//! Every function appends one whole record to a buffer, except `message_head` and
//! `chunk_head`, whose record ends with bytes the caller writes itself (a message's payload,
//! a chunk's records), so that large payloads are never copied into a header buffer.

use std::collections::BTreeMap;

use mcap::records::{AttachmentIndex, ChunkIndex, MetadataIndex, Statistics};

pub use super::records::op;

/// Summary Offset (not read by rbag, so not in `records::op`).
pub const SUMMARY_OFFSET: u8 = 0x0E;
/// A record's opcode and length.
pub const RECORD_HEAD: usize = 9;
/// A Message record up to its payload: opcode, length, channel id, sequence, two times.
pub const MESSAGE_HEAD: usize = RECORD_HEAD + 2 + 4 + 8 + 8;

/// Appends a record of `op` whose body `body` writes, with the body's length filled in.
fn record(out: &mut Vec<u8>, op: u8, body: impl FnOnce(&mut Vec<u8>)) {
    out.push(op);
    let at = out.len();
    out.extend_from_slice(&[0; 8]);
    body(out);
    let len = (out.len() - at - 8) as u64;
    out[at..at + 8].copy_from_slice(&len.to_le_bytes());
}

fn u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn string(out: &mut Vec<u8>, s: &str) {
    bytes32(out, s.as_bytes());
}

fn bytes32(out: &mut Vec<u8>, b: &[u8]) {
    u32(out, b.len() as u32);
    out.extend_from_slice(b);
}

/// A `u32` byte length, then what `entries` writes.
fn sized(out: &mut Vec<u8>, entries: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    entries(out);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

fn string_map(out: &mut Vec<u8>, map: &BTreeMap<String, String>) {
    sized(out, |out| {
        for (k, v) in map {
            string(out, k);
            string(out, v);
        }
    });
}

fn id_map(out: &mut Vec<u8>, map: &BTreeMap<u16, u64>) {
    sized(out, |out| {
        for (&k, &v) in map {
            u16(out, k);
            u64(out, v);
        }
    });
}

/// Header: profile and library.
pub fn header(out: &mut Vec<u8>, profile: &str, library: &str) {
    record(out, op::HEADER, |out| {
        string(out, profile);
        string(out, library);
    });
}

/// Schema: id, name, encoding, data.
pub fn schema(out: &mut Vec<u8>, id: u16, name: &str, encoding: &str, data: &[u8]) {
    record(out, op::SCHEMA, |out| {
        u16(out, id);
        string(out, name);
        string(out, encoding);
        bytes32(out, data);
    });
}

/// Channel: id, schema id, topic, message encoding, metadata.
pub fn channel(
    out: &mut Vec<u8>,
    id: u16,
    schema_id: u16,
    topic: &str,
    encoding: &str,
    metadata: &BTreeMap<String, String>,
) {
    record(out, op::CHANNEL, |out| {
        u16(out, id);
        u16(out, schema_id);
        string(out, topic);
        string(out, encoding);
        string_map(out, metadata);
    });
}

/// A Message record's first `MESSAGE_HEAD` bytes; its `data_len` bytes of payload follow.
pub fn message_head(
    channel_id: u16,
    sequence: u32,
    log_time: u64,
    publish_time: u64,
    data_len: usize,
) -> [u8; MESSAGE_HEAD] {
    let mut h = [0u8; MESSAGE_HEAD];
    h[0] = op::MESSAGE;
    h[1..9].copy_from_slice(&((MESSAGE_HEAD - RECORD_HEAD + data_len) as u64).to_le_bytes());
    h[9..11].copy_from_slice(&channel_id.to_le_bytes());
    h[11..15].copy_from_slice(&sequence.to_le_bytes());
    h[15..23].copy_from_slice(&log_time.to_le_bytes());
    h[23..31].copy_from_slice(&publish_time.to_le_bytes());
    h
}

/// What a Chunk record says about its records.
pub struct ChunkHead<'a> {
    pub message_start_time: u64,
    pub message_end_time: u64,
    pub uncompressed_size: u64,
    pub uncompressed_crc: u32,
    pub compression: &'a str,
    pub compressed_size: u64,
}

/// A Chunk record up to its records, which are `head.compressed_size` bytes that follow.
pub fn chunk_head(out: &mut Vec<u8>, head: &ChunkHead) {
    let body = 8 + 8 + 8 + 4 + 4 + head.compression.len() as u64 + 8 + head.compressed_size;
    out.push(op::CHUNK);
    u64(out, body);
    u64(out, head.message_start_time);
    u64(out, head.message_end_time);
    u64(out, head.uncompressed_size);
    u32(out, head.uncompressed_crc);
    string(out, head.compression);
    u64(out, head.compressed_size);
}

/// Message Index: channel id, then (log time, offset in the chunk's records) of each message.
pub fn message_index(out: &mut Vec<u8>, channel_id: u16, entries: &[(u64, u64)]) {
    record(out, op::MESSAGE_INDEX, |out| {
        u16(out, channel_id);
        sized(out, |out| {
            for &(time, offset) in entries {
                u64(out, time);
                u64(out, offset);
            }
        });
    });
}

/// The Attachment record up to its data (`data_len` bytes), and the length of the whole
/// record; the data and a `u32` CRC follow.
pub fn attachment_head(
    out: &mut Vec<u8>,
    log_time: u64,
    create_time: u64,
    name: &str,
    media_type: &str,
    data_len: u64,
) -> u64 {
    out.push(op::ATTACHMENT);
    let at = out.len();
    out.extend_from_slice(&[0; 8]);
    u64(out, log_time);
    u64(out, create_time);
    string(out, name);
    string(out, media_type);
    u64(out, data_len);
    let body = (out.len() - at - 8) as u64 + data_len + 4;
    out[at..at + 8].copy_from_slice(&body.to_le_bytes());
    RECORD_HEAD as u64 + body
}

/// Metadata: name and map.
pub fn metadata(out: &mut Vec<u8>, name: &str, map: &BTreeMap<String, String>) {
    record(out, op::METADATA, |out| {
        string(out, name);
        string_map(out, map);
    });
}

/// Data End, with the data section's CRC (0: none).
pub fn data_end(out: &mut Vec<u8>, crc: u32) {
    record(out, op::DATA_END, |out| u32(out, crc));
}

/// A private record of `op` whose body is `len` zero bytes.
pub fn zeros(out: &mut Vec<u8>, op: u8, len: usize) {
    record(out, op, |out| out.resize(out.len() + len, 0));
}

/// Chunk Index.
pub fn chunk_index(out: &mut Vec<u8>, c: &ChunkIndex) {
    record(out, op::CHUNK_INDEX, |out| {
        u64(out, c.message_start_time);
        u64(out, c.message_end_time);
        u64(out, c.chunk_start_offset);
        u64(out, c.chunk_length);
        id_map(out, &c.message_index_offsets);
        u64(out, c.message_index_length);
        string(out, &c.compression);
        u64(out, c.compressed_size);
        u64(out, c.uncompressed_size);
    });
}

/// Attachment Index.
pub fn attachment_index(out: &mut Vec<u8>, a: &AttachmentIndex) {
    record(out, op::ATTACHMENT_INDEX, |out| {
        u64(out, a.offset);
        u64(out, a.length);
        u64(out, a.log_time);
        u64(out, a.create_time);
        u64(out, a.data_size);
        string(out, &a.name);
        string(out, &a.media_type);
    });
}

/// Statistics.
pub fn statistics(out: &mut Vec<u8>, s: &Statistics) {
    record(out, op::STATISTICS, |out| {
        u64(out, s.message_count);
        u16(out, s.schema_count);
        u32(out, s.channel_count);
        u32(out, s.attachment_count);
        u32(out, s.metadata_count);
        u32(out, s.chunk_count);
        u64(out, s.message_start_time);
        u64(out, s.message_end_time);
        id_map(out, &s.channel_message_counts);
    });
}

/// Metadata Index.
pub fn metadata_index(out: &mut Vec<u8>, m: &MetadataIndex) {
    record(out, op::METADATA_INDEX, |out| {
        u64(out, m.offset);
        u64(out, m.length);
        string(out, &m.name);
    });
}

/// Summary Offset: where the group of `group_op` records lies in the summary section.
pub fn summary_offset(out: &mut Vec<u8>, group_op: u8, start: u64, length: u64) {
    record(out, SUMMARY_OFFSET, |out| {
        out.push(group_op);
        u64(out, start);
        u64(out, length);
    });
}

/// The Footer up to its CRC (which covers the summary section and these bytes); the caller
/// appends the `u32` CRC and the closing magic.
pub fn footer_head(out: &mut Vec<u8>, summary_start: u64, summary_offset_start: u64) {
    out.push(op::FOOTER);
    u64(out, 8 + 8 + 4);
    u64(out, summary_start);
    u64(out, summary_offset_start);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each record as the `mcap` crate parses it.
    fn parse(buf: &[u8]) -> mcap::records::Record<'_> {
        let len = u64::from_le_bytes(buf[1..9].try_into().unwrap()) as usize;
        assert_eq!(buf.len(), RECORD_HEAD + len, "one whole record");
        mcap::parse_record(buf[0], &buf[9..]).unwrap()
    }

    #[test]
    fn records_parse_in_the_mcap_crate() {
        use mcap::records::Record;
        let meta = BTreeMap::from([("a".to_string(), "b".to_string()), ("k".into(), "vv".into())]);
        let mut b = Vec::new();
        header(&mut b, "ros2", "rbag");
        assert!(matches!(parse(&b), Record::Header(h) if h.profile == "ros2" && h.library == "rbag"));
        b.clear();
        schema(&mut b, 3, "std_msgs/msg/String", "ros2msg", b"string data");
        assert!(matches!(parse(&b), Record::Schema { header, data } if header.id == 3 && &data[..] == b"string data"));
        b.clear();
        channel(&mut b, 2, 3, "/t", "cdr", &meta);
        assert!(matches!(parse(&b), Record::Channel(c) if c.id == 2 && c.schema_id == 3 && c.metadata == meta));
        b.clear();
        b.extend_from_slice(&message_head(2, 7, 10, 11, 3));
        b.extend_from_slice(b"xyz");
        assert!(matches!(parse(&b), Record::Message { header, data }
            if header.channel_id == 2 && header.sequence == 7 && header.log_time == 10
                && header.publish_time == 11 && &data[..] == b"xyz"));
        b.clear();
        let head = ChunkHead {
            message_start_time: 1,
            message_end_time: 2,
            uncompressed_size: 4,
            uncompressed_crc: 5,
            compression: "",
            compressed_size: 4,
        };
        chunk_head(&mut b, &head);
        b.extend_from_slice(b"abcd");
        assert!(matches!(parse(&b), Record::Chunk { header, data }
            if header.message_end_time == 2 && header.uncompressed_crc == 5 && &data[..] == b"abcd"));
        b.clear();
        message_index(&mut b, 2, &[(1, 0), (5, 40)]);
        assert!(matches!(parse(&b), Record::MessageIndex(m) if m.channel_id == 2 && m.records.len() == 2
            && m.records[1].log_time == 5 && m.records[1].offset == 40));
        b.clear();
        let n = attachment_head(&mut b, 1, 2, "f.txt", "text/plain", 3);
        b.extend_from_slice(b"abc");
        b.extend_from_slice(&0u32.to_le_bytes());
        assert_eq!(n as usize, b.len());
        assert!(matches!(parse(&b), Record::Attachment { header, data, .. }
            if header.name == "f.txt" && header.create_time == 2 && &data[..] == b"abc"));
        b.clear();
        metadata(&mut b, "m", &meta);
        assert!(matches!(parse(&b), Record::Metadata(m) if m.name == "m" && m.metadata == meta));
        b.clear();
        let ci = ChunkIndex {
            message_start_time: 1,
            message_end_time: 2,
            chunk_start_offset: 3,
            chunk_length: 4,
            message_index_offsets: BTreeMap::from([(1, 9), (4, 20)]),
            message_index_length: 5,
            compression: "zstd".into(),
            compressed_size: 6,
            uncompressed_size: 7,
        };
        chunk_index(&mut b, &ci);
        assert!(matches!(parse(&b), Record::ChunkIndex(c) if c == ci));
        b.clear();
        let ai = AttachmentIndex {
            offset: 1,
            length: 2,
            log_time: 3,
            create_time: 4,
            data_size: 5,
            name: "n".into(),
            media_type: "m".into(),
        };
        attachment_index(&mut b, &ai);
        assert!(matches!(parse(&b), Record::AttachmentIndex(a) if a == ai));
        b.clear();
        let st = Statistics {
            message_count: 1,
            schema_count: 2,
            channel_count: 3,
            attachment_count: 4,
            metadata_count: 5,
            chunk_count: 6,
            message_start_time: 7,
            message_end_time: 8,
            channel_message_counts: BTreeMap::from([(1, 1)]),
        };
        statistics(&mut b, &st);
        assert!(matches!(parse(&b), Record::Statistics(s) if s == st));
        b.clear();
        let mi = MetadataIndex { offset: 1, length: 2, name: "rosbag2".into() };
        metadata_index(&mut b, &mi);
        assert!(matches!(parse(&b), Record::MetadataIndex(m) if m == mi));
        b.clear();
        summary_offset(&mut b, op::CHANNEL, 10, 20);
        assert!(matches!(parse(&b), Record::SummaryOffset(s)
            if s.group_opcode == op::CHANNEL && s.group_start == 10 && s.group_length == 20));
        b.clear();
        data_end(&mut b, 9);
        assert!(matches!(parse(&b), Record::DataEnd(d) if d.data_section_crc == 9));
        b.clear();
        zeros(&mut b, 0x80, 5);
        assert_eq!(b, [0x80, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        b.clear();
        footer_head(&mut b, 100, 200);
        b.extend_from_slice(&7u32.to_le_bytes());
        assert!(matches!(parse(&b), Record::Footer(f)
            if f.summary_start == 100 && f.summary_offset_start == 200 && f.summary_crc == 7));
    }
}
