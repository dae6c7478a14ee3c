//! Shared by the fuzz targets that need files on disk.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One directory per fuzzing process, so parallel jobs never share files. Directories left by
/// processes that are gone (every `-fork` job is one) are removed first.
pub fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("rbag-fuzz-").and_then(|p| p.parse::<u32>().ok()) {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let d = tmp.join(format!("rbag-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("create fuzz temp dir");
        d
    })
}
