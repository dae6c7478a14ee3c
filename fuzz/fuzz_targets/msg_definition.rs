//! Definition text as bags carry it: split the concatenated form, parse every part in both
//! dialects, and compute the ROS 1 MD5 of the root. Whatever parses is compiled
//! (`Schema::compile`) in its dialect, its CSV columns listed, and the input itself decoded
//! with it (ROS 1 and CDR) and, if that succeeds, rendered.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_msg::{concatenated, parse, render, Dialect, Encoding, Registry, Schema};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = parse(text, Dialect::Ros2, "fuzz/Type");
    let mut reg = Registry::new(rbag_msg::Dialect::Ros1);
    if reg.add_concatenated("fuzz/Type", text).is_ok() {
        let _ = reg.md5("fuzz/Type");
        compile_and_decode(&reg, data);
    }
    let mut reg2 = Registry::new(Dialect::Ros2);
    if reg2.add_concatenated("fuzz/Type", text).is_ok() {
        compile_and_decode(&reg2, data);
    }
    if let Ok(parts) = concatenated::split("fuzz/Type", text) {
        assert!(!parts.is_empty());
    }
});

fn compile_and_decode(reg: &Registry, data: &[u8]) {
    let Ok(schema) = Schema::compile(reg, "fuzz/Type") else { return };
    let csv = render::Csv::new(&schema);
    for encoding in [Encoding::Ros1, Encoding::Cdr] {
        if let Ok(v) = rbag_msg::decode(&schema, data, encoding) {
            let _ = render::json_message(&schema, &v, &mut std::io::sink());
            let _ = render::yaml_message(&schema, &v, Some(4), &mut std::io::sink());
            if let Ok(csv) = &csv {
                let _ = csv.cells(&schema, &v);
            }
            let mut out = Vec::new();
            assert!(rbag_msg::encode(&schema, &v, encoding, false, &mut out).is_ok(), "decoded value does not encode");
        }
    }
}
