//! Parsers for command-line values: times and sizes.

/// A time: seconds since the epoch (`1700000000.5`) or integer nanoseconds (`1700000000500000000ns`).
pub fn parse_time(s: &str) -> Result<u64, String> {
    if let Some(ns) = s.strip_suffix("ns") {
        return ns.trim().parse::<u64>().map_err(|e| format!("{s:?} is not integer nanoseconds: {e}"));
    }
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not seconds since the epoch (or integer ns with an `ns` suffix)"))?;
    if !secs.is_finite() || secs < 0.0 || secs > u64::MAX as f64 / 1e9 {
        return Err(format!("{s:?} is out of range"));
    }
    // Split to keep nanosecond precision for typical epoch values.
    let whole = secs.trunc() as u64;
    let frac = match s.split_once('.') {
        Some((_, f)) if !f.contains(['e', 'E']) => {
            let digits: String = f.chars().take(9).collect();
            format!("{digits:0<9}").parse::<u64>().unwrap_or(0)
        }
        _ => ((secs - secs.trunc()) * 1e9).round() as u64,
    };
    Ok(whole * 1_000_000_000 + frac)
}

/// A size in bytes, with an optional unit (`768KiB`, `2GB`, `1.5M`); plain numbers are bytes.
/// The one parser the memory budget's `RBAG_MEMORY_BUDGET` uses too.
pub fn parse_size(s: &str) -> Result<u64, String> {
    rbag_bag::budget::parse_bytes(s).map_err(|e| e.to_string())
}

/// A size as rosbag's flags take it: a plain number is in `unit` bytes (rosbag's `--size` and
/// `--buffsize` are MB, `--chunksize` KB), and an explicit unit (`2GiB`) wins.
pub fn parse_size_in(s: &str, unit: u64) -> Result<u64, String> {
    let t = s.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let v: f64 = t.parse().map_err(|_| format!("{s:?} is not a size"))?;
        return Ok((v * unit as f64).round() as u64);
    }
    parse_size(s)
}

/// A duration in seconds as rosbag takes it: `30`, `2.5`, `5m`, `1h` (and `ms`, `s`).
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60e9)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600e9)
    } else {
        (t, 1e9)
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("{s:?} is not a duration (e.g. 30, 2.5, 5m, 1h)"))?;
    if !v.is_finite() || v < 0.0 || v * mult > u64::MAX as f64 {
        return Err(format!("{s:?} is out of range"));
    }
    Ok((v * mult).round() as u64)
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
        assert!(parse_time("-1").is_err());
        assert!(parse_time("abc").is_err());
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
}
