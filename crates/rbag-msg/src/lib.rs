//! The message layer: ROS message definitions and the codecs that read and write messages by
//! them, with no dependency on storage or transports (a definition is text that a bag or a
//! connection carries; this crate parses it).
//!
//! - Definitions: `.msg` text ([`definition`]), `.srv`/`.action` ([`interface`]), `ros2idl`
//!   ([`idl`]), the concatenated text bags carry ([`concatenated`]); a [`Registry`] per dialect
//!   resolves nested names, and a [`Schema`] is one type compiled for the codecs.
//! - Hashes: ROS 1 MD5 sums ([`md5`]) and ROS 2 RIHS01 ([`rihs01`]).
//! - Types that are not in a bag: the bundled [`store`] (ROS 1 noetic, ROS 2 humble to kilted)
//!   and directories of interface files ([`msg_path`]).
//! - Codecs: ROS 1 serialization and CDR ([`codec`]). A reused [`Decoder`] decodes into a flat
//!   representation with no allocation per message, read through [`MessageRef`] and
//!   [`ValueRef`] ([`view`]); [`Value`] is an owned tree built from it ([`decode`]). Both render
//!   as JSON, YAML and CSV ([`render`]) and encode again ([`MessageRef::encode`], [`encode`]).
//! - Conversion: between versions of a type ([`migrate`]), between dialects ([`dialect`]), and
//!   in one pass without decoding ([`stream`]).
//!
//! ```
//! use rbag_msg::{store, Decoder, Encoding, Schema};
//!
//! // A sensor_msgs/Imu in CDR, as a ROS 2 bag stores it (header, frame "imu", the rest zero).
//! let mut bytes = vec![0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, b'i', b'm', b'u', 0];
//! bytes.resize(bytes.len() + (4 + 9 + 3 + 9 + 3 + 9) * 8, 0);
//! let schema = Schema::compile(store::registry(store::Distro::Humble), "sensor_msgs/msg/Imu").unwrap();
//! let mut decoder = Decoder::new();
//! let imu = decoder.decode(&schema, &bytes, Encoding::Cdr).unwrap();
//! assert_eq!(imu.path("header.frame_id").unwrap().and_then(|v| v.as_str()), Some("imu"));
//! assert_eq!(imu.path("orientation_covariance[8]").unwrap().and_then(|v| v.as_f64()), Some(0.0));
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod codec;
pub mod concatenated;
pub mod definition;
pub mod dialect;
pub mod idl;
pub mod interface;
pub mod md5;
pub mod migrate;
pub mod msg_path;
pub mod registry;
pub mod render;
pub mod rihs01;
pub mod schema;
pub mod store;
pub mod stream;
#[cfg(feature = "testgen")]
pub mod testgen;
pub mod value;
pub mod view;

pub use codec::{decode, decode_counted, encode, CodecError, Encoding};
pub use definition::{parse, Array, Constant, Dialect, Field, FieldType, MsgDef};
pub use registry::Registry;
pub use render::{CsvError, PathError};
pub use schema::Schema;
pub use value::Value;
pub use view::{ArrayRef, Decoder, MessageRef, Prims, ValueRef};

/// This crate's result, with [`Error`] unless another error is named.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A definition that cannot be parsed or resolved, naming the type (or file) and line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Text that is not a valid definition.
    #[error("{what}, line {line}: {reason}")]
    Parse {
        /// The type or file being parsed.
        what: String,
        /// The 1-based line.
        line: usize,
        /// What is wrong there.
        reason: String,
    },

    /// A type no registry has.
    #[error("unknown message type {name}{}", context.as_ref().map(|c| format!(" (needed by {c})")).unwrap_or_default())]
    UnknownType {
        /// The full type name.
        name: String,
        /// Which field of which type needs it, if it is nested.
        context: Option<String>,
    },

    /// A type that contains itself, which no message can hold.
    #[error("message type {name} contains itself")]
    Recursive {
        /// The type.
        name: String,
    },
}
