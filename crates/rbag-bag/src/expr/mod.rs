//! The filter expression language (being written).
