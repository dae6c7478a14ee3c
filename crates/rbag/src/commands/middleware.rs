//! `--ros1`/`--ros2`: which middleware a live verb (`record`, `play`) talks to.

use anyhow::Result;
pub use rbag_live::Middleware;

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
        Middleware::from_env(self.ros1, self.ros2).map_err(|e| format!("rbag {verb}: {e}; pass --ros1 or --ros2"))
    }
}

/// `main` routes `--ros2` (and `ROS_VERSION=2`) to the ROS 2 parsers before clap sees the
/// ROS 1 flags, so a ROS 1 verb that still finds ROS 2 chosen says so instead of guessing.
pub fn ros2_elsewhere(verb: &str) -> Result<crate::Outcome> {
    anyhow::bail!("rbag {verb}: ROS 2 takes ros2 bag's flags; run `rbag {verb} --ros2 --help`")
}
