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

use crate::backend::cpu_backend;
use crate::ctru::ParamSet;
use crate::gpu::config::GpuConfig;
use crate::gpu::kem::{Cut, Family};
use crate::gpu::scheduler::KeyLens;
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

/// CTRU-Prime on the shared KEM machinery: `FAMILY.keygen` (`seeds`: 64 bytes per item,
/// `None` draws them), `FAMILY.encaps`, `FAMILY.decaps` over the devices of a call.
pub const FAMILY: Family<Kernels, ParamSet> = Family {
    cut: |cfg, keygen| Cut {
        chunk: cfg.ctru_chunk,
        ramp: if keygen {
            cfg.ramp.kem_keygen
        } else {
            cfg.ramp.kem
        },
        workers: cfg.kem_workers,
    },
    lens: |p| KeyLens {
        seed: 64,
        pk: p.public_key_len(),
        sk: p.secret_key_len(),
    },
    keygen: keygen::keygen_chunk,
    encaps: encaps::encaps_chunk,
    decaps: decaps::decaps_chunk,
    cpu_keygen: |p, seeds, pks, sks, st| cpu_backend().kem_keygen(p, seeds, pks, sks, st),
    cpu_encaps: |p, items, cts, sss, st| cpu_backend().kem_encaps(p, items, cts, sss, st),
    cpu_decaps: |p, items, sss, st| cpu_backend().kem_decaps(p, items, sss, st),
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
