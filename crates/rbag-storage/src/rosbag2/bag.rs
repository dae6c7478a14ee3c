//! A rosbag2 bag as one bag: the storage files metadata.yaml lists (or that the directory
//! holds, when it has none), merged in time order with one set of connections.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use super::metadata::{BagMetadata, FILE_NAME, MAX_FILE_LEN};
use crate::mcap::McapReader;
use crate::rosbag2::SqliteReader;
use crate::source::{self, RangeSource};
use crate::{
    CompressionMode, Connection, Error, Filter, Message, MessageIter, ReadOptions, ReadStats, Result, StorageInfo,
    StorageReader, TimeMerge,
};

/// A rosbag2 directory, or a single `.db3`/`.mcap` file, opened for reading.
pub struct Rosbag2Reader {
    path: PathBuf,
    metadata: Option<BagMetadata>,
    files: Vec<Box<dyn StorageReader>>,
    connections: Vec<Connection>,
    /// Per file: its connection id → ours. Empty for a single file (ids are kept).
    maps: Vec<HashMap<u32, u32>>,
    message_compression: bool,
    warnings: Vec<String>,
    /// Decompressed copies of `.zstd` files (file compression mode), removed on drop.
    _unpacked: Option<tempfile::TempDir>,
}

/// The largest message a MESSAGE-mode zstd frame may inflate to.
const MAX_MESSAGE: usize = 1 << 30;

impl Rosbag2Reader {
    /// Opens a bag directory, its metadata.yaml, or one storage file.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Opens a bag directory, its metadata.yaml, or one storage file, with `options` (see
    /// [`ReadOptions`]).
    pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Self> {
        if path.file_name().is_some_and(|n| n == FILE_NAME) {
            return Self::open_with(path.parent().unwrap_or(Path::new(".")), options);
        }
        if path.is_dir() {
            Self::open_dir(path, options)
        } else {
            let (reader, meta) = open_file(path, options)?;
            let metadata = meta.and_then(|text| BagMetadata::parse(&text, path).ok());
            Self::assemble(path, metadata, vec![reader], Vec::new(), None)
        }
    }

    fn open_dir(dir: &Path, options: &ReadOptions) -> Result<Self> {
        let meta_path = dir.join(FILE_NAME);
        let mut warnings = Vec::new();
        let metadata = if meta_path.exists() { Some(BagMetadata::read(&meta_path)?) } else { None };
        let names = match &metadata {
            Some(m) => m.relative_file_paths.clone(),
            None => {
                warnings.push(format!(
                    "{}: no {FILE_NAME}; the storage files were found by name (reindexing the directory writes one)",
                    dir.display()
                ));
                storage_files(dir)?
            }
        };
        if names.is_empty() {
            return Err(Error::UnknownFormat {
                path: dir.into(),
                reason: "the directory holds no .db3 or .mcap files".into(),
            });
        }
        if metadata.is_some() {
            // A killed recorder's last file, or one copied in: never ignored silently.
            let unlisted: Vec<String> = storage_files(dir)?.into_iter().filter(|n| !names.contains(n)).collect();
            if !unlisted.is_empty() {
                warnings.push(format!("{}: {} lists {} storage file(s) but the directory also holds {}, which were not read (a recorder killed before it listed them?)", dir.display(), FILE_NAME, names.len(), unlisted.join(", ")));
            }
        }
        let mut unpacked: Option<tempfile::TempDir> = None;
        let mut files = Vec::new();
        let mut seen: HashMap<(u64, u64), &String> = HashMap::new();
        for name in &names {
            let mut path = dir.join(name);
            if !path.exists() {
                return Err(Error::InFile {
                    path: meta_path.clone(),
                    inner: Box::new(Error::Invalid(format!(
                        "it lists {name}, which is missing from {}",
                        dir.display()
                    ))),
                });
            }
            // Only regular files (opening a FIFO would wait for a writer), each once: two names
            // of one file would read its messages twice.
            let md = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
            if !md.is_file() {
                return Err(Error::InFile {
                    path: meta_path.clone(),
                    inner: Box::new(Error::Invalid(format!("it lists {name}, which is not a regular file"))),
                });
            }
            if let Some(first) =
                seen.insert((std::os::unix::fs::MetadataExt::dev(&md), std::os::unix::fs::MetadataExt::ino(&md)), name)
            {
                return Err(Error::InFile {
                    path: meta_path.clone(),
                    inner: Box::new(Error::Invalid(format!("it lists {first} and {name}, which are the same file"))),
                });
            }
            if name.ends_with(".zstd") {
                path = unzstd(&path, scratch(&mut unpacked)?)?;
            }
            files.push(open_file(&path, options)?.0);
        }
        Self::assemble(dir, metadata, files, warnings, unpacked)
    }

