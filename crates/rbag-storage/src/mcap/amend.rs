//! Adding attachments and metadata records to a closed MCAP file without touching its data:
//! the bytes up to its DataEnd record are copied as they are (so every offset in its summary
//! stays true), the new records follow, then a new DataEnd and the old summary with the new
//! index records, the statistics' counts and the summary offsets brought up to date.
//!
//! The result goes to a new file: callers stage it and rename it over the original only when
//! it is complete (`rbag attachment add`), so an interrupted add never loses the original.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::records::{op, MAGIC};
use crate::{Attachment, Error, MetadataRecord, Result};

const FOOTER_LEN: u64 = 1 + 8 + 20;
const DATA_END_LEN: u64 = 1 + 8 + 4;
const SUMMARY_OFFSET: u8 = 0x0E;

/// Writes `input` (a closed MCAP file) to `output` (created, must not exist) with
/// `attachments` and `metadata` appended to its data section and indexed in its summary.
/// Returns the offsets of the new records, attachments first.
pub fn amend(input: &Path, output: &Path, attachments: &[Attachment], metadata: &[MetadataRecord]) -> Result<Vec<u64>> {
    let file = File::open(input).map_err(|e| Error::io(input, e))?;
    let len = file.metadata().map_err(|e| Error::io(input, e))?.len();
    let read = |at: u64, n: u64| -> Result<Vec<u8>> {
        let mut buf = vec![0; n as usize];
        file.read_exact_at(&mut buf, at).map_err(|e| Error::io(input, e))?;
        Ok(buf)
    };
    let not_closed = |why: &str| {
        Error::Invalid(format!(
            "{}: {why}; only a closed MCAP file can take attachments or metadata (`rbag reindex` repairs one)",
            input.display()
        ))
    };
    let min = 2 * MAGIC.len() as u64 + FOOTER_LEN + DATA_END_LEN;
    if len < min
        || read(0, MAGIC.len() as u64)? != MAGIC
        || read(len - MAGIC.len() as u64, MAGIC.len() as u64)? != MAGIC
    {
        return Err(not_closed("it does not start and end with the MCAP magic"));
    }
    let footer_at = len - MAGIC.len() as u64 - FOOTER_LEN;
    let footer = read(footer_at, FOOTER_LEN)?;
    if footer[0] != op::FOOTER || u64_at(&footer, 1) != 20 {
        return Err(not_closed("it has no footer"));
    }
    let (summary_start, offsets_start) = (u64_at(&footer, 9), u64_at(&footer, 17));
    let data_end_at =
        if summary_start != 0 { summary_start.checked_sub(DATA_END_LEN) } else { footer_at.checked_sub(DATA_END_LEN) };
    let data_end_at = data_end_at
        .filter(|&d| d >= MAGIC.len() as u64)
        .ok_or_else(|| not_closed("its footer points outside the file"))?;
    let data_end = read(data_end_at, DATA_END_LEN)?;
    if data_end[0] != op::DATA_END || u64_at(&data_end, 1) != 4 {
        return Err(not_closed("there is no DataEnd record where its footer says the data section ends"));
    }
    let summary = if summary_start != 0 {
        let end = if offsets_start != 0 { offsets_start } else { footer_at };
        if end < summary_start || end > footer_at {
            return Err(not_closed("its summary offsets are outside the file"));
        }
        Some(read(summary_start, end - summary_start)?)
    } else {
        None
    };

    let out = File::options().write(true).create_new(true).open(output).map_err(|e| Error::io(output, e))?;
    let mut w = BufWriter::with_capacity(1 << 20, out);
    let io = |e: std::io::Error| Error::io(output, e);
    let copied = std::io::copy(&mut (&file).take(data_end_at), &mut w).map_err(io)?;
    if copied != data_end_at {
        return Err(Error::Invalid(format!("{}: it shrank while being read", input.display())));
    }
    let mut pos = data_end_at;
    let mut offsets = Vec::new();
    let mut indexes: Vec<(u8, Vec<u8>)> = Vec::new();
    for a in attachments {
        let mut body = Vec::with_capacity(a.data.len() + a.name.len() + a.media_type.len() + 40);
        body.extend_from_slice(&a.log_time.to_le_bytes());
        body.extend_from_slice(&a.create_time.to_le_bytes());
        string(&mut body, &a.name);
        string(&mut body, &a.media_type);
        body.extend_from_slice(&(a.data.len() as u64).to_le_bytes());
        body.extend_from_slice(&a.data);
        let crc = crc32fast::hash(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        let length = record(&mut w, op::ATTACHMENT, &body).map_err(io)?;
        let mut index = Vec::new();
        for v in [pos, length, a.log_time, a.create_time, a.data.len() as u64] {
            index.extend_from_slice(&v.to_le_bytes());
        }
        string(&mut index, &a.name);
        string(&mut index, &a.media_type);
        indexes.push((op::ATTACHMENT_INDEX, index));
        offsets.push(pos);
        pos += length;
    }
    for m in metadata {
        let mut body = Vec::new();
        string(&mut body, &m.name);
        let mut map = Vec::new();
        for (k, v) in &m.metadata {
            string(&mut map, k);
            string(&mut map, v);
        }
        body.extend_from_slice(&(map.len() as u32).to_le_bytes());
        body.extend_from_slice(&map);
        let length = record(&mut w, op::METADATA, &body).map_err(io)?;
        let mut index = Vec::new();
        index.extend_from_slice(&pos.to_le_bytes());
        index.extend_from_slice(&length.to_le_bytes());
        string(&mut index, &m.name);
        indexes.push((op::METADATA_INDEX, index));
        offsets.push(pos);
        pos += length;
    }
    // The data section's CRC covered the old bytes only: 0 says "not computed".
    pos += record(&mut w, op::DATA_END, &0u32.to_le_bytes()).map_err(io)?;

    let mut tail = Vec::new();
    let (new_summary_start, new_offsets_start) = match summary {
        None => (0, 0),
        Some(old) => {
            let groups = regroup(&old, summary_start, indexes, attachments.len() as u32, metadata.len() as u32)?;
            let mut group_at = Vec::new();
            for (opcode, records) in &groups {
                let start = pos + tail.len() as u64;
                for body in records {
                    record(&mut tail, *opcode, body).map_err(io)?;
                }
                group_at.push((*opcode, start, pos + tail.len() as u64 - start));
            }
            let offsets_at = pos + tail.len() as u64;
            if offsets_start != 0 {
                for (opcode, start, length) in group_at {
                    let mut body = vec![opcode];
                    body.extend_from_slice(&start.to_le_bytes());
                    body.extend_from_slice(&length.to_le_bytes());
                    record(&mut tail, SUMMARY_OFFSET, &body).map_err(io)?;
                }
            }
            (pos, if offsets_start != 0 { offsets_at } else { 0 })
        }
    };
    tail.push(op::FOOTER);
    tail.extend_from_slice(&20u64.to_le_bytes());
    tail.extend_from_slice(&new_summary_start.to_le_bytes());
    tail.extend_from_slice(&new_offsets_start.to_le_bytes());
    let crc = if new_summary_start != 0 { crc32fast::hash(&tail) } else { 0 };
    tail.extend_from_slice(&crc.to_le_bytes());
    tail.extend_from_slice(MAGIC);
    w.write_all(&tail).map_err(io)?;
    let out = w.into_inner().map_err(|e| io(e.into_error()))?;
    out.sync_all().map_err(io)?;
    Ok(offsets)
}

/// The old summary's records grouped by op code (first-appearance order, SummaryOffset
/// records dropped: they are rebuilt), with `added` index records joined to their groups and
/// the Statistics record's attachment and metadata counts raised.
#[allow(clippy::type_complexity)]
fn regroup(
    old: &[u8],
    base: u64,
    added: Vec<(u8, Vec<u8>)>,
    attachments: u32,
    metadata: u32,
) -> Result<Vec<(u8, Vec<Vec<u8>>)>> {
    let mut groups: Vec<(u8, Vec<Vec<u8>>)> = Vec::new();
    let mut order: BTreeMap<u8, usize> = BTreeMap::new();
    let mut push = |groups: &mut Vec<(u8, Vec<Vec<u8>>)>, opcode: u8, body: Vec<u8>| {
        let k = *order.entry(opcode).or_insert_with(|| {
            groups.push((opcode, Vec::new()));
            groups.len() - 1
        });
        groups[k].1.push(body);
    };
    for rec in super::records::Walk::new(old, 0, base, false) {
        let rec = rec?;
        let mut body = old[rec.body.clone()].to_vec();
        match rec.op {
            SUMMARY_OFFSET => continue,
            op::STATISTICS if body.len() >= 22 => {
                for (at, n) in [(14, attachments), (18, metadata)] {
                    let v = u32::from_le_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]).saturating_add(n);
                    body[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
            _ => {}
        }
        push(&mut groups, rec.op, body);
    }
    for (opcode, body) in added {
        push(&mut groups, opcode, body);
    }
    Ok(groups)
}

/// Writes one record; returns its length (op and length prefix included).
fn record(w: &mut impl Write, opcode: u8, body: &[u8]) -> std::io::Result<u64> {
    w.write_all(&[opcode])?;
    w.write_all(&(body.len() as u64).to_le_bytes())?;
    w.write_all(body)?;
    Ok(9 + body.len() as u64)
}

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}
