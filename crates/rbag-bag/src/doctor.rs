//! Checking a bag thoroughly (`rbag doctor`): the structural checks of the storage layer (every
//! record, every CRC, the index against the data, message order, a rosbag2 metadata.yaml against
//! its files), and on top of them, in the same pass over the file, the checks that need message
//! definitions: that each definition parses, that each ROS 1 MD5 sum and ROS 2 RIHS01 type hash
//! matches its definition, and with [`DoctorOptions::decode`] that every payload decodes against
//! its definition with no bytes left over.
//!
//! ```no_run
//! use rbag_bag::doctor::{check, DoctorOptions, Severity};
//! let report = check("in.bag".as_ref(), &DoctorOptions { decode: true, ..Default::default() })?;
//! for f in &report.findings {
//!     println!("{f}");
//! }
//! assert!(report.worst() < Some(Severity::Error));
//! # Ok::<(), rbag_bag::Error>(())
//! ```

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use rbag_msg::{Decoder, Dialect, Encoding, Schema};
use rbag_storage::doctor::{Place, Visitor};
use rbag_storage::Connection;

pub use rbag_storage::doctor::{Checked, Finding, Kind, Report, Severity, MAX_PER_KIND};

use crate::decode::{self, DecodeError, TypeSources};
use crate::Result;

/// What [`check`] does beyond the structural checks.
#[derive(Debug, Clone, Default)]
pub struct DoctorOptions {
    /// Decode every payload against its definition, requiring no bytes left over (CDR's final
    /// padding aside).
    pub decode: bool,
    /// Directories of `.msg` files (`[PKG=]DIR`, as `--msg-path` takes them) for types a bag
    /// does not define; the bundled store is searched after them.
    pub msg_paths: Vec<String>,
}

/// Checks the bag at `path` (a ROS 1 bag, an MCAP or SQLite3 file, or a rosbag2 directory).
/// Damage is reported as findings in the [`Report`]; an error means the bag could not be read at
/// all (missing, not a bag) or `options` are wrong (a `--msg-path` with no definitions).
pub fn check(path: &Path, options: &DoctorOptions) -> Result<Report> {
    let sources = crate::types::sources_for(&Default::default(), &options.msg_paths)?;
    let mut checker = Checker {
        sources,
        decode: options.decode,
        seen: HashSet::new(),
        slots: HashMap::new(),
        decoder: Decoder::new(),
    };
    Ok(rbag_storage::doctor::check(path, &mut checker)?)
}

/// How one connection's payloads are checked.
enum Slot {
    /// Not decoded (the reason was reported at the connection).
    Skip,
    Ready {
        schema: Arc<Schema>,
        encoding: Encoding,
        /// The type sources' definition has been tried in place of the stored one.
        tried_sources: bool,
    },
}

struct Checker {
    sources: TypeSources,
    decode: bool,
    /// Connections whose definition was checked: topic, type, definition and sums (a rosbag2
    /// bag's files repeat them).
    seen: HashSet<(String, String, String, Option<String>)>,
    slots: HashMap<(usize, u32), Slot>,
    decoder: Decoder,
}

const MD5SUM: &str = rbag_storage::ros1::keys::MD5SUM;
const TYPE_HASH: &str = rbag_storage::rosbag2::TYPE_HASH_KEY;

