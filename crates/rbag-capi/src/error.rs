//! Status codes, the thread-local last-error message, and the guard that keeps Rust panics
//! from unwinding into C (which would abort the whole program).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use ::rbag_bag::{Error, StorageError};

/// What a call did. Every function of the API returns one; `RBAG_OK` and `RBAG_END` are not
/// errors, every negative code is and leaves its message in `rbag_last_error`. The codes
/// sort failures for programs to branch on; the message says exactly what and where.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum rbag_status {
    /// Success.
    RBAG_OK = 0,
    /// No more messages (`rbag_iter_next`), or no time range in an empty bag.
    RBAG_END = 1,
    /// A NULL pointer, text that is not UTF-8, an unknown storage or compression name, a
    /// connection id the writer never gave out, an output the storage refuses.
    RBAG_ERR_INVALID_ARGUMENT = -1,
    /// The operating system failed a read or write.
    RBAG_ERR_IO = -2,
    /// The file is not a bag this build reads, or it is damaged (truncated, corrupt index or
    /// chunk).
    RBAG_ERR_FORMAT = -3,
    /// A message type is unknown or its definition does not parse.
    RBAG_ERR_DECODE = -4,
    /// A missing file, or a topic or connection the bag does not have.
    RBAG_ERR_NOT_FOUND = -5,
    /// The output exists and replacing it was not asked for.
    RBAG_ERR_EXISTS = -6,
    /// Reading would need more memory than the budget (`RBAG_MEMORY_BUDGET`) allows.
    RBAG_ERR_OVER_BUDGET = -7,
    /// The storage cannot do this (writing with a read-only backend).
    RBAG_ERR_UNSUPPORTED = -8,
    /// A bug in rbag, caught before it reached the caller; the program may go on.
    RBAG_ERR_INTERNAL = -99,
}

use rbag_status::*;

/// A failed call: its code and the message `rbag_last_error` gives.
#[derive(Debug)]
pub(crate) struct Failure {
    status: rbag_status,
    message: String,
}

impl Failure {
    pub(crate) fn new(status: rbag_status, message: impl Into<String>) -> Self {
        Failure { status, message: message.into() }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Failure::new(RBAG_ERR_INVALID_ARGUMENT, message)
    }

    /// A rosbag API error while reading: a generic storage error means a bag that does not
    /// read.
    pub(crate) fn reading(e: impl Into<Error>, path: &std::path::Path) -> Self {
        Failure::naming(e.into(), path, RBAG_ERR_FORMAT)
    }

    /// A rosbag API error while writing: a generic storage error means an argument the
    /// storage refuses.
    pub(crate) fn writing(e: impl Into<Error>, path: &std::path::Path) -> Self {
        Failure::naming(e.into(), path, RBAG_ERR_INVALID_ARGUMENT)
    }

    /// The message names `path` even where the rosbag API left it out (an unknown connection
    /// id, a type missing from the store), so a program juggling bags knows which one failed.
    fn naming(e: Error, path: &std::path::Path, generic: rbag_status) -> Self {
        let mut message = e.to_string();
        let shown = path.display().to_string();
        if !message.contains(&shown) {
            message = format!("{shown}: {message}");
        }
        Failure { status: status_of(&e, generic), message }
    }
}

/// The code for a rosbag API error; `generic` for the storage layer's catch-all.
fn status_of(e: &Error, generic: rbag_status) -> rbag_status {
    match e {
        Error::Storage(s) => storage_status(s, generic),
        Error::Decode { .. } | Error::Message(_) => RBAG_ERR_DECODE,
        Error::NoTopic { .. } | Error::Path { .. } => RBAG_ERR_NOT_FOUND,
        _ => RBAG_ERR_INVALID_ARGUMENT,
    }
}

