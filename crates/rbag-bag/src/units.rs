//! Times, durations and sizes written as people write them (`1700000000.5`, `5m`, `768KiB`):
//! one parser for the command line, Python and C, so a value means the same everywhere; and
//! the same quantities printed as `rosbag info` prints them.

use rbag_storage::budget::SizeError;

/// A time, duration or size that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnitError {
    /// Not a time in any of the forms [`parse_time_spec`] takes.
    #[error(
        "{text:?} is not a time: seconds since the epoch (1700000000.5), integer ns (1700000000500000000ns), \
         a date (2023-11-14T22:13:22Z; local time without a zone), or an offset from the bag's start \
         (+1.5, +2m, 90s, 1m30s)"
    )]
    NotATime {
        /// The text given.
        text: String,
    },
    /// Not a duration.
    #[error("{text:?} is not a duration (e.g. 30, 2.5, 250ms, 5m, 1h)")]
    NotADuration {
        /// The text given.
        text: String,
    },
    /// Negative, or beyond what nanoseconds in a `u64` hold.
    #[error("{text:?} is out of range")]
    OutOfRange {
        /// The text given.
        text: String,
    },
    /// A local time that a clock change makes ambiguous or skips.
    #[error("{text:?} is not one instant in local time (a clock change); give a zone, e.g. Z or +01:00")]
    AmbiguousLocalTime {
        /// The text given.
        text: String,
    },
    /// A window that ends before it starts.
    #[error("the window ends at {} before it starts at {}", format_time(*end), format_time(*start))]
    EmptyWindow {
        /// Its start, ns since the epoch.
        start: u64,
        /// Its end, ns since the epoch.
        end: u64,
    },
    /// Not a size.
    #[error(transparent)]
    Size(#[from] SizeError),
}

/// A time as people give one on a command line: a point in time, or an offset from the first
/// message of the bag it applies to (rosbag's `play -s`, `ros2 bag play --start-offset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSpec {
    /// Nanoseconds since the epoch.
    At(u64),
    /// Nanoseconds after the bag's start.
    FromStart(u64),
}

impl TimeSpec {
    /// The time in ns since the epoch, for a bag whose first message is at `bag_start_ns`.
    pub fn resolve(self, bag_start_ns: u64) -> u64 {
        match self {
            TimeSpec::At(t) => t,
            TimeSpec::FromStart(d) => bag_start_ns.saturating_add(d),
        }
    }
}

/// A time as [`TimeSpec`]: a bare number is seconds since the epoch (`1700000000.5`) and `ns`
/// marks integer nanoseconds, as before; a date is ISO 8601 / RFC 3339
/// (`2023-11-14T22:13:22Z`, `2023-11-14 22:13:22.5+01:00`, local time when no zone is given,
/// `2023-11-14` for local midnight); `+` and a number of seconds or a duration (`+1`, `+1.5s`,
/// `+2m`), or a duration with a unit and no sign (`90s`, `1m30s`), is an offset from the bag's
/// start.
pub fn parse_time_spec(s: &str) -> Result<TimeSpec, UnitError> {
    let t = s.trim();
    let not_a_time = || UnitError::NotATime { text: s.into() };
    if let Some(rest) = t.strip_prefix('+') {
        return parse_duration(rest).map(TimeSpec::FromStart).map_err(|_| not_a_time());
    }
    if t.len() >= 10 && t.as_bytes()[4] == b'-' && t.as_bytes()[7] == b'-' {
        return parse_date(t, s).map(TimeSpec::At);
    }
    if t.ends_with(|c: char| c.is_ascii_alphabetic()) && !t.ends_with("ns") {
        return parse_duration(t).map(TimeSpec::FromStart).map_err(|_| not_a_time());
    }
    parse_time(t).map(TimeSpec::At)
}

/// An ISO 8601 / RFC 3339 date and time, in local time when it names no zone.
fn parse_date(t: &str, original: &str) -> Result<u64, UnitError> {
    use chrono::{DateTime, Local, NaiveDate, NaiveDateTime, TimeZone};
    let not_a_time = || UnitError::NotATime { text: original.into() };
    let iso = t.replacen(' ', "T", 1);
    let utc_ns = |dt: DateTime<chrono::Utc>| {
        dt.timestamp_nanos_opt()
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| UnitError::OutOfRange { text: original.into() })
    };
    if let Ok(dt) = DateTime::parse_from_rfc3339(&iso) {
        return utc_ns(dt.to_utc());
    }
    let naive = ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(&iso, f).ok())
        .or_else(|| NaiveDate::parse_from_str(&iso, "%Y-%m-%d").ok().and_then(|d| d.and_hms_opt(0, 0, 0)))
        .ok_or_else(not_a_time)?;
    match Local.from_local_datetime(&naive).single() {
        Some(dt) => utc_ns(dt.to_utc()),
        None => Err(UnitError::AmbiguousLocalTime { text: original.into() }),
    }
}

