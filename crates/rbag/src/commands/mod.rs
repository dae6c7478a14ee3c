//! One module per verb. Each has an `Args` (clap) and a `run` returning an [`crate::Outcome`].

pub mod attachment;
pub mod catalog;
pub mod completions;
pub mod compress;
pub mod convert;
pub mod direct_io;
pub mod doctor;
pub mod du;
pub mod echo;
pub mod export;
pub mod export_images;
pub mod filter;
pub mod info;
pub mod keyboard;
pub mod list;
pub mod man;
pub mod master;
pub mod metadata;
pub mod middleware;
pub mod play;
#[cfg(feature = "ros2")]
pub mod play_ros2;
pub mod plot;
pub mod record;
#[cfg(feature = "ros2")]
pub mod record_ros2;
pub mod reindex;
pub mod rosbag2_args;
pub mod serve;
pub mod signals;

use std::path::Path;

use anyhow::{Context, Result};
use rbag_bag::decode::{DecodeError, TypeSources};
use rbag_bag::units::TimeSpec;
use rbag_bag::{Bag, OpenOptions};

/// Opens a bag for reading and prints what the storage warned about (a scanned file, a
/// skipped chunk). Storage errors already name the file.
pub fn open(path: &Path) -> Result<Box<dyn rbag_bag::StorageReader>> {
    Ok(open_with(path, &ReadArgs::default())?.into_reader())
}

/// How verbs that read messages treat a damaged bag.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct ReadArgs {
    /// Read messages on connections the bag never declares (a ROS 1 connection with no
    /// connection record, an MCAP channel with no Channel record, a rosbag2 topic id missing
    /// from the topics table) as topic `/rbag/undeclared/<id>` with no type, kept raw where the
    /// output allows, instead of failing on the first one. rbag then exits with 3.
    #[arg(long)]
    pub lenient: bool,
}

/// Opens a bag with `read`'s options and prints the storage's warnings. Verbs that read
/// messages call [`done_reading`] at the end, so that messages read on stand-ins for undeclared
/// connections end the run with exit code 3 (see `main`).
pub fn open_with(path: &Path, read: &ReadArgs) -> Result<Bag> {
    #[cfg(feature = "remote")]
    if let Some(w) = path.to_str().and_then(rbag_remote::profile_warning) {
        note!("warning: {w}");
    }
    let options = OpenOptions { lenient: read.lenient, allow_remote_scan: remote::scan_allowed() };
    let bag = Bag::open_with(path, &options).map_err(with_hint)?;
    let warnings = bag.warnings();
    for w in &warnings {
        note!("warning: {}: {w}", path.display());
    }
    if !warnings.is_empty() && bag.storage_info().is_ok_and(|i| !i.indexed) {
        note!("hint: `rbag reindex {}` repairs it", path.display());
    }
    Ok(bag)
}

/// Says what `bag` could not read (a torn tail, a skipped chunk) as dropped, and counts its
/// messages read on stand-in connections; returns whether anything was dropped, for exit code 3.
pub fn done_reading(bag: &Bag) -> bool {
    undeclared::add(bag.undeclared_read());
    let lost = bag.lost();
    for l in &lost {
        note!("dropped: {}: {l}", bag.path().display());
    }
    !lost.is_empty()
}

/// Adds the hint a library error cannot give: which flag or verb helps.
pub fn with_hint(e: rbag_bag::Error) -> anyhow::Error {
    let hint = match (e.storage(), e.decode()) {
        (Some(s), _) if s.needs_reindex() => REINDEX_HINT,
        (Some(rbag_bag::StorageError::RemoteScan { .. }), _) => "--allow-remote-scan downloads it whole",
        (_, Some(d)) => match decode_hint(d) {
            Some(h) => h,
            None => return anyhow::Error::new(e),
        },
        _ => return anyhow::Error::new(e),
    };
    let msg = format!("{e}; {hint}");
    anyhow::Error::new(e).context(msg)
}

const REINDEX_HINT: &str = "run `rbag reindex` to repair it";

/// The hint for a decoding error: an unknown type needs `--msg-path`.
pub fn decode_hint(e: &DecodeError) -> Option<&'static str> {
    matches!(e, DecodeError::UnknownType { .. }).then_some(
        "give its definition with --msg-path DIR (a directory of .msg files, or an ament share/ or install prefix)",
    )
}

