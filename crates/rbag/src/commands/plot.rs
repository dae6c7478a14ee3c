//! `rbag plot`: numeric fields of a bag as a chart (PNG, SVG, or a self-contained HTML page).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rbag_bag::text::TimeFormat;
use rbag_view::plot::{Chart, Size, XAxis};
use rbag_view::series::{self, SeriesSpec};

use crate::{Outcome, UsageError};

/// Plot numeric fields over time, or against another field.
///
/// Fields are named as `rbag echo` names them: `/imu.linear_acceleration.z`, rostopic's
/// `/imu/linear_acceleration/z`, array elements `/array.data[2]` and slices `/array.data[0:3]`
/// (one line per element). The output format comes from the name: `.png` (`--size`), `.svg`,
/// or `.html`, one self-contained file with an interactive chart (drag to zoom) that needs no
/// network. No display and no installed fonts are needed.
///
/// Series longer than the chart is wide are reduced per pixel column to each column's first,
/// last, smallest and largest point, so spikes stay visible.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag plot run.bag /imu.linear_acceleration.z -o accel.png\n  rbag plot run.bag /imu.angular_velocity.x /imu.angular_velocity.y -o gyro.svg\n  rbag plot run.bag /odom.twist.twist.linear.x --start +5 --duration 10 -o v.png\n  rbag plot run.bag /cmd.linear.x,/cmd.angular.z /battery.voltage --subplot -o a.html\n  rbag plot run.bag /odom.pose.pose.position.y --x /odom.pose.pose.position.x -o p.png\n  rbag plot s3://logs/run.mcap /imu.linear_acceleration.z -o accel.html"
)]
pub struct Args {
    /// The bag (a path or a URL: s3://, http(s)://, gs://, az://).
    #[arg(value_name = "BAG")]
    bag: PathBuf,
    /// Fields to plot. Fields joined by commas (`/a.x,/a.y`) share a subplot with --subplot.
    #[arg(value_name = "TOPIC.FIELD", required = true)]
    fields: Vec<String>,
    /// Where to write the chart: .png, .svg or .html.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Plot against this field instead of time (an XY plot: a trajectory from
    /// `--x /odom.pose.pose.position.x` with `/odom.pose.pose.position.y`). Each point takes
    /// the latest x logged at or before it.
    #[arg(long, value_name = "TOPIC.FIELD")]
    x: Option<String>,
    /// One subplot per field argument (fields joined by commas share one), stacked with a
    /// shared x axis.
    #[arg(long)]
    subplot: bool,
    /// The x axis for time: rel (seconds since the bag's start), s (seconds since the epoch),
    /// ns, or iso (clock time, UTC).
    #[arg(long, value_name = "FORMAT", default_value = "rel", value_parser = ["rel", "s", "ns", "iso"])]
    time_format: String,
    /// The image size for PNG and SVG, in pixels.
    #[arg(long, value_name = "WxH", default_value = "1200x700", value_parser = parse_size)]
    size: Size,
    /// The chart's title (default: the bag's file name).
    #[arg(long)]
    title: Option<String>,
    /// Replace OUT if it exists.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    window: super::WindowArgs,
    #[command(flatten)]
    types: super::TypeArgs,
    #[command(flatten)]
    read: super::ReadArgs,
}

/// Writes a chart under a temporary name and renames it into place. An existing OUT is replaced
/// only with `force`, and only when it is a chart (PNG, SVG, or a page `rbag plot` wrote); the
/// bag is never a possible output.
fn write_chart(out: &Path, bytes: &[u8], force: bool, bag: &Path) -> Result<()> {
    let staged = super::stage_output(out, force, bag, "a chart", &is_chart)?;
    std::fs::write(staged.temp(), bytes).with_context(|| format!("cannot write {}", staged.temp().display()))?;
    staged.commit()?;
    Ok(())
}

/// Whether a file is one `rbag plot` could have written.
fn is_chart(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    read.is_ok()
        && (head.starts_with(b"\x89PNG") || {
            let text = String::from_utf8_lossy(&head);
            text.contains("<svg") || text.contains("content=\"rbag plot\"")
        })
}

