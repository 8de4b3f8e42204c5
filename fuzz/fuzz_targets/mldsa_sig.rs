//! ML-DSA sigDecode (Alg. 27) and HintBitUnpack (Alg. 21) through verification: only the
//! fixture's own signature verifies; anything else, any length, is VerifyFailed.
#![no_main]
#[path = "common.rs"]
mod common;
use common::*;
use libfuzzer_sys::fuzz_target;
#[allow(unused_imports)]
use pqgpu::{ctru, mldsa, Error};
#[allow(unused_imports)]
use std::sync::OnceLock;

static FIX: OnceLock<Vec<MldsaFixture>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let fix = FIX.get_or_init(|| MLDSA.iter().map(|&p| mldsa_fixture(p)).collect());
    let Some((set, sig)) = mutate(data, |s| fix[s].sig.clone()) else { return };
    let p = MLDSA[set];
    let msg = mldsa::Message::Pure { ctx: b"", msg: MSG };
    match mldsa::verify(p, &fix[set].pk, &msg, &sig) {
        Ok(()) => {
            // ML-DSA is strongly unforgeable: a second valid signature would be a finding,
            // but a valid one may differ from the fixture's only in a malleable way, which
            // FIPS 204's encoding checks rule out.
            assert_eq!(sig, fix[set].sig, "a different signature verified");
        }
        Err(e) => assert_eq!(e, Error::VerifyFailed),
    }
});
