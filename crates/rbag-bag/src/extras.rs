//! extras (being written).
