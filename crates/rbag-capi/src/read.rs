//! Reading: a bag of any format, its summary and connections, and its raw messages.

use std::ffi::{c_char, CString};
use std::ptr;
use std::sync::Arc;

use ::rbag_bag::{Bag, Filter, Message, MessageIter, StorageInfo};
use self_cell::self_cell;

use crate::error::{guard, rbag_status, Failure};
use crate::ffi::{arg, arg_mut, c_text, put, text};

/// An open bag. Opaque: made by `rbag_open`, freed by `rbag_bag_free`. Any number of
/// threads may use one bag at once.
pub struct rbag_bag {
    shared: Arc<Shared>,
}

/// What a bag and its iterators share: the bag, and the C text of its connections, so that the
/// pointers handed out live as long as the bag or any iterator over it.
struct Shared {
    bag: Bag,
    info: StorageInfo,
    /// In the bag's connection order, which is by id.
    connections: Vec<CConnection>,
}

struct CConnection {
    id: u32,
    message_count: u64,
    topic: CString,
    message_type: CString,
    encoding: CString,
    definition: CString,
    definition_encoding: CString,
    metadata_json: CString,
}

impl Shared {
    fn connection(&self, id: u32) -> Option<&CConnection> {
        self.connections.binary_search_by_key(&id, |c| c.id).ok().map(|i| &self.connections[i])
    }
}

// A bag is shared between threads (its handle, and iterators on other threads).
const _: () = {
    const fn shared_across_threads<T: Send + Sync>() {}
    shared_across_threads::<Shared>();
};

/// One connection of a bag: a ROS 1 publisher connection, an MCAP channel, a rosbag2 topic.
/// Its text is NUL-terminated UTF-8 owned by the bag, valid until the bag and every iterator
/// over it are freed.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rbag_connection {
    /// The id messages refer to (`rbag_message::connection_id`).
    pub id: u32,
    /// The topic.
    pub topic: *const c_char,
    /// The message type (`std_msgs/String`, `std_msgs/msg/String`).
    pub message_type: *const c_char,
    /// How messages are serialized: `ros1` or `cdr`.
    pub encoding: *const c_char,
    /// The message definition as the bag stores it (may be empty).
    pub definition: *const c_char,
    /// `ros1msg`, `ros2msg`, `ros2idl`, or empty.
    pub definition_encoding: *const c_char,
    /// Middleware fields as a JSON object of strings: ROS 1 `md5sum`, `callerid`, `latching`;
    /// ROS 2 `offered_qos_profiles`, `type_description_hash`.
    pub metadata_json: *const c_char,
    /// Messages on this connection, from the bag's index.
    pub message_count: u64,
}

impl From<&CConnection> for rbag_connection {
    fn from(c: &CConnection) -> Self {
        rbag_connection {
            id: c.id,
            topic: c.topic.as_ptr(),
            message_type: c.message_type.as_ptr(),
            encoding: c.encoding.as_ptr(),
            definition: c.definition.as_ptr(),
            definition_encoding: c.definition_encoding.as_ptr(),
            metadata_json: c.metadata_json.as_ptr(),
            message_count: c.message_count,
        }
    }
}

/// Which messages `rbag_messages` yields. Zeroed (or a NULL filter), it selects every
/// message.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rbag_filter {
    /// `topic_count` topic names, or NULL for every topic. A name the bag does not have is an
    /// `RBAG_ERR_NOT_FOUND` error listing the topics it has.
    pub topics: *const *const c_char,
    /// How many names `topics` holds.
    pub topic_count: usize,
    /// Whether `start_ns` applies.
    pub has_start: bool,
    /// Only messages logged at or after this time (ns since the epoch).
    pub start_ns: u64,
    /// Whether `end_ns` applies.
    pub has_end: bool,
    /// Only messages logged before this time (exclusive).
    pub end_ns: u64,
}

/// One raw message from `rbag_iter_next`. Its pointers are valid until the next call of
/// `rbag_iter_next` or `rbag_iter_free` on the same iterator (copy `data` to keep it; `topic`
/// and `message_type` live as long as the bag).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rbag_message {
    /// Its connection (`rbag_bag_connection_by_id`).
    pub connection_id: u32,
    /// Its connection's topic.
    pub topic: *const c_char,
    /// Its connection's message type.
    pub message_type: *const c_char,
    /// When it was logged, ns since the epoch.
    pub log_time: u64,
    /// When it was published (ROS 1 and SQLite3 bags repeat the log time).
    pub publish_time: u64,
    /// The serialized message (NULL when empty): `size` bytes, not NUL-terminated.
    pub data: *const u8,
    /// Its length in bytes.
    pub size: usize,
}

