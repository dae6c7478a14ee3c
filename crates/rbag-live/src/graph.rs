//! Joining a live graph: a ROS 1 node (with an embedded master when none answers at
//! ROS_MASTER_URI) or a ROS 2 participant (on ROS_DOMAIN_ID, kept on this host when the
//! environment asks), as a sourced ROS shell would.

use rbag_storage::ros1::keys;
use std::net::{SocketAddr, ToSocketAddrs};

use rbag_ros1::master::Master;
use rbag_ros1::master_client::{MasterClient, MasterError};
use rbag_ros1::names::{NameError, NodeConfig};
use rbag_ros1::node::{Node, NodeError};
pub use rbag_ros1::tcpros::Limits;
use rbag_storage::Connection;

/// Why joining a graph failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// The node name or a remapping argument is not a valid ROS name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The master could not be reached or refused a call.
    #[error(transparent)]
    Master(#[from] MasterError),
    /// The embedded master could not start at this address.
    #[error("starting an embedded ROS master at {addr}: {source}")]
    EmbeddedMaster {
        /// Where it was to listen.
        addr: SocketAddr,
        /// Why it did not.
        #[source]
        source: rbag_ros1::master::MasterError,
    },
    /// ROS_MASTER_URI is not an `http://host:port/` URI this machine can serve or reach.
    #[error("ROS_MASTER_URI {uri:?}: {reason}")]
    MasterUri {
        /// The URI.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The node's servers could not start.
    #[error(transparent)]
    Node(#[from] NodeError),
    /// ROS_DOMAIN_ID is not a DDS domain id.
    #[error("ROS_DOMAIN_ID={0:?} is not a domain id (0 to 232)")]
    DomainId(String),
    /// The DDS participant could not be created.
    #[cfg(feature = "ros2")]
    #[error(transparent)]
    Dds(#[from] rbag_ros2::dds::DdsError),
    /// The Zenoh session, its router or its discovery could not start.
    #[cfg(feature = "zenoh")]
    #[error(transparent)]
    Zenoh(#[from] rbag_ros2::zenoh::ZenohError),
}

/// A node in a ROS 1 graph, and the master rbag started when there was none.
pub struct Graph {
    /// The node.
    pub node: Node,
    /// The embedded master, kept alive for as long as the graph is.
    pub master: Option<Master>,
}

impl Graph {
    /// Unregisters the node and stops the embedded master, if any.
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

fn master_addr(uri: &str) -> Result<(String, SocketAddr), GraphError> {
    let bad = |reason: &str| GraphError::MasterUri { uri: uri.to_string(), reason: reason.to_string() };
    let rest = uri.strip_prefix("http://").ok_or_else(|| bad("not an http:// URI"))?;
    let host_port = rest.split('/').next().unwrap_or(rest);
    let (host, port) = host_port.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let port: u16 = port.parse().map_err(|_| bad("bad port"))?;
    let addr = (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| bad(&format!("host {host} has no address")))?;
    Ok((host.to_string(), addr))
}

/// Joins the ROS 1 graph as `default_name` (renamed by `__name:=`, with the other remapping
/// arguments applied): finds the master, or starts one at ROS_MASTER_URI's port when no
/// master answers there and the host is this machine (`on_embedded` is told its URI).
pub fn join_ros1(
    default_name: &str,
    remap_args: &[String],
    limits: Limits,
    on_embedded: impl FnOnce(&str),
) -> Result<Graph, GraphError> {
    let (config, _) = NodeConfig::from_env_and_args(default_name, |k| std::env::var(k).ok(), remap_args)?;
    let probe = MasterClient::new(&config.master_uri, &config.name)?;
    let master = match probe.ping() {
        Ok(_) => None,
        Err(MasterError::Unreachable { .. }) => {
            let (host, addr) = master_addr(&config.master_uri)?;
            if !is_local(&host) {
                return Err(GraphError::MasterUri {
                    uri: config.master_uri.clone(),
                    reason: format!("no ROS master answers there and {host} is not this machine"),
                });
            }
            let master = Master::start(addr).map_err(|source| GraphError::EmbeddedMaster { addr, source })?;
            on_embedded(&config.master_uri);
            Some(master)
        }
        Err(e) => return Err(e.into()),
    };
    let node = Node::start(config, limits)?;
    Ok(Graph { node, master })
}

/// A node name like rosbag's anonymous ones: `<base>_<pid>`.
pub fn anonymous(base: &str) -> String {
    format!("{base}_{}", std::process::id())
}

/// Fills a ROS 1 connection's missing definition or MD5 sum (a publisher that sent `*` or
/// nothing) from the bundled noetic types, so rosbag tools can read the bag. Returns what it
/// did or could not do.
pub fn complete_connection(conn: &mut Connection) -> Option<String> {
    use rbag_msg::store::{self, Distro};
    use rbag_msg::{registry::normalize, Dialect, Schema};
    let md5_missing = conn.metadata.get(keys::MD5SUM).is_none_or(|m| m == "*" || m.is_empty());
    if !conn.definition.is_empty() && !md5_missing {
        return None;
    }
    if conn.message_type == "*" || conn.message_type.is_empty() {
        return Some("the publisher did not say its type".into());
    }
    let reg = store::registry(Distro::Noetic);
    let name = normalize(&conn.message_type, Dialect::Ros1);
    let Ok(schema) = Schema::compile(reg, &name) else {
        return Some(format!(
            "the publisher sent no definition and {} is not a bundled type; stored without one",
            conn.message_type
        ));
    };
    if conn.definition.is_empty() {
        conn.definition =
            rbag_msg::dialect::concatenated(&schema, reg, &|n| store::text(Distro::Noetic, n).map(str::to_string));
    }
    if md5_missing {
        if let Ok(md5) = reg.md5(&name) {
            conn.metadata.insert(keys::MD5SUM.into(), md5);
        }
    }
    Some(format!("the publisher sent no definition or MD5 sum; filled in from the bundled {name}"))
}

/// The DDS domain of `ROS_DOMAIN_ID` (0 when unset or empty).
pub fn domain_id(value: Option<&str>) -> Result<u32, GraphError> {
    match value.map(str::trim) {
        None | Some("") => Ok(0),
        Some(v) => v.parse::<u32>().ok().filter(|d| *d <= 232).ok_or_else(|| GraphError::DomainId(v.to_string())),
    }
}

/// The participant for `ROS_DOMAIN_ID` (0 by default). `ROS_LOCALHOST_ONLY=1` or
/// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` keep discovery on this host, unless
/// `CYCLONEDDS_URI` already says how (rmw_cyclonedds gives the user's configuration precedence).
#[cfg(feature = "ros2")]
pub fn participant() -> Result<rbag_ros2::dds::Participant, GraphError> {
    let domain = domain_id(std::env::var("ROS_DOMAIN_ID").ok().as_deref())?;
    let localhost = std::env::var("ROS_LOCALHOST_ONLY").is_ok_and(|v| v.trim() == "1")
        || std::env::var("ROS_AUTOMATIC_DISCOVERY_RANGE").is_ok_and(|v| v.trim().eq_ignore_ascii_case("LOCALHOST"));
    if localhost && std::env::var_os("CYCLONEDDS_URI").is_none() {
        rbag_ros2::dds::configure_domain(domain, rbag_ros2::dds::LOCALHOST_CONFIG)?;
    }
    Ok(rbag_ros2::dds::Participant::new(domain)?)
}

/// A Zenoh session on `ROS_DOMAIN_ID`'s domain, as rmw_zenoh opens one (a router started in
/// this process when none answers, said through `log`).
#[cfg(feature = "zenoh")]
pub fn zenoh_session(log: &crate::record::Log) -> Result<std::sync::Arc<rbag_ros2::zenoh::ZenohSession>, GraphError> {
    let domain = domain_id(std::env::var("ROS_DOMAIN_ID").ok().as_deref())?;
    let session = rbag_ros2::zenoh::ZenohSession::open(domain, &|m| log(m))?;
    log(format!("Joined Zenoh domain {domain} (session {}).", session.zid()));
    Ok(std::sync::Arc::new(session))
}
