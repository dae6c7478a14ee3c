//! Free space on the recording disk (`rosbag record -L/--min-space`).
//!
//! rosbag checks the bag's directory when recording starts and every 20 s after that; below
//! the minimum it stops ("Less than 1G of space free on disk with x.bag. Disabling
//! recording."), and below five times the minimum it warns. rbag checks at start (refusing to
//! create the bag), then every [`crate::RecordOptions::disk_check_bytes`] written or
//! [`DISK_CHECK_INTERVAL_NS`] of log time, whichever comes first.

use std::io;
use std::path::{Path, PathBuf};

/// Log time between two checks, as rosbag's 20 s timer.
pub const DISK_CHECK_INTERVAL_NS: u64 = 20_000_000_000;

/// Measures the bytes available to an unprivileged writer in a directory. Tests substitute
/// their own to simulate a filling disk.
pub type SpaceProbe = Box<dyn FnMut(&Path) -> io::Result<u64> + Send>;

/// Bytes available to unprivileged users on the filesystem holding `dir` (statvfs
/// `f_bavail × f_frsize`, what `df` shows as available).
pub fn free_space(dir: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a valid NUL-terminated path and `st` a properly sized out-parameter that
    // statvfs fills before we read it (only on success).
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let unit = if st.f_frsize > 0 { st.f_frsize as u64 } else { st.f_bsize as u64 };
    Ok((st.f_bavail as u64).saturating_mul(unit))
}

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Space {
    Enough,
    /// Under five times the minimum: worth a warning.
    Low {
        free: u64,
    },
    /// Under the minimum: stop.
    TooLow {
        free: u64,
    },
    /// The probe failed; recording goes on (a full disk also shows as a write error).
    Unknown(String),
}

/// Decides when to measure free space and what the measure means.
pub(crate) struct DiskGuard {
    pub(crate) dir: PathBuf,
    pub(crate) min_space: u64,
    every_bytes: u64,
    probe: SpaceProbe,
    bytes_since: u64,
    last_check_ns: u64,
}

impl DiskGuard {
    pub(crate) fn new(dir: PathBuf, min_space: u64, every_bytes: u64, probe: SpaceProbe, now_ns: u64) -> Self {
        DiskGuard { dir, min_space, every_bytes: every_bytes.max(1), probe, bytes_since: 0, last_check_ns: now_ns }
    }

    /// Measures now. An error of the probe is returned as is (at start it refuses the bag).
    pub(crate) fn measure(&mut self) -> io::Result<Space> {
        if self.min_space == 0 {
            return Ok(Space::Enough);
        }
        let free = (self.probe)(&self.dir)?;
        Ok(if free < self.min_space {
            Space::TooLow { free }
        } else if free < self.min_space.saturating_mul(5) {
            Space::Low { free }
        } else {
            Space::Enough
        })
    }

    /// Counts bytes written to the bag.
    pub(crate) fn wrote(&mut self, bytes: u64) {
        self.bytes_since += bytes;
    }

    /// Measures when a check is due at `now_ns` (rosbag checks before writing a message).
    pub(crate) fn check_if_due(&mut self, now_ns: u64) -> Option<Space> {
        let due =
            self.bytes_since >= self.every_bytes || now_ns.saturating_sub(self.last_check_ns) >= DISK_CHECK_INTERVAL_NS;
        if !due || self.min_space == 0 {
            return None;
        }
        self.bytes_since = 0;
        self.last_check_ns = now_ns;
        Some(self.measure().unwrap_or_else(|e| Space::Unknown(format!("{}: {e}", self.dir.display()))))
    }
}

/// `1.5 GiB`-style text for messages about space.
pub(crate) fn human(bytes: u64) -> String {
    rbag_storage::budget::format_bytes(bytes, true)
}
