//! Kernel sources (embedded), NVRTC compilation per parameter set, and the on-disk PTX cache.

use crate::mldsa::{ParamSet, Variant};
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions, Ptx};
use sha3::{Digest, Sha3_256};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The kernel files, in the order they are concatenated; `#line` keeps NVRTC's messages
/// pointing at the right file.
const SOURCES: [(&str, &str); 3] = [
    (
        "kernels/keccak.cuh",
        include_str!("../../kernels/keccak.cuh"),
    ),
    (
        "kernels/hostio.cuh",
        include_str!("../../kernels/hostio.cuh"),
    ),
    ("kernels/mldsa.cu", include_str!("../../kernels/mldsa.cu")),
];

const KERNELS: [&str; 19] = [
    "gather_rows",
    "scatter_rows",
    "expand_a",
    "expand_s",
    "keygen_seed",
    "keygen_main",
    "keygen_tr",
    "sign_mu",
    "sign_rhopp",
    "sign_decode",
    "sign_schedule",
    "expand_mask",
    "sign_w",
    "sign_challenge",
    "sign_z",
    "sign_commit",
    "verify_prep",
    "verify_w",
    "verify_final",
];

/// The loaded kernels of one parameter set.
pub struct Kernels {
    funcs: HashMap<&'static str, CudaFunction>,
}

impl Kernels {
    pub fn get(&self, name: &str) -> &CudaFunction {
        &self.funcs[name]
    }
}

impl super::hostio::Launch for Kernels {
    fn launch(
        &self,
        w: &mut super::worker::Worker,
        name: &'static str,
        grid: usize,
        block: u32,
        args: &[super::worker::Arg],
    ) -> Result<(), cudarc::driver::DriverError> {
        w.launch(self, name, grid, block, args)
    }
}

fn defines(p: ParamSet) -> Vec<String> {
    [
        ("PARAM_K", p.k() as i64),
        ("PARAM_L", p.l() as i64),
        ("PARAM_ETA", p.eta() as i64),
        ("PARAM_TAU", p.tau() as i64),
        ("PARAM_GAMMA1_BITS", p.gamma1_bits() as i64),
        ("PARAM_GAMMA2", p.gamma2() as i64),
        ("PARAM_OMEGA", p.omega() as i64),
        ("PARAM_LAMBDA", p.lambda() as i64),
        // The round-3 differences (the "scheme" section of kernels/mldsa.cu).
        ("PARAM_ROUND3", (p.variant() == Variant::Round3) as i64),
    ]
    .iter()
    .map(|(k, v)| format!("-D{k}={v}"))
    .collect()
}

fn source() -> String {
    join_sources(&SOURCES)
}

/// Concatenates embedded kernel files, each behind a `#line` so NVRTC's log names the real file.
pub(crate) fn join_sources(sources: &[(&str, &str)]) -> String {
    sources
        .iter()
        .map(|(name, text)| format!("#line 1 \"{name}\"\n{text}\n"))
        .collect()
}

fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: nvrtcVersion writes two ints through valid pointers; the library was probed.
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

/// `$PQGPU_CACHE_DIR`, else `$XDG_CACHE_HOME/pqgpu`, else `~/.cache/pqgpu` (`settings`).
fn cache_dir() -> Option<PathBuf> {
    crate::settings::get().cache_dir.clone()
}

/// PTX of `src` compiled by NVRTC with `options` (which name the target architecture), read
/// from or written to the disk cache as `<stem>-<hash>.ptx`; the hash covers the sources, the
/// options and the NVRTC version. Errors name `files` and `set` and carry NVRTC's log.
pub(crate) fn ptx_cached(
    stem: &str,
    files: &str,
    set: &str,
    src: &str,
    options: Vec<String>,
) -> Result<String, String> {
    let nvrtc = nvrtc_version();
    let mut h = Sha3_256::new();
    h.update(src.as_bytes());
    for o in &options {
        h.update(o.as_bytes());
        h.update([0]);
    }
    h.update(format!("nvrtc {}.{}", nvrtc.0, nvrtc.1).as_bytes());
    let key: String = h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let path = cache_dir().map(|d| d.join(format!("{stem}-{key}.ptx")));
    if let Some(text) = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) {
        return Ok(text);
    }
    let opts = CompileOptions {
        options,
        name: Some(format!("{stem}.cu")),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(src, opts).map_err(|e| match e {
        CompileError::CompileError { log, .. } => {
            format!(
                "NVRTC failed to compile {files} for {set}:\n{}",
                log.to_string_lossy()
            )
        }
        other => format!("NVRTC error for {files} ({set}): {other:?}"),
    })?;
    let text = ptx.to_src();
    if let Some(path) = &path {
        // Best effort: a read-only cache directory only costs a recompile next time.
        let _ = std::fs::create_dir_all(path.parent().expect("cache file has a parent"));
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &text).is_ok() {
            let _ = std::fs::rename(&tmp, path);
        }
    }
    Ok(text)
}

