//! Only for the corpus tests (tests/conformance.rs): they fail when ../shared/conformance is absent,
//! unless AIGENORA_SKIP_CORPORA=1 asks to skip them, in which case they are built `#[ignore]`d so that
//! cargo's own summary counts them as ignored rather than as passed.
use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(corpora_skipped)");
    println!("cargo::rerun-if-env-changed=AIGENORA_SKIP_CORPORA");
    let dir = Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("../../../shared/conformance");
    println!("cargo::rerun-if-changed={}", dir.display());
    if std::env::var("AIGENORA_SKIP_CORPORA").as_deref() == Ok("1") && !dir.exists() {
        println!("cargo::rustc-cfg=corpora_skipped");
    }
}
