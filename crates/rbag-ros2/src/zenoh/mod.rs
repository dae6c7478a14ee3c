//! A ROS 2 graph on Zenoh, as rmw_zenoh_cpp runs it, with no ROS installed: a Zenoh session
//! configured as rmw_zenoh's default (a peer connecting to a router at `tcp/localhost:7447`,
//! multicast scouting off), the router check, and, when no router answers, a router started in
//! this process. The names, tokens and attachments are [`crate::zenoh_wire`]'s; see
//! `docs/ros2-zenoh-choice.md` for why the `zenoh` crate directly.
//!
//! The environment is rmw_zenoh's: `ZENOH_SESSION_CONFIG_URI` (a JSON5 session config instead
//! of the default), `ZENOH_ROUTER_CONFIG_URI` (the embedded router's), `ZENOH_CONFIG_OVERRIDE`
//! (`key=json5;key=json5` applied to the session config) and `ZENOH_ROUTER_CHECK_ATTEMPTS`
//! (unset: 1, 0: until one answers, negative: no check).

mod client;
mod graph;
mod publisher;
mod service;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use zenoh::Wait;

pub use client::ZenohClient;
pub use graph::ZenohGraph;
pub use publisher::ZenohPublisher;
pub use service::{ZenohServiceServer, ZenohServices};

/// A Zenoh call failed: which, on what, and Zenoh's reason.
#[derive(Debug, thiserror::Error)]
#[error("Zenoh: {what}: {reason}")]
pub struct ZenohError {
    /// The call and its subject (`open a session connecting to tcp/localhost:7447`).
    pub what: String,
    /// What Zenoh said.
    pub reason: String,
}

impl ZenohError {
    pub(crate) fn new(what: impl Into<String>, reason: impl std::fmt::Display) -> ZenohError {
        ZenohError { what: what.into(), reason: reason.to_string() }
    }
}

/// The endpoint rmw_zenoh's default session config connects to.
pub const DEFAULT_ROUTER: &str = "tcp/localhost:7447";

/// A session on a ROS 2 domain, with the router it started if it had to.
pub struct ZenohSession {
    session: zenoh::Session,
    domain: u32,
    zid: String,
    next_id: AtomicU64,
    /// The router this process started because none answered; dropped last.
    router: Option<zenoh::Session>,
}

/// rmw_zenoh's default session config, as JSON5 settings (the parts that decide who meets
/// whom; the rest are Zenoh's defaults).
fn default_config() -> Result<zenoh::Config, ZenohError> {
    let mut c = zenoh::Config::default();
    for (k, v) in [
        ("mode", "\"peer\""),
        ("connect/endpoints", "[\"tcp/localhost:7447\"]"),
        ("listen/endpoints", "[\"tcp/localhost:0\"]"),
        ("scouting/multicast/enabled", "false"),
        ("timestamping/enabled", "true"),
    ] {
        c.insert_json5(k, v).map_err(|e| ZenohError::new(format!("set {k}={v}"), e))?;
    }
    Ok(c)
}

/// The session config: `ZENOH_SESSION_CONFIG_URI`'s file or the default, then
/// `ZENOH_CONFIG_OVERRIDE`'s settings.
fn session_config() -> Result<zenoh::Config, ZenohError> {
    let mut c = match std::env::var("ZENOH_SESSION_CONFIG_URI") {
        Ok(path) if !path.is_empty() => zenoh::Config::from_file(&path)
            .map_err(|e| ZenohError::new(format!("read ZENOH_SESSION_CONFIG_URI {path}"), e))?,
        _ => default_config()?,
    };
    if let Ok(overrides) = std::env::var("ZENOH_CONFIG_OVERRIDE") {
        for pair in overrides.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| ZenohError::new(format!("ZENOH_CONFIG_OVERRIDE {pair:?}"), "expected key=value"))?;
            c.insert_json5(k.trim(), v.trim())
                .map_err(|e| ZenohError::new(format!("ZENOH_CONFIG_OVERRIDE {k}={v}"), e))?;
        }
    }
    Ok(c)
}

