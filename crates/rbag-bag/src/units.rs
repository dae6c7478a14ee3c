//! Times, durations and sizes written as people write them (`1700000000.5`, `5m`, `768KiB`):
//! one parser for the command line, Python and C, so a value means the same everywhere; and
//! the same quantities printed as `rosbag info` prints them.

use rbag_storage::budget::SizeError;

/// A time, duration or size that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnitError {
    /// Not seconds since the epoch, nor integer nanoseconds with `ns`.
    #[error("{text:?} is not a time: seconds since the epoch (1700000000.5) or integer ns with an `ns` suffix")]
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
    /// Not a size.
    #[error(transparent)]
    Size(#[from] SizeError),
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

/// A duration in ns, as rosbag takes one: seconds (`30`, `2.5`) or with a unit (`250ms`, `5s`,
/// `5m`, `1h`).
pub fn parse_duration(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    let (num, mult) = [("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9)]
        .into_iter()
        .find_map(|(unit, mult)| t.strip_suffix(unit).map(|n| (n, mult)))
        .unwrap_or((t, 1e9));
    let v: f64 = num.trim().parse().map_err(|_| UnitError::NotADuration { text: s.into() })?;
    if !v.is_finite() || v < 0.0 || v * mult > u64::MAX as f64 {
        return Err(UnitError::OutOfRange { text: s.into() });
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
