//! Writing a bag with `O_DIRECT`, as rosbag_direct_write does: the page cache never holds the
//! recording, so a fast camera neither evicts everything else nor stalls on write-back.
//!
//! [`DirectFile`] collects bytes in an aligned buffer and writes whole blocks (a multiple of
//! 4 KiB, or of the device's direct-I/O alignment where that is larger) at increasing offsets.
//! A partial block stays in memory until more bytes complete it, so the writers pad what they
//! must survive a crash (a closed chunk) to a block boundary; see `ros1::writer` and
//! `mcap::writer`. At close the last block goes out zero-padded and the file is truncated to
//! its real length; a seek back (the ROS 1 bag header) rewrites the blocks it touches.
//!
//! A filesystem that refuses `O_DIRECT` at open (`EINVAL`) gets buffered writing and a
//! warning under [`DirectIo::On`], and an error under [`DirectIo::Require`].

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::{DirectIo, Error, Result};

/// Bytes collected before a write: a multiple of every alignment the kernel asks for.
const BUFFER: usize = 1 << 20;
/// The smallest write unit, whatever the device says.
pub const MIN_ALIGN: u64 = 4096;

/// Where a file being written goes: through the page cache, or around it.
pub struct Sink(Inner);

enum Inner {
    Buffered(std::io::BufWriter<crate::writeback::WritebackFile>),
    Direct(DirectFile),
}

impl Sink {
    /// Creates `path` (which must not exist) for `mode`. `Off` writes through the page cache;
    /// `On` falls back to it, with a warning, where the filesystem refuses `O_DIRECT`.
    pub fn create_new(path: &Path, mode: DirectIo) -> Result<Sink> {
        if mode != DirectIo::Off {
            match DirectFile::create_new(path) {
                Ok(f) => return Ok(Sink(Inner::Direct(f))),
                Err(Error::DirectIoRefused { path, reason }) if mode == DirectIo::On => {
                    crate::notice::warn(&format!(
                        "{}: the filesystem refuses direct I/O ({reason}); writing through the page cache",
                        path.display()
                    ));
                }
                Err(e) => return Err(e),
            }
        }
        let file = create_new_file(path, 0)?;
        Ok(Sink(Inner::Buffered(std::io::BufWriter::with_capacity(
            1 << 20,
            crate::writeback::WritebackFile::new(file),
        ))))
    }

    /// The write alignment writers pad closed chunks to: 1 when writing through the cache.
    pub fn align(&self) -> u64 {
        match &self.0 {
            Inner::Buffered(_) => 1,
            Inner::Direct(d) => d.align as u64,
        }
    }

    /// Writes what is left and trims the padding; the file stays open. Direct I/O also
    /// syncs it (its size is metadata); buffered files are handed to the OS only.
    pub fn close(&mut self) -> std::io::Result<()> {
        match &mut self.0 {
            Inner::Buffered(b) => b.flush(),
            Inner::Direct(d) => d.close(),
        }
    }

    /// Closes the file and syncs it to disk.
    pub fn finish(self) -> std::io::Result<()> {
        match self.0 {
            Inner::Buffered(b) => b.into_inner().map_err(|e| e.into_error())?.into_inner().sync_all(),
            Inner::Direct(mut d) => d.close(),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.0 {
            Inner::Buffered(b) => b.write(buf),
            Inner::Direct(d) => d.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match &mut self.0 {
            Inner::Buffered(b) => b.write_all(buf),
            Inner::Direct(d) => d.write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.0 {
            Inner::Buffered(b) => b.flush(),
            Inner::Direct(d) => d.flush(),
        }
    }
}

impl Seek for Sink {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        match &mut self.0 {
            Inner::Buffered(b) => b.seek(to),
            Inner::Direct(d) => d.seek(to),
        }
    }
}

fn create_new_file(path: &Path, flags: i32) -> Result<File> {
    File::options().write(true).read(true).create_new(true).custom_flags(flags).open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Error::OutputExists { path: path.into() },
        _ => Error::io(path, e),
    })
}

/// A block-aligned heap buffer, as `O_DIRECT` needs for the memory it writes from.
struct Aligned {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: `Aligned` owns its allocation exclusively, like a `Box<[u8]>`.
unsafe impl Send for Aligned {}

impl Aligned {
    fn new(len: usize, align: usize) -> Aligned {
        let layout = Layout::from_size_align(len, align).expect("power-of-two alignment below isize::MAX");
        // SAFETY: `layout` has a non-zero size (callers pass at least one block).
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Aligned { ptr, layout }
    }

    fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `layout.size()` initialised (zeroed) bytes we own.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// A file opened with `O_DIRECT`, written in aligned blocks at increasing offsets.
pub struct DirectFile {
    file: File,
    path: PathBuf,
    align: usize,
    buf: Aligned,
    /// Bytes collected in `buf`, which starts at file offset `flushed`.
    len: usize,
    /// Bytes on disk (a multiple of `align`).
    flushed: u64,
    /// Where the next write goes: the end, or an earlier offset after a seek back.
    cursor: u64,
}

impl DirectFile {
    /// Creates `path` with `O_DIRECT`. A filesystem that refuses it gives
    /// [`Error::DirectIoRefused`].
    pub fn create_new(path: &Path) -> Result<DirectFile> {
        let refused = |reason: String| Error::DirectIoRefused { path: path.into(), reason };
        if injected_refusal() {
            return Err(refused("EINVAL at open, injected by RBAG_TEST_DIRECT_IO_EINVAL".into()));
        }
        let file = match create_new_file(path, libc::O_DIRECT) {
            Err(Error::Io { source, .. }) if source.raw_os_error() == Some(libc::EINVAL) => {
                return Err(refused("EINVAL at open".into()))
            }
            other => other?,
        };
        let unusable = match dio_alignment(&file) {
            Some(0) => Err("statx reports no direct I/O support".to_string()),
            Some(a) => Ok((a as u64).max(MIN_ALIGN)),
            None => Ok(MIN_ALIGN),
        }
        .and_then(|a| match a.is_power_of_two() && a <= BUFFER as u64 {
            true => Ok(a),
            false => Err(format!("unusable direct I/O alignment of {a} bytes")),
        });
        let align = match unusable {
            Ok(a) => a,
            Err(reason) => {
                // The file is ours (created just now, exclusively): the fallback creates it anew.
                drop(file);
                let _ = std::fs::remove_file(path);
                return Err(refused(reason));
            }
        };
        let align = align as usize;
        Ok(DirectFile {
            file,
            path: path.into(),
            align,
            buf: Aligned::new(BUFFER, align),
            len: 0,
            flushed: 0,
            cursor: 0,
        })
    }

    /// The write unit in bytes.
    pub fn align(&self) -> usize {
        self.align
    }

    fn end(&self) -> u64 {
        self.flushed + self.len as u64
    }

    /// Writes the whole blocks collected so far; a partial block stays in memory.
    fn write_blocks(&mut self) -> std::io::Result<()> {
        let whole = self.len / self.align * self.align;
        if whole == 0 {
            return Ok(());
        }
        self.file.write_all_at(&self.buf.as_slice()[..whole], self.flushed)?;
        self.flushed += whole as u64;
        let rest = self.len - whole;
        self.buf.as_mut_slice().copy_within(whole..self.len, 0);
        self.len = rest;
        Ok(())
    }

    fn append(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            let room = BUFFER - self.len;
            let n = room.min(bytes.len());
            self.buf.as_mut_slice()[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
            if self.len == BUFFER {
                self.write_blocks()?;
            }
        }
        self.cursor = self.end();
        Ok(())
    }

    /// Overwrites bytes at `at` (before the end): in memory where they are still buffered, by
    /// reading, patching and rewriting the aligned blocks where they are on disk.
    fn patch(&mut self, at: u64, bytes: &[u8]) -> std::io::Result<()> {
        let end = at + bytes.len() as u64;
        if end > self.end() {
            return Err(std::io::Error::other("a patch past the end of a direct-I/O file"));
        }
        // The part still in the buffer.
        if end > self.flushed {
            let from = at.max(self.flushed);
            let src = &bytes[(from - at) as usize..];
            let off = (from - self.flushed) as usize;
            self.buf.as_mut_slice()[off..off + src.len()].copy_from_slice(src);
        }
        // The part on disk.
        if at < self.flushed {
            let a = self.align as u64;
            let (start, stop) = (at / a * a, end.min(self.flushed).div_ceil(a) * a);
            let mut blocks = Aligned::new((stop - start) as usize, self.align);
            self.file.read_exact_at(blocks.as_mut_slice(), start)?;
            let n = (end.min(self.flushed) - at) as usize;
            let off = (at - start) as usize;
            blocks.as_mut_slice()[off..off + n].copy_from_slice(&bytes[..n]);
            self.file.write_all_at(blocks.as_slice(), start)?;
        }
        Ok(())
    }

