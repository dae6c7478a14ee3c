//! A small HTTP/1.1 file server that honours `Range` (Python's http.server does not), with a
//! request log and fault injection, started per test on 127.0.0.1.

// Shared by several test binaries, each of which uses part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use rbag_bag::{Bag, Filter};

/// One request the server answered: method, path, the range asked for, bytes sent.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub range: Option<(u64, u64)>,
    pub sent: u64,
}

/// What the server does wrong on purpose.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Answer 500 to the first N requests for a path.
    pub fail_first: HashMap<String, u32>,
    /// Answer 403 to every request for these paths.
    pub forbidden: Vec<String>,
    /// Close the connection after sending this many body bytes of a ranged GET, once per path.
    pub cut_after: HashMap<String, u64>,
}

pub struct Server {
    pub base: String,
    pub log: Arc<Mutex<Vec<Logged>>>,
    pub faults: Arc<Mutex<Faults>>,
}

impl Server {
    /// Serves the files under `root` (`/a/b.bag` is `root/a/b.bag`).
    pub fn start(root: &Path) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let faults = Arc::new(Mutex::new(Faults::default()));
        let (root, l, f) = (root.to_path_buf(), log.clone(), faults.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, l, f) = (root.clone(), l.clone(), f.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &root, &l, &f);
                });
            }
        });
        Server { base, log, faults }
    }

    /// Requests so far, and the body bytes they were sent.
    /// Requests served and bytes sent, once the log has settled: a request is logged after its
    /// body is flushed, which can be just after the client has read it and gone on.
    pub fn totals(&self) -> (usize, u64) {
        let read = || {
            let log = self.log.lock().unwrap();
            (log.len(), log.iter().map(|r| r.sent).sum::<u64>())
        };
        let mut last = read();
        for _ in 0..40 {
            std::thread::sleep(std::time::Duration::from_millis(30));
            let now = read();
            if now == last {
                break;
            }
            last = now;
        }
        last
    }

    pub fn clear(&self) {
        self.log.lock().unwrap().clear();
    }
}

fn serve(stream: TcpStream, root: &Path, log: &Mutex<Vec<Logged>>, faults: &Mutex<Faults>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    stream.set_nodelay(true)?;
    let mut out = std::io::BufWriter::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
        let mut range = None;
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some(v) = h.strip_prefix("Range: bytes=").or_else(|| h.strip_prefix("range: bytes=")) {
                let (a, b) = v.split_once('-').unwrap_or((v, ""));
                range = Some((a.parse::<u64>().unwrap_or(0), b.parse::<u64>().ok()));
            }
        }
        let rel = path.split('?').next().unwrap_or("").trim_start_matches('/').to_string();
        let mut f = faults.lock().unwrap();
        let status = if f.forbidden.contains(&rel) {
            Some("403 Forbidden")
        } else if let Some(n) = f.fail_first.get_mut(&rel).filter(|n| **n > 0) {
            *n -= 1;
            Some("500 Internal Server Error")
        } else {
            None
        };
        let cut = if method == "GET" && range.is_some() { f.cut_after.remove(&rel) } else { None };
        drop(f);
        let file = root.join(&rel);
        let len = match (status, std::fs::metadata(&file).ok().filter(|m| m.is_file())) {
            (Some(s), _) => {
                write!(out, "HTTP/1.1 {s}\r\nContent-Length: 0\r\n\r\n")?;
                out.flush()?;
                log.lock().unwrap().push(Logged { method, path: rel, range: None, sent: 0 });
                continue;
            }
            (None, None) => {
                write!(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")?;
                out.flush()?;
                log.lock().unwrap().push(Logged { method, path: rel, range: None, sent: 0 });
                continue;
            }
            (None, Some(m)) => m.len(),
        };
        let etag = format!(
            "\"{:x}-{len}\"",
            file.metadata()
                .map(|m| m.modified().ok())
                .ok()
                .flatten()
                .map(|t| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos())
                .unwrap_or(0)
        );
        let (status, start, end) = match range {
            Some((a, b)) if a < len => ("206 Partial Content", a, b.map_or(len, |b| (b + 1).min(len))),
            Some(_) => {
                write!(
                    out,
                    "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\n\r\n"
                )?;
                out.flush()?;
                continue;
            }
            None => ("200 OK", 0, len),
        };
        write!(out, "HTTP/1.1 {status}\r\nContent-Length: {}\r\nETag: {etag}\r\nAccept-Ranges: bytes\r\nLast-Modified: Thu, 26 Nov 2026 00:00:00 GMT\r\n", end - start)?;
        if status.starts_with("206") {
            write!(out, "Content-Range: bytes {start}-{}/{len}\r\n", end - 1)?;
        }
        write!(out, "\r\n")?;
        let body_len = if method == "HEAD" { 0 } else { end - start };
        // Read from the file as it is sent: objects may be gigabytes.
        let mut body = std::fs::File::open(&file)?;
        body.seek(SeekFrom::Start(start))?;
        let sent = match cut {
            Some(n) => {
                let n = std::io::copy(&mut body.take(n.min(body_len)), &mut out)?;
                out.flush()?;
                log.lock().unwrap().push(Logged { method, path: rel, range: Some((start, end)), sent: n });
                return Ok(()); // connection dropped mid-body
            }
            None => std::io::copy(&mut body.take(body_len), &mut out)?,
        };
        out.flush()?;
        log.lock().unwrap().push(Logged { method, path: rel, range: range.map(|_| (start, end)), sent });
    }
}

