//! CTRU-Prime keygen, encaps and decaps on the GPU (issue 6), bit-identical to `crate::ctru`.
//!
//! * [`kernels`]: the sizes the kernels share with the host (as `-D` definitions), the module
//!   of one parameter set and a typed launcher per kernel.
//! * [`keys`]: the distinct keys of a chunk, decoded on the host once.
//! * [`product`]: the two ring-product engines and the choice between them.
//! * [`tree`]: KeyGen's f^-1 for a whole chunk by batch inversion over a product tree.
//! * [`keygen`], [`encaps`], [`decaps`]: one chunk end to end on a worker's stream.
//!
//! Hashing, sampling, compression, E8 coding, packing, the FO comparison and the key
//! selection all run on the GPU; the host only validates lengths, decodes each distinct key
//! once and copies. A chunk that fails on the GPU is redone on the CPU.
//!
//! Engines: a chunk whose items share one key (the server case) multiplies on the Tensor
//! Cores (int8 `mma.sync` against the key's expanded matrix); a chunk with few items per key,
//! and every keygen product, on the CUDA cores (exact schoolbook, one block per item). The
//! figures behind the choice are in BENCHMARKS.md.

mod decaps;
#[cfg(test)]
mod emulated;
mod encaps;
mod kernels;
mod keygen;
mod keys;
mod product;
mod tree;

use crate::backend::{cpu_backend, DecapsItem, EncapsItem};
use crate::ctru::ParamSet;
use crate::gpu::config::GpuConfig;
use crate::gpu::engine::Bound;
use crate::gpu::hostmem;
use crate::gpu::scheduler::{chunk_sizes, cut, cut_mut, keygen_chunks, run_chunks, KeyLens};
use crate::Status;
use cudarc::driver::CudaContext;
use std::sync::Arc;

pub use kernels::Kernels;

/// The NVRTC -D definitions of `p`.
pub fn kernel_defines(p: ParamSet) -> Vec<String> {
    kernels::defines(p)
}

/// One device's kernels for every parameter set, indexed by [`set_index`].
pub type SetKernels = [Kernels; 3];

pub fn set_index(p: ParamSet) -> usize {
    match p {
        ParamSet::Ctru653 => 0,
        ParamSet::Ctru761 => 1,
        ParamSet::Ctru1277 => 2,
    }
}

/// Compiles (or reads from the cache) and loads the three sets' kernels onto `ctx`, in
/// parallel (a cache hit makes each a file read).
pub fn load(ctx: &Arc<CudaContext>, cfg: &GpuConfig) -> Result<SetKernels, String> {
    let [a, m, c] = ParamSet::ALL;
    let (ka, (km, kc)) = rayon::join(
        || Kernels::load(ctx, a, cfg),
        || rayon::join(|| Kernels::load(ctx, m, cfg), || Kernels::load(ctx, c, cfg)),
    );
    Ok([ka?, km?, kc?])
}

/// CTRU-Prime KeyGen over the devices in `units` (CPU for chunks no device could finish).
pub fn keygen(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
    statuses: &mut [Status],
) {
    let n = statuses.len();
    let len = KeyLens {
        seed: 64,
        pk: p.public_key_len(),
        sk: p.secret_key_len(),
    };
    if !len.check(seeds, pks, sks, statuses) {
        return;
    }
    // Fresh seeds for the whole batch up front (the CPU redoes a failed chunk from them).
    let fresh;
    let seeds = match seeds {
        Some(x) => x,
        None => {
            let mut v = zeroize::Zeroizing::new(vec![0u8; n * 64]);
            if crate::rng::fill_bulk(&mut v).is_err() {
                statuses
                    .iter_mut()
                    .for_each(|x| *x = Err(crate::Error::Rng));
                return;
            }
            fresh = v;
            &fresh[..]
        }
    };
    let sizes = chunk_sizes(n, cfg.ctru_chunk, cfg.ramp.kem_keygen);
    let chunks = keygen_chunks(&sizes, len, Some(seeds), pks, sks, statuses);
    let reg = hostmem::snapshot();
    run_chunks(
        units,
        cfg.kem_workers,
        &sizes,
        chunks,
        |u, w, c| {
            let seeds = c.seeds.expect("drawn above");
            keygen::keygen_chunk(w, u.kernels, &reg, seeds, c.pks, c.sks)
                .map_err(|e| format!("{e:?}"))?;
            c.statuses.iter_mut().for_each(|x| *x = Ok(()));
            Ok(())
        },
        |c| cpu_backend().kem_keygen(p, c.seeds, c.pks, c.sks, c.statuses),
    )
}

/// CTRU-Prime Encaps over the devices in `units`.
pub fn encaps(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    items: &[EncapsItem<'_>],
    cts: &mut [&mut [u8]],
    sss: &mut [&mut [u8]],
    statuses: &mut [Status],
) {
    let sizes = chunk_sizes(items.len(), cfg.ctru_chunk, cfg.ramp.kem);
    let reg = hostmem::snapshot();
    let chunks: Vec<_> = cut(items, &sizes, 1)
        .into_iter()
        .zip(cut_mut(cts, &sizes, 1))
        .zip(cut_mut(sss, &sizes, 1))
        .zip(cut_mut(statuses, &sizes, 1))
        .collect();
    run_chunks(
        units,
        cfg.kem_workers,
        &sizes,
        chunks,
        |u, w, (((it, ct), ss), st)| {
            encaps::encaps_chunk(w, u.kernels, p, &reg, it, ct, ss, st)
                .map_err(|e| format!("{e:?}"))
        },
        |(((it, ct), ss), st)| cpu_backend().kem_encaps(p, it, ct, ss, st),
    )
}

/// CTRU-Prime Decaps over the devices in `units`.
pub fn decaps(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    items: &[DecapsItem<'_>],
    sss: &mut [&mut [u8]],
    statuses: &mut [Status],
) {
    let sizes = chunk_sizes(items.len(), cfg.ctru_chunk, cfg.ramp.kem);
    let reg = hostmem::snapshot();
    let chunks: Vec<_> = cut(items, &sizes, 1)
        .into_iter()
        .zip(cut_mut(sss, &sizes, 1))
        .zip(cut_mut(statuses, &sizes, 1))
        .collect();
    run_chunks(
        units,
        cfg.kem_workers,
        &sizes,
        chunks,
        |u, w, ((it, ss), st)| {
            decaps::decaps_chunk(w, u.kernels, p, &reg, it, ss, st).map_err(|e| format!("{e:?}"))
        },
        |((it, ss), st)| cpu_backend().kem_decaps(p, it, ss, st),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::nvrtc::nvrtc_present;

    /// The kernels compile for sm_90 wherever libnvrtc exists (no GPU needed); skipped otherwise.
    #[test]
    fn kernels_compile_for_hopper() {
        if !nvrtc_present() {
            println!("SKIPPED: libnvrtc not found");
            return;
        }
        let cfg = GpuConfig::read().expect("settings");
        for p in ParamSet::ALL {
            let ptx = kernels::compile((9, 0), p, &cfg).unwrap_or_else(|e| panic!("{e}"));
            for k in kernels::names() {
                assert!(ptx.contains(&format!(".entry {k}(")), "{k} missing");
            }
        }
    }
}
