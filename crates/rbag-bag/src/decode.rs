//! Decoding a bag's messages: each connection's type is compiled once, from the definition the
//! bag carries, with types it lacks taken from the caller's type sources (directories of `.msg` files, the
//! bundled store).

use std::collections::HashMap;
use std::sync::Arc;

use rbag_msg::Decoder;
use rbag_storage::Connection;

// The decoded-message shapes and renderers, named here so programs need only this crate.
pub use rbag_msg::render;
pub use rbag_msg::schema::{FieldLayout, Kind, MsgLayout, Prim, EMPTY_STRUCT_FIELD};
pub use rbag_msg::value::PrimArray;
pub use rbag_msg::{
    Array, ArrayRef, CsvError, Dialect, Encoding, MessageRef, PathError, Prims, Registry, Schema, Value, ValueRef,
};

/// A message that cannot be decoded, naming the topic.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Neither the bag nor the type sources define a type the connection needs.
    #[error("topic {topic}: unknown message type {ty}{needed_by}")]
    UnknownType {
        /// The connection's topic.
        topic: String,
        /// The missing type.
        ty: String,
        /// " (needed by T)" when the missing type is nested in another, else empty.
        needed_by: String,
    },
    /// The definition text the bag or a source gives for a type does not parse.
    #[error("topic {topic}: the definition of {ty} is not usable: {source}")]
    Definition {
        /// The connection's topic.
        topic: String,
        /// The type whose definition failed.
        ty: String,
        /// What the parser found.
        source: rbag_msg::Error,
    },
    /// The connection's messages are in an encoding rbag does not decode.
    #[error("topic {topic}: message encoding {encoding:?} is not ros1 or cdr")]
    Encoding {
        /// The connection's topic.
        topic: String,
        /// The storage's encoding name.
        encoding: String,
    },
    /// An error already reported for this connection.
    #[error("{0}")]
    Shared(String),
    /// A message's bytes do not decode, or a value does not encode, with its schema.
    #[error("topic {topic}, message at {log_time} ns: {source}")]
    Codec {
        /// The connection's topic.
        topic: String,
        /// The message's log time.
        log_time: u64,
        /// What the codec found.
        source: rbag_msg::CodecError,
    },
    /// A message could not be migrated to the newer definition.
    #[error("topic {topic}, message at {log_time} ns: {source}")]
    Migrate {
        /// The connection's topic.
        topic: String,
        /// The message's log time.
        log_time: u64,
        /// What the migration found.
        source: rbag_msg::migrate::MigrateError,
    },
    /// No plan carries the connection's type into the output's dialect or definition.
    #[error("topic {topic}: {reason}")]
    Unconvertible {
        /// The connection's topic.
        topic: String,
        /// Why, naming the type, encoding or field at fault.
        reason: String,
    },
}

/// An error [`Decoders`] share between messages of one connection, as a value of its own
/// (an unknown type stays one, so front ends can hint at where types come from).
pub fn unshare(e: &Arc<DecodeError>) -> DecodeError {
    match &**e {
        DecodeError::UnknownType { topic, ty, needed_by } => {
            DecodeError::UnknownType { topic: topic.clone(), ty: ty.clone(), needed_by: needed_by.clone() }
        }
        other => DecodeError::Shared(other.to_string()),
    }
}

/// Types to fall back on, per dialect, in the order they are searched.
#[derive(Debug, Clone)]
pub struct TypeSources {
    ros1: Registry,
    ros2: Registry,
}

impl Default for TypeSources {
    fn default() -> Self {
        Self { ros1: Registry::new(Dialect::Ros1), ros2: Registry::new(Dialect::Ros2) }
    }
}

impl TypeSources {
    /// Sources with nothing but what the caller adds.
    pub fn new(ros1: Registry, ros2: Registry) -> Self {
        Self { ros1, ros2 }
    }

    /// The sources of one dialect.
    pub fn get(&self, dialect: Dialect) -> &Registry {
        match dialect {
            Dialect::Ros1 => &self.ros1,
            Dialect::Ros2 => &self.ros2,
        }
    }
}

