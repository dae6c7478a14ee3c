//! `rbag.Reader`: any bag opened for reading, its summary, and its messages raw or decoded.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use pyo3::prelude::*;
use pyo3::types::PyString;
use rbag_bag::decode::{Decoders, TypeSources};
use rbag_bag::transcode::{ConnectionPlan, Rewrite, Targets};
use rbag_bag::{Bag, Filter, OpenOptions, TimeMerge};
use self_cell::self_cell;

use crate::errors::{guard, poisoned, ClosedError, DecodeError, OrPy};
use crate::genpy::Genpy;
use crate::value::Converter;

/// Raw messages fetched per release of the GIL: enough to make the release cheap, few enough
/// that Ctrl-C is seen promptly and little memory is held.
const BATCH_MESSAGES: usize = 256;
const BATCH_BYTES: usize = 8 << 20;
/// A message this large ends its batch. A storage reader lets go of a chunk's mapped pages
/// when asked for the message after the chunk's last one; a message still waiting in the
/// batch would fault its pages back in and keep them resident. Small messages cost a page or
/// two per chunk that way; large ones are always handed to Python before the next is read.
const BATCH_LAST: usize = 64 << 10;

/// A bag opened for reading: a ROS 1 `.bag`, a rosbag2 directory, or a `.db3`/`.mcap` file;
/// or several bags, read as one, their messages merged in log-time order as ``rbag convert``
/// merges them.
///
/// Use it as a context manager (``with rbag.Reader(path) as bag:``) or call ``close()``.
/// Message types come from the bag's own definitions, then the ``msg_path`` directories, then
/// the bundled store (ROS 1 noetic; ROS 2 humble and later common types).
#[pyclass(module = "rbag", frozen)]
pub struct Reader {
    bags: RwLock<Option<Arc<Vec<Bag>>>>,
    paths: Vec<String>,
    /// Per bag, where the types it lacks come from.
    types: Vec<TypeSources>,
}

impl Reader {
    fn bags(&self) -> PyResult<Arc<Vec<Bag>>> {
        self.bags
            .read()
            .map_err(poisoned)?
            .clone()
            .ok_or_else(|| ClosedError::new_err(format!("{}: the reader is closed", self.paths.join(", "))))
    }
}

/// One path, or several.
#[derive(FromPyObject)]
pub enum PathsArg {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

#[pymethods]
impl Reader {
    /// Opens the bag at ``path``. ``msg_path`` lists directories of ``.msg`` files (or
    /// ``PKG=DIR``) for types neither the bag nor the bundled store define. ``lenient`` reads
    /// messages on connections the bag never declares as ``/rbag/undeclared/<id>`` instead of
    /// failing. A path may be a URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``): the bag is
    /// read by byte range where it lies; ``allow_remote_scan`` downloads a remote file that has
    /// no index to read it by (an MCAP file without a summary) instead of refusing it.
    #[new]
    #[pyo3(signature = (path, *, msg_path = None, lenient = false, allow_remote_scan = false))]
    fn new(
        py: Python<'_>,
        path: PathsArg,
        msg_path: Option<Vec<String>>,
        lenient: bool,
        allow_remote_scan: bool,
    ) -> PyResult<Self> {
        guard(|| {
            let paths = match path {
                PathsArg::One(p) => vec![p],
                PathsArg::Many(v) if v.is_empty() => {
                    return Err(pyo3::exceptions::PyValueError::new_err("rbag.Reader: no bag given"))
                }
                PathsArg::Many(v) => v,
            };
            let dirs = msg_path.unwrap_or_default();
            for w in paths.iter().filter_map(|p| p.to_str().and_then(rbag_remote::profile_warning)) {
                PyErr::warn(
                    py,
                    &py.get_type::<pyo3::exceptions::PyUserWarning>(),
                    &std::ffi::CString::new(w).unwrap_or_default(),
                    1,
                )?;
            }
            let options = OpenOptions { lenient, allow_remote_scan };
            let opened = py
                .detach(|| -> rbag_bag::Result<Vec<_>> {
                    paths
                        .iter()
                        .map(|p| {
                            let bag = Bag::open_with(p, &options)?;
                            let types = rbag_bag::types::sources_for(&bag.storage_info()?.properties, &dirs)?;
                            Ok((bag, types))
                        })
                        .collect()
                })
                .or_py()?;
            let (bags, types): (Vec<Bag>, Vec<TypeSources>) = opened.into_iter().unzip();
            Ok(Reader {
                bags: RwLock::new(Some(Arc::new(bags))),
                paths: paths.iter().map(|p| p.display().to_string()).collect(),
                types,
            })
        })
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    /// Closes the bag. Iterators already started keep it open until they end.
    fn close(&self) -> PyResult<()> {
        *self.bags.write().map_err(poisoned)? = None;
        Ok(())
    }

    /// I/O so far, summed over the bags: ``requests`` and ``bytes_fetched`` of remote reads
    /// (0 for local files), ``chunks_read``, ``chunks_decompressed`` and ``bytes_read``.
    fn stats(&self) -> PyResult<std::collections::BTreeMap<&'static str, u64>> {
        let mut total = rbag_bag::ReadStats::default();
        for b in self.bags()?.iter() {
            total += b.stats();
        }
        Ok([
            ("requests", total.requests),
            ("bytes_fetched", total.bytes_fetched),
            ("chunks_read", total.chunks_read),
            ("chunks_decompressed", total.chunks_decompressed),
            ("bytes_read", total.bytes_read),
        ]
        .into())
    }

