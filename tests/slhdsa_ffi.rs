//! The SLH-DSA C ABI on a CPU context: key generation from a seed equals the Rust function,
//! deterministic signatures equal RustCrypto's `slh-dsa` crate (an independent
//! implementation), HashSLH-DSA round trips, the batch forms, and the contract's statuses for
//! bad calls (wrong lengths, NULLs, unknown identifiers, contexts over 255 bytes, wrong
//! signature lengths).

mod common;

use common::ffi::Ctx;
use pqgpu::ffi::*;
use pqgpu::slhdsa::{self, ParamSet};
use std::ptr::{null, null_mut};

const ALG: pqg_alg = PQG_SLH_DSA_SHA2_128F;
const P: ParamSet = ParamSet::Sha2_128f;

fn keys(ctx: &Ctx, seed: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut pk = vec![0u8; 32];
    let mut sk = vec![0u8; 64];
    // SAFETY: buffers of the documented lengths.
    let r = unsafe {
        pqg_slhdsa_keygen(
            ctx.0,
            ALG,
            seed.as_ptr(),
            pk.as_mut_ptr(),
            32,
            sk.as_mut_ptr(),
            64,
        )
    };
    assert_eq!(r, PQG_OK);
    (pk, sk)
}

#[test]
fn sizes_and_identifiers() {
    for (code, p) in (48..=59).zip(ParamSet::ALL) {
        assert_eq!(pqg_public_key_len(code), p.public_key_len());
        assert_eq!(pqg_secret_key_len(code), p.secret_key_len());
        assert_eq!(pqg_signature_len(code), p.signature_len());
    }
    assert_eq!(pqg_signature_len(PQG_SLH_DSA_SHAKE_256F), 49856);
    assert_eq!(pqg_signature_len(60), 0);
}

#[test]
fn keygen_sign_verify_match_the_independent_crate() {
    let ctx = Ctx::cpu();
    let seed: Vec<u8> = (0..48u8).collect();
    let (pk, sk) = keys(&ctx, &seed);
    let (mut pk2, mut sk2) = (vec![0u8; 32], vec![0u8; 64]);
    slhdsa::keygen_internal(P, &seed, &mut pk2, &mut sk2).unwrap();
    assert_eq!((&pk, &sk), (&pk2, &sk2));
    let theirs = slh_dsa::SigningKey::<slh_dsa::Sha2_128f>::slh_keygen_internal(
        &seed[..16],
        &seed[16..32],
        &seed[32..],
    );
    assert_eq!(theirs.to_bytes().as_slice(), &sk[..]);

    let (msg, c) = (b"firmware image".as_slice(), b"ctx".as_slice());
    let mut sig = vec![0u8; P.signature_len()];
    // Deterministic: rnd = PK.seed.
    // SAFETY: buffers of the documented lengths.
    let r = unsafe {
        pqg_slhdsa_sign(
            ctx.0,
            ALG,
            sk.as_ptr(),
            64,
            msg.as_ptr(),
            msg.len(),
            c.as_ptr(),
            c.len(),
            sk[32..].as_ptr(),
            sig.as_mut_ptr(),
            sig.len(),
        )
    };
    assert_eq!(r, PQG_OK);
    let want = theirs.try_sign_with_context(msg, c, None).unwrap();
    assert_eq!(want.to_bytes().as_slice(), &sig[..]);
    // SAFETY: as above.
    let verify = |sig: &[u8], c: &[u8]| unsafe {
        pqg_slhdsa_verify(
            ctx.0,
            ALG,
            pk.as_ptr(),
            32,
            msg.as_ptr(),
            msg.len(),
            c.as_ptr(),
            c.len(),
            sig.as_ptr(),
            sig.len(),
        )
    };
    assert_eq!(verify(&sig, c), PQG_OK);
    assert_eq!(verify(&sig, b"other"), PQG_ERR_VERIFY_FAILED);
    assert_eq!(
        verify(&sig[1..], c),
        PQG_ERR_VERIFY_FAILED,
        "short signature"
    );
    let mut bad = sig.clone();
    bad[100] ^= 1;
    assert_eq!(verify(&bad, c), PQG_ERR_VERIFY_FAILED);

    // Hedged signatures differ from each other and verify.
    let mut sig2 = vec![0u8; P.signature_len()];
    for s in [&mut sig, &mut sig2] {
        // SAFETY: as above.
        let r = unsafe {
            pqg_slhdsa_sign(
                ctx.0,
                ALG,
                sk.as_ptr(),
                64,
                msg.as_ptr(),
                msg.len(),
                c.as_ptr(),
                c.len(),
                null(),
                s.as_mut_ptr(),
                s.len(),
            )
        };
        assert_eq!(r, PQG_OK);
    }
    assert_ne!(sig, sig2);
    assert_eq!(verify(&sig, c), PQG_OK);
    assert_eq!(verify(&sig2, c), PQG_OK);

    // HashSLH-DSA with SHA2-256.
    let digest = [0x42u8; 32];
    // SAFETY: as above.
    let r = unsafe {
        pqg_hash_slhdsa_sign(
            ctx.0,
            ALG,
            2,
            sk.as_ptr(),
            64,
            digest.as_ptr(),
            32,
            c.as_ptr(),
            c.len(),
            null(),
            sig.as_mut_ptr(),
            sig.len(),
        )
    };
    assert_eq!(r, PQG_OK);
    // SAFETY: as above.
    let hv = |ph: pqg_hash, d: &[u8]| unsafe {
        pqg_hash_slhdsa_verify(
            ctx.0,
            ALG,
            ph,
            pk.as_ptr(),
            32,
            d.as_ptr(),
            d.len(),
            c.as_ptr(),
            c.len(),
            sig.as_ptr(),
            sig.len(),
        )
    };
    assert_eq!(hv(2, &digest), PQG_OK);
    assert_eq!(
        hv(8, &digest),
        PQG_ERR_VERIFY_FAILED,
        "SHA3-256 is another OID"
    );
    assert_eq!(hv(2, &digest[1..]), PQG_ERR_BAD_LENGTH);
    assert_eq!(hv(13, &digest), PQG_ERR_INVALID_ARGUMENT);
    assert_eq!(
        verify(&sig, c),
        PQG_ERR_VERIFY_FAILED,
        "a pre-hash signature is not pure"
    );
}

