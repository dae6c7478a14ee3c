//! How a verb ends: the two results that are not failures, and the failure that is the
//! user's command line (exit 2). `main` maps them to exit codes.

/// A mistake in the command line found after parsing (exit 2, as clap's own errors).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// How a verb finished when it did not fail.
pub enum Outcome {
    Ok,
    /// The job finished but dropped data; the verb has said how much.
    Dropped,
}
