//! Bags read over HTTP from a server on 127.0.0.1 that honours `Range`: the same info and
//! messages as the local read, few bytes moved, and faults that end in clear errors or
//! successful retries.

mod common;

use common::{info_without_path, messages, ros2_bags, storage_files, Server};
use rbag_bag::{Bag, Filter};

use common::ROS1;

fn corpus_ros1(test: &str) -> Option<std::path::PathBuf> {
    rbag_testkit::corpus(test, "ros1")
}

#[test]
fn ros1_bags_read_over_http_as_they_read_locally() {
    let Some(dir) = corpus_ros1("ros1_bags_read_over_http_as_they_read_locally") else { return };
    rbag_remote::register();
    let server = Server::start(&dir);
    for name in ROS1 {
        let local = Bag::open(dir.join(name)).unwrap();
        let url = format!("{}/{name}", server.base);
        server.clear();
        let remote = Bag::open(&url).unwrap();
        assert_eq!(info_without_path(&remote), info_without_path(&local), "{name}");
        assert!(remote.info().unwrap().topics.iter().all(|t| t.frequency_hz.is_none()));
        let (requests, bytes) = server.totals();
        let size = std::fs::metadata(dir.join(name)).unwrap().len();
        println!("{name}: info took {requests} requests, {bytes} of {size} bytes");
        // HEAD, the header, the index section; nothing after any chunk. (The reader's count:
        // the server's log may also hold a request a loaded machine made it retry.)
        assert_eq!(remote.stats().requests, 3, "{name}: {requests} requests for info");
        assert!(remote.info().unwrap().compression.is_empty(), "{name}: compression figures read remotely");
        assert_eq!(messages(&remote, &Filter::default()), messages(&local, &Filter::default()), "{name}");
    }
}

#[test]
fn a_time_window_fetches_only_its_chunks() {
    let Some(dir) = corpus_ros1("a_time_window_fetches_only_its_chunks") else { return };
    rbag_remote::register();
    let server = Server::start(&dir);
    let name = "small_chunks.bag";
    let local = Bag::open(dir.join(name)).unwrap();
    let info = local.storage_info().unwrap();
    let (start, end) = (info.start_ns.unwrap(), info.end_ns.unwrap());
    let window = Filter {
        start: Some(start + (end - start) / 2),
        end: Some(start + (end - start) / 2 + (end - start) / 10),
        ..Filter::default()
    };
    let remote = Bag::open(format!("{}/{name}", server.base)).unwrap();
    server.clear();
    let got = messages(&remote, &window);
    assert_eq!(got, messages(&local, &window));
    assert!(!got.is_empty());
    let (_, bytes) = server.totals();
    let size = std::fs::metadata(dir.join(name)).unwrap().len();
    println!("a tenth of {name}: {bytes} of {size} bytes");
    assert!(bytes * 4 < size, "{bytes} of {size} bytes for a tenth of the bag");
}

fn assert_clear(e: impl std::fmt::Display, names: &[&str]) {
    let e = e.to_string();
    for n in names {
        assert!(e.contains(n), "{e:?} does not name {n:?}");
    }
}

#[test]
fn faults_are_clear_errors_or_retries() {
    let Some(dir) = corpus_ros1("faults_are_clear_errors_or_retries") else { return };
    rbag_remote::register();
    let server = Server::start(&dir);
    let url = |n: &str| format!("{}/{n}", server.base);

    let e = Bag::open(url("missing.bag")).err().unwrap();
    assert_clear(e, &["missing.bag", "404"]);

    server.faults.lock().unwrap().forbidden.push("multi_lz4.bag".into());
    let e = Bag::open(url("multi_lz4.bag")).err().unwrap();
    assert_clear(e, &["multi_lz4.bag", "403"]);

    // Two 500s, then the object: retried.
    server.faults.lock().unwrap().fail_first.insert("multi_none.bag".into(), 2);
    let bag = Bag::open(url("multi_none.bag")).unwrap();
    assert_eq!(messages(&bag, &Filter::default()).len() as u64, bag.info().unwrap().message_count);

    // The connection dropped in the middle of a chunk: retried, or a clear error.
    server.faults.lock().unwrap().cut_after.insert("multi_bz2.bag".into(), 100);
    let read_all = |b: &Bag| -> rbag_bag::Result<u64> {
        let mut n = 0;
        for m in b.messages(&Filter::default())? {
            m?;
            n += 1;
        }
        Ok(n)
    };
    match Bag::open(url("multi_bz2.bag")).and_then(|b| Ok((read_all(&b)?, b))) {
        Ok((n, b)) => assert_eq!(n, b.info().unwrap().message_count),
        Err(e) => assert_clear(e, &["multi_bz2.bag"]),
    }

    // A truncated object: the index position points past its end.
    let tmp = tempfile::tempdir().unwrap();
    let whole = std::fs::read(dir.join("small_chunks.bag")).unwrap();
    std::fs::write(tmp.path().join("cut.bag"), &whole[..whole.len() / 2]).unwrap();
    let cut_server = Server::start(tmp.path());
    let e = Bag::open(format!("{}/cut.bag", cut_server.base)).err().unwrap();
    assert_clear(e, &["cut.bag"]);
}

