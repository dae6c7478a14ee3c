//! `rbag echo`: print a bag's messages decoded, like `rostopic echo` / `ros2 topic echo` on a
//! live topic: YAML by default, NDJSON with `--json`, flat columns with `--csv`.

use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::Result;
use rbag_bag::decode::render::Style;
use rbag_bag::read::{resolve_topic, DecodedReader, ReadSpec, Resolved};
use rbag_bag::text::{CsvLayout, CsvOptions, TextError, TextFormat, TextWriter, TimeFormat};

use crate::{Outcome, UsageError};

/// Print messages decoded, from any bag. A topic may carry a field path:
/// `/imu.linear_acceleration.x`, `/tf.transforms[0].child_frame_id`, or rostopic's
/// `/imu/linear_acceleration/x`; indices may count from the end (`[-1]`) or be slices (`[*]`,
/// `[1:3]`). Relative names resolve against the bag's topics (`chatter` is `/chatter`).
///
/// Types come from the bag's own definitions, then `--msg-path` directories, then the bundled
/// store (ROS 1 noetic; ROS 2 humble and later common types).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag echo run.bag /imu -n 3\n  rbag echo run.bag /imu/linear_acceleration/z --csv > accel.csv\n  rbag echo run.bag \"/tf.transforms[*].child_frame_id\" --start +5 --duration 2s\n  rbag echo a.bag b.mcap /chatter --json"
)]
pub struct Args {
    /// Bags and topics. A bag is a URL (s3://, http(s)://, gs://, az://) or an existing path
    /// rbag recognises as a bag (a ROS 1 bag, a rosbag2 directory, a .db3/.mcap file); the
    /// others are topics to print, each optionally followed by a field path (all topics when
    /// none given). When none is a bag, the first is taken as one. Several bags are merged in
    /// time order.
    #[arg(value_name = "BAG|TOPIC", required_unless_present = "input")]
    inputs: Vec<String>,
    /// A bag to read, whatever its name looks like (repeatable).
    #[arg(short = 'i', long = "input", value_name = "BAG")]
    input: Vec<PathBuf>,
    /// Print NDJSON: one object per message with `topic`, `log_time` (ns) and `message`.
    #[arg(long, conflicts_with_all = ["csv", "csv_wide", "csv_long"])]
    json: bool,
    /// Print CSV: `log_time,topic` and one column per field; topics of different types share
    /// one table, the union of their columns, empty where a topic has no such field.
    #[arg(long)]
    csv: bool,
    /// The union of the topics' columns (what --csv does; kept for scripts that name it).
    #[arg(long, conflicts_with = "csv_long")]
    csv_wide: bool,
    /// With --csv, one row per field: `log_time,topic,field,value` (any mix of types).
    #[arg(long)]
    csv_long: bool,
    /// With --csv, the time column: ns since the epoch, s (seconds since the epoch), rel
    /// (seconds since the first row) or iso (ISO 8601 UTC).
    #[arg(long, value_name = "FORMAT", default_value = "ns", value_parser = ["ns", "s", "rel", "iso"])]
    time_format: String,
    /// Stop after N messages.
    #[arg(short = 'n', long, value_name = "N")]
    count: Option<u64>,
    #[command(flatten)]
    window: super::WindowArgs,
    /// In YAML, print at most this many elements of each array.
    #[arg(short = 'l', long, value_name = "N", default_value_t = 128)]
    truncate_length: usize,
    /// In YAML, print arrays whole.
    #[arg(short = 'f', long)]
    full_length: bool,
    /// In YAML, print arrays as `<array type: T, length: N>` (rostopic's --noarr).
    #[arg(long, visible_alias = "no-arr")]
    noarr: bool,
    /// In YAML, print strings as `<string length: N>` (rostopic's --nostr).
    #[arg(long, visible_alias = "no-str")]
    nostr: bool,
    /// With --json, write NaN and infinities as `null` (default: the strings "NaN",
    /// "Infinity", "-Infinity").
    #[arg(long, requires = "json")]
    json_nan_null: bool,
    #[command(flatten)]
    types: super::TypeArgs,
    #[command(flatten)]
    read: super::ReadArgs,
}

/// Whether a positional names a bag: a URL of an object store or web server, or an existing
/// path a storage backend recognises.
fn is_bag(arg: &str) -> bool {
    const SCHEMES: [&str; 5] = ["s3://", "http://", "https://", "gs://", "az://"];
    let path = Path::new(arg);
    SCHEMES.iter().any(|s| arg.starts_with(s)) || (path.exists() && rbag_bag::detect_backend(path).is_ok())
}

