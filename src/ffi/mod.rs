//! The C ABI (`include/pqgpu.h`): the only place with `extern "C"`.
//!
//! Every exported function catches panics (`PQG_ERR_PANIC`), checks its pointers and lengths
//! before doing any work, writes its outputs only on success and zeroes secret outputs on
//! failure. The header is generated from this module by cbindgen (see `build.rs`).
//!
//! * `guard`: the panic boundary and the pointer/length checks.
//! * `context`: `pqg_context`, a shared handle on a backend.
//! * `batch`: the backend calls behind both the one-shot and the batch functions (safe Rust).
//! * `job`: `pqg_job`, an asynchronous batch running on its own thread.
//! * `mldsa`, `kem`: the ML-DSA and CTRU-Prime entry points.
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn)]
// The safety contract of every entry point is the same and is stated once, in the header's
// conventions: each pointer is NULL or valid for its documented length, handles are live.
#![allow(clippy::missing_safety_doc)]

mod batch;
mod context;
mod guard;
mod job;
mod kem;
mod key;
mod keygen;
mod layout;
mod mldsa;
mod recycle;
mod runner;
mod serve;
mod share;
mod slhdsa;

pub use context::*;
pub use job::*;
pub use kem::*;
pub use key::*;
pub use mldsa::*;
pub use serve::*;
pub use slhdsa::*;

use crate::{ctru, Alg, Error};
use guard::boundary_or;
use std::ffi::c_char;

/// The result of a fallible call: `PQG_OK` (0), `PQG_PENDING` (1) or a negative `PQG_ERR_*` code.
pub type pqg_status = i32;

/// Success (for verify: the signature is valid).
pub const PQG_OK: pqg_status = 0;
/// A job is still running.
pub const PQG_PENDING: pqg_status = 1;
/// A required pointer was NULL.
pub const PQG_ERR_NULL_POINTER: pqg_status = -1;
/// Unknown algorithm, hash or backend, a context string over 255 bytes, or a bad option.
pub const PQG_ERR_INVALID_ARGUMENT: pqg_status = -2;
/// A buffer length does not match the algorithm.
pub const PQG_ERR_BAD_LENGTH: pqg_status = -3;
/// A key's encoding is malformed (e.g. secret coefficients out of range).
pub const PQG_ERR_BAD_KEY: pqg_status = -4;
/// The signature does not verify (includes malformed and wrong-length signatures).
pub const PQG_ERR_VERIFY_FAILED: pqg_status = -5;
/// A GPU backend was demanded and none is usable.
pub const PQG_ERR_NO_DEVICE: pqg_status = -6;
/// The GPU failed while running this work.
pub const PQG_ERR_DEVICE: pqg_status = -7;
/// A wait ran out before the job finished.
pub const PQG_ERR_TIMEOUT: pqg_status = -8;
/// The operating system's randomness was unavailable.
pub const PQG_ERR_RNG: pqg_status = -9;
/// An internal bug (a Rust panic) was caught at the boundary.
pub const PQG_ERR_PANIC: pqg_status = -99;

// The crate's `Error` discriminants are the contract's codes; keep the two lists in step.
const _: () = {
    assert!(PQG_ERR_NULL_POINTER == Error::NullPointer.code());
    assert!(PQG_ERR_INVALID_ARGUMENT == Error::InvalidArgument.code());
    assert!(PQG_ERR_BAD_LENGTH == Error::BadLength.code());
    assert!(PQG_ERR_BAD_KEY == Error::BadKey.code());
    assert!(PQG_ERR_VERIFY_FAILED == Error::VerifyFailed.code());
    assert!(PQG_ERR_NO_DEVICE == Error::NoDevice.code());
    assert!(PQG_ERR_DEVICE == Error::Device.code());
    assert!(PQG_ERR_TIMEOUT == Error::Timeout.code());
    assert!(PQG_ERR_RNG == Error::Rng.code());
    assert!(PQG_ERR_PANIC == Error::Panic.code());
};

/// An algorithm and parameter set (`PQG_ML_DSA_*`, `PQG_DILITHIUM*`, `PQG_CTRU_PRIME_*`).
pub type pqg_alg = i32;

