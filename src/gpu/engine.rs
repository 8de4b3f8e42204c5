//! One GPU's share of the engine: its context and its workers (streams with their memory
//! pools). A device whose work fails is marked unhealthy and gets no further chunks. The
//! kernel families load their kernels onto it (`gpu/mldsa`, `gpu/ctru`) and run chunks on
//! its workers through [`Bound`].

use super::config::GpuConfig;
use super::device;
use super::scheduler::{Turn, Unit};
use super::worker::Worker;
use crate::Error;
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::CudaContext;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, TryLockError};

pub struct DeviceEngine {
    pub description: String,
    /// The device's context (kept here so that loading more kernels never needs a worker's
    /// lock, which the scheduler holds while a chunk runs).
    pub ctx: Arc<CudaContext>,
    /// The device's compute capability (what NVRTC compiles for).
    pub arch: (i32, i32),
    pub workers: Vec<Mutex<Worker>>,
    /// Whether kernels may use a registered host address as a device address (the zero-copy
    /// gather/scatter of `hostio`); true on 64-bit Linux with unified addressing.
    pub maps_host_memory: bool,
    /// Whether the device is shared with other processes through MPS: their kernels run
    /// beside ours, so signing speculates for a share of the GPU (see `sign_fill`).
    pub mps: bool,
    /// Whether a batch's chunks queue their inputs in order (`scheduler::Turns`; off only in
    /// `tuning` runs that measure without).
    ordered: bool,
    healthy: AtomicBool,
}

/// Under MPS, the share of the GPU one process's signing fill speculates for. The number of
/// client processes is not visible to a client; a quarter was the best fill on the H200 for
/// `openssl speed -multi 4` (0.85-0.88 M/s with the whole GPU's fill, 1.0 M/s and more with
/// a quarter).
const MPS_SHARE: usize = 4;

/// A chunk's share of the signing fill: `busy` chunks run on the device (its own included),
/// and under MPS other processes' work runs beside them.
fn fill_share(fill: usize, busy: usize, mps: bool) -> usize {
    let share = if mps { MPS_SHARE } else { 1 };
    fill / busy.max(1) / share
}

