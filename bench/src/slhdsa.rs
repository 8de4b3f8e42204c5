//! SLH-DSA batches through the C ABI (`pqg_slhdsa_*_submit`, hedged signing of 32-byte
//! messages, each item with its own key), the batch sizes each set needs to fill a GPU or the
//! CPU cores for a fraction of a second, and the cross-check against the CPU backend.

use crate::workload::{check, expect_all_ok, random_bytes, submit_and_wait, Context, MSG_LEN};
use pqgpu::ffi::*;
use pqgpu::slhdsa::ParamSet;
use pqgpu::Alg;
use std::ptr::null;
use std::time::Duration;

/// Items per batch of keygen, sign and verify: on a GPU enough threads to fill it several
/// times (a few hundred thousand WOTS+ keys per batch; SHA2-128f: 524,288 keys, 11,915
/// signatures; SHA2-128s: 8,192, 585; verification 131,072 on every set, one thread per
/// signature), on the CPU a few items per core (the s sets sign a handful of messages per
/// second per core). A verification batch repeats the signing batch's items (see
/// [`SlhDsaBatch::repeat`]).
pub fn batches(p: ParamSet, gpu: bool, threads: usize) -> [usize; 3] {
    let q = p.params();
    let small = q.a >= 12;
    if gpu {
        [
            (1 << 22) >> q.hp,
            (1 << 21) / (q.d << q.hp),
            VERIFY_BATCH_GPU,
        ]
    } else if small {
        [4 * threads, threads, 4 * threads]
    } else {
        [64 * threads, 8 * threads, 64 * threads]
    }
}

/// Verifications per GPU batch: enough one-thread items to fill an H200 with several chunks
/// in flight (at most 6.5 GB of signatures, SLH-DSA-*-256f's).
pub const VERIFY_BATCH_GPU: usize = 131_072;

/// Keys, messages and signatures for one set, for up to `n` items.
pub struct SlhDsaBatch {
    pub p: ParamSet,
    n: usize,
    alg: pqg_alg,
    pks: Vec<u8>,
    sks: Vec<u8>,
    msgs: Vec<u8>,
    sigs: Vec<u8>,
    statuses: Vec<pqg_status>,
}

impl SlhDsaBatch {
    pub fn new(p: ParamSet, n: usize) -> Self {
        SlhDsaBatch {
            p,
            n,
            alg: Alg::SlhDsa(p).code(),
            pks: vec![0; n * p.public_key_len()],
            sks: vec![0; n * p.secret_key_len()],
            msgs: random_bytes(MSG_LEN * n),
            sigs: vec![0; n * p.signature_len()],
            statuses: vec![PQG_PENDING; n],
        }
    }

    /// The buffers a server would register: keys, messages, signatures.
    pub fn host_buffers(&self) -> [&[u8]; 4] {
        [&self.pks, &self.sks, &self.msgs, &self.sigs]
    }

    /// Items `m..to` as copies of items `..m` in turn (key pair, message, signature): a batch
    /// to verify without signing it all (the s sets sign a few thousand per second).
    pub fn repeat(&mut self, m: usize, to: usize) {
        let p = self.p;
        let (m, to) = (m.max(1), to.min(self.n));
        if m >= to {
            return;
        }
        let widths = [
            p.public_key_len(),
            p.secret_key_len(),
            MSG_LEN,
            p.signature_len(),
        ];
        let bufs = [&mut self.pks, &mut self.sks, &mut self.msgs, &mut self.sigs];
        for (buf, w) in bufs.into_iter().zip(widths) {
            let (head, tail) = buf[..to * w].split_at_mut(m * w);
            for (i, row) in tail.chunks_exact_mut(w).enumerate() {
                let j = i % m;
                row.copy_from_slice(&head[j * w..(j + 1) * w]);
            }
        }
    }

    /// `pqg_slhdsa_keygen_submit` of the first `m` items with fresh seeds.
    pub fn keygen(&mut self, ctx: &Context, m: usize) -> Result<Duration, String> {
        let m = m.min(self.n);
        self.statuses[..m].fill(PQG_PENDING);
        let (pks, sks, st) = (
            self.pks.as_mut_ptr(),
            self.sks.as_mut_ptr(),
            self.statuses.as_mut_ptr(),
        );
        // SAFETY: the arrays hold at least m rows each and live until the job is freed.
        let dt = submit_and_wait("keygen submit", |job| unsafe {
            pqg_slhdsa_keygen_submit(ctx.raw(), self.alg, m, null(), pks, sks, st, job)
        })?;
        expect_all_ok("keygen", &self.statuses[..m])?;
        Ok(dt)
    }