/// ML-DSA-44 (FIPS 204, NIST security category 2).
pub const PQG_ML_DSA_44: pqg_alg = 1;
/// ML-DSA-65 (FIPS 204, NIST security category 3).
pub const PQG_ML_DSA_65: pqg_alg = 2;
/// ML-DSA-87 (FIPS 204, NIST security category 5).
pub const PQG_ML_DSA_87: pqg_alg = 3;
/// Dilithium2 (round-3 submission, version 3.1), for keys made before FIPS 204. Same
/// functions as ML-DSA; a non-empty context, HashML-DSA and the mu forms are
/// `PQG_ERR_INVALID_ARGUMENT`. Signing is deterministic (the reference's default) when rnd is
/// 32 zero bytes, otherwise randomized with rho' = H(K || rnd || mu).
pub const PQG_DILITHIUM2: pqg_alg = 4;
/// Dilithium3 (round 3, version 3.1); as `PQG_DILITHIUM2`.
pub const PQG_DILITHIUM3: pqg_alg = 5;
/// Dilithium5 (round 3, version 3.1); as `PQG_DILITHIUM2`.
pub const PQG_DILITHIUM5: pqg_alg = 6;
/// CTRU-Prime-653 KEM.
pub const PQG_CTRU_PRIME_653: pqg_alg = 16;
/// CTRU-Prime-761 KEM.
pub const PQG_CTRU_PRIME_761: pqg_alg = 17;
/// CTRU-Prime-1277 KEM.
pub const PQG_CTRU_PRIME_1277: pqg_alg = 18;
/// SLH-DSA-SHA2-128s (FIPS 205).
pub const PQG_SLH_DSA_SHA2_128S: pqg_alg = 48;
/// SLH-DSA-SHAKE-128s (FIPS 205).
pub const PQG_SLH_DSA_SHAKE_128S: pqg_alg = 49;
/// SLH-DSA-SHA2-128f (FIPS 205).
pub const PQG_SLH_DSA_SHA2_128F: pqg_alg = 50;
/// SLH-DSA-SHAKE-128f (FIPS 205).
pub const PQG_SLH_DSA_SHAKE_128F: pqg_alg = 51;
/// SLH-DSA-SHA2-192s (FIPS 205).
pub const PQG_SLH_DSA_SHA2_192S: pqg_alg = 52;
/// SLH-DSA-SHAKE-192s (FIPS 205).
pub const PQG_SLH_DSA_SHAKE_192S: pqg_alg = 53;
/// SLH-DSA-SHA2-192f (FIPS 205).
pub const PQG_SLH_DSA_SHA2_192F: pqg_alg = 54;
/// SLH-DSA-SHAKE-192f (FIPS 205).
pub const PQG_SLH_DSA_SHAKE_192F: pqg_alg = 55;
/// SLH-DSA-SHA2-256s (FIPS 205).
pub const PQG_SLH_DSA_SHA2_256S: pqg_alg = 56;
/// SLH-DSA-SHAKE-256s (FIPS 205).
pub const PQG_SLH_DSA_SHAKE_256S: pqg_alg = 57;
/// SLH-DSA-SHA2-256f (FIPS 205).
pub const PQG_SLH_DSA_SHA2_256F: pqg_alg = 58;
/// SLH-DSA-SHAKE-256f (FIPS 205).
pub const PQG_SLH_DSA_SHAKE_256F: pqg_alg = 59;
/// ML-KEM-512 (FIPS 203).
pub const PQG_ML_KEM_512: pqg_alg = 32;
/// ML-KEM-768 (FIPS 203).
pub const PQG_ML_KEM_768: pqg_alg = 33;
/// ML-KEM-1024 (FIPS 203).
pub const PQG_ML_KEM_1024: pqg_alg = 34;

/// Library version, major part.
pub const PQG_VERSION_MAJOR: u32 = 0;
/// Library version, minor part.
pub const PQG_VERSION_MINOR: u32 = 1;
/// Library version, patch part.
pub const PQG_VERSION_PATCH: u32 = 0;
/// The version as one number: major * 10000 + minor * 100 + patch.
pub const PQG_VERSION_NUMBER: u32 = 100;

