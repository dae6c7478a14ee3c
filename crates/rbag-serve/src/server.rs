//! Starting and stopping: the listening socket, the accept loop on a small tokio runtime, and
//! the playback thread.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use rbag_bag::Bag;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::channels::Catalog;
use crate::client::{self, Client, Subprotocol};
use crate::playback::{self, Command};
use crate::shared::Shared;
use crate::{http, Error, ServeOptions, MAX_CLIENT_MESSAGE_BYTES, SUBPROTOCOL_SDK, SUBPROTOCOL_V1};

/// A running server. Dropping it stops it, as [`Server::shutdown`] does.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<oneshot::Sender<()>>,
    playback: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Reads the bags' summaries, listens on `options.bind` and starts serving. Playback waits
    /// for the first subscription (see [`ServeOptions::start_after_clients`]).
    pub fn start(bags: Vec<Bag>, options: ServeOptions) -> Result<Server, Error> {
        if bags.is_empty() {
            return Err(Error::NoBags);
        }
        if !(options.rate.is_finite() && options.rate > 0.0) {
            return Err(Error::Rate(options.rate));
        }
        if options.client_queue_bytes == 0 {
            return Err(Error::QueueSize);
        }
        let catalog = Catalog::build(&bags)?;
        // Two workers: sockets are I/O-bound; the playback thread does the reading.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("rbag-serve-io")
            .enable_io()
            .enable_time()
            .build()
            .map_err(Error::Runtime)?;
        let listener = runtime
            .block_on(TcpListener::bind(options.bind))
            .map_err(|source| Error::Bind { addr: options.bind, source })?;
        let addr = listener.local_addr().map_err(|source| Error::Bind { addr: options.bind, source })?;
        let (commands, receiver) = mpsc::channel();
        let shared = Arc::new(Shared::new(bags, catalog, options, format!("ws://{addr}"), commands));
        let for_playback = shared.clone();
        let playback = std::thread::Builder::new()
            .name("rbag-serve-playback".into())
            .spawn(move || playback::run(&for_playback, receiver))
            .map_err(Error::Runtime)?;
        let (stop, stopped) = oneshot::channel();
        runtime.spawn(accept_loop(listener, shared.clone(), stopped));
        Ok(Server { addr, shared, runtime: Some(runtime), stop: Some(stop), playback: Some(playback) })
    }

    /// The address listened on (the port chosen when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The state shared with the page: bags, channels, playback.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Stops accepting, closes every connection and stops playback.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.shared.command(Command::Stop);
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(1));
        }
        if let Some(p) = self.playback.take() {
            let _ = p.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_now();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: oneshot::Receiver<()>) {
    loop {
        tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(connection(stream, shared.clone()));
                }
                // Out of file descriptors and the like: wait instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
        }
    }
}

/// One TCP connection: a WebSocket client, or a page request.
async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let head = match http::peek_head(&stream).await {
        Ok(head) => head,
        Err(e) => return http::refuse(stream, &e).await,
    };
    if !head.websocket {
        return http::answer(stream, head, shared).await;
    }
    let mut chosen = Subprotocol::V1;
    // The callback's type is tungstenite's; its error is an HTTP response, large by nature.
    #[allow(clippy::result_large_err)]
    let callback = |request: &Request, mut response: Response| -> Result<Response, ErrorResponse> {
        match choose_subprotocol(request) {
            Ok(Some((p, name))) => {
                chosen = p;
                response.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_static(name));
                Ok(response)
            }
            Ok(None) => Ok(response),
            Err(message) => {
                let mut refusal = ErrorResponse::new(Some(message));
                *refusal.status_mut() = StatusCode::BAD_REQUEST;
                Err(refusal)
            }
        }
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_CLIENT_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_CLIENT_MESSAGE_BYTES));
    let Ok(ws) = tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config)).await else {
        return;
    };
    let client = Arc::new(Client::new(shared.next_client_id(), chosen, shared.options().client_queue_bytes));
    client::serve(ws, client, shared).await;
}

/// The subprotocol to answer with: the SDK's when offered (it adds playback control), else
/// v1; none offered is treated as v1; only others offered is refused.
fn choose_subprotocol(request: &Request) -> Result<Option<(Subprotocol, &'static str)>, String> {
    let offered: Vec<String> = request
        .headers()
        .get_all("sec-websocket-protocol")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|p| p.trim().to_string()))
        .filter(|p| !p.is_empty())
        .collect();
    if offered.is_empty() {
        return Ok(None);
    }
    if offered.iter().any(|p| p == SUBPROTOCOL_SDK) {
        return Ok(Some((Subprotocol::Sdk, SUBPROTOCOL_SDK)));
    }
    if offered.iter().any(|p| p == SUBPROTOCOL_V1) {
        return Ok(Some((Subprotocol::V1, SUBPROTOCOL_V1)));
    }
    Err(format!(
        "rbag serve speaks the Foxglove WebSocket protocol: offer subprotocol {SUBPROTOCOL_V1} or {SUBPROTOCOL_SDK} (offered: {})",
        offered.join(", ")
    ))
}
