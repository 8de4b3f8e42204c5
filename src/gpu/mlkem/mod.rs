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

use crate::backend::cpu_backend;
use crate::gpu::config::GpuConfig;
use crate::gpu::kem::{Cut, Family};
use crate::gpu::scheduler::KeyLens;
use crate::mlkem::ParamSet;
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

/// ML-KEM on the shared KEM machinery: `FAMILY.keygen` (KeyGen_internal; `seeds`: d || z
/// per item, `None` draws them), `FAMILY.encaps`, `FAMILY.decaps` over the devices of a call.
pub const FAMILY: Family<Kernels, ParamSet> = Family {
    cut: |cfg, keygen| Cut {
        chunk: if keygen {
            cfg.mlkem_keygen_chunk
        } else {
            cfg.mlkem_chunk
        },
        ramp: if keygen {
            cfg.ramp.kem_keygen
        } else {
            cfg.ramp.kem
        },
        workers: if keygen {
            cfg.mlkem_keygen_workers
        } else {
            cfg.kem_workers
        },
    },
    lens: |p| KeyLens {
        seed: 64,
        pk: p.encaps_key_len(),
        sk: p.decaps_key_len(),
    },
    keygen: keygen::keygen_chunk,
    encaps: encaps::encaps_chunk,
    decaps: decaps::decaps_chunk,
    cpu_keygen: |p, seeds, eks, dks, st| cpu_backend().mlkem_keygen(p, seeds, eks, dks, st),
    cpu_encaps: |p, items, cts, sss, st| cpu_backend().mlkem_encaps(p, items, cts, sss, st),
    cpu_decaps: |p, items, sss, st| cpu_backend().mlkem_decaps(p, items, sss, st),
};

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
