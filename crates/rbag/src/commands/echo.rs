//! `rbag echo`: print a bag's messages decoded, like `rostopic echo` / `ros2 topic echo` on a
//! live topic: YAML by default, NDJSON with `--json`, flat columns with `--csv`.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rbag_bag::decode::{render, Decoders, Encoding, MessageRef, Schema};
use rbag_bag::{Connection, Filter};

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
    let connections = bag.connections().to_vec();
    // Selected topics, each with its field path if one was given.
    let mut selections: BTreeMap<String, Option<String>> = BTreeMap::new();
    for t in &args.topics {
        let (topic, path) = split_topic(t);
        if !connections.iter().any(|c| c.topic == topic) {
            let known: Vec<&str> = connections.iter().map(|c| c.topic.as_str()).collect();
            bail!("{}: no topic {topic} (the bag has: {})", args.path.display(), known.join(", "));
        }
        selections.insert(topic.to_string(), path.map(str::to_string));
    }
    let explicit = !selections.is_empty();
    let info = bag.storage_info().map_err(super::with_hint)?;
    let mut decoders = Decoders::new(args.types.sources(&info.properties)?);
    // Compile every selected connection first, so a missing type fails before any output.
    let mut schemas: BTreeMap<u32, (Arc<Schema>, Encoding)> = BTreeMap::new();
    let mut skipped = Vec::new();
    for c in &connections {
        if explicit && !selections.contains_key(&c.topic) {
            continue;
        }
        // A lenient reader's stand-in for an undeclared connection: no type to decode with.
        if let Some(n) = info.undeclared.get(&c.id) {
            note!("warning: {}: skipping {n} message(s) on connection {}, which the bag never declares (no type to decode them with)", args.path.display(), c.id);
            skipped.push(c.topic.clone());
            continue;
        }
        match decoders.schema(c) {
            Ok(s) => {
                if let Some(Some(p)) = selections.get(&c.topic) {
                    render::check_path(&s.0, p).map_err(|e| anyhow::anyhow!("topic {}: {e}", c.topic))?;
                }
                schemas.insert(c.id, s);
            }
            Err(e) if explicit => {
                return Err(super::decode_error(&e)).with_context(|| format!("cannot decode {}", args.path.display()))
            }
            Err(e) => {
                note!("warning: skipping {}", super::decode_error(&e));
                skipped.push(c.topic.clone());
            }
        }
    }
    let by_id: BTreeMap<u32, &Connection> = connections.iter().map(|c| (c.id, c)).collect();
    if args.csv {
        // The header depends on the schema: settle it on each topic's first message.
        for (id, entry) in schemas.iter_mut() {
            let Some(c) = by_id.get(id) else { continue };
            if let Some(first) = rbag_bag::decode::first_message(bag.reader(), c)? {
                decoders.decode(c, 0, &first).with_context(|| format!("cannot decode {}", args.path.display()))?;
                *entry = decoders.schema(c).map_err(|e| super::decode_error(&e))?;
            }
        }
    }
    let topics: Vec<String> = schemas
        .keys()
        .filter_map(|id| by_id.get(id))
        .map(|c| c.topic.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    // Without a selection, every topic but the undecodable ones is read, so that a message on
    // a connection the bag never declares fails the read instead of going unseen.
    let filter = if explicit {
        Filter { topics: topics.clone(), start: args.start, end: args.end, ..Filter::default() }
    } else {
        let exclude_topics = skipped.iter().filter(|t| !topics.contains(t)).cloned().collect();
        Filter { exclude_topics, start: args.start, end: args.end, ..Filter::default() }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut style = if args.json {
        Style::Json
    } else if args.csv {
        csv_header(&mut out, &schemas, &selections, &by_id)?
    } else {
        Style::Yaml { max_array: (!args.full_length).then_some(args.truncate_length), multi: topics.len() > 1 }
    };
    let mut printed = 0u64;
    if !topics.is_empty() || !explicit {
        for m in bag.messages(&filter).map_err(super::with_hint)? {
            if args.count.is_some_and(|n| printed >= n) {
                break;
            }
            let m = m?;
            let Some(c) = by_id.get(&m.connection).filter(|_| schemas.contains_key(&m.connection)) else { continue };
            let msg = decoders
                .view(c, m.log_time, &m.data)
                .with_context(|| format!("cannot decode {}", args.path.display()))?;
            let path = selections.get(&c.topic).and_then(|p| p.as_deref());
            style.write(&mut out, c, m.log_time, msg, path)?;
            for w in decoders.take_warnings() {
                note!("warning: {}: {w}", args.path.display());
            }
            printed += 1;
        }
    }
    out.flush()?;
    // Data the bag holds but cannot give (a torn tail), unless -n stopped before the end.
    let lost = if args.count.is_some_and(|n| printed >= n) { false } else { super::done_reading(&bag) };
    Ok(if skipped.is_empty() && !lost { Outcome::Ok } else { Outcome::Dropped })
}

/// `/imu.linear_acceleration.x` → (`/imu`, `linear_acceleration.x`). Topic names hold no `.`.
fn split_topic(arg: &str) -> (&str, Option<&str>) {
    let cut = arg.find(['.', '[']);
    match cut {
        Some(i) => (&arg[..i], Some(arg[i..].trim_start_matches('.'))),
        None => (arg, None),
    }
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
fn csv_header(
    out: &mut dyn Write,
    schemas: &BTreeMap<u32, (Arc<Schema>, Encoding)>,
    selections: &BTreeMap<String, Option<String>>,
    by_id: &BTreeMap<u32, &Connection>,
) -> Result<Style> {
    let mut header: Option<(Vec<String>, &str)> = None;
    let mut tables = BTreeMap::new();
    for (id, (schema, _)) in schemas {
        let topic = by_id.get(id).map_or("", |c| c.topic.as_str());
        let columns = match selections.get(topic).and_then(|p| p.as_deref()) {
            Some(p) => vec![p.to_string()],
            None => {
                let csv =
                    render::Csv::new(schema).map_err(|e| anyhow::anyhow!("topic {topic}: {e}; echo it with --json"))?;
                let columns = csv.columns().to_vec();
                tables.insert(*id, (Arc::as_ptr(schema), csv));
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
        assert_eq!(super::split_topic("/imu.linear_acceleration.x"), ("/imu", Some("linear_acceleration.x")));
        assert_eq!(super::split_topic("/tf[0]"), ("/tf", Some("[0]")));
        assert_eq!(super::split_topic("/a/b"), ("/a/b", None));
    }
}
