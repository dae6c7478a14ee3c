//! Catalogs of real bags written for the test: ROS 1 bags, single MCAP and SQLite3 files, and
//! rosbag2 directories. Each row is checked against what was written and against the bag's own
//! summary; updates reuse unchanged bags without opening them; damaged bags are failures that
//! name the bag.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rbag_bag::Bag;
use rbag_fleet::catalog::{self, Found, Row};
use rbag_storage::{Connection, Format, WriteOptions};

const START: u64 = 1_700_000_000_000_000_000;
const RIHS: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
const MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";

/// A topic to write: name, connections, messages per connection, period.
#[derive(Clone)]
struct TopicSpec {
    name: &'static str,
    connections: u32,
    count: u64,
    period_ns: u64,
}

/// A bag to write, and what its rows must say.
#[derive(Clone)]
struct BagSpec {
    rel: String,
    format: Format,
    start: u64,
    topics: Vec<TopicSpec>,
}

impl BagSpec {
    fn ros2(&self) -> bool {
        self.format != Format::Ros1
    }

    fn dir(&self) -> bool {
        !self.rel.ends_with(".bag") && !self.rel.ends_with(".mcap") && !self.rel.ends_with(".db3")
    }

    fn write(&self, root: &Path) {
        let path = root.join(&self.rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut w = rbag_storage::create(&path, self.format, &WriteOptions::default()).unwrap();
        for t in &self.topics {
            let ids: Vec<u32> = (0..t.connections)
                .map(|k| {
                    let mut c =
                        Connection { topic: t.name.into(), definition: "string data\n".into(), ..Default::default() };
                    if self.ros2() {
                        c.message_type = "std_msgs/msg/String".into();
                        c.encoding = "cdr".into();
                        c.definition_encoding = "ros2msg".into();
                        c.metadata.insert(rbag_storage::rosbag2::TYPE_HASH_KEY.into(), RIHS.into());
                    } else {
                        c.message_type = "std_msgs/String".into();
                        c.encoding = "ros1".into();
                        c.definition_encoding = "ros1msg".into();
                        c.metadata.insert("md5sum".into(), MD5.into());
                        c.metadata.insert("callerid".into(), format!("/node{k}"));
                    }
                    w.add_connection(&c).unwrap()
                })
                .collect();
            let data: &[u8] = if self.ros2() { &[0, 1, 0, 0, 1, 0, 0, 0, 0] } else { &[0, 0, 0, 0] };
            for (k, id) in ids.iter().enumerate() {
                for j in 0..t.count {
                    let time = self.start + j * t.period_ns + k as u64;
                    w.write(*id, time, time, data).unwrap();
                }
            }
        }
        w.finish().unwrap();
    }

    /// The rows the catalog must hold for this bag, from what was written.
    fn rows(&self, root: &Path) -> Vec<Row> {
        let path = std::fs::canonicalize(root.join(&self.rel)).unwrap();
        let size = if self.dir() {
            std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum()
        } else {
            std::fs::metadata(&path).unwrap().len()
        };
        let last = |t: &TopicSpec| self.start + (t.count - 1) * t.period_ns + u64::from(t.connections - 1);
        let with_messages: Vec<&TopicSpec> = self.topics.iter().filter(|t| t.count > 0).collect();
        let (start, end) = if with_messages.is_empty() {
            (None, None)
        } else {
            (Some(self.start), with_messages.iter().map(|t| last(t)).max())
        };
        let seconds = match (start, end) {
            (Some(s), Some(e)) if e > s => Some((e - s) as f64 / 1e9),
            _ => None,
        };
        let storage = match self.format {
            Format::Ros1 => "ros1",
            Format::Mcap => "mcap",
            Format::Sqlite3 => "sqlite3",
        };
        let base = Row {
            url: path.to_str().unwrap().to_string(),
            size,
            version: String::new(), // checked apart
            storage: storage.into(),
            start,
            end,
            topic: None,
            message_type: None,
            type_hash: None,
            message_count: 0,
            frequency_hz: None,
        };
        let mut topics = self.topics.clone();
        topics.sort_by_key(|t| t.name);
        let mut rows: Vec<Row> = topics
            .iter()
            .map(|t| {
                let count = t.count * u64::from(t.connections);
                Row {
                    topic: Some(t.name.into()),
                    message_type: Some(if self.ros2() { "std_msgs/msg/String" } else { "std_msgs/String" }.into()),
                    type_hash: Some(if self.ros2() { RIHS } else { MD5 }.into()),
                    message_count: count,
                    frequency_hz: seconds.map(|s| count as f64 / s),
                    ..base.clone()
                }
            })
            .collect();
        if rows.is_empty() {
            rows.push(base);
        }
        rows
    }
}

fn topic(name: &'static str, connections: u32, count: u64, period_ns: u64) -> TopicSpec {
    TopicSpec { name, connections, count, period_ns }
}

/// 21 bags: 11 ROS 1 (one empty, one with a silent topic, one of a single message), 6 single
/// MCAP files, 2 single SQLite3 files, and 2 rosbag2 directories, plus files that are not bags.
fn corpus(root: &Path) -> Vec<BagSpec> {
    let mut specs = Vec::new();
    for i in 0..8u64 {
        let mut topics = vec![topic("/imu", 1, 20 + i, 10_000_000), topic("/gps", 1, 5, 200_000_000)];
        if i % 2 == 0 {
            topics.push(topic("/cam", 2, 3, 50_000_000));
        }
        specs.push(BagSpec {
            rel: format!("day1/run_{i}.bag"),
            format: Format::Ros1,
            start: START + i * 1_000_000_000,
            topics,
        });
    }
    specs.push(BagSpec { rel: "day1/empty.bag".into(), format: Format::Ros1, start: START, topics: vec![] });
    specs.push(BagSpec {
        rel: "day1/silent.bag".into(),
        format: Format::Ros1,
        start: START,
        topics: vec![topic("/quiet", 1, 0, 1)],
    });
    specs.push(BagSpec {
        rel: "day1/deep/one.bag".into(),
        format: Format::Ros1,
        start: START,
        topics: vec![topic("/once", 1, 1, 1)],
    });
    for i in 0..6u64 {
        let topics = vec![topic("/imu", 1, 10 + i, 5_000_000), topic("/odom", 1, 4, 100_000_000)];
        specs.push(BagSpec { rel: format!("day2/m_{i}.mcap"), format: Format::Mcap, start: START + i, topics });
    }
    for i in 0..2u64 {
        let topics = vec![topic("/scan", 1, 7 + i, 100_000_000)];
        specs.push(BagSpec { rel: format!("day2/s_{i}.db3"), format: Format::Sqlite3, start: START, topics });
    }
    specs.push(BagSpec {
        rel: "day3/r2_mcap".into(),
        format: Format::Mcap,
        start: START,
        topics: vec![topic("/tf", 1, 30, 10_000_000), topic("/imu", 1, 12, 25_000_000)],
    });
    specs.push(BagSpec {
        rel: "day3/r2_sqlite".into(),
        format: Format::Sqlite3,
        start: START,
        topics: vec![topic("/joint_states", 1, 9, 100_000_000)],
    });
    for s in &specs {
        s.write(root);
    }
    std::fs::write(root.join("day1/notes.txt"), "not a bag").unwrap();
    // Hidden: never found (it would fail if it were read).
    std::fs::write(root.join("day1/.scratch.bag"), "not a bag either").unwrap();
    std::fs::create_dir_all(root.join("day2/.staging")).unwrap();
    std::fs::write(root.join("day2/.staging/x.bag"), "nor this").unwrap();
    specs
}

fn input(root: &Path) -> Vec<String> {
    vec![root.to_str().unwrap().to_string()]
}

/// The rows of every spec, sorted as a catalog is, with the versions the catalog found.
fn expected(root: &Path, specs: &[BagSpec], got: &[Row]) -> Vec<Row> {
    let versions: BTreeMap<&str, &str> = got.iter().map(|r| (r.url.as_str(), r.version.as_str())).collect();
    let mut rows: Vec<Row> = specs.iter().flat_map(|s| s.rows(root)).collect();
    for r in &mut rows {
        r.version = versions.get(r.url.as_str()).map(|v| v.to_string()).unwrap_or_default();
    }
    rows.sort_by(|a, b| (&a.url, &a.topic).cmp(&(&b.url, &b.topic)));
    rows
}

fn by_url(rows: &[Row]) -> BTreeMap<&str, Vec<&Row>> {
    let mut m: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        m.entry(r.url.as_str()).or_default().push(r);
    }
    m
}

