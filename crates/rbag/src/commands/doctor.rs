//! `rbag doctor`: check bags thoroughly and list what is wrong.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use rbag_bag::doctor::{DoctorOptions, Kind, Report, Severity};

use crate::Outcome;

/// Check bags of any format, more thoroughly than `mcap doctor`: the structure (every record
/// read, bounds-checked), every CRC, that the index agrees with the data (counts, offsets, chunk
/// time ranges), message order, that every definition parses, that each ROS 1 MD5 sum and ROS 2
/// RIHS01 type hash matches its definition, with --decode that every payload decodes against its
/// definition with no bytes left over, and for a rosbag2 directory that metadata.yaml agrees
/// with its files (message counts per topic and file, the file list, start and duration).
///
/// Each finding has a severity (error, warning, info), the file, the byte offset and the record
/// (and the topic where one is concerned). Nothing is modified. See docs/doctor.md.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  rbag doctor in.bag                       structure, CRCs, index, definitions and sums
  rbag doctor --decode in.bag              ... and every payload against its definition
  rbag doctor --json rosbag2_dir/ b.mcap   one JSON report per line
  rbag doctor --decode --msg-path /opt/ros/humble in.mcap

Exit codes: 0 clean (info findings only), 1 an error was found (or a bag could not be read),
3 warnings only, 2 usage error.")]
pub struct Args {
    /// Bags to check: ROS 1 .bag, MCAP, SQLite3 .db3, or a rosbag2 directory.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Decode every message against its definition; bytes left over are an error.
    #[arg(long)]
    decode: bool,
    /// Print one JSON report per bag (one per line) instead of text.
    #[arg(long)]
    json: bool,
    /// Read message definitions from this directory too (for --decode, types the bag lacks): an
    /// install prefix, a share directory, one package, or `PKG=DIR`. Repeatable.
    #[arg(long = "msg-path", value_name = "[PKG=]DIR")]
    msg_paths: Vec<String>,
}

pub fn run(args: Args) -> Result<Outcome> {
    let options = DoctorOptions { decode: args.decode, msg_paths: args.msg_paths.clone() };
    let (mut errors, mut warnings, mut unreadable) = (0usize, 0usize, 0usize);
    let mut out = std::io::stdout().lock();
    for path in &args.paths {
        let report = match rbag_bag::doctor::check(path, &options) {
            Ok(r) => r,
            Err(e @ rbag_bag::Error::NoDefinitions { .. }) | Err(e @ rbag_bag::Error::Definitions { .. }) => {
                return Err(anyhow::Error::new(e).context("--msg-path"));
            }
            Err(e) => {
                crate::output::error(&anyhow::Error::new(e).context(format!("cannot check {}", path.display())));
                unreadable += 1;
                continue;
            }
        };
        errors += report.count(Severity::Error);
        warnings += report.count(Severity::Warning);
        if args.json {
            print_json(&mut out, &report)?;
        } else {
            print_text(&mut out, &report, args.decode)?;
        }
    }
    out.flush()?;
    if errors > 0 || unreadable > 0 {
        let mut what = Vec::new();
        if errors > 0 {
            what.push(format!("{errors} error(s) found"));
        }
        if unreadable > 0 {
            what.push(format!("{unreadable} bag(s) could not be read"));
        }
        anyhow::bail!("rbag doctor: {}", what.join(", "));
    }
    if warnings > 0 {
        return Ok(Outcome::Dropped);
    }
    Ok(Outcome::Ok)
}

fn print_json(out: &mut impl Write, report: &Report) -> Result<()> {
    let mut v = serde_json::to_value(report).context("report as JSON")?;
    if let Some(o) = v.as_object_mut() {
        o.insert("errors".into(), report.count(Severity::Error).into());
        o.insert("warnings".into(), report.count(Severity::Warning).into());
        let status = match report.worst() {
            Some(Severity::Error) => "error",
            Some(Severity::Warning) => "warning",
            _ => "ok",
        };
        o.insert("status".into(), status.into());
    }
    serde_json::to_writer(&mut *out, &v)?;
    writeln!(out)?;
    Ok(())
}

fn print_text(out: &mut impl Write, report: &Report, decoded: bool) -> Result<()> {
    let c = &report.checked;
    let what = format!(
        "{}; {} file(s), {} chunk(s), {} message(s){}, {} connection(s)",
        report.format,
        c.files,
        c.chunks,
        c.messages,
        if decoded { " decoded" } else { "" },
        c.connections
    );
    for f in &report.findings {
        writeln!(out, "{f}")?;
    }
    let (e, w) = (report.count(Severity::Error), report.count(Severity::Warning));
    if e == 0 && w == 0 {
        writeln!(out, "{}: ok ({what})", report.path.display())?;
    } else {
        writeln!(out, "{}: {e} error(s), {w} warning(s) ({what})", report.path.display())?;
    }
    let mut hints = Vec::new();
    if report.findings.iter().any(|f| f.severity == Severity::Error && matches!(f.kind, Kind::Index | Kind::Metadata)) {
        hints.push("`rbag reindex PATH` rebuilds a ROS 1 bag's index or a rosbag2 directory's metadata.yaml");
    }
    if report.findings.iter().any(|f| matches!(f.kind, Kind::NotChecked | Kind::DefinitionMismatch | Kind::Decode)) {
        hints.push("--msg-path DIR gives definitions of types the bag lacks or gets wrong");
    }
    if !decoded && report.worst() < Some(Severity::Error) {
        hints.push("--decode also checks every payload against its definition");
    }
    if report.findings.iter().any(|f| matches!(f.kind, Kind::Crc | Kind::Decompress | Kind::Structure)) {
        hints.push("`rbag convert` copies what can still be read into a new bag");
    }
    if !report.findings.is_empty() {
        for h in hints {
            writeln!(out, "  hint: {h}")?;
        }
    }
    Ok(())
}
