//! Backend selection: which backend runs a context's work. It sits above both backends
//! (`crate::backend` with the CPU, `crate::gpu`), so each of them only implements the batch
//! interface and never reaches back up.

use crate::backend::{cpu_backend, Backend, BackendKind};
use crate::Error;
use std::sync::Arc;

/// Resolves a requested backend. `Auto` honours `PQGPU_BACKEND=cpu|gpu`, then uses the GPU when
/// one is usable and the CPU otherwise. `Gpu` with no usable GPU is `NoDevice`. A bad GPU
/// setting (`InvalidArgument`) is an error for `Auto` too, not a reason to fall back.
pub fn select(requested: BackendKind) -> Result<Arc<dyn Backend>, Error> {
    let requested = match (requested, crate::settings::get().backend.as_deref()) {
        (BackendKind::Auto, Some("cpu")) => BackendKind::Cpu,
        (BackendKind::Auto, Some("gpu")) => BackendKind::Gpu,
        (k, _) => k,
    };
    match requested {
        BackendKind::Cpu => Ok(cpu_backend()),
        BackendKind::Gpu => crate::gpu::backend(),
        BackendKind::Auto => match crate::gpu::backend() {
            Err(Error::InvalidArgument) => Err(Error::InvalidArgument),
            r => Ok(r.unwrap_or_else(|_| cpu_backend())),
        },
    }
}
