//! Why playback stopped early.

/// An error that ends a playback run.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// The options are not playable (a rate of 0, a duration of 0).
    #[error("invalid playback options: {0}")]
    Options(String),
    /// Reading a bag failed.
    #[error(transparent)]
    Storage(#[from] rbag_storage::Error),
    /// A message referred to a connection its bag does not list.
    #[error("bag {bag} has a message on unknown connection {connection}")]
    UnknownConnection {
        /// Index of the bag among those played.
        bag: usize,
        /// The bag's own connection id.
        connection: u32,
    },
    /// The sink could not publish; the middleware's own error is the source.
    #[error("publishing failed: {0}")]
    Sink(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// An I/O error outside storage.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl PlayError {
    /// A sink error from anything printable (a middleware error, a message).
    pub fn sink(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        PlayError::Sink(e.into())
    }
}
