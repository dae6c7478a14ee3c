//! The committed C header is what cbindgen makes of the crate today: a change to the API that
//! forgot the header fails here. `RBAG_BLESS=1` rewrites it instead.

use std::path::Path;

#[test]
fn header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen reads the crate");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let fresh = String::from_utf8(fresh).expect("the header is UTF-8");
    let committed_path = dir.join("include/rbag.h");
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    if fresh == committed {
        return;
    }
    if std::env::var_os("RBAG_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&committed_path, &fresh).expect("include/rbag.h is writable");
        eprintln!("rewrote {}", committed_path.display());
        return;
    }
    let first = fresh.lines().zip(committed.lines()).position(|(a, b)| a != b).unwrap_or(0);
    panic!(
        "include/rbag.h is out of date (first difference at line {}); regenerate it with \
         RBAG_BLESS=1 cargo nextest run -p rbag-capi header_is_current\n--- committed\n{}\n+++ generated\n{}",
        first + 1,
        committed.lines().skip(first).take(5).collect::<Vec<_>>().join("\n"),
        fresh.lines().skip(first).take(5).collect::<Vec<_>>().join("\n"),
    );
}
