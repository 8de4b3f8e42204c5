//! slh_keygen_internal (FIPS 205 Alg. 18) for one chunk: each seed's context, the top tree's
//! leaves one thread per (item, leaf), then its root and the key rows one thread per item.

use super::kernels::{Kernels, CTX_BYTES};
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio;
use crate::gpu::hostmem::Ranges;
use crate::gpu::worker::{Phase, Worker};
use cudarc::driver::DriverError;

/// One chunk end to end: seeds SK.seed || SK.prf || PK.seed in, keys out
/// ([`hostio::keys_out`]: by DMA straight into registered arrays).
pub fn keygen_chunk(
    w: &mut Worker,
    k: &Kernels,
    reg: &Ranges,
    seeds: &[u8],
    pks: &mut [u8],
    sks: &mut [u8],
) -> Result<(), DriverError> {
    w.start_chunk(ChunkOp::SlhDsa);
    let s = &k.s;
    let seed_len = 3 * s.n;
    let n = seeds.len() / seed_len;
    let mut stage = w.take_host("slh_kg_stage", n * seed_len)?;
    let host = &mut stage.bytes()?[..n * seed_len];
    host.copy_from_slice(seeds);
    let d_seeds = w.dev("slh_kg_seeds", n * seed_len)?;
    let ctx = w.dev("slh_kg_ctx", n * CTX_BYTES)?;
    let leaves = w.dev("slh_kg_leaves", n * s.leaves * s.n)?;
    let pk = w.dev("slh_kg_pk", n * 2 * s.n)?;
    let sk = w.dev("slh_kg_sk", n * 4 * s.n)?;
    w.htod(d_seeds, host)?;
    k.prep(w, d_seeds, seed_len, (0, 2 * s.n), ctx, n)?;
    k.keygen_leaves(w, ctx, leaves, n)?;
    k.keygen_top(w, d_seeds, ctx, leaves, (pk, sk), n)?;
    hostio::keys_out(w, reg, "slh_kg_out", (pk, pks), (sk, sks))?;
    // The seeds are secret: do not leave them in the staging buffer.
    host.fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(())
}
