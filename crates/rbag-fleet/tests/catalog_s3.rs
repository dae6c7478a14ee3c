//! The catalog of 200 generated bags in a real S3 server (moto, on 127.0.0.1) is correct row for
//! row, and a second run fetches nothing from bags that did not change: its only request is
//! the listing.

use rbag_fleet::catalog::{self, Row};
use rbag_storage::{Format, WriteOptions};
use rbag_testkit::objects::{Kind, ObjectServer};

const BAGS: u64 = 200;

/// Bag `i`: `/chatter` with `10 + i % 7` messages a second for 2 s, from second `i`; every
/// fifth bag also has `/odom`. ROS 1 bags, and every fourth one is MCAP.
fn write(path: &std::path::Path, i: u64, format: Format) {
    let mut w = rbag_storage::create(path, format, &WriteOptions::default()).unwrap();
    let mut conn = |topic: &str| w.add_connection(&rbag_testkit::sample::string_connection(format, topic)).unwrap();
    let chatter = conn("/chatter");
    let odom = i.is_multiple_of(5).then(|| conn("/odom"));
    let start = 1_700_000_000_000_000_000 + i * 1_000_000_000;
    let hz = 10 + i % 7;
    for k in 0..2 * hz {
        let t = start + k * 1_000_000_000 / hz;
        w.write(chatter, t, t, b"\x05\x00\x00\x00hello").unwrap();
        if let Some(o) = odom {
            w.write(o, t, t, b"\x02\x00\x00\x00hi").unwrap();
        }
    }
    w.finish().unwrap();
}

#[test]
fn a_catalog_of_200_bags_in_s3_is_right_and_a_rerun_fetches_nothing() {
    let test = "a_catalog_of_200_bags_in_s3_is_right_and_a_rerun_fetches_nothing";
    let Some(server) = ObjectServer::start(test, Kind::S3) else { return };
    server.apply_env();
    rbag_remote::register();
    server.create_bucket("fleet");
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..BAGS {
        let (format, ext) = if i % 4 == 3 { (Format::Mcap, "mcap") } else { (Format::Ros1, "bag") };
        let path = tmp.path().join(format!("run{i:03}.{ext}"));
        write(&path, i, format);
        server.put("fleet", &format!("robots/run{i:03}.{ext}"), &path);
    }
    let inputs = vec![server.url("fleet", "robots/")];
    let (rows, report) = catalog::catalog(&inputs, None, 16).unwrap();
    assert_eq!((report.read, report.reused, report.failed.len()), (BAGS as usize, 0, 0), "{report:?}");
    assert_eq!(rows.len() as u64, BAGS + BAGS / 5);
    for i in 0..BAGS {
        let ext = if i % 4 == 3 { "mcap" } else { "bag" };
        let url = server.url("fleet", &format!("robots/run{i:03}.{ext}"));
        let size = std::fs::metadata(tmp.path().join(format!("run{i:03}.{ext}"))).unwrap().len();
        let mine: Vec<&Row> = rows.iter().filter(|r| r.url == url).collect();
        let hz = 10 + i % 7;
        let start = 1_700_000_000_000_000_000 + i * 1_000_000_000;
        let end = start + (2 * hz - 1) * 1_000_000_000 / hz;
        let topics: Vec<&str> = mine.iter().map(|r| r.topic.as_deref().unwrap()).collect();
        assert_eq!(topics, if i % 5 == 0 { vec!["/chatter", "/odom"] } else { vec!["/chatter"] }, "{url}");
        for r in mine {
            assert_eq!((r.size, r.start, r.end, r.message_count), (size, Some(start), Some(end), 2 * hz), "{url}");
            assert_eq!(r.storage, if ext == "bag" { "ros1" } else { "mcap" }, "{url}");
            assert!(!r.version.is_empty(), "{url}: no ETag");
            let rate = r.frequency_hz.unwrap();
            assert!((rate - (2 * hz) as f64 / ((end - start) as f64 / 1e9)).abs() < 1e-9, "{url}: {rate}");
            let ty = if ext == "bag" { "std_msgs/String" } else { "std_msgs/msg/String" };
            assert_eq!(r.message_type.as_deref(), Some(ty), "{url}");
            if ext == "bag" {
                assert_eq!(r.type_hash.as_deref(), Some("992ce8a1687cec8c8bd883ec73ca41d1"), "{url}");
            }
        }
    }

    // Nothing changed: every bag is reused, and the listing is the only request.
    let before = rbag_remote::totals();
    let (again, report) = catalog::catalog(&inputs, Some(rows.clone()), 16).unwrap();
    let after = rbag_remote::totals();
    assert_eq!((report.read, report.reused), (0, BAGS as usize), "{report:?}");
    assert_eq!(again, rows);
    assert_eq!(after.requests - before.requests, 1, "only the listing");
    assert_eq!(after.bytes, before.bytes, "no object bytes fetched");

    // One bag rewritten: it alone is read again.
    let path = tmp.path().join("run008.bag");
    std::fs::remove_file(&path).unwrap();
    write(&path, 1008, Format::Ros1);
    server.put("fleet", "robots/run008.bag", &path);
    let (_, report) = catalog::catalog(&inputs, Some(rows), 16).unwrap();
    assert_eq!((report.read, report.reused), (1, BAGS as usize - 1), "{report:?}");
}
