//! The CTRU-Prime kernels: `kernels/ctru.cu` (with `kernels/keccak.cuh`) compiled by NVRTC once
//! per parameter set, cached on disk as PTX like the ML-DSA kernels.

use super::Sizes;
use crate::ctru::ParamSet;
use crate::gpu::module::{join_sources, load_functions, ptx_cached};
use crate::gpu::worker::{Arg, Worker};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaFunction, DriverError, LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::Arc;

const SOURCES: [(&str, &str); 3] = [
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

impl CtruKernels {
    /// Launches kernel `name` on `w`'s stream: `grid` blocks of `block` threads, `args` in
    /// kernel order (kept here rather than in `Worker` so the ML-DSA engine's launch API can
    /// evolve independently).
    pub fn launch(
        &self,
        w: &mut Worker,
        name: &'static str,
        grid: usize,
        block: u32,
        args: &[Arg],
    ) -> Result<(), DriverError> {
        if grid == 0 {
            return Ok(());
        }
        let mut b = w.stream.launch_builder(&self.funcs[name]);
        for a in args {
            match a {
                Arg::P(p) => b.arg(p),
                Arg::U(u) => b.arg(u),
            };
        }
        let cfg = LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0, // the kernels use static shared memory only
        };
        // With PQGPU_PROFILE: time each launch with events (synchronising; measuring only).
        let start = match w.profile {
            Some(_) => {
                let ev = w.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
                ev.record(&w.stream)?;
                Some(ev)
            }
            None => None,
        };
        // SAFETY: every pointer argument is a live device buffer of this worker (or 0 where the
        // kernel documents a null meaning), sized by the caller for the kernel's indexing (n
        // items, padded rows, NP x NP matrices); the argument list matches the kernel's C
        // signature (u64 pointers, u32 scalars); the stream belongs to the worker.
        unsafe { b.launch(cfg) }?;
        if let (Some(start), Some(prof)) = (start, w.profile.as_mut()) {
            let end = w.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            end.record(&w.stream)?;
            end.synchronize()?;
            let e = prof.entry(name).or_default();
            e.0 += start.elapsed_ms(&end)? as f64;
            e.1 += 1;
        }
        Ok(())
    }
}

impl crate::gpu::hostio::Launch for CtruKernels {
    fn launch_on(
        &self,
        w: &mut Worker,
        name: &'static str,
        grid: usize,
        block: u32,
        args: &[Arg],
    ) -> Result<(), DriverError> {
        self.launch(w, name, grid, block, args)
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
