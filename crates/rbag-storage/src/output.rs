//! Safe outputs: every verb that writes a bag goes through here, so that no spelling of a path,
//! link or request to replace can destroy an input or a file rbag did not write.
//!
//! Three rules, enforced by construction:
//! - **Identity, not spelling.** An output is compared with every input by device and inode,
//!   after resolving symlinks and `..`: an output that is an input, contains one, or lies
//!   inside an input's bag directory is refused, whether or not replacing is allowed.
//! - **Staged writing.** A bag is written under a hidden temporary name in the output's own
//!   directory, synced, and renamed into place only when complete. A run that fails leaves
//!   nothing behind; one that is killed leaves only the hidden temporary, never a file under
//!   the output's name that looks complete.
//! - **Replace only what is provably a bag.** An existing output is replaced only when asked,
//!   only after the new one is complete, and only when it is a bag file, or a rosbag2
//!   directory holding exactly `metadata.yaml` and the files it lists. Symlinks, devices,
//!   FIFOs and directories with anything else in them are refused, naming the stray file.
//!
//! In-place rewrites (reindex, recompress) keep the original as a backup named by
//! [`backup_path`], which never overwrites an earlier backup.

use std::ffi::{OsStr, OsString};
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use crate::rosbag2::metadata::{BagMetadata, FILE_NAME};
use crate::{Error, Result, StorageWriter};

/// What a writing verb asks of its output.
#[derive(Debug, Clone, Default)]
pub struct OutputPolicy {
    /// The inputs the output must never touch: files or bag directories.
    pub inputs: Vec<PathBuf>,
    /// Replace an existing output that is provably a bag (what a front end's "force" asks).
    pub replace: bool,
}

/// What an existing output is, and so what replacing it removes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Existing {
    None,
    /// A bag file (or an empty file).
    File,
    /// An empty directory, or a rosbag2 directory: metadata.yaml plus exactly these files.
    Dir(Vec<OsString>),
}

/// An output that passed every check: where it goes and what it would replace.
#[derive(Debug, Clone)]
pub struct CheckedOutput {
    /// The output as the caller spelled it (for messages and the final rename).
    path: PathBuf,
    existing: Existing,
    /// Device and inode of the existing output, re-checked before replacing it.
    identity: Option<(u64, u64)>,
}

impl CheckedOutput {
    /// The output path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether something is there now that committing will replace.
    pub fn replaces(&self) -> bool {
        self.existing != Existing::None
    }
}

/// Checks `output` against `policy` before anything is written or removed.
///
/// Fails when the output is or contains an input, lies inside an input's bag directory, is a
/// symlink, device, FIFO or socket, exists while replacing is not allowed, or exists but is not
/// provably a bag.
pub fn check(output: &Path, policy: &OutputPolicy) -> Result<CheckedOutput> {
    check_with(output, policy, "a bag", &|path| crate::detect(path).is_ok())
}

/// [`check`] for outputs that are not bags: an existing file is replaced only when `ours`
/// says rbag could have written it (a Parquet file by its magic, say), or when it is empty.
/// `kind` names what it should be (`"a Parquet file"`), for the refusal.
pub fn check_with(
    output: &Path,
    policy: &OutputPolicy,
    kind: &str,
    ours: &dyn Fn(&Path) -> bool,
) -> Result<CheckedOutput> {
    let out_meta = match std::fs::symlink_metadata(output) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(output, e)),
    };
    if let Some(m) = &out_meta {
        let ft = m.file_type();
        if ft.is_symlink() {
            return Err(unsafe_output(
                output,
                "it is a symbolic link; rbag writes only to a plain file or directory, never through a link",
            ));
        }
        if !ft.is_file() && !ft.is_dir() {
            return Err(unsafe_output(output, "it is a device, FIFO or socket, not a file"));
        }
    }
    let out_real = resolve(output)?;
    if out_real.parent().is_none() {
        return Err(unsafe_output(output, "it is the root directory"));
    }
    let out_ids = identities(output, out_meta.as_ref());
    for input in &policy.inputs {
        let in_meta = std::fs::metadata(input).map_err(|e| Error::io(input, e))?;
        let in_real = std::fs::canonicalize(input).map_err(|e| Error::io(input, e))?;
        let conflict = if in_real == out_real {
            Some("it is the same file as the input")
        } else if in_real.starts_with(&out_real) {
            Some("it contains the input")
        } else if in_meta.is_dir() && out_real.starts_with(&in_real) {
            Some("it lies inside the input bag directory")
        } else if enclosing_bag(&in_real).is_some_and(|bag| out_real.starts_with(bag)) {
            Some("it lies inside the bag directory the input belongs to")
        } else {
            let in_ids = identities(input, Some(&in_meta));
            in_ids
                .iter()
                .any(|i| out_ids.contains(i))
                .then_some("it is the same file as the input (a hard link or another path to it)")
        };
        if let Some(how) = conflict {
            return Err(Error::OutputIsInput { output: output.into(), input: input.clone(), how });
        }
    }
    let Some(meta) = out_meta else {
        return Ok(CheckedOutput { path: output.into(), existing: Existing::None, identity: None });
    };
    if !policy.replace {
        return Err(Error::OutputExists { path: output.into() });
    }
    let existing =
        if meta.is_dir() { Existing::Dir(bag_dir_files(output)?) } else { our_file(output, &meta, kind, ours)? };
    Ok(CheckedOutput { path: output.into(), existing, identity: Some((meta.dev(), meta.ino())) })
}