fn parse_size(s: &str) -> Result<Size, String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("{s:?} is not WIDTHxHEIGHT (800x600)"))?;
    let n = |v: &str| v.trim().parse::<u32>().ok().filter(|n| (64..=16384).contains(n));
    match (n(w), n(h)) {
        (Some(width), Some(height)) => Ok(Size { width, height }),
        _ => Err(format!("{s:?}: width and height are 64 to 16384 pixels")),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Png,
    Svg,
    Html,
}

fn format_of(out: &Path) -> Result<Format> {
    match out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("png") => Ok(Format::Png),
        Some("svg") => Ok(Format::Svg),
        Some("html" | "htm") => Ok(Format::Html),
        _ => Err(UsageError(format!("{}: name the output .png, .svg or .html", out.display())).into()),
    }
}

pub fn run(args: Args) -> Result<Outcome> {
    let format = format_of(&args.output)?;
    let bag = super::open_with(&args.bag, &args.read)?;
    let (start, end) = args.window.resolve(std::slice::from_ref(&bag))?;
    let types = args.types.sources(&bag.storage_info().map_err(super::with_hint)?.properties)?;
    // Each argument may hold several fields joined by commas: one subplot's worth (with
    // --subplot; else every field is in the one panel).
    let (mut fields, mut panel_of) = (Vec::new(), Vec::new());
    for (g, arg) in args.fields.iter().enumerate() {
        for f in arg.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            fields.push(f.to_string());
            panel_of.push(if args.subplot { g } else { 0 });
        }
    }
    if let Some(x) = &args.x {
        fields.push(x.clone());
    }
    let spec = SeriesSpec { fields: fields.clone(), start, end, types };
    let read = series::read(&bag, &spec).map_err(|e| match e {
        rbag_view::Error::Bag(e) => super::with_hint(e),
        e => anyhow::Error::new(e),
    })?;
    for (field, n) in &read.missing {
        note!(
            "warning: {}: {field}: an index was past the array's end in {n} message(s); they are not plotted",
            args.bag.display()
        );
    }
    // Series of the x field go apart; the others are grouped by the argument they came from.
    let x_index = args.x.as_ref().map(|_| fields.len() - 1);
    let mut x_series = None;
    let mut series = Vec::new();
    let mut layout: Vec<Vec<usize>> = vec![Vec::new(); args.fields.len()];
    for (k, s) in read.series.into_iter().enumerate() {
        let field = read.origin[k];
        if Some(field) == x_index {
            if x_series.is_some() {
                bail!("--x {}: selects several values; name one element", args.x.as_deref().unwrap_or_default());
            }
            x_series = Some(s);
        } else {
            layout[panel_of[field]].push(series.len());
            series.push(s);
        }
    }
    layout.retain(|p| !p.is_empty());
    let points: usize = series.iter().map(|s| s.values.len()).sum();
    if points == 0 {
        let window = if args.window.given() { " in the window" } else { "" };
        bail!("{}: no values of {} to plot{window}", args.bag.display(), args.fields.join(", "));
    }
    let title = args.title.clone().unwrap_or_else(|| {
        args.bag.file_name().map_or_else(|| args.bag.display().to_string(), |n| n.to_string_lossy().into_owned())
    });
    let chart = match &x_series {
        Some(xs) => Chart::xy(&title, xs, &series, &layout),
        None => {
            let origin = super::span(std::slice::from_ref(&bag)).map_or(0, |(s, _)| s);
            let format = match args.time_format.as_str() {
                "s" => TimeFormat::Secs,
                "ns" => TimeFormat::Ns,
                "iso" => TimeFormat::Iso,
                _ => TimeFormat::Rel,
            };
            Chart::time(&title, &series, &layout, XAxis::Time { format, origin })
        }
    };
    let bytes = match format {
        Format::Png => rbag_view::plot::png(&chart, args.size)?,
        Format::Svg => rbag_view::plot::svg(&chart, args.size)?.into_bytes(),
        Format::Html => rbag_view::plot::html(&chart).into_bytes(),
    };
    write_chart(&args.output, &bytes, args.force, &args.bag)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    note!("{}: {} line(s), {points} point(s)", args.output.display(), series.len());
    let dropped = !read.missing.is_empty() || super::done_reading(&bag);
    Ok(if dropped { Outcome::Dropped } else { Outcome::Ok })
}
