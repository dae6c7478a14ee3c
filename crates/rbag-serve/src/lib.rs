//! `rbag serve` as a library: bags played to viewers (Foxglove, Lichtblick, PlotJuggler, the
//! npm `@foxglove/ws-protocol` client) over the Foxglove WebSocket protocol.
//!
//! Messages go out as recorded: the payload bytes of the bag, never re-encoded, with the
//! bag's own definitions as schemas (`ros1`/`ros1msg`, `cdr`/`ros2msg` or `ros2idl`). All the
//! bags given share one timeline, merged in log-time order, played by one thread at a rate the
//! clients can change (the SDK's playback control: play, pause, seek, speed). Each client has
//! a queue bounded in bytes, so one slow viewer costs its own messages, not the others' nor the
//! server's memory. Plain HTTP requests on the same port go to [`page::respond`].
//!
//! ```no_run
//! use rbag_serve::{ServeOptions, Server};
//! let bag = rbag_bag::Bag::open("run.bag")?;
//! let server = Server::start(vec![bag], ServeOptions::default())?;
//! println!("ws://{}", server.local_addr());
//! // ... until the user stops it:
//! server.shutdown();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The design, the bounds and what is left out: `docs/serve.md`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod channels;
mod client;
mod http;
pub mod page;
mod playback;
mod protocol;
mod server;
mod shared;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

pub use channels::{Channel, SchemaSource};
pub use http::HttpResponse;
pub use playback::{PlaybackSnapshot, PlaybackStatus};
pub use protocol::ControlRequest;
pub use server::Server;
pub use shared::Shared;

/// The parsers of untrusted input, for `fuzz/fuzz_targets/foxglove_client.rs`: client text and
/// binary messages, HTTP request heads, and the page's query strings. Not a stable API.
#[doc(hidden)]
pub mod fuzzing {
    /// Parses a client text message; the result's debug form, or the error's message.
    pub fn client_text(text: &str) -> String {
        match crate::protocol::parse_text(text) {
            Ok(m) => format!("{m:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// Parses a client binary message; the result's debug form, or the error's message.
    pub fn client_binary(data: &[u8]) -> String {
        match crate::protocol::parse_binary(data) {
            Ok(m) => format!("{m:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// Parses an HTTP request head: whether it asks for a WebSocket, or why it is refused.
    pub fn request_head(head: &[u8]) -> Result<bool, String> {
        crate::http::parse_head(head)
    }

    /// Parses a page query string into its pairs.
    pub fn page_query(query: &str) -> Vec<(String, String)> {
        crate::page::parse_query(query).into_iter().collect()
    }
}

/// The WebSocket subprotocol of the original Foxglove WebSocket protocol (Lichtblick,
/// PlotJuggler, npm `@foxglove/ws-protocol`).
pub const SUBPROTOCOL_V1: &str = "foxglove.websocket.v1";
/// The subprotocol current Foxglove offers; same messages, plus playback control.
pub const SUBPROTOCOL_SDK: &str = "foxglove.sdk.v1";

/// Bytes a client may have queued for sending before its messages are dropped: 64 MiB, a few
/// seconds of camera images, so that a viewer that stalls briefly loses nothing while one that
/// stops reading costs the server no more than this.
pub const DEFAULT_CLIENT_QUEUE_BYTES: usize = 64 << 20;

/// The largest message a client may send (JSON or binary): 1 MiB. Requests are small; a larger
/// one closes that client's connection, so nobody can make the server buffer without bound.
pub const MAX_CLIENT_MESSAGE_BYTES: usize = 1 << 20;

/// The largest HTTP request head read before deciding between WebSocket and a page: 16 KiB.
pub const MAX_REQUEST_HEAD_BYTES: usize = 16 << 10;

/// How the server plays and whom it serves.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where to listen. The protocol has no authentication: loopback unless the network is
    /// trusted. Port 0 picks a free port ([`Server::local_addr`] says which).
    pub bind: SocketAddr,
    /// Initial playback speed, a multiple of real time (clients may change it).
    pub rate: f64,
    /// Start again from the beginning at the end, instead of ending.
    pub loop_playback: bool,
    /// Bytes queued per client before its messages are dropped
    /// ([`DEFAULT_CLIENT_QUEUE_BYTES`]).
    pub client_queue_bytes: usize,
    /// Playback starts once this many clients have subscribed (default 1), so that clients
    /// without playback control get every message.
    pub start_after_clients: usize,
    /// The server's name in `serverInfo`.
    pub name: String,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 8765)),
            rate: 1.0,
            loop_playback: false,
            client_queue_bytes: DEFAULT_CLIENT_QUEUE_BYTES,
            start_after_clients: 1,
            name: "rbag serve".into(),
        }
    }
}

/// Why the server could not start. Once it runs, a client's bad request is answered with an
/// error status to that client and never stops the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Nothing to serve.
    #[error("no bags to serve")]
    NoBags,
    /// A bag's summary (time range, format facts) could not be read.
    #[error("{path}: cannot read its summary: {source}")]
    Summary {
        /// The bag.
        path: PathBuf,
        /// What failed.
        #[source]
        source: rbag_bag::Error,
    },
    /// The address could not be listened on (in use, not local, no permission).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The server's threads could not be started.
    #[error("cannot start the server's threads: {0}")]
    Runtime(#[source] std::io::Error),
    /// A playback speed that is not a positive number.
    #[error("invalid rate {0}: the rate must be a positive number")]
    Rate(f64),
    /// A client queue of zero bytes could hold nothing.
    #[error("invalid client queue size 0: it must hold at least one message")]
    QueueSize,
}