fn unsafe_output(path: &Path, reason: &str) -> Error {
    Error::UnsafeOutput { path: path.into(), reason: reason.into() }
}

/// The absolute, symlink-free path `path` has or would have: the deepest existing ancestor is
/// canonicalized and the rest appended, with `.` and `..` folded.
fn resolve(path: &Path) -> Result<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_err(|e| Error::io(path, e))?.join(path)
    };
    let mut missing: Vec<OsString> = Vec::new();
    let mut base = abs.as_path();
    loop {
        match std::fs::canonicalize(base) {
            Ok(mut real) => {
                for name in missing.iter().rev() {
                    match name.as_os_str() {
                        n if n == OsStr::new("..") => {
                            real.pop();
                        }
                        n if n == OsStr::new(".") => {}
                        n => real.push(n),
                    }
                }
                return Ok(real);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let Some(parent) = base.parent() else { return Err(Error::io(path, e)) };
                match base.components().next_back() {
                    Some(Component::Normal(n)) => missing.push(n.to_os_string()),
                    Some(Component::ParentDir) => missing.push("..".into()),
                    _ => missing.push(".".into()),
                }
                base = parent;
            }
            Err(e) => return Err(Error::io(path, e)),
        }
    }
}

/// Device and inode of `path` and, for a directory, of the entries directly in it: what
/// replacing it could remove, and what reading it reads.
fn identities(path: &Path, meta: Option<&Metadata>) -> Vec<(u64, u64)> {
    let Some(meta) = meta else { return Vec::new() };
    let mut ids = vec![(meta.dev(), meta.ino())];
    if meta.is_dir() {
        if let Ok(entries) = std::fs::read_dir(path) {
            ids.extend(entries.flatten().filter_map(|e| e.metadata().ok()).map(|m| (m.dev(), m.ino())));
        }
    }
    ids
}

/// The rosbag2 directory a storage file belongs to: its parent, when that holds metadata.yaml.
fn enclosing_bag(file: &Path) -> Option<&Path> {
    let parent = file.parent()?;
    (file.is_file() && parent.join(FILE_NAME).is_file()).then_some(parent)
}

/// An existing file may be replaced only when it is what rbag writes there (or empty).
fn our_file(path: &Path, meta: &Metadata, kind: &str, ours: &dyn Fn(&Path) -> bool) -> Result<Existing> {
    if meta.len() == 0 || ours(path) {
        Ok(Existing::File)
    } else {
        Err(unsafe_output(
            path,
            &format!("it exists and is not {kind}; rbag replaces only files it could have written"),
        ))
    }
}

