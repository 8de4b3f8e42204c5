//! ML-KEM through the C ABI (contract section "ML-KEM (v0.2)"): identifiers and lengths, the
//! seeded forms against `pqgpu::mlkem` (itself checked against NIST ACVP and RustCrypto's
//! ml-kem), FIPS 203's key checks as `PQG_ERR_BAD_KEY` with nothing written where the contract
//! says, implicit rejection, batches with good and bad items, key handles, and the serving
//! forms (`_key`, `_key_submit`, `_async`).

mod common;

use common::ffi::Ctx;
use pqgpu::ffi::*;
use pqgpu::mlkem::{self, ParamSet};
use std::ptr::{null, null_mut};

const CANARY: u8 = 0xA5;
const SETS: [(pqg_alg, ParamSet); 3] = [
    (PQG_ML_KEM_512, ParamSet::MlKem512),
    (PQG_ML_KEM_768, ParamSet::MlKem768),
    (PQG_ML_KEM_1024, ParamSet::MlKem1024),
];

/// The reference key pair for (d, z) = ([s; 32], [s + 1; 32]).
fn reference_keys(p: ParamSet, s: u8) -> ([u8; 64], Vec<u8>, Vec<u8>) {
    let mut seed = [s; 64];
    seed[32..].fill(s.wrapping_add(1));
    let (mut ek, mut dk) = (vec![0u8; p.encaps_key_len()], vec![0u8; p.decaps_key_len()]);
    mlkem::keygen_internal(
        p,
        &[s; 32],
        &seed[32..].try_into().unwrap(),
        &mut ek,
        &mut dk,
    )
    .unwrap();
    (seed, ek, dk)
}

/// `ek` with its first coefficient set to q = 3329: fails the modulus check only.
fn bad_ek(ek: &[u8]) -> Vec<u8> {
    let mut b = ek.to_vec();
    b[0] = (3329u16 & 0xFF) as u8;
    b[1] = (b[1] & 0xF0) | (3329u16 >> 8) as u8;
    b
}

/// `dk` with one bit of its stored H(ek) flipped: fails the hash check only.
fn bad_dk(p: ParamSet, dk: &[u8]) -> Vec<u8> {
    let mut b = dk.to_vec();
    b[768 * p.k() + 32 + 5] ^= 0x40;
    b
}

fn encaps(
    ctx: &Ctx,
    alg: pqg_alg,
    ek: &[u8],
    m: Option<&[u8; 32]>,
    ct: &mut [u8],
    ss: &mut [u8],
) -> pqg_status {
    // SAFETY: buffers of the lengths passed.
    unsafe {
        pqg_kem_encaps(
            ctx.0,
            alg,
            ek.as_ptr(),
            ek.len(),
            m.map_or(null(), |m| m.as_ptr()),
            ct.as_mut_ptr(),
            ct.len(),
            ss.as_mut_ptr(),
            ss.len(),
        )
    }
}

fn decaps(ctx: &Ctx, alg: pqg_alg, dk: &[u8], ct: &[u8], ss: &mut [u8]) -> pqg_status {
    // SAFETY: buffers of the lengths passed.
    unsafe {
        pqg_kem_decaps(
            ctx.0,
            alg,
            dk.as_ptr(),
            dk.len(),
            ct.as_ptr(),
            ct.len(),
            ss.as_mut_ptr(),
            ss.len(),
        )
    }
}

fn finish(job: *mut pqg_job) {
    // SAFETY: a job from a successful submit, freed once.
    unsafe {
        assert_eq!(pqg_job_wait(job, -1), PQG_OK);
        pqg_job_free(job);
    }
}

#[test]
fn identifiers_and_lengths() {
    let want = [
        (32, 800, 1632, 768),
        (33, 1184, 2400, 1088),
        (34, 1568, 3168, 1568),
    ];
    for (alg, ek, dk, ct) in want {
        assert_eq!(pqg_public_key_len(alg), ek);
        assert_eq!(pqg_secret_key_len(alg), dk);
        assert_eq!(pqg_ciphertext_len(alg), ct);
        assert_eq!(pqg_shared_secret_len(alg), 32);
        assert_eq!(pqg_signature_len(alg), 0);
    }
    assert_eq!(
        (PQG_ML_KEM_512, PQG_ML_KEM_768, PQG_ML_KEM_1024),
        (32, 33, 34)
    );
    for unknown in [31, 35] {
        assert_eq!(pqg_public_key_len(unknown), 0);
        let ctx = Ctx::cpu();
        let (mut ct, mut ss) = ([0u8; 1088], [CANARY; 32]);
        assert_eq!(
            encaps(&ctx, unknown, &[0; 1184], None, &mut ct, &mut ss),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            ss, [CANARY; 32],
            "unknown alg: no length to hold ss to, nothing written"
        );
    }
}

