//! [`Shared`]: what the server's parts (the accept loop, each client, the playback thread and the
//! HTTP page) share, and the one handle [`crate::page::respond`] gets.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};

use bytes::Bytes;
use rbag_bag::Bag;
use serde_json::{Map, Value};

use crate::channels::{Catalog, Channel};
use crate::client::{Client, Out};
use crate::playback::{Command, PlaybackSnapshot};
use crate::protocol::{self, ControlRequest, Level};
use crate::ServeOptions;

/// The server's state as the HTTP side sees it: the opened bags, the advertised channels and
/// the playback. Cheap to reach (`&Shared` is handed to every request) and safe to use from any
/// thread. Reading messages from [`Shared::bags`] is allowed (each read has its own cursor) but
/// competes with playback for the disk.
pub struct Shared {
    bags: Vec<Bag>,
    catalog: Catalog,
    options: ServeOptions,
    ws_url: String,
    session_id: String,
    pub(crate) playback: Mutex<PlaybackSnapshot>,
    clients: RwLock<Vec<Arc<Client>>>,
    commands: Mutex<Sender<Command>>,
    next_client: AtomicU64,
    /// What the quick-look page computed once (density, rates).
    pub(crate) page: crate::page::PageCache,
}

impl Shared {
    pub(crate) fn new(
        bags: Vec<Bag>,
        catalog: Catalog,
        options: ServeOptions,
        ws_url: String,
        commands: Sender<Command>,
    ) -> Shared {
        let session_id = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
        );
        let playback = PlaybackSnapshot::initial(catalog.range, options.rate);
        Shared {
            bags,
            catalog,
            options,
            ws_url,
            session_id,
            playback: Mutex::new(playback),
            clients: RwLock::default(),
            commands: Mutex::new(commands),
            next_client: AtomicU64::new(1),
            page: Default::default(),
        }
    }

    /// The bags being served, in the order given.
    pub fn bags(&self) -> &[Bag] {
        &self.bags
    }

    /// The channels advertised to clients (one per topic, encoding and schema).
    pub fn channels(&self) -> &[Channel] {
        &self.catalog.channels
    }

    /// First and last log time over all bags, nanoseconds; `None` when they hold no message.
    pub fn time_range(&self) -> Option<(u64, u64)> {
        self.catalog.range
    }

    /// Messages over all bags.
    pub fn message_count(&self) -> u64 {
        self.catalog.message_count
    }

    /// What the server warned about at start (schemas it could not find).
    pub fn warnings(&self) -> &[String] {
        &self.catalog.warnings
    }

    /// The WebSocket URL clients connect to (`ws://127.0.0.1:8765`).
    pub fn ws_url(&self) -> &str {
        &self.ws_url
    }

    /// The options the server runs with.
    pub fn options(&self) -> &ServeOptions {
        &self.options
    }

    /// The playback now: status, current log time, speed.
    pub fn playback(&self) -> PlaybackSnapshot {
        self.playback.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// WebSocket clients connected now.
    pub fn client_count(&self) -> usize {
        self.clients().len()
    }

    /// Plays, pauses, seeks or changes speed, as a viewer's playback control request does; the
    /// new state is sent to the clients that follow playback.
    pub fn control(&self, request: ControlRequest) {
        self.control_from(None, request);
    }

    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub(crate) fn next_client_id(&self) -> u64 {
        self.next_client.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn clients(&self) -> RwLockReadGuard<'_, Vec<Arc<Client>>> {
        self.clients.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn add_client(&self, client: Arc<Client>) {
        self.clients.write().unwrap_or_else(|e| e.into_inner()).push(client);
    }

    pub(crate) fn remove_client(&self, id: u64) {
        self.clients.write().unwrap_or_else(|e| e.into_inner()).retain(|c| c.id != id);
    }

    pub(crate) fn command(&self, command: Command) {
        // Fails only once playback has stopped (shutdown): nothing left to control.
        let _ = self.commands.lock().unwrap_or_else(|e| e.into_inner()).send(command);
    }

    pub(crate) fn subscribed(&self, client: u64) {
        self.command(Command::Subscribed { client });
    }

    pub(crate) fn control_from(&self, client: Option<u64>, request: ControlRequest) {
        self.command(Command::Control { client, request });
    }

    pub(crate) fn server_info_json(&self) -> String {
        let mut metadata = Map::new();
        let paths: Vec<String> = self.bags.iter().map(|b| b.path().display().to_string()).collect();
        metadata.insert("bags".into(), Value::String(paths.join("\n")));
        metadata.insert("messageCount".into(), Value::String(self.catalog.message_count.to_string()));
        metadata.insert("loop".into(), Value::String(self.options.loop_playback.to_string()));
        protocol::server_info(&self.options.name, &self.session_id, self.catalog.range, metadata)
    }

    pub(crate) fn playback_state_frame(&self, did_seek: bool, request_id: Option<&str>) -> Bytes {
        let p = self.playback();
        protocol::playback_state(p.status as u8, p.current_time, p.speed as f32, did_seek, request_id)
    }

    /// Sends the playback state to the clients that follow playback.
    pub(crate) fn broadcast_playback_state(&self, did_seek: bool, request_id: Option<&str>) {
        let frame = self.playback_state_frame(did_seek, request_id);
        for c in self.clients().iter().filter(|c| c.wants_playback()) {
            c.push_control(Out::Binary(frame.clone()));
        }
    }

    pub(crate) fn broadcast_status(&self, level: Level, message: &str) {
        for c in self.clients().iter() {
            c.status(level, message);
        }
    }
}
