//! Structural checks of bag files (being written).
