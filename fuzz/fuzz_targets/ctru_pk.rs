//! CTRU-Prime public-key decoding through encapsulation: BadKey / BadLength or a ciphertext,
//! never a panic.
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
    let Some((set, pk)) = mutate(data, |s| fix[s].pk.clone()) else { return };
    let p = CTRU[set];
    let mut ct = vec![0u8; p.ciphertext_len()];
    let mut ss = vec![0u8; p.shared_secret_len()];
    match ctru::encaps_derand(p, &pk, &[5; 32], &mut ct, &mut ss) {
        Ok(()) => {}
        Err(e) if pk.len() != p.public_key_len() => assert_eq!(e, Error::BadLength),
        Err(e) => {
            assert_eq!(e, Error::BadKey);
            assert!(ss.iter().all(|&b| b == 0));
        }
    }
});
