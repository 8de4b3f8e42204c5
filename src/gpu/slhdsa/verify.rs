//! slh_verify (FIPS 205 Alg. 20, every interface) for one chunk: the host checks shapes and
//! computes H_msg of each item (a few hash calls over the message, on all cores); the GPU
//! climbs the FORS trees and the d hypertree layers, one thread per item. Public keys and
//! signatures in registered memory go to the device without a host copy.

use super::kernels::{job_row, Kernels, JOB_BYTES};
use crate::backend::SlhVerifyItem;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio::{self, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::worker::{Phase, Worker, ROWS_PER_TASK};
use crate::slhdsa::{self, ParamSet};
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;

/// The largest m (H_msg's output bytes) of any set.
const MAX_M: usize = 49;

/// Each item's status from its shape alone (as the CPU's `slhdsa::verify` checks it): the
/// items still to verify keep `Ok`.
pub fn check(p: ParamSet, items: &[SlhVerifyItem<'_>], st: &mut [Status]) {
    for (it, s) in items.iter().zip(st.iter_mut()) {
        *s = if it.pk.len() != p.public_key_len() {
            Err(Error::BadLength)
        } else {
            it.msg.validate().and(if it.sig.len() == p.signature_len() {
                Ok(())
            } else {
                Err(Error::VerifyFailed)
            })
        };
    }
}

/// Job rows of the items at `idx` (their digests; key index unused) into `out`.
pub fn jobs(p: ParamSet, items: &[SlhVerifyItem<'_>], idx: &[usize], out: &mut [u8]) {
    let q = p.params();
    out.par_chunks_mut(JOB_BYTES)
        .zip(idx.par_iter())
        .with_min_len(64)
        .for_each(|(row, &i)| {
            let it = &items[i];
            let mut digest = [0u8; MAX_M];
            let r = &it.sig[..q.n];
            slhdsa::verify_digest(p, it.pk, &it.msg, r, &mut digest[..q.m]);
            job_row(&q, &digest[..q.m], 0, r, row);
        });
}

pub fn verify_chunk(
    w: &mut Worker,
    k: &Kernels,
    p: ParamSet,
    reg: &Ranges,
    items: &[SlhVerifyItem<'_>],
    st: &mut [Status],
) -> Result<(), DriverError> {
    w.start_chunk(ChunkOp::SlhDsa);
    let s = k.s;
    check(p, items, st);
    let idx: Vec<usize> = (0..items.len()).filter(|&i| st[i].is_ok()).collect();
    let m = idx.len();
    if m == 0 {
        return Ok(());
    }
    let pk_len = 2 * s.n;
    let pk_rows = Rows::registered(reg, pk_len, idx.iter().map(|&i| Some(items[i].pk)));
    let sig_rows = Rows::registered(reg, s.sig, idx.iter().map(|&i| Some(items[i].sig)));
    let staged_pk = if pk_rows.is_some() { 0 } else { m * pk_len };
    let staged_sig = if sig_rows.is_some() { 0 } else { m * s.sig };
    let bytes = m * JOB_BYTES + staged_pk + staged_sig;
    let mut stage = w.take_host("slh_vf_stage", bytes)?;
    let mut out = w.take_host("slh_vf_out", m * 4)?;
    let h = &mut stage.bytes()?[..bytes];
    let (jobs_h, rest) = h.split_at_mut(m * JOB_BYTES);
    let (pk_h, sig_h) = rest.split_at_mut(staged_pk);
    jobs(p, items, &idx, jobs_h);
    let jobs_d = w.dev("slh_vf_jobs", m * JOB_BYTES)?;
    let pk_d = w.dev("slh_vf_pk", m * pk_len)?;
    let sig_d = w.dev("slh_vf_sig", m * s.sig)?;
    let ok_d = w.dev("slh_vf_ok", m)?;
    w.htod(jobs_d, jobs_h)?;
    match &pk_rows {
        Some(rows) => hostio::gather(w, &k.io, rows, pk_d, pk_len, "slh_vf_pk_rows")?,
        None => {
            pk_h.par_chunks_mut(pk_len)
                .zip(idx.par_iter())
                .with_min_len(ROWS_PER_TASK)
                .for_each(|(d, &i)| d.copy_from_slice(items[i].pk));
            w.htod(pk_d, pk_h)?;
        }
    }
    match &sig_rows {
        Some(rows) => hostio::gather(w, &k.io, rows, sig_d, s.sig, "slh_vf_sig_rows")?,
        None => {
            sig_h
                .par_chunks_mut(s.sig)
                .zip(idx.par_iter())
                .with_min_len(ROWS_PER_TASK)
                .for_each(|(d, &i)| d.copy_from_slice(items[i].sig));
            w.htod(sig_d, sig_h)?;
        }
    }
    k.verify(w, jobs_d, pk_d, (sig_d, s.sig), ok_d, m)?;
    let o = &mut out.bytes()?[..m * 4];
    w.dtoh(o, ok_d)?;
    w.end_phase(Phase::Staging);
    w.sync()?;
    w.end_phase(Phase::GpuWait);
    for (j, &i) in idx.iter().enumerate() {
        if o[4 * j..4 * j + 4] != [1, 0, 0, 0] {
            st[i] = Err(Error::VerifyFailed);
        }
    }
    w.end_phase(Phase::Unpacking);
    Ok(())
}