    /// The path the (first) bag was opened from.
    #[getter]
    fn path(&self) -> &str {
        &self.paths[0]
    }

    /// The paths of every bag read, in the order given.
    #[getter]
    fn paths(&self) -> Vec<String> {
        self.paths.clone()
    }

    /// The topics, by name, in name order (over every bag: counts add up; the frequency is
    /// given for a topic of one bag only).
    #[getter]
    fn topics(&self, py: Python<'_>) -> PyResult<BTreeMap<String, Topic>> {
        guard(|| {
            let bags = self.bags()?;
            let infos = self.infos(py)?;
            let mut topics: BTreeMap<String, Topic> = BTreeMap::new();
            for (bag, info) in bags.iter().zip(&infos) {
                for t in &info.topics {
                    if let Some(seen) = topics.get_mut(&t.name) {
                        seen.count += t.message_count;
                        seen.connections += t.connections;
                        seen.frequency = None;
                        continue;
                    }
                    let first = bag.connections().iter().find(|c| c.topic == t.name);
                    let topic = Topic {
                        name: t.name.clone(),
                        r#type: t.message_type.clone(),
                        count: t.message_count,
                        encoding: t.encoding.clone(),
                        connections: t.connections,
                        frequency: t.frequency_hz,
                        definition: first.map(|c| c.definition.clone()).unwrap_or_default(),
                        qos: first.and_then(|c| c.metadata.get("offered_qos_profiles").cloned()),
                    };
                    topics.insert(t.name.clone(), topic);
                }
            }
            Ok(topics)
        })
    }

    /// Every connection (a ROS 1 publisher connection, an MCAP channel, a rosbag2 topic), bag
    /// after bag.
    #[getter]
    fn connections(&self, py: Python<'_>) -> PyResult<Vec<Connection>> {
        let bags = self.bags()?;
        Ok(bags
            .iter()
            .enumerate()
            .flat_map(|(i, b)| b.connections().iter().map(move |c| Connection::of(py, i, c)))
            .collect())
    }

    /// The log time of the first message, in ns since the epoch (``None`` when empty).
    #[getter]
    fn start(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.span(py)?.0)
    }

