//! Writing: a new bag of any storage, its connections by type name or with their definition,
//! and raw message bytes.

use std::collections::BTreeMap;
use std::ffi::c_char;
use std::path::PathBuf;
use std::ptr;

use ::rbag_bag::decode::{Dialect, TypeSources};
use ::rbag_bag::{Compression, Connection, OutputPolicy, WriteOptions, Writer};

use crate::error::{guard, rbag_status, Failure};
use crate::ffi::{arg_mut, put, text, text_or_null};

// Connection metadata keys readers look for (rbag-bag does not name them).
const MD5SUM_KEY: &str = "md5sum";
const TYPE_HASH_KEY: &str = "type_description_hash";

/// A bag being written. Opaque: made by `rbag_writer_create`, ended by
/// `rbag_writer_finish` (the bag appears) or `rbag_writer_free` (nothing appears). One
/// thread at a time may use it (it may move between threads).
pub struct rbag_writer {
    inner: Writer,
    path: PathBuf,
}

/// How `rbag_writer_create` writes. Zeroed (or a NULL pointer), it compresses nothing and
/// refuses an existing output.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rbag_write_options {
    /// Chunk compression: NULL or `"none"`, `"lz4"`, `"zstd"` (MCAP), `"bz2"` (ROS 1).
    pub compression: *const c_char,
    /// Replace an existing bag at the path (only once the new one is complete).
    pub overwrite: bool,
}

