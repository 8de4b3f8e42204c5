//! Helpers shared by the integration tests (each test file says `mod common;`):
//!
//! * here: where the vectors are, hex, case counts from the environment, random inputs, and
//!   skipping a GPU test with the reason printed (`SKIPPED: ...`, never a silent pass);
//! * [`reference`]: a batch on a backend next to the same batch on the CPU ground truth;
//! * [`ffi`]: owned C contexts, their self-description, the GPU one or a printed skip;
//! * [`acvp`], [`rsp`], [`r3kat`]: the vector files (NIST ACVP JSON, CTRU-Prime `.rsp`,
//!   Dilithium round-3 KAT).
#![allow(dead_code)]

pub mod acvp;
pub mod ffi;
pub mod r3kat;
pub mod reference;
pub mod rsp;

use pqgpu::backend::Backend;
use pqgpu::mldsa::PreHash;
use rand::RngCore;
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

/// A count from the environment (`name`), or `default` when unset. A value that is not a
/// number fails the test rather than quietly running the default.
pub fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a count")),
        Err(_) => default,
    }
}

/// Random cases per parameter set of a GPU test: `PQGPU_GPU_CASES`, else `default`.
pub fn gpu_cases(default: usize) -> usize {
    env_count("PQGPU_GPU_CASES", default)
}

/// `n` bytes from a seeded generator (reproducible inputs).
pub fn bytes(rng: &mut impl RngCore, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

/// `n` fresh random bytes from the library's bulk generator.
pub fn random(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    pqgpu::rng::fill_bulk(&mut v).expect("randomness");
    v
}

/// Prints the line that marks a skipped test: `SKIPPED: <why>`. The caller returns at once;
/// the test harness still says "ok", so the line is the only record that nothing ran.
pub fn skip(why: &str) {
    println!("SKIPPED: {why}");
}

/// Why no GPU backend is usable in this process (the library's reason, or `fallback`).
pub fn no_gpu_reason(fallback: &str) -> String {
    pqgpu::gpu::unavailable_reason().unwrap_or_else(|| fallback.to_string())
}

/// The GPU backend, or `None` after printing why the calling test skips (no GPU, as on CI).
pub fn gpu_or_skip() -> Option<Arc<dyn Backend>> {
    match pqgpu::gpu::backend() {
        Ok(b) => Some(b),
        Err(e) => {
            skip(&format!(
                "no usable GPU ({})",
                no_gpu_reason(&e.to_string())
            ));
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
