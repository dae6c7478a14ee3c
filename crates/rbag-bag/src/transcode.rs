//! What `convert` does with each connection: copy its bytes, or rewrite every message into the
//! other encoding (ROS 1 ⇄ CDR) or into a newer definition of its type (migration). Rewriting
//! decodes with the source schema, applies a [`Plan`] and encodes with the target schema.

use std::collections::BTreeMap;
use std::sync::Arc;

use rbag_msg::migrate::{Plan, Rules};
use rbag_msg::{dialect, Dialect, Encoding, Registry, Schema};
use rbag_storage::ros1::keys;
use rbag_storage::rosbag2::qos::{self, QosProfile};
use rbag_storage::rosbag2::{QOS_KEY, TYPE_HASH_KEY};
use rbag_storage::Connection;

use crate::decode::{wire, DecodeError, Decoders, TypeSources};

/// Where a rewritten connection's types come from.
#[derive(Debug, Clone, Default)]
pub struct Targets {
    /// Standard definitions per output dialect (the bundled store): used when the dialect
    /// changes, so that converted types are the ones ROS ships.
    pub standard: TypeSources,
    /// Newer definitions to migrate to (`--migrate DIR`), per dialect; they win over the above.
    pub migrate: TypeSources,
    /// Renames for migrations.
    pub rules: Rules,
}

impl Targets {
    /// Whether any connection may be migrated (so each needs its first message checked).
    pub fn migrates(&self) -> bool {
        !self.migrate.get(Dialect::Ros1).is_empty() || !self.migrate.get(Dialect::Ros2).is_empty()
    }
}

/// A connection's messages, rewritten.
pub struct Rewrite {
    /// The output connection: the type's name, definition and hash in the target dialect.
    pub target: Connection,
    source: Connection,
    source_schema: Arc<Schema>,
    source_encoding: Encoding,
    /// Whether [`rbag_msg::stream`] can do it in one pass (else decode → apply → encode).
    streamable: bool,
    target_schema: Schema,
    target_encoding: Encoding,
    plan: Plan,
}

/// What to do with one input connection.
pub enum ConnectionPlan {
    /// Bytes copied as they are.
    Copy,
    /// Each message rewritten into another encoding or definition.
    Rewrite(Box<Rewrite>),
    /// Left out, with the reason (a ROS 2 service event has no ROS 1 type).
    Skip(String),
}

/// Decides how to carry `c` into an output whose messages are `out_encoding`. `first` is the
/// connection's first message, which settles which definition fits its bytes.
pub fn plan(
    c: &Connection,
    out_encoding: &str,
    first: Option<&[u8]>,
    decoders: &mut Decoders,
    targets: &Targets,
) -> Result<ConnectionPlan, DecodeError> {
    let unconvertible = |reason: String| DecodeError::Unconvertible { topic: c.topic.clone(), reason };
    let (to, target_encoding) =
        wire(out_encoding).ok_or_else(|| unconvertible(format!("cannot write {out_encoding:?} messages")))?;
    let Some((from, _)) = wire(&c.encoding) else {
        return if c.encoding == out_encoding {
            Ok(ConnectionPlan::Copy)
        } else {
            Err(unconvertible(format!("cannot convert {:?} messages", c.encoding)))
        };
    };
    let target_name = rbag_msg::registry::normalize(&c.message_type, to);
    let migrating = targets.migrate.get(to).contains(&target_name);
    if from == to && !migrating {
        return Ok(ConnectionPlan::Copy);
    }
    if to == Dialect::Ros1 && !dialect::has_ros1_name(&target_name) {
        return Ok(ConnectionPlan::Skip(format!("{} has no ROS 1 counterpart", c.message_type)));
    }
    let err = |e: Arc<DecodeError>| DecodeError::Shared(e.to_string());
    if let Some(data) = first {
        decoders.decode(c, 0, data)?;
    }
    let (source_schema, source_encoding) = decoders.schema(c).map_err(err)?;
    let source_reg = decoders.registry(c).map_err(err)?;
    let mut standard = targets.migrate.get(to).clone();
    if from != to {
        standard.fill_from(targets.standard.get(to));
    }
    let (target_reg, target_schema) = dialect::target(&source_schema, &source_reg, &standard, to)
        .map_err(|e| unconvertible(format!("no {to:?} definition: {e}")))?;
    let mut rules = targets.rules.clone();
    if from != to {
        rules.dialect_casts = true;
        rules.merge(&Rules::between_dialects());
    }
    let plan = Plan::new(&source_schema, &target_schema, &rules).map_err(|e| unconvertible(e.to_string()))?;
    let target = target_connection(c, to, &target_reg, &target_schema)?;
    Ok(ConnectionPlan::Rewrite(Box::new(Rewrite {
        target,
        source: c.clone(),
        source_schema,
        source_encoding,
        streamable: plan.streamable(),
        target_schema,
        target_encoding,
        plan,
    })))
}