#[test]
fn seeded_calls_match_the_rust_api_and_round_trip() {
    let ctx = Ctx::cpu();
    for (alg, p) in SETS {
        let (seed, rek, rdk) = reference_keys(p, 7);
        let (mut ek, mut dk) = (vec![0u8; rek.len()], vec![0u8; rdk.len()]);
        // SAFETY: buffers of the lengths passed.
        let st = unsafe {
            pqg_kem_keygen(
                ctx.0,
                alg,
                seed.as_ptr(),
                ek.as_mut_ptr(),
                ek.len(),
                dk.as_mut_ptr(),
                dk.len(),
            )
        };
        assert_eq!(st, PQG_OK);
        assert_eq!((&ek, &dk), (&rek, &rdk), "{}", p.name());
        let m = [9u8; 32];
        let (mut ct, mut ss) = (vec![0u8; p.ciphertext_len()], [0u8; 32]);
        assert_eq!(encaps(&ctx, alg, &ek, Some(&m), &mut ct, &mut ss), PQG_OK);
        let (mut rct, mut rss) = (vec![0u8; ct.len()], [0u8; 32]);
        mlkem::encaps_internal(p, &ek, &m, &mut rct, &mut rss).unwrap();
        assert_eq!((&ct, ss), (&rct, rss));
        let mut out = [0u8; 32];
        assert_eq!(decaps(&ctx, alg, &dk, &ct, &mut out), PQG_OK);
        assert_eq!(out, ss);
        // Implicit rejection: PQG_OK and K-bar, as the Rust API gives it.
        ct[17] ^= 2;
        assert_eq!(decaps(&ctx, alg, &dk, &ct, &mut out), PQG_OK);
        let mut kbar = [0u8; 32];
        mlkem::decaps(p, &dk, &ct, &mut kbar).unwrap();
        assert_eq!(out, kbar);
        assert_ne!(out, ss);
        // Fresh randomness (NULL seed and coins).
        // SAFETY: as above.
        let st = unsafe {
            pqg_kem_keygen(
                ctx.0,
                alg,
                null(),
                ek.as_mut_ptr(),
                ek.len(),
                dk.as_mut_ptr(),
                dk.len(),
            )
        };
        assert_eq!(st, PQG_OK);
        assert_ne!(ek, rek);
        assert_eq!(encaps(&ctx, alg, &ek, None, &mut ct, &mut ss), PQG_OK);
        assert_eq!(decaps(&ctx, alg, &dk, &ct, &mut out), PQG_OK);
        assert_eq!(out, ss);
    }
}

