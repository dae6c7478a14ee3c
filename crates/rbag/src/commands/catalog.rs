//! `rbag catalog`: one Parquet table of many bags' summaries (a row per bag and topic), for
//! DuckDB, Polars and pandas, updated in place on later runs.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rbag_bag::output::{check_with, OutputPolicy, Staged};
use rbag_bag::StorageError;
use rbag_fleet::catalog::{self, Found, Options, Row, DEFAULT_THREADS};

use crate::Outcome;

/// Catalog many bags: one Parquet file with a row per bag and topic, from each bag's summary
/// alone (its index or summary section; never its messages).
///
/// Each input is a bag, a directory (searched for .bag, .mcap and .db3 files and rosbag2
/// directories) or a URL prefix (s3://bucket/runs/, listed). Columns: url, size, version,
/// storage, start, end (ns timestamps), topic, type, type_hash, message_count, frequency_hz
/// (the topic's mean rate over the bag). A bag with no topics has one row, with no topic.
///
/// When OUT is already a catalog, it is updated: bags whose size and version (ETag or
/// modification time) did not change keep their rows and are not opened again, and bags that
/// lie outside the inputs keep theirs. A bag that cannot be read is named on stderr and left
/// out (rbag then exits with 1, after writing the others).
#[derive(clap::Args)]
#[command(after_help = "Examples:
  rbag catalog /data/runs s3://fleet/runs/ -o catalog.parquet   build it, or bring it up to date
  duckdb -c \"SELECT topic, sum(message_count) FROM 'catalog.parquet' GROUP BY topic\"

Exit codes: 0 ok, 1 error (an input or OUT could not be used, or some bag could not be read), 2 usage error.")]
pub struct Args {
    /// Bags, directories and URL prefixes to catalog.
    #[arg(required = true, value_name = "PATH|URL")]
    inputs: Vec<String>,
    /// The catalog to write (Parquet); an existing catalog there is updated.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,
    /// Print the catalog as JSON: `{output, read, reused, kept, removed, failed: [{bag, reason}],
    /// rows: [{url, size, version, storage, start, end, topic, type, type_hash, message_count,
    /// frequency_hz}]}` (times in ns).
    #[arg(long)]
    json: bool,
    /// Replace an existing OUT that is not a catalog of this version (an older rbag catalog).
    #[arg(long)]
    force: bool,
}

/// The kind of file OUT must be, for the refusal to replace anything else.
const KIND: &str = "an rbag catalog";

pub fn run(args: Args) -> Result<Outcome> {
    #[cfg(feature = "remote")]
    if let Some(w) = args.inputs.iter().find_map(|i| rbag_remote::profile_warning(i)) {
        note!("warning: {w}");
    }
    let found = catalog::find(&args.inputs).context("cannot find the bags to catalog")?;
    if found.is_empty() {
        note!("warning: no bags found in {}", args.inputs.join(", "));
    }
    let (checked, previous) = check_output(&args, &found)?;
    // Before any bag is read: a missing directory for OUT is found now.
    let staged = Staged::new(checked).with_context(|| format!("cannot write {}", args.output.display()))?;
    let to_read = catalog::to_read(&found, previous.as_deref()).len();
    let bar = progress_bar(to_read as u64);
    let options = Options {
        // `--threads` (global): bags read at once; reading summaries waits on disks and
        // networks, not cores, so the default is not the core count.
        threads: rbag_bag::pool::configured_threads().unwrap_or(DEFAULT_THREADS),
        open: rbag_bag::OpenOptions { allow_remote_scan: super::remote::scan_allowed(), ..Default::default() },
    };
    let (rows, report) = catalog::update(&args.inputs, found, previous, &options, &|_: &Found| bar.inc(1));
    bar.finish_and_clear();

    let target = staged.target().to_path_buf();
    let file = std::fs::File::create(staged.temp()).with_context(|| format!("cannot write {}", target.display()))?;
    catalog::write_to(&rows, std::io::BufWriter::new(file), &target)?;
    staged.commit().with_context(|| format!("cannot write {}", target.display()))?;

    for (bag, reason) in &report.failed {
        note!("error: {bag}: {reason}");
    }
    let bags = rows.iter().map(|r| r.url.as_str()).collect::<std::collections::BTreeSet<_>>().len();
    let mut out = std::io::stdout().lock();
    if args.json {
        let failed: Vec<_> = report.failed.iter().map(|(b, r)| serde_json::json!({"bag": b, "reason": r})).collect();
        let rows: Vec<_> = rows.iter().map(row_json).collect();
        let doc = serde_json::json!({
            "output": args.output, "read": report.read, "reused": report.reused, "kept": report.kept,
            "removed": report.removed, "failed": failed, "rows": rows,
        });
        serde_json::to_writer(&mut out, &doc)?;
        writeln!(out)?;
    } else {
        let mut line = format!(
            "{}\t{bags} bag(s), {} row(s)\t{} read, {} unchanged",
            args.output.display(),
            rows.len(),
            report.read,
            report.reused
        );
        if report.kept > 0 {
            line.push_str(&format!(", {} outside the inputs kept", report.kept));
        }
        if report.removed > 0 {
            line.push_str(&format!(", {} gone", report.removed));
        }
        if !report.failed.is_empty() {
            line.push_str(&format!(", {} failed", report.failed.len()));
        }
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    if !report.failed.is_empty() {
        anyhow::bail!(
            "{} bag(s) could not be read (named above) and are left out of {}, which holds the other {bags}",
            report.failed.len(),
            args.output.display()
        );
    }
    Ok(Outcome::Ok)
}

/// Checks OUT before any bag is read: a catalog of this version is updated (no `--force`
/// needed); anything else there is refused unless `--force`, and even then replaced only when
/// it is an rbag catalog. The local bags are inputs OUT must not touch.
fn check_output(args: &Args, found: &[Found]) -> Result<(rbag_bag::output::CheckedOutput, Option<Vec<Row>>)> {
    let out = &args.output;
    let is_file = std::fs::symlink_metadata(out).is_ok_and(|m| m.is_file());
    let previous = if is_file { catalog::read(out).ok() } else { None };
    // Local bags are named by absolute paths; URLs are no concern of the output's.
    let inputs = found.iter().map(|f| Path::new(&f.url_or_path)).filter(|p| p.is_absolute()).map(Path::to_path_buf);
    let policy = OutputPolicy { inputs: inputs.collect(), replace: args.force || previous.is_some() };
    let checked = check_with(out, &policy, KIND, &|p| catalog::is_catalog(p)).map_err(|e| {
        let hint = match e {
            StorageError::OutputExists { .. } if catalog::is_catalog(out) => {
                " (an rbag catalog of another version: use --force to replace it)"
            }
            StorageError::OutputExists { .. } => {
                " (it is not an rbag catalog to update, and rbag replaces only files it could have written)"
            }
            _ => "",
        };
        anyhow::Error::new(e).context(format!("cannot write the catalog {}{hint}", out.display()))
    })?;
    Ok((checked, previous))
}

fn row_json(r: &Row) -> serde_json::Value {
    serde_json::json!({
        "url": r.url, "size": r.size, "version": r.version, "storage": r.storage, "start": r.start,
        "end": r.end, "topic": r.topic, "type": r.message_type, "type_hash": r.type_hash,
        "message_count": r.message_count, "frequency_hz": r.frequency_hz,
    })
}

/// A bar of bags read, on stderr when it is a terminal.
fn progress_bar(total: u64) -> ProgressBar {
    if total < 2 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("reading summaries [{bar:30}] {pos}/{len} bags ({per_sec}, eta {eta})")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar
}
