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

/// How much a live verb prints, as `--log-level` sets a ROS 2 node's logger (and `-q` asks
/// for warnings and errors only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum LogLevel {
    /// Everything (rbag has no debug lines of its own).
    Debug,
    /// Status lines, warnings and errors (the default).
    Info,
    /// Warnings and errors.
    Warn,
    /// Errors.
    Error,
    /// Errors (rbag has no fatal class of its own).
    Fatal,
}

impl LogLevel {
    /// The level of `--log-level` and `-q` together (the quieter wins).
    pub fn of(flag: Option<LogLevel>, quiet: bool) -> LogLevel {
        let level = flag.unwrap_or(LogLevel::Info);
        if quiet {
            level.max(LogLevel::Warn)
        } else {
            level
        }
    }

    /// Whether a line is shown: `error…` lines are errors, `warning…` lines warnings, the rest
    /// status.
    pub fn shows(self, line: &str) -> bool {
        let class = if line.starts_with("error") {
            LogLevel::Error
        } else if line.starts_with("warning") {
            LogLevel::Warn
        } else {
            LogLevel::Info
        };
        class >= self.min(LogLevel::Error)
    }
}