/// A decoding error with its hint, as the message of an error.
pub fn decode_error(e: &DecodeError) -> anyhow::Error {
    match decode_hint(e) {
        Some(h) => anyhow::anyhow!("{e}; {h}"),
        None => anyhow::anyhow!("{e}"),
    }
}

pub mod remote {
    //! The run's remote-reading switches, set once from the global flags.

    use std::sync::atomic::{AtomicBool, Ordering};

    static ALLOW_SCAN: AtomicBool = AtomicBool::new(false);

    /// `--allow-remote-scan`: download remote files that can only be scanned.
    pub fn allow_scan(on: bool) {
        ALLOW_SCAN.store(on, Ordering::Relaxed);
    }

    /// Whether `--allow-remote-scan` was given.
    pub fn scan_allowed() -> bool {
        ALLOW_SCAN.load(Ordering::Relaxed)
    }
}

pub mod undeclared {
    //! Counting the messages a lenient read takes from stand-in connections, for the exit code.

    use std::sync::atomic::{AtomicU64, Ordering};

    static READ: AtomicU64 = AtomicU64::new(0);

    /// Messages read on stand-ins for undeclared connections in this run.
    pub fn read() -> u64 {
        READ.load(Ordering::Relaxed)
    }

    /// Counts `n` more.
    pub fn add(n: u64) {
        READ.fetch_add(n, Ordering::Relaxed);
    }
}

/// An output file that is not a bag, checked and staged by the one safe-output path: never the
/// input `bag`, replaced only with `force` and only when `ours` says rbag could have written
/// it, written under a temporary name that [`Staged::commit`](rbag_bag::output::Staged::commit)
/// renames into place. `kind` names what it should be (`"a chart"`).
pub fn stage_output(
    out: &Path,
    force: bool,
    bag: &Path,
    kind: &str,
    ours: &dyn Fn(&Path) -> bool,
) -> Result<rbag_bag::output::Staged> {
    use rbag_bag::output::{check_with, OutputPolicy, Staged};
    let inputs = if bag.exists() { vec![bag.to_path_buf()] } else { Vec::new() };
    let policy = OutputPolicy { inputs, replace: force };
    let checked = check_with(out, &policy, kind, ours).map_err(|e| match e {
        rbag_bag::StorageError::OutputExists { .. } if !force => {
            anyhow::Error::new(e).context("use --force to replace it")
        }
        e => anyhow::Error::new(e),
    })?;
    Ok(Staged::new(checked)?)
}

/// A window of log time, for verbs that read messages.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct WindowArgs {
    /// Only messages at or after this time: seconds since the epoch (1700000000.5), integer ns
    /// (1700000000500000000ns), a date (2023-11-14T22:13:22Z; local time when no zone is
    /// given), or an offset from the bag's start (+1.5, +2m, 90s, 1m30s).
    #[arg(long, value_name = "TIME", value_parser = rbag_bag::units::parse_time_spec)]
    pub start: Option<TimeSpec>,
    /// Only messages before this time (the same forms as --start).
    #[arg(long, value_name = "TIME", value_parser = rbag_bag::units::parse_time_spec, conflicts_with = "duration")]
    pub end: Option<TimeSpec>,
    /// Only messages before --start (or the bag's start) plus this long (30, 2.5, 90s, 1m30s).
    #[arg(long, value_name = "DURATION", value_parser = rbag_bag::units::parse_duration)]
    pub duration: Option<u64>,
}

impl WindowArgs {
    /// Whether any bound was given.
    pub fn given(&self) -> bool {
        self.start.is_some() || self.end.is_some() || self.duration.is_some()
    }

    /// The window in ns since the epoch, offsets resolved against the first message of
    /// `bags`; a window that ends before it starts is a usage error.
    pub fn resolve(&self, bags: &[Bag]) -> Result<(Option<u64>, Option<u64>)> {
        if !self.given() {
            return Ok((None, None));
        }
        let start = span(bags).map_or(0, |(s, _)| s);
        rbag_bag::units::resolve_window(self.start, self.end, self.duration, start)
            .map_err(|e| anyhow::Error::new(crate::UsageError(e.to_string())))
    }
}