    /// The log time of the last message, in ns since the epoch.
    #[getter]
    fn end(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.span(py)?.1)
    }

    /// ``end - start`` in ns (0 when empty).
    #[getter]
    fn duration(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(match self.span(py)? {
            (Some(s), Some(e), _) => e.saturating_sub(s),
            _ => 0,
        })
    }

    /// The number of messages.
    #[getter]
    fn message_count(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.span(py)?.2)
    }

    /// The full summary as ``rbag info --json`` gives it (a list of them for several bags).
    #[getter]
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let infos = self.infos(py)?;
        let json = match infos.as_slice() {
            [one] => serde_json::to_string(one),
            all => serde_json::to_string(all),
        };
        let text = json.map_err(|e| crate::errors::Error::new_err(e.to_string()))?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// Messages in log-time order: all of them, or those of ``topics`` in ``[start, end)`` (ns
    /// since the epoch). Each has ``topic``, ``log_time``, ``publish_time``, ``data`` (the
    /// serialized bytes) and ``message``, the decoded message (``None`` with ``raw=True``).
    /// A topic the bag does not have raises ``rbag.TopicError``. With ``dialect="ros1"`` (or
    /// ``"ros2"``) messages of the other dialect are converted as ``rbag convert`` converts them
    /// (``pkg/msg/Type`` to ``pkg/Type``, ``builtin_interfaces/Time`` to ``time``, a Header
    /// ``seq``): ``data``, ``type`` and ``message`` are then the converted message's. Topics with
    /// no counterpart in that dialect (ROS 2 service events) are left out, with a warning.
    #[pyo3(signature = (topics = None, start = None, end = None, raw = false, dialect = None))]
    fn messages(
        &self,
        topics: Option<TopicsArg>,
        start: Option<u64>,
        end: Option<u64>,
        raw: bool,
        dialect: Option<&str>,
    ) -> PyResult<Messages> {
        self.open_messages(topics, (start, end), raw, dialect, Build::Msg(Converter::default()))
    }

    /// One topic as a ``pyarrow.Table``, built in Rust and handed over through the Arrow C
    /// stream interface: ``log_time`` (``timestamp[ns]``), then one column per field, nested
    /// messages flattened into dotted names (``pose.position.x``). Variable arrays are list
    /// columns, ``uint8[]`` (image data) binary, fixed arrays fixed-size lists, arrays of
    /// messages lists of structs. ``columns`` keeps only the named columns (``"pose"`` keeps
    /// every ``pose.*`` column); ``start``/``end`` bound the log time to ``[start, end)`` ns.
    /// Needs pyarrow.
    #[pyo3(signature = (topic, columns = None, start = None, end = None))]
    fn to_arrow<'py>(
        &self,
        py: Python<'py>,
        topic: &str,
        columns: Option<Vec<String>>,
        start: Option<u64>,
        end: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guard(|| {
            let bags = self.bags()?;
            let options = rbag_arrow::TableOptions { columns, start, end, ..Default::default() };
            let (schema, batches) = crate::columnar::read_topic(py, &bags, &self.types, topic, options)?;
            crate::columnar::to_table(py, schema, batches)
        })
    }

    /// :meth:`to_arrow` as a ``pandas.DataFrame`` indexed by ``log_time``.
    #[pyo3(signature = (topic, columns = None, start = None, end = None))]
    fn to_pandas<'py>(
        &self,
        py: Python<'py>,
        topic: &str,
        columns: Option<Vec<String>>,
        start: Option<u64>,
        end: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let table = self.to_arrow(py, topic, columns, start, end)?;
        py.import("rbag._columnar")?.getattr("to_pandas")?.call1((table,))
    }

    /// One field of ``topic`` as a numpy array: a number gives a 1-D array, a fixed array
    /// (``float64[9]``) a 2-D one, and a message of numbers (``linear_acceleration``) a 2-D
    /// array with a column per number (``x``, ``y``, ``z``).
    #[pyo3(signature = (topic, field, start = None, end = None))]
    fn to_numpy<'py>(
        &self,
        py: Python<'py>,
        topic: &str,
        field: String,
        start: Option<u64>,
        end: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let table = self.to_arrow(py, topic, Some(vec![field.clone()]), start, end)?;
        py.import("rbag._columnar")?.getattr("to_numpy")?.call1((table, topic, field))
    }

    /// `messages(dialect="ros1")` with genpy-shaped messages, built by `make_class` (type,
    /// fields, slot types, md5 -> class), `time` and `duration`: for `rbag.compat.rosbag`.
    #[pyo3(signature = (topics, start, end, make_class, time, duration))]
    #[allow(clippy::too_many_arguments)]
    fn _genpy_messages(
        &self,
        py: Python<'_>,
        topics: Option<TopicsArg>,
        start: Option<u64>,
        end: Option<u64>,
        make_class: Py<PyAny>,
        time: Py<PyAny>,
        duration: Py<PyAny>,
    ) -> PyResult<Messages> {
        let build = Build::Genpy(Box::new(Genpy::new(py, make_class, time, duration)?));
        self.open_messages(topics, (start, end), false, Some("ros1"), build)
    }

    fn __repr__(&self) -> String {
        match self.paths.as_slice() {
            [one] => format!("<rbag.Reader {one:?}>"),
            all => format!("<rbag.Reader {all:?}>"),
        }
    }

    /// The summary as ``rbag info`` prints it (one after the other for several bags).
    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.infos(py)?.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("\n"))
    }
}

