//! The HTTP side of the port: the request head is peeked (not consumed) to tell a WebSocket
//! upgrade from a plain request; plain requests are answered by [`crate::page::respond`].

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::shared::Shared;
use crate::MAX_REQUEST_HEAD_BYTES;

/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// An answer to a plain HTTP request.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// Status code (200, 404, ...).
    pub status: u16,
    /// `Content-Type`.
    pub content_type: String,
    /// More headers (`Content-Length` and `Connection: close` are added).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// A 200 HTML page.
    pub fn html(body: impl Into<String>) -> Self {
        Self::with(200, "text/html; charset=utf-8", body.into().into_bytes())
    }

    /// A 200 JSON document.
    pub fn json(body: impl Into<String>) -> Self {
        Self::with(200, "application/json", body.into().into_bytes())
    }

    /// A plain-text answer with `status`.
    pub fn text(status: u16, body: impl Into<String>) -> Self {
        Self::with(status, "text/plain; charset=utf-8", body.into().into_bytes())
    }

    /// 404 naming the path.
    pub fn not_found(path: &str) -> Self {
        Self::text(404, format!("not found: {path}\n"))
    }

    /// Any status, type and body.
    pub fn with(status: u16, content_type: &str, body: Vec<u8>) -> Self {
        HttpResponse { status, content_type: content_type.into(), headers: Vec::new(), body }
    }
}

/// A parsed request head.
pub(crate) struct Head {
    pub method: String,
    pub path: String,
    /// Bytes of the head, up to and including the blank line.
    pub len: usize,
    pub websocket: bool,
}

/// Why a head could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HeadError {
    #[error("request head larger than {MAX_REQUEST_HEAD_BYTES} bytes")]
    TooLarge,
    #[error("malformed request line")]
    Malformed,
    #[error("connection closed before the request head ended")]
    Closed,
    #[error("no complete request head within {HEAD_TIMEOUT:?}")]
    Timeout,
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Peeks at the request head without consuming it, so a WebSocket handshake can read it again.
pub(crate) async fn peek_head(stream: &TcpStream) -> Result<Head, HeadError> {
    let mut buf = vec![0u8; MAX_REQUEST_HEAD_BYTES];
    let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
    let mut seen = 0;
    loop {
        let n = tokio::time::timeout_at(deadline, stream.peek(&mut buf)).await.map_err(|_| HeadError::Timeout)??;
        if n == 0 {
            return Err(HeadError::Closed);
        }
        if let Some(end) = buf[..n].windows(4).position(|w| w == b"\r\n\r\n") {
            return parse(&buf[..end + 4]);
        }
        if n == buf.len() {
            return Err(HeadError::TooLarge);
        }
        if n == seen {
            // Peek returns what is buffered at once; wait for more to arrive.
            if tokio::time::Instant::now() >= deadline {
                return Err(HeadError::Timeout);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        seen = n;
    }
}

/// [`parse`] for the fuzzer: whether the head asks for a WebSocket, or why it is refused.
pub(crate) fn parse_head(head: &[u8]) -> Result<bool, String> {
    parse(head).map(|h| h.websocket).map_err(|e| e.to_string())
}

fn parse(head: &[u8]) -> Result<Head, HeadError> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let mut request = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(path), Some(version)) = (request.next(), request.next(), request.next()) else {
        return Err(HeadError::Malformed);
    };
    if !version.starts_with("HTTP/") || method.is_empty() || !path.starts_with('/') {
        return Err(HeadError::Malformed);
    }
    let websocket = lines.filter_map(|l| l.split_once(':')).any(|(name, value)| {
        name.trim().eq_ignore_ascii_case("upgrade")
            && value.split(',').any(|v| v.trim().eq_ignore_ascii_case("websocket"))
    });
    Ok(Head { method: method.into(), path: path.into(), len: head.len(), websocket })
}

/// Answers a plain request with [`crate::page::respond`] and closes the connection. The page
/// may read the bags, so it runs on a blocking thread, away from the sockets.
pub(crate) async fn answer(mut stream: TcpStream, head: Head, shared: Arc<Shared>) {
    let mut consumed = vec![0u8; head.len];
    if stream.read_exact(&mut consumed).await.is_err() {
        return;
    }
    let (method, path) = (head.method.clone(), head.path.clone());
    let response = tokio::task::spawn_blocking(move || crate::page::respond(&method, &path, &shared))
        .await
        .unwrap_or_else(|_| HttpResponse::text(500, "the page failed on this request\n"));
    write(&mut stream, &response, head.method != "HEAD").await;
}

/// Answers a request whose head could not be read.
pub(crate) async fn refuse(mut stream: TcpStream, error: &HeadError) {
    let status = if matches!(error, HeadError::TooLarge) { 431 } else { 400 };
    write(&mut stream, &HttpResponse::text(status, format!("{error}\n")), true).await;
}

async fn write(stream: &mut TcpStream, r: &HttpResponse, body: bool) {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    for (k, v) in &r.headers {
        // Header injection is the page's bug, not a crash: line breaks are dropped.
        out.push_str(&format!("{}: {}\r\n", k.replace(['\r', '\n'], ""), v.replace(['\r', '\n'], "")));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    if body {
        bytes.extend_from_slice(&r.body);
    }
    let _ = stream.write_all(&bytes).await;
    let _ = stream.shutdown().await;
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_tell_websocket_from_page_requests() {
        let h = parse(b"GET /x HTTP/1.1\r\nHost: a\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\n\r\n").unwrap();
        assert!(h.websocket);
        assert_eq!((h.method.as_str(), h.path.as_str()), ("GET", "/x"));
        assert!(!parse(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap().websocket);
        assert!(parse(b"garbage\r\n\r\n").is_err());
    }
}
