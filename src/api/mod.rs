//! The safe call layer that every caller goes through: Rust users, the C ABI (`ffi`, which
//! only turns pointers into slices and statuses into codes) and, through the C ABI, the
//! benchmark.
//!
//! Each batch function takes the caller's own output buffers and the backend writes results
//! straight into them (by DMA or zero-copy kernels when they lie in registered memory,
//! through pinned staging otherwise): no batch-sized buffer is allocated, zeroed or copied
//! here. Around the backend call this layer
//! * checks the call shape (array lengths): a bad shape is an `Err`, and nothing is written;
//! * contains a backend panic (unfinished items report `Panic`);
//! * zeroes the secret outputs (secret keys, shared secrets) of every item that failed, and
//!   the public outputs of items a backend panic cut short (they may be half-written).
//!
//! The `*_one` functions are the single-item forms, with the same rules.

mod kem;
mod mldsa;
mod run;
mod slhdsa;

pub use kem::{kem_decaps, kem_decaps_one, kem_encaps, kem_encaps_one, kem_keygen, kem_keygen_one};
pub use mldsa::{
    mldsa_keygen, mldsa_keygen_one, mldsa_sign, mldsa_sign_one, mldsa_verify, mldsa_verify_one,
};
pub use slhdsa::{
    slhdsa_keygen, slhdsa_keygen_one, slhdsa_sign, slhdsa_sign_one, slhdsa_verify,
    slhdsa_verify_one,
};
