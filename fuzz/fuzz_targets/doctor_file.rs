//! `rbag doctor --decode` on the input as a ROS 1 bag and as an MCAP file (the magic is
//! prefixed unless present; an input that starts with one magic is only tried as that format):
//! every structural check, every definition and hash check, every payload decoded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_bag::doctor::{check, DoctorOptions};

#[path = "common.rs"]
mod common;
use common::dir;

const ROS1_MAGIC: &[u8] = b"#ROSBAG V2.0\n";
const MCAP_MAGIC: &[u8] = b"\x89MCAP0\r\n";

fn doctor(name: &str, magic: &[u8], data: &[u8]) {
    let input = dir().join(name);
    let mut bytes = Vec::with_capacity(magic.len() + data.len());
    if !data.starts_with(magic) {
        bytes.extend_from_slice(magic);
    }
    bytes.extend_from_slice(data);
    std::fs::write(&input, &bytes).expect("write fuzz input");
    let options = DoctorOptions { decode: true, ..DoctorOptions::default() };
    match check(&input, &options) {
        Ok(report) => {
            for f in &report.findings {
                let _ = f.to_string();
            }
            let _ = report.worst();
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mcap = data.starts_with(MCAP_MAGIC);
    let ros1 = data.starts_with(ROS1_MAGIC);
    if !mcap {
        doctor("input.bag", ROS1_MAGIC, data);
    }
    if !ros1 {
        doctor("input.mcap", MCAP_MAGIC, data);
    }
});
