//! The link order of the code a plain `trapline run` executes.
//!
//! `link/hot-symbols.txt` lists those functions in the order they first
//! run (scripts/hot-symbols.py writes it); the linker places them first and
//! together, so start-up maps a few dense pages of code instead of one page
//! in every 64 KiB of the whole text (docs/bench.md#footprint). Only the
//! x86_64 build links with LLD, which takes the list; a name that no longer
//! exists is skipped silently, so a stale list only loses locality.

fn main() {
    println!("cargo:rerun-if-changed=link/hot-symbols.txt");
    println!("cargo:rerun-if-env-changed=TRAPLINE_NO_SYMBOL_ORDER");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // An escape hatch for a linker other than Rust's default LLD.
    let wanted = std::env::var_os("TRAPLINE_NO_SYMBOL_ORDER").is_none();
    if arch == "x86_64" && os == "linux" && wanted {
        let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
        println!("cargo:rustc-link-arg-bin=trapline=-Wl,--symbol-ordering-file={dir}/link/hot-symbols.txt");
        println!("cargo:rustc-link-arg-bin=trapline=-Wl,--no-warn-symbol-ordering");
    }
}
