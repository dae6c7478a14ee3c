//! `--direct-io`: writing ROS 1 and MCAP files around the page cache (rosbag_direct_write's
//! `O_DIRECT`), shared by `record`, `convert` and `filter`.

use rbag_bag::DirectIo;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct DirectIoArgs {
    /// Write ROS 1 and MCAP files with O_DIRECT in aligned blocks, as rosbag_direct_write does:
    /// the recording does not fill the page cache. Closed chunks are padded to a block
    /// boundary. Where the filesystem refuses it, rbag warns and writes buffered;
    /// `--direct-io=require` makes that an error.
    #[arg(long, value_name = "require", num_args = 0..=1, require_equals = true, default_missing_value = "on",
          value_parser = ["on", "require"])]
    direct_io: Option<String>,
}

impl DirectIoArgs {
    pub fn mode(&self) -> DirectIo {
        match self.direct_io.as_deref() {
            None => DirectIo::Off,
            Some("require") => DirectIo::Require,
            Some(_) => DirectIo::On,
        }
    }
}
