//! Helpers shared by the integration tests.
#![allow(dead_code)]

use pqgpu::backend::Backend;
use pqgpu::mldsa::PreHash;
use std::path::PathBuf;
use std::sync::Arc;

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

/// The GPU backend, or `None` after printing why the calling test skips (no GPU, as on CI).
pub fn gpu_or_skip() -> Option<Arc<dyn Backend>> {
    match pqgpu::gpu::backend() {
        Ok(b) => Some(b),
        Err(e) => {
            let why = pqgpu::gpu::unavailable_reason().unwrap_or_else(|| e.to_string());
            println!("SKIPPED: no usable GPU ({why})");
            None
        }
    }
}

/// PH(M) for an ACVP `hashAlg` name, computed with the RustCrypto hashes (not pqgpu's code).
pub fn prehash(name: &str, msg: &[u8]) -> (PreHash, Vec<u8>) {
    use sha2::Digest;
    use sha3::digest::{ExtendableOutput, Update, XofReader};
    let xof = |mut r: Box<dyn XofReader>, len: usize| {
        let mut out = vec![0u8; len];
        r.read(&mut out);
        out
    };
    match name {
        "SHA2-224" => (PreHash::Sha2_224, sha2::Sha224::digest(msg).to_vec()),
        "SHA2-256" => (PreHash::Sha2_256, sha2::Sha256::digest(msg).to_vec()),
        "SHA2-384" => (PreHash::Sha2_384, sha2::Sha384::digest(msg).to_vec()),
        "SHA2-512" => (PreHash::Sha2_512, sha2::Sha512::digest(msg).to_vec()),
        "SHA2-512/224" => (
            PreHash::Sha2_512_224,
            sha2::Sha512_224::digest(msg).to_vec(),
        ),
        "SHA2-512/256" => (
            PreHash::Sha2_512_256,
            sha2::Sha512_256::digest(msg).to_vec(),
        ),
        "SHA3-224" => (PreHash::Sha3_224, sha3::Sha3_224::digest(msg).to_vec()),
        "SHA3-256" => (PreHash::Sha3_256, sha3::Sha3_256::digest(msg).to_vec()),
        "SHA3-384" => (PreHash::Sha3_384, sha3::Sha3_384::digest(msg).to_vec()),
        "SHA3-512" => (PreHash::Sha3_512, sha3::Sha3_512::digest(msg).to_vec()),
        "SHAKE-128" => {
            let mut h = sha3::Shake128::default();
            h.update(msg);
            (PreHash::Shake128, xof(Box::new(h.finalize_xof()), 32))
        }
        "SHAKE-256" => {
            let mut h = sha3::Shake256::default();
            h.update(msg);
            (PreHash::Shake256, xof(Box::new(h.finalize_xof()), 64))
        }
        other => panic!("unknown hashAlg {other}"),
    }
}