// Byte lengths as compile-time constants, for stack buffers in C. cbindgen can only copy
// literals, so they are spelled out here and checked against the parameter sets below.
/// ML-DSA-44 public key bytes.
pub const PQG_ML_DSA_44_PUBLIC_KEY_BYTES: usize = 1312;
/// ML-DSA-44 secret key bytes.
pub const PQG_ML_DSA_44_SECRET_KEY_BYTES: usize = 2560;
/// ML-DSA-44 signature bytes.
pub const PQG_ML_DSA_44_SIGNATURE_BYTES: usize = 2420;
/// ML-DSA-65 public key bytes.
pub const PQG_ML_DSA_65_PUBLIC_KEY_BYTES: usize = 1952;
/// ML-DSA-65 secret key bytes.
pub const PQG_ML_DSA_65_SECRET_KEY_BYTES: usize = 4032;
/// ML-DSA-65 signature bytes.
pub const PQG_ML_DSA_65_SIGNATURE_BYTES: usize = 3309;
/// ML-DSA-87 public key bytes.
pub const PQG_ML_DSA_87_PUBLIC_KEY_BYTES: usize = 2592;
/// ML-DSA-87 secret key bytes.
pub const PQG_ML_DSA_87_SECRET_KEY_BYTES: usize = 4896;
/// ML-DSA-87 signature bytes.
pub const PQG_ML_DSA_87_SIGNATURE_BYTES: usize = 4627;
/// Dilithium2 public key bytes.
pub const PQG_DILITHIUM2_PUBLIC_KEY_BYTES: usize = 1312;
/// Dilithium2 secret key bytes.
pub const PQG_DILITHIUM2_SECRET_KEY_BYTES: usize = 2528;
/// Dilithium2 signature bytes.
pub const PQG_DILITHIUM2_SIGNATURE_BYTES: usize = 2420;
/// Dilithium3 public key bytes.
pub const PQG_DILITHIUM3_PUBLIC_KEY_BYTES: usize = 1952;
/// Dilithium3 secret key bytes.
pub const PQG_DILITHIUM3_SECRET_KEY_BYTES: usize = 4000;
/// Dilithium3 signature bytes.
pub const PQG_DILITHIUM3_SIGNATURE_BYTES: usize = 3293;
/// Dilithium5 public key bytes.
pub const PQG_DILITHIUM5_PUBLIC_KEY_BYTES: usize = 2592;
/// Dilithium5 secret key bytes.
pub const PQG_DILITHIUM5_SECRET_KEY_BYTES: usize = 4864;
/// Dilithium5 signature bytes.
pub const PQG_DILITHIUM5_SIGNATURE_BYTES: usize = 4595;
/// ML-DSA (and round-3 Dilithium) seed (xi) bytes for deterministic key generation.
pub const PQG_ML_DSA_SEED_BYTES: usize = 32;
/// ML-DSA signing randomness (rnd) bytes.
pub const PQG_ML_DSA_RND_BYTES: usize = 32;
/// ML-DSA external message representative (mu) bytes.
pub const PQG_ML_DSA_MU_BYTES: usize = 64;
/// Longest FIPS 204 context string.
pub const PQG_ML_DSA_MAX_CONTEXT_BYTES: usize = 255;
/// CTRU-Prime-653 public key bytes.
pub const PQG_CTRU_PRIME_653_PUBLIC_KEY_BYTES: usize = 994;
/// CTRU-Prime-653 secret key bytes.
pub const PQG_CTRU_PRIME_653_SECRET_KEY_BYTES: usize = 1353;
/// CTRU-Prime-653 ciphertext bytes.
pub const PQG_CTRU_PRIME_653_CIPHERTEXT_BYTES: usize = 898;
/// CTRU-Prime-653 shared secret bytes.
pub const PQG_CTRU_PRIME_653_SHARED_SECRET_BYTES: usize = 32;
/// CTRU-Prime-761 public key bytes.
pub const PQG_CTRU_PRIME_761_PUBLIC_KEY_BYTES: usize = 1158;
/// CTRU-Prime-761 secret key bytes.
pub const PQG_CTRU_PRIME_761_SECRET_KEY_BYTES: usize = 1571;
/// CTRU-Prime-761 ciphertext bytes.
pub const PQG_CTRU_PRIME_761_CIPHERTEXT_BYTES: usize = 952;
/// CTRU-Prime-761 shared secret bytes.
pub const PQG_CTRU_PRIME_761_SHARED_SECRET_BYTES: usize = 32;
/// CTRU-Prime-1277 public key bytes.
pub const PQG_CTRU_PRIME_1277_PUBLIC_KEY_BYTES: usize = 2067;
/// CTRU-Prime-1277 secret key bytes.
pub const PQG_CTRU_PRIME_1277_SECRET_KEY_BYTES: usize = 2738;
/// CTRU-Prime-1277 ciphertext bytes.
pub const PQG_CTRU_PRIME_1277_CIPHERTEXT_BYTES: usize = 1597;
/// CTRU-Prime-1277 shared secret bytes.
pub const PQG_CTRU_PRIME_1277_SHARED_SECRET_BYTES: usize = 32;
/// CTRU-Prime key generation seed (d || z) bytes.
pub const PQG_CTRU_PRIME_SEED_BYTES: usize = 64;
/// CTRU-Prime encapsulation coins bytes.
pub const PQG_CTRU_PRIME_COINS_BYTES: usize = 32;
/// SLH-DSA-SHA2-128s public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHA2_128S_PUBLIC_KEY_BYTES: usize = 32;
/// SLH-DSA-SHA2-128s secret key bytes.
pub const PQG_SLH_DSA_SHA2_128S_SECRET_KEY_BYTES: usize = 64;
/// SLH-DSA-SHA2-128s signature bytes.
pub const PQG_SLH_DSA_SHA2_128S_SIGNATURE_BYTES: usize = 7856;
/// SLH-DSA-SHAKE-128s public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHAKE_128S_PUBLIC_KEY_BYTES: usize = 32;
/// SLH-DSA-SHAKE-128s secret key bytes.
pub const PQG_SLH_DSA_SHAKE_128S_SECRET_KEY_BYTES: usize = 64;
/// SLH-DSA-SHAKE-128s signature bytes.
pub const PQG_SLH_DSA_SHAKE_128S_SIGNATURE_BYTES: usize = 7856;
/// SLH-DSA-SHA2-128f public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHA2_128F_PUBLIC_KEY_BYTES: usize = 32;
/// SLH-DSA-SHA2-128f secret key bytes.
pub const PQG_SLH_DSA_SHA2_128F_SECRET_KEY_BYTES: usize = 64;
/// SLH-DSA-SHA2-128f signature bytes.
pub const PQG_SLH_DSA_SHA2_128F_SIGNATURE_BYTES: usize = 17088;
/// SLH-DSA-SHAKE-128f public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHAKE_128F_PUBLIC_KEY_BYTES: usize = 32;
/// SLH-DSA-SHAKE-128f secret key bytes.
pub const PQG_SLH_DSA_SHAKE_128F_SECRET_KEY_BYTES: usize = 64;
/// SLH-DSA-SHAKE-128f signature bytes.
pub const PQG_SLH_DSA_SHAKE_128F_SIGNATURE_BYTES: usize = 17088;
/// SLH-DSA-SHA2-192s public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHA2_192S_PUBLIC_KEY_BYTES: usize = 48;
/// SLH-DSA-SHA2-192s secret key bytes.
pub const PQG_SLH_DSA_SHA2_192S_SECRET_KEY_BYTES: usize = 96;
/// SLH-DSA-SHA2-192s signature bytes.
pub const PQG_SLH_DSA_SHA2_192S_SIGNATURE_BYTES: usize = 16224;
/// SLH-DSA-SHAKE-192s public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHAKE_192S_PUBLIC_KEY_BYTES: usize = 48;
/// SLH-DSA-SHAKE-192s secret key bytes.
pub const PQG_SLH_DSA_SHAKE_192S_SECRET_KEY_BYTES: usize = 96;
/// SLH-DSA-SHAKE-192s signature bytes.
pub const PQG_SLH_DSA_SHAKE_192S_SIGNATURE_BYTES: usize = 16224;
/// SLH-DSA-SHA2-192f public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHA2_192F_PUBLIC_KEY_BYTES: usize = 48;
/// SLH-DSA-SHA2-192f secret key bytes.
pub const PQG_SLH_DSA_SHA2_192F_SECRET_KEY_BYTES: usize = 96;
/// SLH-DSA-SHA2-192f signature bytes.
pub const PQG_SLH_DSA_SHA2_192F_SIGNATURE_BYTES: usize = 35664;
/// SLH-DSA-SHAKE-192f public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHAKE_192F_PUBLIC_KEY_BYTES: usize = 48;
/// SLH-DSA-SHAKE-192f secret key bytes.
pub const PQG_SLH_DSA_SHAKE_192F_SECRET_KEY_BYTES: usize = 96;
/// SLH-DSA-SHAKE-192f signature bytes.
pub const PQG_SLH_DSA_SHAKE_192F_SIGNATURE_BYTES: usize = 35664;
/// SLH-DSA-SHA2-256s public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHA2_256S_PUBLIC_KEY_BYTES: usize = 64;
/// SLH-DSA-SHA2-256s secret key bytes.
pub const PQG_SLH_DSA_SHA2_256S_SECRET_KEY_BYTES: usize = 128;
/// SLH-DSA-SHA2-256s signature bytes.
pub const PQG_SLH_DSA_SHA2_256S_SIGNATURE_BYTES: usize = 29792;
/// SLH-DSA-SHAKE-256s public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHAKE_256S_PUBLIC_KEY_BYTES: usize = 64;
/// SLH-DSA-SHAKE-256s secret key bytes.
pub const PQG_SLH_DSA_SHAKE_256S_SECRET_KEY_BYTES: usize = 128;
/// SLH-DSA-SHAKE-256s signature bytes.
pub const PQG_SLH_DSA_SHAKE_256S_SIGNATURE_BYTES: usize = 29792;
/// SLH-DSA-SHA2-256f public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHA2_256F_PUBLIC_KEY_BYTES: usize = 64;
/// SLH-DSA-SHA2-256f secret key bytes.
pub const PQG_SLH_DSA_SHA2_256F_SECRET_KEY_BYTES: usize = 128;
/// SLH-DSA-SHA2-256f signature bytes.
pub const PQG_SLH_DSA_SHA2_256F_SIGNATURE_BYTES: usize = 49856;
/// SLH-DSA-SHAKE-256f public key bytes (PK.seed || PK.root).
pub const PQG_SLH_DSA_SHAKE_256F_PUBLIC_KEY_BYTES: usize = 64;
/// SLH-DSA-SHAKE-256f secret key bytes.
pub const PQG_SLH_DSA_SHAKE_256F_SECRET_KEY_BYTES: usize = 128;
/// SLH-DSA-SHAKE-256f signature bytes.
pub const PQG_SLH_DSA_SHAKE_256F_SIGNATURE_BYTES: usize = 49856;