/// A window of log time from command-line values: `start` and `end` resolved against the
/// bag's start, or `end` as `start + duration`. A window that ends before it starts is an
/// error; `None` bounds stay open.
pub fn resolve_window(
    start: Option<TimeSpec>,
    end: Option<TimeSpec>,
    duration_ns: Option<u64>,
    bag_start_ns: u64,
) -> Result<(Option<u64>, Option<u64>), UnitError> {
    let start = start.map(|t| t.resolve(bag_start_ns));
    let end = match (end, duration_ns) {
        (Some(e), _) => Some(e.resolve(bag_start_ns)),
        (None, Some(d)) => Some(start.unwrap_or(bag_start_ns).saturating_add(d)),
        (None, None) => None,
    };
    match (start, end) {
        (Some(s), Some(e)) if e < s => Err(UnitError::EmptyWindow { start: s, end: e }),
        _ => Ok((start, end)),
    }
}

/// A time in ns since the epoch: seconds (`1700000000.5`, kept to the nanosecond) or integer
/// nanoseconds (`1700000000500000000ns`).
pub fn parse_time(s: &str) -> Result<u64, UnitError> {
    let not_a_time = || UnitError::NotATime { text: s.into() };
    if let Some(ns) = s.strip_suffix("ns") {
        return ns.trim().parse::<u64>().map_err(|_| not_a_time());
    }
    let secs: f64 = s.trim().parse().map_err(|_| not_a_time())?;
    if !secs.is_finite() || secs < 0.0 || secs > u64::MAX as f64 / 1e9 {
        return Err(UnitError::OutOfRange { text: s.into() });
    }
    // Whole seconds and decimal digits apart: an f64 epoch time holds only microseconds.
    let whole = secs.trunc() as u64;
    let frac = match s.split_once('.') {
        Some((_, f)) if !f.contains(['e', 'E']) => {
            let digits: String = f.trim().chars().take(9).collect();
            format!("{digits:0<9}").parse::<u64>().map_err(|_| not_a_time())?
        }
        _ => ((secs - secs.trunc()) * 1e9).round() as u64,
    };
    Ok(whole * 1_000_000_000 + frac)
}

/// A duration in ns, as rosbag takes one: seconds (`30`, `2.5`) or with units (`250ms`, `5s`,
/// `5m`, `1h`, and sums of them: `1m30s`, `1h2m3.5s`).
pub fn parse_duration(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    let bad = || UnitError::NotADuration { text: s.into() };
    if let Ok(v) = t.parse::<f64>() {
        return scaled(v, 1e9, s);
    }
    let mut rest = t;
    let mut total = 0u64;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
        let (num, after) = rest.split_at(digits);
        let unit_len = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let mult = match unit {
            "ns" => 1.0,
            "us" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" | "min" => 60e9,
            "h" => 3600e9,
            _ => return Err(bad()),
        };
        let v: f64 = num.parse().map_err(|_| bad())?;
        total = total.checked_add(scaled(v, mult, s)?).ok_or_else(|| UnitError::OutOfRange { text: s.into() })?;
        rest = next;
    }
    if t.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

/// `v` units of `mult` ns, refused when negative or past `u64`.
fn scaled(v: f64, mult: f64, text: &str) -> Result<u64, UnitError> {
    if !v.is_finite() || v < 0.0 || v * mult > u64::MAX as f64 {
        return Err(UnitError::OutOfRange { text: text.into() });
    }
    Ok((v * mult).round() as u64)
}

/// A size in bytes with an optional unit (`768KiB`, `2GB`, `1.5M`); a plain number is bytes.
/// The memory budget's `RBAG_MEMORY_BUDGET` is read with it too.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    Ok(rbag_storage::budget::parse_bytes(s)?)
}

/// A size as rosbag's flags take one: a plain number counts `unit` bytes (rosbag's `--size` and
/// `--buffsize` are MB, `--chunksize` KB); an explicit unit (`2GiB`) wins.
pub fn parse_size_in(s: &str, unit: u64) -> Result<u64, UnitError> {
    let t = s.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let v: f64 = t.parse().map_err(|_| SizeError::NotASize { text: s.into() })?;
        return Ok((v * unit as f64).round() as u64);
    }
    parse_size(s)
}

