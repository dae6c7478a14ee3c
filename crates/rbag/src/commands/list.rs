//! `rbag list`: what this build reads and writes, like `ros2 bag list storage|compressor`; and
//! with a bag, what it is made of, like `mcap list chunks|schemas|channels|attachments|metadata`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use rbag_bag::{Bag, Compression};

use crate::{Outcome, UsageError};

/// List the storage backends and compressors this build has, or a bag's chunks, schemas,
/// channels (connections), attachments or metadata records.
///
/// `chunks` applies to ROS 1 and MCAP bags; `schemas` and `channels` (or `connections`) to any
/// bag (MCAP's own schema and channel ids; elsewhere schemas are numbered from 1);
/// `attachments` and `metadata` to MCAP (other storages have none).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag list\n  rbag list storage --json\n  rbag list chunks run.mcap\n  rbag list attachments run.mcap"
)]
pub struct Args {
    /// What to list; `storage` and `compressor` when absent.
    #[arg(value_name = "WHAT", value_parser = [
        "storage", "compressor", "chunks", "schemas", "channels", "connections", "attachments", "metadata",
    ])]
    what: Option<String>,
    /// The bag (for chunks, schemas, channels, attachments and metadata).
    #[arg(value_name = "BAG")]
    bag: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    /// `rbag list WHAT BAG`, for the verbs whose `list` is this.
    pub fn for_bag(what: &str, bag: PathBuf, json: bool) -> Args {
        Args { what: Some(what.into()), bag: Some(bag), json }
    }
}

pub fn run(args: Args) -> Result<Outcome> {
    match (args.what.as_deref(), &args.bag) {
        (None | Some("storage" | "compressor"), None) => build(&args),
        (None | Some("storage" | "compressor"), Some(bag)) => Err(UsageError(format!(
            "`rbag list {}` takes no bag ({}); list chunks, schemas, channels, attachments or metadata of a bag",
            args.what.as_deref().unwrap_or(""),
            bag.display()
        ))
        .into()),
        (Some(what), None) => Err(UsageError(format!("`rbag list {what}` needs a bag: rbag list {what} BAG")).into()),
        (Some(what), Some(path)) => {
            let bag = super::open_with(path, &super::ReadArgs::default())?;
            let (rows, json) = match what {
                "chunks" => chunks(&bag)?,
                "schemas" => schemas(&bag)?,
                "channels" | "connections" => channels(&bag)?,
                "attachments" => attachments(&bag)?,
                _ => metadata(&bag)?,
            };
            let mut out = std::io::stdout().lock();
            if args.json {
                serde_json::to_writer_pretty(&mut out, &json)?;
                writeln!(out)?;
            } else {
                print_table(&mut out, &rows)?;
            }
            out.flush()?;
            Ok(Outcome::Ok)
        }
    }
}

type Listing = (Vec<Vec<String>>, serde_json::Value);

