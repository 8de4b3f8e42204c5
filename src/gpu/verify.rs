//! ML-DSA verification (FIPS 204 Alg. 3/5/8) on the GPU. tr = H(pk) and mu are computed
//! on the GPU: hashing every pk on the host would cost more than the rest of the host work.

use super::hostio::{self, Rows};
use super::hostmem::Ranges;
use super::message::Regions;
use super::module::Kernels;
use super::worker::{Arg::*, Worker};
use super::{blocks, Geometry, BLOCK_POLY, BLOCK_STREAM};
use crate::backend::VerifyItem;
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;

/// Verifies `n` items on the device: pks (n * pk_len), sigs (n * sig_stride), and per item a
/// message region in `arena` at `off[i]`: 64 free bytes (for tr) then M', or mu itself.
/// Returns the device pointer of the verdicts (u32 per item, 0 = valid).
#[allow(clippy::too_many_arguments)]
pub fn verify_dev(
    w: &mut Worker,
    k: &Kernels,
    g: &Geometry,
    n: usize,
    pk: u64,
    sig: u64,
    arena: u64,
    off: u64,
    mlen: u64,
) -> Result<u64, DriverError> {
    let hbuf = w.dev("vf_hbuf", n * g.hbuf_len)?;
    let c = w.dev("vf_c", n * 64)?; // SampleInBall masks (CM_WORDS u64)
    let hint = w.dev("vf_hint", n * g.k * 32)?;
    let vstat = w.dev("vf_vstat", n * 4)?;
    let a = w.dev("a_hat", n * g.k * g.l * 1024)?;
    let result = w.dev("vf_result", n * 4)?;
    let nn = U(n as u32);
    let args = [
        P(pk),
        P(sig),
        P(arena),
        P(off),
        P(mlen),
        P(hbuf),
        P(c),
        P(hint),
        P(vstat),
        nn,
    ];
    w.launch(
        k,
        "verify_prep",
        blocks(n, BLOCK_STREAM),
        BLOCK_STREAM,
        &args,
    )?;
    let kl = n * g.k * g.l;
    w.launch(
        k,
        "expand_a",
        blocks(kl, BLOCK_STREAM),
        BLOCK_STREAM,
        &[P(pk), U(g.pk_len as u32), P(a), nn],
    )?;
    let args = [P(a), P(pk), P(sig), P(c), P(hint), P(vstat), P(hbuf), nn];
    w.launch(k, "verify_w", n, BLOCK_POLY, &args)?;
    let args = [P(hbuf), P(sig), P(vstat), P(result), nn];
    w.launch(
        k,
        "verify_final",
        blocks(n, BLOCK_STREAM),
        BLOCK_STREAM,
        &args,
    )?;
    Ok(result)
}

/// One chunk end to end. Public keys and signatures in registered memory (`reg`) go to the
/// device without a host copy; the message regions are always staged (about 100 bytes each).
pub fn verify_chunk(
    w: &mut Worker,
    k: &Kernels,
    g: &Geometry,
    reg: &Ranges,
    items: &[VerifyItem<'_>],
    statuses: &mut [Status],
) -> Result<(), DriverError> {
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
    let direct = Rows::registered(reg, g.pk_len, idx.iter().map(|&i| Some(items[i].pk))).zip(
        Rows::registered(reg, g.sig_len, idx.iter().map(|&i| Some(items[i].sig))),
    );
    let regions = Regions::of(g.variant, idx.iter().map(|&i| &items[i].msg));
    let staged_rows = if direct.is_some() {
        0
    } else {
        m * (g.pk_len + g.sig_stride)
    };
    let bytes = staged_rows + regions.host_bytes();
    let mut stage = w.take_host("vf_stage", bytes)?;
    let mut out = w.take_host("vf_out", m * 4)?;
    w.lap(3);
    let r = (|| {
        let h = &mut stage.as_mut_slice()?[..bytes];
        let (rows_h, msg_h) = h.split_at_mut(staged_rows);
        let pk_d = w.dev("vf_pk", m * g.pk_len)?;
        let sig_d = w.dev("vf_sig", m * g.sig_stride)?;
        match &direct {
            Some((pks, sigs)) => {
                hostio::gather(w, k, pks, pk_d, g.pk_len, "vf_pk_rows")?;
                hostio::gather(w, k, sigs, sig_d, g.sig_stride, "vf_sig_rows")?;
            }
            None => {
                let (pk_h, sig_h) = rows_h.split_at_mut(m * g.pk_len);
                pk_h.par_chunks_mut(g.pk_len)
                    .zip(sig_h.par_chunks_mut(g.sig_stride))
                    .zip(idx.par_iter())
                    .for_each(|((p, s), &i)| {
                        p.copy_from_slice(items[i].pk);
                        s[..g.sig_len].copy_from_slice(items[i].sig);
                    });
                w.htod(pk_d, pk_h)?;
                w.htod(sig_d, sig_h)?;
            }
        }
        let msgs = regions.stage(w, idx.iter().map(|&i| &items[i].msg), msg_h)?;
        let res_d = verify_dev(w, k, g, m, pk_d, sig_d, msgs.arena, msgs.off, msgs.len)?;
        let o = &mut out.as_mut_slice()?[..m * 4];
        w.dtoh(o, res_d)?;
        w.lap(0);
        w.sync()?;
        w.lap(1);
        for (j, &i) in idx.iter().enumerate() {
            if o[4 * j..4 * j + 4] != [0, 0, 0, 0] {
                statuses[i] = Err(Error::VerifyFailed);
            }
        }
        w.lap(2);
        Ok(())
    })();
    w.put_host("vf_stage", stage);
    w.put_host("vf_out", out);
    r
}