fn storage_status(e: &StorageError, generic: rbag_status) -> rbag_status {
    use StorageError as E;
    match e {
        E::Io { source, .. } => io_status(source),
        E::InFile { inner, .. } => storage_status(inner, generic),
        E::OutputExists { .. } => RBAG_ERR_EXISTS,
        E::OverBudget { .. } | E::OutOfMemory { .. } => RBAG_ERR_OVER_BUDGET,
        E::Unsupported { .. } => RBAG_ERR_UNSUPPORTED,
        E::OutputIsInput { .. }
        | E::UnsafeOutput { .. }
        | E::UnknownStorage { .. }
        | E::BadOption { .. }
        | E::UnknownConnection { .. } => RBAG_ERR_INVALID_ARGUMENT,
        E::Poisoned(_) => RBAG_ERR_IO,
        E::Invalid(_) => generic,
        E::Backend(b) => b.downcast_ref::<std::io::Error>().map_or(RBAG_ERR_FORMAT, io_status),
        _ => RBAG_ERR_FORMAT,
    }
}

fn io_status(e: &std::io::Error) -> rbag_status {
    match e.kind() {
        std::io::ErrorKind::NotFound => RBAG_ERR_NOT_FOUND,
        std::io::ErrorKind::AlreadyExists => RBAG_ERR_EXISTS,
        _ => RBAG_ERR_IO,
    }
}

thread_local! {
    /// The message of the last failed call on this thread.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // Interior NULs would cut the C string short: show them instead.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // During thread exit the slot may be gone; the status code still reports the failure.
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = text);
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> &str {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s,
        (_, Some(s)) => s,
        _ => "a panic with no message",
    }
}

/// Runs the body of an `extern "C"` function: an error becomes its code plus the thread's
/// last-error message, and a panic becomes `RBAG_ERR_INTERNAL` instead of an abort.
pub(crate) fn guard(f: impl FnOnce() -> Result<rbag_status, Failure>) -> rbag_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(status)) => status,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.status
        }
        Err(payload) => {
            set_last_error(&format!("internal error in rbag (please report it): {}", payload_text(&*payload)));
            RBAG_ERR_INTERNAL
        }
    }
}

/// The message of the last call on this thread that returned an error code: what failed and
/// where (file, offset, topic), as the `rbag` command prints it; `""` before any error.
///
/// Never NULL. The text belongs to rbag and stays valid until the next call into rbag on the
/// same thread; copy it to keep it. Each thread has its own.
#[no_mangle]
pub extern "C" fn rbag_last_error() -> *const c_char {
    LAST_ERROR.try_with(|e| e.borrow().as_ptr()).unwrap_or(c"".as_ptr())
}

/// The name of a status code (`"RBAG_ERR_FORMAT"`), for logs; `"RBAG_UNKNOWN_STATUS"` for a
/// value that is none of them. The text is static: never free it.
#[no_mangle]
pub extern "C" fn rbag_status_name(status: c_int) -> *const c_char {
    let name: &CStr = match status {
        0 => c"RBAG_OK",
        1 => c"RBAG_END",
        -1 => c"RBAG_ERR_INVALID_ARGUMENT",
        -2 => c"RBAG_ERR_IO",
        -3 => c"RBAG_ERR_FORMAT",
        -4 => c"RBAG_ERR_DECODE",
        -5 => c"RBAG_ERR_NOT_FOUND",
        -6 => c"RBAG_ERR_EXISTS",
        -7 => c"RBAG_ERR_OVER_BUDGET",
        -8 => c"RBAG_ERR_UNSUPPORTED",
        -99 => c"RBAG_ERR_INTERNAL",
        _ => c"RBAG_UNKNOWN_STATUS",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        // SAFETY: never NULL, valid until the next call on this thread.
        unsafe { CStr::from_ptr(rbag_last_error()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn a_panic_becomes_an_internal_error_and_the_next_call_works() {
        let status = guard(|| panic!("boom at {}", 42));
        assert_eq!(status, RBAG_ERR_INTERNAL);
        assert_eq!(last(), "internal error in rbag (please report it): boom at 42");
        assert_eq!(guard(|| Ok(RBAG_END)), RBAG_END);
        assert_eq!(guard(|| Err(Failure::invalid("a\0b"))), RBAG_ERR_INVALID_ARGUMENT);
        assert_eq!(last(), "a\\0b", "a NUL in a message is shown, not a cut");
    }
}
