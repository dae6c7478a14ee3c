//! `rbag serve`: bags to viewers over the Foxglove WebSocket protocol. The serving is
//! `rbag_serve`'s; this file turns flags into options, prints where to connect and waits for
//! Ctrl-C or SIGTERM.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use rbag_bag::units::parse_size;
use rbag_serve::{ServeOptions, Server, DEFAULT_CLIENT_QUEUE_BYTES};

use super::signals;
use crate::{Outcome, UsageError};

/// Serve bags to Foxglove, Lichtblick or PlotJuggler over the Foxglove WebSocket protocol.
///
/// Every topic is advertised with the bag's own definition and its messages are sent as
/// recorded (ROS 1 as `ros1`, ROS 2 as `cdr`). Several bags play as one timeline in log-time
/// order. Playback starts when the first client subscribes, at --rate times real time; viewers
/// with playback control (current Foxglove) can pause, seek and change speed. A client that
/// reads slower than the bags play loses messages beyond its queue (--queue-size) and is told
/// so; the others are not slowed.
///
/// The protocol has no authentication or encryption: anyone who can reach the port can read
/// the bags. rbag listens on loopback unless --bind says otherwise. Plain HTTP on the same port
/// (`http://HOST:PORT/`) is a quick-look page: topics and rates, a timeline of message density,
/// a plot of any numeric field, the image at the cursor, and a link that opens Foxglove.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rbag serve run.bag                      (then open ws://127.0.0.1:8765 in Foxglove)\n  rbag serve a.bag b.mcap --loop -r 2\n  rbag serve s3://bucket/run.mcap --port 0\n  rbag serve run.bag --bind 0.0.0.0         (a trusted network only: no authentication)"
)]
pub struct Args {
    /// Bags to serve: files, rosbag2 directories or URLs.
    #[arg(value_name = "BAG", required_unless_present = "input")]
    inputs: Vec<PathBuf>,
    /// More bags to serve.
    #[arg(short = 'i', long = "input", value_name = "BAG")]
    input: Vec<PathBuf>,
    /// TCP port; 0 picks a free one (printed at start).
    #[arg(short, long, default_value_t = 8765)]
    port: u16,
    /// Address to listen on. Anything but loopback exposes the bags to the network without
    /// authentication.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Start over at the end.
    #[arg(short, long = "loop")]
    loop_: bool,
    /// Initial playback speed, a multiple of real time (viewers may change it).
    #[arg(short, long, value_name = "FACTOR", default_value_t = 1.0)]
    rate: f64,
    /// Bytes queued per client before its messages are dropped (units allowed: 64MiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value_t = DEFAULT_CLIENT_QUEUE_BYTES as u64)]
    queue_size: u64,
    /// Start playback once N clients have subscribed (default 1).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    wait_clients: u16,
    #[command(flatten)]
    read: super::ReadArgs,
}

pub fn run(args: Args) -> Result<Outcome> {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return Err(UsageError(format!("--rate {}: the rate must be a positive number", args.rate)).into());
    }
    let queue = usize::try_from(args.queue_size).ok().filter(|&q| q > 0);
    let Some(client_queue_bytes) = queue else {
        return Err(UsageError(format!("--queue-size {}: must be at least 1 byte", args.queue_size)).into());
    };
    let paths: Vec<PathBuf> = args.inputs.into_iter().chain(args.input).collect();
    let mut bags = Vec::with_capacity(paths.len());
    for path in &paths {
        bags.push(super::open_with(path, &args.read)?);
    }
    if !args.bind.is_loopback() {
        note!(
            "warning: listening on {} exposes the bags to anyone who can reach it: the Foxglove protocol has no authentication",
            args.bind
        );
    }
    let options = ServeOptions {
        bind: SocketAddr::new(args.bind, args.port),
        rate: args.rate,
        loop_playback: args.loop_,
        client_queue_bytes,
        start_after_clients: usize::from(args.wait_clients),
        ..ServeOptions::default()
    };
    signals::install();
    let server = Server::start(bags, options).context("rbag serve")?;
    for w in server.shared().warnings() {
        note!("warning: {w}");
    }
    let addr = server.local_addr();
    note!("rbag serve: ws://{addr}  (page: http://{addr}/)");
    while !signals::stop_requested() {
        std::thread::sleep(Duration::from_millis(100));
    }
    server.shutdown();
    Ok(Outcome::Ok)
}
