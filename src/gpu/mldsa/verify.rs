//! ML-DSA verification (FIPS 204 Alg. 3/5/8) on the GPU. tr = H(pk) and mu are computed
//! on the GPU: hashing every pk on the host would cost more than the rest of the host work.
//! Items sharing a public key (a key handle) expand it (A-hat, tr) once.

use super::kernels::{Kernels, CM_WORDS};
use super::keys::{DeviceKeys, KeyIndex};
use super::message::{DeviceRegions, Regions};
use crate::backend::VerifyItem;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio::{self, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{Phase, Worker, ROWS_PER_TASK};
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;

/// Verifies `n` items on the device: the distinct public keys (`pks`: rows of pk_len, and
/// each item's index), sigs (n * sig_stride), and per item a message region (`msgs`):
/// 64 free bytes (for tr) then M', or mu itself. Returns the verdicts on the device (u32 per
/// item, 0 = valid).
pub fn verify_dev(
    w: &mut Worker,
    k: &Kernels,
    n: usize,
    pks: DeviceKeys,
    sig: Dev<u8>,
    msgs: &DeviceRegions,
) -> Result<Dev<u32>, DriverError> {
    let g = &k.g;
    let (keys, pk, kidx) = (pks.count, pks.rows, pks.idx);
    let hbuf = w.dev("vf_hbuf", n * g.hbuf_len)?;
    let c = w.dev("vf_c", n * CM_WORDS)?; // SampleInBall masks
    let hint = w.dev("vf_hint", n * g.k * 8)?;
    let vstat = w.dev("vf_vstat", n)?;
    let a = w.dev("a_hat", keys * g.k * g.l * 256)?;
    let result = w.dev("vf_result", n)?;
    let (arena, off, mlen) = (msgs.arena, msgs.off, msgs.len);
    // tr once per shared key; with a key per item `verify_prep` hashes it in the same pass.
    let tr = if keys < n {
        let tr = w.dev("vf_tr", keys * 64)?;
        k.verify_tr(w, pk, tr, keys)?;
        tr
    } else {
        Dev::null()
    };
    k.verify_prep(
        w, pk, tr, kidx, sig, arena, off, mlen, hbuf, c, hint, vstat, n,
    )?;
    k.expand_a(w, pk, g.pk_len, a, keys)?;
    k.verify_w(w, a, kidx, pk, sig, c, hint, vstat, hbuf, n)?;
    k.verify_final(w, hbuf, sig, vstat, result, n)?;
    Ok(result)
}

/// One chunk end to end. Public keys and signatures in registered memory (`reg`) go to the
/// device without a host copy; the message regions are always staged (about 100 bytes each).
pub fn verify_chunk(
    w: &mut Worker,
    k: &Kernels,
    reg: &Ranges,
    items: &[VerifyItem<'_>],
    statuses: &mut [Status],
) -> Result<(), DriverError> {
    let g = &k.g;
    let mut idx = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        statuses[i] = if it.pk.len() != g.pk_len {
            Err(Error::BadLength)
        } else {
            g.variant
                .message(&it.msg)
                .and(if it.sig.len() == g.sig_len {
                    Ok(())
                } else {
                    Err(Error::VerifyFailed)
                })
        };
        if statuses[i].is_ok() {
            idx.push(i);
        }
    }
    let m = idx.len();
    if m == 0 {
        return Ok(());
    }
    let ki = KeyIndex::of(idx.iter().map(|&i| items[i].pk));
    let nk = ki.keys.len();
    // Registered rows go by DMA: the signatures, and the keys when each item has its own.
    let pk_rows = if ki.all_distinct() {
        Rows::registered(reg, g.pk_len, ki.keys.iter().map(|&s| Some(s)))
    } else {
        None
    };
    let sig_rows = Rows::registered(reg, g.sig_len, idx.iter().map(|&i| Some(items[i].sig)));
    let regions = Regions::of(g.variant, idx.iter().map(|&i| &items[i].msg));
    let staged_pk = if pk_rows.is_some() { 0 } else { nk * g.pk_len };
    let staged_sig = if sig_rows.is_some() {
        0
    } else {
        m * g.sig_stride
    };
    let bytes = staged_pk + staged_sig + m * 4 + regions.host_bytes();
    let mut stage = w.take_host("vf_stage", bytes)?;
    let mut out = w.take_host("vf_out", m * 4)?;
    w.start_chunk(ChunkOp::MlDsaVerify);
    let h = &mut stage.bytes()?[..bytes];
    let (pk_h, rest) = h.split_at_mut(staged_pk);
    let (sig_h, rest) = rest.split_at_mut(staged_sig);
    let (kidx_h, msg_h) = rest.split_at_mut(m * 4);
    for (d, s) in kidx_h.chunks_exact_mut(4).zip(ki.idx_bytes()) {
        d.copy_from_slice(&s);
    }
    let pk_d = w.dev("vf_pk", nk * g.pk_len)?;
    let sig_d = w.dev("vf_sig", m * g.sig_stride)?;
    let kidx_d = w.dev("vf_kidx", m)?;
    match &pk_rows {
        Some(rows) => hostio::gather(w, &k.io, rows, pk_d, g.pk_len, "vf_pk_rows")?,
        None => {
            pk_h.par_chunks_mut(g.pk_len)
                .zip(ki.keys.par_iter())
                .with_min_len(ROWS_PER_TASK)
                .for_each(|(p, key)| p.copy_from_slice(key));
            w.htod(pk_d, pk_h)?;
        }
    }
    match &sig_rows {
        Some(rows) => hostio::gather(w, &k.io, rows, sig_d, g.sig_stride, "vf_sig_rows")?,
        None => {
            sig_h
                .par_chunks_mut(g.sig_stride)
                .zip(idx.par_iter())
                .with_min_len(ROWS_PER_TASK)
                .for_each(|(s, &i)| s[..g.sig_len].copy_from_slice(items[i].sig));
            w.htod(sig_d, sig_h)?;
        }
    }
    w.htod(kidx_d, kidx_h)?;
    let msgs = regions.stage(w, idx.iter().map(|&i| &items[i].msg), msg_h)?;
    let pks = DeviceKeys {
        count: nk,
        rows: pk_d,
        idx: kidx_d,
    };
    let res_d = verify_dev(w, k, m, pks, sig_d, &msgs)?;
    let o = &mut out.bytes()?[..m * 4];
    w.dtoh(o, res_d)?;
    w.end_phase(Phase::Staging);
    w.sync()?;
    w.end_phase(Phase::GpuWait);
    for (j, &i) in idx.iter().enumerate() {
        if o[4 * j..4 * j + 4] != [0, 0, 0, 0] {
            statuses[i] = Err(Error::VerifyFailed);
        }
    }
    w.end_phase(Phase::Unpacking);
    Ok(())
}
