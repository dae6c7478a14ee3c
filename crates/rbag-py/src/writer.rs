//! `rbag.Writer`: a new bag of any storage, written from raw bytes or from messages given as
//! dicts or `rbag.Msg` objects.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyTuple};
use rbag_bag::decode::Dialect;
use rbag_bag::{Compression, DirectIo, OutputPolicy, WriteOptions};

use crate::errors::{guard, poisoned, ClosedError, Error, OrPy};
use crate::value::to_value;

/// A bag being written. It appears at ``path`` only when ``close()`` (or the end of a ``with``
/// block without an exception) completes it; until then it is written under a temporary name,
/// so a failed or abandoned write leaves nothing at ``path``.
///
/// ``storage`` is ``"mcap"``, ``"sqlite3"``, ``"ros1"`` or any registered storage; by default it
/// follows the extension (``.bag``: ROS 1, ``.db3``: SQLite3, ``.mcap`` or none: MCAP).
/// ``compression`` is ``"lz4"``, ``"zstd"`` (MCAP) or ``"bz2"``, ``"lz4"`` (ROS 1).
/// ``direct_io`` writes ROS 1 and MCAP files with ``O_DIRECT`` so they do not fill the page
/// cache: ``True`` falls back to buffered writing (with a warning) where the filesystem refuses
/// it, ``"require"`` makes that an error.
#[pyclass(module = "rbag", frozen)]
pub struct Writer {
    inner: Mutex<Option<rbag_bag::Writer>>,
    path: String,
}

impl Writer {
    fn with<T>(&self, f: impl FnOnce(&mut rbag_bag::Writer) -> PyResult<T>) -> PyResult<T> {
        let mut inner = self.inner.lock().map_err(poisoned)?;
        let w = inner.as_mut().ok_or_else(|| ClosedError::new_err(format!("{}: the writer is closed", self.path)))?;
        f(w)
    }
}

/// `direct_io=`: `None`/`False` off, `True` on with fallback, `"require"`.
fn direct_io_mode(v: Option<&Bound<'_, PyAny>>) -> PyResult<DirectIo> {
    let Some(v) = v.filter(|v| !v.is_none()) else { return Ok(DirectIo::Off) };
    if let Ok(b) = v.extract::<bool>() {
        return Ok(if b { DirectIo::On } else { DirectIo::Off });
    }
    match v.extract::<String>().as_deref() {
        Ok("require") => Ok(DirectIo::Require),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "direct_io must be True, False or \"require\", not {v}"
        ))),
    }
}

#[pymethods]
impl Writer {
    /// Creates the bag at ``path``; an existing file or directory there is an error unless
    /// ``overwrite``. ``msg_path`` adds directories of ``.msg`` files for ``add_connection``.
    #[new]
    #[pyo3(signature = (path, storage = None, compression = None, *, overwrite = false, msg_path = None, direct_io = None))]
    fn new(
        path: PathBuf,
        storage: Option<&str>,
        compression: Option<&str>,
        overwrite: bool,
        msg_path: Option<Vec<String>>,
        direct_io: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let direct_io = direct_io_mode(direct_io)?;
        guard(|| {
            let backend = rbag_bag::storage_for(&path, storage).or_py()?;
            let compression = match compression {
                None => Compression::None,
                Some(c) => c.parse::<Compression>().map_err(Error::new_err)?,
            };
            // `msg_path` first, then the bundled store (noetic, humble and later).
            let types = rbag_bag::types::sources_for(&Default::default(), &msg_path.unwrap_or_default()).or_py()?;
            let options = WriteOptions { compression, direct_io, ..WriteOptions::default() };
            let policy = OutputPolicy { replace: overwrite, ..OutputPolicy::default() };
            let mut w = rbag_bag::Writer::create_with(&path, &backend, &options, &policy).or_py()?;
            w.set_types(types);
            Ok(Writer { inner: Mutex::new(Some(w)), path: path.display().to_string() })
        })
    }