/// The first and last log time over `bags`, from their indexes.
pub fn span(bags: &[Bag]) -> Option<(u64, u64)> {
    let infos: Vec<_> = bags.iter().filter_map(|b| b.info().ok()).collect();
    let start = infos.iter().filter_map(|i| i.start_ns).min()?;
    let end = infos.iter().filter_map(|i| i.end_ns).max()?;
    Some((start, end))
}

/// Bags and storage readers alike: what the topic checks below read.
pub trait HasConnections {
    fn topics(&self) -> impl Iterator<Item = &str>;
}

impl HasConnections for Bag {
    fn topics(&self) -> impl Iterator<Item = &str> {
        self.connections().iter().map(|c| c.topic.as_str())
    }
}

impl HasConnections for Box<dyn rbag_bag::StorageReader> {
    fn topics(&self) -> impl Iterator<Item = &str> {
        self.connections().iter().map(|c| c.topic.as_str())
    }
}

/// A topic named with `flag` that no input has is a usage error naming the near matches: a
/// typo must not write an empty bag or play nothing, in any verb.
pub fn check_topic_names<B: HasConnections>(inputs: &[B], flag: &str, topics: &[String]) -> Result<()> {
    let known: Vec<&str> = inputs.iter().flat_map(|b| b.topics()).collect();
    let Some(missing) = topics.iter().find(|t| !known.contains(&t.as_str())) else { return Ok(()) };
    let hint = match Bag::near_names(known, missing).as_slice() {
        [] => String::new(),
        n => format!("; did you mean {}?", n.join(", ")),
    };
    Err(anyhow::Error::new(crate::UsageError(format!("{flag} {missing}: no input has this topic{hint}"))))
}

/// Warns when a topic regex given with `flag` matches no topic of the inputs; true when it
/// does not (the verb then exits 3).
pub fn regex_matches_nothing<B: HasConnections>(inputs: &[B], flag: &str, re: Option<&regex::Regex>) -> bool {
    let Some(re) = re.filter(|re| !re.as_str().is_empty()) else { return false };
    let matched = inputs.iter().any(|b| b.topics().any(|t| re.is_match(t)));
    if !matched {
        note!("warning: {flag} {} matches no topic of the input", re.as_str());
    }
    !matched
}

/// The warning for a window that selected nothing: it states the bags' span, so a window
/// given in the wrong clock or units is seen at once.
pub fn empty_window(bags: &[Bag], window: (Option<u64>, Option<u64>)) -> String {
    let show = |t: Option<u64>| t.map_or("open".to_string(), rbag_bag::units::format_time);
    let spans = match span(bags) {
        Some((s, e)) => format!(
            "the bag{} span{} {} to {}",
            if bags.len() > 1 { "s" } else { "" },
            if bags.len() > 1 { "" } else { "s" },
            rbag_bag::units::format_time(s),
            rbag_bag::units::format_time(e)
        ),
        None => "the bag holds no message".to_string(),
    };
    format!("warning: the window from {} to {} selects no message: {spans}", show(window.0), show(window.1))
}

/// Where message types come from, for verbs that decode.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TypeArgs {
    /// Read message definitions from this directory too: an install prefix
    /// (`share/<pkg>/msg/*.msg`), a share directory, one package, or `PKG=DIR` for a flat
    /// directory of `.msg` files that belong to package PKG. Repeatable.
    #[arg(long = "msg-path", value_name = "[PKG=]DIR")]
    msg_paths: Vec<String>,
}

impl TypeArgs {
    /// Fallback types for a bag: `--msg-path` first, then the bundled store for the bag's
    /// distro (humble when it does not say), then types only later distros have.
    pub fn sources(&self, properties: &std::collections::BTreeMap<String, String>) -> Result<TypeSources> {
        rbag_bag::types::sources_for(properties, &self.msg_paths).context("--msg-path")
    }
}

/// The bundled ROS 2 types of `distro`, then those only later distros have.
pub fn store_ros2(distro: rbag_bag::types::Distro) -> rbag_bag::decode::Registry {
    rbag_bag::types::bundled_ros2(distro)
}

/// Definitions from `[PKG=]DIR` directories, as ROS 1 and ROS 2 registries.
pub fn load_msg_dirs(specs: &[String], flag: &str) -> Result<(rbag_bag::decode::Registry, rbag_bag::decode::Registry)> {
    rbag_bag::types::load_dirs(specs).context(flag.to_string())
}
