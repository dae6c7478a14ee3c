//! `rbag export`: a bag's topics as tables, one Parquet, Arrow IPC or CSV file per topic, for
//! pandas, DuckDB, Polars and spreadsheets.

use std::path::PathBuf;

use anyhow::{Context, Result};
use rbag_arrow::export::{export, ExportFormat, ExportOptions};
use rbag_bag::StorageError;

use crate::{output, Outcome, UsageError};

/// Write each topic of a bag as a table: one file per topic in DIR, named after the topic
/// (`/camera/image_raw` → `camera.image_raw.parquet`).
///
/// Columns: `log_time` (ns), then one per field, nested messages as dotted names
/// (`pose.position.x`). Arrays are list columns, `uint8[]` (image data) binary, arrays of
/// messages lists of structs; in CSV, arrays and nested messages are JSON text. The columns are
/// those of Python's `Reader.to_arrow`.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  rbag export run.bag -o tables                      every topic, as Parquet
  rbag export run.mcap -o tables --format csv /imu   one topic, as CSV
  duckdb -c \"SELECT avg(\\\"linear_acceleration.z\\\") FROM 'tables/imu.parquet'\"

Exit codes: 0 ok, 1 error, 2 usage error (an unknown topic), 3 done but topics were skipped (undecodable).")]
pub struct Args {
    /// The bag (a ROS 1 bag, a rosbag2 directory, or a .db3/.mcap file).
    #[arg(value_name = "PATH")]
    path: PathBuf,
    /// Topics to export; every decodable topic when none given.
    #[arg(value_name = "TOPIC")]
    topics: Vec<String>,
    /// The directory to write into (created if missing; its parent must exist).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: PathBuf,
    /// The file format.
    #[arg(long, value_name = "FORMAT", default_value = "parquet", value_parser = ["parquet", "arrow", "csv"])]
    format: String,
    #[command(flatten)]
    window: super::WindowArgs,
    /// Replace files of the same names that rbag could have written.
    #[arg(long)]
    force: bool,
    /// Print what was written as JSON: `{files: [{topic, path, rows, columns, left_out}], skipped: [{topic, reason}]}`.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    types: super::TypeArgs,
    #[command(flatten)]
    read: super::ReadArgs,
}

pub fn run(args: Args) -> Result<Outcome> {
    let format = ExportFormat::from_name(&args.format).context("--format")?;
    let bag = super::open_with(&args.path, &args.read)?;
    let types = args.types.sources(&bag.storage_info().map_err(super::with_hint)?.properties)?;
    let (start, end) = args.window.resolve(std::slice::from_ref(&bag))?;
    let options = ExportOptions { format, topics: args.topics.clone(), start, end, replace: args.force };
    let total = bag.info().map(|i| i.message_count).unwrap_or(0);
    let bar = output::progress_bar(total, "exporting");
    let report = export(&bag, &types, &args.output, &options, &mut |rows| bar.inc(rows)).map_err(|e| {
        let what = format!("cannot export {} into {}", args.path.display(), args.output.display());
        match e {
            rbag_arrow::Error::Bag(e @ rbag_bag::Error::NoTopic { .. }) => {
                anyhow::Error::new(UsageError(e.to_string()))
            }
            rbag_arrow::Error::Bag(e) => {
                let hint = matches!(e.storage(), Some(StorageError::OutputExists { .. }))
                    .then_some(" (use --force to replace it)")
                    .unwrap_or_default();
                super::with_hint(e).context(format!("{what}{hint}"))
            }
            e => anyhow::Error::new(e).context(what),
        }
    })?;
    bar.finish_and_clear();
    for f in report.files.iter().filter(|f| !f.left_out.is_empty()) {
        note!(
            "warning: {}: left out {} (messages with no fields, which {} cannot hold)",
            f.path.display(),
            f.left_out.join(", "),
            args.format
        );
    }
    for (topic, reason) in &report.skipped {
        note!("warning: {}: skipping {topic}: {reason}", args.path.display());
    }
    if args.json {
        let files: Vec<_> = report
            .files
            .iter()
            .map(|f| serde_json::json!({"topic": f.topic, "path": f.path, "rows": f.rows, "columns": f.columns, "left_out": f.left_out}))
            .collect();
        let skipped: Vec<_> =
            report.skipped.iter().map(|(t, r)| serde_json::json!({"topic": t, "reason": r})).collect();
        println!("{}", serde_json::json!({"files": files, "skipped": skipped}));
    } else {
        for f in &report.files {
            let s = if f.rows == 1 { "" } else { "s" };
            println!("{}\t{} row{s}\t{} columns\t{}", f.topic, f.rows, f.columns, f.path.display());
        }
    }
    let lost = super::done_reading(&bag);
    Ok(if report.skipped.is_empty() && !lost { Outcome::Ok } else { Outcome::Dropped })
}
