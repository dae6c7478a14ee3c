//! A catalog as an Arrow table, and as a Parquet file.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, TimestampNanosecondType, UInt64Type};
use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch, StringArray, TimestampNanosecondArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

use super::Row;
use crate::{Error, Result};

/// The Parquet key-value metadata key that marks a file as an rbag catalog.
pub const METADATA_KEY: &str = "rbag.catalog";
/// Its value: the version of the catalog's schema.
pub const CATALOG_VERSION: &str = "1";

/// The catalog's columns, in order:
///
/// | column | type | null |
/// |---|---|---|
/// | `url` | utf8 | no: the bag's URL or absolute path |
/// | `size` | uint64 | no: bytes |
/// | `version` | utf8 | no (empty when unknown) |
/// | `storage` | utf8 | no: `ros1`, `mcap`, `sqlite3` |
/// | `start` | timestamp\[ns\] (no time zone) | for an empty bag |
/// | `end` | timestamp\[ns\] | for an empty bag |
/// | `topic` | utf8 | for a bag with no topics |
/// | `type` | utf8 | when the bag names no type |
/// | `type_hash` | utf8 | when the bag has none |
/// | `message_count` | uint64 | no |
/// | `frequency_hz` | float64 | when the bag lasts 0 s |
pub fn schema() -> SchemaRef {
    let time = DataType::Timestamp(TimeUnit::Nanosecond, None);
    Arc::new(Schema::new(vec![
        Field::new("url", DataType::Utf8, false),
        Field::new("size", DataType::UInt64, false),
        Field::new("version", DataType::Utf8, false),
        Field::new("storage", DataType::Utf8, false),
        Field::new("start", time.clone(), true),
        Field::new("end", time, true),
        Field::new("topic", DataType::Utf8, true),
        Field::new("type", DataType::Utf8, true),
        Field::new("type_hash", DataType::Utf8, true),
        Field::new("message_count", DataType::UInt64, false),
        Field::new("frequency_hz", DataType::Float64, true),
    ]))
}

fn time(bag: &str, t: Option<u64>) -> Result<Option<i64>> {
    t.map(|t| i64::try_from(t).map_err(|_| Error::Table(format!("{bag}: time {t} ns does not fit a timestamp"))))
        .transpose()
}

/// `rows` as one record batch of [`schema`].
pub fn to_batch(rows: &[Row]) -> Result<RecordBatch> {
    let mut starts = Vec::with_capacity(rows.len());
    let mut ends = Vec::with_capacity(rows.len());
    for r in rows {
        starts.push(time(&r.url, r.start)?);
        ends.push(time(&r.url, r.end)?);
    }
    let strings =
        |f: &dyn Fn(&Row) -> Option<&str>| -> ArrayRef { Arc::new(rows.iter().map(f).collect::<StringArray>()) };
    let columns: Vec<ArrayRef> = vec![
        strings(&|r| Some(&r.url)),
        Arc::new(rows.iter().map(|r| r.size).collect::<UInt64Array>()),
        strings(&|r| Some(&r.version)),
        strings(&|r| Some(&r.storage)),
        Arc::new(TimestampNanosecondArray::from(starts)),
        Arc::new(TimestampNanosecondArray::from(ends)),
        strings(&|r| r.topic.as_deref()),
        strings(&|r| r.message_type.as_deref()),
        strings(&|r| r.type_hash.as_deref()),
        Arc::new(rows.iter().map(|r| r.message_count).collect::<UInt64Array>()),
        Arc::new(rows.iter().map(|r| r.frequency_hz).collect::<Float64Array>()),
    ];
    RecordBatch::try_new(schema(), columns).map_err(|e| Error::Table(e.to_string()))
}

/// Whether `found` has the fields of [`schema`]: names, types and nullability, in order.
fn same_fields(found: &Schema) -> std::result::Result<(), String> {
    let want = schema();
    let describe = |s: &Schema| {
        s.fields().iter().map(|f| format!("{} {}", f.name(), f.data_type())).collect::<Vec<_>>().join(", ")
    };
    let same =
        found.fields().len() == want.fields().len()
            && found.fields().iter().zip(want.fields().iter()).all(|(a, b)| {
                a.name() == b.name() && a.data_type() == b.data_type() && a.is_nullable() == b.is_nullable()
            });
    if same {
        Ok(())
    } else {
        Err(format!("its columns are [{}], not [{}]", describe(found), describe(&want)))
    }
}

