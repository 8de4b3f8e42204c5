//! pqgpu: batched post-quantum cryptography for PKI services.
//!
//! * [`mldsa`]: ML-DSA-44/65/87 (FIPS 204) on the CPU, the ground truth for every backend.
//! * [`slhdsa`]: SLH-DSA, all twelve sets (FIPS 205) on the CPU.
//! * [`mlkem`]: ML-KEM-512/768/1024 (FIPS 203) on the CPU.
//! * [`ctru`]: the CTRU-Prime KEM (NTRU over x^n - x - 1).
//! * [`api`]: the safe call layer (batches and single calls into the caller's buffers) that
//!   Rust users and the C ABI share.
//! * [`backend`]: the batch interface and the CPU backend; [`gpu`]: the GPU backend;
//!   [`select`]: which of them a context uses.
//! * [`ffi`]: the C ABI (`include/pqgpu.h`), the only place with `extern "C"`.

pub mod alg;
pub mod api;
pub mod backend;
pub mod ctru;
pub mod error;
pub mod ffi;
/// Decoders and encoders for the fuzz targets (`--cfg fuzzing` only; see FUZZING.md).
#[cfg(fuzzing)]
pub mod fuzzing;
pub mod gpu;
pub mod mldsa;
pub mod mlkem;
pub mod prehash;
pub mod process;
pub mod rng;
pub mod select;
pub mod serve;
pub mod settings;
pub mod simd;
pub mod slhdsa;

pub use alg::{Alg, Kem};
pub use error::{Error, Status};
