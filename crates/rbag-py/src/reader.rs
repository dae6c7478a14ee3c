//! `rbag.Reader`: any bag opened for reading, its summary, and its messages raw or decoded.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use rbag_bag::decode::{Decoders, TypeSources};
use rbag_bag::transcode::{ConnectionPlan, Rewrite, Targets};
use rbag_bag::{Bag, Filter, MessageIter, OpenOptions};
use self_cell::self_cell;

use crate::errors::{guard, poisoned, ClosedError, DecodeError, OrPy};
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

/// A bag opened for reading: a ROS 1 `.bag`, a rosbag2 directory, or a `.db3`/`.mcap` file.
///
/// Use it as a context manager (``with rbag.Reader(path) as bag:``) or call ``close()``.
/// Message types come from the bag's own definitions, then the ``msg_path`` directories, then
/// the bundled store (ROS 1 noetic; ROS 2 humble and later common types).
#[pyclass(module = "rbag", frozen)]
pub struct Reader {
    bag: RwLock<Option<Arc<Bag>>>,
    path: String,
    types: TypeSources,
}

impl Reader {
    fn bag(&self) -> PyResult<Arc<Bag>> {
        self.bag
            .read()
            .map_err(poisoned)?
            .clone()
            .ok_or_else(|| ClosedError::new_err(format!("{}: the reader is closed", self.path)))
    }
}

#[pymethods]
impl Reader {
    /// Opens the bag at ``path``. ``msg_path`` lists directories of ``.msg`` files (or
    /// ``PKG=DIR``) for types neither the bag nor the bundled store define. ``lenient`` reads
    /// messages on connections the bag never declares as ``/rbag/undeclared/<id>`` instead of
    /// failing.
    #[new]
    #[pyo3(signature = (path, *, msg_path = None, lenient = false))]
    fn new(py: Python<'_>, path: PathBuf, msg_path: Option<Vec<String>>, lenient: bool) -> PyResult<Self> {
        guard(|| {
            let dirs = msg_path.unwrap_or_default();
            let (bag, types) = py
                .detach(|| -> rbag_bag::Result<_> {
                    let bag = Bag::open_with(&path, &OpenOptions { lenient })?;
                    let types = rbag_bag::types::sources_for(&bag.storage_info()?.properties, &dirs)?;
                    Ok((bag, types))
                })
                .or_py()?;
            Ok(Reader { bag: RwLock::new(Some(Arc::new(bag))), path: path.display().to_string(), types })
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
        *self.bag.write().map_err(poisoned)? = None;
        Ok(())
    }

    /// The path the bag was opened from.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// The topics, by name, in name order.
    #[getter]
    fn topics(&self, py: Python<'_>) -> PyResult<BTreeMap<String, Topic>> {
        guard(|| {
            let bag = self.bag()?;
            let info = py.detach(|| bag.info()).or_py()?;
            Ok(info
                .topics
                .iter()
                .map(|t| {
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
                    (t.name.clone(), topic)
                })
                .collect())
        })
    }

    /// Every connection (a ROS 1 publisher connection, an MCAP channel, a rosbag2 topic).
    #[getter]
    fn connections(&self) -> PyResult<Vec<Connection>> {
        Ok(self.bag()?.connections().iter().map(Connection::from).collect())
    }

    /// The log time of the first message, in ns since the epoch (``None`` when empty).
    #[getter]
    fn start(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.summary(py)?.start_ns)
    }

    /// The log time of the last message, in ns since the epoch.
    #[getter]
    fn end(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.summary(py)?.end_ns)
    }

    /// ``end - start`` in ns (0 when empty).
    #[getter]
    fn duration(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.summary(py)?.duration_ns)
    }

    /// The number of messages.
    #[getter]
    fn message_count(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.summary(py)?.message_count)
    }

    /// The full summary as ``rbag info --json`` gives it.
    #[getter]
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let info = self.summary(py)?;
        let text = serde_json::to_string(&info).map_err(|e| crate::errors::Error::new_err(e.to_string()))?;
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
        guard(|| {
            let bag = self.bag()?;
            let topics = topics.map(TopicsArg::into_vec).unwrap_or_default();
            bag.check_topics(&topics).or_py()?;
            let filter = Filter { topics, start, end, ..Filter::default() };
            let iter = OwnedIter::try_new(bag, |bag| bag.messages(&filter)).or_py()?;
            let shape = match dialect {
                None => None,
                Some(d) => Some(Shape::new(d)?),
            };
            let decoding = Decoding {
                decoders: Decoders::new(self.types.clone()),
                convert: Converter::default(),
                decode: !raw,
                shape,
                connections: HashMap::new(),
            };
            Ok(Messages { state: Mutex::new(State { iter, buffer: VecDeque::new(), done: false, decoding }) })
        })
    }

    fn __repr__(&self) -> String {
        format!("<rbag.Reader {:?}>", self.path)
    }

    /// The summary as ``rbag info`` prints it.
    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.summary(py)?.to_string())
    }
}

