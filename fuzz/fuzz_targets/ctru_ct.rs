//! CTRU-Prime ciphertext decoding through decapsulation with the fixture's key: implicit
//! rejection, so any right-length ciphertext gives a shared secret; the wrong length is
//! BadLength.
#![no_main]
#[path = "common.rs"]
mod common;
use common::*;
use libfuzzer_sys::fuzz_target;
#[allow(unused_imports)]
use pqgpu::{ctru, mldsa, Error};
#[allow(unused_imports)]
use std::sync::OnceLock;

static FIX: OnceLock<Vec<CtruFixture>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let fix = FIX.get_or_init(|| CTRU.iter().map(|&p| ctru_fixture(p)).collect());
    let Some((set, ct)) = mutate(data, |s| fix[s].ct.clone()) else { return };
    let p = CTRU[set];
    let mut ss = vec![0u8; p.shared_secret_len()];
    match ctru::decaps(p, &fix[set].sk, &ct, &mut ss) {
        Ok(()) => assert_eq!(ct.len(), p.ciphertext_len()),
        Err(e) => assert_eq!(e, Error::BadLength),
    }
});