impl rbag_message {
    const EMPTY: rbag_message = rbag_message {
        connection_id: 0,
        topic: ptr::null(),
        message_type: ptr::null(),
        log_time: 0,
        publish_time: 0,
        data: ptr::null(),
        size: 0,
    };
}

/// Opens the bag at `path`: a ROS 1 `.bag`, a rosbag2 directory (its `metadata.yaml` may be
/// missing), or a single `.db3` or `.mcap` file. On success `*out` is a bag to free with
/// `rbag_bag_free`; on failure it is NULL.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` points to writable storage for a pointer.
#[no_mangle]
pub unsafe extern "C" fn rbag_open(path: *const c_char, out: *mut *mut rbag_bag) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        unsafe { put(out, "out", ptr::null_mut()) }?;
        // SAFETY: as this function's contract states.
        let path = unsafe { crate::ffi::path(path, "path") }?;
        let bag = Bag::open(&path).map_err(|e| Failure::reading(e, &path))?;
        let info = bag.storage_info().map_err(|e| Failure::reading(e, &path))?;
        let connections = bag
            .connections()
            .iter()
            .map(|c| CConnection {
                id: c.id,
                message_count: info.connections.get(&c.id).map_or(0, |s| s.message_count),
                topic: c_text(&c.topic),
                message_type: c_text(&c.message_type),
                encoding: c_text(&c.encoding),
                definition: c_text(&c.definition),
                definition_encoding: c_text(&c.definition_encoding),
                metadata_json: c_text(&serde_json::to_string(&c.metadata).unwrap_or_else(|_| "{}".into())),
            })
            .collect();
        let handle = Box::new(rbag_bag { shared: Arc::new(Shared { bag, info, connections }) });
        // SAFETY: checked non-NULL and writable above.
        unsafe { put(out, "out", Box::into_raw(handle)) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// Frees a bag from `rbag_open`. Iterators over it stay usable and keep it open until they
/// are freed. NULL is allowed and does nothing.
///
/// # Safety
/// `bag` is NULL or a bag from `rbag_open` not freed yet, which no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn rbag_bag_free(bag: *mut rbag_bag) {
    guard(|| {
        if !bag.is_null() {
            // SAFETY: a pointer from `Box::into_raw` in `rbag_open`, freed once, as the caller
            // guarantees.
            drop(unsafe { Box::from_raw(bag) });
        }
        Ok(rbag_status::RBAG_OK)
    });
}

/// The bag's full summary as JSON, as `rbag info --json` prints it: path, files, storage,
/// version, size, message count, start and end, compression, types and topics with their
/// counts and frequencies. `*out` gets a string to free with `rbag_string_free`.
///
/// # Safety
/// `bag` is a live bag; `out` points to writable storage for a pointer.
#[no_mangle]
pub unsafe extern "C" fn rbag_bag_info_json(bag: *const rbag_bag, out: *mut *mut c_char) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        unsafe { put(out, "out", ptr::null_mut()) }?;
        // SAFETY: as this function's contract states.
        let shared = &unsafe { arg(bag, "bag") }?.shared;
        let info = shared.bag.info().map_err(|e| Failure::reading(e, shared.bag.path()))?;
        let json = serde_json::to_string(&info).map_err(|e| Failure::invalid(e.to_string()))?;
        // SAFETY: checked above.
        unsafe { put(out, "out", c_text(&json).into_raw()) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// The number of messages in the bag, from its index.
///
/// # Safety
/// `bag` is a live bag; `out` points to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn rbag_bag_message_count(bag: *const rbag_bag, out: *mut u64) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        let shared = &unsafe { arg(bag, "bag") }?.shared;
        // SAFETY: as this function's contract states.
        unsafe { put(out, "out", shared.info.message_count) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// The log times of the first and last message (ns since the epoch): `RBAG_OK`, or `RBAG_END`
/// with both set to 0 when the bag has no message.
///
/// # Safety
/// `bag` is a live bag; `start_ns` and `end_ns` point to writable `uint64_t`s.
#[no_mangle]
pub unsafe extern "C" fn rbag_bag_time_range(
    bag: *const rbag_bag,
    start_ns: *mut u64,
    end_ns: *mut u64,
) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        let shared = &unsafe { arg(bag, "bag") }?.shared;
        let (status, start, end) = match (shared.info.start_ns, shared.info.end_ns) {
            (Some(s), Some(e)) => (rbag_status::RBAG_OK, s, e),
            _ => (rbag_status::RBAG_END, 0, 0),
        };
        // SAFETY: as this function's contract states.
        unsafe { put(start_ns, "start_ns", start) }?;
        // SAFETY: as this function's contract states.
        unsafe { put(end_ns, "end_ns", end) }?;
        Ok(status)
    })
}

