//! `rbag export`: every topic (or the chosen ones) of a bag as one file per topic, in
//! Parquet, Arrow IPC or CSV, with the columns of [`crate::columns`].
//!
//! Files are named after their topic, without the leading `/` and with `/` as `.`
//! (`/camera/image_raw` → `camera.image_raw.parquet`; ROS topic names hold no `.`). Each is
//! written under a temporary name and renamed into place when complete; an existing file is
//! replaced only when asked, and only when rbag could have written it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use rbag_bag::decode::TypeSources;
use rbag_bag::output::{check_with, OutputPolicy, Staged};
use rbag_bag::Bag;

use crate::{Error, TableOptions, TopicBatches};

/// The file format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Apache Parquet, zstd-compressed.
    Parquet,
    /// The Arrow IPC file format (Feather v2), uncompressed so that readers can map it.
    Arrow,
    /// CSV with a header; arrays and nested messages are JSON text in their cell.
    Csv,
}

impl ExportFormat {
    /// Every format, for help texts.
    pub const ALL: [ExportFormat; 3] = [ExportFormat::Parquet, ExportFormat::Arrow, ExportFormat::Csv];

    /// The format's name, which is also its files' extension.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Parquet => "parquet",
            ExportFormat::Arrow => "arrow",
            ExportFormat::Csv => "csv",
        }
    }

    /// The format called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// What a file of this format is, for a refusal to replace one that is not.
    fn kind(self) -> &'static str {
        match self {
            ExportFormat::Parquet => "a Parquet file",
            ExportFormat::Arrow => "an Arrow IPC file",
            ExportFormat::Csv => "a CSV file that rbag wrote",
        }
    }

    /// Whether the file at `path` is one this format writes: what may be replaced.
    fn is_ours(self, path: &Path) -> bool {
        let mut head = [0u8; 8];
        let n = File::open(path).and_then(|mut f| std::io::Read::read(&mut f, &mut head)).unwrap_or(0);
        match self {
            ExportFormat::Parquet => head[..n].starts_with(b"PAR1"),
            ExportFormat::Arrow => head[..n].starts_with(b"ARROW1"),
            ExportFormat::Csv => head[..n].starts_with(crate::columns::LOG_TIME.as_bytes()),
        }
    }
}

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The format.
    pub format: ExportFormat,
    /// The topics; every decodable topic when empty.
    pub topics: Vec<String>,
    /// Only messages at or after this log time (ns).
    pub start: Option<u64>,
    /// Only messages before this log time (ns).
    pub end: Option<u64>,
    /// Replace existing files that rbag could have written.
    pub replace: bool,
}

/// One file written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedTopic {
    /// The topic.
    pub topic: String,
    /// The file.
    pub path: PathBuf,
    /// Its rows (messages).
    pub rows: u64,
    /// Its columns, `log_time` included.
    pub columns: usize,
    /// Columns left out because the format cannot hold them (Parquet has no empty structs:
    /// ROS 2 messages without fields), which hold no values.
    pub left_out: Vec<String>,
}

/// What an export wrote and left out.
#[derive(Debug, Default)]
pub struct ExportReport {
    /// The files, in topic order.
    pub files: Vec<ExportedTopic>,
    /// Topics left out (only when none were chosen), with the reason.
    pub skipped: Vec<(String, String)>,
}

/// The file name of `topic`'s export.
pub fn file_name(topic: &str, format: ExportFormat) -> String {
    let stem = topic.trim_start_matches('/').replace('/', ".");
    let stem = if stem.is_empty() { "_".to_string() } else { stem };
    format!("{stem}.{}", format.name())
}