#[test]
fn bad_calls_get_the_contract_statuses() {
    let ctx = Ctx::cpu();
    let seed = [9u8; 48];
    let (pk, sk) = keys(&ctx, &seed);
    let mut sig = vec![0u8; P.signature_len()];
    let m = b"m";
    let long = [0u8; 256];
    // SAFETY: every pointer is valid for its length or NULL.
    unsafe {
        let (mut pk2, mut sk2) = (vec![0u8; 32], vec![0xAAu8; 64]);
        assert_eq!(
            pqg_slhdsa_keygen(
                ctx.0,
                47,
                null(),
                pk2.as_mut_ptr(),
                32,
                sk2.as_mut_ptr(),
                64
            ),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_slhdsa_keygen(
                ctx.0,
                PQG_ML_DSA_44,
                null(),
                pk2.as_mut_ptr(),
                32,
                sk2.as_mut_ptr(),
                64
            ),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_slhdsa_keygen(
                ctx.0,
                ALG,
                null(),
                pk2.as_mut_ptr(),
                31,
                sk2.as_mut_ptr(),
                64
            ),
            PQG_ERR_BAD_LENGTH
        );
        assert_eq!(
            pqg_slhdsa_keygen(ctx.0, ALG, null(), null_mut(), 32, sk2.as_mut_ptr(), 64),
            PQG_ERR_NULL_POINTER
        );
        assert_eq!(
            pqg_slhdsa_keygen(
                null_mut(),
                ALG,
                null(),
                pk2.as_mut_ptr(),
                32,
                sk2.as_mut_ptr(),
                64
            ),
            PQG_ERR_NULL_POINTER
        );
        assert!(
            sk2.iter().all(|&b| b == 0),
            "secret output zeroed on failure"
        );
        assert_eq!(
            pqg_slhdsa_keygen(
                ctx.0,
                ALG,
                null(),
                pk2.as_mut_ptr(),
                32,
                sk2.as_mut_ptr(),
                64
            ),
            PQG_OK
        );
        assert_ne!(pk2, pk, "fresh keys");

        let sign = |alg, sk: &[u8], ctx_ptr: *const u8, ctx_len, sig: &mut [u8]| {
            pqg_slhdsa_sign(
                ctx.0,
                alg,
                sk.as_ptr(),
                sk.len(),
                m.as_ptr(),
                1,
                ctx_ptr,
                ctx_len,
                null(),
                sig.as_mut_ptr(),
                sig.len(),
            )
        };
        assert_eq!(
            sign(ALG, &sk, long.as_ptr(), 256, &mut sig),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            sign(ALG, &sk, long.as_ptr(), usize::MAX, &mut sig),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(sign(60, &sk, null(), 0, &mut sig), PQG_ERR_INVALID_ARGUMENT);
        assert_eq!(sign(ALG, &sk[1..], null(), 0, &mut sig), PQG_ERR_BAD_LENGTH);
        assert_eq!(sign(ALG, &sk, null(), 0, &mut sig[1..]), PQG_ERR_BAD_LENGTH);
        assert_eq!(sign(ALG, &sk, null(), 5, &mut sig), PQG_ERR_NULL_POINTER);
        assert_eq!(
            pqg_slhdsa_sign(
                ctx.0,
                ALG,
                null(),
                64,
                m.as_ptr(),
                1,
                null(),
                0,
                null(),
                sig.as_mut_ptr(),
                sig.len()
            ),
            PQG_ERR_NULL_POINTER
        );
        assert_eq!(sign(ALG, &sk, long.as_ptr(), 255, &mut sig), PQG_OK);

        let verify = |pk: &[u8], ctx_len, sig: &[u8]| {
            pqg_slhdsa_verify(
                ctx.0,
                ALG,
                pk.as_ptr(),
                pk.len(),
                m.as_ptr(),
                1,
                long.as_ptr(),
                ctx_len,
                sig.as_ptr(),
                sig.len(),
            )
        };
        assert_eq!(verify(&pk, 255, &sig), PQG_OK);
        assert_eq!(verify(&pk, 256, &sig), PQG_ERR_INVALID_ARGUMENT);
        assert_eq!(
            verify(&pk, usize::MAX, &sig[..1]),
            PQG_ERR_INVALID_ARGUMENT,
            "context wins"
        );
        assert_eq!(verify(&pk[1..], 255, &sig), PQG_ERR_BAD_LENGTH);
        assert_eq!(verify(&pk, 255, &sig[..10]), PQG_ERR_VERIFY_FAILED);
        assert_eq!(
            pqg_slhdsa_verify(
                ctx.0,
                ALG,
                pk.as_ptr(),
                32,
                m.as_ptr(),
                1,
                null(),
                0,
                sig.as_ptr(),
                usize::MAX
            ),
            PQG_ERR_VERIFY_FAILED,
            "a wrong signature length fails whatever it is"
        );
    }
}

#[test]
fn batch_forms() {
    let ctx = Ctx::cpu();
    let n = 3;
    let seeds: Vec<u8> = (0..n * 48).map(|i| i as u8).collect();
    let (mut pks, mut sks) = (vec![0u8; n * 32], vec![0u8; n * 64]);
    let mut st = vec![PQG_ERR_PANIC; n];
    let mut job = null_mut();
    // SAFETY: buffers of the documented lengths, alive until the job is freed.
    unsafe {
        assert_eq!(
            pqg_slhdsa_keygen_submit(
                ctx.0,
                ALG,
                n,
                seeds.as_ptr(),
                pks.as_mut_ptr(),
                sks.as_mut_ptr(),
                st.as_mut_ptr(),
                &mut job
            ),
            PQG_OK
        );
        assert_eq!(pqg_job_wait(job, -1), PQG_OK);
        pqg_job_free(job);
    }
    assert!(st.iter().all(|&s| s == PQG_OK));
    for i in 0..n {
        let (mut pk, mut sk) = (vec![0u8; 32], vec![0u8; 64]);
        slhdsa::keygen_internal(P, &seeds[i * 48..(i + 1) * 48], &mut pk, &mut sk).unwrap();
        assert_eq!(
            (&pks[i * 32..(i + 1) * 32], &sks[i * 64..(i + 1) * 64]),
            (&pk[..], &sk[..])
        );
    }

    let msgs: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; 10 + i]).collect();
    let mut sigs = vec![vec![0u8; P.signature_len()]; n];
    let long = [0u8; 256];
    let reqs: Vec<pqg_sign_request> = (0..n)
        .map(|i| pqg_sign_request {
            sk: sks[i * 64..].as_ptr(),
            msg: msgs[i].as_ptr(),
            msg_len: msgs[i].len(),
            context: long.as_ptr(),
            context_len: if i == 1 { 256 } else { 3 },
            rnd: if i == 0 { sks[32..].as_ptr() } else { null() },
            sig: sigs[i].as_mut_ptr(),
        })
        .collect();
    let mut st = vec![PQG_ERR_PANIC; n];
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            pqg_slhdsa_sign_submit(ctx.0, ALG, reqs.as_ptr(), n, st.as_mut_ptr(), &mut job),
            PQG_OK
        );
        assert_eq!(pqg_job_wait(job, -1), PQG_OK);
        pqg_job_free(job);
    }
    assert_eq!(st, [PQG_OK, PQG_ERR_INVALID_ARGUMENT, PQG_OK]);
    let mut want = vec![0u8; P.signature_len()];
    let m = slhdsa::Message::Pure {
        ctx: &long[..3],
        msg: &msgs[0],
    };
    slhdsa::sign(P, &sks[..64], &m, Some(&sks[32..48]), &mut want).unwrap();
    assert_eq!(sigs[0], want, "deterministic item");

    let vreqs: Vec<pqg_verify_request> = (0..n)
        .map(|i| pqg_verify_request {
            pk: pks[(i % 2) * 64..].as_ptr(),
            msg: msgs[i].as_ptr(),
            msg_len: msgs[i].len(),
            context: long.as_ptr(),
            context_len: 3,
            sig: sigs[i].as_ptr(),
            sig_len: sigs[i].len(),
        })
        .collect();
    let mut st = vec![PQG_ERR_PANIC; n];
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            pqg_slhdsa_verify_submit(ctx.0, ALG, vreqs.as_ptr(), n, st.as_mut_ptr(), &mut job),
            PQG_OK
        );
        assert_eq!(pqg_job_wait(job, -1), PQG_OK);
        pqg_job_free(job);
    }
    // Item 0: its own key; item 1: never signed (zeroed buffer); item 2: key 0, not its signer.
    assert_eq!(st, [PQG_OK, PQG_ERR_VERIFY_FAILED, PQG_ERR_VERIFY_FAILED]);
    let m = slhdsa::Message::Pure {
        ctx: &long[..3],
        msg: &msgs[2],
    };
    assert_eq!(
        slhdsa::verify(P, &pks[64..96], &m, &sigs[2]),
        Ok(()),
        "item 2 under its own key"
    );
}

