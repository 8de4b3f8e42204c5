//! slh_sign (FIPS 205 Alg. 19, every interface) for one chunk: the host checks shapes, draws
//! opt_rand for hedged items and computes R and H_msg per item (a few hash calls over the
//! message, on all cores); the GPU builds the FORS trees, every hypertree layer's XMSS tree and
//! the WOTS+ signatures (`kernels/slhdsa.cu` says how the phases split the work). The top
//! layer's leaves depend on the key alone: built once per distinct key, and kept on the worker
//! between chunks signed by one key.

use super::kernels::{job_row, Kernels, CTX_BYTES, JOB_BYTES};
use super::keys::{tag, Distinct};
use crate::backend::SlhSignItem;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio::{self, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{Phase, Worker, ROWS_PER_TASK};
use crate::slhdsa::{self, ParamSet};
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;
use zeroize::Zeroizing;

/// The largest m (H_msg's output bytes) of any set.
const MAX_M: usize = 49;

/// Each item's status from its shape alone (as the CPU's `slhdsa::sign` checks it): the items
/// still to sign keep `Ok`.
pub fn check(p: ParamSet, items: &[SlhSignItem<'_>], sigs: &[&mut [u8]], st: &mut [Status]) {
    for ((it, sig), s) in items.iter().zip(sigs).zip(st.iter_mut()) {
        *s = if it.sk.len() != p.secret_key_len()
            || sig.len() != p.signature_len()
            || it.rnd.is_some_and(|r| r.len() != p.n())
        {
            Err(Error::BadLength)
        } else {
            it.msg.validate()
        };
    }
}

/// Job rows of the items at `idx` into `out`: R and the digest's split, with opt_rand from the
/// item or, for hedged items, the next n bytes of `fresh`, and the item's key index.
pub fn jobs(
    p: ParamSet,
    items: &[SlhSignItem<'_>],
    idx: &[usize],
    keys: &[u32],
    fresh: &[u8],
    out: &mut [u8],
) {
    let q = p.params();
    let n = q.n;
    // Where each hedged item's opt_rand starts in `fresh`.
    let mut next = 0;
    let rnd_at: Vec<usize> = idx
        .iter()
        .map(|&i| {
            let at = next;
            if items[i].rnd.is_none() {
                next += n;
            }
            at
        })
        .collect();
    out.par_chunks_mut(JOB_BYTES)
        .zip(idx.par_iter().zip(keys.par_iter().zip(rnd_at.par_iter())))
        .with_min_len(16)
        .for_each(|(row, (&i, (&key, &at)))| {
            let it = &items[i];
            let rnd = match it.rnd {
                Some(r) => r,
                None => &fresh[at..at + n],
            };
            let mut r = [0u8; slhdsa::params::MAX_N];
            let mut digest = [0u8; MAX_M];
            slhdsa::sign_digest(p, it.sk, &it.msg, rnd, &mut r[..n], &mut digest[..q.m]);
            job_row(&q, &digest[..q.m], key, &r[..n], row);
        });
}

#[allow(clippy::too_many_arguments)]
pub fn sign_chunk(
    w: &mut Worker,
    k: &Kernels,
    p: ParamSet,
    reg: &Ranges,
    items: &[SlhSignItem<'_>],
    sigs: &mut [&mut [u8]],
    st: &mut [Status],
) -> Result<(), DriverError> {
    w.start_chunk(ChunkOp::SlhDsa);
    let s = k.s;
    let (n, q) = (s.n, s.q);
    check(p, items, sigs, st);
    let idx: Vec<usize> = (0..items.len()).filter(|&i| st[i].is_ok()).collect();
    let m = idx.len();
    if m == 0 {
        return Ok(());
    }
    let hedged = idx.iter().filter(|&&i| items[i].rnd.is_none()).count();
    let mut fresh = Zeroizing::new(vec![0u8; hedged * n]);
    if crate::rng::fill_bulk(&mut fresh).is_err() {
        idx.iter().for_each(|&i| st[i] = Err(Error::Rng));
        return Ok(());
    }
    let mut distinct = Distinct::new();
    let key_idx: Vec<u32> = idx.iter().map(|&i| distinct.index(items[i].sk)).collect();
    let nkeys = distinct.keys.len();
    let sk_len = 4 * n;

    let bytes = m * JOB_BYTES + nkeys * sk_len;
    let mut stage = w.take_host("slh_sg_stage", bytes)?;
    let h = &mut stage.bytes()?[..bytes];
    let (jobs_h, keys_h) = h.split_at_mut(m * JOB_BYTES);
    for (row, key) in keys_h.chunks_exact_mut(sk_len).zip(&distinct.keys) {
        row.copy_from_slice(key);
    }
    jobs(p, items, &idx, &key_idx, &fresh, jobs_h);

    let jobs_d = w.dev("slh_sg_jobs", m * JOB_BYTES)?;
    let keys_d = w.dev("slh_sg_keys", nkeys * sk_len)?;
    let ctx = w.dev("slh_sg_ctx", nkeys * CTX_BYTES)?;
    let groots = w.dev("slh_sg_groots", m * q.k * s.groups * n)?;
    let roots = w.dev("slh_sg_roots", m * q.k * n)?;
    let pkf = w.dev("slh_sg_pkf", m * n)?;
    let leaves = w.dev("slh_sg_leaves", m * q.d * s.leaves * n)?;
    let htroots = w.dev("slh_sg_htroots", m * q.d * n)?;
    let sig_d = w.dev("slh_sg_sigs", m * s.sig)?;
    let one = (nkeys == 1).then(|| tag(p.name(), distinct.keys[0]));
    let top_len = nkeys * s.leaves * n;
    let (top, kept): (Dev<u8>, bool) = match &one {
        Some(t) => w.dev_kept("slh_sg_top", top_len, t)?,
        None => (w.dev("slh_sg_top", top_len)?, false),
    };
    w.htod(jobs_d, jobs_h)?;
    w.htod(keys_d, keys_h)?;
    k.prep(w, keys_d, sk_len, (0, 2 * n), ctx, nkeys)?;
    if !kept {
        k.keygen_leaves(w, ctx, top, nkeys)?;
        if let Some(t) = &one {
            w.keep("slh_sg_top", t);
        }
    }
    k.fors_leaves(w, jobs_d, ctx, groots, sig_d, m)?;
    k.fors_top(w, jobs_d, ctx, (groots, roots), sig_d, m)?;
    k.fors_pk(w, jobs_d, ctx, (roots, pkf), sig_d, m)?;
    k.ht_leaves(w, jobs_d, ctx, leaves, q.d - 1, m)?;
    k.ht_top(w, jobs_d, ctx, (leaves, top), htroots, sig_d, m)?;
    k.wots_sign(w, jobs_d, ctx, (pkf, htroots), sig_d, m)?;

    match Rows::registered(reg, s.sig, idx.iter().map(|&i| Some(&*sigs[i]))) {
        Some(rows) => {
            // Straight into the caller's registered rows: no host copy.
            hostio::scatter(w, &k.io, sig_d, s.sig, &rows, "slh_sg_rows")?;
            w.end_phase(Phase::Staging);
            w.sync()?;
            w.end_phase(Phase::GpuWait);
        }
        None => {
            let mut out = w.take_host("slh_sg_out", m * s.sig)?;
            let o = &mut out.bytes()?[..m * s.sig];
            w.dtoh(o, sig_d)?;
            w.end_phase(Phase::Staging);
            w.sync()?;
            w.end_phase(Phase::GpuWait);
            let mut pos = vec![u32::MAX; items.len()];
            for (j, &i) in idx.iter().enumerate() {
                pos[i] = j as u32;
            }
            let o = &*o;
            sigs.par_iter_mut()
                .zip(pos.par_iter())
                .with_min_len(ROWS_PER_TASK / 16)
                .filter(|(_, &j)| j != u32::MAX)
                .for_each(|(sig, &j)| {
                    let j = j as usize;
                    sig.copy_from_slice(&o[j * s.sig..(j + 1) * s.sig]);
                });
        }
    }
    // The secret keys are secret: do not leave them in the staging buffer.
    keys_h.fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(())
}
