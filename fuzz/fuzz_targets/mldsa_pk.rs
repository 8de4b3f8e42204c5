//! ML-DSA pkDecode (Alg. 23) through verification: any bytes of the right length decode
//! (t1 has no illegal values), so a random key must simply fail to verify the fixture's
//! signature; the wrong length is BadLength.
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
    let Some((set, pk)) = mutate(data, |s| fix[s].pk.clone()) else { return };
    let p = MLDSA[set];
    let msg = mldsa::Message::Pure { ctx: b"", msg: MSG };
    let r = mldsa::verify(p, &pk, &msg, &fix[set].sig);
    match r {
        Ok(()) => assert_eq!(pk, fix[set].pk, "a different public key verified"),
        Err(e) if pk.len() != p.public_key_len() => assert_eq!(e, Error::BadLength),
        Err(e) => assert_eq!(e, Error::VerifyFailed),
    }
});
