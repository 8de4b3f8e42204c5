//! ML-DSA.KeyGen_internal (FIPS 204 Alg. 6) on the GPU.

use super::kernels::Kernels;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio;
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{Phase, Worker};
use cudarc::driver::DriverError;

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
/// ([`hostio::keys_out`]: by DMA straight into registered arrays). The chunk's status:
/// `Err(Rng)` when seeds could not be drawn (nothing is written then).
pub fn keygen_chunk(
    w: &mut Worker,
    k: &Kernels,
    reg: &Ranges,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
) -> Result<crate::Status, DriverError> {
    let n = pks.len() / k.g.pk_len;
    let mut stage = w.take_host("kg_stage", n * 32)?;
    w.start_chunk(ChunkOp::MlDsaKeygen);
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
    hostio::keys_out(w, reg, "kg_out", (pk, pks), (sk, sks))?;
    // The seeds are secret: do not leave them in the staging buffer.
    host[..n * 32].fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(Ok(()))
}
