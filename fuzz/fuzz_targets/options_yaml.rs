//! rosbag2's input- and output-options YAML (`rbag convert --input-options/--output-options`):
//! the input as a file, through `options_yaml::read_outputs`, `read_inputs` and
//! `is_output_options`.
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
});
