//! A `rbag filter` expression: parsed, then run by an `ExprFilter` over the messages of two
//! small bags written once (see `expr_check.rs`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
#[path = "expr_check.rs"]
mod expr_check;

// `Bag` is not `Sync`; libFuzzer runs one input at a time on this thread.
thread_local! {
    static FIXTURE: expr_check::Fixture = expr_check::Fixture::new(common::dir());
}

static CHECKED: OnceLock<()> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    FIXTURE.with(|f| {
        CHECKED.get_or_init(|| assert!(f.message_count() > 20, "the fixture has its messages"));
        f.run(data)
    });
});
