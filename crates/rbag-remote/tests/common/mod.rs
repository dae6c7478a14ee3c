//! A small HTTP/1.1 file server that honours `Range` (Python's http.server does not), with a
//! request log and fault injection, started per test on 127.0.0.1.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One request the server answered: method, path, the range asked for, bytes sent.
#[derive(Debug, Clone)]
#[allow(dead_code)] // read by tests that print the log
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
    pub fn totals(&self) -> (usize, u64) {
        let log = self.log.lock().unwrap();
        (log.len(), log.iter().map(|r| r.sent).sum())
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
        let data = match (status, std::fs::read(&file)) {
            (Some(s), _) => {
                write!(out, "HTTP/1.1 {s}\r\nContent-Length: 0\r\n\r\n")?;
                out.flush()?;
                log.lock().unwrap().push(Logged { method, path: rel, range: None, sent: 0 });
                continue;
            }
            (None, Err(_)) => {
                write!(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")?;
                out.flush()?;
                log.lock().unwrap().push(Logged { method, path: rel, range: None, sent: 0 });
                continue;
            }
            (None, Ok(d)) => d,
        };
        let len = data.len() as u64;
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
        let body = if method == "HEAD" { &[][..] } else { &data[start as usize..end as usize] };
        write!(out, "HTTP/1.1 {status}\r\nContent-Length: {}\r\nETag: {etag}\r\nAccept-Ranges: bytes\r\nLast-Modified: Thu, 26 Nov 2026 00:00:00 GMT\r\n", end - start)?;
        if status.starts_with("206") {
            write!(out, "Content-Range: bytes {start}-{}/{len}\r\n", end - 1)?;
        }
        write!(out, "\r\n")?;
        let sent = match cut {
            Some(n) => {
                let n = (n as usize).min(body.len());
                out.write_all(&body[..n])?;
                out.flush()?;
                log.lock().unwrap().push(Logged { method, path: rel, range: Some((start, end)), sent: n as u64 });
                return Ok(()); // connection dropped mid-body
            }
            None => {
                out.write_all(body)?;
                body.len() as u64
            }
        };
        out.flush()?;
        log.lock().unwrap().push(Logged { method, path: rel, range: range.map(|_| (start, end)), sent });
    }
}
