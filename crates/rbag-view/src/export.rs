//! Image topics out of a bag: one file per message, and a video through `ffmpeg`.
//!
//! Files are written under a temporary name and renamed into place when complete, so a file
//! with a frame's name always holds the whole frame. The video goes to a temporary name beside
//! the output and is renamed only when `ffmpeg` succeeds.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use rbag_bag::decode::{Decoders, TypeSources};
use rbag_bag::output::Staged;
use rbag_bag::read::{resolve_topic, DecodedReader, ReadSpec, Resolved};
use rbag_bag::{Bag, Filter};

use crate::image::{extension, is_image_type, picture, Picture};
use crate::{Error, Result};

/// Which messages of a topic to take.
#[derive(Debug, Clone, Default)]
pub struct FrameSpec {
    /// The image topic (resolved as `rbag echo` resolves topics).
    pub topic: String,
    /// Only messages at or after this log time (ns).
    pub start: Option<u64>,
    /// Only messages before this log time (ns).
    pub end: Option<u64>,
    /// Every N-th message of the window (1 or 0: all).
    pub every: u64,
    /// Types for bags that carry no definitions.
    pub types: TypeSources,
}

/// One exported message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Its place among the topic's messages in the window, from 0.
    pub index: u64,
    /// Log time, ns since the epoch.
    pub log_time: u64,
    pub picture: Picture,
}

/// The image messages of one topic, decoded one at a time.
pub struct Frames<'b> {
    reader: DecodedReader<'b>,
    topic: String,
    every: u64,
    seen: u64,
}

impl<'b> Frames<'b> {
    /// Checks that the topic exists and holds `sensor_msgs/Image` or `CompressedImage`.
    pub fn new(bag: &'b Bag, spec: FrameSpec) -> Result<Self> {
        let known: Vec<&str> = bag.connections().iter().map(|c| c.topic.as_str()).collect();
        let spec_read = ReadSpec {
            topics: vec![spec.topic.clone()],
            start: spec.start,
            end: spec.end,
            types: spec.types.clone(),
            settle: false,
        };
        let reader = DecodedReader::new(bag, spec_read)?;
        let Resolved::Topic(topic, _) = resolve_topic(&spec.topic, &known) else {
            return Err(Error::Path { field: spec.topic, reason: "names no single topic of the bag".into() });
        };
        if let Some(c) = bag.connections().iter().find(|c| c.topic == topic && !is_image_type(&c.message_type)) {
            return Err(Error::NotImage { topic, type_name: c.message_type.clone() });
        }
        Ok(Frames { reader, topic, every: spec.every.max(1), seen: 0 })
    }

    /// The topic read.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The next frame, or `None` at the end of the window.
    pub fn next_frame(&mut self) -> Result<Option<Frame>> {
        while let Some(m) = self.reader.next_message()? {
            let index = self.seen;
            self.seen += 1;
            if !index.is_multiple_of(self.every) {
                continue;
            }
            let log_time = m.log_time;
            let picture =
                picture(m.message).map_err(|reason| Error::Image { topic: self.topic.clone(), log_time, reason })?;
            return Ok(Some(Frame { index, log_time, picture }));
        }
        Ok(None)
    }
}

/// Look-back windows tried by [`frame_at`], in seconds: near first, then the whole bag.
const LOOK_BACK: [u64; 4] = [1, 10, 100, 1000];

/// The latest image of `topic` logged at or before `t` (ns), or `None` when there is none.
/// Only that message is decoded: the windows before `t` are read without decoding, nearest
/// first.
pub fn frame_at(bag: &Bag, topic: &str, t: u64, types: &TypeSources) -> Result<Option<Frame>> {
    let Some(c) = bag.connections().iter().find(|c| c.topic == topic) else {
        return Err(Error::Path { field: topic.into(), reason: "no such topic in the bag".into() });
    };
    if !is_image_type(&c.message_type) {
        return Err(Error::NotImage { topic: topic.into(), type_name: c.message_type.clone() });
    }
    let windows = LOOK_BACK.iter().map(|s| Some(t.saturating_sub(s * 1_000_000_000))).chain([None]);
    for start in windows {
        let filter = Filter { topics: vec![topic.into()], start, end: Some(t.saturating_add(1)), ..Default::default() };
        let mut last = None;
        for m in bag.messages(&filter)? {
            last = Some(m.map_err(rbag_bag::Error::from)?);
        }
        let Some(m) = last else { continue };
        let Some(c) = bag.connection(m.connection) else { continue };
        let mut decoders = Decoders::new(types.clone());
        let message = decoders.view(c, m.log_time, &m.data).map_err(|e| Error::Image {
            topic: topic.into(),
            log_time: m.log_time,
            reason: e.to_string(),
        })?;
        let picture =
            picture(message).map_err(|reason| Error::Image { topic: topic.into(), log_time: m.log_time, reason })?;
        return Ok(Some(Frame { index: 0, log_time: m.log_time, picture }));
    }
    Ok(None)
}

