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
    #[error("XML-RPC body: {0}")]
    Parse(String),
    #[error("XML-RPC peer {uri}: {source}")]
    Io { uri: String, source: std::io::Error },
    #[error("XML-RPC peer {uri}: HTTP: {msg}")]
    Http { uri: String, msg: String },
    #[error("XML-RPC peer {uri}: fault {code}: {msg}")]
    Fault { uri: String, code: i32, msg: String },
}
