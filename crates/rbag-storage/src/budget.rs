//! The memory budget: how many bytes of decompressed (or otherwise read-ahead) bag data the
//! process holds at once, over every open reader.
//!
//! Bags compress well (a chunk of blank images shrinks 28,000:1 with zstd, 850,000:1 with bz2),
//! so neither the file size nor a ratio says what reading one costs: a 12 KB bag can hold a
//! gigabyte. Every buffer of decompressed chunk data is therefore paid for from one process-wide
//! counter first ([`try_reserve`]); the [`Reservation`] travels with the buffer (see
//! [`Budgeted`]) and is returned when the last message slice of it is dropped. A reader that
//! cannot reserve a whole chunk decodes it in a bounded way instead (streaming it, or decoding
//! it again when it is needed); only a single message larger than what is free fails, with
//! [`crate::Error::OverBudget`].
//!
//! The limit is [`DEFAULT_LIMIT`] (512 MiB) unless the environment variable `RBAG_MEMORY_BUDGET`
//! says otherwise (read once, with units: `256MiB`, `2GB`, plain bytes) or a program calls
//! [`set_limit`]. Anything that later holds decompressed data on a reader's behalf (read-ahead
//! threads, remote reads, language bindings) must reserve from here too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The limit when neither `RBAG_MEMORY_BUDGET` nor [`set_limit`] says otherwise: 512 MiB.
pub const DEFAULT_LIMIT: u64 = 512 << 20;

/// The environment variable that sets the limit, read once.
pub const ENV: &str = "RBAG_MEMORY_BUDGET";

/// Bytes reserved now.
static USED: AtomicU64 = AtomicU64::new(0);
/// The limit set by [`set_limit`]; 0 while unset (the environment or the default applies).
static SET: AtomicU64 = AtomicU64::new(0);
static FROM_ENV: OnceLock<u64> = OnceLock::new();

/// The limit in bytes.
pub fn limit() -> u64 {
    match SET.load(Ordering::Relaxed) {
        0 => *FROM_ENV.get_or_init(|| limit_from_env().ok().flatten().unwrap_or(DEFAULT_LIMIT)),
        n => n,
    }
}

/// Sets the limit for the rest of the process (over `RBAG_MEMORY_BUDGET`). Reservations held
/// already stay valid; 0 is taken as 1 byte.
pub fn set_limit(bytes: u64) {
    SET.store(bytes.max(1), Ordering::Relaxed);
}

/// The limit `RBAG_MEMORY_BUDGET` asks for: `None` when it is unset, an error naming the
/// variable when it is not a size. Programs call it at start to report a bad value; the
/// budget itself then falls back to the default.
pub fn limit_from_env() -> Result<Option<u64>, EnvError> {
    match std::env::var(ENV) {
        Ok(v) => match parse_bytes(&v) {
            Ok(0) => Err(EnvError { value: v, source: None }),
            Ok(n) => Ok(Some(n)),
            Err(e) => Err(EnvError { value: v, source: Some(e) }),
        },
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(EnvError {
            value: v.to_string_lossy().into_owned(),
            source: Some(SizeError::NotASize { text: String::new() }),
        }),
    }
}

/// A bad `RBAG_MEMORY_BUDGET`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{ENV}={value:?}: {}", match source { Some(e) => e.to_string(), None => "the budget must be at least 1 byte".into() })]
pub struct EnvError {
    /// The variable's value.
    pub value: String,
    /// Why it is not a size; `None` for a size of 0.
    pub source: Option<SizeError>,
}

/// Bytes reserved now, over all readers.
pub fn used() -> u64 {
    USED.load(Ordering::Relaxed)
}

/// Reserves `bytes` if they fit under the limit with everything reserved already.
pub fn try_reserve(bytes: u64) -> Option<Reservation> {
    let limit = limit();
    let mut used = USED.load(Ordering::Relaxed);
    loop {
        let after = used.checked_add(bytes).filter(|&a| a <= limit)?;
        match USED.compare_exchange_weak(used, after, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return Some(Reservation { bytes }),
            Err(now) => used = now,
        }
    }
}

/// [`try_reserve`], or [`crate::Error::OverBudget`] naming `what` at `offset`.
pub fn reserve(bytes: u64, offset: u64, what: &'static str) -> crate::Result<Reservation> {
    try_reserve(bytes).ok_or_else(|| over(bytes, offset, what))
}

/// The error for `bytes` of `what` at `offset` that do not fit.
pub fn over(bytes: u64, offset: u64, what: &'static str) -> crate::Error {
    crate::Error::OverBudget { offset, what, needed: bytes, in_use: used(), limit: limit() }
}