/// The dialect and wire format a storage encoding name (`ros1`, `cdr`) stands for.
pub fn wire(encoding: &str) -> Option<(Dialect, Encoding)> {
    match encoding {
        "ros1" => Some((Dialect::Ros1, Encoding::Ros1)),
        "cdr" => Some((Dialect::Ros2, Encoding::Cdr)),
        _ => None,
    }
}

/// The dialect and wire format of a connection's messages.
pub fn encoding_of(c: &Connection) -> Result<(Dialect, Encoding), DecodeError> {
    wire(&c.encoding).ok_or_else(|| DecodeError::Encoding { topic: c.topic.clone(), encoding: c.encoding.clone() })
}

/// The first message of a connection: decoding it settles which definition fits its bytes
/// (see [`Decoders`]), before anything that depends on the schema is written.
pub fn first_message(r: &dyn rbag_storage::StorageReader, c: &Connection) -> rbag_storage::Result<Option<Vec<u8>>> {
    let filter = rbag_storage::Filter { topics: vec![c.topic.clone()], ..Default::default() };
    for m in r.messages(&filter)? {
        let m = m?;
        if m.connection == c.id {
            return Ok(Some(m.data.to_vec()));
        }
    }
    Ok(None)
}

/// The types a connection's own definition text declares.
pub fn bag_registry(c: &Connection, dialect: Dialect) -> Result<Registry, DecodeError> {
    let mut reg = Registry::new(dialect);
    let text = c.definition.trim();
    if text.is_empty() {
        return Ok(reg);
    }
    // rosbag2 stores `ros2msg`, `ros2idl`, or for service events the `.srv` text itself.
    let added = match dialect {
        Dialect::Ros1 => reg.add_concatenated(&c.message_type, &c.definition),
        Dialect::Ros2 => reg.add_ros2_concatenated(&c.message_type, &c.definition),
    };
    added.map_err(|source| DecodeError::Definition { topic: c.topic.clone(), ty: c.message_type.clone(), source })?;
    Ok(reg)
}

/// Compiles the schema of `c`'s type: the bag's definitions first, then `sources`.
pub fn compile(c: &Connection, sources: &TypeSources) -> Result<(Registry, Schema), DecodeError> {
    let (dialect, _) = encoding_of(c)?;
    compile_with(c, bag_registry(c, dialect)?, sources)
}

/// Compiles `c`'s type from `sources` alone, ignoring the bag's definitions.
pub fn compile_from_sources(c: &Connection, sources: &TypeSources) -> Result<(Registry, Schema), DecodeError> {
    let (dialect, _) = encoding_of(c)?;
    compile_with(c, Registry::new(dialect), sources)
}

/// Compiles `c`'s type from `reg`, copying in the types it lacks from `sources`; returns the
/// registry of every type used.
fn compile_with(c: &Connection, mut reg: Registry, sources: &TypeSources) -> Result<(Registry, Schema), DecodeError> {
    let fallback = sources.get(reg.dialect());
    match Schema::compile_filling(&mut reg, &c.message_type, &mut |name| fallback.get(name).cloned()) {
        Ok(s) => Ok((reg, s)),
        Err(rbag_msg::Error::UnknownType { name, context }) => Err(DecodeError::UnknownType {
            topic: c.topic.clone(),
            ty: name,
            needed_by: context.map(|c| format!(" ({c})")).unwrap_or_default(),
        }),
        Err(source) => Err(DecodeError::Definition { topic: c.topic.clone(), ty: c.message_type.clone(), source }),
    }
}

#[derive(Clone)]
struct Entry {
    schema: Arc<Schema>,
    /// The definitions `schema` was compiled from.
    registry: Arc<Registry>,
    encoding: Encoding,
    /// Whether a message has been seen to fit the schema exactly.
    checked: bool,
}

/// Schemas by connection id, compiled on first use (errors are kept too, so a bad topic is
/// reported once).
///
/// The first message of each connection is checked to fill its schema exactly. Some bags carry
/// wrong definitions (rosbag2's own `talker` test bag stores `uint8 level` for
/// `rcl_interfaces/msg/Log`); then the `--msg-path`/store definition is used if it fits, with a
/// warning.
#[derive(Default)]
pub struct Decoders {
    /// Buffers reused by [`Decoders::view`].
    decoder: Decoder,
    sources: TypeSources,
    cache: HashMap<u32, Result<Entry, Arc<DecodeError>>>,
    warnings: Vec<String>,
}