const _: () = {
    use crate::slhdsa::ParamSet as S;
    assert!(PQG_SLH_DSA_SHA2_128S == 48 + S::Sha2_128s.index() as i32);
    assert!(PQG_SLH_DSA_SHA2_128S_PUBLIC_KEY_BYTES == S::Sha2_128s.public_key_len());
    assert!(PQG_SLH_DSA_SHA2_128S_SECRET_KEY_BYTES == S::Sha2_128s.secret_key_len());
    assert!(PQG_SLH_DSA_SHA2_128S_SIGNATURE_BYTES == S::Sha2_128s.signature_len());
    assert!(PQG_SLH_DSA_SHAKE_128S == 48 + S::Shake128s.index() as i32);
    assert!(PQG_SLH_DSA_SHAKE_128S_PUBLIC_KEY_BYTES == S::Shake128s.public_key_len());
    assert!(PQG_SLH_DSA_SHAKE_128S_SECRET_KEY_BYTES == S::Shake128s.secret_key_len());
    assert!(PQG_SLH_DSA_SHAKE_128S_SIGNATURE_BYTES == S::Shake128s.signature_len());
    assert!(PQG_SLH_DSA_SHA2_128F == 48 + S::Sha2_128f.index() as i32);
    assert!(PQG_SLH_DSA_SHA2_128F_PUBLIC_KEY_BYTES == S::Sha2_128f.public_key_len());
    assert!(PQG_SLH_DSA_SHA2_128F_SECRET_KEY_BYTES == S::Sha2_128f.secret_key_len());
    assert!(PQG_SLH_DSA_SHA2_128F_SIGNATURE_BYTES == S::Sha2_128f.signature_len());
    assert!(PQG_SLH_DSA_SHAKE_128F == 48 + S::Shake128f.index() as i32);
    assert!(PQG_SLH_DSA_SHAKE_128F_PUBLIC_KEY_BYTES == S::Shake128f.public_key_len());
    assert!(PQG_SLH_DSA_SHAKE_128F_SECRET_KEY_BYTES == S::Shake128f.secret_key_len());
    assert!(PQG_SLH_DSA_SHAKE_128F_SIGNATURE_BYTES == S::Shake128f.signature_len());
    assert!(PQG_SLH_DSA_SHA2_192S == 48 + S::Sha2_192s.index() as i32);
    assert!(PQG_SLH_DSA_SHA2_192S_PUBLIC_KEY_BYTES == S::Sha2_192s.public_key_len());
    assert!(PQG_SLH_DSA_SHA2_192S_SECRET_KEY_BYTES == S::Sha2_192s.secret_key_len());
    assert!(PQG_SLH_DSA_SHA2_192S_SIGNATURE_BYTES == S::Sha2_192s.signature_len());
    assert!(PQG_SLH_DSA_SHAKE_192S == 48 + S::Shake192s.index() as i32);
    assert!(PQG_SLH_DSA_SHAKE_192S_PUBLIC_KEY_BYTES == S::Shake192s.public_key_len());
    assert!(PQG_SLH_DSA_SHAKE_192S_SECRET_KEY_BYTES == S::Shake192s.secret_key_len());
    assert!(PQG_SLH_DSA_SHAKE_192S_SIGNATURE_BYTES == S::Shake192s.signature_len());
    assert!(PQG_SLH_DSA_SHA2_192F == 48 + S::Sha2_192f.index() as i32);
    assert!(PQG_SLH_DSA_SHA2_192F_PUBLIC_KEY_BYTES == S::Sha2_192f.public_key_len());
    assert!(PQG_SLH_DSA_SHA2_192F_SECRET_KEY_BYTES == S::Sha2_192f.secret_key_len());
    assert!(PQG_SLH_DSA_SHA2_192F_SIGNATURE_BYTES == S::Sha2_192f.signature_len());
    assert!(PQG_SLH_DSA_SHAKE_192F == 48 + S::Shake192f.index() as i32);
    assert!(PQG_SLH_DSA_SHAKE_192F_PUBLIC_KEY_BYTES == S::Shake192f.public_key_len());
    assert!(PQG_SLH_DSA_SHAKE_192F_SECRET_KEY_BYTES == S::Shake192f.secret_key_len());
    assert!(PQG_SLH_DSA_SHAKE_192F_SIGNATURE_BYTES == S::Shake192f.signature_len());
    assert!(PQG_SLH_DSA_SHA2_256S == 48 + S::Sha2_256s.index() as i32);
    assert!(PQG_SLH_DSA_SHA2_256S_PUBLIC_KEY_BYTES == S::Sha2_256s.public_key_len());
    assert!(PQG_SLH_DSA_SHA2_256S_SECRET_KEY_BYTES == S::Sha2_256s.secret_key_len());
    assert!(PQG_SLH_DSA_SHA2_256S_SIGNATURE_BYTES == S::Sha2_256s.signature_len());
    assert!(PQG_SLH_DSA_SHAKE_256S == 48 + S::Shake256s.index() as i32);
    assert!(PQG_SLH_DSA_SHAKE_256S_PUBLIC_KEY_BYTES == S::Shake256s.public_key_len());
    assert!(PQG_SLH_DSA_SHAKE_256S_SECRET_KEY_BYTES == S::Shake256s.secret_key_len());
    assert!(PQG_SLH_DSA_SHAKE_256S_SIGNATURE_BYTES == S::Shake256s.signature_len());
    assert!(PQG_SLH_DSA_SHA2_256F == 48 + S::Sha2_256f.index() as i32);
    assert!(PQG_SLH_DSA_SHA2_256F_PUBLIC_KEY_BYTES == S::Sha2_256f.public_key_len());
    assert!(PQG_SLH_DSA_SHA2_256F_SECRET_KEY_BYTES == S::Sha2_256f.secret_key_len());
    assert!(PQG_SLH_DSA_SHA2_256F_SIGNATURE_BYTES == S::Sha2_256f.signature_len());
    assert!(PQG_SLH_DSA_SHAKE_256F == 48 + S::Shake256f.index() as i32);
    assert!(PQG_SLH_DSA_SHAKE_256F_PUBLIC_KEY_BYTES == S::Shake256f.public_key_len());
    assert!(PQG_SLH_DSA_SHAKE_256F_SECRET_KEY_BYTES == S::Shake256f.secret_key_len());
    assert!(PQG_SLH_DSA_SHAKE_256F_SIGNATURE_BYTES == S::Shake256f.signature_len());
};
/// ML-KEM-512 encapsulation key (ek) bytes.
pub const PQG_ML_KEM_512_PUBLIC_KEY_BYTES: usize = 800;
/// ML-KEM-512 decapsulation key (dk) bytes.
pub const PQG_ML_KEM_512_SECRET_KEY_BYTES: usize = 1632;
/// ML-KEM-512 ciphertext bytes.
pub const PQG_ML_KEM_512_CIPHERTEXT_BYTES: usize = 768;
/// ML-KEM-512 shared secret bytes.
pub const PQG_ML_KEM_512_SHARED_SECRET_BYTES: usize = 32;
/// ML-KEM-768 encapsulation key (ek) bytes.
pub const PQG_ML_KEM_768_PUBLIC_KEY_BYTES: usize = 1184;
/// ML-KEM-768 decapsulation key (dk) bytes.
pub const PQG_ML_KEM_768_SECRET_KEY_BYTES: usize = 2400;
/// ML-KEM-768 ciphertext bytes.
pub const PQG_ML_KEM_768_CIPHERTEXT_BYTES: usize = 1088;
/// ML-KEM-768 shared secret bytes.
pub const PQG_ML_KEM_768_SHARED_SECRET_BYTES: usize = 32;
/// ML-KEM-1024 encapsulation key (ek) bytes.
pub const PQG_ML_KEM_1024_PUBLIC_KEY_BYTES: usize = 1568;
/// ML-KEM-1024 decapsulation key (dk) bytes.
pub const PQG_ML_KEM_1024_SECRET_KEY_BYTES: usize = 3168;
/// ML-KEM-1024 ciphertext bytes.
pub const PQG_ML_KEM_1024_CIPHERTEXT_BYTES: usize = 1568;
/// ML-KEM-1024 shared secret bytes.
pub const PQG_ML_KEM_1024_SHARED_SECRET_BYTES: usize = 32;
/// ML-KEM key generation seed (d || z) bytes.
pub const PQG_ML_KEM_SEED_BYTES: usize = 64;
/// ML-KEM encapsulation coins (m) bytes.
pub const PQG_ML_KEM_COINS_BYTES: usize = 32;