/// The router config for the embedded router: `ZENOH_ROUTER_CONFIG_URI`'s file, else a router
/// listening where the session connects.
fn router_config(connect: &[String]) -> Result<zenoh::Config, ZenohError> {
    if let Ok(path) = std::env::var("ZENOH_ROUTER_CONFIG_URI") {
        if !path.is_empty() {
            return zenoh::Config::from_file(&path)
                .map_err(|e| ZenohError::new(format!("read ZENOH_ROUTER_CONFIG_URI {path}"), e));
        }
    }
    let mut c = zenoh::Config::default();
    let listen = serde_json::to_string(connect).unwrap_or_default();
    for (k, v) in
        [("mode", "\"router\""), ("scouting/multicast/enabled", "false"), ("listen/endpoints", listen.as_str())]
    {
        c.insert_json5(k, v).map_err(|e| ZenohError::new(format!("set router {k}={v}"), e))?;
    }
    Ok(c)
}

/// How many times the router is looked for, a second apart: `None` for no check.
fn router_check_attempts() -> Option<u64> {
    match std::env::var("ZENOH_ROUTER_CHECK_ATTEMPTS").ok().and_then(|v| v.trim().parse::<i64>().ok()) {
        None => Some(1),
        Some(n) if n < 0 => None,
        Some(0) => Some(u64::MAX),
        Some(n) => Some(n as u64),
    }
}

/// The endpoints a config connects to.
fn connect_endpoints(c: &zenoh::Config) -> Vec<String> {
    c.get_json("connect/endpoints")
        .ok()
        .and_then(|j| serde_json::from_str::<Vec<String>>(&j).ok())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| vec![DEFAULT_ROUTER.to_string()])
}

fn has_router(s: &zenoh::Session) -> bool {
    s.info().routers_zid().wait().next().is_some()
}

