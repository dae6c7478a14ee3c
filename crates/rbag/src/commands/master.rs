//! `rbag master`: a ROS 1 master standing in for `roscore`, with no ROS installed.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use anyhow::{Context, Result};
use rbag_live::master::{default_host, Master, MasterError};

use super::signals;
use crate::Outcome;

/// Run a ROS 1 master (what `roscore` starts), with no ROS installed.
///
/// ROS 1 nodes find each other through the master: roscpp and rospy nodes, rostopic, rosparam,
/// rosnode, rosbag and `rbag record/play --ros1` all work against it. Point them at the URI it
/// prints, with ROS_MASTER_URI. It serves rosmaster's API and parameter server with rosmaster's
/// replies, and seeds /run_id, /rosversion and /rosdistro as roscore does. It does not start the
/// /rosout aggregator node that roscore also starts: nothing depends on it.
///
/// It binds as roscore does: to ROS_IP or ROS_HOSTNAME when that is a loopback address
/// (localhost, 127.x.y.z), otherwise to all interfaces. The URI names ROS_HOSTNAME, else ROS_IP,
/// else this machine's host name. --host picks both.
///
/// It runs until Ctrl-C or SIGTERM (or a peer calls the master's `shutdown` method), then exits
/// with status 0. If the port is taken (another master is running, say), it exits with status 1.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag master                      (like roscore, on port 11311)\n  rbag master -p 11312"
)]
pub struct Args {
    /// TCP port to listen on; 0 picks a free one (the printed URI says which).
    #[arg(short, long, default_value_t = 11311, value_name = "PORT")]
    port: u16,
    /// Listen on this address only, and name it in the URI (an IP address or a host name).
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
}

/// Where to listen and which host to name in the URI (rosgraph's `get_bind_address` and
/// `get_host_name`, unless --host says).
fn addresses(args: &Args) -> Result<(SocketAddr, String)> {
    if let Some(host) = &args.host {
        let addr = (host.as_str(), args.port)
            .to_socket_addrs()
            .with_context(|| format!("--host {host}: cannot resolve it"))?
            .next()
            .with_context(|| format!("--host {host}: it has no address"))?;
        return Ok((addr, host.clone()));
    }
    let advertised = default_host();
    let overridden = ["ROS_HOSTNAME", "ROS_IP"].iter().any(|v| std::env::var(v).is_ok_and(|v| !v.trim().is_empty()));
    let ip = match advertised.as_str() {
        "localhost" | "::1" if overridden => IpAddr::V4(Ipv4Addr::LOCALHOST),
        a if overridden && a.starts_with("127.") => a.parse().unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        _ => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    };
    Ok((SocketAddr::new(ip, args.port), advertised))
}

pub fn run(args: Args) -> Result<Outcome> {
    let (bind, advertised) = addresses(&args)?;
    let master = Master::start_as(bind, &advertised).map_err(|e| match &e {
        MasterError::Bind { source, .. } if source.kind() == std::io::ErrorKind::AddrInUse => anyhow::Error::new(e)
            .context(format!(
                "port {} is already in use (is roscore or another master running?); choose another with -p",
                args.port
            )),
        _ => anyhow::Error::new(e).context(format!("cannot start a ROS master on port {}", args.port)),
    })?;
    signals::install();
    note!("rbag master: {} (ROS_MASTER_URI)", master.uri());
    while !signals::stop_requested() && !master.shutdown_requested() {
        std::thread::sleep(Duration::from_millis(100));
    }
    master.shutdown();
    Ok(Outcome::Ok)
}