/// Bytes of the budget, returned when dropped.
#[derive(Debug)]
#[must_use = "the bytes are returned to the budget when this is dropped"]
pub struct Reservation {
    bytes: u64,
}

impl Reservation {
    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Grows the reservation to `total` bytes when the budget has room; whether it holds that
    /// many now.
    pub fn grow_to(&mut self, total: u64) -> bool {
        if total <= self.bytes {
            return true;
        }
        match try_reserve(total - self.bytes) {
            Some(extra) => {
                self.bytes = total;
                // Its bytes are ours now: returned when `self` is dropped.
                std::mem::forget(extra);
                true
            }
            None => false,
        }
    }

    /// Returns what is not needed any more (`keep` bytes stay reserved).
    pub fn shrink_to(&mut self, keep: u64) {
        if keep < self.bytes {
            USED.fetch_sub(self.bytes - keep, Ordering::AcqRel);
            self.bytes = keep;
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        USED.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// A buffer paid for from the budget: as the owner of a [`bytes::Bytes`], its reservation lives
/// as long as any slice of it.
pub struct Budgeted {
    data: Vec<u8>,
    _reservation: Reservation,
}

impl AsRef<[u8]> for Budgeted {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

impl Budgeted {
    /// `data` with the reservation that paid for it, as shareable bytes.
    pub fn bytes(mut data: Vec<u8>, mut reservation: Reservation) -> bytes::Bytes {
        // A reused buffer can be larger than what was reserved for its contents: the budget
        // pays for all of it, or the spare room goes.
        if !reservation.grow_to(data.capacity() as u64) {
            data.shrink_to_fit();
        }
        reservation.shrink_to(data.capacity() as u64);
        bytes::Bytes::from_owner(Budgeted { data, _reservation: reservation })
    }
}

impl Drop for Budgeted {
    fn drop(&mut self) {
        recycle(std::mem::take(&mut self.data));
    }
}

/// Buffers of dropped [`Budgeted`] bytes, for the next chunk to fill: memory that is mapped
/// already, instead of fresh pages to fault in (and, when a read-ahead thread fills what the
/// reading thread frees, instead of malloc trimming and regrowing its arenas on every chunk).
/// Idle buffers are outside the budget, so their number and size are small and fixed:
/// at most [`RECYCLED_COUNT`] × [`RECYCLED_MAX`] bytes (32 MiB).
static RECYCLED: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
/// How many idle buffers are kept.
pub const RECYCLED_COUNT: usize = 4;
/// The largest buffer kept (chunks are 768 KiB to a few MiB as rosbag, rosbag2 and the mcap
/// CLI write them).
pub const RECYCLED_MAX: usize = 8 << 20;

/// The smallest buffer kept: smaller ones cost little to allocate, and would take the places
/// of chunk-sized ones.
pub const RECYCLED_MIN: usize = 64 << 10;

fn recycle(mut data: Vec<u8>) {
    if !(RECYCLED_MIN..=RECYCLED_MAX).contains(&data.capacity()) {
        return;
    }
    data.clear();
    let mut idle = RECYCLED.lock().unwrap_or_else(|p| p.into_inner());
    if idle.len() < RECYCLED_COUNT {
        idle.push(data);
    }
}

/// An empty vector with room for `bytes`: an idle buffer large enough when there is one, else
/// a new one (or an error instead of the allocation failure).
pub fn reused_vec(bytes: u64, offset: u64, what: &'static str) -> crate::Result<Vec<u8>> {
    {
        let mut idle = RECYCLED.lock().unwrap_or_else(|p| p.into_inner());
        // At most twice the size: the budget pays for the whole buffer (`Budgeted::bytes`).
        let fits = |b: &Vec<u8>| (bytes..=bytes.saturating_mul(2)).contains(&(b.capacity() as u64));
        if let Some(i) = idle.iter().position(fits) {
            return Ok(idle.swap_remove(i));
        }
    }
    vec_with_capacity(bytes, offset, what)
}

/// An empty vector with room for `bytes`, or an error instead of the allocation failure (which
/// would abort the process).
pub fn vec_with_capacity(bytes: u64, offset: u64, what: &'static str) -> crate::Result<Vec<u8>> {
    let mut v = Vec::new();
    let n = usize::try_from(bytes).map_err(|_| crate::Error::OutOfMemory { offset, what, needed: bytes })?;
    v.try_reserve_exact(n).map_err(|_| crate::Error::OutOfMemory { offset, what, needed: bytes })?;
    Ok(v)
}

/// `bytes` of `what` at `offset`, reserved and allocated: the buffer to fill, with what pays
/// for it (see [`Budgeted::bytes`]).
pub fn buffer(bytes: u64, offset: u64, what: &'static str) -> crate::Result<(Vec<u8>, Reservation)> {
    let r = reserve(bytes, offset, what)?;
    Ok((vec_with_capacity(bytes, offset, what)?, r))
}

/// A size that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SizeError {
    /// No number where the size starts.
    #[error("{text:?} is not a size (e.g. 512MiB, 2GB, 4096)")]
    NotASize {
        /// The text given.
        text: String,
    },
    /// A unit this parser does not know.
    #[error("unknown unit {unit:?} in {text:?} (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")]
    UnknownUnit {
        /// The text given.
        text: String,
        /// The unit part of it.
        unit: String,
    },
    /// More bytes than a `u64` holds.
    #[error("{text:?} is not a usable size")]
    OutOfRange {
        /// The text given.
        text: String,
    },
}

/// A size with an optional unit, as rbag's command line takes sizes: `512MiB`, `2GB`, `4096`.
/// `KiB`, `MiB`, `GiB`, `TiB` are powers of 1024; `K`/`KB`, `M`/`MB`, `G`/`GB`, `T`/`TB`
/// powers of 1000.
pub fn parse_bytes(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| SizeError::NotASize { text: text.into() })?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kib" => 1024.0,
        "mib" => 1024f64.powi(2),
        "gib" => 1024f64.powi(3),
        "tib" => 1024f64.powi(4),
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        other => return Err(SizeError::UnknownUnit { text: text.into(), unit: other.into() }),
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(SizeError::OutOfRange { text: text.into() });
    }
    Ok(bytes as u64)
}

/// `bytes` in powers of 1024 with one decimal: `1.5 GiB` with `iec` units, else as rosbag
/// prints sizes (`1.5 GB`).
pub fn format_bytes(bytes: u64, iec: bool) -> String {
    let units = if iec { ["B", "KiB", "MiB", "GiB", "TiB"] } else { ["B", "KB", "MB", "GB", "TB"] };
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[unit])
    }
}

