//! du (being written).