/// A key handle of `alg` from `bytes`, or the status `pqg_key_new` gave.
fn handle(alg: pqg_alg, kind: pqg_key_kind, bytes: &[u8]) -> Result<*mut pqg_key, pqg_status> {
    let mut k = null_mut();
    // SAFETY: bytes is readable for its length; k is writable.
    let r = unsafe { pqg_key_new(alg, kind, bytes.as_ptr(), bytes.len(), &mut k) };
    if r == PQG_OK {
        Ok(k)
    } else {
        assert!(k.is_null());
        Err(r)
    }
}

/// Waits for a job and frees it.
fn finish(job: *mut pqg_job) {
    assert!(!job.is_null());
    // SAFETY: a live job, freed once.
    unsafe {
        assert_eq!(pqg_job_wait(job, 60_000), PQG_OK);
        pqg_job_free(job);
    }
}

#[test]
fn key_handles_sign_and_verify_as_the_plain_functions() {
    let ctx = Ctx::cpu();
    for (alg, p) in [
        (PQG_SLH_DSA_SHA2_128F, ParamSet::Sha2_128f),
        (PQG_SLH_DSA_SHAKE_192F, ParamSet::Shake192f),
    ] {
        let n = p.n();
        let seed: Vec<u8> = (0..3 * n as u8).map(|i| i.wrapping_mul(7)).collect();
        let (mut pk, mut sk) = (vec![0u8; 2 * n], vec![0u8; 4 * n]);
        slhdsa::keygen_internal(p, &seed, &mut pk, &mut sk).unwrap();
        let skh = handle(alg, PQG_KEY_SECRET, &sk).unwrap();
        let pkh = handle(alg, PQG_KEY_PUBLIC, &pk).unwrap();
        // SAFETY: live handles.
        unsafe { assert_eq!((pqg_key_alg(skh), pqg_key_alg(pkh)), (alg, alg)) };
        let (msg, c) = (b"release 7.1".as_slice(), b"fw".as_slice());
        let rnd: Vec<u8> = (0..n as u8).map(|i| i ^ 0x5a).collect();
        let len = p.signature_len();
        let plain = |rnd: &[u8]| {
            let mut s = vec![0u8; len];
            let m = slhdsa::Message::Pure { ctx: c, msg };
            slhdsa::sign(p, &sk, &m, Some(rnd), &mut s).unwrap();
            s
        };
        // Deterministic (rnd = PK.seed) and given-rnd signatures equal the plain function's.
        for r in [&sk[2 * n..3 * n], &rnd[..]] {
            let mut sig = vec![0u8; len];
            // SAFETY: buffers of the documented lengths.
            let st = unsafe {
                pqg_slhdsa_sign_key(
                    ctx.0,
                    skh,
                    msg.as_ptr(),
                    msg.len(),
                    c.as_ptr(),
                    c.len(),
                    r.as_ptr(),
                    sig.as_mut_ptr(),
                    len,
                )
            };
            assert_eq!(st, PQG_OK);
            assert_eq!(sig, plain(r), "{}", p.name());
        }
        let want = plain(&rnd);
        // SAFETY: as above.
        let verify = |sig: &[u8], c: &[u8]| unsafe {
            pqg_slhdsa_verify_key(
                ctx.0,
                pkh,
                msg.as_ptr(),
                msg.len(),
                c.as_ptr(),
                c.len(),
                sig.as_ptr(),
                sig.len(),
            )
        };
        assert_eq!(verify(&want, c), PQG_OK);
        assert_eq!(verify(&want, b"fx"), PQG_ERR_VERIFY_FAILED);
        assert_eq!(verify(&want[..len - 1], c), PQG_ERR_VERIFY_FAILED);
        let mut bad = want.clone();
        bad[len - 1] ^= 0x80;
        assert_eq!(verify(&bad, c), PQG_ERR_VERIFY_FAILED);

        // The keyed batch form: rnd given, hedged, and a bad item among good ones.
        let long = [0u8; 256];
        let mut sigs = vec![vec![0u8; len]; 3];
        let reqs: Vec<pqg_key_sign_request> = sigs
            .iter_mut()
            .enumerate()
            .map(|(i, s)| pqg_key_sign_request {
                msg: msg.as_ptr(),
                msg_len: msg.len(),
                context: if i == 2 { long.as_ptr() } else { c.as_ptr() },
                context_len: if i == 2 { long.len() } else { c.len() },
                rnd: if i == 1 { null() } else { rnd.as_ptr() },
                sig: s.as_mut_ptr(),
            })
            .collect();
        let mut st = [PQG_PENDING; 3];
        let mut job = null_mut();
        // SAFETY: the buffers outlive the job (waited for below).
        let r = unsafe {
            pqg_slhdsa_sign_key_submit(ctx.0, skh, reqs.as_ptr(), 3, st.as_mut_ptr(), &mut job)
        };
        assert_eq!(r, PQG_OK);
        finish(job);
        assert_eq!(st, [PQG_OK, PQG_OK, PQG_ERR_INVALID_ARGUMENT]);
        assert_eq!(sigs[0], want);
        assert_ne!(sigs[1], want, "hedged");
        assert_eq!(verify(&sigs[1], c), PQG_OK);

        let vreqs: Vec<pqg_key_verify_request> = [&want, &bad, &sigs[1]]
            .iter()
            .map(|s| pqg_key_verify_request {
                msg: msg.as_ptr(),
                msg_len: msg.len(),
                context: c.as_ptr(),
                context_len: c.len(),
                sig: s.as_ptr(),
                sig_len: s.len(),
            })
            .collect();
        let mut st = [PQG_PENDING; 3];
        // SAFETY: as above.
        let r = unsafe {
            pqg_slhdsa_verify_key_submit(ctx.0, pkh, vreqs.as_ptr(), 3, st.as_mut_ptr(), &mut job)
        };
        assert_eq!(r, PQG_OK);
        finish(job);
        assert_eq!(st, [PQG_OK, PQG_ERR_VERIFY_FAILED, PQG_OK]);

        // The asynchronous single items.
        let (mut sig, mut s1, mut s2) = (vec![0u8; len], PQG_PENDING, PQG_PENDING);
        // SAFETY: as above.
        let r = unsafe {
            pqg_slhdsa_sign_async(
                ctx.0,
                skh,
                msg.as_ptr(),
                msg.len(),
                c.as_ptr(),
                c.len(),
                rnd.as_ptr(),
                sig.as_mut_ptr(),
                len,
                &mut s1,
                &mut job,
            )
        };
        assert_eq!(r, PQG_OK);
        finish(job);
        assert_eq!((s1, &sig), (PQG_OK, &want));
        // SAFETY: as above.
        let r = unsafe {
            pqg_slhdsa_verify_async(
                ctx.0,
                pkh,
                msg.as_ptr(),
                msg.len(),
                c.as_ptr(),
                c.len(),
                bad.as_ptr(),
                len,
                &mut s2,
                &mut job,
            )
        };
        assert_eq!(r, PQG_OK);
        finish(job);
        assert_eq!(s2, PQG_ERR_VERIFY_FAILED);
        // SAFETY: handles freed once.
        unsafe {
            pqg_key_free(skh);
            pqg_key_free(pkh);
        }
    }
}