const _: () = {
    use crate::mldsa::ParamSet as M;
    use ctru::ParamSet as C;
    assert!(PQG_ML_DSA_44_PUBLIC_KEY_BYTES == M::MlDsa44.public_key_len());
    assert!(PQG_ML_DSA_44_SECRET_KEY_BYTES == M::MlDsa44.secret_key_len());
    assert!(PQG_ML_DSA_44_SIGNATURE_BYTES == M::MlDsa44.signature_len());
    assert!(PQG_ML_DSA_65_PUBLIC_KEY_BYTES == M::MlDsa65.public_key_len());
    assert!(PQG_ML_DSA_65_SECRET_KEY_BYTES == M::MlDsa65.secret_key_len());
    assert!(PQG_ML_DSA_65_SIGNATURE_BYTES == M::MlDsa65.signature_len());
    assert!(PQG_ML_DSA_87_PUBLIC_KEY_BYTES == M::MlDsa87.public_key_len());
    assert!(PQG_ML_DSA_87_SECRET_KEY_BYTES == M::MlDsa87.secret_key_len());
    assert!(PQG_ML_DSA_87_SIGNATURE_BYTES == M::MlDsa87.signature_len());
    assert!(PQG_DILITHIUM2_PUBLIC_KEY_BYTES == M::Dilithium2.public_key_len());
    assert!(PQG_DILITHIUM2_SECRET_KEY_BYTES == M::Dilithium2.secret_key_len());
    assert!(PQG_DILITHIUM2_SIGNATURE_BYTES == M::Dilithium2.signature_len());
    assert!(PQG_DILITHIUM3_PUBLIC_KEY_BYTES == M::Dilithium3.public_key_len());
    assert!(PQG_DILITHIUM3_SECRET_KEY_BYTES == M::Dilithium3.secret_key_len());
    assert!(PQG_DILITHIUM3_SIGNATURE_BYTES == M::Dilithium3.signature_len());
    assert!(PQG_DILITHIUM5_PUBLIC_KEY_BYTES == M::Dilithium5.public_key_len());
    assert!(PQG_DILITHIUM5_SECRET_KEY_BYTES == M::Dilithium5.secret_key_len());
    assert!(PQG_DILITHIUM5_SIGNATURE_BYTES == M::Dilithium5.signature_len());
    assert!(PQG_CTRU_PRIME_653_PUBLIC_KEY_BYTES == C::Ctru653.public_key_len());
    assert!(PQG_CTRU_PRIME_653_SECRET_KEY_BYTES == C::Ctru653.secret_key_len());
    assert!(PQG_CTRU_PRIME_653_CIPHERTEXT_BYTES == C::Ctru653.ciphertext_len());
    assert!(PQG_CTRU_PRIME_653_SHARED_SECRET_BYTES == C::Ctru653.shared_secret_len());
    assert!(PQG_CTRU_PRIME_761_PUBLIC_KEY_BYTES == C::Ctru761.public_key_len());
    assert!(PQG_CTRU_PRIME_761_SECRET_KEY_BYTES == C::Ctru761.secret_key_len());
    assert!(PQG_CTRU_PRIME_761_CIPHERTEXT_BYTES == C::Ctru761.ciphertext_len());
    assert!(PQG_CTRU_PRIME_761_SHARED_SECRET_BYTES == C::Ctru761.shared_secret_len());
    assert!(PQG_CTRU_PRIME_1277_PUBLIC_KEY_BYTES == C::Ctru1277.public_key_len());
    assert!(PQG_CTRU_PRIME_1277_SECRET_KEY_BYTES == C::Ctru1277.secret_key_len());
    assert!(PQG_CTRU_PRIME_1277_CIPHERTEXT_BYTES == C::Ctru1277.ciphertext_len());
    assert!(PQG_CTRU_PRIME_1277_SHARED_SECRET_BYTES == C::Ctru1277.shared_secret_len());
    use crate::mlkem::ParamSet as K;
    assert!(PQG_ML_KEM_512_PUBLIC_KEY_BYTES == K::MlKem512.encaps_key_len());
    assert!(PQG_ML_KEM_512_SECRET_KEY_BYTES == K::MlKem512.decaps_key_len());
    assert!(PQG_ML_KEM_512_CIPHERTEXT_BYTES == K::MlKem512.ciphertext_len());
    assert!(PQG_ML_KEM_512_SHARED_SECRET_BYTES == K::MlKem512.shared_secret_len());
    assert!(PQG_ML_KEM_768_PUBLIC_KEY_BYTES == K::MlKem768.encaps_key_len());
    assert!(PQG_ML_KEM_768_SECRET_KEY_BYTES == K::MlKem768.decaps_key_len());
    assert!(PQG_ML_KEM_768_CIPHERTEXT_BYTES == K::MlKem768.ciphertext_len());
    assert!(PQG_ML_KEM_768_SHARED_SECRET_BYTES == K::MlKem768.shared_secret_len());
    assert!(PQG_ML_KEM_1024_PUBLIC_KEY_BYTES == K::MlKem1024.encaps_key_len());
    assert!(PQG_ML_KEM_1024_SECRET_KEY_BYTES == K::MlKem1024.decaps_key_len());
    assert!(PQG_ML_KEM_1024_CIPHERTEXT_BYTES == K::MlKem1024.ciphertext_len());
    assert!(PQG_ML_KEM_1024_SHARED_SECRET_BYTES == K::MlKem1024.shared_secret_len());
    assert!(PQG_ML_KEM_SEED_BYTES == crate::mlkem::SEED_LEN);
    assert!(PQG_ML_KEM_COINS_BYTES == crate::mlkem::COINS_LEN);
};