#[test]
fn bad_keys_lengths_and_nulls() {
    let ctx = Ctx::cpu();
    for (alg, p) in SETS {
        let (_, ek, dk) = reference_keys(p, 3);
        let mut ct = vec![CANARY; p.ciphertext_len()];
        let mut ss = [CANARY; 32];
        // Modulus check: BAD_KEY, ct untouched, ss zeroed.
        assert_eq!(
            encaps(&ctx, alg, &bad_ek(&ek), None, &mut ct, &mut ss),
            PQG_ERR_BAD_KEY
        );
        assert!(ct.iter().all(|&b| b == CANARY) && ss == [0; 32]);
        // Hash check: BAD_KEY, ss zeroed.
        ss = [CANARY; 32];
        assert_eq!(
            decaps(&ctx, alg, &bad_dk(p, &dk), &ct, &mut ss),
            PQG_ERR_BAD_KEY
        );
        assert_eq!(ss, [0; 32]);
        // Lengths.
        ss = [CANARY; 32];
        assert_eq!(
            encaps(&ctx, alg, &ek[1..], None, &mut ct, &mut ss),
            PQG_ERR_BAD_LENGTH
        );
        assert!(ct.iter().all(|&b| b == CANARY) && ss == [0; 32]);
        assert_eq!(
            decaps(&ctx, alg, &dk, &ct[1..], &mut ss),
            PQG_ERR_BAD_LENGTH
        );
        assert_eq!(
            decaps(&ctx, alg, &dk[..dk.len() - 1], &ct, &mut ss),
            PQG_ERR_BAD_LENGTH
        );
        ss = [CANARY; 32];
        assert_eq!(
            encaps(&ctx, alg, &ek, None, &mut ct, &mut ss[..31]),
            PQG_ERR_BAD_LENGTH
        );
        assert_eq!(ss, [CANARY; 32], "a rejected ss length is not written");
        // NULLs.
        // SAFETY: NULL inputs with valid outputs.
        let st = unsafe {
            pqg_kem_encaps(
                ctx.0,
                alg,
                null(),
                ek.len(),
                null(),
                ct.as_mut_ptr(),
                ct.len(),
                ss.as_mut_ptr(),
                32,
            )
        };
        assert_eq!(st, PQG_ERR_NULL_POINTER);
        // SAFETY: as above.
        let st = unsafe {
            pqg_kem_decaps(
                ctx.0,
                alg,
                dk.as_ptr(),
                dk.len(),
                null(),
                ct.len(),
                ss.as_mut_ptr(),
                32,
            )
        };
        assert_eq!(st, PQG_ERR_NULL_POINTER);
        // A seed is 64 bytes; keygen with a wrong sk length writes nothing to sk.
        let (mut e2, mut d2) = (vec![CANARY; ek.len()], vec![CANARY; dk.len() + 1]);
        // SAFETY: buffers of the lengths passed.
        let st = unsafe {
            pqg_kem_keygen(
                ctx.0,
                alg,
                null(),
                e2.as_mut_ptr(),
                e2.len(),
                d2.as_mut_ptr(),
                d2.len(),
            )
        };
        assert_eq!(st, PQG_ERR_BAD_LENGTH);
        assert!(e2.iter().chain(&d2).all(|&b| b == CANARY));
    }
}