pub fn run(args: Args) -> Result<Outcome> {
    let mut paths = args.input.clone();
    let mut topics = Vec::new();
    for a in &args.inputs {
        if is_bag(a) {
            paths.push(a.into());
        } else {
            topics.push(a.clone());
        }
    }
    if paths.is_empty() && !topics.is_empty() {
        // Opening it says why it is not a bag.
        paths.push(topics.remove(0).into());
    }
    let bags = paths.iter().map(|p| super::open_with(p, &args.read)).collect::<Result<Vec<_>>>()?;
    let (start, end) = args.window.resolve(&bags)?;
    let mut readers: Vec<(&PathBuf, DecodedReader)> = Vec::new();
    let mut found = vec![bags.len() == 1; topics.len()];
    for (bag, path) in bags.iter().zip(&paths) {
        let types = args.types.sources(&bag.storage_info().map_err(super::with_hint)?.properties)?;
        // With several bags, each reads the topics it has.
        let mut mine = topics.clone();
        if bags.len() > 1 {
            let known: Vec<&str> = bag.connections().iter().map(|c| c.topic.as_str()).collect();
            mine.clear();
            for (t, found) in topics.iter().zip(found.iter_mut()) {
                if resolve_topic(t, &known) != Resolved::NoTopic {
                    *found = true;
                    mine.push(t.clone());
                }
            }
            if mine.is_empty() && !topics.is_empty() {
                continue;
            }
        }
        let spec = ReadSpec { topics: mine, start, end, types, settle: args.csv || args.csv_wide || args.csv_long };
        let reader = DecodedReader::new(bag, spec).map_err(|e| match e {
            e @ rbag_bag::Error::AmbiguousTopic { .. } => {
                anyhow::Error::new(UsageError(format!("{e}; name one of them in full")))
            }
            e => super::with_hint(e).context(format!("cannot decode {}", path.display())),
        })?;
        for s in reader.skipped() {
            note!("warning: {}: skipping {}", path.display(), super::decode_error(&s.reason));
        }
        readers.push((path, reader));
    }
    if let Some((t, _)) = topics.iter().zip(&found).find(|(_, f)| !**f) {
        let known: std::collections::BTreeSet<&str> =
            bags.iter().flat_map(|b| b.connections().iter().map(|c| c.topic.as_str())).collect();
        let known = known.into_iter().collect::<Vec<_>>().join(", ");
        anyhow::bail!("no input has topic {t} (they have: {known})");
    }
    let csv = args.csv || args.csv_wide || args.csv_long;
    let format = match (args.json, csv) {
        (true, _) => TextFormat::Json,
        (_, true) => TextFormat::Csv,
        _ => TextFormat::Yaml { max_array: (!args.full_length).then_some(args.truncate_length) },
    };
    let text_error = |e: TextError| {
        match e {
        TextError::Io(e) => anyhow::Error::new(e),
        e @ TextError::MixedColumns { .. } => anyhow::anyhow!(
            "--csv: {e}; write one table with --csv-wide (the union of the columns) or --csv-long (one row per field), echo it with --json, or topics of one type separately"
        ),
        e if csv => anyhow::anyhow!("--csv: {e}; echo it with --json, or topics of one type separately"),
        e => anyhow::Error::new(e),
    }
    };
    let style =
        Style { no_arrays: args.noarr, no_strings: args.nostr, nan_null: args.json_nan_null, ..Style::default() };
    let refs: Vec<&DecodedReader> = readers.iter().map(|(_, r)| r).collect();
    let layout = match (args.csv_wide, args.csv_long) {
        (true, _) => CsvLayout::Wide,
        (_, true) => CsvLayout::Long,
        // Topics of different types share one table, the union of their columns.
        _ => CsvLayout::Wide,
    };
    let time = match args.time_format.as_str() {
        "s" => TimeFormat::Secs,
        "rel" => TimeFormat::Rel,
        "iso" => TimeFormat::Iso,
        _ => TimeFormat::Ns,
    };
    let csv_options = CsvOptions { layout, time };
    let mut out = TextWriter::over_csv(BufWriter::new(std::io::stdout().lock()), format, &refs, csv_options)
        .map_err(text_error)?
        .with_style(style);
    let mut printed = 0u64;
    while args.count.is_none_or(|n| printed < n) {
        // The reader whose next message is earliest; ties go to the bag given first.
        let mut next: Option<(usize, u64)> = None;
        for (i, (_, r)) in readers.iter_mut().enumerate() {
            if let Some(t) = r.peek_time().map_err(super::with_hint)? {
                if next.is_none_or(|(_, best)| t < best) {
                    next = Some((i, t));
                }
            }
        }
        let Some((i, _)) = next else { break };
        let (path, reader) = &mut readers[i];
        if let Some(m) = reader.next_message().map_err(super::with_hint)? {
            out.write(&m).map_err(text_error)?;
            printed += 1;
        }
        for w in reader.take_warnings() {
            note!("warning: {}: {w}", path.display());
        }
    }
    // An index past an array's end printed nothing: said once per topic, with the length.
    let missed: Vec<String> =
        out.out_of_range().map(|(topic, o, n)| format!("{topic}: {o}; {n} message(s) printed nothing")).collect();
    out.finish()?;
    let label = match paths.as_slice() {
        [one] => format!("{}: ", one.display()),
        _ => String::new(),
    };
    for m in &missed {
        note!("warning: {label}{m}");
    }
    // Data the bags hold but cannot give (a torn tail), unless -n stopped before the end.
    let stopped = args.count.is_some_and(|n| printed >= n);
    let lost = !stopped && bags.iter().map(super::done_reading).fold(false, |a, b| a | b);
    let empty = printed == 0 && args.window.given();
    if empty {
        note!("{}", super::empty_window(&bags, (start, end)));
    }
    let skipped = readers.iter().any(|(_, r)| !r.skipped().is_empty());
    Ok(if !skipped && !lost && !empty && missed.is_empty() { Outcome::Ok } else { Outcome::Dropped })
}