    /// Adds a connection for ``topic`` with messages of ``type`` (``std_msgs/msg/String``, or
    /// ``std_msgs/String`` in a ROS 1 bag) and returns its id. The definition and hash come
    /// from the bundled store and ``msg_path``, unless ``definition`` gives the full text (then
    /// ``encoding`` and ``definition_encoding`` say what it is; ``metadata`` adds fields such as
    /// ``offered_qos_profiles``).
    #[pyo3(signature = (topic, r#type, *, definition = None, encoding = None, definition_encoding = None, metadata = None))]
    fn add_connection(
        &self,
        topic: &str,
        r#type: &str,
        definition: Option<String>,
        encoding: Option<String>,
        definition_encoding: Option<String>,
        metadata: Option<std::collections::BTreeMap<String, String>>,
    ) -> PyResult<u32> {
        guard(|| {
            self.with(|w| {
                let ros1 = w.dialect() == Dialect::Ros1;
                let mut conn = match &definition {
                    Some(text) => rbag_bag::Connection {
                        topic: topic.into(),
                        message_type: r#type.into(),
                        encoding: encoding.clone().unwrap_or_else(|| if ros1 { "ros1" } else { "cdr" }.into()),
                        definition: text.clone(),
                        definition_encoding: definition_encoding
                            .clone()
                            .unwrap_or_else(|| if ros1 { "ros1msg" } else { "ros2msg" }.into()),
                        ..rbag_bag::Connection::default()
                    },
                    None => rbag_bag::types::connection_for(topic, r#type, w.dialect(), w.types())
                        .map_err(|e| crate::errors::to_py(e.into()))?,
                };
                conn.metadata.extend(metadata.clone().unwrap_or_default());
                w.add_connection(&conn).or_py()
            })
        })
    }

    /// Writes one message on connection ``connection`` (an id from ``add_connection``) at
    /// ``log_time`` (ns since the epoch). ``data`` is the serialized bytes, or the message as a
    /// dict or ``rbag.Msg``, which is encoded with the connection's type.
    #[pyo3(signature = (connection, log_time, data, publish_time = None))]
    fn write(
        &self,
        py: Python<'_>,
        connection: u32,
        log_time: u64,
        data: &Bound<'_, PyAny>,
        publish_time: Option<u64>,
    ) -> PyResult<()> {
        guard(|| {
            let publish_time = publish_time.unwrap_or(log_time);
            // Serialized bytes: `bytes`, or a buffer such as `Message.data`'s memoryview.
            let raw = match data.cast::<PyBytes>() {
                Ok(b) => Some(b.clone()),
                Err(_) if data.cast::<PyMemoryView>().is_ok() || data.cast::<PyByteArray>().is_ok() => {
                    Some(py.import("builtins")?.getattr("bytes")?.call1((data,))?.cast_into::<PyBytes>()?)
                }
                Err(_) => None,
            };
            if let Some(bytes) = raw {
                let bytes = bytes.as_bytes();
                return self.with(|w| py.detach(|| w.write(connection, log_time, publish_time, bytes)).or_py());
            }
            self.with(|w| {
                let schema = w.schema(connection).or_py()?;
                let value = to_value(&schema, schema.root, data, "")?;
                w.write_value(connection, log_time, publish_time, &value).or_py()
            })
        })
    }

    /// Completes the bag and moves it into place. Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        guard(|| {
            let w = self.inner.lock().map_err(poisoned)?.take();
            match w {
                Some(w) => py.detach(|| w.finish()).or_py(),
                None => Ok(()),
            }
        })
    }

    /// Drops the bag being written: nothing appears at ``path``.
    fn abandon(&self) -> PyResult<()> {
        drop(self.inner.lock().map_err(poisoned)?.take());
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Completes the bag, or abandons it when the block raised.
    #[pyo3(signature = (*exc))]
    fn __exit__(&self, py: Python<'_>, exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        let raised = exc.get_item(0).is_ok_and(|t| !t.is_none());
        if raised {
            self.abandon()?;
        } else {
            self.close(py)?;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("<rbag.Writer {:?}>", self.path)
    }
}
