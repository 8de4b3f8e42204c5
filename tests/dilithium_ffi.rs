//! Dilithium round 3 through the C ABI, as C calls it: the identifiers and lengths of the
//! contract, the KAT records through the one-shot and the `_submit` functions, the
//! FIPS 204-only interfaces rejected, and the mixed batch (ML-DSA and round-3 jobs in flight on
//! one context at once) on the CPU and, where one is usable, the GPU.

mod common;

use common::ffi::Ctx;
use common::r3kat::{records, Record};
use pqgpu::ffi::*;
use pqgpu::mldsa::ParamSet;
use std::ptr::{null, null_mut};

const R3: [(pqg_alg, ParamSet); 3] = [
    (PQG_DILITHIUM2, ParamSet::Dilithium2),
    (PQG_DILITHIUM3, ParamSet::Dilithium3),
    (PQG_DILITHIUM5, ParamSet::Dilithium5),
];
const ZERO: [u8; 32] = [0; 32];

fn cpu() -> Ctx {
    Ctx::cpu()
}

#[test]
fn identifiers_and_lengths_follow_the_contract() {
    assert_eq!((PQG_DILITHIUM2, PQG_DILITHIUM3, PQG_DILITHIUM5), (4, 5, 6));
    let want = [(1312, 2528, 2420), (1952, 4000, 3293), (2592, 4864, 4595)];
    for ((alg, _), (pk, sk, sig)) in R3.into_iter().zip(want) {
        assert_eq!(pqg_public_key_len(alg), pk);
        assert_eq!(pqg_secret_key_len(alg), sk);
        assert_eq!(pqg_signature_len(alg), sig);
        assert_eq!(pqg_ciphertext_len(alg), 0);
        assert_eq!(pqg_shared_secret_len(alg), 0);
    }
    assert_eq!(
        (
            PQG_DILITHIUM2_SECRET_KEY_BYTES,
            PQG_DILITHIUM3_SIGNATURE_BYTES,
            PQG_DILITHIUM5_PUBLIC_KEY_BYTES
        ),
        (2528, 3293, 2592)
    );
    assert_eq!(pqg_public_key_len(7), 0);
}

fn keygen(ctx: &Ctx, alg: pqg_alg, xi: &[u8; 32]) -> (Vec<u8>, Vec<u8>) {
    let mut pk = vec![0u8; pqg_public_key_len(alg)];
    let mut sk = vec![0u8; pqg_secret_key_len(alg)];
    let st = unsafe {
        pqg_mldsa_keygen(
            ctx.0,
            alg,
            xi.as_ptr(),
            pk.as_mut_ptr(),
            pk.len(),
            sk.as_mut_ptr(),
            sk.len(),
        )
    };
    assert_eq!(st, PQG_OK);
    (pk, sk)
}

fn sign(ctx: &Ctx, alg: pqg_alg, sk: &[u8], msg: &[u8], context: &[u8]) -> (pqg_status, Vec<u8>) {
    let mut sig = vec![0u8; pqg_signature_len(alg)];
    let st = unsafe {
        pqg_mldsa_sign(
            ctx.0,
            alg,
            sk.as_ptr(),
            sk.len(),
            msg.as_ptr(),
            msg.len(),
            context.as_ptr(),
            context.len(),
            ZERO.as_ptr(),
            sig.as_mut_ptr(),
            sig.len(),
        )
    };
    (st, sig)
}

fn verify(
    ctx: &Ctx,
    alg: pqg_alg,
    pk: &[u8],
    msg: &[u8],
    context: &[u8],
    sig: &[u8],
) -> pqg_status {
    unsafe {
        pqg_mldsa_verify(
            ctx.0,
            alg,
            pk.as_ptr(),
            pk.len(),
            msg.as_ptr(),
            msg.len(),
            context.as_ptr(),
            context.len(),
            sig.as_ptr(),
            sig.len(),
        )
    }
}

