//! Joining a ROS 1 graph from a live verb: the node's configuration from the environment and
//! remapping arguments, and an embedded master when none answers at ROS_MASTER_URI.

use std::net::{SocketAddr, ToSocketAddrs};

use anyhow::{bail, Context, Result};
use rbag_ros1::master::Master;
use rbag_ros1::master_client::{MasterClient, MasterError};
use rbag_ros1::names::NodeConfig;
use rbag_ros1::node::Node;
use rbag_ros1::tcpros::Limits;

/// A node in the graph, and the master rbag started when there was none.
pub struct Graph {
    pub node: Node,
    /// Kept alive for as long as the verb runs.
    pub master: Option<Master>,
}

impl Graph {
    /// Unregisters the node; the embedded master, if any, stops with the process.
    pub fn leave(self) {
        self.node.shutdown();
        if let Some(m) = self.master {
            m.shutdown();
        }
    }
}

/// Whether `host` names this machine, so that starting a master for it makes sense.
fn is_local(host: &str) -> bool {
    let Ok(addrs) = (host, 0).to_socket_addrs() else { return false };
    addrs.into_iter().any(|a| a.ip().is_loopback() || std::net::TcpListener::bind((a.ip(), 0)).is_ok())
}

fn master_addr(uri: &str) -> Result<(String, SocketAddr)> {
    let rest = uri.strip_prefix("http://").with_context(|| format!("ROS_MASTER_URI {uri:?} is not an http:// URI"))?;
    let host_port = rest.split('/').next().unwrap_or(rest);
    let (host, port) = host_port.rsplit_once(':').with_context(|| format!("ROS_MASTER_URI {uri:?} has no port"))?;
    let port: u16 = port.parse().with_context(|| format!("ROS_MASTER_URI {uri:?} has a bad port"))?;
    let addr = (host, port)
        .to_socket_addrs()?
        .next()
        .with_context(|| format!("ROS_MASTER_URI {uri:?}: host {host} has no address"))?;
    Ok((host.to_string(), addr))
}

/// Joins the graph as `default_name` (remapped by `__name:=`): finds the master, or starts one
/// at ROS_MASTER_URI's port when no master answers there and the host is this machine.
pub fn join(default_name: &str, remap_args: &[String], limits: Limits, quiet: bool) -> Result<Graph> {
    let (config, _) = NodeConfig::from_env_and_args(default_name, |k| std::env::var(k).ok(), remap_args)?;
    let probe = MasterClient::new(&config.master_uri, &config.name)?;
    let master = match probe.ping() {
        Ok(_) => None,
        Err(MasterError::Unreachable { .. }) => {
            let (host, addr) = master_addr(&config.master_uri)?;
            if !is_local(&host) {
                bail!("no ROS master answers at {} and {host} is not this machine", config.master_uri);
            }
            let master = Master::start(addr).with_context(|| format!("starting an embedded ROS master at {addr}"))?;
            if !quiet {
                note!(
                    "rbag: no ROS master at {}; started an embedded master there (it stops when rbag exits)",
                    config.master_uri
                );
            }
            Some(master)
        }
        Err(e) => return Err(e.into()),
    };
    let node = Node::start(config, limits)?;
    Ok(Graph { node, master })
}

/// A node name like rosbag's anonymous ones: `rbag_record_<pid>`.
pub fn anonymous(base: &str) -> String {
    format!("{base}_{}", std::process::id())
}

/// Fills a ROS 1 connection's missing definition or MD5 sum (a publisher that sent `*` or
/// nothing) from the bundled noetic types, so rosbag tools can read the bag. Returns what it
/// did or could not do.
pub fn complete_connection(conn: &mut rbag_storage::Connection) -> Option<String> {
    use rbag_msg::store::{self, Distro};
    use rbag_msg::{registry::normalize, Dialect, Schema};
    let md5_missing = conn.metadata.get("md5sum").is_none_or(|m| m == "*" || m.is_empty());
    if !conn.definition.is_empty() && !md5_missing {
        return None;
    }
    if conn.message_type == "*" || conn.message_type.is_empty() {
        return Some("the publisher did not say its type".into());
    }
    let reg = store::registry(Distro::Noetic);
    let name = normalize(&conn.message_type, Dialect::Ros1);
    let schema = match Schema::compile(reg, &name) {
        Ok(s) => s,
        Err(_) => {
            return Some(format!(
                "the publisher sent no definition and {} is not a bundled type; stored without one",
                conn.message_type
            ))
        }
    };
    if conn.definition.is_empty() {
        conn.definition =
            rbag_msg::dialect::concatenated(&schema, reg, &|n| store::text(Distro::Noetic, n).map(str::to_string));
    }
    if md5_missing {
        if let Ok(md5) = reg.md5(&name) {
            conn.metadata.insert("md5sum".into(), md5);
        }
    }
    Some(format!("the publisher sent no definition or MD5 sum; filled in from the bundled {name}"))
}