    /// Writes the last block zero-padded, trims the file to its length and syncs it. Later
    /// writes go on from the end as if nothing happened (and are padded again at the next
    /// close).
    pub fn close(&mut self) -> std::io::Result<()> {
        let end = self.end();
        self.write_blocks()?;
        if self.len > 0 {
            let padded = self.len.div_ceil(self.align) * self.align;
            self.buf.as_mut_slice()[self.len..padded].fill(0);
            self.file.write_all_at(&self.buf.as_slice()[..padded], self.flushed)?;
        }
        self.file.set_len(end)?;
        self.file.sync_all()
    }
}

impl Write for DirectFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if self.cursor == self.end() {
            return self.append(buf);
        }
        let inside = ((self.end() - self.cursor) as usize).min(buf.len());
        self.patch(self.cursor, &buf[..inside])?;
        self.cursor += inside as u64;
        if inside < buf.len() {
            self.append(&buf[inside..])?;
        }
        Ok(())
    }

    /// Writes the whole blocks collected; what a writer padded to a block boundary is then on
    /// disk.
    fn flush(&mut self) -> std::io::Result<()> {
        self.write_blocks()
    }
}

impl Seek for DirectFile {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.end().checked_add_signed(d),
            SeekFrom::Current(d) => self.cursor.checked_add_signed(d),
        };
        match target {
            Some(t) if t <= self.end() => {
                self.cursor = t;
                Ok(t)
            }
            _ => Err(std::io::Error::other(format!(
                "{}: a direct-I/O file cannot seek past its end",
                self.path.display()
            ))),
        }
    }
}

/// The file's direct-I/O offset alignment from `statx` (Linux 6.1+); `None` when the kernel
/// does not say, `Some(0)` when the file does not support direct I/O.
fn dio_alignment(file: &File) -> Option<u32> {
    // SAFETY: an all-zero `statx` is a valid value of this plain C struct.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let empty = c"";
    // SAFETY: `st` outlives the call and `empty` is a valid C string; AT_EMPTY_PATH makes the
    // call look at `file`'s descriptor only.
    let rc =
        unsafe { libc::statx(file.as_raw_fd(), empty.as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_DIOALIGN, &mut st) };
    if rc != 0 || st.stx_mask & libc::STATX_DIOALIGN == 0 {
        return None;
    }
    Some(st.stx_dio_offset_align.max(st.stx_dio_mem_align))
}

/// Bytes of padding that end a file at `pos` on a multiple of `align`, taking one more block
/// where the gap is shorter than `min` (the smallest padding the format can express).
pub(crate) fn padding(pos: u64, align: u64, min: u64) -> u64 {
    let pad = (align - pos % align) % align;
    if pad > 0 && pad < min {
        pad + align
    } else {
        pad
    }
}

/// Test seam: debug builds pretend the filesystem refuses `O_DIRECT` when
/// `RBAG_TEST_DIRECT_IO_EINVAL` is set (tmpfs and ext4 both accept it on current kernels).
fn injected_refusal() -> bool {
    cfg!(debug_assertions) && std::env::var_os("RBAG_TEST_DIRECT_IO_EINVAL").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(dir: &Path) -> DirectFile {
        DirectFile::create_new(&dir.join("f")).unwrap()
    }

    #[test]
    fn writes_patches_and_trims_to_the_exact_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = direct(dir.path());
        let mut want = Vec::new();
        for i in 0..3000u32 {
            let chunk: Vec<u8> = (0..(i % 997) as usize).map(|j| (i as usize + j) as u8).collect();
            f.write_all(&chunk).unwrap();
            want.extend_from_slice(&chunk);
            if i % 500 == 0 {
                f.flush().unwrap();
            }
        }
        // A patch spanning flushed blocks, then one in the buffer, then back to the end.
        f.seek(SeekFrom::Start(13)).unwrap();
        f.write_all(&[7u8; 9000]).unwrap();
        want[13..9013].fill(7);
        let tail = want.len() as u64 - 10;
        f.seek(SeekFrom::Start(tail)).unwrap();
        f.write_all(b"0123456789abc").unwrap();
        want.truncate(tail as usize);
        want.extend_from_slice(b"0123456789abc");
        assert_eq!(f.stream_position().unwrap(), want.len() as u64);
        f.close().unwrap();
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), want);
    }

    #[test]
    fn seeking_past_the_end_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = direct(dir.path());
        f.write_all(b"abc").unwrap();
        assert!(f.seek(SeekFrom::Start(4)).is_err());
        assert_eq!(f.seek(SeekFrom::End(0)).unwrap(), 3);
    }

    #[test]
    fn an_existing_file_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"keep").unwrap();
        assert!(matches!(DirectFile::create_new(&dir.path().join("f")), Err(Error::OutputExists { .. })));
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"keep");
    }
}