#[test]
fn rosbag2_directories_and_files_read_over_http_as_they_read_locally() {
    let test = "rosbag2_directories_and_files_read_over_http_as_they_read_locally";
    let Some(root) = rbag_testkit::corpus(test, "ros2") else { return };
    rbag_remote::register();
    let server = Server::start(&root);
    for bag in ros2_bags(&root) {
        let local = Bag::open(root.join(&bag)).unwrap();
        for url in [format!("{}/{bag}", server.base), format!("{}/{bag}/metadata.yaml", server.base)] {
            let remote = Bag::open(&url).unwrap();
            assert_eq!(info_without_path(&remote), info_without_path(&local), "{url}");
            assert_eq!(messages(&remote, &Filter::default()), messages(&local, &Filter::default()), "{url}");
        }
        for name in storage_files(&root.join(&bag)) {
            let local = Bag::open(root.join(&bag).join(&name)).unwrap();
            let url = format!("{}/{bag}/{name}", server.base);
            server.clear();
            let remote = Bag::open(&url).unwrap();
            let (requests, bytes) = server.totals();
            println!("{bag}/{name}: open and info took {requests} requests, {bytes} bytes");
            if name.ends_with(".mcap") {
                // HEAD, the head, the tail (footer and summary), and perhaps a Metadata record.
                assert!(requests <= 4, "{url}: {requests} requests to open");
            }
            assert_eq!(info_without_path(&remote), info_without_path(&local), "{url}");
            assert_eq!(messages(&remote, &Filter::default()), messages(&local, &Filter::default()), "{url}");
        }
    }
}

#[test]
fn a_missing_split_file_is_an_error_naming_it() {
    let Some(root) = rbag_testkit::corpus("a_missing_split_file_is_an_error_naming_it", "ros2") else { return };
    rbag_remote::register();
    let tmp = tempfile::tempdir().unwrap();
    for storage in ["mcap", "sqlite3"] {
        let dir = tmp.path().join(storage);
        std::fs::create_dir(&dir).unwrap();
        for name in storage_files(&root.join(storage).join("wbag")) {
            std::fs::copy(root.join(storage).join("wbag").join(&name), dir.join(&name)).unwrap();
        }
        std::fs::copy(root.join(storage).join("wbag/metadata.yaml"), dir.join("metadata.yaml")).unwrap();
        let gone = storage_files(&dir)[2].clone();
        std::fs::remove_file(dir.join(&gone)).unwrap();
    }
    let server = Server::start(tmp.path());
    for (storage, gone) in [("mcap", "wbag_2.mcap"), ("sqlite3", "wbag_2.db3")] {
        let e = Bag::open(format!("{}/{storage}", server.base)).err().unwrap();
        assert_clear(e, &[&format!("{storage}/{gone}"), "404"]);
    }
}

#[test]
fn an_mcap_file_without_summary_is_refused_or_downloaded() {
    let Some(root) = rbag_testkit::corpus("an_mcap_file_without_summary_is_refused_or_downloaded", "ros2") else {
        return;
    };
    rbag_remote::register();
    let tmp = tempfile::tempdir().unwrap();
    let whole = std::fs::read(root.join("mcap/wbag/wbag_0.mcap")).unwrap();
    // A recorder killed before it wrote the summary: everything after two thirds is gone.
    std::fs::write(tmp.path().join("torn.mcap"), &whole[..whole.len() * 2 / 3]).unwrap();
    let server = Server::start(tmp.path());
    let url = format!("{}/torn.mcap", server.base);
    let e = Bag::open(&url).err().unwrap();
    assert!(matches!(e.storage(), Some(rbag_bag::StorageError::RemoteScan { .. })), "{e}");
    assert_clear(&e, &["torn.mcap", "no summary"]);
    let options = rbag_bag::OpenOptions { allow_remote_scan: true, ..Default::default() };
    let remote = Bag::open_with(&url, &options).unwrap();
    let local = Bag::open(tmp.path().join("torn.mcap")).unwrap();
    assert_eq!(messages(&remote, &Filter::default()), messages(&local, &Filter::default()));
    assert!(remote.warnings().iter().any(|w| w.contains("downloaded whole")), "{:?}", remote.warnings());
}

