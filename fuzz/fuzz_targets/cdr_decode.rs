//! CDR messages of the bundled humble types: the first byte picks the type, the rest is the
//! message (encapsulation header included). See `codec_check.rs` for what is checked.
#![no_main]

mod codec_check;

use libfuzzer_sys::fuzz_target;
use rbag_msg::store::Distro;

fuzz_target!(|data: &[u8]| codec_check::run(Distro::Humble, data));
