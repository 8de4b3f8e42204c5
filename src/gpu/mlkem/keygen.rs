//! ML-KEM.KeyGen_internal (FIPS 203 Algorithm 16) for one chunk: G per item, ŝ and ê one
//! thread per (item, j), t̂ one thread per (item, i) with Â sampled on the fly, then
//! dk = dk_pke || ek || H(ek) || z per item.

use super::kernels::Kernels;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio;
use crate::gpu::hostmem::Ranges;
use crate::gpu::worker::{Phase, Worker};
use cudarc::driver::DriverError;

/// One chunk end to end: seeds d || z in, keys out ([`hostio::keys_out`]: by DMA straight
/// into registered arrays).
pub fn keygen_chunk(
    w: &mut Worker,
    k: &Kernels,
    reg: &Ranges,
    seeds: &[u8],
    eks: &mut [u8],
    dks: &mut [u8],
) -> Result<(), DriverError> {
    w.start_chunk(ChunkOp::KemKeygen);
    let s = &k.s;
    let n = seeds.len() / 64;
    let mut stage = w.take_host("mlkem_kg_stage", n * 64)?;
    let host = &mut stage.bytes()?[..n * 64];
    host.copy_from_slice(seeds);
    let d_seeds = w.dev("mlkem_kg_seeds", n * 64)?;
    let rs = w.dev("mlkem_kg_rs", n * 64)?;
    let shat = w.dev("mlkem_kg_shat", n * s.k * 256)?;
    let ehat = w.dev("mlkem_kg_ehat", n * s.k * 256)?;
    let ek = w.dev("mlkem_kg_ek", n * s.ek)?;
    let dk = w.dev("mlkem_kg_dk", n * s.dk)?;
    w.htod(d_seeds, host)?;
    k.keygen_g(w, d_seeds, rs, n)?;
    k.keygen_noise(w, rs, shat, ehat, dk, n)?;
    k.keygen_t(w, rs, shat, ehat, ek, n)?;
    k.keygen_finish(w, d_seeds, ek, dk, n)?;
    hostio::keys_out(w, reg, "mlkem_kg_out", (ek, eks), (dk, dks))?;
    // The seeds are secret: do not leave them in the staging buffer.
    host.fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(())
}
