//! `Reader.to_arrow` and what builds on it: a topic's columns are built in Rust (rbag-arrow)
//! and handed to pyarrow through the Arrow C stream interface (a PyCapsule), never through
//! Python objects.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rbag_arrow::arrow_array::ffi_stream::FFI_ArrowArrayStream;
use rbag_arrow::arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use rbag_arrow::arrow_schema::SchemaRef;
use rbag_arrow::{TableOptions, TopicBatches};
use rbag_bag::decode::TypeSources;
use rbag_bag::Bag;

use crate::errors::{arrow_to_py, poisoned, Error};

/// Batches already built, offered to pyarrow once as an Arrow C stream.
#[pyclass(module = "rbag._rbag", frozen)]
pub struct ArrowStream(Mutex<Option<Box<dyn RecordBatchReader + Send>>>);

#[pymethods]
impl ArrowStream {
    /// The Arrow PyCapsule stream interface (read by ``pyarrow.RecordBatchReader.from_stream``).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is the bag's own; a consumer that wants another casts the table.
        let _ = requested_schema;
        let reader = self
            .0
            .lock()
            .map_err(poisoned)?
            .take()
            .ok_or_else(|| Error::new_err("the Arrow stream was already read"))?;
        // An unread capsule drops the stream (and releases it); one pyarrow imported holds a
        // released stream, whose drop does nothing.
        PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(reader), c"arrow_array_stream")
    }
}

/// Reads `topic` of `bags` into batches, with the GIL released while each batch is built and
/// Ctrl-C checked between them.
pub fn read_topic(
    py: Python<'_>,
    bags: &[Bag],
    types: &[TypeSources],
    topic: &str,
    options: TableOptions,
) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let mut batches = py.detach(|| TopicBatches::new(bags, types, topic, options)).map_err(arrow_to_py)?;
    let schema = batches.schema();
    let mut out = Vec::new();
    while let Some(b) = py.detach(|| batches.next_batch()).map_err(arrow_to_py)? {
        out.push(b);
        py.check_signals()?;
    }
    Ok((schema, out))
}

/// The batches as a `pyarrow.Table`.
pub fn to_table<'py>(py: Python<'py>, schema: SchemaRef, batches: Vec<RecordBatch>) -> PyResult<Bound<'py, PyAny>> {
    let pyarrow = py.import("pyarrow").map_err(|e| {
        pyo3::exceptions::PyImportError::new_err(format!(
            "rbag's columnar reads need pyarrow (pip install pyarrow): {e}"
        ))
    })?;
    let reader: Box<dyn RecordBatchReader + Send> =
        Box::new(RecordBatchIterator::new(batches.into_iter().map(Ok), schema));
    let stream = Bound::new(py, ArrowStream(Mutex::new(Some(reader))))?;
    // Not `pyarrow.table(stream)`: it checks for a DataFrame first, importing pandas (0.6 s
    // on the first call).
    pyarrow.getattr("RecordBatchReader")?.call_method1("from_stream", (stream,))?.call_method0("read_all")
}
