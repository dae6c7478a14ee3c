//! Floors for the raw-read benchmark (bench/ros1.sh): how fast can *any* reader touch every byte
//! of the file, with the same checksum as `bench_read` (wrapping sum of little-endian u64 words)?
//!
//! ```text
//! cargo run --release -p rbag-storage --example bench_floor -- FILE read|mmap
//! ```
//!
//! - `read`: pread(2) into one reused 1 MiB buffer, checksum each block (`cat` + the checksum).
//! - `mmap`: map the whole file read-only and checksum it in place (no copy at all).
//!
//! Prints `bytes=B sum=HEX elapsed=SECONDS`. The sums differ from `bench_read`'s: the floors
//! checksum the whole file (records, headers, index), not just message payloads.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::time::Instant;

// Linux mmap(2) through the C library std already links (the crate has no libc dependency).
mod sys {
    use std::ffi::c_void;
    pub const PROT_READ: i32 = 1;
    pub const MAP_PRIVATE: i32 = 2;
    pub const MADV_SEQUENTIAL: i32 = 2;
    pub const MAP_FAILED: *mut c_void = !0usize as *mut c_void;
    extern "C" {
        pub fn mmap(addr: *mut c_void, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut c_void;
        pub fn munmap(addr: *mut c_void, len: usize) -> i32;
        pub fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32;
    }
}

#[inline(never)]
fn checksum(data: &[u8]) -> u64 {
    let words = data.chunks_exact(8);
    let tail = words.remainder();
    let mut sum = words.fold(0u64, |s, w| s.wrapping_add(u64::from_le_bytes(w.try_into().unwrap())));
    for &b in tail {
        sum = sum.wrapping_add(b as u64);
    }
    sum
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_floor: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, mode] = <[String; 2]>::try_from(args).map_err(|_| "usage: bench_floor FILE read|mmap")?;
    let start = Instant::now();
    let file = File::open(&path)?;
    let len = file.metadata()?.len();
    let mut sum = 0u64;
    match mode.as_str() {
        "read" => {
            let mut buf = vec![0u8; 1 << 20];
            let mut off = 0u64;
            while off < len {
                let n = file.read_at(&mut buf, off)?;
                if n == 0 {
                    break;
                }
                sum = sum.wrapping_add(checksum(&buf[..n]));
                off += n as u64;
            }
        }
        "mmap" => {
            if len > 0 {
                // SAFETY: a read-only private mapping of a file nobody truncates while we read it.
                let p = unsafe {
                    sys::mmap(std::ptr::null_mut(), len as usize, sys::PROT_READ, sys::MAP_PRIVATE, file.as_raw_fd(), 0)
                };
                if p == sys::MAP_FAILED {
                    return Err(std::io::Error::last_os_error().into());
                }
                unsafe { sys::madvise(p, len as usize, sys::MADV_SEQUENTIAL) };
                // SAFETY: the mapping is `len` readable bytes until munmap below.
                let data = unsafe { std::slice::from_raw_parts(p as *const u8, len as usize) };
                sum = checksum(data);
                unsafe { sys::munmap(p, len as usize) };
            }
        }
        other => return Err(format!("unknown mode {other:?} (read, mmap)").into()),
    }
    println!("bytes={len} sum={sum:016x} elapsed={:.6}", start.elapsed().as_secs_f64());
    Ok(())
}