/// What replacing a directory removes: nothing for an empty one; for a rosbag2 bag exactly
/// metadata.yaml and the files it lists (with SQLite's `-wal`/`-shm`/`-journal` beside them).
/// Anything else in it is an error naming the stray entry.
fn bag_dir_files(dir: &Path) -> Result<Vec<OsString>> {
    let mut entries = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        entries.push((e.file_name(), e.file_type().map_err(|err| Error::io(e.path(), err))?));
    }
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let meta_path = dir.join(FILE_NAME);
    if !entries.iter().any(|(n, t)| n == FILE_NAME && t.is_file()) {
        return Err(unsafe_output(
            dir,
            "it is a directory that is not a rosbag2 bag (no metadata.yaml); rbag will not remove it",
        ));
    }
    let meta = BagMetadata::read(&meta_path).map_err(|e| {
        unsafe_output(dir, &format!("its metadata.yaml does not read as a bag's ({e}); rbag will not remove it"))
    })?;
    let mut allowed: Vec<OsString> = vec![FILE_NAME.into()];
    for f in &meta.relative_file_paths {
        let name = Path::new(f);
        if name.components().count() != 1 || !matches!(name.components().next(), Some(Component::Normal(_))) {
            return Err(unsafe_output(
                dir,
                &format!(
                    "its metadata.yaml lists {f:?}, which is not a file directly in the bag; rbag will not remove it"
                ),
            ));
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            allowed.push(format!("{f}{suffix}").into());
        }
    }
    for (name, ty) in &entries {
        if !allowed.contains(name) || !ty.is_file() {
            return Err(unsafe_output(
                dir,
                &format!(
                    "it holds {:?}, which its metadata.yaml does not list; rbag removes only a bag's own files",
                    name
                ),
            ));
        }
    }
    Ok(entries.into_iter().map(|(n, _)| n).collect())
}

/// Removes what a checked output would replace, now: for writers that cannot stage (a live
/// recording, whose partial bag must stay visible). Only a bag, as [`check`] proved.
pub fn discard(checked: CheckedOutput) -> Result<()> {
    remove_replaced(&checked.path, &checked.existing)
}

/// A fresh hidden name beside `target` for writing it: `.NAME.rbag-PID-N.partial`.
pub(crate) fn staging_path(target: &Path, what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "bag".into());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.rbag-{}-{n}.{what}", std::process::id()))
}

/// The directory an output goes in.
fn parent_dir(target: &Path) -> &Path {
    target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// An output being written under a temporary name. Dropping it without [`Staged::commit`]
/// removes the temporary.
#[derive(Debug)]
pub struct Staged {
    checked: CheckedOutput,
    temp: PathBuf,
    committed: bool,
}

impl Staged {
    /// Prepares a temporary name for `checked` (nothing is created there yet; the writer
    /// creates a file or a directory). The output's directory must exist: a mistyped path is
    /// an error, not a new tree.
    pub fn new(checked: CheckedOutput) -> Result<Self> {
        let dir = parent_dir(&checked.path);
        if !dir.is_dir() {
            return Err(unsafe_output(&checked.path, &format!("its directory {} does not exist", dir.display())));
        }
        let target = if checked.path.file_name().is_some() { checked.path.clone() } else { resolve(&checked.path)? };
        let temp = staging_path(&target, "partial");
        Ok(Staged { checked: CheckedOutput { path: target, ..checked }, temp, committed: false })
    }

    /// Staging for rewriting `target` in place: the caller moves the original aside (to a
    /// backup) before [`Staged::commit`], which then never replaces anything.
    pub(crate) fn in_place(target: &Path) -> Result<Self> {
        Self::new(CheckedOutput { path: target.into(), existing: Existing::None, identity: None })
    }

    /// Staging for a repaired copy of `input` at `output` (reindex): in place when a `backup`
    /// is given, else a new output checked against the input and replaced only with `replace`.
    pub(crate) fn for_repair(input: &Path, output: &Path, backup: Option<&Path>, replace: bool) -> Result<Self> {
        match backup {
            Some(_) => Self::in_place(output),
            None => Self::new(check(output, &OutputPolicy { inputs: vec![input.into()], replace })?),
        }
    }

    /// Commits a repair staged by [`Staged::for_repair`]: the original first moves to its
    /// `backup` (never over an existing file), then the repaired copy takes its place.
    pub(crate) fn commit_repair(self, input: &Path, backup: Option<&Path>) -> Result<()> {
        if let Some(backup) = backup {
            rename_noreplace(input, backup)?;
        }
        self.commit()
    }

    /// Where the writer writes.
    pub fn temp(&self) -> &Path {
        &self.temp
    }

    /// The final name.
    pub fn target(&self) -> &Path {
        &self.checked.path
    }

    /// Syncs the finished output, renames it into place and only then removes what it
    /// replaces.
    pub fn commit(mut self) -> Result<()> {
        sync_tree(&self.temp)?;
        let target = self.checked.path.clone();
        match &self.checked.existing {
            Existing::None => rename_noreplace(&self.temp, &target)?,
            existing => {
                // The output must still be what was checked: never replace something that
                // appeared or changed in between.
                let now = std::fs::symlink_metadata(&target).map_err(|e| Error::io(&target, e))?;
                if Some((now.dev(), now.ino())) != self.checked.identity || now.file_type().is_symlink() {
                    return Err(unsafe_output(&target, "it changed while rbag was writing; nothing was replaced"));
                }
                let temp_is_file = std::fs::symlink_metadata(&self.temp).map(|m| m.is_file()).unwrap_or(false);
                if *existing == Existing::File && temp_is_file {
                    std::fs::rename(&self.temp, &target).map_err(|e| Error::io(&target, e))?;
                } else {
                    // Move the old one aside, the new one in, then remove only the old
                    // bag's own files.
                    let aside = staging_path(&target, "replaced");
                    std::fs::rename(&target, &aside).map_err(|e| Error::io(&target, e))?;
                    if let Err(e) = std::fs::rename(&self.temp, &target) {
                        let _ = std::fs::rename(&aside, &target);
                        return Err(Error::io(&target, e));
                    }
                    remove_replaced(&aside, existing)?;
                }
            }
        }
        sync_dir(parent_dir(&target));
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            remove_temp(&self.temp);
        }
    }
}

