//! The kernel sources (embedded), NVRTC compilation per parameter set, the on-disk PTX cache,
//! and module loading. One table of sources for every kernel family; each parameter set's
//! sizes come in as `-D` definitions computed in Rust (`gpu/mldsa/kernels.rs`,
//! `gpu/ctru/kernels.rs`), so every size the kernels share with the host exists once.

use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions, Ptx};
use sha3::{Digest, Sha3_256};
use std::path::Path;
use std::sync::Arc;

const KECCAK: (&str, &str) = (
    "kernels/keccak.cuh",
    include_str!("../../kernels/keccak.cuh"),
);
const HOSTIO: (&str, &str) = (
    "kernels/hostio.cuh",
    include_str!("../../kernels/hostio.cuh"),
);
const CHACHA: (&str, &str) = (
    "kernels/chacha.cuh",
    include_str!("../../kernels/chacha.cuh"),
);

const SHA2: (&str, &str) = ("kernels/sha2.cuh", include_str!("../../kernels/sha2.cuh"));

/// A kernel family: its files, in the order they are concatenated.
pub struct Family {
    /// Cache file stem and NVRTC program name.
    pub stem: &'static str,
    pub sources: &'static [(&'static str, &'static str)],
}

pub const MLDSA: Family = Family {
    stem: "mldsa",
    sources: &[
        KECCAK,
        HOSTIO,
        ("kernels/mldsa.cu", include_str!("../../kernels/mldsa.cu")),
    ],
};

pub const MLKEM: Family = Family {
    stem: "mlkem",
    sources: &[
        KECCAK,
        HOSTIO,
        CHACHA,
        ("kernels/mlkem.cu", include_str!("../../kernels/mlkem.cu")),
    ],
};

pub const CTRU: Family = Family {
    stem: "ctru",
    sources: &[
        KECCAK,
        HOSTIO,
        CHACHA,
        ("kernels/ctru.cu", include_str!("../../kernels/ctru.cu")),
    ],
};

pub const SLHDSA: Family = Family {
    stem: "slhdsa",
    sources: &[
        KECCAK,
        HOSTIO,
        SHA2,
        ("kernels/slhdsa.cu", include_str!("../../kernels/slhdsa.cu")),
    ],
};

impl Family {
    /// The files, each behind a `#line` so NVRTC's log names the real file.
    pub fn source(&self) -> String {
        self.sources
            .iter()
            .map(|(name, text)| format!("#line 1 \"{name}\"\n{text}\n"))
            .collect()
    }

    /// "kernels/mldsa.cu (+ kernels/keccak.cuh, kernels/hostio.cuh)", for error messages.
    fn files(&self) -> String {
        let (last, headers) = self.sources.split_last().expect("a family has files");
        let headers: Vec<&str> = headers.iter().map(|(n, _)| *n).collect();
        format!("{} (+ {})", last.0, headers.join(", "))
    }
}

/// `-DNAME=value` for each definition.
pub fn defines(defs: &[(&str, usize)]) -> Vec<String> {
    defs.iter().map(|(k, v)| format!("-D{k}={v}")).collect()
}

fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: nvrtcVersion writes two ints through valid pointers; the library was probed.
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

/// PTX of `family` for parameter set `set` and compute capability `arch`, with `options` (the
/// set's -D definitions), read from or written to the disk cache as `<stem>-<hash>.ptx`; the
/// hash covers the sources, the options and the NVRTC version. Errors name the files and the
/// set and carry NVRTC's log.
pub fn compile(
    family: &Family,
    arch: (i32, i32),
    set: &str,
    defines: Vec<String>,
    cache_dir: Option<&Path>,
) -> Result<String, String> {
    let mut options = vec![format!("--gpu-architecture=compute_{}{}", arch.0, arch.1)];
    options.extend(defines);
    let src = family.source();
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
    let path = cache_dir.map(|d| d.join(format!("{}-{key}.ptx", family.stem)));
    if let Some(text) = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) {
        return Ok(text);
    }
    let opts = CompileOptions {
        options,
        name: Some(format!("{}.cu", family.stem)),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(&src, opts).map_err(|e| match e {
        CompileError::CompileError { log, .. } => format!(
            "NVRTC failed to compile {} for {set}:\n{}",
            family.files(),
            log.to_string_lossy()
        ),
        other => format!("NVRTC error for {} ({set}): {other:?}", family.files()),
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

/// A loaded module of one parameter set, from which its kernels are resolved.
pub struct Module {
    module: Arc<CudaModule>,
    set: &'static str,
}

impl Module {
    /// The module `compile` makes for `ctx`'s compute capability (compiled, or read from the
    /// cache), loaded.
    pub fn compile_and_load(
        ctx: &Arc<CudaContext>,
        set: &'static str,
        compile: impl FnOnce((i32, i32)) -> Result<String, String>,
    ) -> Result<Module, String> {
        let arch = ctx
            .compute_capability()
            .map_err(|e| format!("compute capability: {e:?}"))?;
        Module::load(ctx, compile(arch)?, set)
    }

    /// Loads `ptx` into `ctx`; errors name the set.
    pub fn load(ctx: &Arc<CudaContext>, ptx: String, set: &'static str) -> Result<Module, String> {
        let module = ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(|e| format!("loading the {set} kernels: {e:?}"))?;
        Ok(Module { module, set })
    }

    /// Kernel `name`; the error names the set and the kernel.
    pub fn kernel(&self, name: &'static str) -> Result<super::launch::Kernel, String> {
        let f = self
            .module
            .load_function(name)
            .map_err(|e| format!("kernel {name} ({}): {e:?}", self.set))?;
        Ok(super::launch::Kernel { f, name })
    }
}

/// Whether libnvrtc can be loaded here (the compile tests need no GPU, only NVRTC).
#[cfg(test)]
pub(crate) fn nvrtc_present() -> bool {
    // SAFETY: only probes whether the library can be opened.
    let present = std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() });
    matches!(present, Ok(true))
}
