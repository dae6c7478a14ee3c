//! `rbag echo`: print a bag's messages decoded, like `rostopic echo` / `ros2 topic echo` on a
//! live topic: YAML by default, NDJSON with `--json`, flat columns with `--csv`.

use std::io::BufWriter;
use std::path::PathBuf;

use anyhow::Result;
use rbag_bag::decode::render::Style;
use rbag_bag::read::{DecodedReader, ReadSpec};
use rbag_bag::text::{TextError, TextFormat, TextWriter};

use crate::{Outcome, UsageError};

/// Print messages decoded, from any bag. A topic may carry a field path:
/// `/imu.linear_acceleration.x`, `/tf.transforms[0].child_frame_id`, or rostopic's
/// `/imu/linear_acceleration/x`; indices may count from the end (`[-1]`) or be slices (`[*]`,
/// `[1:3]`). Relative names resolve against the bag's topics (`chatter` is `/chatter`).
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

pub fn run(args: Args) -> Result<Outcome> {
    let bag = super::open_with(&args.path, &args.read)?;
    let types = args.types.sources(&bag.storage_info().map_err(super::with_hint)?.properties)?;
    let (start, end) = args.window.resolve(std::slice::from_ref(&bag))?;
    let spec = ReadSpec { topics: args.topics.clone(), start, end, types, settle: args.csv };
    let mut reader = DecodedReader::new(&bag, spec).map_err(|e| match e {
        e @ rbag_bag::Error::AmbiguousTopic { .. } => {
            anyhow::Error::new(UsageError(format!("{e}; name one of them in full")))
        }
        e => super::with_hint(e).context(format!("cannot decode {}", args.path.display())),
    })?;
    for s in reader.skipped() {
        note!("warning: {}: skipping {}", args.path.display(), super::decode_error(&s.reason));
    }
    let format = match (args.json, args.csv) {
        (true, _) => TextFormat::Json,
        (_, true) => TextFormat::Csv,
        _ => TextFormat::Yaml { max_array: (!args.full_length).then_some(args.truncate_length) },
    };
    let text_error = |e: TextError| match e {
        TextError::Io(e) => anyhow::Error::new(e),
        e if args.csv => anyhow::anyhow!("--csv: {e}; echo it with --json, or topics of one type separately"),
        e => anyhow::Error::new(e),
    };
    let style =
        Style { no_arrays: args.noarr, no_strings: args.nostr, nan_null: args.json_nan_null, ..Style::default() };
    let mut out = TextWriter::new(BufWriter::new(std::io::stdout().lock()), format, &reader)
        .map_err(text_error)?
        .with_style(style);
    let mut printed = 0u64;
    while args.count.is_none_or(|n| printed < n) {
        let Some(m) = reader.next_message().map_err(super::with_hint)? else { break };
        out.write(&m).map_err(text_error)?;
        printed += 1;
        for w in reader.take_warnings() {
            note!("warning: {}: {w}", args.path.display());
        }
    }
    // An index past an array's end printed nothing: said once per topic, with the length.
    let missed: Vec<String> =
        out.out_of_range().map(|(topic, o, n)| format!("{topic}: {o}; {n} message(s) printed nothing")).collect();
    out.finish()?;
    for m in &missed {
        note!("warning: {}: {m}", args.path.display());
    }
    // Data the bag holds but cannot give (a torn tail), unless -n stopped before the end.
    let lost = if args.count.is_some_and(|n| printed >= n) { false } else { super::done_reading(&bag) };
    let empty = printed == 0 && args.window.given();
    if empty {
        note!("{}", super::empty_window(std::slice::from_ref(&bag), (start, end)));
    }
    Ok(if reader.skipped().is_empty() && !lost && !empty && missed.is_empty() { Outcome::Ok } else { Outcome::Dropped })
}
