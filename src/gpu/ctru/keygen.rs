//! CTRU-Prime KEM.KeyGen (spec 5.2, 5.6) for one chunk: SHAKE256 and CBD per thread, every
//! f^-1 by batch inversion over a product tree ([`tree`]; or the divstep inversion one warp
//! per key with `PQGPU_CTRU_INVERT=perkey`), h = g f^-1 on the CUDA cores (each key its own
//! product), then Encode(h), PackF(f) and sk assembly per thread.

use super::module::CtruKernels;
use super::product::{product, Engine, Kind, Operands};
use super::tree;
use super::Sizes;
use crate::gpu::hostio::Launch;
use crate::gpu::worker::{Arg::*, Worker};
use crate::gpu::{blocks, BLOCK_STREAM};
use cudarc::driver::DriverError;

pub fn keygen_chunk(
    w: &mut Worker,
    k: &CtruKernels,
    s: &Sizes,
    seeds: &[u8],
    pks: &mut [u8],
    sks: &mut [u8],
) -> Result<(), DriverError> {
    w.lap(3); // host phases: staging, GPU wait, unpacking (PQGPU_HOST_PROFILE)
    let n = seeds.len() / 64;
    let np = s.np;
    let nn = U(n as u32);
    let mut stage = w.take_host("ctru_kg_stage", n * 64)?;
    let mut out = w.take_host("ctru_kg_out", n * (s.pk + s.sk))?;
    let r = (|| {
        let host = stage.as_mut_slice()?;
        host[..n * 64].copy_from_slice(seeds);
        let d_seeds = w.dev("ctru_kg_seeds", n * 64)?;
        let f = w.dev("ctru_kg_f", n * np)?;
        let g = w.dev("ctru_kg_g", n * np)?;
        let finv = w.dev("ctru_kg_finv", n * np * 2)?;
        let h = w.dev("ctru_kg_h", n * np * 2)?;
        let pk = w.dev("ctru_kg_pk", n * s.pk)?;
        let sk = w.dev("ctru_kg_sk", n * s.sk)?;
        w.htod(d_seeds, &host[..n * 64])?;
        let grid = blocks(n, BLOCK_STREAM);
        k.launch(
            w,
            "keygen_sample",
            grid,
            BLOCK_STREAM,
            &[P(d_seeds), P(f), P(g), nn],
        )?;
        if tree::per_key() {
            // One warp per key, four keys per block.
            k.launch(w, "keygen_invert", n.div_ceil(4), 128, &[P(f), P(finv), nn])?;
        } else {
            tree::invert(w, k, s, f, finv, n)?;
        }
        let ops = Operands {
            keyvec: finv,
            key_idx: 0,
            lo: g,
            hi: 0,
            out: h,
            n,
            pad: n,
            groups: None,
        };
        product(w, k, s, Engine::CudaCore, Kind::Encrypt, &ops)?;
        let args = [P(h), P(f), P(d_seeds), P(pk), P(sk), nn];
        k.launch(w, "keygen_pack", grid, BLOCK_STREAM, &args)?;
        let o = out.as_mut_slice()?;
        let (opk, osk) = o.split_at_mut(n * s.pk);
        w.dtoh(opk, pk)?;
        w.dtoh(&mut osk[..n * s.sk], sk)?;
        w.lap(0);
        w.sync()?;
        w.lap(1);
        pks.copy_from_slice(opk);
        sks.copy_from_slice(&osk[..n * s.sk]);
        // Seeds and secret keys are secret: do not leave them in the staging buffers.
        host[..n * 64].fill(0);
        osk[..n * s.sk].fill(0);
        w.lap(2);
        Ok(())
    })();
    w.put_host("ctru_kg_stage", stage);
    w.put_host("ctru_kg_out", out);
    r
}
