//! ML-DSA.KeyGen_internal (FIPS 204 Alg. 6) on the GPU.

use super::hostmem::Ranges;
use super::module::Kernels;
use super::worker::{par_copy, Arg, Arg::*, Worker};
use super::{blocks, Geometry, BLOCK_POLY, BLOCK_STREAM};
use cudarc::driver::DriverError;
use rayon::prelude::*;

/// Runs keygen on `n` seeds already on the device at `xi`; returns the device pointers of
/// the packed public and secret keys (n * pk_len, n * sk_len bytes).
pub fn keygen_dev(
    w: &mut Worker,
    k: &Kernels,
    g: &Geometry,
    n: usize,
    xi: u64,
) -> Result<(u64, u64), DriverError> {
    let seeds = w.dev("kg_seeds", n * 128)?;
    let a = w.dev("a_hat", n * g.k * g.l * 1024)?;
    let s = w.dev("kg_s", n * (g.k + g.l) * 1024)?;
    let pk = w.dev("kg_pk", n * g.pk_len)?;
    let sk = w.dev("kg_sk", n * g.sk_len)?;
    let nn = U(n as u32);
    w.launch(
        k,
        "keygen_seed",
        blocks(n, BLOCK_STREAM),
        BLOCK_STREAM,
        &[P(xi), P(seeds), nn],
    )?;
    let kl = n * g.k * g.l;
    w.launch(
        k,
        "expand_a",
        blocks(kl, BLOCK_STREAM),
        BLOCK_STREAM,
        &[P(seeds), U(128), P(a), nn],
    )?;
    let ks = n * (g.k + g.l);
    w.launch(
        k,
        "expand_s",
        blocks(ks, BLOCK_STREAM),
        BLOCK_STREAM,
        &[P(seeds), P(s), nn],
    )?;
    let args: [Arg; 6] = [P(seeds), P(a), P(s), P(pk), P(sk), nn];
    w.launch(k, "keygen_main", n, BLOCK_POLY, &args)?;
    w.launch(
        k,
        "keygen_tr",
        blocks(n, BLOCK_STREAM),
        BLOCK_STREAM,
        &[P(pk), P(sk), nn],
    )?;
    Ok((pk, sk))
}

/// One chunk end to end: seeds in (or drawn here, in bulk, into the staging buffer), keys out
/// (host memory). Key arrays in registered memory (`reg`) are written by the copy engine
/// directly, with no host copy. The chunk's status: `Err(Rng)` when seeds could not be drawn
/// (nothing is written then).
pub fn keygen_chunk(
    w: &mut Worker,
    k: &Kernels,
    g: &Geometry,
    reg: &Ranges,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
) -> Result<crate::Status, DriverError> {
    let n = pks.len() / g.pk_len;
    let direct = reg.covers(pks) && reg.covers(sks);
    let out_bytes = if direct { 0 } else { n * (g.pk_len + g.sk_len) };
    let mut stage = w.take_host("kg_stage", n * 32)?;
    let mut out = w.take_host("kg_out", out_bytes)?;
    w.lap(3);
    let r = (|| {
        let host = stage.as_mut_slice()?;
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
        let (pk, sk) = keygen_dev(w, k, g, n, xi)?;
        if direct {
            // One copy per driver registration the arrays span.
            for (dst, src) in [(&mut *pks, pk), (&mut *sks, sk)] {
                let base = dst.as_ptr() as usize;
                for (at, len) in reg.pieces(base, dst.len()) {
                    w.dtoh(
                        &mut dst[at - base..at - base + len],
                        src + (at - base) as u64,
                    )?;
                }
            }
            w.lap(0);
            w.sync()?;
            w.lap(1);
        } else {
            let o = out.as_mut_slice()?;
            let (opk, osk) = o.split_at_mut(n * g.pk_len);
            let osk = &mut osk[..n * g.sk_len];
            w.dtoh(opk, pk)?;
            w.dtoh(osk, sk)?;
            w.lap(0);
            w.sync()?;
            w.lap(1);
            par_copy(pks, opk);
            par_copy(sks, osk);
            // The secret keys do not stay in the staging buffer.
            osk.par_chunks_mut(1 << 16).for_each(|c| c.fill(0));
        }
        // The seeds are secret: do not leave them in the staging buffer.
        host[..n * 32].fill(0);
        w.lap(2);
        Ok(Ok(()))
    })();
    w.put_host("kg_stage", stage);
    w.put_host("kg_out", out);
    r
}
