//! SLH-DSA public keys (PK.seed || PK.root), every set, through pqg_key_new and verification
//! of the fixture's signature: any 2n bytes make a handle, another length is
//! `PQG_ERR_BAD_LENGTH`; only the real key verifies (`PQG_ERR_VERIFY_FAILED` otherwise); the
//! handle, the plain C call and the internal API are each held to that status.
#![no_main]
#[path = "slhdsa_common.rs"]
mod slhdsa_common;
use libfuzzer_sys::fuzz_target;
use pqgpu::ffi::*;
use pqgpu::slhdsa::{self, ParamSet};
use slhdsa_common::*;

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let p = ParamSet::ALL[head as usize % 12];
    let fix = fixture(p);
    let pk = mutate(head, rest, &fix.pk);
    let (st, h) = c_key_new(p, PQG_KEY_PUBLIC, &pk);
    let want_key = if pk.len() == p.public_key_len() {
        PQG_OK
    } else {
        PQG_ERR_BAD_LENGTH
    };
    assert_eq!(
        st,
        want_key,
        "pqg_key_new of a {}-byte public key",
        pk.len()
    );

    let msg = slhdsa::Message::Pure { ctx: b"", msg: MSG };
    let want = if pk.len() != p.public_key_len() {
        PQG_ERR_BAD_LENGTH
    } else if pk == fix.pk {
        PQG_OK
    } else {
        PQG_ERR_VERIFY_FAILED
    };
    let internal = || status(slhdsa::verify(p, &pk, &msg, &fix.sig));
    let plain = || c_verify(p, &pk, MSG, b"", &fix.sig);
    if h.is_null() {
        // A wrong length costs nothing: both paths.
        assert_eq!(internal(), want, "slhdsa::verify");
        assert_eq!(plain(), want, "pqg_slhdsa_verify");
        return;
    }
    // One verification per input (each costs up to a few milliseconds), the path picked by
    // the head byte; every path is held to the same expected status, so they agree.
    match (head / 12) % 3 {
        0 => assert_eq!(internal(), want, "slhdsa::verify"),
        1 => assert_eq!(plain(), want, "pqg_slhdsa_verify"),
        _ => assert_eq!(
            c_verify_key(h, MSG, b"", &fix.sig),
            want,
            "pqg_slhdsa_verify_key"
        ),
    }
    // SAFETY: `h` came from pqg_key_new and is freed once.
    unsafe { pqg_key_free(h) };
});