/// Returns a static, human-readable description of a status code.
///
/// Never returns NULL: an unknown code gives "unknown pqg_status". The string is owned by the
/// library and must not be freed. Thread-safe.
#[no_mangle]
pub extern "C" fn pqg_status_str(s: pqg_status) -> *const c_char {
    boundary_or(c"PQG_ERR_PANIC".as_ptr(), || status_text(s).as_ptr())
}

fn status_text(s: pqg_status) -> &'static std::ffi::CStr {
    let text: &'static std::ffi::CStr = match s {
        PQG_OK => c"PQG_OK: success",
        PQG_PENDING => c"PQG_PENDING: the job is still running",
        PQG_ERR_NULL_POINTER => c"PQG_ERR_NULL_POINTER: a required pointer was NULL",
        PQG_ERR_INVALID_ARGUMENT => c"PQG_ERR_INVALID_ARGUMENT: invalid argument (unknown algorithm, context over 255 bytes, or bad option)",
        PQG_ERR_BAD_LENGTH => c"PQG_ERR_BAD_LENGTH: a buffer length does not match the algorithm",
        PQG_ERR_BAD_KEY => c"PQG_ERR_BAD_KEY: the key encoding is malformed",
        PQG_ERR_VERIFY_FAILED => c"PQG_ERR_VERIFY_FAILED: the signature does not verify",
        PQG_ERR_NO_DEVICE => c"PQG_ERR_NO_DEVICE: no usable GPU device",
        PQG_ERR_DEVICE => c"PQG_ERR_DEVICE: the GPU failed while running this work",
        PQG_ERR_TIMEOUT => c"PQG_ERR_TIMEOUT: the wait ran out before the job finished",
        PQG_ERR_RNG => c"PQG_ERR_RNG: operating system randomness unavailable",
        PQG_ERR_PANIC => c"PQG_ERR_PANIC: internal error (panic caught at the boundary)",
        _ => c"unknown pqg_status",
    };
    text
}