#[test]
fn every_row_matches_what_was_written_and_the_bags_summary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let specs = corpus(root);
    let (rows, report) = catalog::catalog(&input(root), None, 16).unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!((report.read, report.reused, report.kept, report.removed), (specs.len(), 0, 0, 0));
    assert_eq!(specs.len(), 21);
    let want = expected(root, &specs, &rows);
    assert_eq!(rows.len(), want.len());
    for (got, want) in rows.iter().zip(&want) {
        assert_eq!(got, want);
    }

    // Against each bag's own summary.
    for (url, bag_rows) in by_url(&rows) {
        let bag = Bag::open(url).unwrap();
        let info = bag.storage_info().unwrap();
        for r in &bag_rows {
            assert_eq!(r.storage, info.format, "{url}");
            assert_eq!((r.start, r.end), (info.start_ns, info.end_ns), "{url}");
            assert!(!r.version.is_empty(), "{url}: a local bag's version is its mtime");
        }
        let counted: u64 = bag_rows.iter().map(|r| r.message_count).sum();
        assert_eq!(counted, info.message_count, "{url}");
        let topics: std::collections::BTreeSet<&str> = bag.connections().iter().map(|c| c.topic.as_str()).collect();
        let listed: std::collections::BTreeSet<&str> = bag_rows.iter().filter_map(|r| r.topic.as_deref()).collect();
        assert_eq!(topics, listed, "{url}");
    }

    // A rosbag2 directory is one bag whose version joins its files' (metadata.yaml and one
    // storage file).
    let r2 = rows.iter().find(|r| r.url.ends_with("/day3/r2_mcap")).unwrap();
    assert_eq!(r2.version.split(',').count(), 2, "{}", r2.version);

    // One worker reads the same.
    let (one, _) = catalog::catalog(&input(root), None, 1).unwrap();
    assert_eq!(one, rows);
}

