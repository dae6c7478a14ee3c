//! Rebuilding the index of a bag that lost it (a recorder killed mid-recording).
//!
//! The input is scanned record by record. Intact chunks are copied byte for byte; a torn chunk
//! keeps every complete message and is written anew. The output goes to a temporary file
//! beside the target and is renamed into place only when complete, so a failure never touches
//! the input.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::BufWriter;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::compression;
use super::record::Limits;
use super::scan;
use super::writer::Ros1Writer;
use crate::{Compression, Error, ReindexReport, Result, WriteOptions};

/// Where `reindex` writes when no output is given: `X.bag.active` → `X.bag`; `X.bag` is
/// repaired in place with the original kept as `X.orig.bag` (as `rosbag reindex` does).
pub fn default_output(input: &Path) -> (PathBuf, Option<PathBuf>) {
    let name = input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(stem) = name.strip_suffix(".active") {
        return (input.with_file_name(stem), None);
    }
    let stem = name.strip_suffix(".bag").unwrap_or(&name);
    (input.to_path_buf(), Some(input.with_file_name(format!("{stem}.orig.bag"))))
}

/// Reindexes `input` into `output` (see [`default_output`] for the default). When `output` is
/// the input itself, the original is first renamed to `backup`.
pub fn reindex(input: &Path, output: &Path, backup: Option<&Path>) -> Result<ReindexReport> {
    reindex_with_limits(input, output, backup, Limits::default())
}

/// [`reindex`] with explicit bounds on what the input may make it allocate (fuzzing uses
/// small ones).
pub fn reindex_with_limits(input: &Path, output: &Path, backup: Option<&Path>, limits: Limits) -> Result<ReindexReport> {
    let file = File::open(input).map_err(|e| Error::io(input, e))?;
    let len = file.metadata().map_err(|e| Error::io(input, e))?.len();
    let scan = scan::scan(&file, input, len, &limits)?;

    let dir = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = tempfile_in(dir, output)?;
    let result = write_reindexed(&file, input, &tmp, &scan);
    let (kept, dropped_unknown, chunks) = match result {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if let Some(backup) = backup {
        std::fs::rename(input, backup).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io(backup, e)
        })?;
    }
    std::fs::rename(&tmp, output).map_err(|e| Error::io(output, e))?;
    Ok(ReindexReport {
        output: output.to_path_buf(),
        messages_kept: kept,
        chunks_written: chunks,
        bytes_dropped: scan.torn_bytes,
        messages_dropped: scan.torn_messages + dropped_unknown,
        repairs: Vec::new(),
    })
}

/// A fresh temporary path beside `target`.
fn tempfile_in(dir: &Path, target: &Path) -> Result<PathBuf> {
    let base = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "bag".into());
    for i in 0..1000 {
        let p = dir.join(format!(".{base}.{}.{i}.tmp", std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&p, e)),
        }
    }
    Err(Error::Invalid(format!("no free temporary name in {}", dir.display())))
}

/// Writes the scanned chunks to `tmp`. Returns (messages kept, messages of unknown
/// connections dropped, chunks written).
fn write_reindexed(file: &File, input: &Path, tmp: &Path, scan: &scan::Scan) -> Result<(u64, u64, u64)> {
    let out = File::create(tmp).map_err(|e| Error::io(tmp, e))?;
    let mut w = Ros1Writer::new(BufWriter::with_capacity(1 << 20, out), tmp, WriteOptions::default())?;
    for conn in scan.connections.values() {
        w.add_connection_with_id(conn)?;
    }
    let known: BTreeSet<u32> = scan.connections.keys().copied().collect();
    let (mut kept, mut unknown, mut chunks) = (0u64, 0u64, 0u64);
    for meta in &scan.chunks {
        let Some(loc) = &meta.located else { continue };
        let entries: Vec<_> = loc.entries.iter().copied().filter(|e| known.contains(&e.conn)).collect();
        unknown += (loc.entries.len() - entries.len()) as u64;
        if entries.is_empty() {
            continue;
        }
        let mut raw = vec![0u8; loc.data_len as usize];
        file.read_exact_at(&mut raw, loc.data_offset).map_err(|e| Error::io(input, e))?;
        if loc.salvaged {
            // Keep the complete records of a torn compressed chunk, recompressed whole.
            let mut data = compression::salvage(loc.compression, &raw, loc.size);
            data.truncate(loc.size as usize);
            let packed = compression::compress(loc.compression, &data)?;
            w.write_chunk(loc.compression, data.len() as u64, &packed, &entries)?;
        } else {
            let size = if loc.compression == Compression::None { raw.len() as u64 } else { loc.size };
            w.write_chunk(loc.compression, size, &raw, &entries)?;
        }
        for e in &entries {
            w.mark_written(e.conn);
        }
        kept += entries.len() as u64;
        chunks += 1;
    }
    w.close()?;
    Ok((kept, unknown, chunks))
}
