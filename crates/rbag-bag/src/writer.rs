//! Writing a bag of any storage, from raw message bytes or from decoded values.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rbag_msg::{Dialect, Encoding, Schema, Value};
use rbag_storage::{Connection, Format, IntoBackend, OutputPolicy, StorageWriter, WriteOptions};

use crate::decode::{compile, encoding_of, TypeSources};
use crate::{Error, Result};

/// A connection's type, compiled on its first decoded value.
type Compiled = (Arc<Schema>, Encoding);

/// A bag being written. It is written under a hidden temporary name and appears under its own
/// name only when [`Writer::finish`] succeeds; a writer dropped unfinished leaves nothing.
///
/// ```no_run
/// use rbag_bag::{Connection, Format, Writer, WriteOptions};
/// let mut w = Writer::create("out.mcap", Format::Mcap, &WriteOptions::default())?;
/// let conn = Connection {
///     topic: "/chatter".into(),
///     message_type: "std_msgs/msg/String".into(),
///     encoding: "cdr".into(),
///     definition: "string data".into(),
///     definition_encoding: "ros2msg".into(),
///     ..Connection::default()
/// };
/// let id = w.add_connection(&conn)?;
/// // A CDR string message "hi": encapsulation header, length 3, bytes, NUL.
/// w.write(id, 1_000, 1_000, b"\x00\x01\x00\x00\x03\x00\x00\x00hi\x00")?;
/// w.finish()?;
/// # Ok::<(), rbag_bag::Error>(())
/// ```
pub struct Writer {
    inner: Box<dyn StorageWriter>,
    types: TypeSources,
    /// The dialect the storage writes by default: what connections added by type name get.
    dialect: Dialect,
    /// Per connection id, the connection and (once compiled) its schema for `write_value`.
    connections: HashMap<u32, (Connection, Option<Compiled>)>,
    buf: Vec<u8>,
}

impl Writer {
    /// Creates a bag at `path` in `format`; an existing output is an error.
    pub fn create(path: impl AsRef<Path>, format: Format, options: &WriteOptions) -> Result<Writer> {
        Writer::create_with(path, format, options, &OutputPolicy::default())
    }

    /// Creates a bag at `path` with any registered storage (a [`Format`], a backend's name, or
    /// the backend from [`crate::storage_for`]), refusing outputs that `policy` forbids (one of
    /// its inputs, or an existing output it may not replace).
    pub fn create_with(
        path: impl AsRef<Path>,
        storage: impl IntoBackend,
        options: &WriteOptions,
        policy: &OutputPolicy,
    ) -> Result<Writer> {
        let backend = storage.into_backend()?;
        let dialect = match backend.capabilities().encodings.first() {
            Some(&"ros1") => Dialect::Ros1,
            _ => Dialect::Ros2,
        };
        let inner = rbag_storage::create_with(path.as_ref(), backend, options, policy)?;
        Ok(Writer {
            inner,
            types: crate::types::bundled(crate::types::Distro::Humble),
            dialect,
            connections: HashMap::new(),
            buf: Vec::new(),
        })
    }

    /// Where [`write_value`](Self::write_value) finds the types a connection's own definition
    /// lacks (the bundled humble and noetic types by default).
    pub fn set_types(&mut self, types: TypeSources) {
        self.types = types;
    }

    /// The types [`write_value`](Self::write_value) and
    /// [`add_connection_for`](Self::add_connection_for) fall back on.
    pub fn types(&self) -> &TypeSources {
        &self.types
    }

    /// The message dialect the storage writes by default: ROS 1 for a storage of `ros1`
    /// messages (a `.bag`), ROS 2 (`cdr`) otherwise.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Registers a connection for `topic` carrying `type_name` in the storage's
    /// [`dialect`](Self::dialect), its definition and hash taken from the
    /// [`types`](Self::types): how a program writes a bag by type name alone.
    pub fn add_connection_for(&mut self, topic: &str, type_name: &str) -> Result<u32> {
        let conn = crate::types::connection_for(topic, type_name, self.dialect, &self.types)?;
        self.add_connection(&conn)
    }

    /// Registers a connection and returns the id to write its messages with.
    pub fn add_connection(&mut self, conn: &Connection) -> Result<u32> {
        let id = self.inner.add_connection(conn)?;
        self.connections.insert(id, (conn.clone(), None));
        Ok(id)
    }

    /// Appends one message's serialized bytes.
    pub fn write(&mut self, conn: u32, log_time: u64, publish_time: u64, data: &[u8]) -> Result<()> {
        Ok(self.inner.write(conn, log_time, publish_time, data)?)
    }

    /// The compiled type of connection `conn`, from its definition and then the type sources:
    /// what a binding needs to build a [`Value`] for [`write_value`](Self::write_value).
    pub fn schema(&mut self, conn: u32) -> Result<Arc<Schema>> {
        Ok(self.compiled(conn)?.0.clone())
    }

    fn compiled(&mut self, conn: u32) -> Result<&Compiled> {
        let (c, compiled) =
            self.connections.get_mut(&conn).ok_or(rbag_storage::Error::UnknownConnection { id: conn })?;
        Ok(match compiled {
            Some(done) => &*done,
            None => {
                let (_, encoding) = encoding_of(c)?;
                let (_, schema) = compile(c, &self.types)?;
                compiled.insert((Arc::new(schema), encoding))
            }
        })
    }

    /// Encodes a decoded message with its connection's type and encoding, and appends it.
    pub fn write_value(&mut self, conn: u32, log_time: u64, publish_time: u64, value: &Value) -> Result<()> {
        let (schema, encoding) = self.compiled(conn)?.clone();
        self.buf.clear();
        rbag_msg::encode(&schema, value, encoding, false, &mut self.buf).map_err(|source| {
            let topic = self.connections.get(&conn).map(|(c, _)| c.topic.clone()).unwrap_or_default();
            Error::from(crate::decode::DecodeError::Codec { topic, log_time, source })
        })?;
        Ok(self.inner.write(conn, log_time, publish_time, &self.buf)?)
    }

    /// Hands everything written so far to the OS, so that a crash loses none of it.
    pub fn checkpoint(&mut self) -> Result<()> {
        Ok(self.inner.checkpoint()?)
    }

    /// Writes the index, closes the bag and moves it into place.
    pub fn finish(self) -> Result<()> {
        Ok(self.inner.finish()?)
    }
}
