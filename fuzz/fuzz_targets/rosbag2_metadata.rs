//! metadata.yaml text and QoS strings: parse, and re-emit what parsed in every version.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rbag_storage::rosbag2::{metadata::BagMetadata, qos};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(mut m) = BagMetadata::parse(text, Path::new("fuzz/metadata.yaml")) {
        for v in 1..=9 {
            m.version = v;
            let again = m.to_yaml(true);
            // What rbag writes, rbag reads back.
            BagMetadata::parse(&again, Path::new("again.yaml")).expect("rbag reads its own metadata.yaml");
        }
    }
    if let Ok(p) = qos::parse(text) {
        let _ = qos::to_text(&p, 8);
        let _ = qos::to_text(&p, 9);
    }
});
