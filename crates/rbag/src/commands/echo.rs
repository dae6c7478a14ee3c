//! `rbag echo`: print a bag's messages decoded, like `rostopic echo` / `ros2 topic echo` on a
//! live topic: YAML by default, NDJSON with `--json`, flat columns with `--csv`.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rbag_bag::decode::{render, MessageRef, Schema};
use rbag_bag::read::{DecodedReader, ReadSpec};
use rbag_bag::Connection;

use crate::units::parse_time;
use crate::Outcome;

/// Print messages decoded, from any bag. A topic may carry a field path:
/// `/imu.linear_acceleration.x`, `/tf.transforms[0].child_frame_id`.
///
/// Types come from the bag's own definitions, then `--msg-path` directories, then the bundled
/// store (ROS 1 noetic; ROS 2 humble and later common types).
#[derive(clap::Args)]
pub struct Args {
    /// The bag (a ROS 1 bag, a rosbag2 directory, or a .db3/.mcap file).
    #[arg(value_name = "PATH")]
    path: PathBuf,
    /// Topics to print, each optionally followed by a field path; all topics when none given.
    #[arg(value_name = "TOPIC")]
    topics: Vec<String>,
    /// Print NDJSON: one object per message with `topic`, `log_time` (ns) and `message`.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV: `log_time,topic` and one column per field (the topics must print the same
    /// columns).
    #[arg(long)]
    csv: bool,
    /// Stop after N messages.
    #[arg(short = 'n', long, value_name = "N")]
    count: Option<u64>,
    /// Only messages at or after this time (seconds since the epoch, or integer ns with `ns`).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    start: Option<u64>,
    /// Only messages before this time.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    end: Option<u64>,
    /// In YAML, print at most this many elements of each array.
    #[arg(short = 'l', long, value_name = "N", default_value_t = 128)]
    truncate_length: usize,
    /// In YAML, print arrays whole.
    #[arg(short = 'f', long)]
    full_length: bool,
    #[command(flatten)]
    types: super::TypeArgs,
    #[command(flatten)]
    read: super::ReadArgs,
}