impl Reader {
    fn summary(&self, py: Python<'_>) -> PyResult<rbag_bag::BagInfo> {
        guard(|| {
            let bag = self.bag()?;
            py.detach(|| bag.info()).or_py()
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

type BagMessages<'a> = MessageIter<'a>;

self_cell!(
    /// A bag's message iterator together with the bag it borrows.
    struct OwnedIter {
        owner: Arc<Bag>,
        #[covariant]
        dependent: BagMessages,
    }
);

/// What happens to each raw message on its way to Python.
struct Decoding {
    decoders: Decoders,
    convert: Converter,
    /// Whether messages are decoded (not with ``raw=True``).
    decode: bool,
    /// Messages converted into one dialect's shape.
    shape: Option<Shape>,
    /// Each connection's Python object, made once.
    connections: HashMap<u32, Py<Connection>>,
}

/// Conversion into one dialect (``dialect="ros1"``), planned per connection as convert does.
struct Shape {
    encoding: &'static str,
    targets: Targets,
    plans: HashMap<u32, Planned>,
    /// Decoders of the converted connections.
    out: Decoders,
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
        Ok(Shape { encoding, targets, plans: HashMap::new(), out: Decoders::default(), buf: Vec::new() })
    }
}

impl Decoding {
    /// The Python message for `m` of connection `conn`; `None` when its topic is left out.
    fn next(
        &mut self,
        py: Python<'_>,
        bag: &Bag,
        conn: &rbag_bag::Connection,
        m: &rbag_bag::Message,
    ) -> PyResult<Option<Message>> {
        let fail = |e: rbag_bag::decode::DecodeError| DecodeError::new_err(format!("{}: {e}", bag.path().display()));
        let Decoding { decoders, convert, decode, shape, connections } = self;
        let Some(Shape { encoding, targets, plans, out, buf }) = shape else {
            let py_conn = py_connection(py, connections, conn)?;
            return direct(py, decoders, convert, *decode, conn, &py_conn, m).map(Some).map_err(|e| e.into_py(fail));
        };
        if let std::collections::hash_map::Entry::Vacant(slot) = plans.entry(conn.id) {
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
        match plans.get(&conn.id) {
            None | Some(Planned::Skip) => Ok(None),
            Some(Planned::Copy) => {
                let py_conn = py_connection(py, connections, conn)?;
                direct(py, decoders, convert, *decode, conn, &py_conn, m).map(Some).map_err(|e| e.into_py(fail))
            }
            Some(Planned::Rewrite(r)) => {
                r.apply(decoders, m.log_time, &m.data, buf).map_err(fail)?;
                let message = match decode {
                    false => None,
                    true => {
                        let view = out.view(&r.target, m.log_time, buf).map_err(fail)?;
                        Some(convert.message(py, conn.id, view)?)
                    }
                };
                let py_conn = py_connection(py, connections, &r.target)?;
                Ok(Some(Message::new(py, &py_conn, m, buf, message)))
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
    cache: &mut HashMap<u32, Py<Connection>>,
    conn: &rbag_bag::Connection,
) -> PyResult<Py<Connection>> {
    if let Some(c) = cache.get(&conn.id) {
        return Ok(c.clone_ref(py));
    }
    let c = Py::new(py, Connection::from(conn))?;
    cache.insert(conn.id, c.clone_ref(py));
    Ok(c)
}

/// `m` as the bag holds it, decoded unless `decode` is false.
fn direct(
    py: Python<'_>,
    decoders: &mut Decoders,
    convert: &mut Converter,
    decode: bool,
    conn: &rbag_bag::Connection,
    py_conn: &Py<Connection>,
    m: &rbag_bag::Message,
) -> Result<Message, NextError> {
    let message = match decode {
        false => None,
        true => {
            let view = decoders.view(conn, m.log_time, &m.data).map_err(NextError::Decode)?;
            Some(convert.message(py, conn.id, view).map_err(NextError::Py)?)
        }
    };
    Ok(Message::new(py, py_conn, m, &m.data, message))
}

struct State {
    iter: OwnedIter,
    buffer: VecDeque<rbag_bag::Message>,
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
                    Some(Ok(m)) => {
                        bytes += m.data.len();
                        let last = m.data.len() >= BATCH_LAST;
                        buffer.push_back(m);
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
                let Some(m) = state.buffer.pop_front() else { return Ok(None) };
                let bag = state.iter.borrow_owner().clone();
                let Some(conn) = bag.connection(m.connection) else {
                    return Err(DecodeError::new_err(format!(
                        "{}: message at {} on connection {}, which the bag does not declare",
                        bag.path().display(),
                        m.log_time,
                        m.connection
                    )));
                };
                if let Some(message) = state.decoding.next(py, &bag, conn, &m)? {
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
    /// The serialized message.
    data: Py<PyBytes>,
    /// The decoded message, or ``None`` when read with ``raw=True``.
    message: Option<Py<PyAny>>,
    /// Its connection (after conversion, with ``dialect``, the converted one's definition):
    /// what ``Writer.add_connection`` needs to copy it.
    connection: Py<Connection>,
    /// Its message type.
    r#type: Py<PyString>,
}

impl Message {
    fn new(
        py: Python<'_>,
        conn: &Py<Connection>,
        m: &rbag_bag::Message,
        data: &[u8],
        message: Option<Py<PyAny>>,
    ) -> Message {
        let c = conn.get();
        Message {
            topic: PyString::intern(py, &c.topic).unbind(),
            log_time: m.log_time,
            publish_time: m.publish_time,
            data: PyBytes::new(py, data).unbind(),
            message,
            connection: conn.clone_ref(py),
            r#type: PyString::intern(py, &c.r#type).unbind(),
        }
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
            self.data.bind(py).as_bytes().len()
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
    /// The id messages refer to.
    id: u32,
    /// The topic.
    topic: String,
    /// The message type.
    r#type: String,
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

impl From<&rbag_bag::Connection> for Connection {
    fn from(c: &rbag_bag::Connection) -> Self {
        Connection {
            id: c.id,
            topic: c.topic.clone(),
            r#type: c.message_type.clone(),
            encoding: c.encoding.clone(),
            definition: c.definition.clone(),
            definition_encoding: c.definition_encoding.clone(),
            metadata: c.metadata.clone(),
        }
    }
}

#[pymethods]
impl Connection {
    fn __repr__(&self) -> String {
        format!("<rbag.Connection {} {} {}>", self.id, self.topic, self.r#type)
    }
}
