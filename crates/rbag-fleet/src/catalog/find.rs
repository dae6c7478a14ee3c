//! Finding bags: under local directories (walked) and URL prefixes (listed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rbag_storage::rosbag2::metadata::FILE_NAME;
use rbag_storage::source::{as_url, list_url, open_url, Listed};

use super::Found;
use crate::{Error, Result};

/// The extensions of bag files (compared without regard to case).
const BAG_EXTENSIONS: [&str; 3] = ["bag", "mcap", "db3"];

/// Every bag under `inputs`, sorted by URL or path, each once.
///
/// Each input is:
/// - a local file: itself a bag, whatever its name;
/// - a local directory, walked recursively: every `.bag`, `.mcap` and `.db3` file, and every
///   rosbag2 directory (one holding `metadata.yaml`: one bag, of every file under it, which is
///   not searched further). Names starting with `.` (rbag's own temporaries among them) are
///   skipped, and symbolic links to directories are not followed;
/// - a URL ending in `.bag`, `.mcap` or `.db3`: that object (one `HEAD` request);
/// - any other URL: a prefix (`s3://bucket/runs/`), listed at any depth through the registered
///   lister and read as a directory is. A prefix with no object under it is an error.
///
/// Local bags are named by their absolute path, remote ones by their URL (a rosbag2 prefix
/// with a trailing `/`). See [`Found`] for their sizes and versions.
pub fn find(inputs: &[String]) -> Result<Vec<Found>> {
    let mut found = Vec::new();
    for input in inputs {
        match as_url(Path::new(input)) {
            Some(url) => found.extend(find_url(url)?),
            None => find_local(Path::new(input), &mut found)?,
        }
    }
    found.sort_by(|a, b| a.url_or_path.cmp(&b.url_or_path));
    found.dedup_by(|a, b| a.url_or_path == b.url_or_path);
    Ok(found)
}

/// The form an input takes in bag names: an absolute local path, or the URL as given. Rows
/// of bags under it belong to it (see [`in_scope`]).
pub(crate) fn scope(input: &str) -> String {
    if as_url(Path::new(input)).is_some() {
        return input.to_string();
    }
    match std::fs::canonicalize(input) {
        Ok(p) => p.to_str().map(str::to_string).unwrap_or_else(|| input.to_string()),
        Err(_) => input.to_string(),
    }
}

/// Whether the bag `name` is `scope` or lies under it.
pub(crate) fn in_scope(name: &str, scope: &str) -> bool {
    let trimmed = scope.trim_end_matches('/');
    name == scope || name == trimmed || name.strip_prefix(trimmed).is_some_and(|rest| rest.starts_with('/'))
}

/// Whether a file name is a bag file's.
fn is_bag_name(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && BAG_EXTENSIONS.iter().any(|b| ext.eq_ignore_ascii_case(b)))
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

fn text(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| Error::NotUtf8 { path: PathBuf::from(path.to_string_lossy().into_owned()) })
}

/// A local file's version: its modification time in ns since the epoch.
fn mtime(path: &Path, meta: &std::fs::Metadata) -> Result<String> {
    let modified = meta.modified().map_err(io(path))?;
    Ok(match modified.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos().to_string(),
        Err(e) => format!("-{}", e.duration().as_nanos()),
    })
}

fn find_local(input: &Path, out: &mut Vec<Found>) -> Result<()> {
    let meta = std::fs::metadata(input).map_err(io(input))?;
    let abs = std::fs::canonicalize(input).map_err(io(input))?;
    if meta.is_dir() {
        walk(&abs, out)
    } else {
        out.push(Found { url_or_path: text(&abs)?, size: meta.len(), version: mtime(&abs, &meta)? });
        Ok(())
    }
}

/// The entries of `dir` that are not hidden, sorted by name.
fn entries(dir: &Path) -> Result<Vec<(String, PathBuf, std::fs::Metadata)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io(dir))? {
        let e = e.map_err(io(dir))?;
        let path = e.path();
        // A name that is not UTF-8 is an error only where a bag would be named by it.
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).map_err(io(&path))?;
        out.push((name, path, meta));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<Found>) -> Result<()> {
    if dir.join(FILE_NAME).is_file() {
        out.push(rosbag2_dir(dir)?);
        return Ok(());
    }
    for (name, path, meta) in entries(dir)? {
        if meta.is_dir() {
            walk(&path, out)?;
        } else if is_bag_name(&name) {
            // A link to a bag file is read as the file; a dangling one is skipped.
            let meta = if meta.is_symlink() {
                match std::fs::metadata(&path) {
                    Ok(m) if m.is_file() => m,
                    _ => continue,
                }
            } else if meta.is_file() {
                meta
            } else {
                continue;
            };
            out.push(Found { url_or_path: text(&path)?, size: meta.len(), version: mtime(&path, &meta)? });
        }
    }
    Ok(())
}

/// A rosbag2 directory as one bag: the sum of its files' sizes, and their versions joined
/// (in path order).
fn rosbag2_dir(dir: &Path) -> Result<Found> {
    let mut size = 0u64;
    let mut versions = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for (_, path, meta) in entries(&d)? {
            if meta.is_dir() {
                stack.push(path);
            } else if let Ok(m) = std::fs::metadata(&path).map(|m| (m.is_file(), m)) {
                if m.0 {
                    files.push((path, m.1));
                }
            }
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, meta) in &files {
        size = size.saturating_add(meta.len());
        versions.push(mtime(path, meta)?);
    }
    Ok(Found { url_or_path: text(dir)?, size, version: versions.join(",") })
}

