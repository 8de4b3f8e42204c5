//! Round-3 Dilithium public-key decoding through verification (see `common::mldsa_pk`),
//! Dilithium2/3/5.
#![no_main]
#[path = "common.rs"]
mod common;
use common::*;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static FIX: OnceLock<Vec<MldsaFixture>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let fix = FIX.get_or_init(|| DILITHIUM.iter().map(|&p| mldsa_fixture(p)).collect());
    mldsa_pk(&DILITHIUM, fix, data);
});
