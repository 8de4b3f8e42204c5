//! The CTRU-Prime kernels: `kernels/ctru.cu` (with `kernels/keccak.cuh`) compiled by NVRTC once
//! per parameter set, cached on disk as PTX like the ML-DSA kernels.

use super::Sizes;
use crate::ctru::ParamSet;
use crate::gpu::module::{join_sources, load_functions, ptx_cached};
use crate::gpu::worker::{Arg, Worker};
use cudarc::driver::{CudaContext, CudaFunction, DriverError};
use std::collections::HashMap;
use std::sync::Arc;

pub(super) const SOURCES: [(&str, &str); 3] = [
    (
        "kernels/keccak.cuh",
        include_str!("../../../kernels/keccak.cuh"),
    ),
    (
        "kernels/hostio.cuh",
        include_str!("../../../kernels/hostio.cuh"),
    ),
    ("kernels/ctru.cu", include_str!("../../../kernels/ctru.cu")),
];

const KERNELS: [&str; 18] = [
    "gather_rows",
    "scatter_rows",
    "encaps_hash",
    "keygen_sample",
    "decaps_kbar",
    "encaps_finish",
    "decaps_unpack",
    "decaps_decode",
    "decaps_finish",
    "keygen_invert",
    "tree_leaves",
    "tree_up",
    "tree_invert",
    "tree_down",
    "keygen_pack",
    "mul_cc",
    "expand_key",
    "mul_tc",
];

/// The loaded kernels of one parameter set.
pub struct CtruKernels {
    funcs: HashMap<&'static str, CudaFunction>,
}

impl crate::gpu::hostio::Launch for CtruKernels {
    /// Launches kernel `name` on `w`'s stream: `grid` blocks of `block` threads, `args` in
    /// kernel order (the worker's one launch path, shared with the ML-DSA kernels).
    fn launch(
        &self,
        w: &mut Worker,
        name: &'static str,
        grid: usize,
        block: u32,
        args: &[Arg],
    ) -> Result<(), DriverError> {
        w.launch_function(&self.funcs[name], name, grid, block, args)
    }
}

/// The -D options that fix one parameter set's sizes in the kernels.
pub fn defines(p: ParamSet) -> Vec<String> {
    let s = Sizes::of(p);
    [
        ("CTRU_N", s.n),
        ("CTRU_NP", s.np),
        ("CTRU_Q", p.q() as usize),
        ("CTRU_D2", p.q2_bits() as usize),
        ("CTRU_ETA", p.eta()),
        ("CTRU_MSGBYTES", p.msg_bytes()),
        ("CTRU_COIN_HALF", p.coin_half_bytes()),
        ("CTRU_PK_LEN", s.pk),
        ("CTRU_CT_LEN", s.ct),
        ("CTRU_CT_STRIDE", s.ct_stride),
        ("CTRU_SKPKE_LEN", p.sk_pke_len()),
    ]
    .iter()
    .map(|(k, v)| format!("-D{k}={v}"))
    .collect()
}

/// PTX of `p`'s kernels for compute capability `arch`.
pub fn compile(arch: (i32, i32), p: ParamSet) -> Result<String, String> {
    let mut options = vec![format!("--gpu-architecture=compute_{}{}", arch.0, arch.1)];
    options.extend(defines(p));
    let src = join_sources(&SOURCES);
    ptx_cached(
        "ctru",
        "kernels/ctru.cu (+ kernels/keccak.cuh, kernels/hostio.cuh)",
        p.name(),
        &src,
        options,
    )
}

/// Compiles (or reads from the cache) and loads `p`'s kernels.
pub fn load(ctx: &Arc<CudaContext>, p: ParamSet) -> Result<CtruKernels, String> {
    let arch = ctx
        .compute_capability()
        .map_err(|e| format!("compute capability: {e:?}"))?;
    let funcs = load_functions(ctx, compile(arch, p)?, &KERNELS, p.name())?;
    Ok(CtruKernels { funcs })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernels compile for sm_90 wherever libnvrtc exists (no GPU needed); skipped otherwise.
    #[test]
    fn kernels_compile_for_hopper() {
        if !crate::gpu::module::nvrtc_present() {
            println!("SKIPPED: libnvrtc not found");
            return;
        }
        for p in ParamSet::ALL {
            let ptx = compile((9, 0), p).unwrap_or_else(|e| panic!("{e}"));
            for k in KERNELS {
                assert!(ptx.contains(&format!(".entry {k}(")), "{k} missing");
            }
        }
    }
}
