//! Definition text as bags carry it: split the concatenated form, parse every part in both
//! dialects, and compute the ROS 1 MD5 of the root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_msg::{concatenated, parse, Dialect, Registry};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = parse(text, Dialect::Ros2, "fuzz/Type");
    let mut reg = Registry::new(rbag_msg::Dialect::Ros1);
    if reg.add_concatenated("fuzz/Type", text).is_ok() {
        let _ = reg.md5("fuzz/Type");
    }
    if let Ok(parts) = concatenated::split("fuzz/Type", text) {
        assert!(!parts.is_empty());
    }
});
