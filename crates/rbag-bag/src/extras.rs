//! What a bag holds besides messages (MCAP attachments and metadata records), carried from
//! input bags into an output: `rbag convert` calls [`copy`] so that MCAP → MCAP loses none
//! of it, and counts what an output storage cannot carry instead of failing.

use rbag_storage::{Attachment, MetadataRecord, StorageWriter};

use crate::{Bag, Result};

/// The name of the metadata record in which rosbag2 stores a bag's metadata.yaml. It describes
/// the bag it is in: copying it would put a stale description (the input's files, counts and
/// times) into the output, where a rosbag2 writer stores its own.
pub const ROSBAG2_METADATA: &str = "rosbag2";

/// What [`copy`] leaves out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtrasOptions {
    /// Copy no attachments.
    pub exclude_attachments: bool,
    /// Copy no metadata records.
    pub exclude_metadata: bool,
}

/// What [`copy`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExtrasReport {
    /// Attachments the output stored.
    pub attachments_written: u64,
    /// Metadata records the output stored.
    pub metadata_written: u64,
    /// Attachments the output storage cannot carry (ROS 1, SQLite3): lost, to be reported.
    pub attachments_dropped: u64,
    /// Metadata records the output storage cannot carry.
    pub metadata_dropped: u64,
    /// Records left out on purpose: rosbag2's own `rosbag2` record, and exact repeats of a
    /// record already copied (the same attachment in two inputs). Not a loss.
    pub skipped: u64,
}

impl ExtrasReport {
    /// One line for each kind of loss, for front ends to print as warnings; empty when
    /// nothing was dropped.
    pub fn dropped_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.attachments_dropped > 0 {
            out.push(format!(
                "{} attachment(s) dropped: the output storage cannot carry attachments (MCAP can)",
                self.attachments_dropped
            ));
        }
        if self.metadata_dropped > 0 {
            out.push(format!(
                "{} metadata record(s) dropped: the output storage cannot carry them (MCAP can)",
                self.metadata_dropped
            ));
        }
        out
    }
}

/// Copies the attachments and metadata records of `inputs` into `writer`, in input order and
/// each input's file order. Call it before `finish` (the MCAP writer stores them when it
/// finishes).
///
/// - An attachment whose stored CRC does not match its data fails the copy (naming the file,
///   offset and attachment): a new CRC would hide the damage.
/// - `rosbag2` metadata records ([`ROSBAG2_METADATA`]) are skipped: they describe their own
///   bag, and a rosbag2 output writes its own.
/// - Exact repeats (same name, times, media type and data; or same name and entries) are
///   copied once.
/// - Records the output storage cannot carry are counted as dropped, not errors.
pub fn copy(inputs: &[Bag], writer: &mut dyn StorageWriter, options: &ExtrasOptions) -> Result<ExtrasReport> {
    let mut report = ExtrasReport::default();
    let mut copied_attachments: Vec<Attachment> = Vec::new();
    let mut copied_metadata: Vec<MetadataRecord> = Vec::new();
    for bag in inputs {
        if !options.exclude_attachments {
            for a in bag.attachments()? {
                crate::attachments::check(&a)?;
                if copied_attachments.iter().any(|b| same_attachment(&a, b)) {
                    report.skipped += 1;
                    continue;
                }
                if writer.add_attachment(&a).map_err(|e| e.in_file(bag.path()))? {
                    report.attachments_written += 1;
                } else {
                    report.attachments_dropped += 1;
                }
                copied_attachments.push(a);
            }
        }
        if !options.exclude_metadata {
            for m in bag.metadata()? {
                if m.name == ROSBAG2_METADATA
                    || copied_metadata.iter().any(|n| n.name == m.name && n.metadata == m.metadata)
                {
                    report.skipped += 1;
                    continue;
                }
                if writer.add_metadata(&m).map_err(|e| e.in_file(bag.path()))? {
                    report.metadata_written += 1;
                } else {
                    report.metadata_dropped += 1;
                }
                copied_metadata.push(m);
            }
        }
    }
    Ok(report)
}