/// Writes a bag of one topic: `seconds` of messages at `hz`, `payload` bytes each, in chunks of
/// `chunk` bytes, uncompressed (so that its size is what the test asks for).
pub fn generate(path: &Path, format: rbag_storage::Format, seconds: u64, hz: u64, payload: usize, chunk: u64) {
    use rbag_storage::WriteOptions;
    let c = rbag_testkit::sample::string_connection(format, "/data");
    let options = WriteOptions { chunk_size: chunk, ..WriteOptions::default() };
    let mut w = rbag_storage::create(path, format, &options).unwrap();
    let id = w.add_connection(&c).unwrap();
    let start = 1_700_000_000_000_000_000u64;
    let mut data = vec![0u8; payload];
    for i in 0..seconds * hz {
        let t = start + i * 1_000_000_000 / hz;
        data[..8].copy_from_slice(&i.to_le_bytes());
        w.write(id, t, t, &data).unwrap();
    }
    w.finish().unwrap();
}

/// The corpus's indexed ROS 1 bags.
pub const ROS1: [&str; 4] = ["multi_none.bag", "multi_lz4.bag", "multi_bz2.bag", "small_chunks.bag"];

/// Every message of a bag: topic, log time, payload.
pub fn messages(bag: &Bag, filter: &Filter) -> Vec<(String, u64, Vec<u8>)> {
    bag.messages(filter)
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (bag.connection(m.connection).unwrap().topic.clone(), m.log_time, m.data.to_vec())
        })
        .collect()
}

/// The info without what differs remotely: the path; the frequencies, which need every chunk's
/// index data; and a ROS 1 bag's compression figures, which are in every chunk's header.
pub fn info_without_path(bag: &Bag) -> String {
    let mut info = bag.info().unwrap();
    info.path = Default::default();
    info.files.clear();
    info.topics.iter_mut().for_each(|t| t.frequency_hz = None);
    // Estimated sizes differ: a local read samples each connection's first chunk, a remote
    // one reads the summary alone (ROS 1 remotely has no chunk sizes at all).
    info.topics.iter_mut().filter(|t| t.size_estimated || info.storage == "ros1").for_each(|t| {
        t.size_bytes = None;
        t.size_estimated = false;
    });
    if info.storage == "ros1" {
        info.compression.clear();
    }
    format!("{info:?}")
}

/// The rosbag2 bags of the corpus, as paths under its `ros2` directory (`mcap/wbag`).
pub fn ros2_bags(root: &std::path::Path) -> Vec<String> {
    let mut bags = Vec::new();
    for storage in ["mcap", "sqlite3"] {
        for e in std::fs::read_dir(root.join(storage)).unwrap() {
            bags.push(format!("{storage}/{}", e.unwrap().file_name().to_string_lossy()));
        }
    }
    bags.sort();
    bags
}

/// The storage files of a rosbag2 directory, by name.
pub fn storage_files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mcap") || n.ends_with(".db3"))
        .collect();
    names.sort();
    names
}
