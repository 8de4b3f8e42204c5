//! ML-DSA (FIPS 204) and Dilithium round 3 on the GPU: batches cut into chunks that the
//! scheduler spreads over every worker of every device.
//!
//! * [`kernels`]: the sizes the kernels share with the host (as `-D` definitions), the module
//!   of one parameter set and a typed launcher per kernel.
//! * [`keygen`], [`sign`], [`verify`]: one chunk end to end on a worker's stream.
//! * [`message`]: a chunk's messages as the kernels read them.
//! * [`bench`]: kernel-only timing behind [`kernel_throughput`].
//!
//! Kernel design: `kernels/README.md`.

mod bench;
#[cfg(test)]
mod emulated;
mod kernels;
mod keygen;
mod keys;
mod message;
mod sign;
mod verify;

use crate::backend::{cpu_backend, SignItem, VerifyItem};
use crate::gpu::config::GpuConfig;
use crate::gpu::device;
use crate::gpu::engine::{Bound, DeviceEngine, FailureInjection};
use crate::gpu::hostmem;
use crate::gpu::scheduler::{chunk_sizes, cut, cut_mut, keygen_chunks, run_chunks, KeyLens};
use crate::mldsa::ParamSet;
use crate::{Error, Status};
use cudarc::driver::CudaContext;
use rayon::prelude::*;
use std::sync::Arc;

pub use kernels::Kernels;

/// The NVRTC -D definitions of `p`.
pub fn kernel_defines(p: ParamSet) -> Vec<String> {
    kernels::defines(p)
}

/// One device's kernels for every parameter set, indexed by [`set_index`].
pub type SetKernels = [Kernels; 6];

/// Index of `p`'s kernels in [`SetKernels`] (the order of `ParamSet::EVERY`).
pub fn set_index(p: ParamSet) -> usize {
    match p {
        ParamSet::MlDsa44 => 0,
        ParamSet::MlDsa65 => 1,
        ParamSet::MlDsa87 => 2,
        ParamSet::Dilithium2 => 3,
        ParamSet::Dilithium3 => 4,
        ParamSet::Dilithium5 => 5,
    }
}

/// Compiles (or reads from the cache) and loads every set's kernels onto `ctx`, the six sets
/// in parallel (a cache hit makes each a file read).
pub fn load(
    ctx: &Arc<CudaContext>,
    arch: (i32, i32),
    cfg: &GpuConfig,
) -> Result<SetKernels, String> {
    let loaded: Vec<Result<Kernels, String>> = ParamSet::EVERY
        .par_iter()
        .map(|&p| Kernels::load(ctx, arch, p, cfg))
        .collect();
    let kernels: Vec<Kernels> = loaded.into_iter().collect::<Result<_, _>>()?;
    Ok(kernels
        .try_into()
        .unwrap_or_else(|_| unreachable!("one Kernels per set")))
}

/// ML-DSA.KeyGen over the devices in `units` (CPU for chunks no device could finish).
pub fn keygen(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
    statuses: &mut [Status],
) {
    let len = KeyLens {
        seed: 32,
        pk: p.public_key_len(),
        sk: p.secret_key_len(),
    };
    // Without seeds, each chunk draws its own into its pinned staging buffer (in bulk, on
    // its worker, overlapping other chunks' GPU work): no batch-sized buffer of secrets.
    let sizes = chunk_sizes(statuses.len(), cfg.keygen_chunk, cfg.ramp.mldsa_keygen);
    let chunks = keygen_chunks(&sizes, len, seeds, pks, sks, statuses);
    let reg = hostmem::snapshot();
    run_chunks(
        units,
        cfg.mldsa_workers,
        &sizes,
        chunks,
        |u, w, c| {
            match keygen::keygen_chunk(w, u.kernels, &reg, c.seeds, c.pks, c.sks) {
                Ok(drawn) => c.statuses.fill(drawn),
                Err(e) => return Err(format!("{e:?}")),
            }
            Ok(())
        },
        |c| cpu_backend().mldsa_keygen(p, c.seeds, c.pks, c.sks, c.statuses),
    )
}

/// ML-DSA signing over the devices in `units`.
pub fn sign(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    fail: &FailureInjection,
    p: ParamSet,
    items: &[SignItem<'_>],
    sigs: &mut [&mut [u8]],
    statuses: &mut [Status],
) {
    let reg = hostmem::snapshot();
    let sizes = chunk_sizes(items.len(), cfg.sign_chunk, cfg.ramp.mldsa_sign);
    let chunks: Vec<_> = cut(items, &sizes, 1)
        .into_iter()
        .zip(cut_mut(sigs, &sizes, 1))
        .zip(cut_mut(statuses, &sizes, 1))
        .collect();
    run_chunks(
        units,
        cfg.mldsa_sign_workers,
        &sizes,
        chunks,
        |u, w, ((it, sg), st)| {
            // Chunks running beside this one keep the GPU busy too: speculate less.
            let fill = u.engine.sign_fill(cfg.sign_fill);
            sign::sign_chunk(w, u.kernels, fill, &reg, it, sg, st).map_err(|e| format!("{e:?}"))?;
            fail.check()
        },
        |((it, sg), st)| cpu_backend().mldsa_sign(p, it, sg, st),
    )
}

/// ML-DSA verification over the devices in `units`.
pub fn verify(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    items: &[VerifyItem<'_>],
    statuses: &mut [Status],
) {
    let reg = hostmem::snapshot();
    let sizes = chunk_sizes(items.len(), cfg.chunk, cfg.ramp.mldsa_verify);
    let chunks: Vec<_> = cut(items, &sizes, 1)
        .into_iter()
        .zip(cut_mut(statuses, &sizes, 1))
        .collect();
    run_chunks(
        units,
        cfg.mldsa_workers,
        &sizes,
        chunks,
        |u, w, (it, st)| {
            verify::verify_chunk(w, u.kernels, &reg, it, st).map_err(|e| format!("{e:?}"))
        },
        |(it, st)| cpu_backend().mldsa_verify(p, it, st),
    )
}

/// An ML-DSA operation, for kernel-only measurements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Keygen,
    Sign,
    Verify,
}

/// Most items kept resident for a kernel-only measurement: the rate has long saturated by
/// then, and 1M ML-DSA-87 signing tasks would need about 100 GB of device memory.
const MAX_RESIDENT: usize = 1 << 18;

/// Kernel-only throughput (ops/s) of `op` on `n` items whose inputs are already resident on
/// device `e`, timed with CUDA events (no host transfers). `n` above 262144 is measured on
/// 262144 items.
pub fn kernel_throughput(
    e: &DeviceEngine,
    k: &Kernels,
    p: ParamSet,
    op: Op,
    n: usize,
) -> Result<f64, Error> {
    let mut w = e.workers[0].lock().unwrap_or_else(|e| e.into_inner());
    let n = n.clamp(1, MAX_RESIDENT);
    // One run of n items: staging sized for it alone.
    w.plan(n, n);
    let m = bench::throughput(&mut w, k, p, op, n).map_err(device::device_error)?;
    if m.unverified > 0 {
        // The benchmark's own signatures must verify, or the figure means nothing.
        device::log(&format!(
            "kernel_throughput: {} of {n} signatures failed to verify",
            m.unverified
        ));
        return Err(Error::Device);
    }
    Ok(m.ops_per_s)
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
        for p in ParamSet::EVERY {
            let ptx = kernels::compile((9, 0), p, &cfg).unwrap_or_else(|e| panic!("{e}"));
            for k in kernels::names() {
                assert!(ptx.contains(&format!(".entry {k}(")), "{k} missing");
            }
        }
    }
}