/// The rows of a record batch of [`schema`].
pub fn from_batch(batch: &RecordBatch) -> Result<Vec<Row>> {
    same_fields(&batch.schema()).map_err(Error::Table)?;
    let c = |i: usize| batch.column(i);
    let bad = |what: &str| Error::Table(format!("column {what} has a value it cannot hold"));
    let (url, size, version, storage) =
        (c(0).as_string::<i32>(), c(1).as_primitive::<UInt64Type>(), c(2).as_string::<i32>(), c(3).as_string::<i32>());
    let (start, end) = (c(4).as_primitive::<TimestampNanosecondType>(), c(5).as_primitive::<TimestampNanosecondType>());
    let (topic, ty, hash) = (c(6).as_string::<i32>(), c(7).as_string::<i32>(), c(8).as_string::<i32>());
    let (count, hz) = (c(9).as_primitive::<UInt64Type>(), c(10).as_primitive::<Float64Type>());
    let text = |a: &arrow_array::StringArray, i: usize| a.is_valid(i).then(|| a.value(i).to_string());
    let required = |v: Option<String>, what: &str| v.ok_or_else(|| bad(what));
    let time = |a: &TimestampNanosecondArray, i: usize, what: &str| -> Result<Option<u64>> {
        a.is_valid(i).then(|| u64::try_from(a.value(i)).map_err(|_| bad(what))).transpose()
    };
    let mut rows = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        if size.is_null(i) || count.is_null(i) {
            return Err(bad("size or message_count (null)"));
        }
        rows.push(Row {
            url: required(text(url, i), "url (null)")?,
            size: size.value(i),
            version: required(text(version, i), "version (null)")?,
            storage: required(text(storage, i), "storage (null)")?,
            start: time(start, i, "start (before 1970)")?,
            end: time(end, i, "end (before 1970)")?,
            topic: text(topic, i),
            message_type: text(ty, i),
            type_hash: text(hash, i),
            message_count: count.value(i),
            frequency_hz: hz.is_valid(i).then(|| hz.value(i)),
        });
    }
    Ok(rows)
}

#[cfg(feature = "parquet")]
mod parquet_file {
    use std::fs::File;
    use std::path::Path;

    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;

    use super::*;

    /// Rows per row group: a catalog of a million topics is a few row groups.
    const ROW_GROUP: usize = 64 * 1024;

    /// Writes `rows` as a Parquet catalog into `sink` (errors name `path`): zstd-compressed,
    /// marked with [`METADATA_KEY`] = [`CATALOG_VERSION`].
    pub fn write_to<W: std::io::Write + Send>(rows: &[Row], sink: W, path: &Path) -> Result<()> {
        let failed = |e: String| Error::Parquet { path: path.to_path_buf(), reason: e };
        let props = WriterProperties::builder()
            .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
            .set_max_row_group_row_count(Some(ROW_GROUP))
            .set_key_value_metadata(Some(vec![KeyValue::new(METADATA_KEY.to_string(), CATALOG_VERSION.to_string())]))
            .build();
        let mut w = ArrowWriter::try_new(sink, schema(), Some(props)).map_err(|e| failed(e.to_string()))?;
        for part in rows.chunks(ROW_GROUP) {
            w.write(&to_batch(part)?).map_err(|e| failed(e.to_string()))?;
        }
        w.close().map_err(|e| failed(e.to_string()))?;
        Ok(())
    }

    /// Writes `rows` as a Parquet catalog at `path` (created or truncated: callers that must
    /// not destroy a file stage it, as `rbag catalog` does).
    pub fn write(rows: &[Row], path: &Path) -> Result<()> {
        let file = File::create(path).map_err(|e| Error::Io { path: path.to_path_buf(), source: e })?;
        write_to(rows, std::io::BufWriter::new(file), path)
    }

