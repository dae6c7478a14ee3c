//! The message layer, growing (issue 4): ROS message definitions parsed from `.msg` text, and
//! ROS 1 MD5 sums computed exactly as genmsg does. Codecs, RIHS01 hashes and the bundled type
//! store come next.

pub mod codec;
pub mod concatenated;
pub mod definition;
pub mod dialect;
pub mod md5;
pub mod migrate;
pub mod registry;
pub mod render;
pub mod schema;
pub mod value;
// Hashes and IDL / .srv / .action (one helper):
pub mod idl;
pub mod interface;
pub mod rihs01;
// The bundled store and --msg-path (another helper):
pub mod msg_path;
pub mod store;
pub mod stream;
#[doc(hidden)]
pub mod testgen;

pub use codec::{decode, decode_counted, encode, CodecError, Encoding};
pub use definition::{parse, Array, Constant, Dialect, Field, FieldType, MsgDef};
pub use registry::Registry;
pub use schema::Schema;
pub use value::Value;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A definition that cannot be parsed or resolved, naming the type (or file) and line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{what}, line {line}: {reason}")]
    Parse { what: String, line: usize, reason: String },

    #[error("unknown message type {name}{}", context.as_ref().map(|c| format!(" (needed by {c})")).unwrap_or_default())]
    UnknownType { name: String, context: Option<String> },

    #[error("message type {name} contains itself")]
    Recursive { name: String },
}
