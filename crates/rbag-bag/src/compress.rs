//! compress (being written).