#[test]
fn the_bags_found_are_bags_and_rosbag2_directories_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let specs = corpus(root);
    let found = catalog::find(&input(root)).unwrap();
    let names: Vec<String> = found.iter().map(|f| f.url_or_path.clone()).collect();
    let mut want: Vec<String> =
        specs.iter().map(|s| std::fs::canonicalize(root.join(&s.rel)).unwrap().to_str().unwrap().to_string()).collect();
    want.sort();
    assert_eq!(names, want);

    // A file given by name is a bag whatever its name; a rosbag2 directory given by name is
    // one bag; an input given twice, or inside another, is found once.
    let odd = root.join("day2/recording.data");
    std::fs::copy(root.join("day1/run_0.bag"), &odd).unwrap();
    let r2 = root.join("day3/r2_sqlite");
    let inputs: Vec<String> =
        [&odd, &r2, &root.join("day3"), &r2].iter().map(|p| p.to_str().unwrap().to_string()).collect();
    let found = catalog::find(&inputs).unwrap();
    assert_eq!(found.len(), 3, "{found:?}");
    let (rows, report) = catalog::catalog(&inputs, None, 4).unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.read, 3);
    assert!(rows.iter().any(|r| r.url.ends_with("recording.data") && r.storage == "ros1"));

    // A missing input is an error naming it.
    let missing = root.join("no/such/dir");
    let e = catalog::find(&[missing.to_str().unwrap().to_string()]).unwrap_err();
    assert!(e.to_string().contains("no/such/dir"), "{e}");
}

#[test]
fn unchanged_bags_are_reused_unopened_and_changed_ones_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut specs = corpus(root);
    let (first, _) = catalog::catalog(&input(root), None, 16).unwrap();

    // The previous rows are taken as they are: a count planted in them survives, so the bag
    // was not opened.
    let planted = std::fs::canonicalize(root.join("day2/m_3.mcap")).unwrap();
    let planted = planted.to_str().unwrap();
    let mut previous = first.clone();
    for r in previous.iter_mut().filter(|r| r.url == planted) {
        r.message_count = 999_999;
    }
    // A bag outside the inputs keeps its rows.
    let elsewhere = Row { url: "s3://elsewhere/x.bag".into(), ..first[0].clone() };
    previous.push(elsewhere.clone());
    let (second, report) = catalog::catalog(&input(root), Some(previous), 16).unwrap();
    assert_eq!((report.read, report.reused, report.kept, report.removed), (0, specs.len(), 1, 0));
    assert!(report.failed.is_empty());
    assert!(second.iter().filter(|r| r.url == planted).all(|r| r.message_count == 999_999));
    assert!(second.contains(&elsewhere));
    assert!(second.windows(2).all(|w| (&w[0].url, &w[0].topic) <= (&w[1].url, &w[1].topic)));

    // Rewrite one bag and one rosbag2 directory (other counts), and delete another bag:
    // exactly those are read again or dropped.
    let changed = specs.iter().position(|s| s.rel == "day1/run_3.bag").unwrap();
    std::fs::remove_file(root.join(&specs[changed].rel)).unwrap();
    specs[changed].topics = vec![topic("/imu", 1, 77, 10_000_000)];
    specs[changed].write(root);
    let r2 = specs.iter().position(|s| s.rel == "day3/r2_sqlite").unwrap();
    std::fs::remove_dir_all(root.join(&specs[r2].rel)).unwrap();
    specs[r2].topics = vec![topic("/joint_states", 1, 90, 10_000_000)];
    specs[r2].write(root);
    let gone = specs.iter().position(|s| s.rel == "day2/s_1.db3").unwrap();
    std::fs::remove_file(root.join(&specs[gone].rel)).unwrap();
    specs.remove(gone);

    let (third, report) = catalog::catalog(&input(root), Some(first.clone()), 16).unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!((report.read, report.reused, report.kept, report.removed), (2, specs.len() - 2, 0, 1));
    assert_eq!(third, expected(root, &specs, &third));
    let run3 = std::fs::canonicalize(root.join("day1/run_3.bag")).unwrap();
    let run3: Vec<&Row> = third.iter().filter(|r| Path::new(&r.url) == run3).collect();
    assert_eq!(run3.len(), 1);
    assert_eq!(run3[0].message_count, 77);
}

