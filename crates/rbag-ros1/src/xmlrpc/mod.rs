//! XML-RPC as ROS 1 uses it: values, method calls and responses, over keep-alive HTTP/1.1.
//!
//! Hand-written on `quick-xml` (docs/ros1-live-spike.md §1): the ROS subset is small, and peers
//! need details no maintained crate gets right cheaply (roscpp's untyped `<value>text</value>`
//! strings, `system.multicall`, both `/` and `/RPC2` paths, no gzip).

mod http;
mod value;

pub use http::{call, serve, Client, Handler, Limits, Server, MAX_BODY, MAX_CONNECTIONS};
pub use value::{parse, write_call, write_fault, write_message, write_response, Message, Value};

/// What went wrong talking XML-RPC, naming the peer or the part of the body at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The body is not XML-RPC.
    #[error("XML-RPC body: {0}")]
    Parse(String),
    /// The connection failed.
    #[error("XML-RPC peer {uri}: {source}")]
    Io {
        /// The peer.
        uri: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The HTTP exchange failed (status, framing, limits).
    #[error("XML-RPC peer {uri}: HTTP: {msg}")]
    Http {
        /// The peer.
        uri: String,
        /// What went wrong.
        msg: String,
    },
    /// The peer answered with a fault.
    #[error("XML-RPC peer {uri}: fault {code}: {msg}")]
    Fault {
        /// The peer.
        uri: String,
        /// `faultCode`.
        code: i32,
        /// `faultString`.
        msg: String,
    },
}
