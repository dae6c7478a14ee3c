//! `rbag convert`: copy bags into a new one: merge, filter, cut, rechunk, recompress.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rbag_bag::options_yaml::{self, OutputBag};
use rbag_bag::transcode::Targets;
use rbag_bag::{
    Bag, BeforeStart, Compression, ConvertOptions, ConvertReport, Filter, Format, Output, Progress, Select,
    StorageError, StorageOptions, WriteOptions,
};
use regex::Regex;

use crate::{output, Outcome, UsageError};
use rbag_bag::units::parse_size;

/// Convert bags between storages: merge several inputs in time order, select topics, cut by
/// time, split, rechunk and recompress.
///
/// The output storage comes from -s, or else from OUT's extension: `.bag` is a ROS 1 bag,
/// `.db3` a single SQLite3 file, `.mcap` a single MCAP file, anything else an MCAP rosbag2
/// directory. With `-s sqlite3|mcap` and no such extension, OUT is a rosbag2 directory
/// (metadata.yaml plus `OUT_0.db3`...).
///
/// Messages are copied as bytes when the output stores their encoding. Between a ROS 1 bag and
/// rosbag2 (SQLite3 or MCAP), and back, they are decoded and re-encoded:
/// type names (`pkg/Type` ⇄ `pkg/msg/Type`), `std_msgs/Header` (seq dropped or added) and
/// `time`/`duration` ⇄ `builtin_interfaces` map across, standard types take ROS's own
/// definitions, and definitions are written in the target's dialect with MD5 sums or RIHS01
/// hashes. ROS 2 service events, which ROS 1 cannot hold, are skipped and counted.
///
/// With `--migrate DIR`, messages whose type DIR defines are rewritten into that newer
/// definition: shared fields are kept, new ones take their defaults, removed ones are dropped,
/// renames come from `--migrate-rules`, and a changed field type is an error naming the field.
///
/// A cut with --start keeps, for each latched (ROS 1) or transient-local (ROS 2) topic, its
/// newest messages from before the start, with their own times, so `/tf_static` and
/// `/robot_description` survive the cut (--no-keep-latched: exactly the window). MCAP
/// attachments and metadata records are carried into MCAP outputs.
///
/// `ros2 bag convert` habits work: `-i BAG [STORAGE_ID]` (repeatable), `--output-options
/// FILE` (rosbag2's output-options YAML: several outputs in one pass), and `-o FILE.yaml`
/// when FILE.yaml exists and holds `output_bags:` (it is read, never written).
#[derive(clap::Args)]
#[command(after_help = "Examples:
  rbag convert in.bag -o out.mcap
  rbag convert a.bag b.bag -o merged.bag --compression lz4
  rbag convert in.mcap -o cut.mcap --start +10 --duration 20s
  rbag convert in.bag -o out -s sqlite3 --max-bag-size 100MB --repeat-all-transient-local
  rbag convert in.bag -o slim.bag --throttle /camera/image_raw=2 --exclude-topic-types pkg/Type
  rbag convert -i bag1 -i bag2 mcap -o out.yaml     (rosbag2's output-options YAML)")]
pub struct Args {
    /// Input bags, merged in time order.
    #[arg(value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// An input bag, as `ros2 bag convert -i BAG [STORAGE_ID]` (repeatable). The storage is
    /// detected; a STORAGE_ID that disagrees is noted.
    #[arg(short = 'i', long = "input", num_args = 1..=2, value_names = ["BAG", "STORAGE_ID"], action = clap::ArgAction::Append)]
    input: Vec<String>,
    /// rosbag2 input-options YAML (`input_bags:` with `uri`, `storage_id`, `start_time_ns`,
    /// `end_time_ns`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["inputs", "input"])]
    input_options: Option<PathBuf>,
    /// The bag to write. An existing file holding rosbag2 output options (`output_bags:`) is
    /// read as --output-options, never replaced.
    #[arg(short, long, value_name = "OUT", required_unless_present = "output_options")]
    output: Option<PathBuf>,
    /// rosbag2 output-options YAML (`output_bags:`): every output it lists is written in one
    /// pass over the inputs, each with its own topics, window, storage, splitting and
    /// compression. `end_time_ns` is inclusive there, as in rosbag2.
    #[arg(long, value_name = "FILE", conflicts_with = "output")]
    output_options: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

/// The output flags `convert` and `filter` share: storage, selection, window, splitting,
/// compression, types and what is kept.
#[derive(clap::Args)]
pub struct OutputArgs {
    /// Output storage: ros1, sqlite3, mcap or any other `rbag list storage` names (default:
    /// from OUT's extension).
    #[arg(short, long, value_name = "NAME")]
    storage: Option<String>,
    /// Chunk compression: ROS 1 lz4/bz2, MCAP lz4/zstd.
    #[arg(long, value_name = "none|lz4|bz2|zstd", default_value = "none")]
    compression: Compression,
    #[command(flatten)]
    rosbag2: super::rosbag2_args::Rosbag2Args,
    /// Encoding of MCAP output: cdr (rosbag2, the default) or ros1 (MCAP's ros1 profile, the
    /// ROS 1 bytes copied as they are). A ROS 1 bag holds ros1 and SQLite3 cdr.
    #[arg(long, value_name = "ros1|cdr")]
    encoding: Option<String>,
    /// Flush a chunk once it holds this much uncompressed data (units allowed: 768KiB, 4MB).
    #[arg(long, value_name = "BYTES", default_value = "768KiB", value_parser = parse_size)]
    chunk_size: u64,
    /// Also flush a chunk once its messages span this many seconds.
    #[arg(long, value_name = "SECONDS")]
    chunk_interval: Option<f64>,
    #[command(flatten)]
    direct_io: super::direct_io::DirectIoArgs,
    /// Keep only these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    topics: Vec<String>,
    /// Drop these topics.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    exclude_topics: Vec<String>,
    /// Keep only topics of these message types (`pkg/msg/Type` or `pkg/Type`).
    #[arg(long, num_args = 1.., value_name = "TYPE")]
    topic_types: Vec<String>,
    /// Drop topics of these message types.
    #[arg(long, num_args = 1.., value_name = "TYPE")]
    exclude_topic_types: Vec<String>,
    /// Keep topics matching this regular expression.
    #[arg(short = 'e', long, value_name = "RE")]
    regex: Option<Regex>,
    /// Drop topics matching this regular expression.
    #[arg(short = 'x', long, value_name = "RE")]
    exclude_regex: Option<Regex>,
    #[command(flatten)]
    window: super::WindowArgs,
    /// With --start, write exactly the window: not the newest latched / transient-local
    /// messages from before it.
    #[arg(long)]
    no_keep_latched: bool,
    /// Keep at most HZ messages a second of TOPIC: a message is kept when at least 1/HZ of
    /// log time has passed since the last one kept (repeatable).
    #[arg(long, value_name = "TOPIC=HZ", value_parser = parse_throttle)]
    throttle: Vec<(String, f64)>,
    /// Do not carry MCAP attachments into the output.
    #[arg(long)]
    exclude_attachments: bool,
    /// Do not carry MCAP metadata records into the output.
    #[arg(long)]
    exclude_metadata: bool,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    force: bool,
    /// Newer message definitions ([PKG=]DIR, laid out as for --msg-path): messages of the types
    /// they define are rewritten into them. Repeatable.
    #[arg(long, value_name = "[PKG=]DIR")]
    migrate: Vec<String>,
    /// Field renames for --migrate, as YAML: `renames: {pkg/msg/Type: {old_field: new_field}}`.
    #[arg(long, value_name = "FILE", requires = "migrate")]
    migrate_rules: Option<PathBuf>,
    #[command(flatten)]
    types: super::TypeArgs,
    #[command(flatten)]
    pub read: super::ReadArgs,
}

/// `TOPIC=HZ`, a positive rate.
pub fn parse_throttle(s: &str) -> std::result::Result<(String, f64), String> {
    let (topic, hz) = s.rsplit_once('=').ok_or_else(|| format!("{s:?}: expected TOPIC=HZ"))?;
    let hz: f64 = hz.trim().parse().map_err(|_| format!("{s:?}: {hz:?} is not a rate in Hz"))?;
    if topic.is_empty() || !(hz.is_finite() && hz > 0.0) {
        return Err(format!("{s:?}: expected a topic and a positive rate in Hz"));
    }
    Ok((topic.to_string(), hz))
}

impl OutputArgs {
    /// Output types: the bundled store for the output's distro, and `--migrate` definitions.
    fn targets(&self) -> Result<Targets> {
        rbag_bag::types::targets(self.rosbag2.ros_distro.as_deref(), &self.migrate, self.migrate_rules.as_deref())
            .context("--migrate")
    }

    /// Whether any rosbag2 output flag was given.
    fn rosbag2_flags(&self) -> bool {
        let r = &self.rosbag2;
        r.splits_or_compresses()
            || r.storage_preset_profile.is_some()
            || r.ros_distro.is_some()
            || r.metadata_version.is_some()
            || r.max_bag_files.is_some()
    }

    /// What every output takes from the flags, whatever selects its messages.
    fn common(&self, inputs: &[Bag]) -> Result<ConvertOptions> {
        if let Some(e) = self.encoding.as_deref().filter(|e| !matches!(*e, "ros1" | "cdr")) {
            bail!("unknown encoding {e:?}: use ros1 or cdr");
        }
        let properties = inputs[0].storage_info().map_err(super::with_hint)?.properties;
        Ok(ConvertOptions {
            encoding: self.encoding.clone(),
            types: self.types.sources(&properties)?,
            targets: self.targets()?,
            overwrite: self.force,
            before_start: if self.no_keep_latched { BeforeStart::Drop } else { BeforeStart::KeepLatched },
            exclude_attachments: self.exclude_attachments,
            exclude_metadata: self.exclude_metadata,
            ..ConvertOptions::default()
        })
    }

    /// The storage and options for writing OUT from `inputs`, as the flags say.
    pub fn output(&self, out: &Path, inputs: &[Bag]) -> Result<Output> {
        let storage = rbag_bag::storage_for(out, self.storage.as_deref())
            .map_err(|e| anyhow::Error::new(UsageError(e.to_string())))?;
        let format = Format::from_name(storage.name());
        if let Some(s) = self.chunk_interval {
            if !(s.is_finite() && s > 0.0) {
                bail!("--chunk-interval must be a positive number of seconds");
            }
        }
        let rosbag2 = match format {
            Some(f) => self.rosbag2.options(f)?,
            None if !self.rosbag2_flags() => Default::default(),
            None => bail!(
                "the rosbag2 output flags (splitting, --compression-mode, presets, distro) do not apply to {} output",
                storage.name()
            ),
        };
        if format == Some(Format::Ros1) && self.rosbag2.compression_mode != rbag_bag::CompressionMode::None {
            bail!("--compression-mode applies to rosbag2 output (-s sqlite3 or mcap); ROS 1 bags compress chunks (--compression)");
        }
        super::check_topic_names(inputs, "--topics", &self.topics)?;
        super::check_topic_names(inputs, "--exclude-topics", &self.exclude_topics)?;
        let (start, end) = self.window.resolve(inputs)?;
        let options = ConvertOptions {
            filter: Filter {
                topics: self.topics.clone(),
                regex: self.regex.clone(),
                exclude_topics: self.exclude_topics.clone(),
                exclude_regex: self.exclude_regex.clone(),
                start,
                end,
            },
            topic_types: self.topic_types.clone(),
            exclude_topic_types: self.exclude_topic_types.clone(),
            throttle: self.throttle.iter().cloned().collect::<BTreeMap<_, _>>(),
            write: WriteOptions {
                compression: self.compression,
                chunk_size: self.chunk_size.max(1),
                chunk_interval_ns: self.chunk_interval.map(|s| (s * 1e9) as u64),
                rosbag2,
                direct_io: self.direct_io.mode(),
                ..WriteOptions::default()
            },
            ..self.common(inputs)?
        };
        Ok(Output { path: out.to_path_buf(), storage, options })
    }

    /// An output of a rosbag2 output-options file: its own selection and settings, with the
    /// types, migration and overwrite of the flags.
    fn yaml_output(&self, bag: OutputBag, inputs: &[Bag], window: Window) -> Result<Output> {
        let storage = rbag_bag::storage_for(&bag.uri, bag.storage_id.as_deref())
            .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", bag.uri.display()))))?;
        let mut options = ConvertOptions { filter: bag.options.filter, write: bag.options.write, ..bag.options };
        if let Some(preset) = &bag.preset {
            let format = Format::from_name(storage.name()).ok_or_else(|| {
                anyhow::anyhow!("storage_preset_profile applies to rosbag2 storage, not {}", storage.name())
            })?;
            let storage_options = StorageOptions::new().with("preset", preset.as_str());
            options.write = rbag_bag::with_storage_options(format, &options.write, &storage_options)
                .with_context(|| format!("{}: storage_preset_profile", bag.uri.display()))?;
        }
        let f = &mut options.filter;
        f.start = f.start.max(window.0);
        f.end = match (f.end, window.1) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let common = self.common(inputs)?;
        Ok(Output {
            path: bag.uri,
            storage,
            options: ConvertOptions {
                types: common.types,
                targets: common.targets,
                overwrite: common.overwrite,
                before_start: common.before_start,
                exclude_attachments: common.exclude_attachments,
                exclude_metadata: common.exclude_metadata,
                encoding: options.encoding.or(common.encoding),
                ..options
            },
        })
    }
}

/// A failed convert leaves nothing at OUT; say so, with the flag that helps where one does.
fn output_error(verb: &str, e: rbag_bag::Error, out: &Path) -> anyhow::Error {
    let hint = match e.storage() {
        Some(StorageError::OutputExists { .. }) => " (use --force to replace it)",
        Some(StorageError::OutputIsInput { .. } | StorageError::UnsafeOutput { .. }) => "",
        _ => " (nothing was written there)",
    };
    super::with_hint(e).context(format!("cannot {verb} into {}{hint}", out.display()))
}

/// Opens the inputs, merged in time order, with `read`'s options.
pub fn open_inputs(paths: &[PathBuf], read: &super::ReadArgs) -> Result<Vec<Bag>> {
    paths.iter().map(|p| super::open_with(p, read)).collect()
}

/// Writes `outputs` from `inputs` in one pass with a progress bar, keeping what `select`
/// accepts, and prints what each got; `Dropped` when topics were skipped or input was lost.
/// `verb` (convert, filter) names the work in errors.
pub fn write_outputs(verb: &str, inputs: &[Bag], outputs: &[Output], select: &mut dyn Select) -> Result<Outcome> {
    let bar = output::progress_bar(0, &format!("{verb}ing"));
    let mut on_progress = |p: Progress| output::show_progress(&bar, &p);
    let shown = outputs.iter().map(|o| o.path.display().to_string()).collect::<Vec<_>>().join(", ");
    let reports = rbag_bag::convert_many(inputs, outputs, select, &mut on_progress).map_err(|e| match outputs {
        [one] => output_error(verb, e, &one.path),
        _ => output_error(verb, e, Path::new(&shown)),
    })?;
    bar.finish_and_clear();
    let mut skipped = false;
    for (report, out) in reports.iter().zip(outputs) {
        summary(report);
        skipped |= !report.skipped.is_empty();
        let f = &out.options.filter;
        if report.messages_written == 0 && (f.start.is_some() || f.end.is_some()) {
            note!("{}", super::empty_window(inputs, (f.start, f.end)));
            skipped = true;
        }
        skipped |= super::regex_matches_nothing(inputs, "--regex", f.regex.as_ref());
    }
    let mut lost = false;
    for bag in inputs {
        lost |= super::done_reading(bag);
    }
    Ok(if skipped || lost { Outcome::Dropped } else { Outcome::Ok })
}

/// What one output got, on stderr.
fn summary(report: &ConvertReport) {
    let mut extra = Vec::new();
    if report.messages_rewritten > 0 {
        extra.push(format!("{} re-encoded", report.messages_rewritten));
    }
    if report.latched_kept > 0 {
        extra.push(format!("{} latched from before --start", report.latched_kept));
    }
    if report.throttled > 0 {
        extra.push(format!("{} left out by --throttle", report.throttled));
    }
    let extra = if extra.is_empty() { String::new() } else { format!(" ({})", extra.join(", ")) };
    let to = match report.files.as_slice() {
        [] => report.output.display().to_string(),
        [one] => one.display().to_string(),
        [first, .., last] => format!("{} … {} ({} files)", first.display(), last.display(), report.files.len()),
    };
    note!("wrote {} messages{extra} on {} connections to {to}", report.messages_written, report.connections_written);
    if report.attachments_written + report.metadata_written > 0 {
        note!(
            "carried {} attachment(s) and {} metadata record(s)",
            report.attachments_written,
            report.metadata_written
        );
    }
    if report.attachments_dropped + report.metadata_dropped > 0 {
        note!(
            "not carried: {} attachment(s) and {} metadata record(s) ({} cannot hold them)",
            report.attachments_dropped,
            report.metadata_dropped,
            report.output.display()
        );
    }
    for s in &report.skipped {
        note!("skipped {} messages on {}: {}", s.messages, s.topic, s.reason);
    }
}

/// A window of log time put on every input: start (inclusive) and end (exclusive), ns.
type Window = (Option<u64>, Option<u64>);

/// The inputs: positional, `-i BAG [STORAGE_ID]`, or an input-options file; and the window
/// an input-options file puts on every input.
fn inputs(args: &Args) -> Result<(Vec<PathBuf>, Window)> {
    let mut paths = args.inputs.clone();
    // `-i BAG [STORAGE_ID]`: a value naming a storage, and no file, is the previous bag's.
    for value in &args.input {
        let path = PathBuf::from(value);
        match paths.last() {
            Some(bag) if !path.exists() && rbag_bag::backend(value).is_some() => {
                let detected = rbag_bag::Bag::open(bag).ok().and_then(|b| b.info().ok()).map(|i| i.storage);
                if let Some(d) = detected.filter(|d| d != value) {
                    note!("note: {} is {d}, not {value}; reading it as {d}", bag.display());
                }
            }
            _ => paths.push(path),
        }
    }
    let mut window = (None, None);
    if let Some(file) = &args.input_options {
        let bags = options_yaml::read_inputs(file).map_err(super::with_hint)?;
        let windows: std::collections::BTreeSet<_> = bags.iter().map(|b| (b.start_time_ns, b.end_time_ns)).collect();
        if windows.len() > 1 {
            bail!("{}: the inputs have different time windows; rbag applies one window to all inputs", file.display());
        }
        if let Some((start, end)) = windows.into_iter().next() {
            window = (start, end.map(|e| e.saturating_add(1)));
        }
        paths.extend(bags.into_iter().map(|b| b.uri));
    }
    if paths.is_empty() {
        return Err(anyhow::Error::new(UsageError(
            "no input bag: give INPUT..., -i BAG or --input-options FILE".into(),
        )));
    }
    Ok((paths, window))
}

pub fn run(args: Args) -> Result<Outcome> {
    let (paths, window) = inputs(&args)?;
    let options_file = match (&args.output_options, &args.output) {
        (Some(f), _) => Some(f.clone()),
        (None, Some(o)) if options_yaml::is_output_options(o) => Some(o.clone()),
        _ => None,
    };
    let inputs = open_inputs(&paths, &args.out.read)?;
    let outputs = match (&options_file, &args.output) {
        (Some(file), _) => {
            let bags = options_yaml::read_outputs(file).map_err(super::with_hint)?;
            if bags.is_empty() {
                bail!("{}: output_bags lists no bag", file.display());
            }
            bags.into_iter().map(|b| args.out.yaml_output(b, &inputs, window)).collect::<Result<Vec<_>>>()?
        }
        (None, Some(out)) => {
            let mut o = args.out.output(out, &inputs)?;
            o.options.filter.start = o.options.filter.start.max(window.0);
            vec![o]
        }
        (None, None) => unreachable!("clap requires -o or --output-options"),
    };
    write_outputs("convert", &inputs, &outputs, &mut rbag_bag::SelectAll)
}