impl Reader {
    /// The messages of `topics` in `[start, end)`, decoded (unless `raw`) into `build`'s shape,
    /// converted into `dialect` when given.
    fn open_messages(
        &self,
        topics: Option<TopicsArg>,
        (start, end): (Option<u64>, Option<u64>),
        raw: bool,
        dialect: Option<&str>,
        build: Build,
    ) -> PyResult<Messages> {
        guard(|| {
            let bags = self.bags()?;
            let topics = topics.map(TopicsArg::into_vec).unwrap_or_default();
            // A topic any of the bags has is fine; one none has is a typo.
            for t in &topics {
                if !bags.iter().any(|b| b.check_topics(&[t]).is_ok()) {
                    bags[0].check_topics(&[t]).or_py()?;
                }
            }
            let filter = Filter { topics, start, end, ..Filter::default() };
            let iter = OwnedIter::try_new(bags, |bags| rbag_bag::merged(bags.iter(), &filter)).or_py()?;
            let shape = match dialect {
                None => None,
                Some(d) => Some(Shape::new(d)?),
            };
            let decoding = Decoding {
                decoders: self.types.iter().map(|t| Decoders::new(t.clone())).collect(),
                convert: build,
                decode: !raw,
                shape,
                connections: HashMap::new(),
            };
            Ok(Messages { state: Mutex::new(State { iter, buffer: VecDeque::new(), done: false, decoding }) })
        })
    }
}

impl Reader {
    /// First and last log time and message count over every bag, from the storages' own
    /// summaries: no per-topic frequencies to compute, unlike [`Self::infos`].
    fn span(&self, py: Python<'_>) -> PyResult<(Option<u64>, Option<u64>, u64)> {
        guard(|| {
            let bags = self.bags()?;
            let infos =
                py.detach(|| bags.iter().map(Bag::storage_info).collect::<rbag_bag::Result<Vec<_>>>()).or_py()?;
            Ok((
                infos.iter().filter_map(|i| i.start_ns).min(),
                infos.iter().filter_map(|i| i.end_ns).max(),
                infos.iter().map(|i| i.message_count).sum(),
            ))
        })
    }

    fn infos(&self, py: Python<'_>) -> PyResult<Vec<rbag_bag::BagInfo>> {
        guard(|| {
            let bags = self.bags()?;
            py.detach(|| bags.iter().map(Bag::info).collect::<rbag_bag::Result<Vec<_>>>()).or_py()
        })
    }
}

/// One topic name, or several.
#[derive(FromPyObject)]
pub enum TopicsArg {
    One(String),
    Many(Vec<String>),
}

impl TopicsArg {
    fn into_vec(self) -> Vec<String> {
        match self {
            TopicsArg::One(t) => vec![t],
            TopicsArg::Many(v) => v,
        }
    }
}

type BagMessages<'a> = TimeMerge<'a>;

self_cell!(
    /// The bags' merged messages together with the bags they borrow.
    struct OwnedIter {
        owner: Arc<Vec<Bag>>,
        #[covariant]
        dependent: BagMessages,
    }
);

/// A connection's key across bags: its bag's index, then its id in that bag.
fn key(bag: usize, id: u32) -> u64 {
    ((bag as u64) << 32) | u64::from(id)
}

/// What happens to each raw message on its way to Python.
struct Decoding {
    /// Per bag.
    decoders: Vec<Decoders>,
    convert: Build,
    /// Whether messages are decoded (not with ``raw=True``).
    decode: bool,
    /// Messages converted into one dialect's shape.
    shape: Option<Shape>,
    /// Each connection's Python object, made once, by [`key`].
    connections: HashMap<u64, Py<Connection>>,
}