/// Removes a temporary this process made (a file, or a directory of its own files).
fn remove_temp(temp: &Path) {
    match std::fs::symlink_metadata(temp) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(temp);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(temp);
        }
        Err(_) => {}
    }
    for side in ["-wal", "-shm", "-journal"] {
        let mut s = temp.as_os_str().to_os_string();
        s.push(side);
        let _ = std::fs::remove_file(PathBuf::from(s));
    }
}

/// Removes the replaced output, moved aside to `aside`: a file, or the checked files of a bag
/// directory and then the directory (left in place if anything new appeared in it).
fn remove_replaced(aside: &Path, existing: &Existing) -> Result<()> {
    match existing {
        Existing::None => Ok(()),
        Existing::File => std::fs::remove_file(aside).map_err(|e| Error::io(aside, e)),
        Existing::Dir(files) => {
            for f in files {
                let p = aside.join(f);
                std::fs::remove_file(&p).map_err(|e| Error::io(&p, e))?;
            }
            std::fs::remove_dir(aside).map_err(|e| Error::io(aside, e))
        }
    }
}

/// `rename` that fails instead of replacing something that appeared at `to` meanwhile.
pub(crate) fn rename_noreplace(from: &Path, to: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| unsafe_output(p, "its name holds a NUL byte"))
    };
    let (f, t) = (c(from)?, c(to)?);
    // SAFETY: two valid NUL-terminated paths; renameat2 reads them and nothing else.
    let rc = unsafe { libc::renameat2(libc::AT_FDCWD, f.as_ptr(), libc::AT_FDCWD, t.as_ptr(), libc::RENAME_NOREPLACE) };
    if rc == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EEXIST) => Err(Error::OutputExists { path: to.into() }),
        // File systems without RENAME_NOREPLACE: check, then rename (a small window).
        Some(libc::EINVAL) | Some(libc::ENOSYS) => {
            if std::fs::symlink_metadata(to).is_ok() {
                return Err(Error::OutputExists { path: to.into() });
            }
            std::fs::rename(from, to).map_err(|e| Error::io(to, e))
        }
        _ => Err(Error::io(to, err)),
    }
}

/// fsyncs a finished file, or every file in a finished directory and the directory itself.
fn sync_tree(path: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        for e in std::fs::read_dir(path).map_err(|e| Error::io(path, e))?.flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                let p = e.path();
                std::fs::File::open(&p).and_then(|f| f.sync_all()).map_err(|e| Error::io(&p, e))?;
            }
        }
        sync_dir(path);
        Ok(())
    } else {
        std::fs::File::open(path).and_then(|f| f.sync_all()).map_err(|e| Error::io(path, e))
    }
}

/// fsyncs a directory so a rename in it survives a crash (best effort: some file systems
/// refuse to sync a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// A [`StorageWriter`] whose bag is written under a temporary name and renamed into place by
/// `finish`. Dropped without `finish` (an error upstream), it removes the temporary.
pub(crate) struct StagedWriter {
    /// Declared before `staged`: fields drop in order, so the inner writer closes its files
    /// before the temporary is removed.
    inner: Option<Box<dyn StorageWriter>>,
    staged: Option<Staged>,
}

impl StagedWriter {
    pub(crate) fn new(inner: Box<dyn StorageWriter>, staged: Staged) -> Self {
        StagedWriter { inner: Some(inner), staged: Some(staged) }
    }

