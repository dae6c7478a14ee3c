//! `rbag serve`'s own page, in headless Chromium against corpus bags: no console errors, the
//! topic list, a plot of a chosen field (checked by screenshot pixels), and the image at the
//! cursor. Screenshots stay under `target/screenshots/`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use rbag_testkit::browser;
use serde_json::json;

/// A running `rbag serve` on a free port, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(bag: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rbag"))
            .args(["serve", "--port", "0"])
            .arg(bag)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let port = loop {
            let line = lines.next().expect("rbag serve printed its address").unwrap();
            if let Some(rest) = line.strip_prefix("rbag serve: ws://127.0.0.1:") {
                break rest.split_whitespace().next().unwrap().parse().unwrap();
            }
        };
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        Server { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn topic_count(bag: &Path) -> usize {
    let o = Command::new(env!("CARGO_BIN_EXE_rbag")).args(["info", "--json"]).arg(bag).output().unwrap();
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    info["topics"].as_array().unwrap().len()
}

/// Loads the page, plots `field` of `topic`, shows `image_topic` at the cursor when given, and
/// returns the report and the screenshot path.
fn look(
    test: &str,
    chrome: &browser::Browser,
    bag: &Path,
    topic: &str,
    field: &str,
    image_topic: Option<&str>,
) -> (serde_json::Value, std::path::PathBuf) {
    let server = Server::start(bag);
    let shot = browser::screenshot_path(test);
    let mut steps = vec![
        json!({"waitFor": "window.rbagPageReady === true"}),
        json!({"select": ["#plot-topic", topic]}),
        json!({"waitFor": "document.querySelectorAll('#plot-field option').length > 1"}),
        json!({"select": ["#plot-field", field]}),
        json!({"waitFor": "document.getElementById('plot').dataset.points !== undefined"}),
    ];
    if image_topic.is_some() {
        steps.push(json!({"waitFor": "document.getElementById('image').naturalWidth > 0"}));
    }
    let report = chrome.run(&json!({
        "url": format!("http://127.0.0.1:{}/", server.port),
        "screenshot": shot,
        "fullPage": true,
        "width": 1200, "height": 900,
        "steps": steps,
        "evaluate": "(() => { const r = document.getElementById('plot').getBoundingClientRect(); return { rows: document.querySelectorAll('#topics tbody tr').length, points: Number(document.getElementById('plot').dataset.points), image: document.getElementById('image').naturalWidth, foxglove: document.getElementById('foxglove').href, plot: [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height] }; })()",
    }));
    (report, shot)
}

#[test]
fn the_page_lists_topics_plots_a_field_and_shows_an_image() {
    let test = "the_page_lists_topics_plots_a_field_and_shows_an_image";
    let Some(bag) = rbag_testkit::corpus(test, "ros1/multi_lz4.bag") else { return };
    let Some(chrome) = browser::available(test) else { return };
    let (report, shot) = look(test, &chrome, &bag, "/imu", "/imu.angular_velocity.z", Some("/camera/image_raw"));
    assert_eq!(report["errors"], json!([]), "{report}");
    assert_eq!(report["offsite"], json!([]), "{report}");
    let r = &report["result"];
    assert_eq!(r["rows"].as_u64(), Some(topic_count(&bag) as u64), "{report}");
    // Every /imu message is a point (fewer than the columns: nothing reduced).
    let csv = Command::new(env!("CARGO_BIN_EXE_rbag"))
        .args(["echo", "--csv"])
        .arg(&bag)
        .arg("/imu.angular_velocity.z")
        .output()
        .unwrap();
    let rows = String::from_utf8(csv.stdout).unwrap().lines().count() - 1;
    assert_eq!(r["points"].as_u64(), Some(rows as u64), "{report}");
    // The corpus camera is 64x48.
    assert_eq!(r["image"].as_u64(), Some(64), "{report}");
    assert!(r["foxglove"].as_str().unwrap().contains("ds.url=ws%3A%2F%2F127.0.0.1"), "{report}");
    // The chart was drawn: inside the plot's box, pixels differ from the white background.
    let p: Vec<u32> = r["plot"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as u32).collect();
    let drawn = browser::pixels_differing(
        &shot,
        (p[0] + 90, p[1] + 40, p[2].saturating_sub(120), p[3].saturating_sub(100)),
        [255, 255, 255],
    );
    assert!(drawn > 1000, "{drawn} pixels drawn in {p:?}; screenshot {}", shot.display());
}

#[test]
fn the_page_works_for_rosbag2_bags() {
    let test = "the_page_works_for_rosbag2_bags";
    let Some(chrome) = browser::available(test) else { return };
    // A .db3 with no definitions in it (types from the bundled store) and an MCAP.
    for (sub, topic, field) in [
        ("ros2/sqlite3/cdr_test", "/test_topic", "/test_topic.int32_value"),
        ("ros2/mcap/cdr_test", "/test_topic", "/test_topic.float64_value"),
    ] {
        let Some(bag) = rbag_testkit::corpus(test, sub) else { return };
        let name = format!("{test}_{}", sub.replace('/', "_"));
        let (report, _) = look(&name, &chrome, &bag, topic, field, None);
        assert_eq!(report["errors"], json!([]), "{sub}: {report}");
        let r = &report["result"];
        assert_eq!(r["rows"].as_u64(), Some(topic_count(&bag) as u64), "{sub}: {report}");
        assert!(r["points"].as_u64().unwrap() > 0, "{sub}: {report}");
    }
}

#[test]
fn page_api_errors_are_clear() {
    let test = "page_api_errors_are_clear";
    let Some(bag) = rbag_testkit::corpus(test, "ros1/multi_lz4.bag") else { return };
    let server = Server::start(&bag);
    let get = |path: &str| -> (u16, String) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let status = out.split(' ').nth(1).unwrap().parse().unwrap();
        (status, out)
    };
    for (path, status, needle) in [
        ("/api/series?field=%2Fimu.header.frame_id", 400, "string"),
        ("/api/series?field=%2Fnope.x", 404, "/nope"),
        ("/api/series", 400, "field"),
        ("/api/fields?topic=%2Fnope", 404, "/nope"),
        ("/api/image?topic=%2Fimu&t=1", 400, "not sensor_msgs/Image"),
        ("/api/image?topic=%2Fcamera%2Fimage_raw&t=abc", 400, "t:"),
        ("/api/image?topic=%2Fcamera%2Fimage_raw&t=1", 404, "no image"),
        ("/nothing-here", 404, "/nothing-here"),
    ] {
        let (got, body) = get(path);
        assert_eq!(got, status, "{path}: {body}");
        assert!(body.contains(needle), "{path}: {body}");
    }
    // Still serving.
    assert_eq!(get("/api/summary").0, 200);
}