/// What decoded messages become in Python.
enum Build {
    /// `rbag.Msg`.
    Msg(Converter),
    /// genpy's shape, for `rbag.compat.rosbag`.
    Genpy(Box<Genpy>),
}

impl Build {
    fn message(
        &mut self,
        py: Python<'_>,
        k: u64,
        conn: &rbag_bag::Connection,
        view: rbag_bag::decode::MessageRef<'_>,
    ) -> PyResult<Py<PyAny>> {
        match self {
            Build::Msg(c) => c.message(py, k, view),
            Build::Genpy(g) => g.message(py, k, conn.metadata.get("md5sum").map_or("", String::as_str), view),
        }
    }
}

/// Conversion into one dialect (``dialect="ros1"``), planned per connection as convert does.
struct Shape {
    encoding: &'static str,
    targets: Targets,
    /// By [`key`].
    plans: HashMap<u64, Planned>,
    /// Decoders of the converted connections, per bag.
    out: Vec<Decoders>,
    buf: Vec<u8>,
}

enum Planned {
    Copy,
    Rewrite(Box<Rewrite>),
    Skip,
}

impl Shape {
    fn new(dialect: &str) -> PyResult<Shape> {
        let encoding = match dialect {
            "ros1" => "ros1",
            "ros2" => "cdr",
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "dialect {other:?}: use \"ros1\" or \"ros2\""
                )))
            }
        };
        let targets = rbag_bag::types::targets(None, &[], None).or_py()?;
        Ok(Shape { encoding, targets, plans: HashMap::new(), out: Vec::new(), buf: Vec::new() })
    }
}

impl Decoding {
    /// The Python message for `m` of connection `conn` of bag `b`; `None` when its topic is
    /// left out.
    fn next(
        &mut self,
        py: Python<'_>,
        (b, bag): (usize, &Bag),
        conn: &rbag_bag::Connection,
        m: &rbag_bag::Message,
    ) -> PyResult<Option<Message>> {
        let fail = |e: rbag_bag::decode::DecodeError| DecodeError::new_err(format!("{}: {e}", bag.path().display()));
        let Decoding { decoders, convert, decode, shape, connections } = self;
        let decoders = &mut decoders[b];
        let k = key(b, conn.id);
        let Some(Shape { encoding, targets, plans, out, buf }) = shape else {
            let py_conn = py_connection(py, connections, b, conn)?;
            return direct(py, decoders, convert, *decode, (k, conn), &py_conn, m)
                .map(Some)
                .map_err(|e| e.into_py(fail));
        };
        if let std::collections::hash_map::Entry::Vacant(slot) = plans.entry(k) {
            let planned =
                match rbag_bag::transcode::plan(conn, encoding, Some(&m.data), decoders, targets).map_err(fail)? {
                    ConnectionPlan::Copy => Planned::Copy,
                    ConnectionPlan::Rewrite(r) => Planned::Rewrite(r),
                    ConnectionPlan::Skip(why) => {
                        let msg = format!("{}: topic {} left out: {why}", bag.path().display(), conn.topic);
                        PyErr::warn(
                            py,
                            &py.get_type::<pyo3::exceptions::PyUserWarning>(),
                            &std::ffi::CString::new(msg).unwrap_or_default(),
                            1,
                        )?;
                        Planned::Skip
                    }
                };
            slot.insert(planned);
        }
        match plans.get(&k) {
            None | Some(Planned::Skip) => Ok(None),
            Some(Planned::Copy) => {
                let py_conn = py_connection(py, connections, b, conn)?;
                direct(py, decoders, convert, *decode, (k, conn), &py_conn, m).map(Some).map_err(|e| e.into_py(fail))
            }
            Some(Planned::Rewrite(r)) => {
                r.apply(decoders, m.log_time, &m.data, buf).map_err(fail)?;
                let message = match decode {
                    false => None,
                    true => {
                        out.resize_with(out.len().max(b + 1), Decoders::default);
                        let view = out[b].view(&r.target, m.log_time, buf).map_err(fail)?;
                        Some(convert.message(py, k, &r.target, view)?)
                    }
                };
                let py_conn = py_connection(py, connections, b, &r.target)?;
                Ok(Some(Message::new(py, &py_conn, m, buf, message)?))
            }
        }
    }
}

