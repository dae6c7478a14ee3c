//! Bags read over HTTP from a server on 127.0.0.1 that honours `Range`: the same info and
//! messages as the local read, few bytes moved, and faults that end in clear errors or
//! successful retries.

mod common;

use common::Server;
use rbag_bag::{Bag, Filter};

const ROS1: [&str; 4] = ["multi_none.bag", "multi_lz4.bag", "multi_bz2.bag", "small_chunks.bag"];

fn corpus_ros1(test: &str) -> Option<std::path::PathBuf> {
    rbag_testkit::corpus(test, "ros1")
}

/// Every message of a bag: topic, log time, payload.
fn messages(bag: &Bag, filter: &Filter) -> Vec<(String, u64, Vec<u8>)> {
    bag.messages(filter)
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (bag.connection(m.connection).unwrap().topic.clone(), m.log_time, m.data.to_vec())
        })
        .collect()
}

/// The info without what differs remotely: the path, and the frequencies, which need every
/// chunk's index data and are not fetched for a remote bag.
fn info_without_path(bag: &Bag) -> String {
    let mut info = bag.info().unwrap();
    info.path = Default::default();
    info.files.clear();
    info.topics.iter_mut().for_each(|t| t.frequency_hz = None);
    format!("{info:?}")
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
        // HEAD, the header, the index section, and each chunk's header (for the compression
        // figures), 4 KiB each.
        let chunks = local.storage_info().unwrap().chunk_count as usize;
        assert!(requests <= 3 + chunks, "{name}: {requests} requests for info of {chunks} chunks");
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
