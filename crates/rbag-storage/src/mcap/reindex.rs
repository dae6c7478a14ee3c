//! `rbag reindex X.mcap`: an MCAP file its writer never finished (no summary, no footer, a
//! torn last chunk) rewritten whole from the complete messages it holds, as ROS 1 bags are;
//! a complete file is left as it is.

use std::collections::BTreeMap;
use std::path::Path;

use crate::output::Staged;
use crate::{Error, ReindexReport, Result, StorageReader, StorageWriter};

use super::{McapReader, McapWriter};

/// Rewrites `input` into `output` with an index and summary (see
/// [`crate::ros1::default_output`] for the default names): when `output` is the input
/// itself, the original is first renamed to `backup`. The input is never modified when this
/// fails.
pub fn reindex(input: &Path, output: &Path, backup: Option<&Path>, replace: bool) -> Result<ReindexReport> {
    let reader = McapReader::open(input)?;
    let damage = reader.warnings();
    if damage.is_empty() && output == input {
        let messages_kept = reader.info()?.connections.values().map(|c| c.message_count).sum();
        return Ok(ReindexReport {
            output: output.to_path_buf(),
            messages_kept,
            repairs: vec![format!("{}: complete (summary and index intact); left unchanged", input.display())],
            ..ReindexReport::default()
        });
    }
    let staged = Staged::for_repair(input, output, backup, replace)?;
    let mut writer = McapWriter::create(staged.temp(), &crate::WriteOptions::default())?;
    let mut ids = BTreeMap::new();
    for c in reader.connections() {
        ids.insert(c.id, writer.add_connection(c)?);
    }
    for a in reader.attachments().unwrap_or_default() {
        writer.add_attachment(&a)?;
    }
    // The writer writes its own `rosbag2` record; the input's describes the input.
    for m in reader.metadata().unwrap_or_default().into_iter().filter(|m| m.name != "rosbag2") {
        writer.add_metadata(&m)?;
    }
    let mut kept = 0u64;
    for m in reader.messages(&crate::Filter::default())? {
        let m = m?;
        let id = *ids.get(&m.connection).ok_or(Error::UnknownConnection { id: m.connection })?;
        writer.write(id, m.log_time, m.publish_time, &m.data)?;
        kept += 1;
    }
    let lost = reader.lost();
    drop(reader);
    Box::new(writer).finish()?;
    staged.commit_repair(input, backup)?;
    Ok(ReindexReport {
        output: output.to_path_buf(),
        messages_kept: kept,
        repairs: damage.iter().map(|d| format!("{}: {d}", input.display())).collect(),
        lost: lost.iter().map(|l| format!("{}: {l}", input.display())).collect(),
        ..ReindexReport::default()
    })
}
