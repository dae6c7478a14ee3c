//! The CLI on bags in a real S3 server (moto, on 127.0.0.1): `info`, `echo` and `export` read
//! `s3://` URLs as they read paths, `--stats` counts what was fetched, a remote MCAP file
//! without summary is refused with a hint (and downloaded with `--allow-remote-scan`), and a set
//! `AWS_PROFILE` is said to be unused. One server for the whole binary: one test.

mod common;

use common::{assert_clear_error, rbag, sample_bag, stderr};
use rbag_testkit::objects::{Kind, ObjectServer};

#[test]
fn the_cli_reads_s3_urls_as_paths() {
    let test = "the_cli_reads_s3_urls_as_paths";
    let Some(server) = ObjectServer::start(test, Kind::S3) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let bag = sample_bag(tmp.path(), "sample.bag", 3);
    let mcap = tmp.path().join("sample.mcap");
    let out = rbag().args(["convert"]).arg(&bag).arg("-o").arg(&mcap).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let whole = std::fs::read(&mcap).unwrap();
    let torn = tmp.path().join("torn.mcap");
    std::fs::write(&torn, &whole[..whole.len() * 2 / 3]).unwrap();
    server.create_bucket("cli");
    for f in [&bag, &mcap, &torn] {
        server.put("cli", f.file_name().unwrap().to_str().unwrap(), f);
    }
    let env = server.env();
    let cmd = |args: &[&str]| {
        let mut c = rbag();
        c.args(args).envs(env.iter().map(|(k, v)| (k, v))).env_remove("AWS_PROFILE");
        c
    };

    for name in ["sample.bag", "sample.mcap"] {
        let url = server.url("cli", name);
        let local = rbag().args(["info", "--json"]).arg(tmp.path().join(name)).output().unwrap();
        let remote = cmd(&["info", "--json", "--stats", &url]).output().unwrap();
        assert!(remote.status.success(), "{}", stderr(&remote));
        let strip = |o: &std::process::Output| {
            let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            v["path"] = serde_json::Value::Null;
            v["files"] = serde_json::Value::Null;
            if v["storage"] == "ros1" {
                // In each chunk's header: not read remotely.
                v["compression"] = serde_json::Value::Null;
            }
            let ros1 = v["storage"] == "ros1";
            for t in v["topics"].as_array_mut().unwrap() {
                t["frequency_hz"] = serde_json::Value::Null;
                // Estimated sizes: a local read samples each connection's first chunk, a
                // remote one has the summary alone (and ROS 1 remotely no chunk sizes at all).
                if ros1 || t["size_estimated"] == true {
                    t["size_bytes"] = serde_json::Value::Null;
                    t["size_estimated"] = serde_json::Value::Null;
                }
            }
            v
        };
        assert_eq!(strip(&remote), strip(&local), "{name}");
        let err = stderr(&remote);
        assert!(err.contains("stats: ") && err.contains("remote request(s)"), "{err}");

        // echo of the URL prints what echo of the file prints.
        let local = rbag().args(["echo", "--json"]).arg(tmp.path().join(name)).arg("/chatter").output().unwrap();
        let remote = cmd(&["echo", "--json", &url, "/chatter"]).output().unwrap();
        assert!(remote.status.success(), "{}", stderr(&remote));
        assert_eq!(remote.stdout, local.stdout, "{name}");
    }

    // No summary: refused, naming the URL, with the flag that helps; downloaded with it.
    let url = server.url("cli", "torn.mcap");
    let refused = cmd(&["info", &url]).output().unwrap();
    assert_clear_error(&refused, &[&url, "--allow-remote-scan"]);
    let scanned = cmd(&["info", "--allow-remote-scan", &url]).output().unwrap();
    assert!(scanned.status.success(), "{}", stderr(&scanned));
    assert!(stderr(&scanned).contains("downloaded whole"), "{}", stderr(&scanned));

    // A missing object: a clear error naming the URL and the status.
    let missing = server.url("cli", "missing.bag");
    assert_clear_error(&cmd(&["info", &missing]).output().unwrap(), &[&missing, "404"]);

    // AWS_PROFILE is not read: said so.
    let profiled = cmd(&["info", &server.url("cli", "sample.bag")]).env("AWS_PROFILE", "robots").output().unwrap();
    assert!(profiled.status.success());
    assert!(
        stderr(&profiled).contains("AWS_PROFILE=robots is set, but profiles in ~/.aws are not read"),
        "{}",
        stderr(&profiled)
    );
}