fn find_url(url: &str) -> Result<Vec<Found>> {
    let last = url.rsplit('/').next().unwrap_or_default();
    if !url.ends_with('/') && is_bag_name(last) {
        // One object. Its ETag is not known without a listing: read it every time.
        let source = open_url(url).map_err(Error::Remote)?;
        return Ok(vec![Found { url_or_path: url.to_string(), size: source.len(), version: String::new() }]);
    }
    let listed = list_url(url).map_err(Error::Remote)?;
    if listed.is_empty() {
        return Err(Error::NotFound { url: url.to_string() });
    }
    Ok(group(url, listed))
}

/// Whether any path segment of `url` below the listed `prefix` starts with `.` (a prefix the
/// user names may itself be hidden).
fn hidden_url(prefix: &str, url: &str) -> bool {
    match url.strip_prefix(prefix.trim_end_matches('/')) {
        Some(rest) => rest.split('/').any(|s| s.starts_with('.')),
        None => url.split_once("://").map_or(url, |(_, rest)| rest).split('/').skip(1).any(|s| s.starts_with('.')),
    }
}

/// The bags among the objects under a prefix: bag files, and rosbag2 prefixes (each with every
/// object under it).
pub(crate) fn group(prefix: &str, listed: Vec<Listed>) -> Vec<Found> {
    let mut objects: Vec<Listed> = listed.into_iter().filter(|o| !hidden_url(prefix, &o.url)).collect();
    objects.sort_by(|a, b| a.url.cmp(&b.url));
    let mut dirs: Vec<&str> = objects
        .iter()
        .filter_map(|o| o.url.strip_suffix(FILE_NAME).filter(|d| d.ends_with('/') && !d.ends_with("://")))
        .collect();
    dirs.sort_unstable();
    // A metadata.yaml inside another bag's prefix belongs to that bag.
    let mut outer: Vec<&str> = Vec::new();
    for d in dirs {
        if !outer.last().is_some_and(|o| d.starts_with(o)) {
            outer.push(d);
        }
    }
    let mut members: BTreeMap<&str, Vec<&Listed>> = BTreeMap::new();
    let mut found = Vec::new();
    for o in &objects {
        // The last prefix sorting at or before the URL is the only one that can hold it.
        let i = outer.partition_point(|d| *d <= o.url.as_str());
        match i.checked_sub(1).and_then(|i| outer.get(i)).filter(|d| o.url.starts_with(**d)) {
            Some(d) => members.entry(d).or_default().push(o),
            None if is_bag_name(o.url.rsplit('/').next().unwrap_or_default()) => found.push(Found {
                url_or_path: o.url.clone(),
                size: o.size,
                version: o.version.clone().unwrap_or_default(),
            }),
            None => {}
        }
    }
    for (dir, files) in members {
        let size = files.iter().fold(0u64, |s, f| s.saturating_add(f.size));
        // One file without a version leaves the bag's version unknown.
        let versions: Option<Vec<&str>> = files.iter().map(|f| f.version.as_deref()).collect();
        let version = versions.map(|v| v.join(",")).unwrap_or_default();
        found.push(Found { url_or_path: dir.to_string(), size, version });
    }
    found.sort_by(|a, b| a.url_or_path.cmp(&b.url_or_path));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(url: &str, size: u64) -> Listed {
        Listed { url: url.into(), size, version: Some(format!("\"{size}\"")) }
    }

    #[test]
    fn a_listing_groups_into_bags() {
        let got = group(
            "s3://b/runs",
            vec![
                listed("s3://b/runs/a.bag", 10),
                listed("s3://b/runs/notes.txt", 1),
                listed("s3://b/runs/r2/metadata.yaml", 2),
                listed("s3://b/runs/r2/r2_0.mcap", 30),
                listed("s3://b/runs/r2/r2_1.mcap", 40),
                listed("s3://b/runs/r2/nested/metadata.yaml", 5),
                listed("s3://b/runs/r2x/c.MCAP", 7),
                listed("s3://b/runs/.a.bag.rbag-1-0.partial", 9),
                listed("s3://b/runs/.hidden/d.bag", 9),
            ],
        );
        let names: Vec<_> = got.iter().map(|f| (f.url_or_path.as_str(), f.size)).collect();
        assert_eq!(names, [("s3://b/runs/a.bag", 10), ("s3://b/runs/r2/", 77), ("s3://b/runs/r2x/c.MCAP", 7)]);
        assert_eq!(got[1].version, "\"2\",\"5\",\"30\",\"40\"");
        let hidden = group("s3://b/.cache/", vec![listed("s3://b/.cache/a.bag", 1)]);
        assert_eq!(hidden.len(), 1);
    }

    #[test]
    fn scopes_hold_what_lies_under_them() {
        assert!(in_scope("s3://b/runs/a.bag", "s3://b/runs/"));
        assert!(in_scope("s3://b/runs/a.bag", "s3://b/runs"));
        assert!(!in_scope("s3://b/runs2/a.bag", "s3://b/runs"));
        assert!(in_scope("/d/a.bag", "/d/a.bag"));
        assert!(in_scope("s3://b/runs/r2/", "s3://b/runs/r2"));
        assert!(!in_scope("/d/ab.bag", "/d/a"));
    }

    #[test]
    fn bag_names() {
        assert!(is_bag_name("x.bag") && is_bag_name("x.MCAP") && is_bag_name("y.db3"));
        assert!(!is_bag_name(".bag") && !is_bag_name("x.bag.active") && !is_bag_name("metadata.yaml"));
    }
}
