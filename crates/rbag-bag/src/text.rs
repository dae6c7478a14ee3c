//! Decoded messages as text, as `rostopic echo` and `ros2 topic echo` print them: YAML
//! documents, NDJSON lines, or CSV rows with one column per field. `rbag echo` prints with it;
//! a binding's `repr` of a message is the YAML form.
//!
//! ```no_run
//! use rbag_bag::read::{DecodedReader, ReadSpec};
//! use rbag_bag::text::{TextFormat, TextWriter};
//! use rbag_bag::Bag;
//!
//! let bag = Bag::open("run.bag")?;
//! let types = rbag_bag::types::sources_for(&bag.storage_info()?.properties, &[])?;
//! let spec = ReadSpec { topics: vec!["/imu".into()], types, settle: true, ..ReadSpec::default() };
//! let mut reader = DecodedReader::new(&bag, spec)?;
//! let mut out = TextWriter::new(std::io::stdout().lock(), TextFormat::Csv, &reader)?;
//! while let Some(m) = reader.next_message()? {
//!     out.write(&m)?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Arc;

use rbag_msg::render::{self, csv_quote, Csv, CsvError, OutOfRange, Selection, Style};
use rbag_msg::{PathError, ValueRef};

use crate::decode::Schema;
use crate::read::{DecodedMessage, DecodedReader};
use crate::Connection;

/// How messages are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// YAML documents ended by `---`, arrays cut to `max_array` elements (whole when `None`).
    Yaml {
        /// The most elements of each array to print.
        max_array: Option<usize>,
    },
    /// One JSON object per line: `topic`, `log_time` (ns) and `message`; NaN and infinities
    /// as the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (`null` with
    /// [`Style::nan_null`]).
    Json,
    /// A header row `log_time,topic,<columns>`, then one row per message.
    Csv,
}

/// Why messages could not be written as text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A field path does not fit a message of the topic.
    #[error("topic {topic}: {source}")]
    Path {
        /// The topic.
        topic: String,
        /// What the path names that does not exist.
        source: PathError,
    },
    /// A type flattens to too many columns.
    #[error("topic {topic}: {source}")]
    TooWide {
        /// The topic.
        topic: String,
        /// The type and its column count.
        source: CsvError,
    },
    /// Rows of one table must have one set of columns.
    #[error("CSV needs topics of one type: {first} and {topic} print different columns")]
    MixedColumns {
        /// The topic that set the header.
        first: String,
        /// A topic with other columns.
        topic: String,
    },
    /// A topic's definition was replaced, mid-read, by one with other columns.
    #[error("topic {topic}: its definition was replaced by one with other CSV columns")]
    ReplacedColumns {
        /// The topic.
        topic: String,
    },
}

/// How CSV lays out topics whose types print different columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CsvLayout {
    /// One set of columns: topics of different types are refused.
    #[default]
    Same,
    /// The union of every topic's columns, empty where a topic has no such field.
    Wide,
    /// One row per field: `log_time,topic,field,value`.
    Long,
}

/// How the CSV time column is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TimeFormat {
    /// Nanoseconds since the epoch.
    #[default]
    Ns,
    /// Seconds since the epoch, with nine decimals.
    Secs,
    /// Seconds since the first message written, with nine decimals.
    Rel,
    /// ISO 8601 UTC, with nanoseconds (`2026-11-21T22:28:35.406065155Z`).
    Iso,
}

impl TimeFormat {
    /// `t` (ns since the epoch) in this format; `origin` is the first time written.
    pub fn format(self, t: u64, origin: u64) -> String {
        let secs = |ns: u64| format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
        match self {
            TimeFormat::Ns => t.to_string(),
            TimeFormat::Secs => secs(t),
            TimeFormat::Rel if t >= origin => secs(t - origin),
            TimeFormat::Rel => format!("-{}", secs(origin - t)),
            TimeFormat::Iso => {
                let (s, n) = ((t / 1_000_000_000) as i64, (t % 1_000_000_000) as u32);
                match chrono::DateTime::from_timestamp(s, n) {
                    Some(d) => d.format("%Y-%m-%dT%H:%M:%S%.9fZ").to_string(),
                    None => t.to_string(),
                }
            }
        }
    }
}

/// CSV options of [`TextWriter::over_csv`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CsvOptions {
    /// Topics of different types: refused, wide, or long.
    pub layout: CsvLayout,
    /// The time column.
    pub time: TimeFormat,
}

