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
use crate::output::{self, Staged};
use crate::{budget, Compression, Error, ReindexReport, Result, WriteOptions};

/// Where `reindex` writes when no output is given: `X.bag.active` → `X.bag`; `X.bag` is
/// repaired in place with the original kept as `X.orig.bag` (as `rosbag reindex` does).
pub fn default_output(input: &Path) -> (PathBuf, Option<PathBuf>) {
    use std::os::unix::ffi::OsStrExt;
    // Bytes, not UTF-8: a name that is not valid UTF-8 keeps its exact bytes.
    let name = input.file_name().map(|n| n.as_bytes()).unwrap_or_default();
    if let Some(stem) = name.strip_suffix(b".active") {
        return (input.with_file_name(std::ffi::OsStr::from_bytes(stem)), None);
    }
    (input.to_path_buf(), Some(output::backup_path(input)))
}

/// Reindexes `input` into `output` (see [`default_output`] for the default). When `output` is
/// the input itself, the original is first renamed to `backup`, which must not exist (see
/// [`crate::output::backup_path`]). Otherwise `output` is checked against the input and, when
/// it exists, replaced only with `replace` and only if it is a bag.
pub fn reindex(input: &Path, output: &Path, backup: Option<&Path>, replace: bool) -> Result<ReindexReport> {
    reindex_with_limits(input, output, backup, replace, Limits::default())
}

/// [`reindex`] with explicit bounds on what the input may make it allocate (fuzzing uses
/// small ones).
pub fn reindex_with_limits(
    input: &Path,
    output: &Path,
    backup: Option<&Path>,
    replace: bool,
    limits: Limits,
) -> Result<ReindexReport> {
    let file = File::open(input).map_err(|e| Error::io(input, e))?;
    let len = file.metadata().map_err(|e| Error::io(input, e))?.len();
    let scan = scan::scan(&file, input, len, &limits)?;

    let staged = Staged::for_repair(input, output, backup, replace)?;
    // A failure from here on drops `staged`, which removes the temporary; the input is
    // untouched until the repaired bag is complete.
    let (kept, dropped_unknown, chunks) = write_reindexed(&file, input, staged.temp(), &scan)?;
    staged.commit_repair(input, backup)?;
    Ok(ReindexReport {
        output: output.to_path_buf(),
        messages_kept: kept,
        chunks_written: chunks,
        bytes_dropped: scan.torn_bytes,
        messages_dropped: scan.torn_messages + dropped_unknown,
        repairs: Vec::new(),
        lost: Vec::new(),
    })
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
        // A chunk is copied whole: paid for from the memory budget (an error, not an abort, past it).
        let (mut raw, _paid) = budget::buffer(loc.data_len, loc.data_offset, "chunk data")?;
        raw.resize(loc.data_len as usize, 0);
        file.read_exact_at(&mut raw, loc.data_offset).map_err(|e| Error::io(input, e))?;
        if loc.salvaged {
            // Keep the complete records of a torn compressed chunk, recompressed whole.
            let reservation = budget::reserve(loc.size, meta.pos, "torn chunk")?;
            let data = compression::decompress(loc.compression, &raw, loc.size, meta.pos, reservation, true)?;
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
