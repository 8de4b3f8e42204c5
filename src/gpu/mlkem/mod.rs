//! ML-KEM (FIPS 203) keygen, encaps and decaps on the GPU, bit-identical to `crate::mlkem`.
//!
//! * [`kernels`]: the parameters the kernels share with the host (as `-D` definitions), the
//!   module of one parameter set and a typed launcher per kernel.
//! * [`keys`]: the distinct keys of a chunk (checked and expanded on the device once each) and
//!   their rows' way to the device.
//! * [`keygen`], [`encaps`], [`decaps`]: one chunk end to end on a worker's stream.
//! * [`bench`]: kernel-only throughput (inputs resident on the device).
//!
//! Hashing, sampling, the NTTs, compression, encoding, the key checks (FIPS 203 7.2, 7.3) and
//! the implicit rejection all run on the GPU; the host only validates lengths, finds the
//! distinct keys and copies. A chunk that fails on the GPU is redone on the CPU.

mod bench;
mod decaps;
#[cfg(test)]
mod emulated;
mod encaps;
mod kernels;
mod keygen;
mod keys;

use crate::backend::{cpu_backend, DecapsItem, EncapsItem};
use crate::gpu::config::GpuConfig;
use crate::gpu::engine::Bound;
use crate::gpu::hostmem;
use crate::gpu::scheduler::{chunk_sizes, cut, cut_mut, keygen_chunks, run_chunks, KeyLens};
use crate::mlkem::ParamSet;
use crate::Status;
use cudarc::driver::CudaContext;
use std::sync::Arc;

pub use bench::{kernel_throughput, KemOp};
pub use kernels::Kernels;

/// The NVRTC -D definitions of `p`.
pub fn kernel_defines(p: ParamSet) -> Vec<String> {
    kernels::defines(p)
}

/// One device's kernels for every parameter set, indexed by [`set_index`].
pub type SetKernels = [Kernels; 3];

pub fn set_index(p: ParamSet) -> usize {
    match p {
        ParamSet::MlKem512 => 0,
        ParamSet::MlKem768 => 1,
        ParamSet::MlKem1024 => 2,
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

/// ML-KEM.KeyGen_internal over the devices in `units`; `seeds` (d || z per item) `None` draws
/// them (CPU for chunks no device could finish).
pub fn keygen(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    seeds: Option<&[u8]>,
    eks: &mut [u8],
    dks: &mut [u8],
    statuses: &mut [Status],
) {
    let n = statuses.len();
    let len = KeyLens {
        seed: 64,
        pk: p.encaps_key_len(),
        sk: p.decaps_key_len(),
    };
    if !len.check(seeds, eks, dks, statuses) {
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
    let sizes = chunk_sizes(n, cfg.mlkem_keygen_chunk, cfg.ramp.kem_keygen);
    let chunks = keygen_chunks(&sizes, len, Some(seeds), eks, dks, statuses);
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
        |c| cpu_backend().mlkem_keygen(p, c.seeds, c.pks, c.sks, c.statuses),
    )
}

/// ML-KEM.Encaps over the devices in `units`.
pub fn encaps(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    items: &[EncapsItem<'_>],
    cts: &mut [&mut [u8]],
    sss: &mut [&mut [u8]],
    statuses: &mut [Status],
) {
    let sizes = chunk_sizes(items.len(), cfg.mlkem_chunk, cfg.ramp.kem);
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
        |(((it, ct), ss), st)| cpu_backend().mlkem_encaps(p, it, ct, ss, st),
    )
}

/// ML-KEM.Decaps over the devices in `units`.
pub fn decaps(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    items: &[DecapsItem<'_>],
    sss: &mut [&mut [u8]],
    statuses: &mut [Status],
) {
    let sizes = chunk_sizes(items.len(), cfg.mlkem_chunk, cfg.ramp.kem);
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
        |((it, ss), st)| cpu_backend().mlkem_decaps(p, it, ss, st),
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
