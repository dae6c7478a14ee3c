//! rosbag2's input- and output-options YAML (`rbag convert --input-options/--output-options`):
//! the input as a file, through `options_yaml::read_outputs`, `read_inputs` and
//! `is_output_options`; and the other YAML files `ros2 bag record` takes: `--storage-config-file`
//! (SQLite3 pragmas, MCAP writer options) and `--static-topics-path`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_bag::options_yaml::{is_output_options, read_inputs, read_outputs};

#[path = "common.rs"]
mod common;
use common::dir;

fuzz_target!(|data: &[u8]| {
    let input = dir().join("options.yaml");
    std::fs::write(&input, data).expect("write fuzz input");
    match read_outputs(&input) {
        Ok(outputs) => {
            for o in &outputs {
                assert!(!o.uri.as_os_str().is_empty(), "an output has a uri");
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    match read_inputs(&input) {
        Ok(inputs) => {
            let _ = format!("{inputs:?}");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let _ = is_output_options(&input);
    let Ok(text) = std::str::from_utf8(data) else { return };
    for format in [rbag_storage::Format::Mcap, rbag_storage::Format::Sqlite3] {
        if let Err(e) = rbag_storage::storage_config::StorageConfig::parse(text, &input, format) {
            assert!(e.to_string().contains("options.yaml"), "an error names the file: {e}");
        }
    }
    if let Ok(topics) = rbag_ros2::record::parse_static_topics(text) {
        assert!(topics.iter().all(|(t, ty)| !t.is_empty() && !ty.is_empty()), "{topics:?}");
    }
});
