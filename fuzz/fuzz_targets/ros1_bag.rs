//! A whole bag file: open (index or scan), info, median periods, every message, nth, and reindex.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::dir;
use rbag_storage::ros1::{reindex, Ros1Reader, MAGIC};
use rbag_storage::{Filter, StorageReader};

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
    let _ = reindex(&input, &output, None, false);
    let _ = std::fs::remove_file(&output);
});