/// Bytes as rosbag prints them (`1.2 MB`), in powers of 1024.
pub fn format_size(bytes: u64) -> String {
    rbag_storage::budget::format_bytes(bytes, false)
}

/// A duration in seconds as rosbag prints it: `2.9s`, `1:05s (65s)`, `1:01:05s (3665s)`.
pub fn format_duration(ns: u64) -> String {
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
pub fn format_time(ns: u64) -> String {
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
pub fn format_frequency(hz: f64) -> String {
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
    fn times() {
        assert_eq!(parse_time("1700000000.5").unwrap(), 1_700_000_000_500_000_000);
        assert_eq!(parse_time("1700000000.123456789").unwrap(), 1_700_000_000_123_456_789);
        assert_eq!(parse_time("12ns").unwrap(), 12);
        assert_eq!(parse_time("3").unwrap(), 3_000_000_000);
        assert!(matches!(parse_time("-1"), Err(UnitError::OutOfRange { .. })));
        assert!(matches!(parse_time("abc"), Err(UnitError::NotATime { .. })));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("768KiB").unwrap(), 786_432);
        assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("100").unwrap(), 100);
        assert!(parse_size("5 parsecs").is_err());
        assert_eq!(parse_size_in("256", 1 << 20).unwrap(), 256 << 20);
        assert_eq!(parse_size_in("1GiB", 1 << 20).unwrap(), 1 << 30);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), 30_000_000_000);
        assert_eq!(parse_duration("1.5").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("5m").unwrap(), 300_000_000_000);
        assert_eq!(parse_duration("1h").unwrap(), 3_600_000_000_000);
        assert_eq!(parse_duration("250ms").unwrap(), 250_000_000);
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_duration("1m30s").unwrap(), 90_000_000_000);
        assert_eq!(parse_duration("1h2m3.5s").unwrap(), 3_723_500_000_000);
        assert!(parse_duration("").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn time_specs() {
        use TimeSpec::*;
        assert_eq!(parse_time_spec("1700000000.5").unwrap(), At(1_700_000_000_500_000_000));
        assert_eq!(parse_time_spec("12ns").unwrap(), At(12));
        assert_eq!(parse_time_spec("+1").unwrap(), FromStart(1_000_000_000));
        assert_eq!(parse_time_spec("+1.5s").unwrap(), FromStart(1_500_000_000));
        assert_eq!(parse_time_spec("+2m").unwrap(), FromStart(120_000_000_000));
        assert_eq!(parse_time_spec("90s").unwrap(), FromStart(90_000_000_000));
        assert_eq!(parse_time_spec("1m30s").unwrap(), FromStart(90_000_000_000));
        assert_eq!(parse_time_spec("2023-11-14T22:13:22Z").unwrap(), At(1_700_000_002_000_000_000));
        assert_eq!(parse_time_spec("2023-11-14 23:13:22.25+01:00").unwrap(), At(1_700_000_002_250_000_000));
        assert!(matches!(parse_time_spec("2023-11-14T22:13:22").unwrap(), At(_)), "local time");
        assert!(matches!(parse_time_spec("2023-13-14"), Err(UnitError::NotATime { .. })));
        assert!(matches!(parse_time_spec("+soon"), Err(UnitError::NotATime { .. })));
        assert_eq!(FromStart(5).resolve(10), 15);
    }

    #[test]
    fn windows() {
        let s = Some(TimeSpec::FromStart(1_000));
        assert_eq!(resolve_window(s, None, Some(500), 10_000).unwrap(), (Some(11_000), Some(11_500)));
        assert_eq!(resolve_window(None, None, Some(500), 10_000).unwrap(), (None, Some(10_500)));
        let late = Some(TimeSpec::At(5));
        assert!(matches!(resolve_window(s, late, None, 10_000), Err(UnitError::EmptyWindow { .. })));
        assert_eq!(resolve_window(s, s, None, 0).unwrap(), (Some(1_000), Some(1_000)));
    }

    #[test]
    fn formats() {
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(1536), "1.5 KB");
        assert_eq!(format_duration(2_900_000_000), "2.9s");
        assert_eq!(format_duration(65_000_000_000), "1:05s (65s)");
        assert_eq!(format_time(0), "1970-01-01 00:00:00.000 UTC (0.000000000)");
        assert_eq!(format_time(1_700_000_000_500_000_000), "2023-11-14 22:13:20.500 UTC (1700000000.500000000)");
        assert_eq!(format_frequency(100.0), "100 Hz");
        assert_eq!(format_frequency(9.87), "9.9 Hz");
    }
}
