//! The names of a recording's files and which split files are kept.
//!
//! Names follow rosbag's `Recorder::updateFilenames`: the parts `NAME` (a trailing `.bag` is
//! removed first), the local date `YYYY-MM-DD-HH-MM-SS` (with `-o PREFIX`, or when no name is
//! given) and the split index (with `--split`) are joined with `_`, then `.bag` is added:
//! `-O run` → `run.bag`; `-O run.bag --split` → `run_0.bag`, `run_1.bag`…;
//! `-o run --split` → `run_2024-05-01-12-00-00_0.bag`. Each split's date is taken when that
//! file is opened, as rosbag does. For MCAP and SQLite3 output the extension is `.mcap` /
//! `.db3` instead of `.bag`.
//!
//! A rosbag2 directory ([`super::Layout::Rosbag2Dir`]) is named by the caller; its storage
//! files are named by the rosbag2 writer (`<dir>_<n>.<ext>`).

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use rbag_storage::Format;

use super::error::RecordError;
use super::options::OutputName;

/// The extension rosbag-style names end with for `format`.
pub fn extension(format: Format) -> &'static str {
    match format {
        Format::Ros1 => "bag",
        Format::Mcap => "mcap",
        Format::Sqlite3 => "db3",
    }
}

/// Builds the name of each file of a recording.
#[derive(Debug, Clone)]
pub(crate) struct Naming {
    /// The name or prefix with the format's extension removed; may be empty.
    stem: Vec<u8>,
    append_date: bool,
    split: bool,
    ext: &'static str,
}

impl Naming {
    pub(crate) fn new(output: &OutputName, format: Format, split: bool) -> Result<Naming, RecordError> {
        let ext = extension(format);
        let (raw, append_date) = match output {
            OutputName::Exact(p) => (p.as_os_str().as_bytes().to_vec(), false),
            OutputName::Prefix(p) => (p.as_bytes().to_vec(), true),
        };
        let suffix = format!(".{ext}");
        let stem = match raw.strip_suffix(suffix.as_bytes()) {
            Some(s) => s.to_vec(),
            None => raw,
        };
        if stem.is_empty() && !append_date && !split {
            return Err(RecordError::EmptyName);
        }
        Ok(Naming { stem, append_date, split, ext })
    }

    /// The final name of split `index`, opened at `wall_ns` (nanoseconds since the epoch).
    pub(crate) fn target(&self, index: usize, wall_ns: u64) -> PathBuf {
        let mut parts: Vec<Vec<u8>> = Vec::new();
        if !self.stem.is_empty() {
            parts.push(self.stem.clone());
        }
        if self.append_date {
            parts.push(local_stamp(wall_ns).into_bytes());
        }
        if self.split {
            parts.push(index.to_string().into_bytes());
        }
        let mut name = parts.join(&b'_');
        name.push(b'.');
        name.extend_from_slice(self.ext.as_bytes());
        PathBuf::from(OsString::from_vec(name))
    }
}

/// The name a file has while it is written: ROS 1 bags are `NAME.bag.active` until closed, as
/// rosbag writes them. MCAP and SQLite3 files are written under their final name, because the
/// storage layer recognises a single-file rosbag2 output by its extension.
pub(crate) fn active_path(target: &std::path::Path, format: Format) -> PathBuf {
    match format {
        Format::Ros1 => {
            let mut s = target.as_os_str().to_os_string();
            s.push(".active");
            PathBuf::from(s)
        }
        Format::Mcap | Format::Sqlite3 => target.to_path_buf(),
    }
}

/// `YYYY-MM-DD-HH-MM-SS` in local time, as rosbag stamps its names.
pub fn local_stamp(wall_ns: u64) -> String {
    let secs = (wall_ns / 1_000_000_000) as libc::time_t;
    // SAFETY: `tm` is a plain C struct we own; localtime_r/gmtime_r only write into it and
    // return null on failure, which is checked before it is read.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&secs, &mut tm).is_null() || !libc::gmtime_r(&secs, &mut tm).is_null() };
    if !ok {
        return format!("{secs}");
    }
    format!(
        "{:04}-{:02}-{:02}-{:02}-{:02}-{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(output: OutputName, format: Format, split: bool) -> Vec<String> {
        let n = Naming::new(&output, format, split).unwrap();
        (0..2).map(|i| n.target(i, 0).to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn rosbag_names() {
        let stamp = local_stamp(0);
        assert_eq!(names(OutputName::Exact("run".into()), Format::Ros1, false)[0], "run.bag");
        assert_eq!(names(OutputName::Exact("d/run.bag".into()), Format::Ros1, false)[0], "d/run.bag");
        assert_eq!(names(OutputName::Exact("run.txt".into()), Format::Ros1, false)[0], "run.txt.bag");
        assert_eq!(names(OutputName::Exact("run.bag".into()), Format::Ros1, true), ["run_0.bag", "run_1.bag"]);
        assert_eq!(names(OutputName::Exact("run.mcap".into()), Format::Mcap, true), ["run_0.mcap", "run_1.mcap"]);
        assert_eq!(names(OutputName::Prefix("p".into()), Format::Ros1, false)[0], format!("p_{stamp}.bag"));
        assert_eq!(names(OutputName::Prefix("p".into()), Format::Ros1, true)[1], format!("p_{stamp}_1.bag"));
        assert_eq!(names(OutputName::Prefix(String::new()), Format::Ros1, false)[0], format!("{stamp}.bag"));
        assert!(matches!(Naming::new(&OutputName::Exact("".into()), Format::Ros1, false), Err(RecordError::EmptyName)));
        assert_eq!(active_path("a/x.bag".as_ref(), Format::Ros1), PathBuf::from("a/x.bag.active"));
        assert_eq!(active_path("a/x.mcap".as_ref(), Format::Mcap), PathBuf::from("a/x.mcap"));
    }

    #[test]
    fn stamp_shape() {
        let s = local_stamp(1_700_000_000_000_000_000);
        let re = regex::Regex::new(r"^20\d\d-\d\d-\d\d-\d\d-\d\d-\d\d$").unwrap();
        assert!(re.is_match(&s), "{s}");
    }
}