/// Returns the library version as a static string, e.g. "0.1.0".
///
/// Never returns NULL; the string is owned by the library. Thread-safe.
#[no_mangle]
pub extern "C" fn pqg_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Public key length in bytes of `alg`, or 0 for an unknown algorithm. Thread-safe.
#[no_mangle]
pub extern "C" fn pqg_public_key_len(alg: pqg_alg) -> usize {
    boundary_or(0, || Alg::from_code(alg).map_or(0, Alg::public_key_len))
}

/// Secret key length in bytes of `alg`, or 0 for an unknown algorithm. Thread-safe.
#[no_mangle]
pub extern "C" fn pqg_secret_key_len(alg: pqg_alg) -> usize {
    boundary_or(0, || Alg::from_code(alg).map_or(0, Alg::secret_key_len))
}

/// Signature length in bytes of `alg`, or 0 for an unknown algorithm or a KEM. Thread-safe.
#[no_mangle]
pub extern "C" fn pqg_signature_len(alg: pqg_alg) -> usize {
    boundary_or(0, || Alg::from_code(alg).map_or(0, Alg::signature_len))
}

/// KEM ciphertext length in bytes of `alg`, or 0 for an unknown algorithm or a signature
/// scheme. Thread-safe.
#[no_mangle]
pub extern "C" fn pqg_ciphertext_len(alg: pqg_alg) -> usize {
    boundary_or(0, || Alg::from_code(alg).map_or(0, Alg::ciphertext_len))
}

