//! `--ros1`/`--ros2`: which middleware a live verb (`record`, `play`) talks to.

use anyhow::Result;

/// The live middleware of a verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Middleware {
    Ros1,
    Ros2,
}

/// `--ros1` / `--ros2`; without either, `ROS_VERSION` decides, as in a sourced ROS shell.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct MiddlewareArgs {
    /// Talk to a ROS 1 graph (master + TCPROS).
    #[arg(long, conflicts_with = "ros2")]
    ros1: bool,
    /// Talk to a ROS 2 graph (DDS).
    #[arg(long)]
    ros2: bool,
}

impl MiddlewareArgs {
    /// The middleware asked for; with none, a usage error (exit 2).
    pub fn choose(&self, verb: &str) -> Result<Middleware> {
        self.pick(verb).map_err(|m| crate::UsageError(m).into())
    }

    fn pick(&self, verb: &str) -> Result<Middleware, String> {
        if self.ros1 {
            return Ok(Middleware::Ros1);
        }
        if self.ros2 {
            return Ok(Middleware::Ros2);
        }
        match std::env::var("ROS_VERSION").ok().as_deref().map(str::trim) {
            Some("1") => Ok(Middleware::Ros1),
            Some("2") => Ok(Middleware::Ros2),
            Some(other) => Err(format!("rbag {verb}: ROS_VERSION={other:?} is neither 1 nor 2; pass --ros1 or --ros2")),
            None => Err(format!("rbag {verb}: say which middleware: --ros1 or --ros2 (or set ROS_VERSION)")),
        }
    }
}

/// Splits ROS remapping arguments (`from:=to`, `__name:=x`) from the other positionals.
pub fn split_remaps(args: &[String]) -> (Vec<String>, Vec<String>) {
    args.iter().cloned().partition(|a| a.contains(":="))
}

/// `main` routes `--ros2` (and `ROS_VERSION=2`) to the ROS 2 parsers before clap sees the
/// ROS 1 flags, so a ROS 1 verb that still finds ROS 2 chosen says so instead of guessing.
pub fn ros2_elsewhere(verb: &str) -> Result<crate::Outcome> {
    anyhow::bail!("rbag {verb}: ROS 2 takes ros2 bag's flags; run `rbag {verb} --ros2 --help`")
}