/// `bytes` in MiB for messages: `512 MiB`, `1.5 MiB`.
pub fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_bytes("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("1G").unwrap(), 1_000_000_000);
        assert_eq!(parse_bytes(" 4096 ").unwrap(), 4096);
        assert_eq!(parse_bytes("1.5KiB").unwrap(), 1536);
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("12 parsecs").is_err());
        assert_eq!(parse_bytes("0").unwrap(), 0);
        assert_eq!(
            parse_bytes("12 parsecs"),
            Err(SizeError::UnknownUnit { text: "12 parsecs".into(), unit: "parsecs".into() })
        );
        assert_eq!(parse_bytes("lots"), Err(SizeError::NotASize { text: "lots".into() }));
        assert_eq!(mib(512 << 20), "512 MiB");
        assert_eq!(mib(3 << 19), "1.5 MiB");
    }

    #[test]
    fn dropped_buffers_are_reused_and_paid_for_whole() {
        let base = used();
        let (mut v, r) = buffer(1 << 20, 0, "chunk").unwrap();
        v.resize(1 << 20, 7);
        let at = v.as_ptr();
        drop(Budgeted::bytes(v, r));
        assert_eq!(used(), base);
        // The next buffer that size is the same memory, empty.
        let again = reused_vec(1 << 20, 0, "chunk").unwrap();
        assert!(again.as_ptr() == at && again.is_empty());
        // Handed out with a smaller reservation, the buffer is paid for whole.
        let bytes = Budgeted::bytes(again, try_reserve(1000).unwrap());
        assert_eq!(used(), base + (1 << 20));
        drop(bytes);
        assert_eq!(used(), base);
        // Small buffers are not kept (they would take the places of chunk-sized ones).
        drop(Budgeted::bytes(vec![0; 16], try_reserve(16).unwrap()));
        assert!(reused_vec(8, 0, "chunk").unwrap().capacity() < RECYCLED_MIN);
    }

    #[test]
    fn reservations_return_their_bytes() {
        let before = used();
        let mut r = try_reserve(1000).unwrap();
        assert_eq!(used(), before + 1000);
        r.shrink_to(10);
        assert_eq!(used(), before + 10);
        drop(r);
        assert_eq!(used(), before);
        assert!(try_reserve(u64::MAX).is_none());
        let b = Budgeted::bytes(vec![7u8; 100], try_reserve(100).unwrap());
        let s = b.slice(10..20);
        drop(b);
        assert!(used() >= before + 100, "a slice keeps the buffer paid for");
        drop(s);
        assert_eq!(used(), before);
    }
}
