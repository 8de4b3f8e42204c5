//! Run-time choice of the CPU vector paths (AVX2 on x86_64), made in one place.
//!
//! The portable code in `mldsa` and `ctru` is the reference; the vector paths compute exactly the
//! same bytes. `PQGPU_CPU_SIMD=off` (read once, here) or [`set_enabled`] forces the portable code.
//! Since both paths give identical results, switching at any time (even while other threads run)
//! changes only speed, never an output.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) mod ct_check;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ctru_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ctru_inverse;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ctru_ntt;
pub(crate) mod keccak;
#[cfg(target_arch = "x86_64")]
pub(crate) mod keccak_x4;
#[cfg(target_arch = "x86_64")]
pub(crate) mod rej_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod rej_eta_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sha256ni;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sha256x8;
pub(crate) mod sha2_consts;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sha512x4;
pub(crate) mod stream;
pub(crate) mod wipe;

/// Cleared by [`set_enabled`]`(false)`: forces the portable code for the whole process.
static ENABLED: AtomicBool = AtomicBool::new(true);

/// The vector extension a call may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    Portable,
    /// AVX2 (and BMI1/BMI2) were detected on this CPU (the only way this value is produced
    /// outside tests).
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

/// Proof that AVX2, BMI1 and BMI2 were detected: the vector modules' safe entry points take one, and only
/// [`Level::avx2`] makes one.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

impl Level {
    /// The AVX2 token when this level is AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    pub(crate) fn avx2(self) -> Option<Avx2> {
        match self {
            Level::Avx2 => Some(Avx2(())),
            Level::Portable => None,
        }
    }
}

/// What the CPU offers and the environment allows, detected once per process.
fn detected() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        if crate::settings::get().cpu_simd_off {
            return Level::Portable;
        }
        // BMI1/BMI2 come with AVX2 on every CPU that has it; the scalar Keccak uses them.
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
        {
            return Level::Avx2;
        }
        Level::Portable
    })
}

/// AVX-512F and AVX-512VL were detected, besides the AVX2 level: the four-stream Keccak then
/// uses their rotate and three-input logic instructions on the same 256-bit registers (same
/// states, so the same bytes). Checked once per process; asked only on the AVX2 level.
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx512vl() -> bool {
    static VL: OnceLock<bool> = OnceLock::new();
    *VL.get_or_init(|| {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl")
    })
}

/// The level the CPU code uses now.
#[inline]
pub(crate) fn level() -> Level {
    if ENABLED.load(Ordering::Relaxed) {
        detected()
    } else {
        Level::Portable
    }
}

/// Enables (the default) or disables the CPU vector paths for this process. Disabling forces the
/// portable code; enabling uses AVX2 only where the CPU has it and `PQGPU_CPU_SIMD` is not `off`.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// The name of the vector path in use: `"avx2"` or `"portable"` (for benchmarks and logs).
pub fn active() -> &'static str {
    match level() {
        Level::Portable => "portable",
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => "avx2",
    }
}

/// Every level this CPU can run, portable first (for tests that compare all paths).
#[cfg(test)]
pub(crate) fn available() -> Vec<Level> {
    let mut v = vec![Level::Portable];
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
    {
        v.push(Level::Avx2);
    }
    v
}