/// PTX of `p`'s kernels for compute capability `arch`.
pub fn compile(arch: (i32, i32), p: ParamSet) -> Result<String, String> {
    let mut options = vec![format!("--gpu-architecture=compute_{}{}", arch.0, arch.1)];
    options.extend(defines(p));
    // Extra -D flags, for trying kernel variants without rebuilding (part of the cache key).
    if let Some(extra) = &crate::settings::get().nvrtc_defines {
        options.extend(extra.split_whitespace().map(String::from));
    }
    ptx_cached(
        "mldsa",
        "kernels/mldsa.cu (+ kernels/keccak.cuh, kernels/hostio.cuh)",
        p.name(),
        &source(),
        options,
    )
}

/// Compiles (or reads from the cache) and loads the kernels of `p` for compute capability `arch`.
/// The error names the kernel file and carries NVRTC's log.
pub fn load(ctx: &Arc<CudaContext>, arch: (i32, i32), p: ParamSet) -> Result<Kernels, String> {
    let funcs = load_functions(ctx, compile(arch, p)?, &KERNELS, p.name())?;
    Ok(Kernels { funcs })
}

/// Loads `ptx` into `ctx` and looks up each kernel in `names`; errors name the set and kernel.
pub(crate) fn load_functions(
    ctx: &Arc<CudaContext>,
    ptx: String,
    names: &[&'static str],
    set: &str,
) -> Result<HashMap<&'static str, CudaFunction>, String> {
    let module = ctx
        .load_module(Ptx::from_src(ptx))
        .map_err(|e| format!("loading the {set} kernels: {e:?}"))?;
    names
        .iter()
        .map(|&name| {
            let f = module
                .load_function(name)
                .map_err(|e| format!("kernel {name} ({set}): {e:?}"))?;
            Ok((name, f))
        })
        .collect()
}

/// Whether libnvrtc can be loaded here (the compile tests need no GPU, only NVRTC).
#[cfg(test)]
pub(crate) fn nvrtc_present() -> bool {
    // SAFETY: only probes whether the library can be opened.
    let present = std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() });
    matches!(present, Ok(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernels compile for sm_90 wherever libnvrtc exists (no GPU needed); skipped otherwise.
    #[test]
    fn kernels_compile_for_hopper() {
        if !nvrtc_present() {
            println!("SKIPPED: libnvrtc not found");
            return;
        }
        for p in ParamSet::EVERY {
            let ptx = compile((9, 0), p).unwrap_or_else(|e| panic!("{e}"));
            for k in KERNELS {
                assert!(ptx.contains(&format!(".entry {k}(")), "{k} missing");
            }
        }
    }
}

/// Writes each parameter set's final kernel source and NVRTC options to `$PQGPU_DUMP_KERNELS`
/// (for comparing kernels across refactors with `cpp`; no NVRTC needed).
#[cfg(test)]
#[test]
#[ignore]
fn dump_kernel_sources() {
    let Some(dir) = std::env::var_os("PQGPU_DUMP_KERNELS") else {
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    for p in ParamSet::EVERY {
        std::fs::write(dir.join(format!("{}.cu", p.name())), source()).unwrap();
        std::fs::write(
            dir.join(format!("{}.opts", p.name())),
            defines(p).join("\n"),
        )
        .unwrap();
    }
    for p in crate::ctru::ParamSet::ALL {
        std::fs::write(
            dir.join(format!("{}.cu", p.name())),
            join_sources(&super::ctru_kem::module_sources()),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("{}.opts", p.name())),
            super::ctru_kem::module_defines(p).join("\n"),
        )
        .unwrap();
    }
}
