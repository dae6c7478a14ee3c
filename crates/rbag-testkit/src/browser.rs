//! Headless Chromium for tests of rbag's web output (plot HTML, `rbag serve`'s page): Debian's
//! `chromium`, driven over the DevTools protocol by playwright-core (npm, in `.peers/web`) with
//! `web/browser.mjs`. Screenshots are kept under `target/screenshots/` as build artefacts.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::{repo_root, skip};

/// A browser the tests can drive.
pub struct Browser {
    modules: PathBuf,
}

/// Node, Debian's chromium and playwright-core, or `None` after recording a skip.
pub fn available(test: &str) -> Option<Browser> {
    let modules = repo_root().join(".peers/web/node_modules");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let missing = if !node {
        "node is not installed"
    } else if !Path::new("/usr/bin/chromium").exists() {
        "Debian's chromium is not installed"
    } else if !modules.join("playwright-core").is_dir() {
        "playwright-core is not in .peers/web"
    } else {
        return Some(Browser { modules });
    };
    skip(test, &format!("{missing} (run scripts/setup-peers.sh)"));
    None
}

/// Where a test's screenshot goes: `target/screenshots/<name>.png`.
pub fn screenshot_path(name: &str) -> PathBuf {
    let dir = repo_root().join("target/screenshots");
    std::fs::create_dir_all(&dir).expect("create target/screenshots");
    dir.join(format!("{name}.png"))
}

impl Browser {
    /// Runs `spec` (see web/browser.mjs) and returns its report: `errors` (console errors,
    /// page errors, failed requests), `offsite` (requests that left loopback) and `result`.
    pub fn run(&self, spec: &Value) -> Value {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("web/browser.mjs");
        let out = Command::new("node")
            .arg(script)
            .arg(spec.to_string())
            .env("RBAG_WEB_MODULES", &self.modules)
            .output()
            .expect("run node");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last = stdout.lines().last().unwrap_or_default();
        serde_json::from_str(last).unwrap_or_else(|e| {
            panic!("browser.mjs gave no report ({e}): {stdout}\n{}", String::from_utf8_lossy(&out.stderr))
        })
    }
}

/// Pixels of a PNG screenshot inside `(x, y, w, h)` whose colour differs from `background`.
pub fn pixels_differing(png_path: &Path, (x, y, w, h): (u32, u32, u32, u32), background: [u8; 3]) -> usize {
    let file = std::fs::File::open(png_path).expect("open screenshot");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    let mut n = 0;
    for row in y..(y + h).min(info.height) {
        for col in x..(x + w).min(info.width) {
            let i = (row as usize * info.width as usize + col as usize) * channels;
            let px = &buf[i..i + 3.min(channels)];
            if channels >= 3 && px != background || channels < 3 && px[0] != background[0] {
                n += 1;
            }
        }
    }
    n
}