impl Decoders {
    /// Decoders that fall back on `sources` for types a bag lacks.
    pub fn new(sources: TypeSources) -> Self {
        Self { decoder: Decoder::new(), sources, cache: HashMap::new(), warnings: Vec::new() }
    }

    /// Warnings about definitions replaced so far, emptied by the call.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn entry(&mut self, c: &Connection) -> Result<&mut Entry, Arc<DecodeError>> {
        let sources = &self.sources;
        self.cache
            .entry(c.id)
            .or_insert_with(|| {
                let (_, encoding) = encoding_of(c).map_err(Arc::new)?;
                compile(c, sources)
                    .map(|(r, s)| Entry { schema: Arc::new(s), registry: Arc::new(r), encoding, checked: false })
                    .map_err(Arc::new)
            })
            .as_mut()
            .map_err(|e| e.clone())
    }

    /// The compiled type of a connection and the wire format of its messages.
    pub fn schema(&mut self, c: &Connection) -> Result<(Arc<Schema>, Encoding), Arc<DecodeError>> {
        self.entry(c).map(|e| (e.schema.clone(), e.encoding))
    }

    /// The definitions a connection's schema was compiled from.
    pub fn registry(&mut self, c: &Connection) -> Result<Arc<Registry>, Arc<DecodeError>> {
        self.entry(c).map(|e| e.registry.clone())
    }

    /// Decodes one message of connection `c` into a view that borrows these decoders and
    /// `data`: no allocation per message once the first messages have been seen, so this is
    /// the way to read a stream of messages. The first message of a connection settles which
    /// definition fits (see [`Decoders`]).
    pub fn view<'a>(
        &'a mut self,
        c: &Connection,
        log_time: u64,
        data: &'a [u8],
    ) -> Result<MessageRef<'a>, DecodeError> {
        let checked = self.entry(c).map_err(|e| DecodeError::Shared(e.to_string()))?.checked;
        if !checked {
            self.decode(c, log_time, data)?;
        }
        let Decoders { decoder, cache, .. } = self;
        let Some(Ok(entry)) = cache.get(&c.id) else {
            return Err(DecodeError::Shared(format!("topic {}: no schema", c.topic)));
        };
        decoder.decode(&entry.schema, data, entry.encoding).map_err(|source| DecodeError::Codec {
            topic: c.topic.clone(),
            log_time,
            source,
        })
    }

    /// Decodes one message of connection `c`, with the schema it was decoded by.
    pub fn decode<'a>(
        &mut self,
        c: &Connection,
        log_time: u64,
        data: &'a [u8],
    ) -> Result<(Arc<Schema>, rbag_msg::Value<'a>), DecodeError> {
        let entry = self.entry(c).map_err(|e| DecodeError::Shared(e.to_string()))?;
        let (schema, encoding) = (entry.schema.clone(), entry.encoding);
        if entry.checked {
            let v = rbag_msg::decode(&schema, data, encoding).map_err(|source| DecodeError::Codec {
                topic: c.topic.clone(),
                log_time,
                source,
            })?;
            return Ok((schema, v));
        }
        let first = rbag_msg::decode_counted(&schema, data, encoding);
        let fits = matches!(&first, Ok((_, left)) if *left <= rbag_msg::codec::allowed_trailing(encoding));
        if !fits {
            if let Ok((other_reg, other)) = compile_from_sources(c, &self.sources) {
                if let Ok((v, left)) = rbag_msg::decode_counted(&other, data, encoding) {
                    if left <= rbag_msg::codec::allowed_trailing(encoding) {
                        self.warnings.push(format!(
                            "topic {}: the bag's definition of {} does not fit its messages; using the one from the type sources",
                            c.topic, c.message_type
                        ));
                        let other = Arc::new(other);
                        if let Ok(e) = self.entry(c) {
                            e.schema = other.clone();
                            e.registry = Arc::new(other_reg);
                            e.checked = true;
                        }
                        return Ok((other, v));
                    }
                }
            }
        }
        if let Ok(e) = self.entry(c) {
            e.checked = true;
        }
        match first {
            Ok((v, _)) => Ok((schema, v)),
            Err(source) => Err(DecodeError::Codec { topic: c.topic.clone(), log_time, source }),
        }
    }
}
