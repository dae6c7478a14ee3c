//! A whole bag file: open (index or scan), info, median periods, every message, nth, and reindex.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rbag_storage::ros1::{reindex, Ros1Reader, MAGIC};
use rbag_storage::{Filter, StorageReader};

/// One directory per fuzzing process, so parallel jobs never share files. Directories left by
/// processes that are gone (every `-fork` job is one) are removed first.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("rbag-fuzz-").and_then(|p| p.parse::<u32>().ok()) {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let d = tmp.join(format!("rbag-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("create fuzz temp dir");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = dir();
    let input = dir.join("input.bag");
    let output = dir.join("reindexed.bag");
    let mut bytes = Vec::with_capacity(MAGIC.len() + data.len());
    if !data.starts_with(MAGIC) {
        bytes.extend_from_slice(MAGIC);
    }
    bytes.extend_from_slice(data);
    std::fs::write(&input, &bytes).expect("write fuzz input");

    if let Ok(reader) = Ros1Reader::open(&input) {
        let _ = reader.info();
        let _ = reader.median_periods();
        if let Ok(iter) = reader.messages(&Filter::default()) {
            for msg in iter {
                if msg.is_err() {
                    break;
                }
            }
        }
        if let Some(topic) = reader.connections().first().map(|c| c.topic.clone()) {
            let _ = reader.nth(&topic, 0);
            let _ = reader.nth(&topic, 1);
        }
    }

    let _ = std::fs::remove_file(&output);
    let _ = reindex(&input, &output, None);
    let _ = std::fs::remove_file(&output);
});