pub fn run(args: Args) -> Result<Outcome> {
    let bag = super::open_with(&args.path, &args.read)?;
    let types = args.types.sources(&bag.storage_info().map_err(super::with_hint)?.properties)?;
    let spec = ReadSpec { topics: args.topics.clone(), start: args.start, end: args.end, types, settle: args.csv };
    let mut reader = DecodedReader::new(&bag, spec)
        .map_err(super::with_hint)
        .with_context(|| format!("cannot decode {}", args.path.display()))?;
    for s in reader.skipped() {
        note!("warning: {}: skipping {}", args.path.display(), super::decode_error(&s.reason));
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut style = if args.json {
        Style::Json
    } else if args.csv {
        csv_header(&mut out, &reader)?
    } else {
        Style::Yaml { max_array: (!args.full_length).then_some(args.truncate_length), multi: reader.topics().len() > 1 }
    };
    let mut printed = 0u64;
    while args.count.is_none_or(|n| printed < n) {
        let Some(m) = reader.next_message().map_err(super::with_hint)? else { break };
        style.write(&mut out, m.connection, m.log_time, m.message, m.path)?;
        printed += 1;
        for w in reader.take_warnings() {
            note!("warning: {}: {w}", args.path.display());
        }
    }
    out.flush()?;
    // Data the bag holds but cannot give (a torn tail), unless -n stopped before the end.
    let lost = if args.count.is_some_and(|n| printed >= n) { false } else { super::done_reading(&bag) };
    Ok(if reader.skipped().is_empty() && !lost { Outcome::Ok } else { Outcome::Dropped })
}

enum Style {
    Yaml {
        max_array: Option<usize>,
        multi: bool,
    },
    Json,
    /// The header's columns, and each connection's flattening (worked out once per type).
    Csv {
        header: Vec<String>,
        tables: BTreeMap<u32, (*const Schema, render::Csv)>,
    },
}

impl Style {
    fn write(
        &mut self,
        out: &mut dyn Write,
        c: &Connection,
        log_time: u64,
        msg: MessageRef,
        path: Option<&str>,
    ) -> Result<()> {
        let selected = match path {
            Some(p) => match msg.path(p).with_context(|| format!("topic {}", c.topic))? {
                Some(s) => Some(s),
                None => return Ok(()), // an index past this message's array
            },
            None => None,
        };
        match self {
            Style::Yaml { max_array, multi } => {
                if *multi {
                    writeln!(out, "# {} {}.{:09}", c.topic, log_time / 1_000_000_000, log_time % 1_000_000_000)?;
                }
                match &selected {
                    Some(s) => s.yaml(*max_array, out)?,
                    None => msg.yaml(*max_array, out)?,
                }
                writeln!(out, "---")?;
            }
            Style::Json => {
                out.write_all(b"{\"topic\":")?;
                serde_json::to_writer(&mut *out, &c.topic)?;
                write!(out, ",\"log_time\":{log_time},\"message\":")?;
                match &selected {
                    Some(s) => s.json(out)?,
                    None => msg.json(out)?,
                }
                out.write_all(b"}\n")?;
            }
            Style::Csv { header, tables } => {
                write!(out, "{log_time},{}", render::csv_quote(&c.topic))?;
                match &selected {
                    Some(s) => {
                        let mut cell = Vec::new();
                        s.json(&mut cell)?;
                        write!(out, ",{}", render::csv_quote(&String::from_utf8_lossy(&cell)))?;
                    }
                    None => {
                        let (table_schema, csv) = tables
                            .get_mut(&c.id)
                            .ok_or_else(|| anyhow::anyhow!("topic {}: no CSV columns", c.topic))?;
                        // The bag's definition may have been replaced when the first message did not fit it.
                        if !std::ptr::eq(*table_schema, msg.schema()) {
                            let replaced = render::Csv::new(msg.schema())
                                .map_err(|e| anyhow::anyhow!("topic {}: {e}", c.topic))?;
                            if replaced.columns() != header.as_slice() {
                                bail!("topic {}: its definition was replaced by one with other columns; echo it with --json", c.topic);
                            }
                            (*table_schema, *csv) = (msg.schema() as *const Schema, replaced);
                        }
                        for cell in csv.cells_of(&msg) {
                            write!(out, ",{cell}")?;
                        }
                    }
                }
                writeln!(out)?;
            }
        }
        Ok(())
    }
}

/// Writes the header row and returns the CSV style; every selected topic must print the same
/// columns.
fn csv_header(out: &mut dyn Write, reader: &DecodedReader) -> Result<Style> {
    let mut header: Option<(Vec<String>, &str)> = None;
    let mut tables = BTreeMap::new();
    for (c, schema, path) in reader.schemas() {
        let topic = c.topic.as_str();
        let columns = match path {
            Some(p) => vec![p.to_string()],
            None => {
                let csv =
                    render::Csv::new(schema).map_err(|e| anyhow::anyhow!("topic {topic}: {e}; echo it with --json"))?;
                let columns = csv.columns().to_vec();
                tables.insert(c.id, (Arc::as_ptr(schema), csv));
                columns
            }
        };
        match &header {
            Some((h, first)) if *h != columns => bail!(
                "--csv needs topics of one type: {first} and {topic} print different columns; echo them separately"
            ),
            Some(_) => {}
            None => header = Some((columns, topic)),
        }
    }
    let header = header.map(|h| h.0);
    if let Some(columns) = &header {
        let names: Vec<_> = columns.iter().map(|c| render::csv_quote(c)).collect();
        writeln!(out, "log_time,topic,{}", names.join(","))?;
    }
    Ok(Style::Csv { header: header.unwrap_or_default(), tables })
}

#[cfg(test)]
mod tests {
    #[test]
    fn topic_and_field_path() {
        assert_eq!(rbag_bag::read::split_topic("/imu.linear_acceleration.x"), ("/imu", Some("linear_acceleration.x")));
        assert_eq!(rbag_bag::read::split_topic("/tf[0]"), ("/tf", Some("[0]")));
        assert_eq!(rbag_bag::read::split_topic("/a/b"), ("/a/b", None));
    }
}
