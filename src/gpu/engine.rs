//! One GPU's share of the backend: its context, the kernels compiled for its architecture and
//! its workers (streams with their memory pools). A device whose work fails is marked
//! unhealthy and gets no further chunks.

use super::ctru_kem::CtruKernels;
use super::device;
use super::module::{self, Kernels};
use super::scheduler::Unit;
use super::worker::Worker;
use crate::{mldsa, Error};
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::CudaContext;
use once_cell::sync::OnceCell;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

pub struct DeviceEngine {
    pub description: String,
    /// The device's context (kept here so that loading more kernels never needs a worker's
    /// lock, which the scheduler holds while a chunk runs).
    pub ctx: Arc<CudaContext>,
    /// ML-DSA-44/65/87 and Dilithium2/3/5, indexed by [`super::set_index`].
    pub kernels: [Kernels; 6],
    pub workers: Vec<Mutex<Worker>>,
    /// The CTRU-Prime kernels, compiled on first use (ML-DSA-only users never pay for them).
    pub ctru: OnceCell<Result<[CtruKernels; 3], String>>,
    /// Whether kernels may use a registered host address as a device address (the zero-copy
    /// gather/scatter of `hostio`); true on 64-bit Linux with unified addressing.
    pub maps_host_memory: bool,
    healthy: AtomicBool,
}

impl DeviceEngine {
    /// Opens device `ordinal` with `workers` streams; the error is `NoDevice` or, when the
    /// kernels fail to compile or load, `Device`, with the reason.
    pub fn open(ordinal: usize, workers: usize) -> Result<DeviceEngine, (Error, String)> {
        let dev = device::open(ordinal).map_err(|e| (Error::NoDevice, e))?;
        let ctx = &dev.ctx;
        // Compile the six sets in parallel (a cache hit makes this a file read).
        let loaded: Vec<Result<Kernels, String>> = mldsa::ParamSet::EVERY
            .par_iter()
            .map(|&p| module::load(ctx, dev.arch, p))
            .collect();
        let kernels: Vec<Kernels> = loaded
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(|e| (Error::Device, e))?;
        let kernels: [Kernels; 6] = kernels
            .try_into()
            .unwrap_or_else(|_| unreachable!("one Kernels per set"));
        let workers = (0..workers)
            .map(|_| Worker::new(ctx).map(Mutex::new))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                (
                    Error::NoDevice,
                    format!("GPU {ordinal}: creating streams: {e:?}"),
                )
            })?;
        let maps_host_memory = ctx
            .attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM,
            )
            .is_ok_and(|v| v == 1);
        Ok(DeviceEngine {
            maps_host_memory,
            ctx: dev.ctx.clone(),
            description: dev.description,
            kernels,
            workers,
            ctru: OnceCell::new(),
            healthy: AtomicBool::new(true),
        })
    }
}

impl Unit for DeviceEngine {
    type Worker = Worker;

    fn workers(&self) -> &[Mutex<Worker>] {
        &self.workers
    }

    fn is_healthy(&self) -> bool {
        self.healthy.load(Ordering::Acquire)
    }

    /// Takes the device out of service for the rest of the process.
    fn mark_failed(&self, why: &str) {
        if self.healthy.swap(false, Ordering::AcqRel) {
            device::log(&format!(
                "{}: taken out of service after an error: {why}",
                self.description
            ));
        }
    }
}