/// A connection, told apart across bags (ids repeat from bag to bag; a bag's connections stay
/// where they are while it is open).
fn conn_key(c: &Connection) -> usize {
    c as *const Connection as usize
}

/// Writes decoded messages in one [`TextFormat`].
pub struct TextWriter<W: Write> {
    out: W,
    format: TextFormat,
    /// YAML over several topics: each document starts with a `# topic time` line.
    multi: bool,
    /// CSV: the header's columns, and each connection's flattening with the schema it was
    /// worked out for (a replaced schema is checked against the header).
    header: Vec<String>,
    tables: BTreeMap<usize, (Arc<Schema>, Csv)>,
    /// CSV: each header column's position.
    index: BTreeMap<String, usize>,
    csv: CsvOptions,
    /// The first time written, for [`TimeFormat::Rel`].
    origin: Option<u64>,
    style: Style,
    /// Per topic: the first index past an array's end, and how many messages printed nothing.
    misses: BTreeMap<String, (OutOfRange, u64)>,
}

impl<W: Write> TextWriter<W> {
    /// A writer for `reader`'s messages; for CSV, writes the header row (the reader should
    /// [`settle`](crate::read::ReadSpec::settle) its schemas first).
    pub fn new(out: W, format: TextFormat, reader: &DecodedReader) -> Result<Self, TextError> {
        Self::over(out, format, &[reader])
    }

    /// A writer for the messages of several readers (several bags, merged in time order with
    /// [`DecodedReader::peek_time`]); for CSV, every topic of every reader must print the same
    /// columns.
    pub fn over(out: W, format: TextFormat, readers: &[&DecodedReader]) -> Result<Self, TextError> {
        Self::over_csv(out, format, readers, CsvOptions::default())
    }

    /// [`over`](Self::over), with CSV laid out as `csv` says: topics of different types in one
    /// table (wide or long), and the time column's format.
    pub fn over_csv(
        mut out: W,
        format: TextFormat,
        readers: &[&DecodedReader],
        csv_options: CsvOptions,
    ) -> Result<Self, TextError> {
        let mut header: Option<(Vec<String>, &str)> = None;
        let mut tables = BTreeMap::new();
        if format == TextFormat::Csv {
            for (c, schema, path) in readers.iter().flat_map(|r| r.schemas()) {
                let topic = c.topic.as_str();
                let columns = match path {
                    Some(p) => vec![p.to_string()],
                    None => {
                        let csv =
                            Csv::new(schema).map_err(|source| TextError::TooWide { topic: topic.into(), source })?;
                        let columns = csv.columns().to_vec();
                        tables.insert(conn_key(c), (schema.clone(), csv));
                        columns
                    }
                };
                match (&mut header, csv_options.layout) {
                    (Some((h, _)), CsvLayout::Wide | CsvLayout::Long) => {
                        for c in columns {
                            if !h.contains(&c) {
                                h.push(c);
                            }
                        }
                    }
                    (Some((h, first)), CsvLayout::Same) if *h != columns => {
                        return Err(TextError::MixedColumns { first: first.to_string(), topic: topic.into() })
                    }
                    (Some(_), CsvLayout::Same) => {}
                    (None, _) => header = Some((columns, topic)),
                }
            }
            match (&header, csv_options.layout) {
                (Some(_), CsvLayout::Long) => writeln!(out, "log_time,topic,field,value")?,
                (Some((columns, _)), _) => {
                    let names: Vec<_> = columns.iter().map(|c| csv_quote(c)).collect();
                    writeln!(out, "log_time,topic,{}", names.join(","))?;
                }
                (None, _) => {}
            }
        }
        let header = header.map(|h| h.0).unwrap_or_default();
        let index = header.iter().enumerate().map(|(i, c)| (c.clone(), i)).collect();
        let style = Style::default();
        let topics: std::collections::BTreeSet<&String> = readers.iter().flat_map(|r| r.topics()).collect();
        let multi = topics.len() > 1;
        Ok(TextWriter {
            out,
            format,
            multi,
            header,
            index,
            tables,
            style,
            misses: BTreeMap::new(),
            csv: csv_options,
            origin: None,
        })
    }

    /// Prints in `style`: placeholders for arrays and strings in YAML, `null` for NaN in JSON.
    /// A YAML format's `max_array` wins over the style's.
    pub fn with_style(mut self, style: Style) -> Self {
        self.style = style;
        self
    }