impl Checker {
    /// Checks a connection's definition and its sums; returns the slot its payloads use.
    fn definition(&mut self, at: &Place<'_>, conn: &Connection, out: &mut Report) -> Slot {
        let finding = |sev, kind, msg: String| at.finding(sev, kind, msg).topic(&conn.topic);
        let Some((dialect, encoding)) = decode::wire(&conn.encoding) else {
            out.push(finding(
                Severity::Info,
                Kind::NotChecked,
                format!("message encoding {:?}: its definition and payloads are not checked", conn.encoding),
            ));
            return Slot::Skip;
        };
        let sums = conn.metadata.get(MD5SUM).or(conn.metadata.get(TYPE_HASH)).cloned();
        let key = (conn.topic.clone(), conn.message_type.clone(), conn.definition.clone(), sums);
        let report = self.seen.insert(key);
        let mut push = |f: Finding| {
            if report {
                out.push(f)
            }
        };
        let stored = conn.definition.trim();
        let reg = if stored.is_empty() {
            let (sev, what) = match dialect {
                Dialect::Ros1 => (Severity::Warning, "the connection stores no message definition"),
                Dialect::Ros2 => (Severity::Info, "the bag stores no definition of this type (older rosbag2)"),
            };
            push(finding(sev, Kind::Definition, format!("{what}; payloads are checked against the type sources'")));
            None
        } else {
            match decode::bag_registry(conn, dialect) {
                Ok(r) => Some(r),
                Err(e) => {
                    push(finding(Severity::Error, Kind::Definition, e.to_string()));
                    None
                }
            }
        };
        if let Some(reg) = &reg {
            match dialect {
                Dialect::Ros1 => {
                    if let Some(said) = conn.metadata.get(MD5SUM).filter(|s| s.as_str() != "*") {
                        match reg.md5(&conn.message_type) {
                            Ok(sum) if &sum != said => push(finding(
                                Severity::Error,
                                Kind::Hash,
                                format!("md5sum {said}, but the definition of {} sums to {sum}", conn.message_type),
                            )),
                            Ok(_) => {}
                            Err(e) => push(finding(
                                Severity::Error,
                                Kind::Definition,
                                format!("the definition of {} is incomplete: {e}", conn.message_type),
                            )),
                        }
                    }
                }
                Dialect::Ros2 => {
                    if let Some(said) = conn.metadata.get(TYPE_HASH).filter(|s| s.starts_with("RIHS01_")) {
                        match reg.rihs01(&conn.message_type) {
                            Ok(h) if &h != said => push(finding(
                                Severity::Error,
                                Kind::Hash,
                                format!(
                                    "type_description_hash {said}, but the definition of {} hashes to {h}",
                                    conn.message_type
                                ),
                            )),
                            Ok(_) => {}
                            Err(e) => push(finding(
                                Severity::Info,
                                Kind::NotChecked,
                                format!("the RIHS01 hash of {} is not computed: {e}", conn.message_type),
                            )),
                        }
                    }
                }
            }
        }
        if !self.decode {
            return Slot::Skip;
        }
        // The schema payloads are decoded with: the stored definition, with what it lacks (or
        // all of it, when none is stored) from the type sources.
        let compiled = if stored.is_empty() || reg.is_none() {
            decode::compile_from_sources(conn, &self.sources)
        } else {
            decode::compile(conn, &self.sources)
        };
        match compiled {
            Ok((_, schema)) => Slot::Ready { schema: Arc::new(schema), encoding, tried_sources: reg.is_none() },
            Err(e) => {
                let sev =
                    if matches!(e, DecodeError::UnknownType { .. }) { Severity::Warning } else { Severity::Error };
                push(finding(
                    sev,
                    if sev == Severity::Warning { Kind::NotChecked } else { Kind::Definition },
                    format!("payloads are not decoded: {e} (give --msg-path for types the bag lacks)"),
                ));
                Slot::Skip
            }
        }
    }
}

/// Whether `data` decodes with `schema` leaving at most the allowed padding; the error otherwise.
fn fits(decoder: &mut Decoder, schema: &Schema, data: &[u8], encoding: Encoding) -> std::result::Result<(), String> {
    match decoder.decode_counted(schema, data, encoding) {
        Ok((_, left)) if left <= rbag_msg::codec::allowed_trailing(encoding) => Ok(()),
        Ok((_, left)) => Err(format!("decodes with {left} byte(s) of its {} left over", data.len())),
        Err(e) => Err(format!("does not decode: {e}")),
    }
}

impl Visitor for Checker {
    fn connection(&mut self, at: &Place<'_>, conn: &Connection, out: &mut Report) {
        let slot = self.definition(at, conn, out);
        self.slots.insert((at.file_index, conn.id), slot);
    }

    fn wants_messages(&self) -> bool {
        self.decode
    }