#[test]
fn one_shot_calls_reproduce_the_kat() {
    let ctx = cpu();
    for (alg, p) in R3 {
        for r in records(p).iter().take(5) {
            let (pk, sk) = keygen(&ctx, alg, &r.xi());
            assert!(pk == r.pk && sk == r.sk, "{} keys {}", p.name(), r.count);
            let (st, sig) = sign(&ctx, alg, &sk, &r.msg, &[]);
            assert_eq!(st, PQG_OK);
            assert!(sig == r.sig(p), "{} sig {}", p.name(), r.count);
            assert_eq!(verify(&ctx, alg, &pk, &r.msg, &[], &sig), PQG_OK);
            assert_eq!(
                verify(&ctx, alg, &pk, &r.msg[1..], &[], &sig),
                PQG_ERR_VERIFY_FAILED
            );
        }
    }
}

#[test]
fn fips204_only_interfaces_are_invalid_arguments() {
    let ctx = cpu();
    for (alg, p) in R3 {
        let r = &records(p)[0];
        let (st, _) = sign(&ctx, alg, &r.sk, &r.msg, b"ctx");
        assert_eq!(st, PQG_ERR_INVALID_ARGUMENT, "{} context", p.name());
        let sig = r.sig(p);
        assert_eq!(
            verify(&ctx, alg, &r.pk, &r.msg, b"ctx", sig),
            PQG_ERR_INVALID_ARGUMENT
        );
        let digest = [0u8; 32];
        let mut out = vec![0u8; sig.len()];
        let st = unsafe {
            pqg_hash_mldsa_sign(
                ctx.0,
                alg,
                pqg_hash_values::PQG_HASH_SHA2_256 as pqg_hash,
                r.sk.as_ptr(),
                r.sk.len(),
                digest.as_ptr(),
                digest.len(),
                null(),
                0,
                ZERO.as_ptr(),
                out.as_mut_ptr(),
                out.len(),
            )
        };
        assert_eq!(st, PQG_ERR_INVALID_ARGUMENT, "{} HashML-DSA sign", p.name());
        let st = unsafe {
            pqg_hash_mldsa_verify(
                ctx.0,
                alg,
                pqg_hash_values::PQG_HASH_SHA2_256 as pqg_hash,
                r.pk.as_ptr(),
                r.pk.len(),
                digest.as_ptr(),
                digest.len(),
                null(),
                0,
                sig.as_ptr(),
                sig.len(),
            )
        };
        assert_eq!(
            st,
            PQG_ERR_INVALID_ARGUMENT,
            "{} HashML-DSA verify",
            p.name()
        );
        let mu = [0u8; 64];
        let st = unsafe {
            pqg_mldsa_sign_mu(
                ctx.0,
                alg,
                r.sk.as_ptr(),
                r.sk.len(),
                mu.as_ptr(),
                mu.len(),
                ZERO.as_ptr(),
                out.as_mut_ptr(),
                out.len(),
            )
        };
        assert_eq!(st, PQG_ERR_INVALID_ARGUMENT, "{} sign_mu", p.name());
        let st = unsafe {
            pqg_mldsa_verify_mu(
                ctx.0,
                alg,
                r.pk.as_ptr(),
                r.pk.len(),
                mu.as_ptr(),
                mu.len(),
                sig.as_ptr(),
                sig.len(),
            )
        };
        assert_eq!(st, PQG_ERR_INVALID_ARGUMENT, "{} verify_mu", p.name());
        // A secret key of the other scheme has the wrong length.
        let ml_sk = vec![0u8; pqg_secret_key_len(alg - 3)];
        assert_eq!(sign(&ctx, alg, &ml_sk, b"m", &[]).0, PQG_ERR_BAD_LENGTH);
    }
}

fn wait(job: *mut pqg_job) {
    assert_eq!(unsafe { pqg_job_wait(job, -1) }, PQG_OK);
    unsafe { pqg_job_free(job) };
}

/// A batch of one algorithm, submitted and left running: keygen of `recs`' seeds, then
/// signing and verifying (one item of each with a context, which must be refused).
struct Batch<'r> {
    alg: pqg_alg,
    recs: &'r [Record],
    seeds: Vec<u8>,
    pks: Vec<u8>,
    sks: Vec<u8>,
    sigs: Vec<u8>,
    st: Vec<pqg_status>,
}

