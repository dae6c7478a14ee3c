//! A whole MCAP file through rbag's reader: summary or scan, info, periods, every message, nth.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_storage::{Filter, StorageReader};

#[path = "common.rs"]
mod common;
use common::dir;

const MAGIC: &[u8] = b"\x89MCAP0\r\n";

fuzz_target!(|data: &[u8]| {
    let input = dir().join("input.mcap");
    let mut bytes = Vec::with_capacity(MAGIC.len() + data.len());
    if !data.starts_with(MAGIC) {
        bytes.extend_from_slice(MAGIC);
    }
    bytes.extend_from_slice(data);
    std::fs::write(&input, &bytes).expect("write fuzz input");
    if let Ok(reader) = rbag_storage::mcap::McapReader::open(&input) {
        let _ = reader.info();
        let _ = reader.median_periods();
        let _ = reader.bag_metadata();
        if let Ok(iter) = reader.messages(&Filter::default()) {
            for msg in iter {
                if msg.is_err() {
                    break;
                }
            }
        }
        let window = Filter { start: Some(1), end: Some(u64::MAX / 2), ..Filter::default() };
        if let Ok(iter) = reader.messages(&window) {
            let _ = iter.take(100).count();
        }
        if let Some(topic) = reader.connections().first().map(|c| c.topic.clone()) {
            let _ = reader.nth(&topic, 1);
        }
    }
});