/// Why a message could not become a Python message: its decoding or Python itself.
enum NextError {
    Decode(rbag_bag::decode::DecodeError),
    Py(PyErr),
}

impl NextError {
    fn into_py(self, fail: impl Fn(rbag_bag::decode::DecodeError) -> PyErr) -> PyErr {
        match self {
            NextError::Decode(e) => fail(e),
            NextError::Py(e) => e,
        }
    }
}

/// The Python object of `conn`, made on first use.
fn py_connection(
    py: Python<'_>,
    cache: &mut HashMap<u64, Py<Connection>>,
    bag: usize,
    conn: &rbag_bag::Connection,
) -> PyResult<Py<Connection>> {
    let k = key(bag, conn.id);
    if let Some(c) = cache.get(&k) {
        return Ok(c.clone_ref(py));
    }
    let c = Py::new(py, Connection::of(py, bag, conn))?;
    cache.insert(k, c.clone_ref(py));
    Ok(c)
}

/// `m` as the bag holds it, decoded unless `decode` is false.
fn direct(
    py: Python<'_>,
    decoders: &mut Decoders,
    convert: &mut Build,
    decode: bool,
    (k, conn): (u64, &rbag_bag::Connection),
    py_conn: &Py<Connection>,
    m: &rbag_bag::Message,
) -> Result<Message, NextError> {
    let message = match decode {
        false => None,
        true => {
            let view = decoders.view(conn, m.log_time, &m.data).map_err(NextError::Decode)?;
            Some(convert.message(py, k, conn, view).map_err(NextError::Py)?)
        }
    };
    Message::new(py, py_conn, m, &m.data, message).map_err(NextError::Py)
}

struct State {
    iter: OwnedIter,
    /// Messages read ahead, each with its bag's index.
    buffer: VecDeque<(usize, rbag_bag::Message)>,
    done: bool,
    decoding: Decoding,
}

impl State {
    /// Reads the next batch (without the GIL): stops at the end or at the first error, which is
    /// returned after the messages before it.
    fn fill(&mut self) -> rbag_bag::Result<()> {
        let mut bytes = 0;
        let (buffer, done) = (&mut self.buffer, &mut self.done);
        self.iter.with_dependent_mut(|_, iter| {
            while buffer.len() < BATCH_MESSAGES && bytes < BATCH_BYTES {
                match iter.next() {
                    Some(Ok((b, m))) => {
                        bytes += m.data.len();
                        let last = m.data.len() >= BATCH_LAST;
                        buffer.push_back((b, m));
                        if last {
                            break;
                        }
                    }
                    Some(Err(e)) => {
                        *done = true;
                        return Err(e.into());
                    }
                    None => {
                        *done = true;
                        break;
                    }
                }
            }
            Ok(())
        })
    }
}

/// An iterator over a bag's messages, from ``Reader.messages``.
#[pyclass(module = "rbag")]
pub struct Messages {
    state: Mutex<State>,
}

#[pymethods]
impl Messages {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Message>> {
        guard(|| {
            let mut guarded = self.state.lock().map_err(poisoned)?;
            let state = &mut *guarded;
            loop {
                if state.buffer.is_empty() && !state.done {
                    py.detach(|| state.fill()).or_py()?;
                }
                let Some((b, m)) = state.buffer.pop_front() else { return Ok(None) };
                let bags = state.iter.borrow_owner().clone();
                let bag = &bags[b];
                let Some(conn) = bag.connection(m.connection) else {
                    return Err(DecodeError::new_err(format!(
                        "{}: message at {} on connection {}, which the bag does not declare",
                        bag.path().display(),
                        m.log_time,
                        m.connection
                    )));
                };
                if let Some(message) = state.decoding.next(py, (b, bag), conn, &m)? {
                    return Ok(Some(message));
                }
            }
        })
    }
}

