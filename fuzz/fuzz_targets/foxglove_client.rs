//! What `rbag serve` does with bytes a client sends: the first byte picks the parser (client
//! text message, client binary message, HTTP request head, page query string), the rest is the
//! input. Every call must return a value or an error; a panic is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_serve::fuzzing;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    match which % 4 {
        0 => {
            let _ = fuzzing::client_text(&String::from_utf8_lossy(rest));
        }
        1 => {
            let _ = fuzzing::client_binary(rest);
        }
        2 => {
            let _ = fuzzing::request_head(rest);
        }
        _ => {
            for (k, v) in fuzzing::page_query(&String::from_utf8_lossy(rest)) {
                assert!(!k.contains('&') || rest.contains(&b'%'), "{k}={v}");
            }
        }
    }
});
