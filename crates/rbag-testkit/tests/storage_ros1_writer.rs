//! Properties of the ROS 1 writer and reader: chunking, index use, 64-bit offsets, poisoning,
//! and acceptance of rbag's bags by Debian's rosbag and by rosbags.

use std::io::{self, Seek, SeekFrom, Write};
use std::path::Path;

use rbag_storage::ros1::{record, Ros1Reader, Ros1Writer};
use rbag_storage::{Compression, Filter, StorageReader, StorageWriter, WriteOptions};
use rbag_testkit::{digest, oracle_python, ros1_dump, rosbag_python, sample};

const START: u64 = 1_700_000_000_000_000_000;

fn write_sample(path: &Path, options: WriteOptions, duration_ns: u64) -> Vec<(usize, u64, Vec<u8>)> {
    let mut w = rbag_storage::create(path, rbag_storage::Format::Ros1, &options).unwrap();
    let msgs = sample::write(w.as_mut(), START, duration_ns).unwrap();
    w.finish().unwrap();
    msgs
}

#[test]
fn chunks_written_out_of_time_order_read_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unsorted.bag");
    let mut w =
        rbag_storage::create(&path, rbag_storage::Format::Ros1, &WriteOptions { chunk_size: 64, ..Default::default() })
            .unwrap();
    let id = w.add_connection(&sample::connection(&sample::TOPICS[0])).unwrap();
    let times: Vec<u64> = (0..50u64).map(|i| START + (49 - i) * 1000).collect();
    for &t in &times {
        w.write(id, t, t, &sample::payload(&sample::TOPICS[0], t)).unwrap();
    }
    w.finish().unwrap();
    let r = Ros1Reader::open(&path).unwrap();
    let starts: Vec<u64> = r.chunk_spans().iter().map(|s| s.1).collect();
    assert!(
        starts.len() > 10 && starts.windows(2).all(|w| w[0] > w[1]),
        "chunks are in falling time order: {starts:?}"
    );
    let read: Vec<u64> = r.messages(&Filter::default()).unwrap().map(|m| m.unwrap().log_time).collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(read, sorted);
}

#[test]
fn chunks_are_flushed_by_time_interval() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("interval.bag");
    let interval = 100_000_000;
    let msgs =
        write_sample(&path, WriteOptions { chunk_interval_ns: Some(interval), ..Default::default() }, 2_000_000_000);
    let r = Ros1Reader::open(&path).unwrap();
    let spans = r.chunk_spans();
    assert!(spans.len() >= 19, "2 s at 100 ms per chunk: {} chunks", spans.len());
    for (pos, start, end, _) in &spans {
        assert!(end - start <= interval, "chunk at {pos} spans {} ns", end - start);
    }
    assert_eq!(spans.iter().map(|s| s.3).sum::<u64>(), msgs.len() as u64);
    // Without the interval, the same data fits one 768 KiB chunk.
    let one = dir.path().join("one.bag");
    write_sample(&one, WriteOptions::default(), 2_000_000_000);
    assert_eq!(Ros1Reader::open(&one).unwrap().chunk_spans().len(), 1);
}

#[test]
fn the_index_serves_info_nth_and_time_windows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("indexed.bag");
    let msgs = write_sample(
        &path,
        WriteOptions { compression: Compression::Lz4, chunk_interval_ns: Some(1_000_000_000), ..Default::default() },
        20_000_000_000,
    );
    let r = Ros1Reader::open(&path).unwrap();
    let chunks = r.chunk_spans().len() as u64;
    assert!(chunks >= 20);

    let info = r.info().unwrap();
    assert_eq!(info.message_count, msgs.len() as u64);
    assert_eq!(r.stats().chunks_read, 0, "info reads no chunk data");
    assert_eq!(r.stats().chunks_decompressed, 0, "info decompresses no chunk");

    let chatter: Vec<_> = msgs.iter().filter(|m| m.0 == 0).collect();
    let m = r.nth("/chatter", 1234).unwrap().unwrap();
    assert_eq!((m.log_time, m.data.to_vec()), (chatter[1234].1, chatter[1234].2.clone()));
    assert_eq!(r.stats().chunks_decompressed, 1, "nth decompresses exactly one chunk");

    let before = r.stats().chunks_decompressed;
    let window = Filter { start: Some(START + 5_500_000_000), end: Some(START + 7_200_000_000), ..Filter::default() };
    let got = r.messages(&window).unwrap().filter(|m| m.is_ok()).count();
    assert_eq!(got, msgs.iter().filter(|m| window.accepts_time(m.1)).count());
    let used = r.stats().chunks_decompressed - before;
    assert!(used <= 3, "a 1.7 s window over 1 s chunks touches at most 3 chunks, decompressed {used} of {chunks}");
}

/// A sink that counts bytes and keeps only small writes (record headers, index), keyed by
/// offset, so a >4 GiB bag can be checked without storing it.
#[derive(Default)]
struct CountingSink {
    pos: u64,
    len: u64,
    small: std::collections::BTreeMap<u64, Vec<u8>>,
}

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() < 1 << 20 {
            self.small.insert(self.pos, buf.to_vec());
        }
        self.pos += buf.len() as u64;
        self.len = self.len.max(self.pos);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for CountingSink {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => (self.len as i64 + d) as u64,
            SeekFrom::Current(d) => (self.pos as i64 + d) as u64,
        };
        Ok(self.pos)
    }
}

