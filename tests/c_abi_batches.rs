//! Batches through the C ABI, the way a C server drives them: outputs land in the caller's own
//! rows (registered with `pqg_host_register` or plain heap memory), each equal to the result of
//! a one-at-a-time call on a CPU context; a failing item touches only its own rows; a rejected
//! submit writes nothing; outputs are complete when `pqg_job_poll` first says `PQG_OK`.
//!
//! The CPU leg runs everywhere (small batches). The GPU leg runs `PQGPU_GPU_CASES` items per
//! parameter set (default 20,000) in both memory kinds, and prints `SKIPPED` without a GPU.

mod common;

use common::ffi::Ctx;
use common::random;
use pqgpu::ffi::*;
use pqgpu::{ctru, mldsa, Alg};
use rayon::prelude::*;
use std::ptr::{null, null_mut};

const CANARY: u8 = 0xC5;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Memory {
    Registered,
    Pageable,
}

/// Registers `bufs` for the life of the guard (Memory::Registered only).
struct Pinned<'a>(&'a Ctx, Vec<*const u8>);

impl<'a> Pinned<'a> {
    fn new(ctx: &'a Ctx, mem: Memory, bufs: &[&[u8]]) -> Pinned<'a> {
        let mut ptrs = Vec::new();
        if mem == Memory::Registered {
            for b in bufs {
                // SAFETY: live buffers that stay in place while the guard lives.
                let st = unsafe { pqg_host_register(ctx.0, b.as_ptr(), b.len()) };
                assert_eq!(st, PQG_OK, "pqg_host_register");
                ptrs.push(b.as_ptr());
            }
        }
        Pinned(ctx, ptrs)
    }
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        for &p in &self.1 {
            // SAFETY: registered on this live context.
            assert_eq!(unsafe { pqg_host_unregister(self.0 .0, p) }, PQG_OK);
        }
    }
}

/// Request arrays (raw pointers into the test's own buffers) read from the checking threads.
struct Shared<'a, T>(&'a [T]);
// SAFETY: the pointers in the requests are only read, and the buffers outlive the checks.
unsafe impl<T> Sync for Shared<'_, T> {}

impl<T> Shared<'_, T> {
    fn get(&self, i: usize) -> &T {
        &self.0[i]
    }
}

/// Polls until the job completes (never waiting or freeing first), then frees it: the caller
/// reads its outputs right after the first `PQG_OK`.
fn poll_then_free(job: *mut pqg_job) {
    // SAFETY: a live job from a successful submit, freed once.
    unsafe {
        while pqg_job_poll(job) == PQG_PENDING {
            std::thread::yield_now();
        }
        pqg_job_free(job);
    }
}

