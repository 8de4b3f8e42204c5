//! Every environment setting the library reads, in one place, read once per process (at the
//! first use of any of them). The library's behaviour is configured here and nowhere else.
//!
//! For users: `PQGPU_BACKEND=cpu|gpu|auto` (what AUTO picks; another value is an error), `PQGPU_DEVICES=0,1`, `PQGPU_CACHE_DIR`,
//! `PQGPU_LOG`, `PQGPU_CPU_SIMD=off`. The rest are tuning, measurement and test switches
//! (chunk sizes, workers, profiles, forced engines, failure injection); see BENCHMARKS.md.

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
    /// `PQGPU_GPU_WORKERS`: workers per GPU for both kernel families.
    pub gpu_workers: Option<usize>,
    /// `PQGPU_GPU_CHUNK`, `PQGPU_KEYGEN_CHUNK`, `PQGPU_CTRU_CHUNK`: items per chunk.
    pub gpu_chunk: Option<usize>,
    pub keygen_chunk: Option<usize>,
    pub ctru_chunk: Option<usize>,
    /// `PQGPU_GPU_FAIL_AFTER=n`: signing chunks after the n-th report a device failure (tests).
    pub gpu_fail_after: Option<usize>,
    /// `PQGPU_PROFILE`, `PQGPU_HOST_PROFILE`: per-kernel and host-phase profiles on stderr.
    pub profile: bool,
    pub host_profile: bool,
    /// `PQGPU_HOSTIO=kernel`: gather even rows with the kernel too (measurement).
    pub hostio_kernel: bool,
    /// `PQGPU_NVRTC_DEFINES`: extra -D flags for the kernels (variant measurements).
    pub nvrtc_defines: Option<String>,
    /// `PQGPU_CTRU_ENGINE=cc|tc`: force the CTRU-Prime product engine (measurement).
    pub ctru_engine: Option<String>,
    /// `PQGPU_CTRU_INVERT=perkey`: one inversion per key instead of the product tree.
    pub ctru_invert_perkey: bool,
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

/// A positive count, or `None` (unset or not a positive number).
fn count(name: &str) -> Option<usize> {
    var(name).ok()?.parse().ok().filter(|&v| v > 0)
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
        gpu_workers: count("PQGPU_GPU_WORKERS"),
        gpu_chunk: count("PQGPU_GPU_CHUNK"),
        keygen_chunk: count("PQGPU_KEYGEN_CHUNK"),
        ctru_chunk: count("PQGPU_CTRU_CHUNK"),
        gpu_fail_after: var("PQGPU_GPU_FAIL_AFTER")
            .ok()
            .and_then(|v| v.parse().ok()),
        profile: var_os("PQGPU_PROFILE").is_some(),
        host_profile: var_os("PQGPU_HOST_PROFILE").is_some(),
        hostio_kernel: var("PQGPU_HOSTIO").as_deref() == Ok("kernel"),
        nvrtc_defines: var("PQGPU_NVRTC_DEFINES").ok(),
        ctru_engine: var("PQGPU_CTRU_ENGINE").ok(),
        ctru_invert_perkey: var("PQGPU_CTRU_INVERT")
            .is_ok_and(|v| v.eq_ignore_ascii_case("perkey")),
        ct_control: var_os("PQGPU_CT_CONTROL").is_some(),
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