/// Exports the topics of `bag` into directory `dir` (created if missing; its parent must
/// exist). `progress` is told the rows of each batch written.
pub fn export(
    bag: &Bag,
    types: &TypeSources,
    dir: &Path,
    options: &ExportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ExportReport, Error> {
    let explicit = !options.topics.is_empty();
    bag.check_topics(&options.topics)?;
    let mut topics: Vec<String> =
        if explicit { options.topics.clone() } else { bag.connections().iter().map(|c| c.topic.clone()).collect() };
    topics.sort();
    topics.dedup();
    let io = |path: &Path, e: std::io::Error| Error::Io { path: path.to_path_buf(), source: e };
    if !dir.is_dir() {
        std::fs::create_dir(dir).map_err(|e| io(dir, e))?;
    }
    let policy = OutputPolicy { inputs: vec![bag.path().to_path_buf()], replace: options.replace };
    // Every file is checked before any is written: a refusal leaves the directory as it was.
    let mut checked = Vec::new();
    for t in &topics {
        let path = dir.join(file_name(t, options.format));
        let format = options.format;
        checked.push(check_with(&path, &policy, format.kind(), &|p| format.is_ours(p)).map_err(rbag_bag::Error::from)?);
    }
    let bags = std::slice::from_ref(bag);
    let mut report = ExportReport::default();
    for (topic, checked) in topics.into_iter().zip(checked) {
        let table = TableOptions { start: options.start, end: options.end, ..TableOptions::default() };
        let batches = match TopicBatches::new(bags, std::slice::from_ref(types), &topic, table) {
            Ok(b) => b,
            Err(e) if !explicit && undecodable(&e) => {
                report.skipped.push((topic, e.to_string()));
                continue;
            }
            Err(e) => return Err(e),
        };
        let staged = Staged::new(checked).map_err(rbag_bag::Error::from)?;
        let path = staged.target().to_path_buf();
        let written = write_file(batches, options.format, staged.temp(), &path, progress)?;
        staged.commit().map_err(rbag_bag::Error::from)?;
        report.files.push(ExportedTopic { topic, path, rows: written.0, columns: written.1, left_out: written.2 });
    }
    Ok(report)
}

/// Whether a topic's type cannot be decoded at all (skipped when no topic was chosen), as
/// opposed to a message that does not decode (an error).
fn undecodable(e: &Error) -> bool {
    use rbag_bag::decode::DecodeError;
    match e {
        Error::Bag(rbag_bag::Error::Decode { source, .. }) => {
            !matches!(**source, DecodeError::Codec { .. } | DecodeError::Migrate { .. })
        }
        _ => false,
    }
}

/// Writes every batch to `temp` (errors name `path`, the file's final name); returns the rows
/// and columns written, and the columns left out.
fn write_file(
    mut batches: TopicBatches<'_>,
    format: ExportFormat,
    temp: &Path,
    path: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<(u64, usize, Vec<String>), Error> {
    let all = batches.schema();
    let keep: Vec<usize> = (0..all.fields().len())
        .filter(|&i| format != ExportFormat::Parquet || !has_empty_struct(all.field(i).data_type()))
        .collect();
    let left_out = (0..all.fields().len()).filter(|i| !keep.contains(i)).map(|i| all.field(i).name().clone()).collect();
    let schema = Arc::new(all.project(&keep).map_err(|e| Error::Write { path: path.into(), reason: e.to_string() })?);
    let file = File::create(temp).map_err(|e| Error::Io { path: path.to_path_buf(), source: e })?;
    let mut sink = Sink::new(format, file, &schema, path)?;
    let mut rows = 0;
    while let Some(b) = batches.next_batch()? {
        let b = b.project(&keep).map_err(|e| Error::Write { path: path.into(), reason: e.to_string() })?;
        sink.write(&b, path)?;
        rows += b.num_rows() as u64;
        progress(b.num_rows() as u64);
    }
    sink.finish(path)?;
    Ok((rows, schema.fields().len(), left_out))
}

/// Whether a type is, or holds, a struct without fields.
fn has_empty_struct(t: &DataType) -> bool {
    match t {
        DataType::Struct(f) => f.is_empty() || f.iter().any(|f| has_empty_struct(f.data_type())),
        DataType::List(f) | DataType::FixedSizeList(f, _) => has_empty_struct(f.data_type()),
        _ => false,
    }
}

enum Sink {
    Parquet(Box<parquet::arrow::ArrowWriter<File>>),
    Arrow(Box<arrow_ipc::writer::FileWriter<BufWriter<File>>>),
    Csv(BufWriter<File>),
}

impl Sink {
    fn new(format: ExportFormat, file: File, schema: &SchemaRef, path: &Path) -> Result<Sink, Error> {
        let failed = |e: String| Error::Write { path: path.to_path_buf(), reason: e };
        Ok(match format {
            ExportFormat::Parquet => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
                    .build();
                let w = parquet::arrow::ArrowWriter::try_new(file, schema.clone(), Some(props))
                    .map_err(|e| failed(e.to_string()))?;
                Sink::Parquet(Box::new(w))
            }
            ExportFormat::Arrow => {
                let w =
                    arrow_ipc::writer::FileWriter::try_new_buffered(file, schema).map_err(|e| failed(e.to_string()))?;
                Sink::Arrow(Box::new(w))
            }
            ExportFormat::Csv => {
                let mut w = BufWriter::with_capacity(1 << 20, file);
                let names: Vec<String> = schema.fields().iter().map(|f| csv_text(f.name()).into_owned()).collect();
                writeln!(w, "{}", names.join(",")).map_err(|e| failed(e.to_string()))?;
                Sink::Csv(w)
            }
        })
    }

    fn write(&mut self, b: &RecordBatch, path: &Path) -> Result<(), Error> {
        let failed = |e: String| Error::Write { path: path.to_path_buf(), reason: e };
        match self {
            Sink::Parquet(w) => w.write(b).map_err(|e| failed(e.to_string())),
            Sink::Arrow(w) => w.write(b).map_err(|e| failed(e.to_string())),
            Sink::Csv(w) => csv_rows(w, b).map_err(|e| failed(e.to_string())),
        }
    }

    fn finish(self, path: &Path) -> Result<(), Error> {
        let failed = |e: String| Error::Write { path: path.to_path_buf(), reason: e };
        match self {
            Sink::Parquet(w) => w.close().map(drop).map_err(|e| failed(e.to_string())),
            Sink::Arrow(mut w) => w.finish().map_err(|e| failed(e.to_string())),
            Sink::Csv(mut w) => w.flush().map_err(|e| failed(e.to_string())),
        }
    }
}

fn csv_text(s: &str) -> std::borrow::Cow<'_, str> {
    rbag_bag::decode::render::csv_quote(s)
}