    fn message(&mut self, at: &Place<'_>, conn: &Connection, log_time: u64, data: &[u8], out: &mut Report) {
        let Some(Slot::Ready { schema, encoding, tried_sources }) = self.slots.get_mut(&(at.file_index, conn.id))
        else {
            return;
        };
        let Err(why) = fits(&mut self.decoder, schema, data, *encoding) else { return };
        if !*tried_sources {
            *tried_sources = true;
            if let Ok((_, other)) = decode::compile_from_sources(conn, &self.sources) {
                if fits(&mut self.decoder, &other, data, *encoding).is_ok() {
                    out.push(
                        at.finding(
                            Severity::Warning,
                            Kind::DefinitionMismatch,
                            format!(
                                "the stored definition of {} does not fit its messages (message at {log_time} ns {why}); the type sources' one does and is used",
                                conn.message_type
                            ),
                        )
                        .topic(&conn.topic),
                    );
                    *schema = Arc::new(other);
                    return;
                }
            }
        }
        out.push(
            at.finding(Severity::Error, Kind::Decode, format!("message at {log_time} ns {why}")).topic(&conn.topic),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbag_storage::ros1::keys;

    fn bag(dir: &Path, md5: &str, payload: &[u8]) -> std::path::PathBuf {
        let path = dir.join("t.bag");
        let mut w = rbag_storage::create(&path, rbag_storage::Format::Ros1, &Default::default()).unwrap();
        // rbag-testkit's /chatter (std_msgs/String), with the MD5 sum given.
        let mut c = rbag_testkit::sample::connection(&rbag_testkit::sample::TOPICS[0]);
        c.metadata.insert(keys::MD5SUM.into(), md5.into());
        let id = w.add_connection(&c).unwrap();
        w.write(id, 1_000, 1_000, payload).unwrap();
        w.finish().unwrap();
        path
    }

    #[test]
    fn a_clean_bag_has_no_findings() {
        let dir = tempfile::tempdir().unwrap();
        let p = bag(dir.path(), "992ce8a1687cec8c8bd883ec73ca41d1", b"\x02\0\0\0hi");
        let r = check(&p, &DoctorOptions { decode: true, ..Default::default() }).unwrap();
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        assert_eq!(r.checked.messages, 1);
    }

    #[test]
    fn a_wrong_md5_and_a_long_payload_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = bag(dir.path(), "fdb28210bfa9d7c91146260178d9a584", b"\x02\0\0\0hi!");
        let r = check(&p, &DoctorOptions { decode: true, ..Default::default() }).unwrap();
        assert!(r.findings.iter().any(|f| f.kind == Kind::Hash && f.severity == Severity::Error), "{:?}", r.findings);
        let d = r.findings.iter().find(|f| f.kind == Kind::Decode).expect("decode finding");
        assert!(d.message.contains("1 byte(s)"), "{}", d.message);
        assert_eq!(d.topic.as_deref(), Some("/chatter"));
        // Without --decode the payload is not looked at.
        let r = check(&p, &DoctorOptions::default()).unwrap();
        assert!(!r.has(Kind::Decode));
    }
}

#[cfg(test)]
mod corpus {
    use super::*;

    /// Every corpus bag, checked with --decode: the worst severity of each.
    #[test]
    fn corpus_bags_are_clean_but_the_talker_and_the_crashed_bag() {
        let Some(root) = rbag_testkit::corpus("doctor::corpus", "") else { return };
        let mut bags = Vec::new();
        for sub in ["ros1", "ros2/sqlite3", "ros2/mcap"] {
            for e in std::fs::read_dir(root.join(sub)).unwrap() {
                bags.push(e.unwrap().path());
            }
        }
        bags.sort();
        for bag in bags {
            let r = check(&bag, &DoctorOptions { decode: true, ..Default::default() }).unwrap();
            let name = bag.file_name().unwrap().to_string_lossy().into_owned();
            for f in &r.findings {
                eprintln!("{name}: {f}");
            }
            // The SQLite3 talker stores `uint8 level` as the whole of rcl_interfaces/msg/Log;
            // the MCAP one stores the right definition.
            let sqlite_talker = name == "talker" && bag.parent().is_some_and(|p| p.ends_with("sqlite3"));
            let expected = match name.as_str() {
                "crashed.bag.active" => Some(Severity::Error),
                _ if sqlite_talker => Some(Severity::Warning),
                _ => None,
            };
            let worst = r.worst().filter(|&s| s > Severity::Info);
            assert_eq!(worst, expected, "{}: {:?}", bag.display(), r.findings);
            if sqlite_talker {
                assert!(r.has(Kind::DefinitionMismatch), "{:?}", r.findings);
            }
            assert!(r.checked.messages > 0 || name == "empty_bag", "{name}");
        }
    }
}
