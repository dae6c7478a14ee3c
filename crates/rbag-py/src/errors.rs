//! The `rbag.Error` hierarchy, the mapping from `rbag_bag::Error` to it, and the guard that keeps
//! Rust panics out of Python.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    rbag,
    Error,
    PyException,
    "Anything rbag fails with. The message names the file, offset, record, topic or field at fault."
);
create_exception!(
    rbag,
    StorageError,
    Error,
    "A bag could not be read or written: a damaged or missing file, an output that exists."
);
create_exception!(rbag, DecodeError, Error, "A message could not be decoded or encoded with its type.");
create_exception!(
    rbag,
    TopicError,
    Error,
    "A topic or field asked for is not in the bag; the message lists those that are."
);
create_exception!(rbag, ClosedError, Error, "The reader or writer was closed.");
create_exception!(
    rbag,
    InternalError,
    Error,
    "A bug in rbag, caught before it could reach Python; the interpreter and later calls are unaffected."
);

/// Adds the exception types to the module, and routes panic messages to [`guard`] instead of
/// stderr.
pub fn install(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("StorageError", py.get_type::<StorageError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("TopicError", py.get_type::<TopicError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    // This module has its own copy of std, so the hook is only this module's.
    std::panic::set_hook(Box::new(|info| {
        let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        PANIC.with(|p| *p.borrow_mut() = Some(format!("{}{place}", payload_text(info.payload()))));
    }));
    Ok(())
}

thread_local! {
    /// The last panic's message and place on this thread, for the exception.
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "a panic with no message".into(),
    }
}

/// Runs `f`; a panic inside it becomes `rbag.InternalError`.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| payload_text(&*payload));
        Err(InternalError::new_err(format!("internal error in rbag (please report it): {what}")))
    })
}

/// The exception for a rosbag API error, with its message as the CLI prints it.
pub fn to_py(e: rbag_bag::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        rbag_bag::Error::Storage(_) => StorageError::new_err(msg),
        rbag_bag::Error::Decode { .. } | rbag_bag::Error::Message(_) => DecodeError::new_err(msg),
        rbag_bag::Error::NoTopic { .. } | rbag_bag::Error::Path { .. } => TopicError::new_err(msg),
        _ => Error::new_err(msg),
    }
}

/// `?` for rosbag API results inside bindings.
pub trait OrPy<T> {
    /// The result with its error as a Python exception.
    fn or_py(self) -> PyResult<T>;
}

impl<T> OrPy<T> for rbag_bag::Result<T> {
    fn or_py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// A lock whose holder panicked (caught by [`guard`]) leaves the object unusable, not the
/// interpreter.
pub fn poisoned<E>(_: E) -> PyErr {
    Error::new_err("this object was left unusable by an earlier internal error")
}

/// The exception for a columnar read's error.
pub fn arrow_to_py(e: rbag_arrow::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        rbag_arrow::Error::Bag(e) => to_py(e),
        rbag_arrow::Error::NoColumn { .. } => TopicError::new_err(msg),
        rbag_arrow::Error::Value { .. } | rbag_arrow::Error::MixedTypes { .. } => DecodeError::new_err(msg),
        _ => Error::new_err(msg),
    }
}