    /// Opens one remote `.mcap`/`.db3` object (`head` holds its first bytes), as
    /// [`open_with`](Self::open_with) opens a local file.
    pub(crate) fn from_source(source: Arc<dyn RangeSource>, head: Bytes, options: &ReadOptions) -> Result<Self> {
        let url = source.url().to_string();
        let mut unpacked = None;
        let (reader, meta) = open_remote_file(source, head, options, &mut unpacked)?;
        let metadata = meta.and_then(|text| BagMetadata::parse(&text, Path::new(&url)).ok());
        Self::assemble(Path::new(&url), metadata, vec![reader], Vec::new(), unpacked)
    }

    /// Opens the rosbag2 directory at the URL prefix `url` (or its metadata.yaml's URL): the
    /// metadata.yaml, then each storage file it lists. `None` when there is no metadata.yaml
    /// to read there; a listed file that cannot be read is an error naming its URL.
    pub(crate) fn from_url_dir(url: &str, options: &ReadOptions) -> Result<Option<Self>> {
        let dir = url.strip_suffix(FILE_NAME).unwrap_or(url).trim_end_matches('/');
        let meta_url = format!("{dir}/{FILE_NAME}");
        let Ok(meta_source) = source::open_url(&meta_url) else { return Ok(None) };
        if meta_source.len() > MAX_FILE_LEN {
            return Err(Error::Remote {
                url: meta_url,
                reason: format!("{} bytes, more than a {FILE_NAME} may hold ({MAX_FILE_LEN})", meta_source.len()),
            });
        }
        let text = meta_source.read(0, meta_source.len())?;
        let text = String::from_utf8_lossy(&text);
        let metadata = BagMetadata::parse(&text, Path::new(&meta_url))?;
        let mut unpacked = None;
        let mut files = Vec::new();
        for name in &metadata.relative_file_paths {
            let file_url = format!("{dir}/{name}");
            let source = source::open_url(&file_url)?;
            if name.ends_with(".zstd") {
                // File compression: the whole file is needed to inflate it.
                let tmp = scratch(&mut unpacked)?;
                let packed = tmp.join(name.rsplit('/').next().unwrap_or(name));
                fetch_whole(&*source, &packed)?;
                let path = unzstd(&packed, tmp)?;
                files.push(open_file(&path, options)?.0);
                continue;
            }
            let head = source::head(&*source)?;
            files.push(open_remote_file(source, head, options, &mut unpacked)?.0);
        }
        Self::assemble(Path::new(dir), Some(metadata), files, Vec::new(), unpacked).map(Some)
    }

    fn assemble(
        path: &Path,
        metadata: Option<BagMetadata>,
        files: Vec<Box<dyn StorageReader>>,
        mut warnings: Vec<String>,
        unpacked: Option<tempfile::TempDir>,
    ) -> Result<Self> {
        for f in &files {
            warnings.extend(f.warnings());
        }
        let mut connections = Vec::new();
        let mut maps = Vec::new();
        if files.len() == 1 {
            connections = files[0].connections().to_vec();
        } else {
            let mut known: HashMap<Connection, u32> = HashMap::new();
            for f in &files {
                let mut map = HashMap::new();
                for c in f.connections() {
                    let key = Connection { id: 0, ..c.clone() };
                    let id = *known.entry(key).or_insert_with(|| {
                        connections.push(Connection { id: connections.len() as u32 + 1, ..c.clone() });
                        connections.len() as u32
                    });
                    map.insert(c.id, id);
                }
                maps.push(map);
            }
        }
        // MESSAGE mode is known from metadata.yaml, or from the copy a single file carries.
        let message_compression = metadata.as_ref().is_some_and(|m| m.compression_mode() == CompressionMode::Message);
        Ok(Rosbag2Reader {
            path: path.into(),
            metadata,
            files,
            connections,
            maps,
            message_compression,
            warnings,
            _unpacked: unpacked,
        })
    }

