//! Writes small seed inputs for both fuzz targets:
//! `cargo run --release --example make_seeds -- corpus` fills `corpus/ros1_bag` and
//! `corpus/ros1_record`. The real bags in /work/shared/corpus/ros1 are copied by run.sh.
//!
//! Bags are written with `Ros1Writer` and then compacted: the bag header loses its 4 KiB of
//! padding (and chunk positions shift accordingly), so the fuzzer spends its mutations on
//! records rather than on spaces.

use std::path::{Path, PathBuf};

use rbag_storage::ros1::record::{op, parse_record, write_record, Limits, Records};
use rbag_storage::ros1::{Ros1Writer, MAGIC};
use rbag_storage::{Compression, Connection, StorageWriter, WriteOptions};

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpus".into()));
    let bag_dir = root.join("ros1_bag");
    let rec_dir = root.join("ros1_record");
    std::fs::create_dir_all(&bag_dir).unwrap();
    std::fs::create_dir_all(&rec_dir).unwrap();
    let tmp = std::env::temp_dir().join(format!("rbag-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();

    let mut n = 0;
    for c in [Compression::None, Compression::Lz4, Compression::Bz2] {
        for (msgs, chunk_size) in [(1u32, 1 << 20), (6, 64), (20, 300)] {
            let path = tmp.join(format!("{}-{msgs}.bag", c.name()));
            write_bag(&path, c, msgs, chunk_size);
            let full = std::fs::read(&path).unwrap();
            let compact = compact(&full);
            let name = format!("gen-{}-{msgs}", c.name());
            save(&bag_dir, &format!("{name}.bag"), &compact);
            check(&tmp, &compact, msgs);
            // Variants the scanner handles: no index, a torn tail, a chunk left open.
            let (index_pos, first) = header_info(&compact);
            let mut unindexed = compact[..index_pos as usize].to_vec();
            set_index_pos(&mut unindexed, first, 0);
            save(&bag_dir, &format!("{name}-unindexed.bag"), &unindexed);
            let torn_at = first + (index_pos - first) * 2 / 3;
            save(&bag_dir, &format!("{name}-torn.bag"), &unindexed[..torn_at as usize]);
            if let Some(open) = open_chunk(&unindexed, first) {
                save(&bag_dir, &format!("{name}-open.bag"), &open);
            }
            // Every record of the file for the record target, and the raw chunk data of the
            // uncompressed bags (message and connection records).
            for (i, rec) in Records::new(&compact[MAGIC.len()..], 0, Limits::default()).enumerate() {
                let rec = rec.unwrap();
                let bytes = &compact[MAGIC.len() + rec.offset as usize..][..rec.len];
                save(&rec_dir, &format!("{name}-rec{i}.bin"), bytes);
                if c == Compression::None && rec.op().unwrap() == op::CHUNK {
                    save(&rec_dir, &format!("{name}-chunkdata{i}.bin"), rec.data);
                }
            }
            n += 1;
        }
    }
    // The unpadded bag header alone, and a bag with only a header (empty bag).
    let empty = tmp.join("empty.bag");
    Ros1Writer::create(&empty, WriteOptions::default()).unwrap().close().unwrap();
    save(&bag_dir, "gen-empty.bag", &compact(&std::fs::read(&empty).unwrap()));
    std::fs::remove_dir_all(&tmp).ok();
    eprintln!("wrote seeds for {n} bags into {}", root.display());
}

/// The compacted bag must still read back whole, or the seeds teach the fuzzer nothing.
fn check(tmp: &Path, bag: &[u8], msgs: u32) {
    use rbag_storage::{Filter, StorageReader};
    let p = tmp.join("check.bag");
    std::fs::write(&p, bag).unwrap();
    let r = rbag_storage::ros1::Ros1Reader::open(&p).unwrap();
    assert!(r.is_indexed());
    assert_eq!(r.info().unwrap().message_count, msgs as u64);
    let n = r.messages(&Filter::default()).unwrap().map(|m| m.unwrap()).count();
    assert_eq!(n, msgs as usize);
}

fn save(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn write_bag(path: &Path, compression: Compression, msgs: u32, chunk_size: u64) {
    let opts = WriteOptions { compression, chunk_size, chunk_interval_ns: None, ..WriteOptions::default() };
    let mut w: Box<dyn StorageWriter> = Box::new(Ros1Writer::create(path, opts).unwrap());
    let mut ids = Vec::new();
    for (topic, ty) in [("/chatter", "std_msgs/String"), ("/pose", "geometry_msgs/Point")] {
        let mut conn = Connection {
            topic: topic.into(),
            message_type: ty.into(),
            definition: "float64 x\n".into(),
            ..Connection::default()
        };
        conn.metadata.insert("md5sum".into(), "992ce8a1687cec8c8bd883ec73ca41d1".into());
        conn.metadata.insert("callerid".into(), "/talker".into());
        ids.push(w.add_connection(&conn).unwrap());
    }
    for i in 0..msgs {
        let conn = ids[(i % 2) as usize];
        let t = 1_700_000_000_000_000_000 + (i as u64 % 7) * 100_000_000 + i as u64;
        let payload: Vec<u8> = (0..(4 + i % 9)).map(|b| b as u8).collect();
        w.write(conn, t, t, &payload).unwrap();
    }
    w.finish().unwrap();
}

/// (index_pos, offset of the first record after the bag header).
fn header_info(bag: &[u8]) -> (u64, u64) {
    let rec = parse_record(&bag[MAGIC.len()..], MAGIC.len() as u64, &Limits::default()).unwrap();
    (rec.header.u64("index_pos").unwrap(), (MAGIC.len() + rec.len) as u64)
}

fn set_index_pos(bag: &mut [u8], first: u64, index_pos: u64) {
    let hdr = &bag[MAGIC.len()..first as usize];
    let at = find(hdr, b"index_pos=").unwrap() + MAGIC.len() + b"index_pos=".len();
    bag[at..at + 8].copy_from_slice(&index_pos.to_le_bytes());
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Drops the bag header's padding and shifts index_pos and every chunk_pos to match.
fn compact(bag: &[u8]) -> Vec<u8> {
    let limits = Limits::default();
    let head = parse_record(&bag[MAGIC.len()..], MAGIC.len() as u64, &limits).unwrap();
    let mut out = MAGIC.to_vec();
    let new_fields: Vec<(String, Vec<u8>)> =
        head.header.fields().map(|(k, v)| (String::from_utf8_lossy(k).into_owned(), v.to_vec())).collect();
    // Placeholder header first, to learn its length; then the real one.
    let mut probe = Vec::new();
    write_fields(&mut probe, &new_fields, &[]);
    let old_first = (MAGIC.len() + head.len) as u64;
    let new_first = (MAGIC.len() + probe.len()) as u64;
    let delta = old_first - new_first;
    let index_pos = head.header.u64("index_pos").unwrap();
    let shift = |p: u64| if p == 0 { 0 } else { p - delta };
    let fields: Vec<(String, Vec<u8>)> = new_fields
        .into_iter()
        .map(|(k, v)| if k == "index_pos" { (k, shift(index_pos).to_le_bytes().to_vec()) } else { (k, v) })
        .collect();
    write_fields(&mut out, &fields, &[]);
    let body = &bag[old_first as usize..];
    let idx = (index_pos.max(old_first) - old_first) as usize;
    out.extend_from_slice(&body[..idx]);
    for rec in Records::new(&body[idx..], index_pos, limits) {
        let rec = rec.unwrap();
        let fields: Vec<(String, Vec<u8>)> = rec
            .header
            .fields()
            .map(|(k, v)| {
                let k = String::from_utf8_lossy(k).into_owned();
                if k == "chunk_pos" {
                    let p = u64::from_le_bytes(v[..8].try_into().unwrap());
                    (k, shift(p).to_le_bytes().to_vec())
                } else {
                    (k, v.to_vec())
                }
            })
            .collect();
        write_fields(&mut out, &fields, rec.data);
    }
    out
}

fn write_fields(out: &mut Vec<u8>, fields: &[(String, Vec<u8>)], data: &[u8]) {
    let f: Vec<(&str, &[u8])> = fields.iter().map(|(k, v)| (k.as_str(), v.as_slice())).collect();
    write_record(out, &f, data);
}

/// The last chunk turned into an open one (size 0, data length 0), as a killed recorder
/// leaves it.
fn open_chunk(bag: &[u8], first: u64) -> Option<Vec<u8>> {
    let mut last = None;
    for rec in Records::new(&bag[first as usize..], first, Limits::default()) {
        let rec = rec.ok()?;
        if rec.op().ok()? == op::CHUNK {
            last = Some((rec.offset as usize, rec.len, rec.data.len()));
        }
    }
    let (at, len, dlen) = last?;
    let mut out = bag[..at + len].to_vec();
    let hdr_end = at + len - dlen - 4;
    let size_at = at + find(&out[at..hdr_end], b"size=")? + 5;
    out[size_at..size_at + 4].copy_from_slice(&0u32.to_le_bytes());
    out[hdr_end..hdr_end + 4].copy_from_slice(&0u32.to_le_bytes());
    Some(out)
}
