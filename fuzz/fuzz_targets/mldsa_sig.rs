//! ML-DSA sigDecode and HintBitUnpack through verification (see `common::mldsa_sig`),
//! ML-DSA-44/65/87.
#![no_main]
#[path = "common.rs"]
mod common;
use common::*;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static FIX: OnceLock<Vec<MldsaFixture>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let fix = FIX.get_or_init(|| MLDSA.iter().map(|&p| mldsa_fixture(p)).collect());
    mldsa_sig(&MLDSA, fix, data);
});
