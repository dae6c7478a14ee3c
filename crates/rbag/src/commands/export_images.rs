//! `rbag export-images`: an image topic as files, and optionally a video.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use rbag_view::export::{frame_rate, Frame, FrameSpec, Frames, ImageDir, Video};

use crate::{Outcome, UsageError};

/// Write an image topic's messages as files, or as a video.
///
/// `sensor_msgs/Image` messages become PNG files (mono8, mono16, rgb8, bgr8, rgba8, bgra8;
/// Bayer mosaics are written as they are, one grey sample per pixel). `CompressedImage`
/// messages are written byte for byte as they were recorded (.jpg, .png by their content).
/// File names carry the frame's place and log time: `000042_1700000000.123456789.png`.
///
/// `--video OUT.mp4` (or .mkv, .webm, .mov, .avi) encodes the frames with ffmpeg, which must
/// be installed; the frame rate is the topic's median rate unless `--fps` is given.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag export-images run.bag /camera/image_raw -o frames/\n  rbag export-images run.mcap /camera/image_raw/compressed -o frames/ --every 10\n  rbag export-images run.bag /camera/image_raw --video camera.mp4 --start +30"
)]
pub struct Args {
    /// The bag (a path or a URL: s3://, http(s)://, gs://, az://).
    #[arg(value_name = "BAG")]
    bag: PathBuf,
    /// The image topic.
    #[arg(value_name = "TOPIC")]
    topic: String,
    /// The directory to write image files into (created when missing).
    #[arg(short, long, value_name = "DIR", required_unless_present = "video")]
    output: Option<PathBuf>,
    /// Also (or only) write a video through ffmpeg.
    #[arg(long, value_name = "OUT.mp4")]
    video: Option<PathBuf>,
    /// The video's frame rate (default: from the frames' log times).
    #[arg(long, value_name = "FPS", requires = "video")]
    fps: Option<f64>,
    /// Take every N-th message only.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    every: u64,
    /// Replace files (and the video) that exist.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    window: super::WindowArgs,
    #[command(flatten)]
    types: super::TypeArgs,
    #[command(flatten)]
    read: super::ReadArgs,
}

/// Frames read before the video starts, to measure the frame rate from.
const RATE_SAMPLE: usize = 16;

pub fn run(args: Args) -> Result<Outcome> {
    if let Some(fps) = args.fps {
        if !(fps.is_finite() && fps > 0.0 && fps <= 1000.0) {
            return Err(UsageError(format!("--fps {fps}: give a rate above 0 and at most 1000")).into());
        }
    }
    // The video's output is checked before anything is read, as every writing verb's is.
    let mut staged_video = args
        .video
        .as_deref()
        .map(|v| super::stage_output(v, args.force, &args.bag, "a video", &rbag_view::export::is_video))
        .transpose()?;
    let bag = super::open_with(&args.bag, &args.read)?;
    let (start, end) = args.window.resolve(std::slice::from_ref(&bag))?;
    let types = args.types.sources(&bag.storage_info().map_err(super::with_hint)?.properties)?;
    let spec = FrameSpec { topic: args.topic.clone(), start, end, every: args.every, types };
    let mut frames = Frames::new(&bag, spec).map_err(view_error)?;
    let topic = frames.topic().to_string();
    let dir = args.output.as_deref().map(|d| ImageDir::create(d, args.force)).transpose()?;
    let total =
        bag.info().map_or(0, |i| i.topics.iter().filter(|t| t.name == topic).map(|t| t.message_count).sum::<u64>())
            / args.every;
    let bar = crate::output::progress_bar(total, "frames");
    let mut video: Option<Video> = None;
    let mut waiting: Vec<Frame> = Vec::new();
    let mut written = 0u64;
    loop {
        let frame = frames.next_frame().map_err(view_error)?;
        if let (Some(d), Some(f)) = (&dir, &frame) {
            d.write(&topic, f)?;
        }
        if let Some(v) = video.as_mut() {
            if let Some(f) = &frame {
                v.push(&topic, f)?;
            }
        } else if staged_video.is_some() {
            // The first frames wait until the rate is known (unless --fps gives it).
            waiting.extend(frame.clone());
            let ready = args.fps.is_some() || waiting.len() >= RATE_SAMPLE || frame.is_none();
            if let (true, Some(first)) = (ready, waiting.first()) {
                let times: Vec<u64> = waiting.iter().map(|f| f.log_time).collect();
                let fps = args.fps.unwrap_or_else(|| frame_rate(&times));
                let staged = staged_video.take().context("the video starts once")?;
                let mut v = Video::start(staged, fps, &first.picture)?;
                for f in waiting.drain(..) {
                    v.push(&topic, &f)?;
                }
                video = Some(v);
            }
        }
        let Some(_) = frame else { break };
        written += 1;
        bar.inc(1);
    }
    bar.finish_and_clear();
    if written == 0 {
        let window = if args.window.given() { " in the window" } else { "" };
        bail!("{}: {topic} has no messages{window}", args.bag.display());
    }
    let mut said = Vec::new();
    if let Some(d) = &args.output {
        said.push(format!("{written} image(s) in {}", d.display()));
    }
    if let Some(v) = video {
        let out = v.finish().context("the video was not written")?;
        said.push(format!("video {}", out.display()));
    }
    note!("{topic}: {}", said.join(", "));
    Ok(if super::done_reading(&bag) { Outcome::Dropped } else { Outcome::Ok })
}

fn view_error(e: rbag_view::Error) -> anyhow::Error {
    match e {
        rbag_view::Error::Bag(e) => super::with_hint(e),
        e => anyhow::Error::new(e),
    }
}
