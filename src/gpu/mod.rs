//! The CUDA backend. Until the engine lands, no GPU is reported usable.

use crate::backend::Backend;
use crate::{mldsa, Error};
use std::sync::Arc;

/// The process-wide GPU backend, created lazily on first use (never at library load, so a
/// server that forks after loading keeps working). `NoDevice` when no GPU is usable.
pub fn backend() -> Result<Arc<dyn Backend>, Error> {
    Err(Error::NoDevice)
}

/// An ML-DSA operation, for kernel-only measurements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Keygen,
    Sign,
    Verify,
}

/// Kernel-only throughput (ops/s) of `op` on `n` items whose inputs are already resident on the
/// device, timed with CUDA events (no host transfers). For the benchmark, not for tests.
pub fn kernel_throughput(p: mldsa::ParamSet, op: Op, n: usize) -> Result<f64, Error> {
    let _ = (p, op, n);
    Err(Error::NoDevice)
}

/// A one-line description of the device in use (name, SMs, driver), for benchmark reports.
pub fn device_description() -> Option<String> {
    None
}