/// Writes a batch's rows as CSV: numbers and text as themselves (`log_time` in ns), arrays and
/// nested messages as JSON text.
fn csv_rows(w: &mut impl Write, b: &RecordBatch) -> std::io::Result<()> {
    let mut cell = String::new();
    for row in 0..b.num_rows() {
        for (i, col) in b.columns().iter().enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            cell.clear();
            match col.data_type() {
                DataType::Utf8 => cell.push_str(col.as_string::<i32>().value(row)),
                DataType::Timestamp(..) => {
                    cell.push_str(&col.as_primitive::<TimestampNanosecondType>().value(row).to_string())
                }
                _ => json(&mut cell, col.as_ref(), row),
            }
            w.write_all(csv_text(&cell).as_bytes())?;
        }
        w.write_all(b"\n")?;
    }
    Ok(())
}

fn float(out: &mut String, v: f64) {
    use std::fmt::Write as _;
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
    } else {
        let _ = write!(out, "{v}");
    }
}

/// One value as JSON, as `rbag echo --json` writes it (`uint8` arrays as arrays of integers,
/// NaN and infinities as strings). A top-level number is written bare, which CSV readers take
/// as a number.
fn json(out: &mut String, a: &dyn Array, i: usize) {
    use std::fmt::Write as _;
    macro_rules! num {
        ($t:ty) => {{
            let _ = write!(out, "{}", a.as_primitive::<$t>().value(i));
        }};
    }
    match a.data_type() {
        DataType::Boolean => out.push_str(if a.as_boolean().value(i) { "true" } else { "false" }),
        DataType::Int8 => num!(Int8Type),
        DataType::UInt8 => num!(UInt8Type),
        DataType::Int16 => num!(Int16Type),
        DataType::UInt16 => num!(UInt16Type),
        DataType::Int32 => num!(Int32Type),
        DataType::UInt32 => num!(UInt32Type),
        DataType::Int64 => num!(Int64Type),
        DataType::UInt64 => num!(UInt64Type),
        DataType::Float32 => float(out, a.as_primitive::<Float32Type>().value(i) as f64),
        DataType::Float64 => float(out, a.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => {
            let _ = write!(out, "{:?}", JsonStr(a.as_string::<i32>().value(i)));
        }
        DataType::Binary => bytes(out, a.as_binary::<i32>().value(i)),
        DataType::FixedSizeBinary(_) => bytes(out, a.as_fixed_size_binary().value(i)),
        DataType::List(_) => items(out, &a.as_list::<i32>().value(i)),
        DataType::FixedSizeList(..) => items(out, &a.as_fixed_size_list().value(i)),
        DataType::Struct(fields) => {
            let s = a.as_struct();
            out.push('{');
            for (k, (f, c)) in fields.iter().zip(s.columns()).enumerate() {
                if k > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{:?}:", JsonStr(f.name()));
                json(out, c.as_ref(), i);
            }
            out.push('}');
        }
        other => {
            let _ = write!(out, "{:?}", JsonStr(&other.to_string()));
        }
    }
}

fn items(out: &mut String, a: &dyn Array) {
    out.push('[');
    for k in 0..a.len() {
        if k > 0 {
            out.push(',');
        }
        json(out, a, k);
    }
    out.push(']');
}

fn bytes(out: &mut String, b: &[u8]) {
    use std::fmt::Write as _;
    out.push('[');
    for (k, x) in b.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "{x}");
    }
    out.push(']');
}

/// A string written as a JSON string literal.
struct JsonStr<'a>(&'a str);

impl std::fmt::Debug for JsonStr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write as _;
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}
