//! CTRU-Prime KEM.KeyGen (spec 5.2, 5.6) for one chunk: SHAKE256 and CBD per thread, every
//! f^-1 by batch inversion over a product tree ([`tree`]; or the divstep inversion one warp
//! per key with `PQGPU_CTRU_INVERT=perkey` in `tuning` builds), h = g f^-1 on the CUDA cores
//! (each key its own product), then Encode(h), PackF(f) and sk assembly per thread.

use super::kernels::Kernels;
use super::product::{product, Kind, Operands};
use super::tree;
use crate::gpu::config::{ChunkOp, ProductEngine};
use crate::gpu::hostio;
use crate::gpu::hostmem::Ranges;
use crate::gpu::kem::Seeds;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{Phase, Worker};
use cudarc::driver::DriverError;

/// One chunk of `n` keys end to end: seeds in (drawn ones expanded here), keys out
/// ([`hostio::keys_out`]: by DMA straight into registered arrays).
pub fn keygen_chunk(
    w: &mut Worker,
    k: &Kernels,
    reg: &Ranges,
    n: usize,
    seeds: Seeds<'_>,
    pks: &mut [u8],
    sks: &mut [u8],
) -> Result<(), DriverError> {
    w.start_chunk(ChunkOp::KemKeygen);
    let s = &k.s;
    let np = s.np;
    let mut stage = w.take_host("ctru_kg_stage", n * 64)?;
    let host = stage.bytes()?;
    match seeds {
        Seeds::Given(x) => host[..n * 64].copy_from_slice(x),
        Seeds::Drawn(key) => crate::rng::expand(key, &mut host[..n * 64]),
    }
    let d_seeds = w.dev("ctru_kg_seeds", n * 64)?;
    let f = w.dev("ctru_kg_f", n * np)?;
    let g = w.dev("ctru_kg_g", n * np)?;
    let finv = w.dev("ctru_kg_finv", n * np)?;
    let h = w.dev("ctru_kg_h", n * np)?;
    let pk = w.dev("ctru_kg_pk", n * s.pk)?;
    let sk = w.dev("ctru_kg_sk", n * s.sk)?;
    w.htod(d_seeds, &host[..n * 64])?;
    k.keygen_sample(w, d_seeds, f, g, n)?;
    if k.per_key_invert {
        k.keygen_invert(w, f, finv, n)?;
    } else {
        tree::invert(w, k, f, finv, n)?;
    }
    let ops = Operands {
        keyvec: finv,
        key_idx: Dev::null(),
        lo: g,
        hi: Dev::null(),
        out: h,
        n,
        pad: n,
        groups: None,
        key_rows: None,
    };
    product(w, k, ProductEngine::CudaCore, Kind::Encrypt, &ops)?;
    k.keygen_pack(w, h, f, d_seeds, pk, sk, n)?;
    hostio::keys_out(w, reg, "ctru_kg_out", (pk, pks), (sk, sks))?;
    // The seeds are secret: do not leave them in the staging buffer.
    host[..n * 64].fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(())
}
