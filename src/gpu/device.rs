//! Device probe and context. A machine without libcuda, libnvrtc or a GPU gets a clean
//! `NoDevice` (cudarc panics when a library is missing, so we probe and catch first).

use super::config::SyncMode;
use crate::Error;
use cudarc::driver::{sys, CudaContext};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// The opened GPU: its context, compute capability and a one-line description.
pub struct Device {
    pub ctx: Arc<CudaContext>,
    pub arch: (i32, i32),
    pub description: String,
}

/// Checks that libcuda and then libnvrtc can be loaded (cudarc panics on a missing library).
/// libcuda comes first: without a driver there is no reason to load the compiler at all.
fn probe_libraries() -> Result<(), String> {
    let present = |probe: fn() -> bool, name: &str| match catch_unwind(probe) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!("{name} not found")),
        Err(_) => Err(format!("probing {name} panicked")),
    };
    // SAFETY: the probes only try to dlopen the libraries; nothing is called through them.
    present(|| unsafe { sys::is_culib_present() }, "libcuda")?;
    // SAFETY: as above.
    present(
        || unsafe { cudarc::nvrtc::sys::is_culib_present() },
        "libnvrtc",
    )
}

/// The devices to use: `list` (`PQGPU_DEVICES`: comma-separated ordinals, e.g. `0,2`) or every
/// visible device. The `Err` string says why no GPU is usable.
pub fn ordinals(list: Option<&str>) -> Result<Vec<usize>, String> {
    probe_libraries()?;
    // Loading libcuda leaves the driver uninitialised; cuInit (inside device_count) does not.
    super::driver::initialising();
    let count = catch_unwind(CudaContext::device_count)
        .map_err(|_| "CUDA initialisation panicked".to_string())?
        .map_err(|e| format!("no CUDA device: {e:?}"))? as usize;
    if count == 0 {
        return Err("no CUDA device".into());
    }
    match list {
        None => Ok((0..count).collect()),
        Some(list) => {
            let picked: Vec<usize> = list
                .split(',')
                .map(|t| t.trim().parse::<usize>().ok().filter(|&o| o < count))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    format!("PQGPU_DEVICES={list:?}: expected ordinals below {count}")
                })?;
            if picked.is_empty() {
                return Err("PQGPU_DEVICES names no device".into());
            }
            Ok(picked)
        }
    }
}

/// Opens device `ordinal` (from [`ordinals`]); `sync` sets how host threads wait for its
/// streams (`PQGPU_GPU_SYNC`; `None` keeps the driver's choice).
pub fn open(ordinal: usize, sync: Option<SyncMode>) -> Result<Device, String> {
    let ctx = catch_unwind(AssertUnwindSafe(|| CudaContext::new(ordinal)))
        .map_err(|_| "CUDA initialisation panicked".to_string())?
        .map_err(|e| format!("no CUDA device: {e:?}"))?;
    // SAFETY: every buffer belongs to one worker and is only used on that worker's stream,
    // which the worker synchronises before reading results or reusing buffers; cudarc's
    // per-slice events would add cross-stream waits and host overhead for nothing.
    unsafe { ctx.disable_event_tracking() };
    if let Some(mode) = sync {
        use sys::CUctx_flags::*;
        let flag = match mode {
            SyncMode::Spin => CU_CTX_SCHED_SPIN,
            SyncMode::Yield => CU_CTX_SCHED_YIELD,
            SyncMode::Blocking => CU_CTX_SCHED_BLOCKING_SYNC,
        };
        ctx.set_flags(flag)
            .map_err(|e| format!("setting {mode:?} waits: {e:?}"))?;
    }
    let arch = ctx
        .compute_capability()
        .map_err(|e| format!("compute capability: {e:?}"))?;
    let name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
    let sms = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .unwrap_or(0);
    let mem = ctx.total_mem().unwrap_or(0) >> 30;
    let mut driver = 0i32;
    // SAFETY: cuDriverGetVersion writes one int through a valid pointer.
    let _ = unsafe { sys::cuDriverGetVersion(&mut driver) };
    let description = format!(
        "GPU {ordinal}: {name}, {sms} SMs, {mem} GiB, compute capability {}.{}, CUDA driver {}.{}",
        arch.0,
        arch.1,
        driver / 1000,
        (driver % 1000) / 10
    );
    Ok(Device {
        ctx,
        arch,
        description,
    })
}

/// Reports a GPU problem on stderr when `PQGPU_LOG` is set: a library prints nothing unasked,
/// and the work itself never depends on it (failed chunks move to another device or the CPU).
pub fn log(msg: &str) {
    if crate::settings::get().log {
        eprintln!("pqgpu: {msg}");
    }
}

/// Maps a driver error to the per-item status code.
pub fn device_error<E: std::fmt::Debug>(e: E) -> Error {
    log(&format!("GPU error: {e:?}"));
    Error::Device
}