impl DeviceEngine {
    /// Opens device `ordinal` with `workers` streams, host threads waiting as `cfg.sync` and
    /// `cfg.sleep` say (`cfg.tuning.profile`: time every launch). The error is `NoDevice`,
    /// with the reason.
    pub fn open(
        ordinal: usize,
        workers: usize,
        cfg: &GpuConfig,
    ) -> Result<DeviceEngine, (Error, String)> {
        let dev = device::open(ordinal, cfg.sync).map_err(|e| (Error::NoDevice, e))?;
        let ctx = &dev.ctx;
        let mut workers = (0..workers)
            .map(|_| Worker::new(ctx, cfg.tuning.profile, cfg.sleep))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                (
                    Error::NoDevice,
                    format!("GPU {ordinal}: creating streams: {e:?}"),
                )
            })?;
        if cfg.tuning.timeline.is_some() {
            let origin = super::timeline::origin(ctx)
                .map_err(|e| (Error::NoDevice, format!("GPU {ordinal}: timeline: {e:?}")))?;
            for (i, w) in workers.iter_mut().enumerate() {
                w.trace(origin.clone(), i);
            }
        }
        let workers = workers.into_iter().map(Mutex::new).collect();
        let maps_host_memory = ctx
            .attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM,
            )
            .is_ok_and(|v| v == 1);
        let mps = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MPS_ENABLED)
            .is_ok_and(|v| v == 1);
        Ok(DeviceEngine {
            maps_host_memory,
            mps,
            ctx: dev.ctx.clone(),
            arch: dev.arch,
            description: if mps {
                format!("{} (shared through MPS)", dev.description)
            } else {
                dev.description
            },
            workers,
            ordered: !cfg.tuning.unordered,
            healthy: AtomicBool::new(true),
        })
    }

    pub fn is_healthy(&self) -> bool {
        self.healthy.load(Ordering::Acquire)
    }

    /// Takes the device out of service for the rest of the process.
    pub fn mark_failed(&self, why: &str) {
        if self.healthy.swap(false, Ordering::AcqRel) {
            device::log(&format!(
                "{}: taken out of service after an error: {why}",
                self.description
            ));
        }
    }

    /// How many of this device's workers are running a chunk now (the caller's own included,
    /// when it holds one): how many chunks share the GPU.
    pub fn busy_workers(&self) -> usize {
        self.workers
            .iter()
            .filter(|w| matches!(w.try_lock(), Err(TryLockError::WouldBlock)))
            .count()
    }

    /// The signing attempts per GPU round of a chunk starting now: the configured fill
    /// (`GpuConfig::sign_fill`), shared by the chunks running on the device and, under MPS,
    /// by the other processes' work.
    pub fn sign_fill(&self, fill: usize) -> usize {
        fill_share(fill, self.busy_workers(), self.mps)
    }

    /// Adds this device's workers' host-phase seconds into `sum` and clears them.
    pub fn take_phases(&self, sum: &mut [f64; 3]) {
        for wk in &self.workers {
            let mut w = wk.lock().unwrap_or_else(|e| e.into_inner());
            for (s, p) in sum.iter_mut().zip(w.phases.iter_mut()) {
                *s += std::mem::take(p);
            }
        }
    }

    /// Adds this device's workers' per-kernel times into `sum` and clears them.
    pub fn take_kernel_profile(
        &self,
        sum: &mut std::collections::BTreeMap<&'static str, (f64, usize)>,
    ) {
        for wk in &self.workers {
            let mut w = wk.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(prof) = w.profile.as_mut() {
                for (name, (ms, count)) in prof.drain() {
                    let e = sum.entry(name).or_default();
                    e.0 += ms;
                    e.1 += count;
                }
            }
        }
    }
}

/// A device with one kernel family's kernels for the batch's parameter set: what the
/// scheduler hands each chunk.
pub struct Bound<'a, K> {
    pub engine: &'a DeviceEngine,
    pub kernels: &'a K,
}

impl<K: Sync> Unit for Bound<'_, K> {
    type Worker = Worker;

    fn workers(&self) -> &[Mutex<Worker>] {
        &self.engine.workers
    }

    fn is_healthy(&self) -> bool {
        self.engine.is_healthy()
    }

    fn mark_failed(&self, why: &str) {
        self.engine.mark_failed(why)
    }

    fn plan(&self, w: &mut Worker, items: usize, largest: usize, turn: Turn) {
        w.plan(items, largest);
        w.set_turn(if self.engine.ordered {
            turn
        } else {
            Turn::none()
        });
    }
}

/// Failure injection for tests (`PQGPU_GPU_FAIL_AFTER=n`): after n signing chunks have run on
/// a GPU, each further one reports a device failure once its work is done and its outputs are
/// written, as a fault found at the final synchronisation would.
pub struct FailureInjection {
    after: Option<usize>,
    run: AtomicUsize,
}

impl FailureInjection {
    pub fn new(after: Option<usize>) -> FailureInjection {
        FailureInjection {
            after,
            run: AtomicUsize::new(0),
        }
    }

    /// Counts a finished chunk; `Err` once `after` chunks have run.
    pub fn check(&self) -> Result<(), String> {
        let run = self.run.fetch_add(1, Ordering::SeqCst);
        match self.after {
            Some(n) if run >= n => Err(format!("injected failure after {n} chunks")),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signing_fill_is_shared_by_busy_chunks_and_under_mps_by_other_processes() {
        assert_eq!(fill_share(16384, 1, false), 16384);
        assert_eq!(
            fill_share(16384, 0, false),
            16384,
            "no worker counted: the whole fill"
        );
        assert_eq!(fill_share(16384, 4, false), 4096);
        assert_eq!(fill_share(16384, 1, true), 4096);
        assert_eq!(fill_share(16384, 4, true), 1024);
    }
}
