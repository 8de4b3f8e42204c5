//! ML-DSA.KeyGen_internal (FIPS 204 Alg. 6) on the GPU.

use super::kernels::Kernels;
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{par_copy, Phase, Worker};
use cudarc::driver::DriverError;
use rayon::prelude::*;

/// Runs keygen on `n` seeds already on the device at `xi`; returns the packed public and
/// secret keys on the device (n * pk_len, n * sk_len bytes).
pub fn keygen_dev(
    w: &mut Worker,
    k: &Kernels,
    n: usize,
    xi: Dev<u8>,
) -> Result<(Dev<u8>, Dev<u8>), DriverError> {
    let g = &k.g;
    let seeds = w.dev("kg_seeds", n * 128)?;
    let a = w.dev("a_hat", n * g.k * g.l * 256)?;
    let s = w.dev("kg_s", n * (g.k + g.l) * 256)?;
    let pk = w.dev("kg_pk", n * g.pk_len)?;
    let sk = w.dev("kg_sk", n * g.sk_len)?;
    k.keygen_seed(w, xi, seeds, n)?;
    k.expand_a(w, seeds, 128, a, n)?;
    k.expand_s(w, seeds, s, n)?;
    k.keygen_main(w, seeds, a, s, pk, sk, n)?;
    k.keygen_tr(w, pk, sk, n)?;
    Ok((pk, sk))
}

/// One chunk end to end: seeds in (or drawn here, in bulk, into the staging buffer), keys out
/// (host memory). Key arrays in registered memory (`reg`) are written by the copy engine
/// directly, with no host copy. The chunk's status: `Err(Rng)` when seeds could not be drawn
/// (nothing is written then).
pub fn keygen_chunk(
    w: &mut Worker,
    k: &Kernels,
    reg: &Ranges,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
) -> Result<crate::Status, DriverError> {
    let g = &k.g;
    let n = pks.len() / g.pk_len;
    let direct = reg.covers(pks) && reg.covers(sks);
    let out_bytes = if direct { 0 } else { n * (g.pk_len + g.sk_len) };
    let mut stage = w.take_host("kg_stage", n * 32)?;
    let mut out = w.take_host("kg_out", out_bytes)?;
    w.start_chunk();
    let host = stage.bytes()?;
    match seeds {
        Some(s) => host[..n * 32].copy_from_slice(s),
        None => {
            if let Err(e) = crate::rng::fill_bulk(&mut host[..n * 32]) {
                return Ok(Err(e));
            }
        }
    }
    let xi = w.dev("kg_xi", n * 32)?;
    w.htod(xi, &host[..n * 32])?;
    let (pk, sk) = keygen_dev(w, k, n, xi)?;
    if direct {
        // One copy per driver registration the arrays span.
        for (dst, src) in [(&mut *pks, pk), (&mut *sks, sk)] {
            let base = dst.as_ptr() as usize;
            for (at, len) in reg.pieces(base, dst.len()) {
                w.dtoh(&mut dst[at - base..at - base + len], src.add(at - base))?;
            }
        }
        w.end_phase(Phase::Staging);
        w.sync()?;
        w.end_phase(Phase::GpuWait);
    } else {
        let o = out.bytes()?;
        let (opk, osk) = o.split_at_mut(n * g.pk_len);
        let osk = &mut osk[..n * g.sk_len];
        w.dtoh(opk, pk)?;
        w.dtoh(osk, sk)?;
        w.end_phase(Phase::Staging);
        w.sync()?;
        w.end_phase(Phase::GpuWait);
        par_copy(pks, opk);
        par_copy(sks, osk);
        // The secret keys do not stay in the staging buffer.
        osk.par_chunks_mut(1 << 16).for_each(|c| c.fill(0));
    }
    // The seeds are secret: do not leave them in the staging buffer.
    host[..n * 32].fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(Ok(()))
}