fn same_attachment(a: &Attachment, b: &Attachment) -> bool {
    a.name == b.name
        && a.media_type == b.media_type
        && a.log_time == b.log_time
        && a.create_time == b.create_time
        && a.data == b.data
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::{Connection, Format, WriteOptions};

    fn attachment(name: &str, data: &[u8]) -> Attachment {
        Attachment {
            name: name.into(),
            media_type: "text/plain".into(),
            log_time: 5,
            create_time: 6,
            data: data.to_vec().into(),
            ..Attachment::default()
        }
    }

    fn metadata(name: &str, k: &str, v: &str) -> MetadataRecord {
        MetadataRecord { name: name.into(), metadata: BTreeMap::from([(k.into(), v.into())]), ..Default::default() }
    }

    /// An MCAP file with one message, `attachments` and `records`.
    fn mcap(path: &std::path::Path, attachments: &[Attachment], records: &[MetadataRecord]) {
        let mut w = rbag_storage::create(path, Format::Mcap, &WriteOptions::default()).unwrap();
        let conn = Connection {
            topic: "/t".into(),
            message_type: "std_msgs/msg/String".into(),
            encoding: "cdr".into(),
            definition: "string data".into(),
            definition_encoding: "ros2msg".into(),
            ..Connection::default()
        };
        let id = w.add_connection(&conn).unwrap();
        w.write(id, 1, 1, b"\x00\x01\x00\x00\x01\x00\x00\x00\x00").unwrap();
        for a in attachments {
            assert!(w.add_attachment(a).unwrap());
        }
        for m in records {
            assert!(w.add_metadata(m).unwrap());
        }
        w.finish().unwrap();
    }

    #[test]
    fn copies_into_mcap_and_counts_what_ros1_drops() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.mcap"), dir.path().join("b.mcap"));
        let calib = attachment("calib.yaml", b"fx: 1");
        mcap(
            &a,
            &[calib.clone(), attachment("map.pgm", b"P5")],
            &[metadata("robot", "id", "7"), metadata(ROSBAG2_METADATA, "serialized_metadata", "x")],
        );
        // The same calibration in the second input is copied once; a new record is copied.
        mcap(&b, &[calib], &[metadata("robot", "id", "7"), metadata("run", "notes", "wet")]);
        let inputs = [Bag::open(&a).unwrap(), Bag::open(&b).unwrap()];

        let out = dir.path().join("out.mcap");
        let mut w = rbag_storage::create(&out, Format::Mcap, &WriteOptions::default()).unwrap();
        let report = copy(&inputs, w.as_mut(), &ExtrasOptions::default()).unwrap();
        w.finish().unwrap();
        // Skipped: the repeated calibration and `robot` record, and each input's `rosbag2`
        // record (rbag's MCAP writer stores one, and the output writes its own).
        assert_eq!(
            report,
            ExtrasReport { attachments_written: 2, metadata_written: 2, skipped: 4, ..ExtrasReport::default() }
        );
        assert!(report.dropped_lines().is_empty());
        let back = Bag::open(&out).unwrap();
        let names: Vec<String> = back.attachments().unwrap().into_iter().map(|a| a.name).collect();
        assert_eq!(names, ["calib.yaml", "map.pgm"]);
        let got = back.attachments().unwrap();
        assert_eq!(&got[0].data[..], b"fx: 1");
        assert_eq!((got[0].log_time, got[0].create_time, got[0].media_type.as_str()), (5, 6, "text/plain"));
        assert_eq!(got[0].crc_ok(), Some(true));
        let records: Vec<(String, BTreeMap<String, String>)> = back
            .metadata()
            .unwrap()
            .into_iter()
            .filter(|m| m.name != ROSBAG2_METADATA)
            .map(|m| (m.name, m.metadata))
            .collect();
        // The output's own `rosbag2` record, once.
        assert_eq!(back.metadata().unwrap().iter().filter(|m| m.name == ROSBAG2_METADATA).count(), 1);
        assert_eq!(
            records,
            [
                ("robot".to_string(), metadata("robot", "id", "7").metadata),
                ("run".to_string(), metadata("run", "notes", "wet").metadata)
            ]
        );

        // A ROS 1 output carries neither: counted as dropped, not an error.
        let out = dir.path().join("out.bag");
        let mut w = rbag_storage::create(&out, Format::Ros1, &WriteOptions::default()).unwrap();
        let report = copy(&inputs, w.as_mut(), &ExtrasOptions::default()).unwrap();
        w.finish().unwrap();
        assert_eq!((report.attachments_dropped, report.metadata_dropped, report.attachments_written), (2, 2, 0));
        assert_eq!(report.dropped_lines().len(), 2);

        // Excluded: nothing is looked at.
        let out = dir.path().join("none.mcap");
        let mut w = rbag_storage::create(&out, Format::Mcap, &WriteOptions::default()).unwrap();
        let opts = ExtrasOptions { exclude_attachments: true, exclude_metadata: true };
        assert_eq!(copy(&inputs, w.as_mut(), &opts).unwrap(), ExtrasReport::default());
        w.finish().unwrap();
        assert!(Bag::open(&out).unwrap().attachments().unwrap().is_empty());
    }
}
