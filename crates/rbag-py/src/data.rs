//! `Message.data`: a read-only `memoryview` of the serialized message. A payload of 4 KiB or
//! more is not copied: the view is over a read-only numpy array that borrows the storage's own
//! buffer (a slice of the mapped file or of a decompressed chunk) and keeps it alive. Smaller
//! payloads are copied into `bytes`, so they do not pin a whole chunk. (abi3 for Python 3.9
//! has no buffer protocol for classes of our own; numpy's array is the owner that has one.)

use bytes::Bytes;
use numpy::ndarray::ArrayView1;
use numpy::{PyArray1, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMemoryView};

/// Payloads at least this large are shared, not copied.
const SHARE_FROM: usize = 4096;

/// Keeps the storage's buffer alive for as long as Python holds a view of it.
#[pyclass(module = "rbag", frozen)]
struct Owner(#[allow(dead_code)] Bytes);

/// A read-only view of `data`; shared without a copy when `shared` holds it and it is large.
pub fn view(py: Python<'_>, shared: Option<&Bytes>, data: &[u8]) -> PyResult<Py<PyAny>> {
    let obj = match shared.filter(|b| b.len() >= SHARE_FROM) {
        Some(b) => {
            let owner = Bound::new(py, Owner(b.clone()))?;
            // SAFETY: the array borrows the memory of `b`, which the clone of it in `owner`
            // shares (a `Bytes` clone points at the same buffer, and keeps it alive). The
            // array holds `owner` as its base object, so the memory outlives the array.
            let array = unsafe { PyArray1::<u8>::borrow_from_array(&ArrayView1::from(&b[..]), owner.into_any()) };
            // SAFETY: the array was just made and nothing else refers to it yet; clearing the
            // writeable flag keeps Python from writing into a read-only mapping or shared chunk.
            unsafe { (*array.as_array_ptr()).fields.flags &= !numpy::npyffi::flags::NPY_ARRAY_WRITEABLE };
            array.into_any()
        }
        None => PyBytes::new(py, data).into_any(),
    };
    Ok(PyMemoryView::from(&obj)?.into_any().unbind())
}
