//! Writes a sample bag with rbag's own writers: real std_msgs/geometry_msgs messages with their
//! definitions, so any ROS tool can read it. `OUT.bag` gets ROS 1 messages (with MD5 sums);
//! anything else gets CDR messages in a rosbag2 bag: `.db3` or `.mcap` a single file, otherwise
//! a directory in the storage `-s` names (mcap by default).
//!
//! usage: write_sample OUT [SECONDS] [-s sqlite3|mcap]

use std::path::PathBuf;

use rbag_storage::Format;

const START: u64 = 1_700_000_000_000_000_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: write_sample OUT [SECONDS] [-s sqlite3|mcap]";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().ok_or(usage)?);
    let seconds: u64 = args.get(1).filter(|a| !a.starts_with('-')).map_or(Ok(10), |s| s.parse())?;
    let storage = args.iter().position(|a| a == "-s").and_then(|i| args.get(i + 1)).map(String::as_str);
    let ext = out.extension().and_then(|e| e.to_str());
    let format = match (ext, storage) {
        (Some("bag"), _) => Format::Ros1,
        (Some("db3"), _) | (_, Some("sqlite3")) => Format::Sqlite3,
        (_, None | Some("mcap")) => Format::Mcap,
        _ => return Err(usage.into()),
    };
    let mut w = rbag_storage::create(&out, format, &Default::default())?;
    let n = if format == Format::Ros1 {
        rbag_testkit::sample::write(w.as_mut(), START, seconds * 1_000_000_000)?.len()
    } else {
        rbag_testkit::sample::cdr::write(w.as_mut(), START, seconds * 1_000_000_000)?.len()
    };
    w.finish()?;
    eprintln!("wrote {n} messages to {}", out.display());
    Ok(())
}