/// The file name of a frame: its place, then its log time as seconds.nanoseconds, so names
/// sort in time order and say when the image was logged.
pub fn file_name(frame: &Frame, extension: &str) -> String {
    let (s, ns) = (frame.log_time / 1_000_000_000, frame.log_time % 1_000_000_000);
    format!("{:06}_{s}.{ns:09}.{extension}", frame.index)
}

/// Writes frames as files into a directory.
pub struct ImageDir {
    dir: PathBuf,
    overwrite: bool,
}

impl ImageDir {
    /// Creates `dir` when missing. Without `overwrite`, a frame whose file already exists is
    /// an error (and nothing is replaced).
    pub fn create(dir: &Path, overwrite: bool) -> Result<Self> {
        fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.into(), source })?;
        Ok(ImageDir { dir: dir.into(), overwrite })
    }

    /// Writes one frame: a PNG for a raw image, the recorded bytes for a compressed one.
    pub fn write(&self, topic: &str, frame: &Frame) -> Result<PathBuf> {
        let (bytes, ext) = match &frame.picture {
            Picture::Raw(p) => {
                let png =
                    p.png().map_err(|reason| Error::Image { topic: topic.into(), log_time: frame.log_time, reason })?;
                (std::borrow::Cow::Owned(png), "png")
            }
            Picture::Compressed { data, .. } => (std::borrow::Cow::Borrowed(data.as_slice()), extension(data)),
        };
        let path = self.dir.join(file_name(frame, ext));
        // Only a frame rbag could have written is replaced (with `overwrite`): a file of this
        // name holding something else is kept.
        if let Ok(meta) = fs::symlink_metadata(&path) {
            let ours = meta.is_file() && head(&path).is_some_and(|h| extension(&h) == ext);
            let refusal = match (self.overwrite, ours) {
                (false, _) => Some("exists; not replaced"),
                (true, false) => Some("exists and is not an image file of this kind; not replaced"),
                (true, true) => None,
            };
            if let Some(why) = refusal {
                return Err(Error::Io { path, source: std::io::Error::new(std::io::ErrorKind::AlreadyExists, why) });
            }
        }
        // Frames are not fsynced one by one as the safe-output path does for a single output:
        // thousands of syncs would bound an export by the disk's flush rate. Each is still
        // complete under its name (temporary name, then rename).
        let tmp = self.dir.join(format!(".{}.partial", file_name(frame, ext)));
        let io = |source| Error::Io { path: tmp.clone(), source };
        fs::write(&tmp, &bytes).map_err(io)?;
        fs::rename(&tmp, &path).map_err(|source| Error::Io { path: path.clone(), source })?;
        Ok(path)
    }
}

/// The first bytes of a file, enough to tell its kind.
fn head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut h = Vec::new();
    fs::File::open(path).and_then(|f| f.take(16).read_to_end(&mut h)).ok()?;
    Some(h)
}

/// Whether a file is a video of a container [`Video`] writes (MP4/MOV, Matroska/WebM, AVI), by
/// its magic: what an output check may replace.
pub fn is_video(path: &Path) -> bool {
    head(path).is_some_and(|h| {
        h.get(4..8) == Some(b"ftyp")
            || h.starts_with(&[0x1A, 0x45, 0xDF, 0xA3])
            || (h.starts_with(b"RIFF") && h.get(8..11) == Some(b"AVI"))
    })
}

/// A video written by `ffmpeg`, fed frames on its standard input, into a staged output that
/// is renamed into place only when `ffmpeg` succeeds.
pub struct Video {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Taken by [`Video::finish`]; dropping it unfinished removes the temporary.
    staged: Option<Staged>,
    size: Option<(u32, u32)>,
    raw: bool,
}

/// The container `ffmpeg` writes for an output name.
fn container(out: &Path) -> Result<&'static str> {
    let ext = out.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    Ok(match ext.as_str() {
        "mp4" => "mp4",
        "mkv" => "matroska",
        "webm" => "webm",
        "mov" => "mov",
        "avi" => "avi",
        _ => {
            return Err(Error::Io {
                path: out.into(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a video name (.mp4, .mkv, .webm, .mov, .avi)",
                ),
            })
        }
    })
}

/// The frame rate of frames logged at `times` (ns): from the median interval, 10 fps for a
/// single frame.
pub fn frame_rate(times: &[u64]) -> f64 {
    let mut gaps: Vec<u64> = times.windows(2).map(|w| w[1].saturating_sub(w[0])).filter(|g| *g > 0).collect();
    if gaps.is_empty() {
        return 10.0;
    }
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2] as f64;
    ((1e9 / median) * 1000.0).round().max(1.0) / 1000.0
}