    /// Hedged signing of the first `m` messages, each with its own key.
    pub fn sign(&mut self, ctx: &Context, m: usize) -> Result<Duration, String> {
        let p = self.p;
        let m = m.min(self.n);
        let (skl, sgl) = (p.secret_key_len(), p.signature_len());
        let sks = self.sks.as_ptr();
        let msgs = self.msgs.as_ptr();
        let sigs = self.sigs.as_mut_ptr();
        let reqs: Vec<pqg_sign_request> = (0..m)
            .map(|i| pqg_sign_request {
                sk: sks.wrapping_add(i * skl),
                msg: msgs.wrapping_add(i * MSG_LEN),
                msg_len: MSG_LEN,
                context: null(),
                context_len: 0,
                rnd: null(),
                sig: sigs.wrapping_add(i * sgl),
            })
            .collect();
        self.statuses[..m].fill(PQG_PENDING);
        let st = self.statuses.as_mut_ptr();
        // SAFETY: every request points into the batch's live arrays.
        let dt = submit_and_wait("sign submit", |job| unsafe {
            pqg_slhdsa_sign_submit(ctx.raw(), self.alg, reqs.as_ptr(), m, st, job)
        })?;
        expect_all_ok("sign", &self.statuses[..m])?;
        Ok(dt)
    }

    fn verify_requests(&self, m: usize) -> Vec<pqg_verify_request> {
        let p = self.p;
        let (pkl, sgl) = (p.public_key_len(), p.signature_len());
        (0..m)
            .map(|i| pqg_verify_request {
                pk: self.pks[i * pkl..].as_ptr(),
                msg: self.msgs[i * MSG_LEN..].as_ptr(),
                msg_len: MSG_LEN,
                context: null(),
                context_len: 0,
                sig: self.sigs[i * sgl..].as_ptr(),
                sig_len: sgl,
            })
            .collect()
    }

    /// Verifies the first `m` signatures; all must be valid.
    pub fn verify(&mut self, ctx: &Context, m: usize) -> Result<Duration, String> {
        let m = m.min(self.n);
        let reqs = self.verify_requests(m);
        self.statuses[..m].fill(PQG_PENDING);
        let st = self.statuses.as_mut_ptr();
        // SAFETY: every request points into the batch's live arrays.
        let dt = submit_and_wait("verify submit", |job| unsafe {
            pqg_slhdsa_verify_submit(ctx.raw(), self.alg, reqs.as_ptr(), m, st, job)
        })?;
        expect_all_ok("verify", &self.statuses[..m])?;
        Ok(dt)
    }

    /// Cross-checks up to `sample` items with the CPU backend (the ground truth): the batch's
    /// signatures verify there under the batch's keys, and the same seeds give the same keys
    /// on both contexts.
    pub fn cross_check(&self, ctx: &Context, cpu: &Context, sample: usize) -> Result<(), String> {
        let (p, m) = (self.p, sample.min(self.n));
        let reqs = self.verify_requests(m);
        let mut st = vec![PQG_PENDING; m];
        // SAFETY: the requests point into the batch's live arrays.
        submit_and_wait("reference verify", |job| unsafe {
            pqg_slhdsa_verify_submit(cpu.raw(), self.alg, reqs.as_ptr(), m, st.as_mut_ptr(), job)
        })?;
        expect_all_ok("reference verify", &st)?;
        let seeds = random_bytes(p.seed_len() * m);
        let mut keys = Vec::new();
        for c in [ctx, cpu] {
            let mut pks = vec![0u8; m * p.public_key_len()];
            let mut sks = vec![0u8; m * p.secret_key_len()];
            st.fill(PQG_PENDING);
            // SAFETY: arrays of m rows, alive until the job is freed.
            submit_and_wait("seeded keygen", |job| unsafe {
                pqg_slhdsa_keygen_submit(
                    c.raw(),
                    self.alg,
                    m,
                    seeds.as_ptr(),
                    pks.as_mut_ptr(),
                    sks.as_mut_ptr(),
                    st.as_mut_ptr(),
                    job,
                )
            })?;
            expect_all_ok("seeded keygen", &st)?;
            keys.push((pks, sks));
        }
        if keys[0] != keys[1] {
            return Err(format!("{}: keys differ from the CPU backend's", p.name()));
        }
        Ok(())
    }

    /// One `pqg_slhdsa_sign` call on item 0 (hedged), for latency.
    pub fn single_sign(&mut self, ctx: &Context) -> Result<Duration, String> {
        let p = self.p;
        let t = std::time::Instant::now();
        // SAFETY: every pointer is a live buffer of the stated length.
        let r = unsafe {
            pqg_slhdsa_sign(
                ctx.raw(),
                self.alg,
                self.sks.as_ptr(),
                p.secret_key_len(),
                self.msgs.as_ptr(),
                MSG_LEN,
                null(),
                0,
                null(),
                self.sigs.as_mut_ptr(),
                p.signature_len(),
            )
        };
        let dt = t.elapsed();
        check("single sign", r)?;
        Ok(dt)
    }
}
