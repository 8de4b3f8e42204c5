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