/// The number of connections; `rbag_bag_connection` takes indexes below it.
///
/// # Safety
/// `bag` is a live bag; `out` points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn rbag_bag_connection_count(bag: *const rbag_bag, out: *mut usize) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        let shared = &unsafe { arg(bag, "bag") }?.shared;
        // SAFETY: as this function's contract states.
        unsafe { put(out, "out", shared.connections.len()) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// The `index`-th connection (0-based, in id order); `RBAG_ERR_NOT_FOUND` past the last.
///
/// # Safety
/// `bag` is a live bag; `out` points to a writable `rbag_connection`.
#[no_mangle]
pub unsafe extern "C" fn rbag_bag_connection(
    bag: *const rbag_bag,
    index: usize,
    out: *mut rbag_connection,
) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        let shared = &unsafe { arg(bag, "bag") }?.shared;
        let c = shared.connections.get(index).ok_or_else(|| {
            Failure::new(
                rbag_status::RBAG_ERR_NOT_FOUND,
                format!(
                    "{}: no connection at index {index} (the bag has {})",
                    shared.bag.path().display(),
                    shared.connections.len()
                ),
            )
        })?;
        // SAFETY: as this function's contract states.
        unsafe { put(out, "out", c.into()) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// The connection with id `id` (a message's `rbag_message::connection_id`);
/// `RBAG_ERR_NOT_FOUND` when the bag has none.
///
/// # Safety
/// `bag` is a live bag; `out` points to a writable `rbag_connection`.
#[no_mangle]
pub unsafe extern "C" fn rbag_bag_connection_by_id(
    bag: *const rbag_bag,
    id: u32,
    out: *mut rbag_connection,
) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        let shared = &unsafe { arg(bag, "bag") }?.shared;
        let c = shared.connection(id).ok_or_else(|| {
            Failure::new(
                rbag_status::RBAG_ERR_NOT_FOUND,
                format!("{}: no connection with id {id}", shared.bag.path().display()),
            )
        })?;
        // SAFETY: as this function's contract states.
        unsafe { put(out, "out", c.into()) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

type Messages<'a> = MessageIter<'a>;

self_cell!(
    /// A bag's message iterator together with the bag it borrows, so the iterator may outlive
    /// the caller's handle.
    struct OwnedIter {
        owner: Arc<Shared>,
        #[covariant]
        dependent: Messages,
    }
);

/// An iterator over a bag's messages. Opaque: made by `rbag_messages`, freed by
/// `rbag_iter_free`. One thread at a time may use it (it may move between threads).
pub struct rbag_iter {
    iter: OwnedIter,
    /// The message last handed out, whose bytes the caller may be reading.
    current: Option<Message>,
    done: bool,
}

/// Starts reading the messages `filter` selects (NULL: all of them), in log-time order (ties in
/// file order), merged across a bag's files. On success `*out` is an iterator to free with
/// `rbag_iter_free`; it keeps the bag open, so the bag may be freed first.
///
/// # Safety
/// `bag` is a live bag; `filter` is NULL or points to a filter whose `topics` holds
/// `topic_count` NUL-terminated strings; `out` points to writable storage for a pointer.
#[no_mangle]
pub unsafe extern "C" fn rbag_messages(
    bag: *const rbag_bag,
    filter: *const rbag_filter,
    out: *mut *mut rbag_iter,
) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        unsafe { put(out, "out", ptr::null_mut()) }?;
        // SAFETY: as this function's contract states.
        let shared = unsafe { arg(bag, "bag") }?.shared.clone();
        // SAFETY: as this function's contract states.
        let filter = match unsafe { filter.as_ref() } {
            None => Filter::default(),
            // SAFETY: as this function's contract states.
            Some(f) => unsafe { to_filter(f) }?,
        };
        let path = shared.bag.path().to_path_buf();
        shared.bag.check_topics(&filter.topics).map_err(|e| Failure::reading(e, &path))?;
        let iter = OwnedIter::try_new(shared, |s| s.bag.messages(&filter)).map_err(|e| Failure::reading(e, &path))?;
        let handle = Box::new(rbag_iter { iter, current: None, done: false });
        // SAFETY: checked non-NULL and writable above.
        unsafe { put(out, "out", Box::into_raw(handle)) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// # Safety
/// `f.topics` is NULL or holds `f.topic_count` NUL-terminated strings.
unsafe fn to_filter(f: &rbag_filter) -> Result<Filter, Failure> {
    let mut topics = Vec::new();
    if f.topic_count > 0 {
        if f.topics.is_null() {
            return Err(Failure::invalid("filter->topics is NULL but filter->topic_count is not 0"));
        }
        // SAFETY: non-NULL, and the caller guarantees `topic_count` elements.
        let names = unsafe { std::slice::from_raw_parts(f.topics, f.topic_count) };
        for (i, &name) in names.iter().enumerate() {
            // SAFETY: each element is a NUL-terminated string, as the caller guarantees.
            topics.push(unsafe { text(name, &format!("filter->topics[{i}]")) }?.to_string());
        }
    }
    Ok(Filter {
        topics,
        start: f.has_start.then_some(f.start_ns),
        end: f.has_end.then_some(f.end_ns),
        ..Filter::default()
    })
}

/// The next message: `RBAG_OK` with `*out` filled in, `RBAG_END` after the last one, or an
/// error code (a damaged chunk), after which the iterator is finished and returns `RBAG_END`.
/// On anything but `RBAG_OK`, `*out` is cleared (NULL pointers, zeros). The previous message's
/// `data` is released by this call.
///
/// # Safety
/// `it` is a live iterator used by no other thread during the call; `out` points to a
/// writable `rbag_message`.
#[no_mangle]
pub unsafe extern "C" fn rbag_iter_next(it: *mut rbag_iter, out: *mut rbag_message) -> rbag_status {
    guard(|| {
        // SAFETY: as this function's contract states.
        unsafe { put(out, "out", rbag_message::EMPTY) }?;
        // SAFETY: as this function's contract states.
        let it = unsafe { arg_mut(it, "it") }?;
        it.current = None;
        if it.done {
            return Ok(rbag_status::RBAG_END);
        }
        let next = it.iter.with_dependent_mut(|_, messages| messages.next());
        let m = match next {
            None => {
                it.done = true;
                return Ok(rbag_status::RBAG_END);
            }
            Some(Err(e)) => {
                it.done = true;
                return Err(Failure::reading(e, it.iter.borrow_owner().bag.path()));
            }
            Some(Ok(m)) => m,
        };
        let conn = it.iter.borrow_owner().connection(m.connection);
        let message = rbag_message {
            connection_id: m.connection,
            topic: conn.map_or(c"".as_ptr(), |c| c.topic.as_ptr()),
            message_type: conn.map_or(c"".as_ptr(), |c| c.message_type.as_ptr()),
            log_time: m.log_time,
            publish_time: m.publish_time,
            data: if m.data.is_empty() { ptr::null() } else { m.data.as_ptr() },
            size: m.data.len(),
        };
        // The bytes stay where they are while `current` holds them.
        it.current = Some(m);
        // SAFETY: checked non-NULL and writable above.
        unsafe { put(out, "out", message) }?;
        Ok(rbag_status::RBAG_OK)
    })
}

/// Frees an iterator, and the bag with it when the bag's handle was freed already. NULL is
/// allowed and does nothing.
///
/// # Safety
/// `it` is NULL or an iterator from `rbag_messages` not freed yet, which no other thread is
/// using.
#[no_mangle]
pub unsafe extern "C" fn rbag_iter_free(it: *mut rbag_iter) {
    guard(|| {
        if !it.is_null() {
            // SAFETY: a pointer from `Box::into_raw` in `rbag_messages`, freed once, as the
            // caller guarantees.
            drop(unsafe { Box::from_raw(it) });
        }
        Ok(rbag_status::RBAG_OK)
    });
}
