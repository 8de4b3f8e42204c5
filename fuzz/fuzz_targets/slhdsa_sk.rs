//! SLH-DSA secret keys (SK.seed || SK.prf || PK.seed || PK.root) through pqg_key_new: a wrong
//! length is `PQG_ERR_BAD_LENGTH`; a 4n-byte key is accepted iff its PK.root is the root that
//! key generation (slh_keygen_internal, Alg. 18) gives for its SK.seed and PK.seed, else
//! `PQG_ERR_BAD_KEY`, with no handle. Each check costs a key generation, so the 's' sets
//! (30-60x an 'f' set's) are drawn only when `pick` is 0x5a (not 0, which fuzzers feed
//! often) and their 'f' siblings otherwise.
//! Input: byte 0 the set (and raw or XORed bytes, as `mutate`), byte 1 `pick`, the rest the key.
#![no_main]
#[path = "slhdsa_common.rs"]
mod slhdsa_common;
use libfuzzer_sys::fuzz_target;
use pqgpu::ffi::*;
use pqgpu::slhdsa::{self, ParamSet};
use slhdsa_common::*;

fuzz_target!(|data: &[u8]| {
    let [head, pick, rest @ ..] = data else {
        return;
    };
    let mut p = ParamSet::ALL[*head as usize % 12];
    if is_small(p) && *pick != 0x5a {
        // The 'f' set of the same hash and security level.
        p = ParamSet::ALL[p.index() + 2];
    }
    let fix = fixture_keys(p);
    let sk = mutate(*head, rest, &fix.sk);
    let (st, h) = c_key_new(p, PQG_KEY_SECRET, &sk);
    let n = p.n();
    let want = if sk.len() != p.secret_key_len() {
        PQG_ERR_BAD_LENGTH
    } else if sk[..n] == fix.sk[..n] && sk[2 * n..3 * n] == fix.sk[2 * n..3 * n] {
        // The fixture's seeds: its root.
        if sk[3 * n..] == fix.pk[n..] {
            PQG_OK
        } else {
            PQG_ERR_BAD_KEY
        }
    } else if st == PQG_OK || *pick & 7 == 0 {
        // Other seeds: their root from key generation, for every accepted key and one rejected
        // key in eight (a second key generation per input would halve the rate; a rejected
        // key with other seeds is wrongly rejected only if its PK.root is their real root,
        // which the fuzzer cannot produce without computing it).
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk2 = vec![0u8; p.secret_key_len()];
        // keygen_internal takes SK.seed || SK.prf || PK.seed.
        slhdsa::keygen_internal(p, &sk[..3 * n], &mut pk, &mut sk2).unwrap();
        if sk[3 * n..] == pk[n..] {
            PQG_OK
        } else {
            PQG_ERR_BAD_KEY
        }
    } else {
        PQG_ERR_BAD_KEY
    };
    assert_eq!(st, want, "pqg_key_new of a {}-byte secret key", sk.len());
    if !h.is_null() {
        // SAFETY: `h` is a live handle.
        assert_eq!(unsafe { pqg_key_alg(h) }, alg(p));
        // SAFETY: `h` came from pqg_key_new and is freed once.
        unsafe { pqg_key_free(h) };
    }
});
