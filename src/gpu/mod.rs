//! The CUDA backend: ML-DSA, ML-KEM and CTRU-Prime in large batches on one or more NVIDIA GPUs.
//!
//! One layer, three kernel families built on it as peers:
//!
//! * `config`: [`GpuConfig`](config::GpuConfig), read once when the engine opens.
//! * `device`: probe and context (no GPU: a clean `NoDevice`); `driver`: which process
//!   initialised the CUDA driver (a forked child of it cannot use the GPU, and says why).
//! * `nvrtc`: embedded kernel sources, NVRTC compile per parameter set, on-disk PTX cache.
//! * `launch`: typed device pointers, kernel handles resolved at load.
//! * `worker`: a stream with its memory pool (reused device buffers, pinned staging buffers
//!   lent under a guard), the one launch path, the host-phase clock.
//! * `hostmem`, `hostio`: caller memory registered with the driver, and rows moved between it
//!   and the device without staging copies.
//! * `engine`, `scheduler`: one engine per GPU (every visible device, or `PQGPU_DEVICES`),
//!   all fed from one chunk queue; a chunk that fails on a GPU moves to the healthy GPUs,
//!   and to the CPU when none is left.
//! * `kem`: what the KEM families share (their batches cut into chunks, the CPU for a chunk
//!   no device could finish).
//! * `mldsa/`, `mlkem/`, `ctru/`, `slhdsa/`: each family's kernels (sizes as `-D` definitions, one typed launcher
//!   per kernel) and its chunk pipelines.
//! * `backend`: the [`GpuBackend`], the process-wide instance, and the
//!   [`crate::backend::Backend`] implementation handing each call to its family.
//!
//! Batches are cut into chunks that a few workers per GPU (threads, each with its own stream)
//! run side by side, so memory stays bounded and one chunk's host work and copies overlap
//! another's kernels. Kernel design: `kernels/README.md`.

mod backend;
mod config;
mod ctru;
mod device;
mod driver;
#[cfg(test)]
mod emu;
mod engine;
mod hostio;
pub(crate) mod hostmem;
mod kem;
mod launch;
mod mldsa;
mod mlkem;
mod nvrtc;
mod scheduler;
mod slhdsa;
mod timeline;
mod worker;

pub use backend::{
    backend, device_count, device_description, hash_ceilings, kernel_throughput,
    mlkem_kernel_throughput, slhdsa_kernel_throughput, slhdsa_kernels_loaded, unavailable_reason,
    GpuBackend,
};
pub use driver::inherited_reason as cuda_inherited_reason;
pub use driver::initialised_by as cuda_initialised_by;
#[doc(hidden)]
pub use driver::simulate_initialised as simulate_cuda_initialised;
pub use mldsa::Op;
pub use mlkem::KemOp;
pub use slhdsa::{Ceilings, SlhOp};

/// The NVRTC `-D` definitions of the parameter set named `set` (e.g. `ML-DSA-65`,
/// `CTRU-Prime-761`), as the engine compiles it; `None` for an unknown name. For building the
/// kernels elsewhere (`examples/kernel_defines.rs`, the kernel source dump below).
pub fn kernel_defines(set: &str) -> Option<Vec<String>> {
    if let Some(p) = crate::mldsa::ParamSet::EVERY
        .into_iter()
        .find(|p| p.name() == set)
    {
        return Some(mldsa::kernel_defines(p));
    }
    if let Some(p) = crate::mlkem::ParamSet::ALL
        .into_iter()
        .find(|p| p.name() == set)
    {
        return Some(mlkem::kernel_defines(p));
    }
    if let Some(p) = crate::slhdsa::ParamSet::from_name(set) {
        return Some(slhdsa::kernel_defines(p));
    }
    crate::ctru::ParamSet::ALL
        .into_iter()
        .find(|p| p.name() == set)
        .map(ctru::kernel_defines)
}

#[cfg(test)]
mod tests {
    /// Writes each parameter set's final kernel source and NVRTC options to
    /// `$PQGPU_DUMP_KERNELS` (for comparing kernels across refactors with `cpp`; no NVRTC
    /// needed): `cargo test --release --lib dump_kernel_sources -- --ignored`.
    #[test]
    #[ignore]
    fn dump_kernel_sources() {
        let Some(dir) = crate::settings::test_env::dump_kernels() else {
            return;
        };
        std::fs::create_dir_all(&dir).unwrap();
        let sets = crate::mldsa::ParamSet::EVERY
            .iter()
            .map(|p| (p.name(), super::nvrtc::MLDSA.source()))
            .chain(
                crate::ctru::ParamSet::ALL
                    .iter()
                    .map(|p| (p.name(), super::nvrtc::CTRU.source())),
            )
            .chain(
                crate::mlkem::ParamSet::ALL
                    .iter()
                    .map(|p| (p.name(), super::nvrtc::MLKEM.source())),
            )
            .chain(
                crate::slhdsa::ParamSet::ALL
                    .iter()
                    .map(|p| (p.name(), super::nvrtc::SLHDSA.source())),
            );
        for (name, source) in sets {
            let defines = super::kernel_defines(name).unwrap();
            std::fs::write(dir.join(format!("{name}.cu")), source).unwrap();
            std::fs::write(dir.join(format!("{name}.opts")), defines.join("\n")).unwrap();
        }
    }
}