#[test]
fn offsets_past_4_gib_are_exact() {
    let mut sink = CountingSink::default();
    let payload = vec![7u8; 1 << 20];
    let count = 4200u64; // 4.1 GiB of payload
    {
        let mut w = Ros1Writer::new(&mut sink, Path::new("<sink>"), WriteOptions::default()).unwrap();
        let id = w.add_connection(&sample::connection(&sample::TOPICS[0])).unwrap();
        for i in 0..count {
            w.write(id, START + i, START + i, &payload).unwrap();
        }
        w.close().unwrap();
    }
    assert!(sink.len > 4 << 30);
    // The bag header was patched in place with the index position.
    let header = &sink.small[&(record::MAGIC.len() as u64)];
    let rec = record::parse_record(header, 13, &record::Limits::default()).unwrap();
    let index_pos = rec.header.u64("index_pos").unwrap();
    assert!(index_pos > 4 << 30);
    assert_eq!(rec.header.u32("chunk_count").unwrap() as u64, count);
    // Every chunk info points at a chunk record written exactly there.
    let index: Vec<u8> = sink.small.range(index_pos..).flat_map(|(_, b)| b.iter().copied()).collect();
    let mut checked = 0;
    let mut last = 0;
    for rec in record::Records::new(&index, index_pos, record::Limits::default()) {
        let rec = rec.unwrap();
        if rec.op().unwrap() != record::op::CHUNK_INFO {
            continue;
        }
        let pos = rec.header.u64("chunk_pos").unwrap();
        let head = sink.small.get(&pos).unwrap_or_else(|| panic!("no write starts at chunk_pos {pos}"));
        // The chunk header is written alone (its data follows in a separate write).
        let header_len = u32::from_le_bytes(head[..4].try_into().unwrap()) as usize;
        let header = record::Header::parse(&head[4..4 + header_len], pos).unwrap();
        assert_eq!(header.op().unwrap(), record::op::CHUNK, "chunk_pos {pos}");
        last = last.max(pos);
        checked += 1;
    }
    assert_eq!(checked, count);
    assert!(last > 4 << 30, "the last chunk sits past 4 GiB: {last}");
}

/// Accepts `limit` bytes, then fails like a full disk.
struct FullDisk {
    written: u64,
    limit: u64,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written + buf.len() as u64 > self.limit {
            return Err(io::Error::from_raw_os_error(28));
        }
        self.written += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for FullDisk {
    fn seek(&mut self, _: SeekFrom) -> io::Result<u64> {
        Ok(self.written)
    }
}

#[test]
fn the_writer_is_poisoned_after_an_io_error() {
    let mut w = Ros1Writer::new(
        FullDisk { written: 0, limit: 100_000 },
        Path::new("full.bag"),
        WriteOptions { chunk_size: 10_000, ..Default::default() },
    )
    .unwrap();
    let id = w.add_connection(&sample::connection(&sample::TOPICS[0])).unwrap();
    let mut first_err = None;
    for i in 0..1000 {
        if let Err(e) = w.write(id, START + i, START + i, &[1u8; 500]) {
            first_err = Some(e);
            break;
        }
    }
    let e = first_err.expect("the disk fills up");
    assert!(e.to_string().contains("full.bag"), "the error names the file: {e}");
    let again = w.write(id, START, START, b"x").unwrap_err();
    assert!(matches!(again, rbag_storage::Error::Poisoned(_)), "{again}");
    assert!(Box::new(w).finish().is_err());
}

/// Bags rbag writes are read back by Debian's rosbag (and every message deserialised) and by
/// rosbags, with identical payloads and times.
#[test]
fn rosbag_and_rosbags_read_what_rbag_writes() {
    let test = "rosbag_and_rosbags_read_what_rbag_writes";
    let (Some(py), Some(venv)) = (rosbag_python(test), oracle_python(test)) else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for compression in [Compression::None, Compression::Bz2, Compression::Lz4] {
        for chunk_size in [1u64, 4096, 768 * 1024] {
            cases.push(WriteOptions { compression, chunk_size, chunk_interval_ns: None, ..WriteOptions::default() });
        }
        cases.push(WriteOptions {
            compression,
            chunk_size: 768 * 1024,
            chunk_interval_ns: Some(250_000_000),
            ..WriteOptions::default()
        });
    }
    for (i, opts) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("case{i}.bag"));
        let written = write_sample(&path, opts.clone(), 3_000_000_000);
        let expect: Vec<(String, u64, String)> =
            written.iter().map(|(k, t, d)| (sample::TOPICS[*k].topic.to_string(), *t, digest(d))).collect();
        for (lib, python) in [("rosbag", &py), ("rosbags", &venv)] {
            let dump = ros1_dump(python, lib, &path);
            let got: Vec<(String, u64, String)> = dump["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (m[0].as_str().unwrap().into(), m[1].as_u64().unwrap(), m[2].as_str().unwrap().into()))
                .collect();
            let mut sorted_expect = expect.clone();
            let mut sorted_got = got.clone();
            sorted_expect.sort();
            sorted_got.sort();
            assert_eq!(sorted_got, sorted_expect, "{lib} on {opts:?}");
            assert!(got.windows(2).all(|w| w[0].1 <= w[1].1), "{lib} reads in time order");
            for t in sample::TOPICS {
                let topic = &dump["topics"][t.topic];
                assert_eq!(topic["md5sum"], t.md5sum, "{lib} {opts:?}");
            }
            if lib == "rosbag" {
                assert_eq!(dump["decoded"].as_u64(), Some(written.len() as u64), "rosbag deserialises every message");
            }
        }
    }
}
