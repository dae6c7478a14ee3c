//! Links the `rbag` executable at a fixed address instead of as a position-independent one. A
//! PIE of this size carries ~78 000 relative relocations, which the dynamic loader applies at
//! every start by copying 1 MB of `.data.rel.ro`: 2 of the 5 ms of `rbag --version`, and half
//! of `rbag info` on a small file (bench/README.md, issue 20). The cost is that the executable
//! itself is not placed at a random address (the libraries, stack and heap still are); see
//! docs/design.md.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