    /// The parsed metadata.yaml (or the copy stored in a single file), if any.
    pub fn metadata(&self) -> Option<&BagMetadata> {
        self.metadata.as_ref()
    }

    fn global(&self, file: usize, id: u32) -> u32 {
        match self.maps.get(file) {
            Some(m) => m.get(&id).copied().unwrap_or(u32::MAX),
            None => id,
        }
    }
}

/// Opens one storage file by its magic bytes; also returns the metadata.yaml text it carries.
fn open_file(path: &Path, options: &ReadOptions) -> Result<(Box<dyn StorageReader>, Option<String>)> {
    let head = crate::sniff::head(path, 16)?;
    match crate::sniff::file_format(path, &head)? {
        Some(crate::Format::Mcap) => {
            let r = McapReader::open_with(path, options)?;
            let meta = r.bag_metadata();
            Ok((Box::new(r), meta))
        }
        Some(crate::Format::Sqlite3) => {
            let r = SqliteReader::open_with(path, options)?;
            let meta = r.bag_metadata();
            Ok((Box::new(r), meta))
        }
        Some(crate::Format::Ros1) => {
            Err(Error::UnknownFormat { path: path.into(), reason: "a ROS 1 bag inside a rosbag2 directory".into() })
        }
        None => Err(Error::UnknownFormat { path: path.into(), reason: "unrecognised magic bytes".into() }),
    }
}

/// Opens one remote storage file by its magic bytes: MCAP by byte range; SQLite downloaded into
/// the scratch directory first, since SQLite reads through its own file layer (docs/fleet.md).
fn open_remote_file(
    source: Arc<dyn RangeSource>,
    head: Bytes,
    options: &ReadOptions,
    unpacked: &mut Option<tempfile::TempDir>,
) -> Result<(Box<dyn StorageReader>, Option<String>)> {
    let url = source.url().to_string();
    match crate::sniff::file_format(Path::new(&url), &head)? {
        Some(crate::Format::Mcap) => {
            let r = McapReader::from_source(source, head, options)?;
            let meta = r.bag_metadata();
            Ok((Box::new(r), meta))
        }
        Some(crate::Format::Sqlite3) => {
            let name = url.rsplit('/').find(|n| !n.is_empty()).unwrap_or("bag.db3");
            let path = scratch(unpacked)?.join(name);
            fetch_whole(&*source, &path)?;
            let r = SqliteReader::open_with(&path, options)?.shown_as(PathBuf::from(&url));
            let meta = r.bag_metadata();
            Ok((Box::new(r), meta))
        }
        Some(crate::Format::Ros1) => {
            Err(Error::Remote { url, reason: "a ROS 1 bag inside a rosbag2 directory".into() })
        }
        None => Err(Error::Remote { url, reason: "not a bag: unrecognised first bytes".into() }),
    }
}

/// A temporary directory for unpacked and downloaded files, made on first use and removed with
/// the reader.
fn scratch(slot: &mut Option<tempfile::TempDir>) -> Result<&Path> {
    if slot.is_none() {
        let dir = tempfile::Builder::new()
            .prefix("rbag-unpack-")
            .tempdir()
            .map_err(|e| Error::io(std::env::temp_dir(), e))?;
        *slot = Some(dir);
    }
    Ok(slot.as_ref().map(|d| d.path()).unwrap_or(Path::new(".")))
}

/// Downloads all of `source` to `path`.
fn fetch_whole(source: &dyn RangeSource, path: &Path) -> Result<()> {
    let mut file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    source::download(source, &mut file, path)
}

/// `.db3`/`.mcap` (and `.zstd`) files of a directory without metadata.yaml, in split order.
pub(crate) fn storage_files(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| [".db3", ".mcap", ".db3.zstd", ".mcap.zstd"].iter().any(|x| n.ends_with(x)))
        .collect();
    names.sort_by_key(|n| (split_index(n), n.clone()));
    Ok(names)
}

/// The `<n>` of `<name>_<n>.<ext>` (or of rolling's `<n>_<prefix>_<time>.<ext>`).
pub(crate) fn split_index(name: &str) -> u64 {
    let stem = name.split('.').next().unwrap_or(name);
    let tail = stem.rsplit('_').next().unwrap_or("");
    let head = stem.split('_').next().unwrap_or("");
    // Rolling names end in a date (`..._HH_MM_SS`) and put the number first.
    let (first, second) = if stem.contains('-') { (head, tail) } else { (tail, head) };
    first.parse().or_else(|_| second.parse()).unwrap_or(0)
}