impl Video {
    /// Starts `ffmpeg` writing the `staged` output (checked by the caller against the inputs,
    /// see `rbag_bag::output`) at `fps` frames per second; the container comes from the output's
    /// name. `first` says what the frames are: raw pixels are sent as RGB, compressed images as
    /// they are.
    pub fn start(staged: Staged, fps: f64, first: &Picture) -> Result<Self> {
        let format = container(staged.target())?;
        let mut cmd = Command::new("ffmpeg");
        cmd.args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"]);
        let (raw, size) = match first {
            Picture::Raw(p) => {
                cmd.args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", &format!("{}x{}", p.width, p.height)]);
                (true, Some((p.width, p.height)))
            }
            Picture::Compressed { .. } => {
                cmd.args(["-f", "image2pipe"]);
                (false, None)
            }
        };
        cmd.args(["-framerate", &fps.to_string(), "-i", "pipe:0"]);
        // Even sizes for yuv420p, which every player takes.
        cmd.args(["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-pix_fmt", "yuv420p", "-f", format]);
        cmd.arg(staged.temp()).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|source| Error::Tool {
            tool: "ffmpeg",
            reason: if source.kind() == std::io::ErrorKind::NotFound {
                "not found on PATH (Debian: apt install ffmpeg)".into()
            } else {
                source.to_string()
            },
        })?;
        let stdin = child.stdin.take();
        Ok(Video { child, stdin, staged: Some(staged), size, raw })
    }

    /// Sends one frame. Raw frames must all have the first frame's size.
    pub fn push(&mut self, topic: &str, frame: &Frame) -> Result<()> {
        let bytes: std::borrow::Cow<[u8]> = match (&frame.picture, self.raw) {
            (Picture::Raw(p), true) => {
                if Some((p.width, p.height)) != self.size {
                    let (w, h) = self.size.unwrap_or_default();
                    return Err(Error::Image {
                        topic: topic.into(),
                        log_time: frame.log_time,
                        reason: format!("{}x{} after frames of {w}x{h}: a video has one size", p.width, p.height),
                    });
                }
                p.rgb8().into()
            }
            (Picture::Compressed { data, .. }, false) => data.as_slice().into(),
            _ => {
                return Err(Error::Image {
                    topic: topic.into(),
                    log_time: frame.log_time,
                    reason: "raw and compressed images in one video".into(),
                })
            }
        };
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(Error::Tool { tool: "ffmpeg", reason: "stopped after an earlier error".into() });
        };
        if let Err(e) = stdin.write_all(&bytes) {
            // ffmpeg stopped reading: what it printed says why.
            self.stdin = None;
            let reason = self.wait_output().err().map_or_else(|| e.to_string(), |e| e.to_string());
            return Err(Error::Tool { tool: "ffmpeg", reason });
        }
        Ok(())
    }

    fn wait_output(&mut self) -> Result<()> {
        let mut err = String::new();
        if let Some(mut s) = self.child.stderr.take() {
            use std::io::Read;
            // Bounded: ffmpeg's own messages, not data.
            let _ = (&mut s).take(64 * 1024).read_to_string(&mut err);
        }
        let status = self.child.wait().map_err(|e| Error::Tool { tool: "ffmpeg", reason: e.to_string() })?;
        if status.success() {
            Ok(())
        } else {
            Err(Error::Tool { tool: "ffmpeg", reason: format!("{status}: {}", err.trim()) })
        }
    }

    /// Closes the input, waits for `ffmpeg`, and commits the video into place.
    pub fn finish(mut self) -> Result<PathBuf> {
        self.stdin = None;
        self.wait_output()?;
        let staged = self.staged.take().ok_or(Error::Tool { tool: "ffmpeg", reason: "already finished".into() })?;
        let out = staged.target().to_path_buf();
        staged.commit().map_err(rbag_bag::Error::from)?;
        Ok(out)
    }
}

impl Drop for Video {
    fn drop(&mut self) {
        // An unfinished video: stop ffmpeg; the staged output then removes its temporary.
        if self.stdin.take().is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_rate_from_the_median_interval() {
        assert_eq!(frame_rate(&[0, 100_000_000, 200_000_000, 300_000_000, 900_000_000]), 10.0);
        assert_eq!(frame_rate(&[5]), 10.0);
        assert_eq!(frame_rate(&[0, 33_333_333, 66_666_666]), 30.0);
    }

    #[test]
    fn names_carry_place_and_log_time() {
        let f = Frame {
            index: 7,
            log_time: 1_700_000_000_050_000_000,
            picture: Picture::Compressed { format: "jpeg".into(), data: vec![] },
        };
        assert_eq!(file_name(&f, "jpg"), "000007_1700000000.050000000.jpg");
    }
}
