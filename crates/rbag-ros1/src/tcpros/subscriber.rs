//! The subscribing side: one [`Link`] is one TCP connection to one publisher of one topic.

use rbag_storage::ros1::keys;
use std::io::BufReader;
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::header::{read_frame, read_header, write_header, Header, WireError};
use super::{Limits, TcprosError};

/// What a subscriber asks a publisher for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscribeRequest {
    /// Resolved topic name.
    pub topic: String,
    /// The subscribing node's name.
    pub caller_id: String,
    /// The message type, or `*` to take whatever the publisher has (as `rosbag record` does).
    pub msg_type: String,
    /// The type's MD5, or `*`.
    pub md5sum: String,
    /// Sent when given; `rosbag record` sends none.
    pub message_definition: Option<String>,
    /// Asks the publisher to set `TCP_NODELAY` on its side.
    pub tcp_nodelay: bool,
}

impl SubscribeRequest {
    /// The header roscpp would send for this request: fields sorted by key.
    pub fn header(&self) -> Header {
        let mut h = Header::new();
        h.push(keys::CALLERID, self.caller_id.as_str());
        h.push(keys::MD5SUM, self.md5sum.as_str());
        if let Some(d) = &self.message_definition {
            h.push("message_definition", d.as_str());
        }
        h.push("tcp_nodelay", if self.tcp_nodelay { "1" } else { "0" });
        h.push("topic", self.topic.as_str());
        h.push("type", self.msg_type.as_str());
        h
    }
}

/// One connection to one publisher, after a successful handshake.
pub struct Link {
    reader: BufReader<TcpStream>,
    header: Header,
    topic: String,
    peer: String,
    limits: Limits,
    closer: LinkCloser,
}

/// A handle that closes a [`Link`] from another thread: a blocked
/// [`next_message`](Link::next_message) then returns `Ok(None)`.
#[derive(Clone)]
pub struct LinkCloser {
    stream: Arc<TcpStream>,
    closed: Arc<AtomicBool>,
}

impl LinkCloser {
    /// Shuts the socket down; later calls do nothing more.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

fn connect_any(addr: &str, timeout: Duration) -> std::io::Result<TcpStream> {
    let mut last = None;
    for a in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "the address resolves to nothing")))
}

/// Connects to the publisher at `addr` (`host:port`, from its `requestTopic` reply), sends the
/// request's header and reads the reply. `timeout` bounds the connect and each read and write
/// of the handshake; afterwards reads wait for as long as messages take.
///
/// A reply carrying `error=` is [`TcprosError::Refused`]. A reply whose `md5sum` differs from
/// a specific requested one (neither being `*`) is [`TcprosError::BadReply`].
pub fn connect(addr: &str, req: &SubscribeRequest, limits: &Limits, timeout: Duration) -> Result<Link, TcprosError> {
    let topic = req.topic.clone();
    let peer = addr.to_string();
    let conn_err = |source| TcprosError::Connect { topic: topic.clone(), peer: peer.clone(), source };
    let wire = |source| TcprosError::Wire { topic: topic.clone(), peer: peer.clone(), source };
    let stream = connect_any(addr, timeout).map_err(conn_err)?;
    let io = |what| move |source| WireError::Io { what, source };
    stream.set_nodelay(req.tcp_nodelay).map_err(io("setting TCP_NODELAY")).map_err(wire)?;
    stream.set_read_timeout(Some(timeout)).map_err(io("setting the read timeout")).map_err(wire)?;
    stream.set_write_timeout(Some(timeout)).map_err(io("setting the write timeout")).map_err(wire)?;
    let mut w = &stream;
    write_header(&mut w, &req.header()).map_err(io("writing the connection header")).map_err(wire)?;
    let closer_stream = stream.try_clone().map_err(io("cloning the socket")).map_err(wire)?;
    let mut reader = BufReader::with_capacity(64 << 10, stream);
    let header = read_header(&mut reader, limits).map_err(wire)?;
    if let Some(msg) = header.get("error") {
        return Err(TcprosError::Refused { topic, peer, msg: msg.to_string() });
    }
    if let Some(theirs) = header.get(keys::MD5SUM) {
        if req.md5sum != "*" && theirs != "*" && theirs != req.md5sum {
            let reason = format!("md5sum {theirs}, asked for {}", req.md5sum);
            return Err(TcprosError::BadReply { topic, peer, reason });
        }
    }
    let s = reader.get_ref();
    s.set_read_timeout(None).map_err(io("clearing the read timeout")).map_err(wire)?;
    s.set_write_timeout(None).map_err(io("clearing the write timeout")).map_err(wire)?;
    let closer = LinkCloser { stream: Arc::new(closer_stream), closed: Arc::new(AtomicBool::new(false)) };
    Ok(Link { reader, header, topic, peer, limits: *limits, closer })
}

impl Link {
    /// The publisher's reply: `callerid`, `latching`, `md5sum`, `message_definition`, `topic`,
    /// `type` from roscpp and rospy, though a publisher may send `*` or leave fields out.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The topic this link receives.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The publisher's address as given to [`connect`].
    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// Whether the publisher said it latches (`latching=1`).
    pub fn latching(&self) -> bool {
        self.header.get(keys::LATCHING).is_some_and(|v| v.trim() == "1")
    }

    /// The next message's bytes. `Ok(None)` when the publisher closed the connection between
    /// messages, or after [`LinkCloser::close`]; the connection ending inside a message, or a
    /// length over the limit, is an error.
    pub fn next_message(&mut self) -> Result<Option<Bytes>, TcprosError> {
        match read_frame(&mut self.reader, &self.limits) {
            Ok(m) => Ok(m),
            Err(_) if self.closer.is_closed() => Ok(None),
            Err(source) => Err(TcprosError::Wire { topic: self.topic.clone(), peer: self.peer.clone(), source }),
        }
    }

    /// Bounds how long [`next_message`](Self::next_message) waits (`None`: forever). A timeout
    /// is [`WireError::TimedOut`]; like any error it ends the link, since part of a frame may
    /// have been consumed. To stop a reader, prefer [`LinkCloser`].
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> Result<(), TcprosError> {
        self.reader.get_ref().set_read_timeout(timeout).map_err(|source| TcprosError::Wire {
            topic: self.topic.clone(),
            peer: self.peer.clone(),
            source: WireError::Io { what: "setting the read timeout", source },
        })
    }

    /// A handle that closes this link from another thread.
    pub fn closer(&self) -> LinkCloser {
        self.closer.clone()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        let _ = self.reader.get_ref().shutdown(Shutdown::Both);
    }
}