#[test]
fn batches_with_good_and_bad_items() {
    let ctx = Ctx::cpu();
    for (alg, p) in SETS {
        let n = 3;
        let (el, dl, cl) = (p.encaps_key_len(), p.decaps_key_len(), p.ciphertext_len());
        let mut seeds = Vec::new();
        for i in 0..n {
            seeds.extend_from_slice(&reference_keys(p, 20 + i as u8).0);
        }
        let (mut eks, mut dks) = (vec![0u8; n * el], vec![0u8; n * dl]);
        let (mut st, mut job) = (vec![PQG_PENDING; n], null_mut());
        // SAFETY: arrays of n rows.
        let r = unsafe {
            pqg_kem_keygen_submit(
                ctx.0,
                alg,
                n,
                seeds.as_ptr(),
                eks.as_mut_ptr(),
                dks.as_mut_ptr(),
                st.as_mut_ptr(),
                &mut job,
            )
        };
        assert_eq!(r, PQG_OK);
        finish(job);
        assert_eq!(st, vec![PQG_OK; n]);
        for i in 0..n {
            let (_, ek, dk) = reference_keys(p, 20 + i as u8);
            assert_eq!(&eks[i * el..][..el], &ek[..]);
            assert_eq!(&dks[i * dl..][..dl], &dk[..]);
        }

        // Encapsulations: to key 0 with coins, to key 1 fresh, to a bad ek, a NULL ct.
        let ek0 = &eks[..el];
        let bad = bad_ek(ek0);
        let m = [4u8; 32];
        let mut cts = vec![vec![CANARY; cl]; 4];
        let mut sss = [[CANARY; 32]; 4];
        let keys = [ek0.as_ptr(), eks[el..].as_ptr(), bad.as_ptr(), ek0.as_ptr()];
        let mut reqs: Vec<pqg_encaps_request> = (0..4)
            .map(|i| pqg_encaps_request {
                pk: keys[i],
                coins: if i == 0 { m.as_ptr() } else { null() },
                ct: cts[i].as_mut_ptr(),
                ss: sss[i].as_mut_ptr(),
            })
            .collect();
        reqs[3].ct = null_mut();
        let mut st = vec![PQG_PENDING; 4];
        // SAFETY: requests whose buffers outlive the job.
        let r = unsafe {
            pqg_kem_encaps_submit(ctx.0, alg, reqs.as_ptr(), 4, st.as_mut_ptr(), &mut job)
        };
        assert_eq!(r, PQG_OK);
        finish(job);
        assert_eq!(
            st,
            vec![PQG_OK, PQG_OK, PQG_ERR_BAD_KEY, PQG_ERR_NULL_POINTER]
        );
        let (mut rct, mut rss) = (vec![0u8; cl], [0u8; 32]);
        mlkem::encaps_internal(p, ek0, &m, &mut rct, &mut rss).unwrap();
        assert_eq!((&cts[0], sss[0]), (&rct, rss));
        assert!(cts[2].iter().all(|&b| b == CANARY) && sss[2] == [0; 32]);
        assert_eq!(sss[3], [0; 32]);

        // Decapsulations: good, tampered (K-bar), bad dk, NULL dk.
        let dk0 = &dks[..dl];
        let bad_d = bad_dk(p, dk0);
        let mut tampered = cts[0].clone();
        tampered[0] ^= 1;
        let mut out = [[CANARY; 32]; 4];
        let dreqs = [
            (dk0.as_ptr(), cts[0].as_ptr()),
            (dk0.as_ptr(), tampered.as_ptr()),
            (bad_d.as_ptr(), cts[0].as_ptr()),
            (null(), cts[0].as_ptr()),
        ];
        let dreqs: Vec<pqg_decaps_request> = dreqs
            .iter()
            .zip(out.iter_mut())
            .map(|(&(sk, ct), o)| pqg_decaps_request {
                sk,
                ct,
                ss: o.as_mut_ptr(),
            })
            .collect();
        let mut st = vec![PQG_PENDING; 4];
        // SAFETY: as above.
        let r = unsafe {
            pqg_kem_decaps_submit(ctx.0, alg, dreqs.as_ptr(), 4, st.as_mut_ptr(), &mut job)
        };
        assert_eq!(r, PQG_OK);
        finish(job);
        assert_eq!(
            st,
            vec![PQG_OK, PQG_OK, PQG_ERR_BAD_KEY, PQG_ERR_NULL_POINTER]
        );
        assert_eq!(out[0], rss);
        let mut kbar = [0u8; 32];
        mlkem::decaps(p, dk0, &tampered, &mut kbar).unwrap();
        assert_eq!(out[1], kbar);
        assert_eq!((out[2], out[3]), ([0; 32], [0; 32]));
    }
}

fn key_new(alg: pqg_alg, kind: pqg_key_kind, bytes: &[u8]) -> Result<*mut pqg_key, pqg_status> {
    let mut k = std::ptr::dangling_mut::<pqg_key>();
    // SAFETY: valid pointers.
    match unsafe { pqg_key_new(alg, kind, bytes.as_ptr(), bytes.len(), &mut k) } {
        PQG_OK => Ok(k),
        st => {
            assert!(k.is_null(), "a failed pqg_key_new leaves NULL");
            Err(st)
        }
    }
}

