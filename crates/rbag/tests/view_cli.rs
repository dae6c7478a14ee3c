//! `rbag plot` and `rbag export-images`: charts checked against `rbag echo --csv` and a real
//! browser, images checked by Pillow, videos by ffmpeg.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_clear_error, run, stderr};
use rbag_storage::Connection;
use rbag_testkit::browser;

const TEST_BAG: &str = "ros1/multi_lz4.bag";

fn corpus_bag(test: &str) -> Option<PathBuf> {
    rbag_testkit::corpus(test, TEST_BAG)
}

/// `<text ...>LABEL</text>` elements of an SVG: (attributes, label).
fn svg_texts(svg: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text ") {
        let after = &rest[i + 6..];
        let close = after.find('>').unwrap();
        let end = after.find("</text>").unwrap();
        out.push((after[..close].to_string(), after[close + 1..end].trim().to_string()));
        rest = &after[end..];
    }
    out
}

fn attr(attrs: &str, name: &str) -> Option<String> {
    let key = format!("{name}=\"");
    let i = attrs.find(&key)? + key.len();
    Some(attrs[i..i + attrs[i..].find('"')?].to_string())
}

/// The points of every polyline drawn in `colour` with a 1 px stroke (data lines; legend
/// samples are 2 px).
fn polylines(svg: &str, colour: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline ")
        .skip(1)
        .map(|p| &p[..p.find("/>").unwrap()])
        .filter(|p| attr(p, "stroke").as_deref() == Some(colour) && attr(p, "stroke-width").as_deref() == Some("1"))
        .map(|p| {
            attr(p, "points")
                .unwrap()
                .split_whitespace()
                .map(|xy| {
                    let (x, y) = xy.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// A linear map from two (value, pixel) ticks, the two furthest apart.
fn axis(ticks: &[(f64, f64)]) -> impl Fn(f64) -> f64 {
    assert!(ticks.len() >= 2, "need two labelled ticks: {ticks:?}");
    let lo = ticks.iter().copied().fold((f64::MAX, 0.0), |a, t| if t.0 < a.0 { t } else { a });
    let hi = ticks.iter().copied().fold((f64::MIN, 0.0), |a, t| if t.0 > a.0 { t } else { a });
    move |v| lo.1 + (v - lo.0) / (hi.0 - lo.0) * (hi.1 - lo.1)
}

#[test]
fn svg_points_are_the_field_values_scaled_as_the_axes_say() {
    let Some(bag) = corpus_bag("svg_points_are_the_field_values_scaled_as_the_axes_say") else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gyro.svg");
    let o = run(&[&"plot", &bag, &"/imu.angular_velocity.z", &"-o", &out, &"--size", &"1200x700"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    // The oracle: echo's CSV of the same field, times in ns; the x axis counts from the bag's start.
    let csv = run(&[&"echo", &bag, &"/imu.angular_velocity.z", &"--csv"]);
    assert!(csv.status.success());
    let rows: Vec<(u64, f64)> = String::from_utf8(csv.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect();
    let info: serde_json::Value = serde_json::from_slice(&run(&[&"info", &"--json", &bag]).stdout).unwrap();
    let start = info["start_ns"].as_u64().unwrap();
    // Tick labels: y labels end at the axis (text-anchor end), x labels sit centred below it.
    let texts = svg_texts(&svg);
    let number = |s: &str| s.parse::<f64>().ok();
    let y_ticks: Vec<(f64, f64)> = texts
        .iter()
        .filter(|(a, _)| attr(a, "text-anchor").as_deref() == Some("end"))
        .filter_map(|(a, l)| Some((number(l)?, attr(a, "y")?.parse().ok()?)))
        .collect();
    let x_ticks: Vec<(f64, f64)> = texts
        .iter()
        .filter(|(a, _)| attr(a, "text-anchor").as_deref() == Some("middle"))
        .filter(|(a, _)| attr(a, "y").and_then(|y| y.parse::<f64>().ok()).is_some_and(|y| y > 600.0 && y < 680.0))
        .filter_map(|(a, l)| Some((number(l)?, attr(a, "x")?.parse().ok()?)))
        .collect();
    let (fx, fy) = (axis(&x_ticks), axis(&y_ticks));
    let lines = polylines(&svg, "#1F77B4");
    assert_eq!(lines.len(), 1, "one data line");
    let line = &lines[0];
    // Fewer points than pixel columns: every value is drawn, in order.
    assert_eq!(line.len(), rows.len(), "a point per message");
    let mut checked = 0;
    for (k, &(t, v)) in rows.iter().enumerate().step_by(rows.len() / 12) {
        let (px, py) = line[k];
        let (ex, ey) = (fx((t - start) as f64 / 1e9), fy(v));
        assert!(
            (px - ex).abs() <= 1.5 && (py - ey).abs() <= 1.5,
            "row {k}: ({t}, {v}) is at ({px}, {py}), axes say ({ex:.1}, {ey:.1})"
        );
        checked += 1;
    }
    assert!(checked >= 5, "{checked}");
    // The values vary, so the check is not of a flat line.
    let (lo, hi) = rows.iter().fold((f64::MAX, f64::MIN), |(a, b), r| (a.min(r.1), b.max(r.1)));
    assert!(hi - lo > 0.5, "{lo}..{hi}");
}

fn png_size(path: &Path) -> (u32, u32) {
    let d = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let r = d.read_info().unwrap();
    (r.info().width, r.info().height)
}

#[test]
fn png_has_the_requested_size_and_draws_lines() {
    let Some(bag) = corpus_bag("png_has_the_requested_size_and_draws_lines") else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("accel.png");
    let o = run(&[
        &"plot",
        &bag,
        &"/imu.angular_velocity.z,/array.data[0]",
        &"/odom.twist.twist.linear.x",
        &"--subplot",
        &"-o",
        &out,
        &"--size",
        &"640x480",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(png_size(&out), (640, 480));
    // The line colours are there (blue for the first series, orange for the second).
    let blue = 640 * 480 - browser::pixels_differing(&out, (0, 0, 640, 480), [31, 119, 180]);
    let orange = 640 * 480 - browser::pixels_differing(&out, (0, 0, 640, 480), [255, 127, 14]);
    assert!(blue > 100 && orange > 50, "blue {blue}, orange {orange}");
}

#[test]
fn xy_slices_and_time_formats() {
    let Some(bag) = corpus_bag("xy_slices_and_time_formats") else { return };
    let dir = tempfile::tempdir().unwrap();
    // A slice: one line per element, labelled with its index.
    let out = dir.path().join("array.svg");
    let o = run(&[&"plot", &bag, &"/array.data[0:3]", &"-o", &out, &"--time-format", &"iso"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    for (k, colour) in ["#1F77B4", "#FF7F0E", "#2CA02C"].iter().enumerate() {
        assert_eq!(polylines(&svg, colour).len(), 1, "line {k}");
        assert!(svg.contains(&format!("/array.data[0:3][{k}]")), "label {k}");
    }
    // ISO ticks are clock times.
    assert!(svg_texts(&svg).iter().any(|(_, l)| l.len() == 12 && l.as_bytes()[2] == b':'), "clock ticks");
    // XY: x from one field, y from another.
    let out = dir.path().join("path.svg");
    let o = run(&[&"plot", &bag, &"/array.data[2]", &"--x", &"/array.data[0]", &"-o", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    let line = &polylines(&svg, "#1F77B4")[0];
    // data[2] is -data[0] in the corpus: the path falls from left to right.
    assert!(line.first().unwrap().1 < line.last().unwrap().1 || line.first().unwrap().0 > line.last().unwrap().0);
}

#[test]
fn plot_errors_are_clear() {
    let Some(bag) = corpus_bag("plot_errors_are_clear") else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.png");
    let o = run(&[&"plot", &bag, &"/imu.linear_acceleration", &"-o", &out]);
    assert_clear_error(
        &o,
        &["/imu.linear_acceleration", "Vector3", "/imu.linear_acceleration.x, /imu.linear_acceleration.y"],
    );
    let o = run(&[&"plot", &bag, &"/imu.header.frame_id", &"-o", &out]);
    assert_clear_error(&o, &["/imu.header.frame_id", "string"]);
    let o = run(&[&"plot", &bag, &"/nope.x", &"-o", &out]);
    assert_clear_error(&o, &["/nope"]);
    let o = run(&[&"plot", &bag, &"/imu.no_such_field", &"-o", &out]);
    assert_clear_error(&o, &["no_such_field"]);
    let o = run(&[&"plot", &bag, &"/imu.angular_velocity.z", &"-o", &dir.path().join("x.pdf")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(".png, .svg or .html"));
    // An existing file is kept without --force, and a non-chart is kept even with it.
    std::fs::write(&out, b"precious").unwrap();
    for force in [false, true] {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"plot", &bag, &"/imu.angular_velocity.z", &"-o", &out];
        if force {
            args.push(&"--force");
        }
        let o = run(&args);
        assert_clear_error(&o, &["x.png"]);
        assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    }
    // A chart is replaced with --force.
    std::fs::remove_file(&out).unwrap();
    assert!(run(&[&"plot", &bag, &"/imu.angular_velocity.z", &"-o", &out]).status.success());
    assert!(run(&[&"plot", &bag, &"/imu.angular_velocity.x", &"-o", &out, &"--force"]).status.success());
    // Nothing half-written is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn html_plot_renders_in_chromium() {
    let test = "html_plot_renders_in_chromium";
    let Some(bag) = corpus_bag(test) else { return };
    let Some(chrome) = browser::available(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chart.html");
    let o = run(&[&"plot", &bag, &"/imu.angular_velocity.z", &"/array.data[0:2]", &"--subplot", &"-o", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    // The page carries the data: the first CSV value of the field is in it.
    let csv = String::from_utf8(run(&[&"echo", &bag, &"/array.data[0]", &"--csv"]).stdout).unwrap();
    let first: f64 = csv.lines().nth(1).unwrap().rsplit(',').next().unwrap().parse().unwrap();
    assert!(html.contains(&format!("{first:?}")) || html.contains(&first.to_string()), "value {first} in the page");
    assert!(!html.contains("http://") && !html.contains("https://"), "nothing to fetch");
    let shot = browser::screenshot_path(test);
    let report = chrome.run(&serde_json::json!({
        "url": format!("file://{}", out.display()),
        "screenshot": shot,
        "width": 1200, "height": 900,
        "steps": [{"waitFor": "window.rbagChartHandle !== undefined"}],
        "evaluate": "document.querySelectorAll('canvas').length",
    }));
    assert_eq!(report["errors"], serde_json::json!([]), "{report}");
    assert_eq!(report["offsite"], serde_json::json!([]), "{report}");
    assert_eq!(report["result"], 1, "{report}");
    // Inside the first panel's plot area, line pixels differ from the white background.
    let drawn = browser::pixels_differing(&shot, (100, 60, 1000, 250), [255, 255, 255]);
    assert!(drawn > 1000, "{drawn} pixels drawn; screenshot {}", shot.display());
}

// --- export-images -------------------------------------------------------------------------

const HEADER_DEF: &str = "\n================================================================================\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";

fn image_connection(topic: &str, compressed: bool) -> Connection {
    let (ty, def, md5) = if compressed {
        (
            "sensor_msgs/CompressedImage",
            "std_msgs/Header header\nstring format\nuint8[] data\n",
            "8f7a12909da2c9d3332d540a0977563f",
        )
    } else {
        (
            "sensor_msgs/Image",
            "std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\nuint8[] data\n",
            "060021388200f6f0f447d0fcd9c64743",
        )
    };
    let mut c = Connection {
        topic: topic.into(),
        message_type: ty.into(),
        encoding: "ros1".into(),
        definition: format!("{def}{HEADER_DEF}"),
        definition_encoding: "ros1msg".into(),
        ..Connection::default()
    };
    c.metadata.insert("md5sum".into(), md5.into());
    c.metadata.insert("callerid".into(), "/camera".into());
    c
}

fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s);
}

fn header(out: &mut Vec<u8>, seq: u32, t: u64) {
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
    put_string(out, b"cam");
}

/// A ROS 1 `sensor_msgs/Image`.
fn image_msg(
    seq: u32,
    t: u64,
    (w, h): (u32, u32),
    encoding: &str,
    big_endian: bool,
    step: u32,
    data: &[u8],
) -> Vec<u8> {
    let mut m = Vec::new();
    header(&mut m, seq, t);
    m.extend_from_slice(&h.to_le_bytes());
    m.extend_from_slice(&w.to_le_bytes());
    put_string(&mut m, encoding.as_bytes());
    m.push(u8::from(big_endian));
    m.extend_from_slice(&step.to_le_bytes());
    put_string(&mut m, data);
    m
}

/// Per encoding: bytes per pixel, and the pixel (as Pillow gives it) of sample bytes `px`.
fn expected_pixel(encoding: &str, big_endian: bool, px: &[u8]) -> Vec<i64> {
    match encoding {
        "mono8" | "bayer_rggb8" => vec![px[0] as i64],
        "mono16" if big_endian => vec![u16::from_be_bytes([px[0], px[1]]) as i64],
        "mono16" => vec![u16::from_le_bytes([px[0], px[1]]) as i64],
        "rgb8" => px.iter().map(|&b| b as i64).collect(),
        "bgr8" => vec![px[2] as i64, px[1] as i64, px[0] as i64],
        "rgba8" => px.iter().map(|&b| b as i64).collect(),
        _ => unreachable!(),
    }
}

const ENCODINGS: [(&str, usize, bool); 7] = [
    ("mono8", 1, false),
    ("mono16", 2, false),
    ("mono16", 2, true),
    ("rgb8", 3, false),
    ("bgr8", 3, false),
    ("rgba8", 4, false),
    ("bayer_rggb8", 1, false),
];

/// A bag with one topic per encoding (5x3 pixels, rows padded by 3 bytes), and a
/// CompressedImage topic carrying a real PNG; returns the messages' sample bytes per topic.
fn image_bag(dir: &Path) -> (PathBuf, BTreeMap<String, Vec<Vec<u8>>>) {
    let path = dir.join("images.bag");
    let mut w = rbag_storage::create(&path, rbag_storage::Format::Ros1, &Default::default()).unwrap();
    let mut samples = BTreeMap::new();
    let (width, height) = (5u32, 3u32);
    for (e, (encoding, bpp, be)) in ENCODINGS.iter().enumerate() {
        let topic = format!("/cam{e}/image_raw");
        let id = w.add_connection(&image_connection(&topic, false)).unwrap();
        for k in 0..3u32 {
            let step = width * *bpp as u32 + 3;
            let data: Vec<u8> = (0..step * height).map(|i| ((i * 37 + k * 11 + e as u32 * 5) % 251) as u8).collect();
            let t = common::START + u64::from(k) * 100_000_000 + e as u64;
            w.write(id, t, t, &image_msg(k, t, (width, height), encoding, *be, step, &data)).unwrap();
            samples.entry(topic.clone()).or_insert_with(Vec::new).push(data);
        }
    }
    let id = w.add_connection(&image_connection("/cam/compressed", true)).unwrap();
    for k in 0..2u32 {
        let mut png = Vec::new();
        let mut enc = png::Encoder::new(&mut png, 2, 2);
        enc.set_color(png::ColorType::Grayscale);
        let mut wr = enc.write_header().unwrap();
        wr.write_image_data(&[k as u8, 1, 2, 3]).unwrap();
        wr.finish().unwrap();
        let t = common::START + u64::from(k) * 100_000_000;
        let mut m = Vec::new();
        header(&mut m, k, t);
        put_string(&mut m, b"png");
        put_string(&mut m, &png);
        w.write(id, t, t, &m).unwrap();
        samples.entry("/cam/compressed".to_string()).or_insert_with(Vec::new).push(png);
    }
    w.finish().unwrap();
    (path, samples)
}

#[test]
fn exported_pngs_hold_each_encodings_pixels() {
    let test = "exported_pngs_hold_each_encodings_pixels";
    let Some(python) = rbag_testkit::oracle_python(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (bag, samples) = image_bag(dir.path());
    for (e, (encoding, bpp, be)) in ENCODINGS.iter().enumerate() {
        let topic = format!("/cam{e}/image_raw");
        let out = dir.path().join(format!("out{e}"));
        let o = run(&[&"export-images", &bag, &topic, &"-o", &out]);
        assert!(o.status.success(), "{encoding}: {}", stderr(&o));
        let mut files: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        assert_eq!(files.len(), 3, "{encoding}");
        // Names carry the place and the log time.
        let name = files[1].file_name().unwrap().to_string_lossy().into_owned();
        let t = common::START + 100_000_000 + e as u64;
        assert_eq!(name, format!("000001_{}.{:09}.png", t / 1_000_000_000, t % 1_000_000_000));
        for (k, file) in files.iter().enumerate() {
            // Pillow's pixels, row by row.
            let script = "import sys, json; from PIL import Image\nim = Image.open(sys.argv[1])\nprint(json.dumps({'mode': im.mode, 'size': im.size, 'px': [list(p) if isinstance(p, tuple) else [p] for p in im.getdata()]}))";
            let o = Command::new(&python).args(["-c", script]).arg(file).output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(got["size"], serde_json::json!([5, 3]), "{encoding}");
            let data = &samples[&topic][k];
            let step = 5 * bpp + 3;
            let mut want = Vec::new();
            for r in 0..3 {
                for c in 0..5 {
                    let at = r * step + c * bpp;
                    want.push(expected_pixel(encoding, *be, &data[at..at + bpp]));
                }
            }
            let got: Vec<Vec<i64>> = serde_json::from_value(got["px"].clone()).unwrap();
            assert_eq!(got, want, "{encoding} frame {k}");
        }
    }
    // CompressedImage: the recorded bytes, as they were.
    let out = dir.path().join("compressed");
    let o = run(&[&"export-images", &bag, &"/cam/compressed", &"-o", &out, &"--every", &"1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 2);
    for (f, want) in files.iter().zip(&samples["/cam/compressed"]) {
        assert_eq!(f.extension().unwrap(), "png");
        assert_eq!(&std::fs::read(f).unwrap(), want, "byte-identical");
    }
}

#[test]
fn export_images_every_window_video_and_errors() {
    let test = "export_images_every_window_video_and_errors";
    let dir = tempfile::tempdir().unwrap();
    let (bag, _) = image_bag(dir.path());
    let out = dir.path().join("every");
    let o = run(&[&"export-images", &bag, &"/cam3/image_raw", &"-o", &out, &"--every", &"2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names.len(), 2);
    assert!(names[0].starts_with("000000_") && names[1].starts_with("000002_"), "{names:?}");
    // A window: only the middle frame.
    let out = dir.path().join("window");
    let o = run(&[&"export-images", &bag, &"/cam3/image_raw", &"-o", &out, &"--start", &"+0.05", &"--end", &"+0.15"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    // Existing frames are not replaced without --force.
    let o = run(&[&"export-images", &bag, &"/cam3/image_raw", &"-o", &out, &"--start", &"+0.05", &"--end", &"+0.15"]);
    assert_clear_error(&o, &["000000_", "exists"]);
    // With --force a frame is replaced only by a frame: a file of its name holding something
    // else is kept.
    let frame = std::fs::read_dir(&out).unwrap().next().unwrap().unwrap().path();
    std::fs::write(&frame, b"notes").unwrap();
    let o = run(&[
        &"export-images",
        &bag,
        &"/cam3/image_raw",
        &"-o",
        &out,
        &"--start",
        &"+0.05",
        &"--end",
        &"+0.15",
        &"--force",
    ]);
    assert_clear_error(&o, &["000000_", "not an image"]);
    assert_eq!(std::fs::read(&frame).unwrap(), b"notes");
    // Not an image topic; no such topic.
    let corpus_bag = common::sample_bag(dir.path(), "sample.bag", 1);
    let topic = rbag_storage::open(&corpus_bag).unwrap().connections().first().unwrap().topic.clone();
    let o = run(&[&"export-images", &corpus_bag, &topic, &"-o", &dir.path().join("no")]);
    assert_clear_error(&o, &[&topic, "not sensor_msgs/Image"]);
    let o = run(&[&"export-images", &bag, &"/nope", &"-o", &dir.path().join("no")]);
    assert_clear_error(&o, &["/nope"]);
    // A video through ffmpeg, checked by ffprobe.
    if Command::new("ffmpeg").arg("-version").output().is_err() {
        rbag_testkit::skip(test, "ffmpeg is not installed (run scripts/setup-peers.sh)");
        return;
    }
    let video = dir.path().join("cam.mp4");
    let o = run(&[&"export-images", &bag, &"/cam4/image_raw", &"--video", &video]);
    assert!(o.status.success(), "{}", stderr(&o));
    let probe = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-count_frames",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=nb_read_frames,width,height",
            "-of",
            "json",
        ])
        .arg(&video)
        .output()
        .unwrap();
    let p: serde_json::Value = serde_json::from_slice(&probe.stdout).unwrap();
    assert_eq!(p["streams"][0]["nb_read_frames"], "3", "{p}");
    // Odd sizes are padded to even for yuv420p.
    assert_eq!((p["streams"][0]["width"].as_u64(), p["streams"][0]["height"].as_u64()), (Some(6), Some(4)));
    // An existing video is kept without --force; a file that is not a video is kept even with it.
    let o = run(&[&"export-images", &bag, &"/cam4/image_raw", &"--video", &video]);
    assert_clear_error(&o, &["cam.mp4", "--force"]);
    let notes = dir.path().join("notes.mp4");
    std::fs::write(&notes, b"notes").unwrap();
    let o = run(&[&"export-images", &bag, &"/cam4/image_raw", &"--video", &notes, &"--force"]);
    assert_clear_error(&o, &["notes.mp4"]);
    assert_eq!(std::fs::read(&notes).unwrap(), b"notes");
    assert!(run(&[&"export-images", &bag, &"/cam4/image_raw", &"--video", &video, &"--force"]).status.success());
    // A compressed topic makes a video too.
    let video2 = dir.path().join("compressed.mkv");
    let o = run(&[&"export-images", &bag, &"/cam/compressed", &"--video", &video2, &"--fps", &"5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::metadata(&video2).unwrap().len() > 0);
    // ffmpeg missing: a clear error, and no video.
    let video3 = dir.path().join("none.mp4");
    let o = common::rbag()
        .args(["export-images"])
        .arg(&bag)
        .args(["/cam4/image_raw", "--video"])
        .arg(&video3)
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_clear_error(&o, &["ffmpeg", "not found"]);
    assert!(!video3.exists());
}

#[test]
fn plots_and_images_from_an_s3_url_match_the_local_bag() {
    use rbag_testkit::objects::{Kind, ObjectServer};
    let test = "plots_and_images_from_an_s3_url_match_the_local_bag";
    let Some(bag) = corpus_bag(test) else { return };
    let Some(server) = ObjectServer::start(test, Kind::S3) else { return };
    server.create_bucket("view");
    server.put("view", "multi_lz4.bag", &bag);
    let url = server.url("view", "multi_lz4.bag");
    let env = server.env();
    let dir = tempfile::tempdir().unwrap();
    let (local, remote) = (dir.path().join("local.svg"), dir.path().join("remote.svg"));
    assert!(run(&[&"plot", &bag, &"/imu.angular_velocity.z", &"-o", &local, &"--title", &"t"]).status.success());
    let o = common::rbag()
        .args(["plot", &url, "/imu.angular_velocity.z", "--title", "t", "-o"])
        .arg(&remote)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env_remove("AWS_PROFILE")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&local).unwrap(), std::fs::read(&remote).unwrap(), "the same chart");
    let frames = dir.path().join("frames");
    let o = common::rbag()
        .args(["export-images", &url, "/camera/image_raw", "--every", "10", "-o"])
        .arg(&frames)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env_remove("AWS_PROFILE")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&frames).unwrap().count(), 3);
}

#[test]
fn a_long_series_is_reduced_per_pixel_column_and_keeps_its_spike() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.bag");
    let mut w = rbag_storage::create(&path, rbag_storage::Format::Ros1, &Default::default()).unwrap();
    let id = w.add_connection(&rbag_testkit::sample::float64_connection("/level")).unwrap();
    let n = 200_000u64;
    for i in 0..n {
        let v = if i == 123_457 { 50.0 } else { (i as f64 / 1000.0).sin() };
        let t = common::START + i * 1_000_000;
        w.write(id, t, t, &v.to_le_bytes()).unwrap();
    }
    w.finish().unwrap();
    let out = dir.path().join("long.svg");
    let o = run(&[&"plot", &path, &"/level.data", &"-o", &out, &"--size", &"800x400"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    let line = &polylines(&svg, "#1F77B4")[0];
    assert!(line.len() <= 4 * 800, "{} points drawn for 800 columns", line.len());
    assert!(line.len() > 500, "{}", line.len());
    // The spike is the top of the y range: the highest point drawn is at the plot's top margin,
    // far above every other point.
    let mut ys: Vec<f64> = line.iter().map(|p| p.1).collect();
    ys.sort_by(f64::total_cmp);
    assert!(ys[1] - ys[0] > 100.0, "the spike stands out: {} vs {}", ys[0], ys[1]);
    // The points stay in time order.
    assert!(line.windows(2).all(|w| w[0].0 <= w[1].0));
}