impl ZenohSession {
    /// Opens a session on `domain` as rmw_zenoh does. When the router check finds no router,
    /// starts one in this process where the session connects, and says so through `log`.
    pub fn open(domain: u32, log: &dyn Fn(String)) -> Result<ZenohSession, ZenohError> {
        let config = session_config()?;
        let connect = connect_endpoints(&config);
        let open = |c: zenoh::Config| {
            zenoh::open(c)
                .wait()
                .map_err(|e| ZenohError::new(format!("open a session connecting to {}", connect.join(", ")), e))
        };
        let session = open(config.clone())?;
        let Some(attempts) = router_check_attempts() else { return Ok(Self::new(session, domain, None)) };
        let mut tries = 0u64;
        while !has_router(&session) {
            tries += 1;
            if tries >= attempts {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        if has_router(&session) {
            return Ok(Self::new(session, domain, None));
        }
        // None answered: start one where the session connects, then meet it.
        let router = zenoh::open(router_config(&connect)?)
            .wait()
            .map_err(|e| ZenohError::new(format!("start a Zenoh router on {}", connect.join(", ")), e))?;
        log(format!(
            "rbag: no Zenoh router at {}; started one in this process there (it stops when rbag exits)",
            connect.join(", ")
        ));
        drop(session);
        let session = open(config)?;
        for _ in 0..50 {
            if has_router(&session) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(Self::new(session, domain, Some(router)))
    }

    fn new(session: zenoh::Session, domain: u32, router: Option<zenoh::Session>) -> ZenohSession {
        let zid = session.zid().to_string();
        ZenohSession { session, domain, zid, next_id: AtomicU64::new(0), router }
    }

    /// The ROS domain id.
    pub fn domain(&self) -> u32 {
        self.domain
    }

    /// This session's id, as tokens write it.
    pub fn zid(&self) -> &str {
        &self.zid
    }

    /// Whether this process started the router it uses.
    pub fn started_router(&self) -> bool {
        self.router.is_some()
    }

    /// The next node or entity id (one counter per session, as rmw_zenoh's context keeps).
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn session(&self) -> &zenoh::Session {
        &self.session
    }

    /// Follows every rmw_zenoh liveliness token of the domain, those declared before included:
    /// `on` gets each token's key with `Some(token)` when it appears (and parses), `None` when
    /// it goes. Dropping the subscriber stops it.
    pub(crate) fn watch_tokens(
        &self,
        on: impl Fn(&str, Option<crate::zenoh_wire::Token>) + Send + Sync + 'static,
    ) -> Result<zenoh::pubsub::Subscriber<()>, ZenohError> {
        let pattern = format!("{}/{}/**", crate::zenoh_wire::ADMIN_SPACE, self.domain);
        self.session
            .liveliness()
            .declare_subscriber(&pattern)
            .history(true)
            .callback(move |sample| {
                let key = sample.key_expr().as_str();
                match sample.kind() {
                    zenoh::sample::SampleKind::Put => {
                        if let Some(t) = crate::zenoh_wire::Token::parse(key) {
                            on(key, Some(t));
                        }
                    }
                    zenoh::sample::SampleKind::Delete => on(key, None),
                }
            })
            .wait()
            .map_err(|e| ZenohError::new(format!("subscribe to liveliness tokens {pattern}"), e))
    }

    /// Declares a liveliness token.
    pub(crate) fn token(&self, key: &str) -> Result<zenoh::liveliness::LivelinessToken, ZenohError> {
        self.session
            .liveliness()
            .declare_token(key)
            .wait()
            .map_err(|e| ZenohError::new(format!("declare token {key}"), e))
    }
}

/// A node's identity in the graph: its token, and the ids its entities' tokens carry. Clones
/// are the same node; its token goes when the last one drops.
#[derive(Clone)]
pub struct Node {
    nid: u64,
    name: String,
    namespace: String,
    _token: std::sync::Arc<zenoh::liveliness::LivelinessToken>,
}

impl Node {
    /// Declares node `name` in `namespace` (`/` at the root) on `session`.
    pub fn new(session: &ZenohSession, namespace: &str, name: &str) -> Result<Node, ZenohError> {
        let nid = session.next_id();
        let token = crate::zenoh_wire::Token {
            domain: session.domain,
            zid: session.zid.clone(),
            nid: nid.to_string(),
            eid: nid.to_string(),
            kind: crate::zenoh_wire::EntityKind::Node,
            enclave: "/".into(),
            namespace: namespace.into(),
            node: name.into(),
            topic: None,
        };
        Ok(Node {
            nid,
            name: name.into(),
            namespace: namespace.into(),
            _token: std::sync::Arc::new(session.token(&token.key_expr())?),
        })
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The token of an entity of this node on `topic`.
    pub(crate) fn entity_token(
        &self,
        session: &ZenohSession,
        kind: crate::zenoh_wire::EntityKind,
        topic: crate::zenoh_wire::TokenTopic,
    ) -> crate::zenoh_wire::Token {
        crate::zenoh_wire::Token {
            domain: session.domain,
            zid: session.zid.clone(),
            nid: self.nid.to_string(),
            eid: session.next_id().to_string(),
            kind,
            enclave: "/".into(),
            namespace: self.namespace.clone(),
            node: self.name.clone(),
            topic: Some(topic),
        }
    }
}

/// 16 bytes identifying an entity, as rmw_zenoh computes them (`Entity::Entity`,
/// liveliness_utils.cpp L449-452 at bfc065f): XXH3-128 of its token (`simplified_xxhash3.cpp` is
/// xxHash's portable XXH3_128bits), the low 64 bits then the high 64, little-endian.
pub(crate) fn gid_of(token: &str) -> [u8; 16] {
    twox_hash::XxHash3_128::oneshot(token.as_bytes()).to_le_bytes()
}

#[cfg(test)]
mod tests {
    #[test]
    fn gids_are_xxh3_128_of_the_token_low_half_first() {
        // xxHash's reference value of XXH3_128bits(""): high 0x99aa06d3014798d8, low 0x6001c324468d497f.
        let mut want = 0x6001c324468d497f_u64.to_le_bytes().to_vec();
        want.extend(0x99aa06d3014798d8_u64.to_le_bytes());
        assert_eq!(super::gid_of(""), want[..]);
    }
}