/// One ML-DSA set: keygen from seeds, signing with per-item keys / rnd / messages / contexts,
/// verification of good and tampered signatures, each row against one-at-a-time CPU calls.
fn mldsa_rows(ctx: &Ctx, cpu: &Ctx, p: mldsa::ParamSet, n: usize, mem: Memory) {
    let alg = Alg::MlDsa(p).code();
    let (pkl, skl, sgl) = (p.public_key_len(), p.secret_key_len(), p.signature_len());
    let seeds = random(32 * n);
    let mut pks = vec![CANARY; n * pkl];
    let mut sks = vec![CANARY; n * skl];
    let msgs = random(64 * n);
    let rnds = random(32 * n);
    let mut sigs = vec![CANARY; n * sgl];
    let _pin = Pinned::new(ctx, mem, &[&pks, &sks, &sigs, &msgs]);

    let mut st = vec![PQG_PENDING; n];
    let mut job = null_mut();
    // SAFETY: arrays of n rows that outlive the job.
    let r = unsafe {
        pqg_mldsa_keygen_submit(
            ctx.0,
            alg,
            n,
            seeds.as_ptr(),
            pks.as_mut_ptr(),
            sks.as_mut_ptr(),
            st.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(r, PQG_OK);
    poll_then_free(job);
    assert!(
        st.iter().all(|&s| s == PQG_OK),
        "{}: keygen statuses",
        p.name()
    );
    (0..n).into_par_iter().for_each(|i| {
        let (mut pk, mut sk) = (vec![0u8; pkl], vec![0u8; skl]);
        // SAFETY: buffers of the stated lengths.
        let r = unsafe {
            pqg_mldsa_keygen(
                cpu.0,
                alg,
                seeds[32 * i..].as_ptr(),
                pk.as_mut_ptr(),
                pkl,
                sk.as_mut_ptr(),
                skl,
            )
        };
        assert_eq!(r, PQG_OK);
        assert!(
            pk == pks[i * pkl..][..pkl] && sk == sks[i * skl..][..skl],
            "{}: keygen row {i}",
            p.name()
        );
    });

    // Signing: item i uses key i % 97, a message of i % 64 bytes, a context of i % 7 bytes and
    // its own rnd; item 3 gets a malformed key and item 5 a NULL signature pointer.
    let mut bad_sk = sks[..skl].to_vec();
    bad_sk[128] = 0xff; // s1 (after rho, K and tr): coefficients out of range in every set
    let key = |i: usize| {
        if i == 3 {
            bad_sk.as_ptr()
        } else {
            sks[(i % 97 % n) * skl..].as_ptr()
        }
    };
    let sig_base = sigs.as_mut_ptr();
    let reqs: Vec<pqg_sign_request> = (0..n)
        .map(|i| pqg_sign_request {
            sk: key(i),
            msg: msgs[64 * i..].as_ptr(),
            msg_len: i % 64,
            context: msgs[64 * i + 1..].as_ptr(),
            context_len: i % 7,
            rnd: rnds[32 * i..].as_ptr(),
            sig: if i == 5 {
                null_mut()
            } else {
                sig_base.wrapping_add(i * sgl)
            },
        })
        .collect();
    st.fill(PQG_PENDING);
    // SAFETY: every request points into live arrays.
    let r =
        unsafe { pqg_mldsa_sign_submit(ctx.0, alg, reqs.as_ptr(), n, st.as_mut_ptr(), &mut job) };
    assert_eq!(r, PQG_OK);
    poll_then_free(job);
    let shared = Shared(&reqs);
    (0..n).into_par_iter().for_each(|i| {
        let row = &sigs[i * sgl..][..sgl];
        match i {
            3 => {
                assert_eq!(st[i], PQG_ERR_BAD_KEY, "{}: bad key", p.name());
                assert!(
                    row.iter().all(|&b| b == CANARY || b == 0),
                    "failed row holds no signature"
                );
            }
            5 => assert_eq!(st[i], PQG_ERR_NULL_POINTER),
            _ => {
                let mut want = vec![0u8; sgl];
                let r = &shared.get(i);
                // SAFETY: the request's buffers, with their lengths.
                let s = unsafe {
                    pqg_mldsa_sign(
                        cpu.0,
                        alg,
                        r.sk,
                        skl,
                        r.msg,
                        r.msg_len,
                        r.context,
                        r.context_len,
                        r.rnd,
                        want.as_mut_ptr(),
                        sgl,
                    )
                };
                assert_eq!((st[i], s), (PQG_OK, PQG_OK), "{}: sign item {i}", p.name());
                assert!(
                    row == want,
                    "{}: signature row {i} differs from the single call",
                    p.name()
                );
            }
        }
    });
    assert!(
        sigs[5 * sgl..6 * sgl].iter().all(|&b| b == CANARY),
        "item 5's row untouched"
    );

    // Verification: every third signature tampered, item 4 a wrong length.
    let mut vsigs = sigs.clone();
    for i in (0..n).step_by(3) {
        vsigs[i * sgl + 7] ^= 1;
    }
    let vreqs: Vec<pqg_verify_request> = (0..n)
        .map(|i| pqg_verify_request {
            pk: pks[(i % 97 % n) * pkl..].as_ptr(),
            msg: reqs[i].msg,
            msg_len: reqs[i].msg_len,
            context: reqs[i].context,
            context_len: reqs[i].context_len,
            sig: vsigs[i * sgl..].as_ptr(),
            sig_len: if i == 4 { sgl - 1 } else { sgl },
        })
        .collect();
    st.fill(PQG_PENDING);
    // SAFETY: every request points into live arrays.
    let r = unsafe {
        pqg_mldsa_verify_submit(ctx.0, alg, vreqs.as_ptr(), n, st.as_mut_ptr(), &mut job)
    };
    assert_eq!(r, PQG_OK);
    poll_then_free(job);
    let shared = Shared(&vreqs);
    (0..n).into_par_iter().for_each(|i| {
        let v = &shared.get(i);
        // SAFETY: the request's buffers, with their lengths.
        let want = unsafe {
            pqg_mldsa_verify(
                cpu.0,
                alg,
                v.pk,
                pkl,
                v.msg,
                v.msg_len,
                v.context,
                v.context_len,
                v.sig,
                v.sig_len,
            )
        };
        assert_eq!(st[i], want, "{}: verify item {i}", p.name());
        let expect_ok = i % 3 != 0 && i != 3 && i != 4 && i != 5;
        assert_eq!(
            want == PQG_OK,
            expect_ok,
            "{}: verify item {i} as designed",
            p.name()
        );
    });
}

/// One CTRU-Prime set: keygen from seeds, encaps with coins to a few keys, decaps of good and
/// corrupted ciphertexts, each row against one-at-a-time CPU calls; item 2 of decaps has a NULL
/// ciphertext and must end with its shared secret zeroed and its neighbours intact.
fn kem_rows(ctx: &Ctx, cpu: &Ctx, p: ctru::ParamSet, n: usize, mem: Memory) {
    let alg = Alg::Ctru(p).code();
    let (pkl, skl) = (p.public_key_len(), p.secret_key_len());
    let (ctl, ssl) = (p.ciphertext_len(), p.shared_secret_len());
    let keys = n.min(13);
    let seeds = random(64 * keys);
    let mut pks = vec![CANARY; keys * pkl];
    let mut sks = vec![CANARY; keys * skl];
    let coins = random(32 * n);
    let mut cts = vec![CANARY; n * ctl];
    let mut sse = vec![CANARY; n * ssl];
    let mut ssd = vec![CANARY; n * ssl];
    let _pin = Pinned::new(ctx, mem, &[&pks, &sks, &cts, &sse, &ssd]);

    let mut st = vec![PQG_PENDING; n];
    let mut job = null_mut();
    // SAFETY: arrays of `keys` rows that outlive the job.
    let r = unsafe {
        pqg_kem_keygen_submit(
            ctx.0,
            alg,
            keys,
            seeds.as_ptr(),
            pks.as_mut_ptr(),
            sks.as_mut_ptr(),
            st.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(r, PQG_OK);
    poll_then_free(job);
    for i in 0..keys {
        assert_eq!(st[i], PQG_OK);
        let (mut pk, mut sk) = (vec![0u8; pkl], vec![0u8; skl]);
        // SAFETY: buffers of the stated lengths.
        let r = unsafe {
            pqg_kem_keygen(
                cpu.0,
                alg,
                seeds[64 * i..].as_ptr(),
                pk.as_mut_ptr(),
                pkl,
                sk.as_mut_ptr(),
                skl,
            )
        };
        assert_eq!(r, PQG_OK);
        assert!(
            pk == pks[i * pkl..][..pkl] && sk == sks[i * skl..][..skl],
            "{}: keygen row {i}",
            p.name()
        );
    }

    let (ctb, sseb, ssdb) = (cts.as_mut_ptr(), sse.as_mut_ptr(), ssd.as_mut_ptr());
    let ereqs: Vec<pqg_encaps_request> = (0..n)
        .map(|i| pqg_encaps_request {
            pk: pks[(i % keys) * pkl..].as_ptr(),
            coins: coins[32 * i..].as_ptr(),
            ct: ctb.wrapping_add(i * ctl),
            ss: sseb.wrapping_add(i * ssl),
        })
        .collect();
    st.fill(PQG_PENDING);
    // SAFETY: every request points into live arrays.
    let r =
        unsafe { pqg_kem_encaps_submit(ctx.0, alg, ereqs.as_ptr(), n, st.as_mut_ptr(), &mut job) };
    assert_eq!(r, PQG_OK);
    poll_then_free(job);
    let shared = Shared(&ereqs);
    (0..n).into_par_iter().for_each(|i| {
        let (mut ct, mut ss) = (vec![0u8; ctl], vec![0u8; ssl]);
        let e = shared.get(i);
        // SAFETY: buffers of the stated lengths.
        let r = unsafe {
            pqg_kem_encaps(
                cpu.0,
                alg,
                e.pk,
                pkl,
                e.coins,
                ct.as_mut_ptr(),
                ctl,
                ss.as_mut_ptr(),
                ssl,
            )
        };
        assert_eq!((st[i], r), (PQG_OK, PQG_OK));
        assert!(
            ct == cts[i * ctl..][..ctl] && ss == sse[i * ssl..][..ssl],
            "{}: encaps row {i}",
            p.name()
        );
    });

    // Every fourth ciphertext corrupted (implicit rejection still gives PQG_OK).
    let mut dcts = cts.clone();
    for i in (0..n).step_by(4) {
        dcts[i * ctl + 1] ^= 0x10;
    }
    let dreqs: Vec<pqg_decaps_request> = (0..n)
        .map(|i| pqg_decaps_request {
            sk: sks[(i % keys) * skl..].as_ptr(),
            ct: if i == 2 {
                null()
            } else {
                dcts[i * ctl..].as_ptr()
            },
            ss: ssdb.wrapping_add(i * ssl),
        })
        .collect();
    st.fill(PQG_PENDING);
    // SAFETY: every request points into live arrays.
    let r =
        unsafe { pqg_kem_decaps_submit(ctx.0, alg, dreqs.as_ptr(), n, st.as_mut_ptr(), &mut job) };
    assert_eq!(r, PQG_OK);
    poll_then_free(job);
    let shared = Shared(&dreqs);
    (0..n).into_par_iter().for_each(|i| {
        let row = &ssd[i * ssl..][..ssl];
        let d = shared.get(i);
        if i == 2 {
            assert_eq!(st[i], PQG_ERR_NULL_POINTER);
            assert!(
                row.iter().all(|&b| b == 0),
                "failed item's shared secret zeroed"
            );
            return;
        }
        let mut ss = vec![0u8; ssl];
        // SAFETY: buffers of the stated lengths.
        let r = unsafe { pqg_kem_decaps(cpu.0, alg, d.sk, skl, d.ct, ctl, ss.as_mut_ptr(), ssl) };
        assert_eq!((st[i], r), (PQG_OK, PQG_OK));
        assert!(ss == row, "{}: decaps row {i}", p.name());
        assert_eq!(
            i % 4 != 0,
            row == &sse[i * ssl..][..ssl],
            "{}: decaps {i} agrees iff intact",
            p.name()
        );
    });
}

fn all_sets(ctx: &Ctx, n: usize) {
    let cpu = Ctx::cpu();
    for mem in [Memory::Registered, Memory::Pageable] {
        for p in mldsa::ParamSet::ALL {
            mldsa_rows(ctx, &cpu, p, n, mem);
        }
        for p in ctru::ParamSet::ALL {
            kem_rows(ctx, &cpu, p, n, mem);
        }
    }
}

#[test]
fn cpu_batches_land_in_their_own_rows() {
    all_sets(&Ctx::cpu(), 40);
}

#[test]
fn gpu_batches_land_in_their_own_rows() {
    let Some(gpu) = Ctx::gpu_or_skip() else {
        return;
    };
    all_sets(&gpu, common::gpu_cases(20_000));
}

/// A rejected submit (overlapping signature buffers, or no status array) starts nothing and
/// writes nothing: signature rows and statuses keep their contents.
#[test]
fn rejected_submits_write_nothing() {
    let ctx = Ctx::cpu();
    let p = mldsa::ParamSet::MlDsa44;
    let alg = Alg::MlDsa(p).code();
    let (pkl, skl, sgl) = (p.public_key_len(), p.secret_key_len(), p.signature_len());
    let (mut pk, mut sk) = (vec![0u8; pkl], vec![0u8; skl]);
    // SAFETY: buffers of the stated lengths.
    assert_eq!(
        unsafe {
            pqg_mldsa_keygen(
                ctx.0,
                alg,
                null(),
                pk.as_mut_ptr(),
                pkl,
                sk.as_mut_ptr(),
                skl,
            )
        },
        PQG_OK
    );
    let mut sigs = vec![CANARY; 3 * sgl];
    let base = sigs.as_mut_ptr();
    let req = |at: usize| pqg_sign_request {
        sk: sk.as_ptr(),
        msg: null(),
        msg_len: 0,
        context: null(),
        context_len: 0,
        rnd: null(),
        sig: base.wrapping_add(at),
    };
    // The second row starts inside the first.
    let reqs = [req(0), req(sgl - 1), req(2 * sgl)];
    let mut st = [PQG_PENDING; 3];
    let mut job = null_mut();
    // SAFETY: requests point into live buffers.
    let r =
        unsafe { pqg_mldsa_sign_submit(ctx.0, alg, reqs.as_ptr(), 3, st.as_mut_ptr(), &mut job) };
    assert_eq!(r, PQG_ERR_INVALID_ARGUMENT);
    assert!(job.is_null());
    assert_eq!(st, [PQG_PENDING; 3]);
    assert!(
        sigs.iter().all(|&b| b == CANARY),
        "nothing written by a rejected submit"
    );
    // No status array.
    let reqs = [req(0), req(sgl), req(2 * sgl)];
    // SAFETY: as above.
    let r = unsafe { pqg_mldsa_sign_submit(ctx.0, alg, reqs.as_ptr(), 3, null_mut(), &mut job) };
    assert_eq!(r, PQG_ERR_NULL_POINTER);
    assert!(
        sigs.iter().all(|&b| b == CANARY),
        "nothing written by a rejected submit"
    );
    // A single call whose signature buffer overlaps its message is rejected too.
    // SAFETY: both ranges lie in `sigs`.
    let r = unsafe {
        pqg_mldsa_sign(
            ctx.0,
            alg,
            sk.as_ptr(),
            skl,
            sigs.as_ptr().wrapping_add(10),
            32,
            null(),
            0,
            null(),
            base,
            sgl,
        )
    };
    assert_eq!(r, PQG_ERR_INVALID_ARGUMENT);
    assert!(sigs.iter().all(|&b| b == CANARY));
}

/// Contract v0.1: a context over 255 bytes is INVALID_ARGUMENT and a wrong-length signature
/// VERIFY_FAILED, whatever the length (lengths beyond PTRDIFF_MAX used to give BAD_LENGTH).
#[test]
fn absurd_lengths_get_the_contract_statuses() {
    let ctx = Ctx::cpu();
    let p = mldsa::ParamSet::MlDsa44;
    let alg = Alg::MlDsa(p).code();
    let (pkl, skl, sgl) = (p.public_key_len(), p.secret_key_len(), p.signature_len());
    let (mut pk, mut sk) = (vec![0u8; pkl], vec![0u8; skl]);
    // SAFETY: buffers of the stated lengths.
    assert_eq!(
        unsafe {
            pqg_mldsa_keygen(
                ctx.0,
                alg,
                null(),
                pk.as_mut_ptr(),
                pkl,
                sk.as_mut_ptr(),
                skl,
            )
        },
        PQG_OK
    );
    let mut sig = vec![0u8; sgl];
    let huge = usize::MAX / 2 + 7; // over PTRDIFF_MAX: must never become a slice
    let m = b"m";
    // SAFETY: the huge lengths are rejected before any pointer is read.
    unsafe {
        assert_eq!(
            pqg_mldsa_sign(
                ctx.0,
                alg,
                sk.as_ptr(),
                skl,
                m.as_ptr(),
                1,
                m.as_ptr(),
                huge,
                null(),
                sig.as_mut_ptr(),
                sgl
            ),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_mldsa_sign(
                ctx.0,
                alg,
                sk.as_ptr(),
                skl,
                m.as_ptr(),
                1,
                null(),
                0,
                null(),
                sig.as_mut_ptr(),
                sgl
            ),
            PQG_OK
        );
        assert_eq!(
            pqg_mldsa_verify(
                ctx.0,
                alg,
                pk.as_ptr(),
                pkl,
                m.as_ptr(),
                1,
                m.as_ptr(),
                huge,
                sig.as_ptr(),
                sgl
            ),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_mldsa_verify(
                ctx.0,
                alg,
                pk.as_ptr(),
                pkl,
                m.as_ptr(),
                1,
                null(),
                0,
                sig.as_ptr(),
                huge
            ),
            PQG_ERR_VERIFY_FAILED
        );
        assert_eq!(
            pqg_hash_mldsa_verify(
                ctx.0,
                alg,
                2,
                pk.as_ptr(),
                pkl,
                sig.as_ptr(),
                32,
                null(),
                0,
                sig.as_ptr(),
                huge
            ),
            PQG_ERR_VERIFY_FAILED
        );
        assert_eq!(
            pqg_mldsa_verify_mu(
                ctx.0,
                alg,
                pk.as_ptr(),
                pkl,
                sig.as_ptr(),
                64,
                sig.as_ptr(),
                huge
            ),
            PQG_ERR_VERIFY_FAILED
        );
        let mut st = [PQG_PENDING; 2];
        let reqs = [
            pqg_verify_request {
                pk: pk.as_ptr(),
                msg: m.as_ptr(),
                msg_len: 1,
                context: m.as_ptr(),
                context_len: huge,
                sig: sig.as_ptr(),
                sig_len: sgl,
            },
            pqg_verify_request {
                pk: pk.as_ptr(),
                msg: m.as_ptr(),
                msg_len: 1,
                context: null(),
                context_len: 0,
                sig: sig.as_ptr(),
                sig_len: huge,
            },
        ];
        let mut job = null_mut();
        assert_eq!(
            pqg_mldsa_verify_submit(ctx.0, alg, reqs.as_ptr(), 2, st.as_mut_ptr(), &mut job),
            PQG_OK
        );
        poll_then_free(job);
        assert_eq!(st, [PQG_ERR_INVALID_ARGUMENT, PQG_ERR_VERIFY_FAILED]);
    }
}

/// Large batches check their requests on all cores; a batch with a bad request falls back to
/// checking one by one. Both must give every request its own status in order.
#[test]
fn large_batches_keep_request_order() {
    let ctx = Ctx::cpu();
    let p = mldsa::ParamSet::MlDsa44;
    let alg = Alg::MlDsa(p).code();
    let (pkl, skl, sgl) = (p.public_key_len(), p.secret_key_len(), p.signature_len());
    let (mut pk, mut sk, mut sig) = (vec![0u8; pkl], vec![0u8; skl], vec![0u8; sgl]);
    // SAFETY: buffers of the stated lengths.
    unsafe {
        assert_eq!(
            pqg_mldsa_keygen(
                ctx.0,
                alg,
                null(),
                pk.as_mut_ptr(),
                pkl,
                sk.as_mut_ptr(),
                skl
            ),
            PQG_OK
        );
        assert_eq!(
            pqg_mldsa_sign(
                ctx.0,
                alg,
                sk.as_ptr(),
                skl,
                b"m".as_ptr(),
                1,
                null(),
                0,
                null(),
                sig.as_mut_ptr(),
                sgl
            ),
            PQG_OK
        );
    }
    let n = 5000;
    for bad in [None, Some(4321)] {
        let reqs: Vec<pqg_verify_request> = (0..n)
            .map(|i| pqg_verify_request {
                pk: if Some(i) == bad { null() } else { pk.as_ptr() },
                msg: b"mx".as_ptr(),
                msg_len: 1 + usize::from(i % 5 == 0), // every fifth message differs
                context: null(),
                context_len: 0,
                sig: sig.as_ptr(),
                sig_len: sgl,
            })
            .collect();
        let mut st = vec![PQG_PENDING; n];
        let mut job = null_mut();
        // SAFETY: requests point into live buffers.
        let r = unsafe {
            pqg_mldsa_verify_submit(ctx.0, alg, reqs.as_ptr(), n, st.as_mut_ptr(), &mut job)
        };
        assert_eq!(r, PQG_OK);
        poll_then_free(job);
        for (i, &s) in st.iter().enumerate() {
            let want = match i {
                _ if Some(i) == bad => PQG_ERR_NULL_POINTER,
                _ if i % 5 == 0 => PQG_ERR_VERIFY_FAILED,
                _ => PQG_OK,
            };
            assert_eq!(s, want, "item {i} (bad item {bad:?})");
        }
    }
}
