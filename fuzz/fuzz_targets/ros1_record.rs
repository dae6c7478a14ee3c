//! Record parsing from raw bytes: `parse_record` at the start of the input, then the `Records`
//! iterator over the whole input, as used for chunk data and index sections.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_storage::ros1::record::{parse_record, Records};
use rbag_storage::ros1::Limits;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    if let Ok(rec) = parse_record(data, 0, &limits) {
        let _ = rec.op();
        assert!(rec.len <= data.len(), "record claims {} bytes of a {}-byte buffer", rec.len, data.len());
        for (k, v) in rec.header.fields() {
            std::hint::black_box((k, v));
        }
    }
    for rec in Records::new(data, 4117, limits) {
        match rec {
            Ok(r) => {
                let _ = r.op();
                let _ = r.header.u32("conn");
                let _ = r.header.time("time");
                let _ = r.header.string("topic");
            }
            Err(_) => break,
        }
    }
});
