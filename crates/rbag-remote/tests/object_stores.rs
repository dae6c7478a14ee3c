//! Every corpus bag read from real object-storage servers on 127.0.0.1 — moto (S3), Azurite
//! (Azure Blob), fake-gcs-server (GCS) — gives the same info and messages as the local read.
//! One server per test, and each test is its own process: one server of each kind.

mod common;

use common::{info_without_path, messages, ros2_bags, storage_files, ROS1};
use rbag_bag::{Bag, Filter};
use rbag_testkit::objects::{Kind, ObjectServer};

/// Uploads the corpus (its indexed ROS 1 bags, and its rosbag2 bags) to a bucket of `server`,
/// then checks that each reads as it reads locally, by directory URL and file by file.
fn corpus_reads_as_locally(test: &str, kind: Kind) {
    let (Some(ros1), Some(ros2)) = (rbag_testkit::corpus(test, "ros1"), rbag_testkit::corpus(test, "ros2")) else {
        return;
    };
    let Some(server) = ObjectServer::start(test, kind) else { return };
    server.apply_env();
    rbag_remote::register();
    server.create_bucket("corpus");
    for name in ROS1 {
        server.put("corpus", &format!("ros1/{name}"), &ros1.join(name));
    }
    server.put_tree("corpus", "ros2", &ros2);

    for name in ROS1 {
        let local = Bag::open(ros1.join(name)).unwrap();
        let remote = Bag::open(server.url("corpus", &format!("ros1/{name}"))).unwrap();
        assert_eq!(info_without_path(&remote), info_without_path(&local), "{kind:?} {name}");
        assert_eq!(messages(&remote, &Filter::default()), messages(&local, &Filter::default()), "{kind:?} {name}");
        let stats = remote.stats();
        let size = std::fs::metadata(ros1.join(name)).unwrap().len();
        println!("{kind:?} ros1/{name}: {} requests, {} of {size} bytes", stats.requests, stats.bytes_fetched);
    }
    for bag in ros2_bags(&ros2) {
        let local = Bag::open(ros2.join(&bag)).unwrap();
        let remote = Bag::open(server.url("corpus", &format!("ros2/{bag}"))).unwrap();
        assert_eq!(info_without_path(&remote), info_without_path(&local), "{kind:?} {bag}");
        assert_eq!(messages(&remote, &Filter::default()), messages(&local, &Filter::default()), "{kind:?} {bag}");
        for name in storage_files(&ros2.join(&bag)) {
            let local = Bag::open(ros2.join(&bag).join(&name)).unwrap();
            let remote = Bag::open(server.url("corpus", &format!("ros2/{bag}/{name}"))).unwrap();
            assert_eq!(info_without_path(&remote), info_without_path(&local), "{kind:?} {bag}/{name}");
            let all = Filter::default();
            assert_eq!(messages(&remote, &all), messages(&local, &all), "{kind:?} {bag}/{name}");
            if name.ends_with(".mcap") {
                // HEAD, head and tail to open; the reads after it fetch chunks only.
                println!("{kind:?} {bag}/{name}: {} requests", remote.stats().requests);
            }
        }
    }

    // A missing object and a missing bucket: clear errors naming the URL.
    let missing = server.url("corpus", "ros1/missing.bag");
    let e = Bag::open(&missing).err().unwrap().to_string();
    assert!(e.contains(&missing), "{e}");
    let nobucket = server.url("nosuchbucket", "a.bag");
    let e = Bag::open(&nobucket).err().unwrap().to_string();
    assert!(e.contains(&nobucket), "{e}");
}

#[test]
fn the_corpus_reads_from_s3_as_it_reads_locally() {
    corpus_reads_as_locally("the_corpus_reads_from_s3_as_it_reads_locally", Kind::S3);
}

#[test]
fn the_corpus_reads_from_azure_blob_as_it_reads_locally() {
    corpus_reads_as_locally("the_corpus_reads_from_azure_blob_as_it_reads_locally", Kind::Azure);
}

#[test]
fn the_corpus_reads_from_gcs_as_it_reads_locally() {
    corpus_reads_as_locally("the_corpus_reads_from_gcs_as_it_reads_locally", Kind::Gcs);
}
