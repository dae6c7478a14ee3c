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

/// `--middleware dds|zenoh` for the ROS 2 verbs; without it, `RMW_IMPLEMENTATION`
/// (`rmw_zenoh_cpp` means Zenoh), else DDS.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Ros2MiddlewareArgs {
    /// The ROS 2 middleware: dds (Cyclone DDS, talks to rmw_cyclonedds and rmw_fastrtps) or zenoh
    /// (as rmw_zenoh_cpp; a router at tcp/localhost:7447, started in rbag when none answers).
    /// Default: RMW_IMPLEMENTATION, else dds.
    #[arg(long = "middleware", value_name = "dds|zenoh")]
    middleware: Option<String>,
}

impl Ros2MiddlewareArgs {
    /// The ROS 2 middleware asked for; an unknown one is a usage error (exit 2).
    pub fn choose(&self) -> Result<rbag_live::middleware::Ros2Middleware> {
        rbag_live::middleware::Ros2Middleware::from_env(self.middleware.as_deref())
            .map_err(|e| crate::UsageError(format!("--middleware: {e}")).into())
    }
}