#[test]
fn a_damaged_bag_is_a_failure_naming_it_and_the_catalog_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let specs = corpus(root);
    std::fs::write(root.join("day1/broken.bag"), b"#ROSBAG V2.0\nthis is no bag header at all").unwrap();
    // A rosbag2 directory whose metadata.yaml does not parse.
    std::fs::create_dir_all(root.join("day3/r2_bad")).unwrap();
    std::fs::write(root.join("day3/r2_bad/metadata.yaml"), "rosbag2_bagfile_information: [unclosed\n").unwrap();
    std::fs::write(root.join("day3/r2_bad/r2_bad_0.mcap"), b"\x89MCAP0\r\n").unwrap();
    std::fs::write(root.join("day2/zeros.db3"), vec![0u8; 4096]).unwrap();
    let bad: Vec<PathBuf> = ["day1/broken.bag", "day2/zeros.db3", "day3/r2_bad"]
        .iter()
        .map(|r| std::fs::canonicalize(root.join(r)).unwrap())
        .collect();

    let (rows, report) = catalog::catalog(&input(root), None, 16).unwrap();
    let failed: Vec<&str> = report.failed.iter().map(|(b, _)| b.as_str()).collect();
    let want: Vec<&str> = bad.iter().map(|p| p.to_str().unwrap()).collect();
    assert_eq!(failed, want, "{:?}", report.failed);
    for (_, reason) in &report.failed {
        assert!(!reason.is_empty() && !reason.contains("panicked"), "{reason}");
    }
    assert_eq!(report.read, specs.len());
    assert_eq!(rows, expected(root, &specs, &rows));
    assert!(rows.iter().all(|r| !want.contains(&r.url.as_str())));

    // A rerun tries them again (they have no rows to reuse) and reuses the rest.
    let (_, again) = catalog::catalog(&input(root), Some(rows), 16).unwrap();
    assert_eq!((again.read, again.reused, again.failed.len()), (0, specs.len(), 3));
}

#[test]
fn a_catalog_survives_parquet_and_other_files_are_not_catalogs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    corpus(root);
    let (rows, _) = catalog::catalog(&input(root), None, 16).unwrap();
    let out = root.join("catalog.parquet");
    catalog::write(&rows, &out).unwrap();
    assert!(catalog::is_catalog(&out));
    assert_eq!(catalog::read(&out).unwrap(), rows);
    assert!(std::fs::read(&out).unwrap().starts_with(b"PAR1"));

    // The catalog file is no bag: a rerun over the same directory does not find it.
    let found: Vec<Found> = catalog::find(&input(root)).unwrap();
    assert!(found.iter().all(|f| !f.url_or_path.ends_with("catalog.parquet")));

    for (name, bytes) in [("notes.parquet", &b"hello"[..]), ("empty.parquet", &b""[..])] {
        let p = root.join(name);
        std::fs::write(&p, bytes).unwrap();
        assert!(!catalog::is_catalog(&p));
        let e = catalog::read(&p).unwrap_err();
        assert!(matches!(e, rbag_fleet::Error::NotCatalog { .. }), "{e}");
        assert!(e.to_string().contains(name), "{e}");
    }
    // An empty catalog is a catalog.
    catalog::write(&[], &out).unwrap();
    assert_eq!(catalog::read(&out).unwrap(), vec![]);
}
