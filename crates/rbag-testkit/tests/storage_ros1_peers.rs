//! Debian's `rosbag info` and `rosbag play` accept bags rbag writes. `play` publishes into a
//! private `rosmaster` on a free loopback port, and `rostopic echo` counts what arrives.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rbag_storage::{Compression, WriteOptions};
use rbag_testkit::{ros_env, rosbag_cli, sample};

const START: u64 = 1_700_000_000_000_000_000;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn ros(cmd: &str, home: &Path, master: &str) -> Command {
    let mut c = Command::new(cmd);
    ros_env(&mut c, home);
    c.env("ROS_MASTER_URI", master);
    c
}

#[test]
fn rosbag_info_accepts_every_compression() {
    let test = "rosbag_info_accepts_every_compression";
    let Some(rosbag) = rosbag_cli(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    for compression in [Compression::None, Compression::Bz2, Compression::Lz4] {
        let path = dir.path().join(format!("{}.bag", compression.name()));
        let mut w = rbag_storage::create(
            &path,
            rbag_storage::Format::Ros1,
            &WriteOptions { compression, chunk_size: 8192, chunk_interval_ns: None, ..WriteOptions::default() },
        )
        .unwrap();
        let msgs = sample::write(w.as_mut(), START, 2_000_000_000).unwrap();
        w.finish().unwrap();
        let out =
            ros(rosbag.to_str().unwrap(), dir.path(), "http://127.0.0.1:1").arg("info").arg(&path).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "rosbag info on {compression:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(
            text.contains(&format!("messages:     {}", msgs.len()))
                || text.contains(&format!("messages:    {}", msgs.len())),
            "{text}"
        );
        if compression != Compression::None {
            assert!(text.contains(compression.name()), "{text}");
        }
        assert!(text.contains("/chatter") && text.contains("std_msgs/String"), "{text}");
    }
}

#[test]
fn rosbag_play_publishes_what_rbag_wrote() {
    let test = "rosbag_play_publishes_what_rbag_wrote";
    let Some(rosbag) = rosbag_cli(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("play.bag");
    let mut w = rbag_storage::create(
        &bag,
        rbag_storage::Format::Ros1,
        &WriteOptions { compression: Compression::Lz4, ..Default::default() },
    )
    .unwrap();
    // 5 s of /chatter at 100 Hz: rostopic needs only 20 of them, however late it subscribes.
    sample::write(w.as_mut(), START, 5_000_000_000).unwrap();
    w.finish().unwrap();

    let port = free_port();
    let master = format!("http://127.0.0.1:{port}");
    let _core = Killed(
        ros("rosmaster", dir.path(), &master)
            .args(["--core", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "rosmaster did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    let echo = ros("rostopic", dir.path(), &master)
        .args(["echo", "-n", "20", "/chatter"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // rostopic needs a moment to register its subscription before play starts publishing.
    std::thread::sleep(Duration::from_secs(2));
    let play = ros(rosbag.to_str().unwrap(), dir.path(), &master).args(["play", "-d", "1"]).arg(&bag).output().unwrap();
    assert!(play.status.success(), "rosbag play: {}", String::from_utf8_lossy(&play.stderr));
    let mut echo = echo;
    let deadline = Instant::now() + Duration::from_secs(30);
    while echo.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = echo.kill();
    let out = echo.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let received = text.matches("data: \"hello world").count();
    assert_eq!(received, 20, "rostopic echo got: {text}\n{}", String::from_utf8_lossy(&out.stderr));
}