impl<'r> Batch<'r> {
    fn new(alg: pqg_alg, recs: &'r [Record]) -> Batch<'r> {
        let n = recs.len();
        Batch {
            alg,
            recs,
            seeds: recs.iter().flat_map(|r| r.xi()).collect(),
            pks: vec![0; n * pqg_public_key_len(alg)],
            sks: vec![0; n * pqg_secret_key_len(alg)],
            sigs: vec![0; n * pqg_signature_len(alg)],
            st: vec![1; n],
        }
    }

    fn submit_keygen(&mut self, ctx: &Ctx) -> *mut pqg_job {
        let mut job = null_mut();
        let st = unsafe {
            pqg_mldsa_keygen_submit(
                ctx.0,
                self.alg,
                self.recs.len(),
                self.seeds.as_ptr(),
                self.pks.as_mut_ptr(),
                self.sks.as_mut_ptr(),
                self.st.as_mut_ptr(),
                &mut job,
            )
        };
        assert_eq!(st, PQG_OK);
        job
    }

    fn sign_requests(&mut self) -> Vec<pqg_sign_request> {
        let (sl, gl) = (pqg_secret_key_len(self.alg), pqg_signature_len(self.alg));
        let sig = self.sigs.as_mut_ptr();
        self.recs
            .iter()
            .enumerate()
            .map(|(i, r)| pqg_sign_request {
                sk: self.sks[i * sl..].as_ptr(),
                msg: r.msg.as_ptr(),
                msg_len: r.msg.len(),
                context: b"x".as_ptr(),
                context_len: (i == 1) as usize,
                rnd: ZERO.as_ptr(),
                sig: unsafe { sig.add(i * gl) },
            })
            .collect()
    }

    fn submit_sign(&mut self, ctx: &Ctx, reqs: &[pqg_sign_request]) -> *mut pqg_job {
        let mut job = null_mut();
        let st = unsafe {
            pqg_mldsa_sign_submit(
                ctx.0,
                self.alg,
                reqs.as_ptr(),
                reqs.len(),
                self.st.as_mut_ptr(),
                &mut job,
            )
        };
        assert_eq!(st, PQG_OK);
        job
    }

    fn check_keys(&self, p: ParamSet) {
        let (pl, sl) = (p.public_key_len(), p.secret_key_len());
        for (i, r) in self.recs.iter().enumerate() {
            assert_eq!(self.st[i], PQG_OK);
            assert!(
                self.pks[i * pl..(i + 1) * pl] == r.pk[..],
                "{} pk {i}",
                p.name()
            );
            assert!(
                self.sks[i * sl..(i + 1) * sl] == r.sk[..],
                "{} sk {i}",
                p.name()
            );
        }
    }

    fn check_sigs(&self, p: ParamSet) {
        let gl = p.signature_len();
        for (i, r) in self.recs.iter().enumerate() {
            if i == 1 {
                assert_eq!(self.st[i], PQG_ERR_INVALID_ARGUMENT, "{} context", p.name());
                continue;
            }
            assert_eq!(self.st[i], PQG_OK, "{} sign {i}", p.name());
            assert!(
                self.sigs[i * gl..(i + 1) * gl] == *r.sig(p),
                "{} sig {i}",
                p.name()
            );
        }
    }

    /// Verify requests: item 0 tampered, item 1 with a context, the rest valid.
    fn verify_requests(&self, tampered: &mut Vec<u8>) -> Vec<pqg_verify_request> {
        let (pl, gl) = (pqg_public_key_len(self.alg), pqg_signature_len(self.alg));
        *tampered = self.sigs[..gl].to_vec();
        tampered[5] ^= 0x10;
        self.recs
            .iter()
            .enumerate()
            .map(|(i, r)| pqg_verify_request {
                pk: self.pks[i * pl..].as_ptr(),
                msg: r.msg.as_ptr(),
                msg_len: r.msg.len(),
                context: b"x".as_ptr(),
                context_len: (i == 1) as usize,
                sig: if i == 0 {
                    tampered.as_ptr()
                } else {
                    self.sigs[i * gl..].as_ptr()
                },
                sig_len: gl,
            })
            .collect()
    }
}

/// ML-DSA-44/65/87 and Dilithium2/3/5 jobs all in flight on one context at once, each checked
/// against the KAT (round 3) or the CPU's one-shot results (ML-DSA).
fn mixed_batch(ctx: &Ctx, n: usize) {
    let recs: Vec<Vec<Record>> = R3
        .iter()
        .map(|&(_, p)| records(p).into_iter().take(n).collect())
        .collect();
    // Round 3 with the KAT seeds; ML-DSA with the same seeds (their own keys).
    let mut batches: Vec<Batch> = Vec::new();
    for (i, &(alg, _)) in R3.iter().enumerate() {
        batches.push(Batch::new(alg, &recs[i]));
        batches.push(Batch::new(alg - 3, &recs[i]));
    }
    let jobs: Vec<_> = batches.iter_mut().map(|b| b.submit_keygen(ctx)).collect();
    jobs.into_iter().for_each(wait);
    let reference = cpu();
    for b in &batches {
        match R3.iter().find(|&&(a, _)| a == b.alg) {
            Some(&(_, p)) => b.check_keys(p),
            None => {
                let pl = pqg_public_key_len(b.alg);
                for (i, r) in b.recs.iter().enumerate() {
                    let (pk, _) = keygen(&reference, b.alg, &r.xi());
                    assert!(
                        b.pks[i * pl..(i + 1) * pl] == pk[..],
                        "alg {} pk {i}",
                        b.alg
                    );
                }
            }
        }
    }
    let reqs: Vec<Vec<pqg_sign_request>> = batches.iter_mut().map(|b| b.sign_requests()).collect();
    let jobs: Vec<_> = batches
        .iter_mut()
        .zip(&reqs)
        .map(|(b, r)| b.submit_sign(ctx, r))
        .collect();
    jobs.into_iter().for_each(wait);
    for b in &batches {
        match R3.iter().find(|&&(a, _)| a == b.alg) {
            Some(&(_, p)) => b.check_sigs(p),
            None => {
                let (sl, gl) = (pqg_secret_key_len(b.alg), pqg_signature_len(b.alg));
                for (i, r) in b.recs.iter().enumerate() {
                    let ctxs: &[u8] = if i == 1 { b"x" } else { &[] };
                    let (st, sig) = sign(
                        &reference,
                        b.alg,
                        &b.sks[i * sl..(i + 1) * sl],
                        &r.msg,
                        ctxs,
                    );
                    assert_eq!((b.st[i], st), (PQG_OK, PQG_OK), "alg {} sign {i}", b.alg);
                    assert!(
                        b.sigs[i * gl..(i + 1) * gl] == sig[..],
                        "alg {} sig {i}",
                        b.alg
                    );
                }
            }
        }
    }
    let mut tampered: Vec<Vec<u8>> = vec![Vec::new(); batches.len()];
    let vreqs: Vec<Vec<pqg_verify_request>> = batches
        .iter()
        .zip(tampered.iter_mut())
        .map(|(b, t)| b.verify_requests(t))
        .collect();
    let mut vst: Vec<Vec<pqg_status>> = batches.iter().map(|b| vec![1; b.recs.len()]).collect();
    let mut jobs = Vec::new();
    for ((b, r), st) in batches.iter().zip(&vreqs).zip(vst.iter_mut()) {
        let mut job = null_mut();
        let s = unsafe {
            pqg_mldsa_verify_submit(ctx.0, b.alg, r.as_ptr(), r.len(), st.as_mut_ptr(), &mut job)
        };
        assert_eq!(s, PQG_OK);
        jobs.push(job);
    }
    jobs.into_iter().for_each(wait);
    for (b, st) in batches.iter().zip(&vst) {
        let r3 = R3.iter().any(|&(a, _)| a == b.alg);
        for (i, &s) in st.iter().enumerate() {
            let want = match i {
                0 => PQG_ERR_VERIFY_FAILED,
                // Round 3 has no context; ML-DSA signed item 1 with context "x".
                1 if r3 => PQG_ERR_INVALID_ARGUMENT,
                _ => PQG_OK,
            };
            assert_eq!(s, want, "alg {} verify {i}", b.alg);
        }
    }
}

#[test]
fn mixed_batch_cpu() {
    mixed_batch(&cpu(), 12);
}

/// The same on the GPU (skips without one); `PQGPU_MIXED_CASES` records per level (<= 100).
#[test]
fn mixed_batch_gpu() {
    let Some(ctx) = Ctx::gpu_or_skip() else {
        return;
    };
    let n = common::env_count("PQGPU_MIXED_CASES", 100);
    mixed_batch(&ctx, n);
    println!("mixed batch on the GPU: {n} items per algorithm, 6 algorithms, all identical");
}
