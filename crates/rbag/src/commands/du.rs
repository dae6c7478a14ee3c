//! `rbag du`: payload bytes per topic and per connection.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use rbag_bag::du::{du, Method};
use rbag_bag::units::format_size;

use crate::Outcome;

/// Show how many payload bytes each topic and connection takes.
///
/// By default the figures come from the bag's index, with no payload read: exact for SQLite3,
/// estimated for ROS 1 and MCAP (within 1% of the total; the output says which). --exact reads
/// every message and sums its payload size.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag du run.bag\n  rbag du run.mcap --exact --json\n  rbag du rosbag2_dir --connections"
)]
pub struct Args {
    /// The bag.
    bag: PathBuf,
    /// Read every message and sum its payload size, instead of using the index.
    #[arg(long)]
    exact: bool,
    /// Also list each connection (a topic can have several publishers).
    #[arg(long)]
    connections: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<Outcome> {
    let bag = super::open_with(&args.bag, &super::ReadArgs::default())?;
    let report = du(&bag, args.exact)?;
    let dropped = report.method == Method::Exact && super::done_reading(&bag);
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        v["exact"] = report.method.is_exact().into();
        v["accuracy"] = report.method.describe().into();
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        let share = |b: u64| if report.total_bytes == 0 { 0.0 } else { b as f64 * 100.0 / report.total_bytes as f64 };
        let mut rows = vec![["topic", "type", "messages", "bytes", "size", "share"].map(String::from).to_vec()];
        for t in &report.topics {
            rows.push(vec![
                t.topic.clone(),
                t.message_type.clone(),
                t.messages.to_string(),
                t.bytes.to_string(),
                format_size(t.bytes),
                format!("{:.1}%", share(t.bytes)),
            ]);
        }
        super::list::print_table(&mut out, &rows)?;
        if args.connections {
            writeln!(out)?;
            let mut rows =
                vec![["connection", "topic", "type", "messages", "bytes", "share"].map(String::from).to_vec()];
            for c in &report.connections {
                rows.push(vec![
                    c.id.to_string(),
                    c.topic.clone(),
                    c.message_type.clone(),
                    c.messages.to_string(),
                    c.bytes.to_string(),
                    format!("{:.1}%", share(c.bytes)),
                ]);
            }
            super::list::print_table(&mut out, &rows)?;
        }
        writeln!(
            out,
            "\ntotal: {} payload bytes ({}) in {} on disk; {}",
            report.total_bytes,
            format_size(report.total_bytes),
            format_size(report.file_bytes),
            report.method.describe()
        )?;
    }
    out.flush()?;
    Ok(if dropped { Outcome::Dropped } else { Outcome::Ok })
}
