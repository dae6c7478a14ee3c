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

/// What a progress bar counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Messages (or rows).
    Messages,
    /// Bytes, shown as KiB/MiB/GiB with a byte rate.
    Bytes,
}

/// A progress bar on stderr, drawn only when stderr is a terminal. While the total is unknown
/// (0) it is a counter with a rate, never a full bar at `0/0`; [`set_total`] turns it into a
/// bar with an ETA once the total is known.
pub fn progress_bar(total: u64, what: &str) -> ProgressBar {
    progress_bar_in(Unit::Messages, total, what)
}

/// [`progress_bar`] counting `unit`.
pub fn progress_bar_in(unit: Unit, total: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(style(unit, total));
    bar.set_message(what.to_string());
    bar
}

/// Sets the bar's total in `unit`, switching between the counter and the bar as it becomes
/// known.
pub fn set_total(unit: Unit, bar: &ProgressBar, total: u64) {
    if bar.length() != Some(total) {
        if bar.length().unwrap_or(0) == 0 || total == 0 {
            bar.set_style(style(unit, total));
        }
        bar.set_length(total);
    }
}

/// A long job's bar: bytes with a byte rate and ETA when the inputs' indexes give the payload
/// total, else messages.
pub fn show_progress(bar: &ProgressBar, p: &rbag_bag::Progress) {
    if p.bytes_total > 0 {
        set_total(Unit::Bytes, bar, p.bytes_total.max(p.bytes_done));
        bar.set_position(p.bytes_done);
    } else {
        set_total(Unit::Messages, bar, p.messages_total);
        bar.set_position(p.messages_done);
    }
}

fn style(unit: Unit, total: u64) -> ProgressStyle {
    let template = match (unit, total) {
        (Unit::Messages, 0) => "{msg} {spinner} {pos} msgs ({per_sec})",
        (Unit::Messages, _) => "{msg} [{bar:30}] {pos}/{len} msgs ({per_sec}, eta {eta})",
        (Unit::Bytes, 0) => "{msg} {spinner} {bytes} ({bytes_per_sec})",
        (Unit::Bytes, _) => "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
    };
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()).progress_chars("=> ")
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
