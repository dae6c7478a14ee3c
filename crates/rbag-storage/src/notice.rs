//! Warnings the library gives while it goes on (a fallback it took), for front ends to show.
//!
//! They go to stderr as `rbag: warning: …` unless a program installs its own hook (the Python
//! binding turns them into Python warnings).

use std::sync::RwLock;

static HOOK: RwLock<Option<fn(&str)>> = RwLock::new(None);

/// Sends every later warning to `hook` instead of stderr.
pub fn set_hook(hook: fn(&str)) {
    if let Ok(mut h) = HOOK.write() {
        *h = Some(hook);
    }
}

/// Gives a warning to the hook, or prints it.
pub(crate) fn warn(message: &str) {
    match HOOK.read().ok().and_then(|h| *h) {
        Some(hook) => hook(message),
        None => eprintln!("rbag: warning: {message}"),
    }
}
