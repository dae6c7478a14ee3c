//! Checked conversions of the caller's pointers and text: a NULL or non-UTF-8 argument is an
//! `RBAG_ERR_INVALID_ARGUMENT` naming the parameter, never a crash.

use std::ffi::{c_char, CStr, CString};
use std::path::PathBuf;

use crate::error::Failure;

/// `p` as a reference, or an error naming the parameter when it is NULL.
///
/// # Safety
/// `p` is NULL or points to a live, aligned `T` that nothing mutates for `'a`.
pub(crate) unsafe fn arg<'a, T>(p: *const T, name: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller guarantees `p` is NULL or valid for `'a`; `as_ref` checks NULL.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::invalid(format!("{name} is NULL")))
}

/// `p` as a mutable reference, or an error naming the parameter when it is NULL.
///
/// # Safety
/// `p` is NULL or points to a live, aligned `T` that nothing else uses for `'a`.
pub(crate) unsafe fn arg_mut<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: the caller guarantees `p` is NULL or valid and unaliased for `'a`.
    unsafe { p.as_mut() }.ok_or_else(|| Failure::invalid(format!("{name} is NULL")))
}

/// Writes `value` through an out-pointer, or fails when it is NULL.
///
/// # Safety
/// `p` is NULL or valid for a write of `T` (it need not be initialised).
pub(crate) unsafe fn put<T>(p: *mut T, name: &str, value: T) -> Result<(), Failure> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{name} is NULL")));
    }
    // SAFETY: non-NULL, and the caller guarantees it is valid for a write; `write` does not
    // drop the (possibly uninitialised) old value.
    unsafe { p.write(value) };
    Ok(())
}

/// A NUL-terminated UTF-8 argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that lives and stays unchanged for `'a`.
pub(crate) unsafe fn text<'a>(p: *const c_char, name: &str) -> Result<&'a str, Failure> {
    // SAFETY: as the caller guarantees.
    unsafe { text_or_null(p, name) }?.ok_or_else(|| Failure::invalid(format!("{name} is NULL")))
}

/// A NUL-terminated UTF-8 argument that may be NULL.
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn text_or_null<'a>(p: *const c_char, name: &str) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL and NUL-terminated, live for `'a`, as the caller guarantees.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map(Some).map_err(|e| Failure::invalid(format!("{name} is not UTF-8 (byte {})", e.valid_up_to())))
}

/// A path argument: any bytes on Unix, where file names need not be UTF-8.
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn path(p: *const c_char, name: &str) -> Result<PathBuf, Failure> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{name} is NULL")));
    }
    // SAFETY: non-NULL and NUL-terminated, as the caller guarantees.
    let s = unsafe { CStr::from_ptr(p) };
    if s.is_empty() {
        return Err(Failure::invalid(format!("{name} is empty")));
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(s.to_bytes())))
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above.
        Ok(PathBuf::from(unsafe { text(p, name) }?))
    }
}

/// Text for C: a NUL inside `s` (no topic, type or definition has one) ends it there.
pub(crate) fn c_text(s: &str) -> CString {
    let end = s.find('\0').unwrap_or(s.len());
    CString::new(&s[..end]).unwrap_or_default()
}