    fn builder(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
        let file = File::open(path).map_err(|e| Error::Io { path: path.to_path_buf(), source: e })?;
        ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| Error::NotCatalog { path: path.to_path_buf(), reason: format!("not a Parquet file ({e})") })
    }

    fn marker(b: &ParquetRecordBatchReaderBuilder<File>) -> Option<Option<String>> {
        let kv = b.metadata().file_metadata().key_value_metadata()?;
        kv.iter().find(|kv| kv.key == METADATA_KEY).map(|kv| kv.value.clone())
    }

    /// Whether the file at `path` is a catalog rbag wrote: a Parquet file marked with
    /// [`METADATA_KEY`], of any version (what `rbag catalog --force` may replace).
    pub fn is_catalog(path: &Path) -> bool {
        builder(path).is_ok_and(|b| marker(&b).is_some())
    }

    /// The rows of the catalog at `path`. A file that is not one of this version (no
    /// [`METADATA_KEY`], another version, other columns) is [`Error::NotCatalog`].
    pub fn read(path: &Path) -> Result<Vec<Row>> {
        let not = |reason: String| Error::NotCatalog { path: path.to_path_buf(), reason };
        let b = builder(path)?;
        match marker(&b) {
            None => return Err(not(format!("it has no {METADATA_KEY} metadata"))),
            Some(v) if v.as_deref() != Some(CATALOG_VERSION) => {
                return Err(not(format!(
                    "it is of catalog version {}, and this rbag reads version {CATALOG_VERSION}",
                    v.unwrap_or_default()
                )))
            }
            Some(_) => {}
        }
        same_fields(b.schema()).map_err(not)?;
        let reader = b.build().map_err(|e| Error::Parquet { path: path.to_path_buf(), reason: e.to_string() })?;
        let mut rows = Vec::new();
        for batch in reader {
            let batch = batch.map_err(|e| Error::Parquet { path: path.to_path_buf(), reason: e.to_string() })?;
            rows.extend(from_batch(&batch).map_err(|e| not(e.to_string()))?);
        }
        Ok(rows)
    }
}

#[cfg(feature = "parquet")]
pub use parquet_file::{is_catalog, read, write, write_to};

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Row> {
        vec![
            Row {
                url: "/d/a.bag".into(),
                size: 10,
                version: "1".into(),
                storage: "ros1".into(),
                start: Some(1),
                end: Some(2_000_000_001),
                topic: Some("/imu".into()),
                message_type: Some("sensor_msgs/Imu".into()),
                type_hash: Some("6a62c6daae103f4ff57a132d6f95cec2".into()),
                message_count: 200,
                frequency_hz: Some(100.0),
            },
            Row {
                url: "s3://b/r/".into(),
                size: 0,
                version: String::new(),
                storage: "mcap".into(),
                start: None,
                end: None,
                topic: None,
                message_type: None,
                type_hash: None,
                message_count: 0,
                frequency_hz: None,
            },
        ]
    }

    #[test]
    fn rows_survive_a_batch() {
        let batch = to_batch(&rows()).unwrap();
        assert_eq!(batch.schema(), schema());
        assert_eq!(from_batch(&batch).unwrap(), rows());
    }

    /// A Parquet file of `batch` with key-value metadata `kv`.
    #[cfg(feature = "parquet")]
    fn parquet_file(path: &std::path::Path, batch: &RecordBatch, kv: Option<(&str, &str)>) {
        use parquet::file::metadata::KeyValue;
        let props = parquet::file::properties::WriterProperties::builder()
            .set_key_value_metadata(kv.map(|(k, v)| vec![KeyValue::new(k.to_string(), v.to_string())]))
            .build();
        let file = std::fs::File::create(path).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn only_a_marked_parquet_file_of_this_schema_and_version_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let batch = to_batch(&rows()).unwrap();
        let path = dir.path().join("c.parquet");
        parquet_file(&path, &batch, Some((METADATA_KEY, CATALOG_VERSION)));
        assert_eq!(read(&path).unwrap(), rows());

        let not_catalog = |p: &std::path::Path, says: &str| {
            let e = read(p).unwrap_err();
            assert!(matches!(e, Error::NotCatalog { .. }) && e.to_string().contains(says), "{e}");
        };
        parquet_file(&path, &batch, None);
        not_catalog(&path, "no rbag.catalog metadata");
        assert!(!is_catalog(&path));

        parquet_file(&path, &batch, Some((METADATA_KEY, "2")));
        not_catalog(&path, "catalog version 2");
        assert!(is_catalog(&path), "a catalog of another version is still rbag's (--force replaces it)");

        let fewer = batch.project(&[0, 1, 2]).unwrap();
        parquet_file(&path, &fewer, Some((METADATA_KEY, CATALOG_VERSION)));
        not_catalog(&path, "its columns are [url Utf8, size UInt64, version Utf8]");
    }

    #[test]
    fn a_time_past_2262_is_an_error_not_a_panic() {
        let mut r = rows();
        r[0].end = Some(u64::MAX);
        assert!(matches!(to_batch(&r), Err(Error::Table(_))));
    }
}