    fn inner(&mut self) -> Result<&mut Box<dyn StorageWriter>> {
        self.inner.as_mut().ok_or_else(|| Error::Poisoned("the bag is closed".into()))
    }
}

impl StorageWriter for StagedWriter {
    fn add_connection(&mut self, conn: &crate::Connection) -> Result<u32> {
        self.inner()?.add_connection(conn)
    }

    fn write(&mut self, conn: u32, log_time: u64, publish_time: u64, data: &[u8]) -> Result<()> {
        self.inner()?.write(conn, log_time, publish_time, data)
    }

    fn checkpoint(&mut self) -> Result<()> {
        self.inner()?.checkpoint()
    }

    fn split_now(&mut self) -> Result<bool> {
        self.inner()?.split_now()
    }

    fn add_attachment(&mut self, attachment: &crate::Attachment) -> Result<bool> {
        self.inner()?.add_attachment(attachment)
    }

    fn add_metadata(&mut self, record: &crate::MetadataRecord) -> Result<bool> {
        self.inner()?.add_metadata(record)
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        let (Some(inner), Some(staged)) = (self.inner.take(), self.staged.take()) else {
            return Err(Error::Poisoned("the bag is closed".into()));
        };
        inner.finish()?;
        staged.commit()
    }
}

/// The backup name for rewriting `path` in place: `X.orig.bag`, or when that exists
/// `X.orig.1.bag`, `X.orig.2.bag`, …: an earlier backup (which may hold the only copy of the
/// original bytes) is never overwritten.
pub fn backup_path(path: &Path) -> PathBuf {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    // Bytes, not UTF-8: a file name that is not valid UTF-8 keeps its exact bytes.
    let name = path.file_name().map(|n| n.as_bytes()).unwrap_or_default();
    let (stem, ext) = match name.iter().rposition(|&b| b == b'.') {
        Some(i) if i > 0 => name.split_at(i),
        _ => (name, &b""[..]),
    };
    let named = |n: Option<u32>| {
        let mut v = stem.to_vec();
        v.extend_from_slice(b".orig");
        if let Some(n) = n {
            v.extend_from_slice(format!(".{n}").as_bytes());
        }
        v.extend_from_slice(ext);
        path.with_file_name(OsString::from_vec(v))
    };
    let mut candidate = named(None);
    let mut n = 1;
    while std::fs::symlink_metadata(&candidate).is_ok() {
        candidate = named(Some(n));
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(inputs: &[&Path], replace: bool) -> OutputPolicy {
        OutputPolicy { inputs: inputs.iter().map(|p| p.to_path_buf()).collect(), replace }
    }

    #[test]
    fn resolve_folds_missing_components() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(resolve(&dir.path().join("a/../b")).unwrap(), real.join("b"));
        assert_eq!(resolve(&dir.path().join("x/./y")).unwrap(), real.join("x/y"));
    }

    #[test]
    fn an_output_spelled_differently_is_still_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.bag");
        std::fs::write(&input, b"#ROSBAG V2.0\n").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for spelling in [dir.path().join("./in.bag"), dir.path().join("sub/../in.bag")] {
            let e = check(&spelling, &policy(&[&input], true)).unwrap_err();
            assert!(matches!(e, Error::OutputIsInput { .. }), "{spelling:?}: {e}");
        }
        std::fs::hard_link(&input, dir.path().join("link.bag")).unwrap();
        let e = check(&dir.path().join("link.bag"), &policy(&[&input], true)).unwrap_err();
        assert!(matches!(e, Error::OutputIsInput { .. }), "{e}");
    }

    #[test]
    fn backups_are_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("t.bag");
        assert_eq!(backup_path(&bag), dir.path().join("t.orig.bag"));
        std::fs::write(dir.path().join("t.orig.bag"), b"").unwrap();
        assert_eq!(backup_path(&bag), dir.path().join("t.orig.1.bag"));
        std::fs::write(dir.path().join("t.orig.1.bag"), b"").unwrap();
        assert_eq!(backup_path(&bag), dir.path().join("t.orig.2.bag"));
    }

    #[test]
    fn a_directory_with_a_stray_file_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join(FILE_NAME), "hello: world\n").unwrap();
        std::fs::write(out.join("thesis.tex"), "x").unwrap();
        let e = check(&out, &policy(&[], true)).unwrap_err();
        assert!(matches!(e, Error::UnsafeOutput { .. }), "{e}");
        assert!(out.join("thesis.tex").exists());
    }
}
