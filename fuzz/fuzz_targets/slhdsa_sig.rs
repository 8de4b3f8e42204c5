//! SLH-DSA signatures, messages and contexts, every set, through verification: the plain C
//! call, the C call with a public-key handle, and the internal API (plain and expanded key)
//! are each held to the same expected status; a context over 255 bytes is `PQG_ERR_INVALID_ARGUMENT`; else
//! only the fixture's signature on its own message and empty context verifies, anything else
//! (any length) is `PQG_ERR_VERIFY_FAILED`.
//!
//! Input: byte 0 picks the set (and, as in `mutate`, raw or XORed signature bytes); byte 1
//! the context (`context_of`); byte 2 the message (0: the fixture's, else the fixture's with
//! that byte appended); the rest the signature.
#![no_main]
#[path = "slhdsa_common.rs"]
mod slhdsa_common;
use libfuzzer_sys::fuzz_target;
use pqgpu::ffi::*;
use pqgpu::slhdsa::{self, ParamSet};
use slhdsa_common::*;

/// Below 0x80 the empty context; else (b - 0x80) * 3 bytes of b: 0..381, so both sides of the
/// 255-byte limit.
fn context_of(b: u8) -> Vec<u8> {
    if b < 0x80 {
        Vec::new()
    } else {
        vec![b; (b as usize - 0x80) * 3]
    }
}

fuzz_target!(|data: &[u8]| {
    let [head, cb, mb, rest @ ..] = data else {
        return;
    };
    let p = ParamSet::ALL[*head as usize % 12];
    let fix = fixture(p);
    let ctx = context_of(*cb);
    let mut msg = MSG.to_vec();
    if *mb != 0 {
        msg.push(*mb);
    }
    let sig = mutate(*head, rest, &fix.sig);

    let want = if ctx.len() > 255 {
        PQG_ERR_INVALID_ARGUMENT
    } else if sig == fix.sig && msg == MSG && ctx.is_empty() {
        PQG_OK
    } else {
        PQG_ERR_VERIFY_FAILED
    };
    let m = slhdsa::Message::Pure {
        ctx: &ctx,
        msg: &msg,
    };
    // One verification per input (each costs up to a few milliseconds), the path picked by
    // byte 2's low bits; every path is held to the same expected status, so they agree.
    let (path, got) = match *mb & 3 {
        0 => (
            "slhdsa::verify",
            status(slhdsa::verify(p, &fix.pk, &m, &sig)),
        ),
        1 => ("pqg_slhdsa_verify", c_verify(p, &fix.pk, &msg, &ctx, &sig)),
        2 => {
            let k = slhdsa::ExpandedPublicKey::new(p, &fix.pk).unwrap();
            ("ExpandedPublicKey::verify", status(k.verify(&m, &sig)))
        }
        _ => {
            let (st, h) = c_key_new(p, PQG_KEY_PUBLIC, &fix.pk);
            assert_eq!(st, PQG_OK);
            let got = c_verify_key(h, &msg, &ctx, &sig);
            // SAFETY: `h` came from pqg_key_new and is freed once.
            unsafe { pqg_key_free(h) };
            ("pqg_slhdsa_verify_key", got)
        }
    };
    assert_eq!(got, want, "{path}");
});