/// The file regions (start, end) of each chunk and the index data after it, with its time
/// span, for a generated bag.
fn chunk_regions(path: &std::path::Path, format: rbag_storage::Format) -> Vec<(u64, u64, u64, u64)> {
    if format == rbag_storage::Format::Ros1 {
        let r = rbag_storage::ros1::Ros1Reader::open(path).unwrap();
        let spans = r.chunk_spans();
        let len = std::fs::metadata(path).unwrap().len();
        (0..spans.len()).map(|i| (spans[i].0, spans.get(i + 1).map_or(len, |s| s.0), spans[i].1, spans[i].2)).collect()
    } else {
        let bytes = std::fs::read(path).unwrap();
        let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
        summary
            .chunk_indexes
            .iter()
            .map(|c| {
                let start = c.chunk_start_offset;
                (start, start + c.chunk_length + c.message_index_length, c.message_start_time, c.message_end_time)
            })
            .collect()
    }
}

#[test]
fn a_ten_second_window_of_ten_minutes_fetches_its_chunks_and_little_more() {
    rbag_remote::register();
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path());
    for (format, name) in [(rbag_storage::Format::Ros1, "ten.bag"), (rbag_storage::Format::Mcap, "ten.mcap")] {
        let path = tmp.path().join(name);
        // 10 minutes at 20 Hz of 2 KiB: 24 MB in chunks of 256 KiB (about 6 s each).
        common::generate(&path, format, 600, 20, 2048, 256 << 10);
        let local = Bag::open(&path).unwrap();
        let start = local.storage_info().unwrap().start_ns.unwrap();
        let window =
            Filter { start: Some(start + 300_000_000_000), end: Some(start + 310_000_000_000), ..Filter::default() };
        let remote = Bag::open(format!("{}/{name}", server.base)).unwrap();
        server.clear();
        let got = messages(&remote, &window);
        assert_eq!(got, messages(&local, &window), "{name}");
        assert_eq!(got.len(), 200, "{name}");
        let (requests, bytes) = server.totals();
        let overlapping: u64 = chunk_regions(&path, format)
            .iter()
            .filter(|(_, _, t0, t1)| *t1 >= window.start.unwrap() && *t0 <= window.end.unwrap())
            .map(|(a, b, _, _)| b - a)
            .sum();
        println!("{name}: a 10 s window took {requests} requests, {bytes} bytes; its chunks hold {overlapping}");
        assert!(bytes as f64 <= 1.2 * overlapping as f64, "{name}: {bytes} bytes for chunks of {overlapping}");
    }
}

#[test]
fn info_on_a_gigabyte_bag_fetches_under_one_percent() {
    rbag_remote::register();
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path());
    for (format, name) in [(rbag_storage::Format::Ros1, "big.bag"), (rbag_storage::Format::Mcap, "big.mcap")] {
        let path = tmp.path().join(name);
        // 1 GiB: 1024 messages of 1 MiB, in chunks of 4 MiB (256 chunks).
        common::generate(&path, format, 1024, 1, 1 << 20, 4 << 20);
        let size = std::fs::metadata(&path).unwrap().len();
        server.clear();
        let bag = Bag::open(format!("{}/{name}", server.base)).unwrap();
        let info = bag.info().unwrap();
        assert_eq!(info.message_count, 1024);
        let (requests, bytes) = server.totals();
        // The reader's counters agree with the server's log.
        let stats = bag.stats();
        assert_eq!((stats.requests as usize, stats.bytes_fetched), (requests, bytes), "{name}");
        println!(
            "info of {name} ({size} bytes): {requests} requests, {bytes} bytes ({:.3}%)",
            bytes as f64 * 100.0 / size as f64
        );
        assert!(bytes * 100 <= size, "{name}: {bytes} of {size} bytes for info");
        assert!(requests <= 4, "{name}: {requests} requests for info");
        drop(bag);
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn a_remote_chunk_larger_than_the_memory_budget_is_a_clear_error() {
    rbag_remote::register();
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path());
    for (format, name) in [(rbag_storage::Format::Ros1, "wide.bag"), (rbag_storage::Format::Mcap, "wide.mcap")] {
        // Chunks of 4 MiB, read whole when remote, against a budget of 1 MiB.
        common::generate(&tmp.path().join(name), format, 64, 1, 256 << 10, 4 << 20);
    }
    rbag_storage::budget::set_limit(1 << 20);
    for name in ["wide.bag", "wide.mcap"] {
        let url = format!("{}/{name}", server.base);
        let bag = Bag::open(&url).unwrap();
        let e = match bag.messages(&Filter::default()) {
            Err(e) => e.to_string(),
            Ok(mut it) => it.find_map(|m| m.err()).expect("an error").to_string(),
        };
        assert_clear(e, &[name, "budget"]);
    }
}