/// Creates a bag at `path`, written under a temporary name until `rbag_writer_finish`.
/// `storage` is `"ros1"`, `"sqlite3"`, `"mcap"` or another registered storage, or NULL to go by
/// the extension (`.bag` ROS 1, `.db3` SQLite3, `.mcap` MCAP; none: a rosbag2 directory of
/// MCAP). `options` may be NULL. On success `*out` is the writer; on failure it is NULL.
///
/// # Safety
/// `path` and `storage` (unless NULL) are NUL-terminated strings; `options` is NULL or points
/// to a `rbag_write_options` whose `compression` is NULL or NUL-terminated; `out` points to
/// writable storage for a pointer.
#[no_mangle]
pub unsafe extern "C" fn rbag_writer_create(
    path: *const c_char,
    storage: *const c_char,
    options: *const rbag_write_options,
    out: *mut *mut rbag_writer,
) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        unsafe { put(out, "out", ptr::null_mut()) }?;
        // SAFETY: as this function's contract states.
        let path = unsafe { crate::ffi::path(path, "path") }?;
        // SAFETY: as this function's contract states.
        let storage = unsafe { text_or_null(storage, "storage") }?;
        // SAFETY: as this function's contract states.
        let options = unsafe { options.as_ref() };
        let compression = match options {
            // SAFETY: as this function's contract states.
            Some(o) => unsafe { text_or_null(o.compression, "options->compression") }?,
            None => None,
        };
        let compression = match compression {
            None => Compression::None,
            Some(c) => c.parse::<Compression>().map_err(Failure::invalid)?,
        };
        let overwrite = options.is_some_and(|o| o.overwrite);
        let backend = ::rbag_bag::storage_for(&path, storage).map_err(|e| Failure::writing(e, &path))?;
        let write = WriteOptions { compression, ..WriteOptions::default() };
        let policy = OutputPolicy { replace: overwrite, ..OutputPolicy::default() };
        let inner = Writer::create_with(&path, &backend, &write, &policy).map_err(|e| Failure::writing(e, &path))?;
        let handle = Box::new(rbag_writer { inner, path });
        // SAFETY: checked non-NULL and writable above.
        unsafe { put(out, "out", Box::into_raw(handle)) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// Adds a connection for `topic` carrying `message_type`, its definition and hash taken from
/// the types bundled with rbag (ROS 1 noetic for a ROS 1 bag, with its MD5 sum:
/// `std_msgs/String`; ROS 2 humble and later otherwise, with its type hash:
/// `std_msgs/msg/String`). `*id` gets the id to write its messages with. A type the bundled
/// store lacks is `RBAG_ERR_DECODE`: give its definition with
/// `rbag_writer_add_connection_with_definition`.
///
/// # Safety
/// `w` is a live writer; `topic` and `message_type` are NUL-terminated strings; `id` points
/// to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn rbag_writer_add_connection(
    w: *mut rbag_writer,
    topic: *const c_char,
    message_type: *const c_char,
    id: *mut u32,
) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        unsafe { put(id, "id", 0) }?;
        // SAFETY: as this function's contract states.
        let w = unsafe { arg_mut(w, "w") }?;
        // SAFETY: as this function's contract states.
        let topic = unsafe { text(topic, "topic") }?;
        // SAFETY: as this function's contract states.
        let message_type = unsafe { text(message_type, "message_type") }?;
        let new = w.inner.add_connection_for(topic, message_type).map_err(|e| Failure::writing(e, &w.path))?;
        // SAFETY: checked non-NULL and writable above.
        unsafe { put(id, "id", new) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// Adds a connection whose definition the caller gives: the full text (a ROS 1 or ROS 2
/// concatenated definition, with the types it uses), as another bag's `rbag_connection`
/// holds it. `encoding` (`"ros1"`, `"cdr"`) and `definition_encoding` (`"ros1msg"`, `"ros2msg"`,
/// `"ros2idl"`) may be NULL for the storage's own; `metadata_json` may be NULL or a JSON object
/// of strings (`{"md5sum": "…", "offered_qos_profiles": "…"}`). A missing MD5 sum (ROS 1) or
/// type hash (ROS 2) is computed from the definition where it parses. `*id` gets the id to
/// write its messages with.
///
/// # Safety
/// `w` is a live writer; `topic`, `message_type` and `definition` are NUL-terminated strings,
/// and so are `encoding`, `definition_encoding` and `metadata_json` unless NULL; `id` points to
/// a writable `uint32_t`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rbag_writer_add_connection_with_definition(
    w: *mut rbag_writer,
    topic: *const c_char,
    message_type: *const c_char,
    encoding: *const c_char,
    definition: *const c_char,
    definition_encoding: *const c_char,
    metadata_json: *const c_char,
    id: *mut u32,
) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        unsafe { put(id, "id", 0) }?;
        // SAFETY: as this function's contract states.
        let w = unsafe { arg_mut(w, "w") }?;
        let storage_encoding = match w.inner.dialect() {
            Dialect::Ros1 => "ros1",
            Dialect::Ros2 => "cdr",
        };
        // SAFETY: as this function's contract states.
        let encoding = unsafe { text_or_null(encoding, "encoding") }?.unwrap_or(storage_encoding);
        // SAFETY: as this function's contract states.
        let definition_encoding = unsafe { text_or_null(definition_encoding, "definition_encoding") }?;
        let definition_encoding = definition_encoding.unwrap_or(match encoding {
            "ros1" => "ros1msg",
            "cdr" => "ros2msg",
            _ => "",
        });
        // SAFETY: as this function's contract states.
        let metadata = match unsafe { text_or_null(metadata_json, "metadata_json") }? {
            None => BTreeMap::new(),
            Some(json) => serde_json::from_str::<BTreeMap<String, String>>(json)
                .map_err(|e| Failure::invalid(format!("metadata_json is not a JSON object of strings: {e}")))?,
        };
        let mut conn = Connection {
            // SAFETY: as this function's contract states.
            topic: unsafe { text(topic, "topic") }?.into(),
            // SAFETY: as this function's contract states.
            message_type: unsafe { text(message_type, "message_type") }?.into(),
            encoding: encoding.into(),
            // SAFETY: as this function's contract states.
            definition: unsafe { text(definition, "definition") }?.into(),
            definition_encoding: definition_encoding.into(),
            metadata,
            ..Connection::default()
        };
        fill_hash(&mut conn, w.inner.types());
        let new = w.inner.add_connection(&conn).map_err(|e| Failure::writing(e, &w.path))?;
        // SAFETY: checked non-NULL and writable above.
        unsafe { put(id, "id", new) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// Adds the hash readers check a connection's type by, when the caller gave none: ROS 1
/// readers warn on a missing MD5 sum, ROS 2 ones match types by hash.
fn fill_hash(conn: &mut Connection, types: &TypeSources) {
    let key = match conn.encoding.as_str() {
        "ros1" => MD5SUM_KEY,
        "cdr" => TYPE_HASH_KEY,
        _ => return,
    };
    if conn.metadata.contains_key(key) {
        return;
    }
    let Ok((registry, schema)) = ::rbag_bag::decode::compile(conn, types) else { return };
    let hash = if key == MD5SUM_KEY { registry.md5(schema.name()) } else { registry.rihs01(schema.name()) };
    if let Ok(hash) = hash {
        conn.metadata.insert(key.into(), hash);
    }
}

/// Appends one message: `size` serialized bytes at `data` (NULL allowed when `size` is 0) on
/// connection `id`, logged at `log_time` and published at `publish_time` (ns since the epoch;
/// ROS 1 and SQLite3 bags keep only the log time). The bytes are copied before this returns.
///
/// # Safety
/// `w` is a live writer; `data` is NULL or points to `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn rbag_writer_write(
    w: *mut rbag_writer,
    id: u32,
    log_time: u64,
    publish_time: u64,
    data: *const u8,
    size: usize,
) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        let w = unsafe { arg_mut(w, "w") }?;
        let bytes: &[u8] = match (data.is_null(), size) {
            (_, 0) => &[],
            (true, _) => return Err(Failure::invalid("data is NULL but size is not 0")),
            // SAFETY: non-NULL with `size` readable bytes, as the caller guarantees.
            (false, _) => unsafe { std::slice::from_raw_parts(data, size) },
        };
        w.inner.write(id, log_time, publish_time, bytes).map_err(|e| Failure::writing(e, &w.path))?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// Writes the index, closes the bag and moves it into place. Always frees the writer, whether
/// it succeeds or not; on failure nothing appears at the path. NULL is `RBAG_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `w` is NULL or a writer from `rbag_writer_create` not finished or freed yet, which no other
/// thread is using.
#[no_mangle]
pub unsafe extern "C" fn rbag_writer_finish(w: *mut rbag_writer) -> rbag_status {
    guard(|| {
        if w.is_null() {
            return Err(Failure::invalid("w is NULL"));
        }
        // SAFETY: a pointer from `Box::into_raw` in `rbag_writer_create`, ended once, as the
        // caller guarantees.
        let w = unsafe { Box::from_raw(w) };
        let rbag_writer { inner, path, .. } = *w;
        inner.finish().map_err(|e| Failure::writing(e, &path))?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// Abandons a writer: the bag is not finished and nothing appears at its path. NULL is allowed
/// and does nothing.
///
/// # Safety
/// `w` is NULL or a writer from `rbag_writer_create` not finished or freed yet, which no other
/// thread is using.
#[no_mangle]
pub unsafe extern "C" fn rbag_writer_free(w: *mut rbag_writer) {
    guard(|| {
        if !w.is_null() {
            // SAFETY: a pointer from `Box::into_raw` in `rbag_writer_create`, ended once, as the
            // caller guarantees.
            drop(unsafe { Box::from_raw(w) });
        }
        Ok(rbag_status::RBAG_OK)
    });
}