impl Rewrite {
    /// Rewrites one message into `out` (cleared first), in one pass where the plan allows.
    pub fn apply(
        &self,
        decoders: &mut Decoders,
        log_time: u64,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        if !self.streamable {
            return self.apply_tree(decoders, log_time, data, out);
        }
        out.clear();
        rbag_msg::stream::transcode(
            &self.plan,
            &self.source_schema,
            self.source_encoding,
            &self.target_schema,
            self.target_encoding,
            data,
            out,
        )
        .map_err(|source| self.codec_error(log_time, source))
    }

    fn codec_error(&self, log_time: u64, source: rbag_msg::CodecError) -> DecodeError {
        DecodeError::Codec { topic: self.source.topic.clone(), log_time, source }
    }

    /// Whether [`apply`](Self::apply) transcodes in one pass.
    pub fn is_streamable(&self) -> bool {
        self.streamable
    }

    /// Rewrites one message by decoding it to a tree, applying the plan and encoding the result.
    pub fn apply_tree(
        &self,
        decoders: &mut Decoders,
        log_time: u64,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let (_, value) = decoders.decode(&self.source, log_time, data)?;
        let value = self.plan.apply(value).map_err(|source| DecodeError::Migrate {
            topic: self.source.topic.clone(),
            log_time,
            source,
        })?;
        out.clear();
        rbag_msg::encode(&self.target_schema, &value, self.target_encoding, false, out)
            .map_err(|source| self.codec_error(log_time, source))
    }
}

/// A new connection for `topic` carrying `type_name` in `dialect` (ROS 1: `ros1` with its MD5
/// sum; ROS 2: `cdr` with its RIHS01 hash), its full definition taken from `sources`: how a
/// program writes a bag by type name alone.
pub fn connection_for(
    topic: &str,
    type_name: &str,
    dialect: Dialect,
    sources: &TypeSources,
) -> Result<Connection, DecodeError> {
    let reg = sources.get(dialect);
    let schema = Schema::compile(reg, type_name).map_err(|source| DecodeError::Definition {
        topic: topic.into(),
        ty: type_name.into(),
        source,
    })?;
    target_connection(&Connection { topic: topic.into(), ..Connection::default() }, dialect, reg, &schema)
}

/// The output connection: the type's name, definition and hash in the target dialect, and the
/// latching/QoS information carried across.
fn target_connection(c: &Connection, to: Dialect, reg: &Registry, schema: &Schema) -> Result<Connection, DecodeError> {
    let name = schema.name().to_string();
    let definition = dialect::concatenated(schema, reg, &|_| None);
    let latched = c.metadata.get(keys::LATCHING).is_some_and(|l| l == "1")
        || c.metadata.get(QOS_KEY).is_some_and(|q| qos::parse(q).is_ok_and(|ps| ps.iter().any(|p| p.durability == 1)));
    let mut metadata = BTreeMap::new();
    let (encoding, definition_encoding) = match to {
        Dialect::Ros1 => {
            metadata.insert(
                keys::MD5SUM.to_string(),
                reg.md5(&name)
                    .map_err(|e| DecodeError::Unconvertible { topic: c.topic.clone(), reason: e.to_string() })?,
            );
            if let Some(caller) = c.metadata.get(keys::CALLERID) {
                metadata.insert(keys::CALLERID.into(), caller.clone());
            }
            if latched {
                metadata.insert(keys::LATCHING.into(), "1".into());
            }
            ("ros1", "ros1msg")
        }
        Dialect::Ros2 => {
            if let Ok(hash) = reg.rihs01(&name) {
                metadata.insert(TYPE_HASH_KEY.to_string(), hash);
            }
            let qos = match c.metadata.get(QOS_KEY) {
                Some(q) if !q.trim().is_empty() => q.clone(),
                _ if latched => qos::to_text(&[latched_qos()], 9),
                _ => String::new(),
            };
            if !qos.is_empty() {
                metadata.insert(QOS_KEY.to_string(), qos);
            }
            ("cdr", "ros2msg")
        }
    };
    Ok(Connection {
        id: c.id,
        topic: c.topic.clone(),
        message_type: name,
        encoding: encoding.into(),
        definition,
        definition_encoding: definition_encoding.into(),
        metadata,
    })
}

/// What a latched ROS 1 publisher becomes in ROS 2 (as rosbags-convert writes it): reliable,
/// transient local, other policies left at their "infinite" values.
fn latched_qos() -> QosProfile {
    let infinite = qos::Duration { sec: 2_147_483_647, nsec: 4_294_967_295 };
    QosProfile {
        history: 3,
        depth: 0,
        reliability: 1,
        durability: 1,
        deadline: infinite,
        lifespan: infinite,
        liveliness: 1,
        liveliness_lease_duration: infinite,
        avoid_ros_namespace_conventions: false,
    }
}