/// Decompresses a file-mode `.zstd` storage file into `into`, returning the copy's path. The
/// output is capped at 100 000 times the input (at least 64 MiB), so a decompression bomb
/// cannot fill the disk.
fn unzstd(path: &Path, into: &Path) -> Result<PathBuf> {
    use std::io::Read;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("bag.zstd").trim_end_matches(".zstd").to_string();
    let out_path = into.join(name);
    let bad = |reason: String| Error::InFile {
        path: path.into(),
        inner: Box::new(Error::Decompress { offset: 0, compression: "zstd", reason }),
    };
    let input = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let limit = input.metadata().map_err(|e| Error::io(path, e))?.len().saturating_mul(100_000).max(64 << 20);
    let mut out = std::fs::File::create(&out_path).map_err(|e| Error::io(&out_path, e))?;
    let decoder = zstd::stream::read::Decoder::new(input).map_err(|e| bad(e.to_string()))?;
    let copied = std::io::copy(&mut decoder.take(limit + 1), &mut out).map_err(|e| bad(e.to_string()))?;
    if copied > limit {
        return Err(Error::InFile {
            path: path.into(),
            inner: Box::new(Error::TooLarge { offset: 0, what: "zstd-compressed storage file", len: copied, limit }),
        });
    }
    Ok(out_path)
}

impl StorageReader for Rosbag2Reader {
    fn connections(&self) -> &[Connection] {
        &self.connections
    }

    fn info(&self) -> Result<StorageInfo> {
        let mut info = StorageInfo { indexed: true, ..StorageInfo::default() };
        for (k, f) in self.files.iter().enumerate() {
            let fi = f.info()?;
            info.format = fi.format;
            info.version = fi.version;
            info.files.extend(fi.files);
            info.size_bytes += fi.size_bytes;
            info.indexed &= fi.indexed;
            info.message_count = info.message_count.saturating_add(fi.message_count);
            info.start_ns = [info.start_ns, fi.start_ns].into_iter().flatten().min();
            info.end_ns = [info.end_ns, fi.end_ns].into_iter().flatten().max();
            info.chunk_count += fi.chunk_count;
            for (name, s) in fi.compression {
                let t = info.compression.entry(name).or_default();
                t.chunks += s.chunks;
                t.compressed_bytes = t.compressed_bytes.saturating_add(s.compressed_bytes);
                t.uncompressed_bytes = t.uncompressed_bytes.saturating_add(s.uncompressed_bytes);
            }
            for (id, n) in fi.undeclared {
                // Stand-ins (lenient) have global ids; other undeclared ids keep the file's own.
                let id = self.maps.get(k).and_then(|m| m.get(&id)).copied().unwrap_or(id);
                let u = info.undeclared.entry(id).or_default();
                *u = u.saturating_add(n);
            }
            for (id, s) in fi.connections {
                let t = info.connections.entry(self.global(k, id)).or_default();
                let first = t.message_count == 0;
                t.message_count = t.message_count.saturating_add(s.message_count);
                // A sum is known when every file knows its part.
                let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
                    (Some(a), Some(b)) => Some(a.saturating_add(b)),
                    (None, b) if first => b,
                    _ => None,
                };
                t.data_bytes = add(t.data_bytes, s.data_bytes);
                // MESSAGE-mode payloads are stored compressed: chunk sizes are not theirs.
                t.estimated_bytes =
                    if self.message_compression { None } else { add(t.estimated_bytes, s.estimated_bytes) };
            }
            info.properties.extend(fi.properties);
        }
        if let Some(m) = &self.metadata {
            info.properties.insert("metadata_version".into(), m.version.to_string());
            info.properties.insert("ros_distro".into(), m.ros_distro.clone());
            if !m.compression_mode.is_empty() && m.compression_mode != "NONE" {
                info.properties.insert(
                    "compression".into(),
                    format!("{} {}", m.compression_format, m.compression_mode.to_ascii_lowercase()),
                );
            }
        }
        Ok(info)
    }

    fn messages<'a>(&'a self, filter: &Filter) -> Result<MessageIter<'a>> {
        let mut iters = Vec::with_capacity(self.files.len());
        for f in &self.files {
            iters.push(f.messages(filter)?);
        }
        if iters.len() == 1 && !self.message_compression {
            return iters.pop().ok_or_else(|| Error::Invalid("no files".into()));
        }
        // (A single file in MESSAGE mode still goes through the merge, to inflate payloads.)
        let merged = TimeMerge::new(iters);
        Ok(Box::new(merged.map(move |item| {
            let (file, mut m) = item?;
            m.connection = self.global(file, m.connection);
            if self.message_compression {
                m.data = unzstd_message(&m.data).map_err(|e| e.in_file(&self.path))?;
            }
            Ok(m)
        })))
    }

    fn nth(&self, topic: &str, n: u64) -> Result<Option<Message>> {
        let filter = Filter { topics: vec![topic.into()], ..Filter::default() };
        self.messages(&filter)?.nth(n as usize).transpose()
    }

    fn median_periods(&self) -> Result<BTreeMap<String, u64>> {
        // Each file's median, then the median over files: exact for one file, close for a split
        // bag of one rate.
        let mut per_topic: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for f in &self.files {
            for (t, p) in f.median_periods()? {
                per_topic.entry(t).or_default().push(p);
            }
        }
        Ok(per_topic
            .into_iter()
            .map(|(t, mut v)| {
                v.sort_unstable();
                (t, v[v.len() / 2])
            })
            .collect())
    }

    fn stats(&self) -> ReadStats {
        let mut s = ReadStats::default();
        for f in &self.files {
            s += f.stats();
        }
        s
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn lost(&self) -> Vec<String> {
        self.files.iter().flat_map(|f| f.lost()).collect()
    }

    // Attachments, metadata records and chunks: each file's, in file order (each names its
    // file).
    fn attachments(&self) -> Result<Vec<crate::Attachment>> {
        Ok(self.files.iter().map(|f| f.attachments()).collect::<Result<Vec<_>>>()?.concat())
    }

    fn metadata(&self) -> Result<Vec<crate::MetadataRecord>> {
        Ok(self.files.iter().map(|f| f.metadata()).collect::<Result<Vec<_>>>()?.concat())
    }

    fn chunks(&self) -> Result<Vec<crate::ChunkInfo>> {
        Ok(self.files.iter().map(|f| f.chunks()).collect::<Result<Vec<_>>>()?.concat())
    }

    fn indexed_sizes(&self) -> Result<Option<crate::IndexedSizes>> {
        // MESSAGE-mode payloads are stored compressed: the index sizes are not theirs.
        if self.message_compression {
            return Ok(None);
        }
        let mut out = crate::IndexedSizes { exact: true, ..Default::default() };
        for (k, f) in self.files.iter().enumerate() {
            let Some(s) = f.indexed_sizes()? else { return Ok(None) };
            out.exact &= s.exact;
            for (id, b) in s.bytes {
                *out.bytes.entry(self.global(k, id)).or_default() += b;
            }
        }
        Ok(Some(out))
    }
}

