//! A reused [`Decoder`] does not allocate once it has seen a message of the same shape: the
//! point of the flat representation. An allocator that counts calls (on this test's thread)
//! checks it for Imu and TFMessage, in both encodings, and for a big-endian CDR point cloud.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rbag_msg::store::{self, Distro};
use rbag_msg::testgen::{random_message, Rng};
use rbag_msg::{encode, Decoder, Encoding, Schema};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is passed on to the system allocator unchanged; only a thread-local
// counter is added (const-initialised, so counting never allocates).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn a_warm_decoder_decodes_without_allocating() {
    let mut payloads = Vec::new();
    for (distro, encoding, big_endian) in [
        (Distro::Humble, Encoding::Cdr, false),
        (Distro::Humble, Encoding::Cdr, true),
        (Distro::Noetic, Encoding::Ros1, false),
    ] {
        let reg = store::registry(distro);
        for ty in
            ["sensor_msgs/Imu", "tf2_msgs/TFMessage", "sensor_msgs/PointCloud2", "diagnostic_msgs/DiagnosticArray"]
        {
            let schema = Schema::compile(reg, ty).unwrap();
            let mut rng = Rng::new(42);
            let messages: Vec<Vec<u8>> = (0..20)
                .map(|_| {
                    let mut bytes = Vec::new();
                    encode(&schema, &random_message(&schema, &mut rng, 6), encoding, big_endian, &mut bytes).unwrap();
                    bytes
                })
                .collect();
            payloads.push((format!("{ty} {encoding:?} be={big_endian}"), schema, encoding, messages));
        }
    }
    let mut decoder = Decoder::new();
    // Warm up on every message (the largest of each shape sets the capacity) ...
    for (_, schema, encoding, messages) in &payloads {
        for m in messages {
            decoder.decode(schema, m, *encoding).unwrap();
        }
    }
    // ... then decoding them all again allocates nothing.
    for (what, schema, encoding, messages) in &payloads {
        let before = allocations();
        let mut fields = 0;
        for m in messages {
            fields += decoder.decode(schema, m, *encoding).unwrap().len();
        }
        assert_eq!(allocations() - before, 0, "{what}: allocations while decoding {} messages", messages.len());
        assert!(fields > 0);
    }
    // The tree, for contrast, allocates per nested message.
    let (_, schema, encoding, messages) = &payloads[1];
    let largest = messages.iter().max_by_key(|m| m.len()).unwrap();
    let before = allocations();
    drop(rbag_msg::decode(schema, largest, *encoding).unwrap());
    assert!(allocations() - before >= 6, "TFMessage as a tree");
}