/// A time as `mcap list` prints it with `--time-format seconds`: `1490149580.103843113`.
pub fn seconds(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

fn header(cols: &[&str]) -> Vec<Vec<String>> {
    vec![cols.iter().map(|c| c.to_string()).collect()]
}

fn chunks(bag: &Bag) -> Result<Listing> {
    let chunks = bag.chunks()?;
    let many_files = chunks.iter().any(|c| chunks.first().is_some_and(|f| f.file != c.file));
    let mut rows = header(&[
        "offset",
        "length",
        "start",
        "end",
        "compression",
        "compressed size",
        "uncompressed size",
        "compression ratio",
        "messages",
        "message index length",
    ]);
    if many_files {
        rows[0].push("file".into());
    }
    for c in &chunks {
        let ratio = if c.uncompressed_size == 0 { 0.0 } else { c.compressed_size as f64 / c.uncompressed_size as f64 };
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        let mut row = vec![
            c.offset.to_string(),
            c.length.to_string(),
            seconds(c.start_ns),
            seconds(c.end_ns),
            c.compression.clone(),
            c.compressed_size.to_string(),
            c.uncompressed_size.to_string(),
            format!("{ratio:.6}"),
            opt(c.message_count),
            opt(c.message_index_length),
        ];
        if many_files {
            row.push(c.file.display().to_string());
        }
        rows.push(row);
    }
    Ok((rows, serde_json::to_value(&chunks)?))
}

fn schemas(bag: &Bag) -> Result<Listing> {
    let schemas = bag.schemas()?;
    let mut rows = header(&["id", "name", "encoding", "data"]);
    let mut json = Vec::new();
    for s in &schemas {
        let data = match std::str::from_utf8(&s.data) {
            Ok(text) => text.to_string(),
            Err(_) => format!("<{} bytes binary>", s.data.len()),
        };
        rows.push(vec![s.id.to_string(), s.name.clone(), s.encoding.clone(), data.clone()]);
        json.push(serde_json::json!({
            "id": s.id, "name": s.name, "encoding": s.encoding, "data": data, "channels": s.connections,
        }));
    }
    Ok((rows, json.into()))
}

fn channels(bag: &Bag) -> Result<Listing> {
    let schemas = bag.schemas()?;
    let mut rows = header(&["id", "schemaId", "topic", "messageEncoding", "metadata"]);
    let mut json = Vec::new();
    for c in bag.connections() {
        let schema = schemas.iter().find(|s| s.connections.contains(&c.id)).map_or(0, |s| s.id);
        let metadata = serde_json::to_string(&c.metadata)?;
        rows.push(vec![c.id.to_string(), schema.to_string(), c.topic.clone(), c.encoding.clone(), metadata]);
        json.push(serde_json::json!({
            "id": c.id, "schema_id": schema, "topic": c.topic, "message_type": c.message_type,
            "message_encoding": c.encoding, "metadata": c.metadata,
        }));
    }
    Ok((rows, json.into()))
}

fn attachments(bag: &Bag) -> Result<Listing> {
    let list = bag.attachments()?;
    let many_files = list.iter().any(|a| list.first().is_some_and(|f| f.file != a.file));
    let mut rows = header(&["name", "media type", "log time", "creation time", "content length", "offset"]);
    if many_files {
        rows[0].push("file".into());
    }
    let mut json = Vec::new();
    for a in &list {
        let mut row = vec![
            a.name.clone(),
            a.media_type.clone(),
            seconds(a.log_time),
            seconds(a.create_time),
            a.data.len().to_string(),
            a.offset.to_string(),
        ];
        if many_files {
            row.push(a.file.display().to_string());
        }
        rows.push(row);
        json.push(serde_json::json!({
            "name": a.name, "media_type": a.media_type, "log_time": a.log_time, "create_time": a.create_time,
            "data_size": a.data.len(), "offset": a.offset, "length": a.length, "file": a.file,
        }));
    }
    Ok((rows, json.into()))
}

fn metadata(bag: &Bag) -> Result<Listing> {
    let list = bag.metadata()?;
    let mut rows = header(&["name", "offset", "length", "metadata"]);
    let mut json = Vec::new();
    for m in &list {
        rows.push(vec![
            m.name.clone(),
            m.offset.to_string(),
            m.length.to_string(),
            serde_json::to_string(&m.metadata)?,
        ]);
        json.push(serde_json::json!({
            "name": m.name, "offset": m.offset, "length": m.length, "metadata": m.metadata, "file": m.file,
        }));
    }
    Ok((rows, json.into()))
}

/// Rows as left-aligned columns, two spaces apart, the first row the header (as `mcap list`).
pub fn print_table(out: &mut impl Write, rows: &[Vec<String>]) -> std::io::Result<()> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..cols).map(|i| rows.iter().filter_map(|r| r.get(i)).map(|c| c.chars().count()).max().unwrap_or(0)).collect();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// What this build reads and writes (no bag given).
fn build(args: &Args) -> Result<Outcome> {
    let storage = args.what.as_deref() != Some("compressor");
    let compressor = args.what.as_deref() != Some("storage");
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::Map::new();
        if storage {
            v.insert("storage".into(), serde_json::to_value(rbag_bag::summaries())?);
        }
        if compressor {
            let list = Compression::ALL.map(|c| serde_json::json!({"name": c.name(), "applies_to": c.applies_to()}));
            v.insert("compressor".into(), serde_json::Value::from(list.to_vec()));
        }
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        if storage {
            writeln!(out, "storage:")?;
            for b in rbag_bag::summaries() {
                let rw = match (b.capabilities.read, b.capabilities.write) {
                    (true, true) => "read, write",
                    (true, false) => "read",
                    _ => "write",
                };
                writeln!(out, "  {:<9} {} [{rw}]", b.name, b.description)?;
            }
        }
        if compressor {
            writeln!(out, "compressor:")?;
            for c in Compression::ALL {
                writeln!(out, "  {:<9} {}", c.name(), c.applies_to())?;
            }
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