/// KEM shared secret length in bytes of `alg`, or 0 for an unknown algorithm or a signature
/// scheme. Thread-safe.
#[no_mangle]
pub extern "C" fn pqg_shared_secret_len(alg: pqg_alg) -> usize {
    boundary_or(0, || Alg::from_code(alg).map_or(0, Alg::shared_secret_len))
}

/// The ML-DSA (or round-3 Dilithium) parameter set of `alg`; a KEM or unknown value is
/// `InvalidArgument`.
fn mldsa_params(alg: pqg_alg) -> Result<crate::mldsa::ParamSet, Error> {
    match Alg::from_code(alg)? {
        Alg::MlDsa(p) => Ok(p),
        _ => Err(Error::InvalidArgument),
    }
}

/// The KEM parameter set of `alg` (CTRU-Prime or ML-KEM); a signature scheme or unknown value
/// is `InvalidArgument`.
fn kem_params(alg: pqg_alg) -> Result<crate::Kem, Error> {
    Alg::from_code(alg)?.kem()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn status_strings_carry_the_error_messages() {
        for e in [
            Error::NullPointer,
            Error::InvalidArgument,
            Error::BadLength,
            Error::BadKey,
            Error::VerifyFailed,
            Error::NoDevice,
            Error::Device,
            Error::Timeout,
            Error::Rng,
            Error::Panic,
        ] {
            // SAFETY: pqg_status_str returns a static NUL-terminated string.
            let s = unsafe { CStr::from_ptr(pqg_status_str(e.code())) };
            assert!(s.to_str().unwrap().ends_with(e.message()), "{e:?}");
        }
    }

    #[test]
    fn version_constants_match_the_crate() {
        let v = env!("CARGO_PKG_VERSION");
        let want = format!("{PQG_VERSION_MAJOR}.{PQG_VERSION_MINOR}.{PQG_VERSION_PATCH}");
        assert_eq!(v, want);
        assert_eq!(
            PQG_VERSION_NUMBER,
            PQG_VERSION_MAJOR * 10000 + PQG_VERSION_MINOR * 100 + PQG_VERSION_PATCH
        );
        // SAFETY: pqg_version returns a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(pqg_version()) };
        assert_eq!(s.to_str().unwrap(), v);
    }
}
