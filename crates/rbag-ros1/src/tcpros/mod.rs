//! TCPROS: how ROS 1 nodes move messages once the master has introduced them.
//!
//! A subscriber connects to the port a publisher named in its `requestTopic` reply and sends a
//! connection header; the publisher answers with its own header (or a single `error=` field and
//! a close), then sends frames: a `u32le` length and the serialized message. The codec is in
//! [`header`], the subscribing side in [`subscriber`], the publishing side in [`publisher`].
//! See docs/ros1-live-spike.md §3 for what roscpp and rospy send.
//!
//! Every length read from a socket is checked against [`Limits`] before anything is allocated
//! for it, and buffers grow only as bytes actually arrive: a peer that lies about a length costs
//! what it sent, not what it claimed.

#![warn(missing_docs)]

pub mod header;
pub mod publisher;
pub mod service;
pub mod subscriber;

pub use header::{read_frame, read_header, write_frame, write_header, Header, WireError};
pub use publisher::{Publication, SubscriberInfo, TcprosServer, TopicPublisher};
pub use service::{ServiceDef, ServiceFailure, ServiceHandler};
pub use subscriber::{connect, Link, LinkCloser, SubscribeRequest};

/// Upper bounds on lengths read from a peer, against lying length fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A connection header: it carries the full message definition, which can be large.
    pub max_header: usize,
    /// One message: roscpp itself refuses frames over 10^9 bytes.
    pub max_message: usize,
}

impl Default for Limits {
    /// 16 MiB headers and 1 GiB messages, the bounds `rbag-storage` uses for bag records.
    fn default() -> Self {
        Limits { max_header: 16 << 20, max_message: 1 << 30 }
    }
}

/// What went wrong on a TCPROS connection, naming the topic and the peer.
#[derive(Debug, thiserror::Error)]
pub enum TcprosError {
    /// The connection's bytes broke the protocol or ended early, or the socket failed.
    #[error("TCPROS topic {topic}, peer {peer}: {source}")]
    Wire {
        /// The topic.
        topic: String,
        /// The peer (`host:port` or caller id).
        peer: String,
        /// What broke.
        source: WireError,
    },
    /// The publisher replied with an `error=` field instead of a header.
    #[error("TCPROS topic {topic}: publisher {peer} refused the subscription: {msg}")]
    Refused {
        /// The topic.
        topic: String,
        /// The peer (`host:port` or caller id).
        peer: String,
        /// The publisher's `error=` text.
        msg: String,
    },
    /// The publisher's reply header does not fit what was asked for.
    #[error("TCPROS topic {topic}: publisher {peer} replied with an unusable header: {reason}")]
    BadReply {
        /// The topic.
        topic: String,
        /// The peer (`host:port` or caller id).
        peer: String,
        /// What does not fit.
        reason: String,
    },
    /// The TCP connection could not be made.
    #[error("TCPROS topic {topic}: connecting to {peer}: {source}")]
    Connect {
        /// The topic.
        topic: String,
        /// The peer (`host:port` or caller id).
        peer: String,
        /// The socket's error.
        source: std::io::Error,
    },
    /// The server's listener could not be bound.
    #[error("TCPROS server: binding a listener on {host}: {source}")]
    Bind {
        /// The host or address to listen on.
        host: String,
        /// The socket's error.
        source: std::io::Error,
    },
    /// `advertise` of a topic this server already publishes.
    #[error("TCPROS server: topic {topic} is already advertised")]
    AlreadyAdvertised {
        /// The topic.
        topic: String,
    },
    /// `advertise` after `shutdown`.
    #[error("TCPROS server: cannot advertise {topic}: the server is shut down")]
    ShutDown {
        /// The topic.
        topic: String,
    },
}
