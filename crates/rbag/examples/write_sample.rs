//! Writes a sample ROS 1 bag with rbag's own writer: real std_msgs/geometry_msgs messages with
//! their definitions and MD5 sums, so any ROS tool can read it.
//!
//! usage: write_sample OUT.bag [SECONDS]

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let out = PathBuf::from(args.next().ok_or("usage: write_sample OUT.bag [SECONDS]")?);
    let seconds: u64 = match args.next() {
        Some(s) => s.to_string_lossy().parse()?,
        None => 10,
    };
    let mut w = rbag_storage::create(&out, rbag_storage::Format::Ros1, &Default::default())?;
    let msgs = rbag_testkit::sample::write(w.as_mut(), 1_700_000_000_000_000_000, seconds * 1_000_000_000)?;
    w.finish()?;
    eprintln!("wrote {} messages to {}", msgs.len(), out.display());
    Ok(())
}
