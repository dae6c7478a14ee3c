//! A file that starts writing its pages to disk while the writer is still producing them.
//!
//! A bag writer that leaves everything to the page cache pays for the whole file at the final
//! fsync; asking the kernel to write back each finished window (`sync_file_range`) overlaps
//! that disk time with producing the rest, and waiting on the window before it bounds the
//! dirty pages a large recording holds.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;

/// Bytes per write-back window.
const WINDOW: u64 = 16 << 20;

pub struct WritebackFile {
    file: File,
    pos: u64,
    /// End of the last window handed to the kernel.
    started: u64,
}

impl WritebackFile {
    pub fn new(file: File) -> Self {
        WritebackFile { file, pos: 0, started: 0 }
    }

    pub fn into_inner(self) -> File {
        self.file
    }

    fn start_writeback(&mut self) {
        while self.pos >= self.started + WINDOW {
            let (from, len) = (self.started, WINDOW);
            // Write back the previous window synchronously (usually already done), start this
            // one. Errors here are advisory only: the final fsync reports real ones.
            #[cfg(target_os = "linux")]
            // SAFETY: plain syscalls on an fd this struct owns; no memory is passed.
            unsafe {
                let fd = self.file.as_raw_fd();
                if from >= WINDOW {
                    libc::sync_file_range(
                        fd,
                        (from - WINDOW) as i64,
                        WINDOW as i64,
                        libc::SYNC_FILE_RANGE_WAIT_BEFORE
                            | libc::SYNC_FILE_RANGE_WRITE
                            | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                    );
                }
                libc::sync_file_range(fd, from as i64, len as i64, libc::SYNC_FILE_RANGE_WRITE);
            }
            self.started += WINDOW;
        }
    }
}

impl Write for WritebackFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.pos += n as u64;
        self.start_writeback();
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Seek for WritebackFile {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = self.file.seek(to)?;
        Ok(self.pos)
    }
}