/// One message of a bag.
#[pyclass(module = "rbag", frozen, get_all)]
pub struct Message {
    /// Its topic.
    topic: Py<PyString>,
    /// When it was logged, ns since the epoch.
    log_time: u64,
    /// When it was published (ROS 1 bags repeat the log time).
    publish_time: u64,
    /// The serialized message: a read-only ``memoryview``, over the storage's own buffer (no
    /// copy) for payloads of 4 KiB or more. ``bytes(m.data)`` makes a copy to keep.
    data: Py<PyAny>,
    /// The decoded message, or ``None`` when read with ``raw=True``.
    message: Option<Py<PyAny>>,
    /// Its connection (after conversion, with ``dialect``, the converted one's definition):
    /// what ``Writer.add_connection`` needs to copy it.
    connection: Py<Connection>,
    /// Its message type.
    r#type: Py<PyString>,
}

impl Message {
    /// `m`, whose payload is `data`: `m.data` itself when it was not converted, so that it can
    /// be shared without a copy.
    fn new(
        py: Python<'_>,
        conn: &Py<Connection>,
        m: &rbag_bag::Message,
        data: &[u8],
        message: Option<Py<PyAny>>,
    ) -> PyResult<Message> {
        let c = conn.get();
        let shared = std::ptr::eq(data, &*m.data).then_some(&m.data);
        Ok(Message {
            topic: c.topic.clone_ref(py),
            log_time: m.log_time,
            publish_time: m.publish_time,
            data: crate::data::view(py, shared, data)?,
            message,
            connection: conn.clone_ref(py),
            r#type: c.r#type.clone_ref(py),
        })
    }
}

#[pymethods]
impl Message {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "<rbag.Message {} {} at {}.{:09}, {} bytes>",
            self.topic.bind(py),
            self.r#type.bind(py),
            self.log_time / 1_000_000_000,
            self.log_time % 1_000_000_000,
            self.data.bind(py).len().unwrap_or(0)
        )
    }
}

/// A topic of a bag.
#[pyclass(module = "rbag", frozen, get_all)]
#[derive(Clone)]
pub struct Topic {
    /// The topic's name.
    name: String,
    /// Its message type.
    r#type: String,
    /// How many messages it has.
    count: u64,
    /// ``ros1`` or ``cdr``.
    encoding: String,
    /// How many connections carry it.
    connections: u64,
    /// Messages per second (1 / the median period), where the index tells it.
    frequency: Option<f64>,
    /// The message definition, as the bag stores it.
    definition: String,
    /// The offered QoS profiles (rosbag2's YAML text), for ROS 2 topics.
    qos: Option<String>,
}

#[pymethods]
impl Topic {
    fn __repr__(&self) -> String {
        format!("<rbag.Topic {} {} ({} messages)>", self.name, self.r#type, self.count)
    }
}

/// A connection: one publisher of a ROS 1 bag, an MCAP channel, a rosbag2 topic.
#[pyclass(module = "rbag", frozen, get_all)]
pub struct Connection {
    /// The index of its bag in ``Reader.paths``.
    bag: usize,
    /// The id messages refer to (unique within its bag).
    id: u32,
    /// The topic (one string object, which every message of the connection shares).
    topic: Py<PyString>,
    /// The message type.
    r#type: Py<PyString>,
    /// ``ros1`` or ``cdr``.
    encoding: String,
    /// The message definition.
    definition: String,
    /// ``ros1msg``, ``ros2msg``, ``ros2idl``, or empty.
    definition_encoding: String,
    /// Middleware fields: ROS 1 ``md5sum``, ``callerid``, ``latching``; ROS 2
    /// ``offered_qos_profiles``, ``type_description_hash``.
    metadata: BTreeMap<String, String>,
}

impl Connection {
    fn of(py: Python<'_>, bag: usize, c: &rbag_bag::Connection) -> Self {
        Connection {
            bag,
            id: c.id,
            topic: PyString::intern(py, &c.topic).unbind(),
            r#type: PyString::intern(py, &c.message_type).unbind(),
            encoding: c.encoding.clone(),
            definition: c.definition.clone(),
            definition_encoding: c.definition_encoding.clone(),
            metadata: c.metadata.clone(),
        }
    }
}

#[pymethods]
impl Connection {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!("<rbag.Connection {} {} {}>", self.id, self.topic.bind(py), self.r#type.bind(py))
    }
}