#[test]
fn key_handles_and_serving_forms() {
    let ctx = Ctx::cpu();
    for (alg, p) in SETS {
        let (_, ek, dk) = reference_keys(p, 11);
        // The checks run once, at pqg_key_new.
        assert_eq!(
            key_new(alg, PQG_KEY_PUBLIC, &bad_ek(&ek)),
            Err(PQG_ERR_BAD_KEY)
        );
        assert_eq!(
            key_new(alg, PQG_KEY_SECRET, &bad_dk(p, &dk)),
            Err(PQG_ERR_BAD_KEY)
        );
        assert_eq!(
            key_new(alg, PQG_KEY_PUBLIC, &ek[1..]),
            Err(PQG_ERR_BAD_LENGTH)
        );
        assert_eq!(key_new(alg, 9, &ek), Err(PQG_ERR_INVALID_ARGUMENT));
        let pk = key_new(alg, PQG_KEY_PUBLIC, &ek).unwrap();
        let sk = key_new(alg, PQG_KEY_SECRET, &dk).unwrap();
        // SAFETY: live handles.
        unsafe {
            assert_eq!(pqg_key_alg(pk), alg);
        }
        let cl = p.ciphertext_len();
        let m = [6u8; 32];
        let (mut rct, mut rss) = (vec![0u8; cl], [0u8; 32]);
        mlkem::encaps_internal(p, &ek, &m, &mut rct, &mut rss).unwrap();

        // Blocking calls with handles.
        let (mut ct, mut ss) = (vec![0u8; cl], [0u8; 32]);
        // SAFETY: buffers of the lengths passed; live handles.
        unsafe {
            assert_eq!(
                pqg_kem_encaps_key(
                    ctx.0,
                    pk,
                    m.as_ptr(),
                    ct.as_mut_ptr(),
                    cl,
                    ss.as_mut_ptr(),
                    32
                ),
                PQG_OK
            );
            assert_eq!((&ct, ss), (&rct, rss));
            let mut out = [0u8; 32];
            assert_eq!(
                pqg_kem_decaps_key(ctx.0, sk, ct.as_ptr(), cl, out.as_mut_ptr(), 32),
                PQG_OK
            );
            assert_eq!(out, rss);
            // Wrong kind of handle for the operation.
            assert_eq!(
                pqg_kem_decaps_key(ctx.0, pk, ct.as_ptr(), cl, out.as_mut_ptr(), 32),
                PQG_ERR_INVALID_ARGUMENT
            );
            assert_eq!(out, [0; 32]);
        }

        // Key-handle batches: one good and one tampered ciphertext.
        let mut tampered = rct.clone();
        tampered[cl - 1] ^= 0x80;
        let mut outs = [[CANARY; 32]; 2];
        let reqs = [
            pqg_key_decaps_request {
                ct: rct.as_ptr(),
                ss: outs[0].as_mut_ptr(),
            },
            pqg_key_decaps_request {
                ct: tampered.as_ptr(),
                ss: outs[1].as_mut_ptr(),
            },
        ];
        let (mut st, mut job) = ([PQG_PENDING; 2], null_mut());
        // SAFETY: buffers outlive the job.
        let r = unsafe {
            pqg_kem_decaps_key_submit(ctx.0, sk, reqs.as_ptr(), 2, st.as_mut_ptr(), &mut job)
        };
        assert_eq!(r, PQG_OK);
        finish(job);
        assert_eq!(st, [PQG_OK; 2]);
        let mut kbar = [0u8; 32];
        mlkem::decaps(p, &dk, &tampered, &mut kbar).unwrap();
        assert_eq!(outs, [rss, kbar]);

        let (mut ct2, mut ss2) = (vec![0u8; cl], [0u8; 32]);
        let ereq = [pqg_key_encaps_request {
            coins: m.as_ptr(),
            ct: ct2.as_mut_ptr(),
            ss: ss2.as_mut_ptr(),
        }];
        let mut st1 = [PQG_PENDING];
        // SAFETY: as above.
        let r = unsafe {
            pqg_kem_encaps_key_submit(ctx.0, pk, ereq.as_ptr(), 1, st1.as_mut_ptr(), &mut job)
        };
        assert_eq!(r, PQG_OK);
        finish(job);
        assert_eq!(st1, [PQG_OK]);
        assert_eq!((&ct2, ss2), (&rct, rss));

        // The single-item async forms.
        let (mut ct3, mut ss3, mut out3) = (vec![0u8; cl], [0u8; 32], [0u8; 32]);
        let mut s = PQG_PENDING;
        // SAFETY: as above.
        unsafe {
            let r = pqg_kem_encaps_async(
                ctx.0,
                pk,
                m.as_ptr(),
                ct3.as_mut_ptr(),
                cl,
                ss3.as_mut_ptr(),
                32,
                &mut s,
                &mut job,
            );
            assert_eq!(r, PQG_OK);
            finish(job);
            assert_eq!(s, PQG_OK);
            let r = pqg_kem_decaps_async(
                ctx.0,
                sk,
                ct3.as_ptr(),
                cl,
                out3.as_mut_ptr(),
                32,
                &mut s,
                &mut job,
            );
            assert_eq!(r, PQG_OK);
            finish(job);
            assert_eq!(s, PQG_OK);
        }
        assert_eq!((&ct3, ss3, out3), (&rct, rss, rss));
        // SAFETY: handles freed once.
        unsafe {
            pqg_key_free(pk);
            pqg_key_free(sk);
        }
    }
}