#[test]
fn key_handle_calls_get_the_contract_statuses() {
    let ctx = Ctx::cpu();
    let seed: Vec<u8> = (100..148u8).collect();
    let (pk, sk) = keys(&ctx, &seed);
    // Lengths, kinds and keys pqg_key_new refuses.
    assert_eq!(
        handle(ALG, PQG_KEY_SECRET, &sk[1..]),
        Err(PQG_ERR_BAD_LENGTH)
    );
    assert_eq!(handle(ALG, PQG_KEY_PUBLIC, &sk), Err(PQG_ERR_BAD_LENGTH));
    assert_eq!(handle(ALG, 3, &pk), Err(PQG_ERR_INVALID_ARGUMENT));
    assert_eq!(
        handle(60, PQG_KEY_PUBLIC, &pk),
        Err(PQG_ERR_INVALID_ARGUMENT)
    );
    let mut wrong_root = sk.clone();
    wrong_root[63] ^= 1;
    assert_eq!(
        handle(ALG, PQG_KEY_SECRET, &wrong_root),
        Err(PQG_ERR_BAD_KEY)
    );
    let mut other_seed = sk.clone();
    other_seed[0] ^= 1;
    assert_eq!(
        handle(ALG, PQG_KEY_SECRET, &other_seed),
        Err(PQG_ERR_BAD_KEY)
    );
    // SAFETY: out is NULL: refused before anything is read.
    let r = unsafe { pqg_key_new(ALG, PQG_KEY_SECRET, sk.as_ptr(), 64, null_mut()) };
    assert_eq!(r, PQG_ERR_NULL_POINTER);

    let skh = handle(ALG, PQG_KEY_SECRET, &sk).unwrap();
    let pkh = handle(ALG, PQG_KEY_PUBLIC, &pk).unwrap();
    let mut mpk = vec![0u8; pqg_public_key_len(PQG_ML_DSA_44)];
    let mut msk = vec![0u8; pqg_secret_key_len(PQG_ML_DSA_44)];
    // SAFETY: buffers of the documented lengths.
    let r = unsafe {
        pqg_mldsa_keygen(
            ctx.0,
            PQG_ML_DSA_44,
            seed.as_ptr(),
            mpk.as_mut_ptr(),
            mpk.len(),
            msk.as_mut_ptr(),
            msk.len(),
        )
    };
    assert_eq!(r, PQG_OK);
    let mlh = handle(PQG_ML_DSA_44, PQG_KEY_SECRET, &msk).unwrap();

    let (msg, len) = (b"m".as_slice(), P.signature_len());
    let long = [0u8; 256];
    let mut sig = vec![0u8; len + 1];
    // SAFETY: every pointer is NULL or valid for its length.
    let sign = |ctx: *mut pqg_context,
                k: *const pqg_key,
                c: &[u8],
                rnd: *const u8,
                sig: *mut u8,
                sig_len| unsafe {
        pqg_slhdsa_sign_key(
            ctx,
            k,
            msg.as_ptr(),
            1,
            c.as_ptr(),
            c.len(),
            rnd,
            sig,
            sig_len,
        )
    };
    let out = sig.as_mut_ptr();
    assert_eq!(sign(ctx.0, skh, b"", null(), out, len), PQG_OK);
    assert_eq!(
        sign(null_mut(), skh, b"", null(), out, len),
        PQG_ERR_NULL_POINTER
    );
    assert_eq!(
        sign(ctx.0, null(), b"", null(), out, len),
        PQG_ERR_NULL_POINTER
    );
    assert_eq!(
        sign(ctx.0, skh, b"", null(), null_mut(), len),
        PQG_ERR_NULL_POINTER
    );
    assert_eq!(
        sign(ctx.0, pkh, b"", null(), out, len),
        PQG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        sign(ctx.0, mlh, b"", null(), out, len),
        PQG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        sign(ctx.0, skh, &long, null(), out, len),
        PQG_ERR_INVALID_ARGUMENT
    );
    sig.fill(0xAB);
    assert_eq!(
        sign(ctx.0, skh, b"", null(), out, len + 1),
        PQG_ERR_BAD_LENGTH
    );
    assert_eq!(
        sign(ctx.0, skh, b"", null(), out, len - 1),
        PQG_ERR_BAD_LENGTH
    );
    assert!(
        sig.iter().all(|&b| b == 0xAB),
        "a rejected length is not written"
    );
    // An ML-DSA call with an SLH-DSA handle is the wrong family.
    // SAFETY: as above.
    let r = unsafe { pqg_mldsa_sign_key(ctx.0, skh, msg.as_ptr(), 1, null(), 0, null(), out, len) };
    assert_eq!(r, PQG_ERR_INVALID_ARGUMENT);

    // SAFETY: as above.
    let verify = |k: *const pqg_key, c: &[u8], s: *const u8, l| unsafe {
        pqg_slhdsa_verify_key(ctx.0, k, msg.as_ptr(), 1, c.as_ptr(), c.len(), s, l)
    };
    assert_eq!(verify(pkh, b"", sig.as_ptr(), len), PQG_ERR_VERIFY_FAILED);
    assert_eq!(
        verify(skh, b"", sig.as_ptr(), len),
        PQG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        verify(pkh, &long, sig.as_ptr(), len),
        PQG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(verify(pkh, b"", null(), len), PQG_ERR_NULL_POINTER);
    assert_eq!(verify(pkh, b"", sig.as_ptr(), 3), PQG_ERR_VERIFY_FAILED);

    // Submits and async calls: the call's own errors, and no job.
    let mut job = null_mut();
    let mut st = PQG_PENDING;
    // SAFETY: as above.
    unsafe {
        let r = pqg_slhdsa_sign_key_submit(ctx.0, pkh, null(), 0, null_mut(), &mut job);
        assert_eq!((r, job.is_null()), (PQG_ERR_INVALID_ARGUMENT, true));
        let r = pqg_slhdsa_verify_key_submit(ctx.0, pkh, null(), 1, &mut st, &mut job);
        assert_eq!((r, job.is_null()), (PQG_ERR_NULL_POINTER, true));
        let r = pqg_slhdsa_sign_async(
            ctx.0,
            skh,
            msg.as_ptr(),
            1,
            null(),
            0,
            null(),
            out,
            len - 1,
            &mut st,
            &mut job,
        );
        assert_eq!((r, job.is_null()), (PQG_ERR_BAD_LENGTH, true));
        let r = pqg_slhdsa_sign_async(
            ctx.0,
            mlh,
            msg.as_ptr(),
            1,
            null(),
            0,
            null(),
            out,
            len,
            &mut st,
            &mut job,
        );
        assert_eq!((r, job.is_null()), (PQG_ERR_INVALID_ARGUMENT, true));
        let r = pqg_slhdsa_verify_async(
            ctx.0,
            pkh,
            msg.as_ptr(),
            1,
            long.as_ptr(),
            256,
            out,
            len,
            &mut st,
            &mut job,
        );
        assert_eq!((r, job.is_null()), (PQG_ERR_INVALID_ARGUMENT, true));
        let r = pqg_slhdsa_verify_async(
            ctx.0,
            pkh,
            msg.as_ptr(),
            1,
            null(),
            0,
            out,
            len,
            null_mut(),
            &mut job,
        );
        assert_eq!((r, job.is_null()), (PQG_ERR_NULL_POINTER, true));
        // n = 0 is a valid empty job.
        let r = pqg_slhdsa_verify_key_submit(ctx.0, pkh, null(), 0, null_mut(), &mut job);
        assert_eq!(r, PQG_OK);
        finish(job);
        pqg_key_free(skh);
        pqg_key_free(pkh);
        pqg_key_free(mlh);
    }
}
