//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared test-vector directory: `$PQGPU_VECTORS_DIR`, else `../shared/vectors` beside the
/// repository. A missing directory fails the test loudly: a vector test that finds nothing
/// must never pass.
pub fn vectors_dir() -> PathBuf {
    let dir = match std::env::var_os("PQGPU_VECTORS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/vectors"),
    };
    assert!(
        dir.is_dir(),
        "test vectors not found at {} (set PQGPU_VECTORS_DIR to the shared/vectors directory)",
        dir.display()
    );
    dir
}

/// Decodes upper- or lower-case hex.
pub fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap_or_else(|e| panic!("bad hex in vector file: {e}"))
}
