//! Terminal output helpers shared by the verbs: errors, progress bars, human-readable numbers.

use std::io::IsTerminal;

/// `eprintln!` that never panics: a status line must not kill a recording (or lose its bag)
/// because the terminal went away (a closed pty gives EIO, a closed pipe EPIPE).
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether an error is a closed stdout (`rbag ... | head`), which ends the run quietly.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    // serde_json hides its io::Error from `source()`; ask it directly.
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == BrokenPipe)
            || c.downcast_ref::<serde_json::Error>().is_some_and(|j| j.io_error_kind() == Some(BrokenPipe))
    })
}

/// Prints an error with its causes on stderr.
pub fn error(e: &anyhow::Error) {
    let mut msg = format!("error: {e}");
    for cause in e.chain().skip(1) {
        // Library errors often repeat their source in their own message; say it once.
        let cause = cause.to_string();
        if !msg.contains(&cause) {
            msg.push_str(&format!("\n  caused by: {cause}"));
        }
    }
    note!("{msg}");
}

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub fn progress_bar(total: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} msgs ({per_sec}, eta {eta})")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(what.to_string());
    bar
}

/// Prints this process's peak resident memory (`VmHWM`) on stderr, for memory tests: a parent's
/// `wait4` figure also counts the memory of the process it was spawned from.
pub fn report_peak_rss() {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
            note!("rbag: peak RSS {}", line.trim_start_matches("VmHWM:").trim());
        }
    }
}

/// Bytes as rosbag prints them (`1.2 MB`), in powers of 1024.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A duration in seconds as rosbag prints it: `2.9s`, `1:05s (65s)`, `1:01:05s (3665s)`.
pub fn human_duration(ns: u64) -> String {
    let secs = ns as f64 / 1e9;
    let whole = secs.floor() as u64;
    if whole < 60 {
        format!("{secs:.1}s")
    } else if whole < 3600 {
        format!("{}:{:02}s ({whole}s)", whole / 60, whole % 60)
    } else {
        format!("{}:{:02}:{:02}s ({whole}s)", whole / 3600, (whole / 60) % 60, whole % 60)
    }
}

/// A time in ns since the epoch as UTC calendar time with the raw seconds.
pub fn human_time(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03} UTC ({}.{:09})",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        (ns % 1_000_000_000) / 1_000_000,
        secs,
        ns % 1_000_000_000
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A frequency as rosbag prints it.
pub fn human_frequency(hz: f64) -> String {
    if hz >= 1e6 {
        format!("{:.2} MHz", hz / 1e6)
    } else if hz >= 1e3 {
        format!("{:.2} kHz", hz / 1e3)
    } else if hz >= 100.0 {
        format!("{hz:.0} Hz")
    } else if hz >= 1.0 {
        format!("{hz:.1} Hz")
    } else {
        format!("{hz:.4} Hz")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1536), "1.5 KB");
        assert_eq!(human_duration(2_900_000_000), "2.9s");
        assert_eq!(human_duration(65_000_000_000), "1:05s (65s)");
        assert_eq!(human_time(0), "1970-01-01 00:00:00.000 UTC (0.000000000)");
        assert_eq!(human_time(1_700_000_000_500_000_000), "2023-11-14 22:13:20.500 UTC (1700000000.500000000)");
        assert_eq!(human_frequency(100.0), "100 Hz");
        assert_eq!(human_frequency(9.87), "9.9 Hz");
    }
}
