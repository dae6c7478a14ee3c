//! Definitions from directories of interface files the user gives, for types neither the bag
//! nor the bundled store has.
//!
//! `DIR` may be laid out as
//! - an install prefix (ament or catkin): `DIR/share/<pkg>/msg/*.msg`;
//! - a share directory: `DIR/<pkg>/msg/*.msg`;
//! - one package: `DIR/msg/*.msg`, the package named after `DIR`;
//! - a flat directory: `DIR/*.msg`, the package named after `DIR` (after its parent when `DIR`
//!   is itself a `msg` directory).
//!
//! Besides `.msg`, a ROS 2 registry takes `.srv` and `.action` files (from `srv/` and `action/`
//! beside `msg/`, or from the flat directory) with the types rosidl derives from them
//! ([`Registry::add_srv`], [`Registry::add_action`]); a ROS 1 registry skips them, as ROS 1 bags
//! record only messages. `.idl` files and anything else are skipped.

use std::fs;
use std::path::{Path, PathBuf};

use crate::{definition, Dialect, Error, Registry, Result};

/// The interface kinds: subdirectory and file extension.
const KINDS: [&str; 3] = ["msg", "srv", "action"];

/// Loads every interface file under `dir` (any layout above) into `reg`, in the registry's
/// dialect; returns how many files were read. A definition already in `reg` is replaced.
pub fn load(reg: &mut Registry, dir: &Path) -> Result<usize> {
    let share = dir.join("share");
    if is_package(dir) || has_interface_files(dir)? {
        load_as(reg, dir, &dir_name(dir))
    } else if share.is_dir() {
        load_share(reg, &share)
    } else {
        load_share(reg, dir)
    }
}

/// Loads `dir` as one package named `package`: its `msg/`, `srv/` and `action/` subdirectories
/// if it has any, else the files in `dir` itself. For a package whose directory is named
/// otherwise (Debian's `/usr/share/test_interface_files` holds package `test_msgs`).
pub fn load_as(reg: &mut Registry, dir: &Path, package: &str) -> Result<usize> {
    let flat = !is_package(dir);
    let mut count = 0;
    for kind in KINDS {
        if kind != "msg" && reg.dialect() == Dialect::Ros1 {
            continue;
        }
        let from = if flat { dir.to_path_buf() } else { dir.join(kind) };
        if !from.is_dir() {
            continue;
        }
        for path in files_with_extension(&from, kind)? {
            let text = fs::read_to_string(&path).map_err(|e| io_error(&path, e))?;
            let ty = path.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default();
            let what = path.display().to_string();
            let added = match kind {
                "msg" => definition::parse(&text, reg.dialect(), &what)
                    .map(|def| reg.add_def(&format!("{package}/{ty}"), def)),
                "srv" => reg.add_srv(&format!("{package}/srv/{ty}"), &text),
                _ => reg.add_action(&format!("{package}/action/{ty}"), &text),
            };
            added.map_err(|e| in_file(e, &what))?;
            count += 1;
        }
    }
    Ok(count)
}

/// Each `<pkg>` subdirectory of a share directory that is a package.
fn load_share(reg: &mut Registry, share: &Path) -> Result<usize> {
    let mut count = 0;
    for pkg in sorted_entries(share)? {
        if is_package(&pkg) {
            count += load_as(reg, &pkg, &dir_name(&pkg))?;
        }
    }
    Ok(count)
}

fn is_package(dir: &Path) -> bool {
    KINDS.iter().any(|kind| dir.join(kind).is_dir())
}

fn has_interface_files(dir: &Path) -> Result<bool> {
    Ok(sorted_entries(dir)?.iter().any(|p| p.is_file() && p.extension().is_some_and(|e| KINDS.iter().any(|k| e == *k))))
}

/// The package a directory holds: its name, or its parent's for a `msg`/`srv`/`action` directory.
fn dir_name(dir: &Path) -> String {
    // `canonicalize` names `.` and `pkg/..`; a path that cannot be resolved keeps its last part.
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let dir = if KINDS.iter().any(|k| dir.ends_with(k)) { dir.parent().unwrap_or(&dir) } else { &dir };
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        out.push(entry.map_err(|e| io_error(dir, e))?.path());
    }
    out.sort();
    Ok(out)
}

fn files_with_extension(dir: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    Ok(sorted_entries(dir)?.into_iter().filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext)).collect())
}

/// A parse error of a `.srv`/`.action` part names the derived type (`pkg/srv/X_Request`):
/// put the file first.
fn in_file(e: Error, file: &str) -> Error {
    match e {
        Error::Parse { what, line, reason } if what != file => {
            Error::Parse { what: format!("{file} ({what})"), line, reason }
        }
        other => other,
    }
}

/// An I/O error, naming the path. (Reported as a line-0 parse error of that path until the
/// crate's error type has an I/O variant.)
fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::Parse { what: path.display().to_string(), line: 0, reason: e.to_string() }
}