    /// Per topic whose field path indexed past an array's end: the first such index (with the
    /// array's length) and how many messages printed nothing for it.
    pub fn out_of_range(&self) -> impl Iterator<Item = (&str, &OutOfRange, u64)> {
        self.misses.iter().map(|(t, (o, n))| (t.as_str(), o, *n))
    }

    /// Writes one message (the field its topic's path selects, if any; a slice's values as one
    /// list); nothing when an index in the path is past this message's array (counted, see
    /// [`out_of_range`](Self::out_of_range)).
    pub fn write(&mut self, m: &DecodedMessage) -> Result<(), TextError> {
        let topic = &m.connection.topic;
        let path_error = |source| TextError::Path { topic: topic.clone(), source };
        let (one, many) = match m.select().map_err(path_error)? {
            Selection::One(v) => (Some(v), Vec::new()),
            Selection::Many(vs) => (None, vs),
            Selection::OutOfRange(o) => {
                self.misses.entry(topic.clone()).or_insert((o, 0)).1 += 1;
                return Ok(());
            }
        };
        let out = &mut self.out;
        let style = self.style;
        let json = |out: &mut dyn Write, one: Option<ValueRef>, many: &[ValueRef]| match one {
            Some(v) => render::json_value(v, &style, out),
            None => render::json_values(many, &style, out),
        };
        match self.format {
            TextFormat::Yaml { max_array } => {
                if self.multi {
                    writeln!(out, "# {topic} {}.{:09}", m.log_time / 1_000_000_000, m.log_time % 1_000_000_000)?;
                }
                let style = Style { max_array, ..style };
                match one {
                    Some(v) => render::yaml_value(v, &style, out)?,
                    None => render::yaml_values(&many, &style, out)?,
                }
                writeln!(out, "---")?;
            }
            TextFormat::Json => {
                out.write_all(b"{\"topic\":")?;
                rbag_msg::render::json_string(topic.as_bytes(), out)?;
                write!(out, ",\"log_time\":{},\"message\":", m.log_time)?;
                json(out, one, &many)?;
                out.write_all(b"}\n")?;
            }
            TextFormat::Csv => {
                let origin = *self.origin.get_or_insert(m.log_time);
                let time = self.csv.time.format(m.log_time, origin);
                let (names, cells): (Vec<String>, Vec<String>) = if let Some(path) = m.path {
                    let mut cell = Vec::new();
                    match one.and_then(|v| v.as_f64()) {
                        // As the whole-message columns print them.
                        Some(x) if !x.is_finite() => write!(cell, "{x}")?,
                        _ => json(&mut cell, one, &many)?,
                    }
                    (vec![path.to_string()], vec![csv_quote(&String::from_utf8_lossy(&cell)).into_owned()])
                } else {
                    let Some((schema, csv)) = self.tables.get(&conn_key(m.connection)) else {
                        return Err(TextError::ReplacedColumns { topic: topic.clone() });
                    };
                    // A connection whose first message did not fit the bag's definition is read
                    // with a replacement; its columns must still match the header.
                    let replaced;
                    let csv = if std::ptr::eq(Arc::as_ptr(schema), m.message.schema()) {
                        csv
                    } else {
                        replaced = Csv::new(m.message.schema())
                            .map_err(|source| TextError::TooWide { topic: topic.clone(), source })?;
                        let fits = match self.csv.layout {
                            CsvLayout::Same => replaced.columns() == self.header.as_slice(),
                            CsvLayout::Wide => replaced.columns().iter().all(|c| self.index.contains_key(c)),
                            CsvLayout::Long => true,
                        };
                        if !fits {
                            return Err(TextError::ReplacedColumns { topic: topic.clone() });
                        }
                        &replaced
                    };
                    (csv.columns().to_vec(), csv.cells_of(&m.message))
                };
                let topic = csv_quote(topic);
                match self.csv.layout {
                    CsvLayout::Same => writeln!(out, "{time},{topic},{}", cells.join(","))?,
                    CsvLayout::Wide => {
                        let mut row = vec![String::new(); self.header.len()];
                        for (name, cell) in names.iter().zip(cells) {
                            if let Some(&i) = self.index.get(name) {
                                row[i] = cell;
                            }
                        }
                        writeln!(out, "{time},{topic},{}", row.join(","))?;
                    }
                    CsvLayout::Long => {
                        for (name, cell) in names.iter().zip(cells) {
                            writeln!(out, "{time},{topic},{},{cell}", csv_quote(name))?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}
