//! Attachments and metadata records of a bag, one at a time: what `rbag attachment` and
//! `rbag metadata` do (after the `mcap` CLI's `add`/`get`), as a library so that Python and C
//! reach it too.
//!
//! Reading works on any bag (storages without attachments have none). Adding rewrites an MCAP
//! file: its bytes are copied untouched up to the end of its data section, the new records
//! follow, and its summary is rewritten; the result is written under a temporary name and
//! renamed over the original only once complete, so an interrupted add never loses it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rbag_storage::output::{check as check_output, Staged};
use rbag_storage::{Attachment, MetadataRecord, OutputPolicy};

use crate::{Bag, Result, StorageError};

/// Fails when `a`'s stored CRC does not match its data, naming the file, the record's offset
/// and the attachment. An attachment stored without a CRC (0) passes.
pub fn check(a: &Attachment) -> Result<()> {
    if a.crc_ok() == Some(false) {
        let err = StorageError::Malformed {
            offset: a.offset,
            what: "MCAP attachment",
            reason: format!(
                "attachment {:?}: CRC mismatch (stored {:#010x}, its data gives {:#010x}): the attachment is damaged",
                a.name,
                a.crc,
                a.computed_crc()
            ),
        };
        return Err(err.in_file(&a.file).into());
    }
    Ok(())
}

/// The attachment named `name` (at record offset `offset`, when several share the name), as
/// `mcap get attachment` picks it.
pub fn find<'a>(bag_path: &Path, list: &'a [Attachment], name: &str, offset: Option<u64>) -> Result<&'a Attachment> {
    let matches: Vec<&Attachment> = list.iter().filter(|a| a.name == name).collect();
    let fail =
        |reason: String| -> crate::Error { StorageError::Invalid(format!("{}: {reason}", bag_path.display())).into() };
    match (matches.as_slice(), offset) {
        ([], _) => {
            let known: Vec<&str> = list.iter().map(|a| a.name.as_str()).collect();
            let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            Err(fail(format!("no attachment named {name:?} (the bag has: {known})")))
        }
        ([one], None) => Ok(one),
        (_, Some(off)) => matches
            .into_iter()
            .find(|a| a.offset == off)
            .ok_or_else(|| fail(format!("no attachment named {name:?} at offset {off}"))),
        (many, None) => {
            let offsets: Vec<String> = many.iter().map(|a| a.offset.to_string()).collect();
            Err(fail(format!(
                "{} attachments are named {name:?} (at offsets {}): give one with --offset",
                many.len(),
                offsets.join(", ")
            )))
        }
    }
}

/// The attachment named `name` (see [`find`]), its CRC checked.
pub fn get(bag: &Bag, name: &str, offset: Option<u64>) -> Result<Attachment> {
    let list = bag.attachments()?;
    let a = find(bag.path(), &list, name, offset)?;
    check(a)?;
    Ok(a.clone())
}

/// The entries of every metadata record named `name`, merged in file order (a later record's
/// key wins), as `mcap get metadata` prints them.
pub fn metadata(bag: &Bag, name: &str) -> Result<BTreeMap<String, String>> {
    let records = bag.metadata()?;
    if !records.iter().any(|m| m.name == name) {
        let known: std::collections::BTreeSet<&str> = records.iter().map(|m| m.name.as_str()).collect();
        let known =
            if known.is_empty() { "none".to_string() } else { known.into_iter().collect::<Vec<_>>().join(", ") };
        return Err(StorageError::Invalid(format!(
            "{}: no metadata record named {name:?} (the bag has: {known})",
            bag.path().display()
        ))
        .into());
    }
    let mut out = BTreeMap::new();
    for m in records.into_iter().filter(|m| m.name == name) {
        out.extend(m.metadata);
    }
    Ok(out)
}

