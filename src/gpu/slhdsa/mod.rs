//! SLH-DSA (FIPS 205) keygen, sign and verify on the GPU for all twelve parameter sets,
//! bit-identical to `crate::slhdsa`.
//!
//! * [`kernels`]: the set's numbers the kernels share with the host (as `-D` definitions), the
//!   job rows, the module of one parameter set and a typed launcher per kernel.
//! * [`keys`]: the distinct keys of a chunk (each key's context and top-tree leaves built once).
//! * [`keygen`], [`sign`], [`verify`]: one chunk end to end on a worker's stream.
//! * [`bench`]: kernel-only throughput and the hash ceilings (SHA-256 compressions, Keccak-f
//!   permutations per second).
//!
//! Every hash of the trees and chains runs on the GPU; the host checks shapes, computes each
//! message's R and H_msg (a few hash calls over the message) and copies. A chunk that fails on
//! the GPU is redone on the CPU.

mod bench;
#[cfg(test)]
mod emulated;
mod kernels;
mod keygen;
mod keys;
mod sign;
mod verify;

use crate::backend::{cpu_backend, SlhSignItem, SlhVerifyItem};
use crate::gpu::config::{
    GpuConfig, SLHDSA_KEYGEN_LEAVES, SLHDSA_SIGN_LEAVES, SLHDSA_VERIFY_BYTES,
};
use crate::gpu::engine::Bound;
use crate::gpu::hostmem;
use crate::gpu::scheduler::{chunk_sizes, cut, cut_mut, keygen_chunks, run_chunks, KeyLens};
use crate::slhdsa::ParamSet;
use crate::Status;

pub use bench::{hash_ceilings, kernel_throughput, Ceilings, SlhOp};
pub use kernels::Kernels;

/// The NVRTC -D definitions of `p`.
pub fn kernel_defines(p: ParamSet) -> Vec<String> {
    kernels::defines(p)
}

/// Compiles (or reads from the cache) and loads `p`'s kernels onto `ctx`.
pub fn load(
    ctx: &std::sync::Arc<cudarc::driver::CudaContext>,
    p: ParamSet,
    cfg: &GpuConfig,
) -> Result<Kernels, String> {
    Kernels::load(ctx, p, cfg)
}

/// Items per chunk of each operation for set `p`.
fn keygen_chunk(p: ParamSet) -> usize {
    (SLHDSA_KEYGEN_LEAVES >> p.params().hp).max(1)
}

fn sign_chunk(p: ParamSet) -> usize {
    let q = p.params();
    (SLHDSA_SIGN_LEAVES / (q.d << q.hp)).max(1)
}

/// slh_keygen_internal over the devices in `units`; `seeds` (SK.seed || SK.prf || PK.seed per
/// item) `None` draws them (CPU for chunks no device could finish).
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
        seed: p.seed_len(),
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
            let mut v = zeroize::Zeroizing::new(vec![0u8; n * p.seed_len()]);
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
    let sizes = chunk_sizes(n, keygen_chunk(p), false);
    let chunks = keygen_chunks(&sizes, len, Some(seeds), pks, sks, statuses);
    let reg = hostmem::snapshot();
    run_chunks(
        units,
        cfg.mldsa_workers,
        &sizes,
        chunks,
        |u, w, c| {
            let seeds = c.seeds.expect("drawn above");
            keygen::keygen_chunk(w, u.kernels, &reg, seeds, c.pks, c.sks)
                .map_err(|e| format!("{e:?}"))?;
            c.statuses.iter_mut().for_each(|x| *x = Ok(()));
            Ok(())
        },
        |c| cpu_backend().slhdsa_keygen(p, c.seeds, c.pks, c.sks, c.statuses),
    )
}

/// slh_sign over the devices in `units`.
pub fn sign(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    items: &[SlhSignItem<'_>],
    sigs: &mut [&mut [u8]],
    statuses: &mut [Status],
) {
    let sizes = chunk_sizes(items.len(), sign_chunk(p), false);
    let reg = hostmem::snapshot();
    let chunks: Vec<_> = cut(items, &sizes, 1)
        .into_iter()
        .zip(cut_mut(sigs, &sizes, 1))
        .zip(cut_mut(statuses, &sizes, 1))
        .collect();
    run_chunks(
        units,
        cfg.mldsa_workers,
        &sizes,
        chunks,
        |u, w, ((it, sg), st)| {
            sign::sign_chunk(w, u.kernels, p, &reg, it, sg, st).map_err(|e| format!("{e:?}"))
        },
        |((it, sg), st)| cpu_backend().slhdsa_sign(p, it, sg, st),
    )
}

/// slh_verify over the devices in `units`.
pub fn verify(
    units: &[Bound<'_, Kernels>],
    cfg: &GpuConfig,
    p: ParamSet,
    items: &[SlhVerifyItem<'_>],
    statuses: &mut [Status],
) {
    let chunk = SLHDSA_VERIFY_BYTES / p.signature_len();
    let sizes = chunk_sizes(items.len(), chunk, cfg.ramp.mldsa_verify);
    let reg = hostmem::snapshot();
    let chunks: Vec<_> = cut(items, &sizes, 1)
        .into_iter()
        .zip(cut_mut(statuses, &sizes, 1))
        .collect();
    run_chunks(
        units,
        cfg.slhdsa_verify_workers,
        &sizes,
        chunks,
        |u, w, (it, st)| {
            verify::verify_chunk(w, u.kernels, p, &reg, it, st).map_err(|e| format!("{e:?}"))
        },
        |(it, st)| cpu_backend().slhdsa_verify(p, it, st),
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
