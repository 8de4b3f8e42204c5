//! Every environment setting the library reads, in one place, read once per process (at the
//! first use of any of them). The library's behaviour is configured here and nowhere else.
//!
//! For users: `PQGPU_BACKEND=cpu|gpu|auto` (what AUTO picks; another value is an error),
//! `PQGPU_DEVICES=0,1`, `PQGPU_CACHE_DIR`, `PQGPU_LOG`, `PQGPU_CPU_SIMD=off`. The GPU engine's
//! chunk sizes and workers (and a test's failure injection) are checked by `gpu::config`; its
//! measurement switches (profiles, forced engines) are read only in builds with the `tuning`
//! feature.

use once_cell::sync::Lazy;
use std::env::{var, var_os};
use std::ffi::OsStr;
use std::path::PathBuf;

/// What `PQGPU_BACKEND` asks `PQG_BACKEND_AUTO` to pick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoBackend {
    /// Unset, empty or `auto`: the GPU when one is usable, the CPU otherwise.
    Either,
    Cpu,
    Gpu,
}

/// The settings of this process.
#[derive(Debug)]
pub struct Settings {
    /// `PQGPU_BACKEND`: what `PQG_BACKEND_AUTO` resolves to; `Err` (the message) for a value
    /// that is not `cpu`, `gpu` or `auto`, which makes AUTO fail rather than guess.
    pub backend: Result<AutoBackend, String>,
    /// `PQGPU_DEVICES`: the GPU ordinals to use, comma separated.
    pub devices: Option<String>,
    /// `PQGPU_LOG`: report GPU problems on stderr.
    pub log: bool,
    /// Compiled-kernel cache: `PQGPU_CACHE_DIR`, else `$XDG_CACHE_HOME/pqgpu`, else
    /// `~/.cache/pqgpu`.
    pub cache_dir: Option<PathBuf>,
    /// `PQGPU_CPU_SIMD=off|0|portable|none`: force the portable CPU code.
    pub cpu_simd_off: bool,
    /// GPU engine settings as given; `gpu::config` parses and checks them when the engine
    /// opens (a bad value is an error there). `PQGPU_GPU_WORKERS`: workers per GPU for both
    /// kernel families; `PQGPU_GPU_CHUNK`, `PQGPU_KEYGEN_CHUNK`, `PQGPU_CTRU_CHUNK`: items per
    /// chunk; `PQGPU_GPU_FAIL_AFTER=n`: signing chunks after the n-th report a device failure
    /// (tests).
    pub gpu_workers: Option<String>,
    pub gpu_chunk: Option<String>,
    pub keygen_chunk: Option<String>,
    pub ctru_chunk: Option<String>,
    pub gpu_fail_after: Option<String>,
    /// `PQGPU_SIGN_FILL`: signing attempts per GPU round at least (a quarter of it under MPS),
    /// shared by the chunks in flight; `PQGPU_GPU_SYNC=spin|yield|blocking`: how host threads
    /// wait for the GPU; `PQGPU_GPU_SLEEP`: which operations' chunks wait asleep.
    pub sign_fill: Option<String>,
    pub gpu_sync: Option<String>,
    pub gpu_sleep: Option<String>,
    /// Measurement switches, read only in builds with the `tuning` feature (see
    /// `gpu::config::Tuning`): `PQGPU_PROFILE`, `PQGPU_HOST_PROFILE`, `PQGPU_HOSTIO`,
    /// `PQGPU_NVRTC_DEFINES`, `PQGPU_CTRU_ENGINE`, `PQGPU_CTRU_INVERT`, `PQGPU_CHUNK_RAMP`,
    /// `PQGPU_TIMELINE`, `PQGPU_CHUNK_TURNS`, `PQGPU_SIGN_THREADS`.
    #[cfg(feature = "tuning")]
    pub profile: bool,
    #[cfg(feature = "tuning")]
    pub host_profile: bool,
    #[cfg(feature = "tuning")]
    pub hostio: Option<String>,
    #[cfg(feature = "tuning")]
    pub nvrtc_defines: Option<String>,
    #[cfg(feature = "tuning")]
    pub ctru_engine: Option<String>,
    #[cfg(feature = "tuning")]
    pub ctru_invert: Option<String>,
    #[cfg(feature = "tuning")]
    pub chunk_ramp: Option<String>,
    #[cfg(feature = "tuning")]
    pub timeline: Option<std::path::PathBuf>,
    #[cfg(feature = "tuning")]
    pub chunk_turns: Option<String>,
    #[cfg(feature = "tuning")]
    pub sign_threads: Option<String>,

    /// `PQGPU_CT_CONTROL`: the constant-time check's control branch (scripts/ct-memcheck.sh).
    pub ct_control: bool,
}

