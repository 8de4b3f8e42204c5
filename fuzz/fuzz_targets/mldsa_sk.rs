//! ML-DSA skDecode (Alg. 25) through signing: out-of-range s1/s2 is BadKey, a decodable key
//! signs (or exhausts the attempt bound: BadKey) and never panics or hangs.
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
    let Some((set, sk)) = mutate(data, |s| fix[s].sk.clone()) else { return };
    let p = MLDSA[set];
    let msg = mldsa::Message::Pure { ctx: b"", msg: MSG };
    let mut sig = vec![0u8; p.signature_len()];
    match mldsa::sign(p, &sk, &msg, Some(&[0; 32]), &mut sig) {
        Ok(()) => assert!(sig.iter().any(|&b| b != 0)),
        Err(e) if sk.len() != p.secret_key_len() => assert_eq!(e, Error::BadLength),
        Err(e) => {
            assert_eq!(e, Error::BadKey);
            assert!(sig.iter().all(|&b| b == 0), "a failed signature was written");
        }
    }
});
