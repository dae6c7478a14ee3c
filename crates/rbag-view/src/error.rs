use std::path::PathBuf;

/// What went wrong, and where: the topic, field or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Bag(#[from] rbag_bag::Error),
    /// A field path that selects something other than numbers.
    #[error("{field}: not a number but {found}")]
    NotNumeric { field: String, found: String },
    /// A field path that does not fit the topic's type.
    #[error("{field}: {reason}")]
    Path { field: String, reason: String },
    /// An image message that cannot be turned into pixels.
    #[error("{topic} at {log_time} ns: {reason}")]
    Image { topic: String, log_time: u64, reason: String },
    /// A topic that holds no images.
    #[error("{topic}: type {type_name} is not sensor_msgs/Image or CompressedImage")]
    NotImage { topic: String, type_name: String },
    /// An external program (ffmpeg) failed or is missing.
    #[error("{tool}: {reason}")]
    Tool { tool: &'static str, reason: String },
    /// Drawing failed (the backend's own error).
    #[error("drawing the chart: {0}")]
    Draw(String),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