/// `PQGPU_BACKEND`'s value, case and surrounding blanks aside.
fn auto_backend(value: Option<&OsStr>) -> Result<AutoBackend, String> {
    let Some(v) = value else {
        return Ok(AutoBackend::Either);
    };
    match v.to_str().map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("" | "auto") => Ok(AutoBackend::Either),
        Some("cpu") => Ok(AutoBackend::Cpu),
        Some("gpu") => Ok(AutoBackend::Gpu),
        _ => Err(format!("PQGPU_BACKEND={v:?} is not one of cpu, gpu, auto")),
    }
}

fn read() -> Settings {
    Settings {
        backend: auto_backend(var_os("PQGPU_BACKEND").as_deref()),
        devices: var("PQGPU_DEVICES").ok(),
        log: var_os("PQGPU_LOG").is_some(),
        cache_dir: var_os("PQGPU_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("pqgpu")))
            .or_else(|| var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pqgpu"))),
        cpu_simd_off: var("PQGPU_CPU_SIMD").is_ok_and(|v| {
            matches!(
                v.to_ascii_lowercase().as_str(),
                "off" | "0" | "portable" | "none"
            )
        }),
        gpu_workers: var("PQGPU_GPU_WORKERS").ok(),
        gpu_chunk: var("PQGPU_GPU_CHUNK").ok(),
        keygen_chunk: var("PQGPU_KEYGEN_CHUNK").ok(),
        ctru_chunk: var("PQGPU_CTRU_CHUNK").ok(),
        gpu_fail_after: var("PQGPU_GPU_FAIL_AFTER").ok(),
        sign_fill: var("PQGPU_SIGN_FILL").ok(),
        gpu_sync: var("PQGPU_GPU_SYNC").ok(),
        gpu_sleep: var("PQGPU_GPU_SLEEP").ok(),
        #[cfg(feature = "tuning")]
        profile: var_os("PQGPU_PROFILE").is_some(),
        #[cfg(feature = "tuning")]
        host_profile: var_os("PQGPU_HOST_PROFILE").is_some(),
        #[cfg(feature = "tuning")]
        hostio: var("PQGPU_HOSTIO").ok(),
        #[cfg(feature = "tuning")]
        nvrtc_defines: var("PQGPU_NVRTC_DEFINES").ok(),
        #[cfg(feature = "tuning")]
        ctru_engine: var("PQGPU_CTRU_ENGINE").ok(),
        #[cfg(feature = "tuning")]
        ctru_invert: var("PQGPU_CTRU_INVERT").ok(),
        #[cfg(feature = "tuning")]
        chunk_ramp: var("PQGPU_CHUNK_RAMP").ok(),
        #[cfg(feature = "tuning")]
        timeline: var_os("PQGPU_TIMELINE").map(std::path::PathBuf::from),
        #[cfg(feature = "tuning")]
        chunk_turns: var("PQGPU_CHUNK_TURNS").ok(),
        #[cfg(feature = "tuning")]
        sign_threads: var("PQGPU_SIGN_THREADS").ok(),

        ct_control: var_os("PQGPU_CT_CONTROL").is_some(),
    }
}

/// The environment the library's own unit tests read (never the library itself): where the
/// shared vectors are, which C++ compiler runs the kernels' per-thread code, and where to dump
/// the kernels' final sources.
#[cfg(test)]
pub mod test_env {
    use std::env::{var, var_os};
    use std::path::PathBuf;

    /// `PQGPU_VECTORS_DIR`, else `../shared/vectors` beside the repository.
    pub fn vectors_dir() -> PathBuf {
        var_os("PQGPU_VECTORS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/vectors"))
    }

    /// `CXX`: the C++ compiler to try before `c++`, `g++` and `clang++`.
    pub fn cxx() -> Option<String> {
        var("CXX").ok()
    }

    /// `PQGPU_DUMP_KERNELS`: the directory for the kernels' final sources.
    pub fn dump_kernels() -> Option<PathBuf> {
        var_os("PQGPU_DUMP_KERNELS").map(PathBuf::from)
    }
}

/// This process's settings.
pub fn get() -> &'static Settings {
    static SETTINGS: Lazy<Settings> = Lazy::new(read);
    &SETTINGS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_values() {
        let parse = |v: &str| auto_backend(Some(OsStr::new(v)));
        assert_eq!(auto_backend(None), Ok(AutoBackend::Either));
        for (v, want) in [
            ("", AutoBackend::Either),
            ("auto", AutoBackend::Either),
            ("cpu", AutoBackend::Cpu),
            (" GPU ", AutoBackend::Gpu),
            ("Cpu", AutoBackend::Cpu),
        ] {
            assert_eq!(parse(v), Ok(want), "{v:?}");
        }
        for v in ["cuda", "gpu0", "cpu,gpu", "1"] {
            let e = parse(v).unwrap_err();
            assert!(e.contains(v) && e.contains("cpu, gpu, auto"), "{v:?}: {e}");
        }
    }
}