/// One MESSAGE-mode payload: a complete zstd frame that states its size.
/// The payload is paid for from the memory budget (see [`crate::budget`]) while it lives.
fn unzstd_message(data: &[u8]) -> Result<bytes::Bytes> {
    let bad = |reason: String| Error::Decompress { offset: 0, compression: "zstd", reason };
    let size =
        zstd::zstd_safe::get_frame_content_size(data).map_err(|_| bad("the message is not a zstd frame".into()))?;
    let size = size.ok_or_else(|| bad("the message's zstd frame does not state its size".into()))?;
    if size > MAX_MESSAGE as u64 {
        return Err(Error::TooLarge { offset: 0, what: "zstd message", len: size, limit: MAX_MESSAGE as u64 });
    }
    let (mut out, paid) = crate::budget::buffer(size, 0, "zstd message")?;
    zstd::bulk::Decompressor::new()
        .and_then(|mut d| d.decompress_to_buffer(data, &mut out))
        .map_err(|e| bad(e.to_string()))?;
    if out.len() as u64 != size {
        return Err(bad(format!("the frame says {size} bytes, it holds {}", out.len())));
    }
    Ok(crate::budget::Budgeted::bytes(out, paid))
}

#[cfg(test)]
mod tests {
    use super::split_index;

    #[test]
    fn split_numbers_from_names() {
        assert_eq!(split_index("wbag_3.db3"), 3);
        assert_eq!(split_index("bag_12.mcap.zstd"), 12);
        assert_eq!(split_index("2_rec_2026_01_01-10_00_00.mcap"), 2);
    }
}
