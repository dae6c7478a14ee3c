//! What a browser gets on the WebSocket port: every plain HTTP request (not a WebSocket
//! upgrade) comes here as `respond(method, path, &shared)`, path with its query string.
//!
//! This is the minimal page: `GET /` says what the server is and where to connect; anything
//! else is 404. It is meant to be replaced by a real page and a JSON API; [`Shared`] gives them
//! the opened bags ([`Shared::bags`]), the channels, the playback state and control
//! ([`Shared::playback`], [`Shared::control`]). Keep this function quick: it runs on the
//! server's I/O threads.

use crate::{HttpResponse, Shared};

/// Answers one plain HTTP request. `method` is as sent (`GET`, `HEAD`, ...); `path` starts
/// with `/` and includes any `?query`.
pub fn respond(method: &str, path: &str, shared: &Shared) -> HttpResponse {
    let route = path.split('?').next().unwrap_or(path);
    match (method, route) {
        ("GET" | "HEAD", "/" | "/index.html") => HttpResponse::html(index(shared)),
        _ => HttpResponse::not_found(route),
    }
}

fn index(shared: &Shared) -> String {
    let bags: String =
        shared.bags().iter().map(|b| format!("<li>{}</li>", escape(&b.path().display().to_string()))).collect();
    let url = escape(shared.ws_url());
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>rbag serve</title></head><body>\n\
         <h1>rbag serve</h1>\n<p>Foxglove WebSocket server: connect a viewer (Foxglove, Lichtblick, PlotJuggler) to \
         <code>{url}</code>.</p>\n<p>{} channels, {} messages from:</p>\n<ul>{bags}</ul>\n</body></html>\n",
        shared.channels().len(),
        shared.message_count()
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