/// An attachment of the file at `path`: its bytes, named `name` (the path as given when
/// `None`), with its modification time as creation time, as `mcap add attachment` makes one.
/// `log_time` and `create_time` override the defaults (now, and the file's modification time).
pub fn from_file(
    path: &Path,
    name: Option<&str>,
    media_type: &str,
    log_time: Option<u64>,
    create_time: Option<u64>,
) -> Result<Attachment> {
    let io = |source| -> crate::Error { StorageError::Io { path: path.into(), source }.into() };
    let data = std::fs::read(path).map_err(io)?;
    let nanos = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    };
    let create_time = match create_time {
        Some(t) => t,
        None => nanos(std::fs::metadata(path).and_then(|m| m.modified()).map_err(io)?),
    };
    Ok(Attachment {
        name: name.map_or_else(|| path.display().to_string(), str::to_string),
        media_type: media_type.into(),
        log_time: log_time.unwrap_or_else(|| nanos(std::time::SystemTime::now())),
        create_time,
        data: data.into(),
        ..Attachment::default()
    })
}

/// The MCAP file of `bag` that additions go to: the file itself, or the first storage file
/// of a rosbag2 directory (rosbag2 keeps its own attachments there too).
pub fn target(bag: &Path) -> Result<PathBuf> {
    let file = if bag.is_dir() {
        let opened = Bag::open(bag)?;
        opened.storage_info()?.files.into_iter().next().unwrap_or_default()
    } else {
        bag.to_path_buf()
    };
    let is_mcap = {
        use std::io::Read;
        let mut head = [0u8; 8];
        std::fs::File::open(&file).and_then(|mut f| f.read_exact(&mut head)).is_ok() && &head == b"\x89MCAP0\r\n"
    };
    if !is_mcap {
        return Err(StorageError::Invalid(format!(
            "{}: attachments and metadata records can be added to MCAP files only (`rbag convert` it to .mcap first)",
            file.display()
        ))
        .into());
    }
    Ok(file)
}

/// Adds `attachments` and `metadata` to the MCAP file of `bag` (see [`target`]): written to a
/// temporary beside it and renamed over it once complete. Returns the file changed and the
/// offsets of the new records (attachments first).
pub fn add(bag: &Path, attachments: &[Attachment], metadata: &[MetadataRecord]) -> Result<(PathBuf, Vec<u64>)> {
    let file = target(bag)?;
    let checked = check_output(&file, &OutputPolicy { inputs: Vec::new(), replace: true })?;
    let staged = Staged::new(checked)?;
    let offsets = rbag_storage::mcap::amend(&file, staged.temp(), attachments, metadata)?;
    staged.commit()?;
    Ok((file, offsets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_picks_by_name_then_offset() {
        let a = |name: &str, offset| Attachment { name: name.into(), offset, ..Attachment::default() };
        let list = [a("x", 10), a("y", 20), a("y", 30)];
        let p = Path::new("b.mcap");
        assert_eq!(find(p, &list, "x", None).unwrap().offset, 10);
        assert_eq!(find(p, &list, "y", Some(30)).unwrap().offset, 30);
        let many = find(p, &list, "y", None).unwrap_err().to_string();
        assert!(many.contains("offsets 20, 30"), "{many}");
        let none = find(p, &list, "z", None).unwrap_err().to_string();
        assert!(none.contains("no attachment named \"z\"") && none.contains("x, y, y"), "{none}");
        assert!(find(p, &list, "x", Some(11)).is_err());
    }

    #[test]
    fn a_damaged_attachment_is_named() {
        let mut a = Attachment { name: "calib".into(), data: b"abc".to_vec().into(), offset: 77, ..Default::default() };
        a.file = "x.mcap".into();
        a.crc = a.computed_crc();
        assert!(check(&a).is_ok());
        a.crc ^= 1;
        let e = check(&a).unwrap_err().to_string();
        assert!(e.contains("x.mcap") && e.contains("offset 77") && e.contains("\"calib\"") && e.contains("CRC"), "{e}");
        a.crc = 0;
        assert!(check(&a).is_ok());
    }
}
