//! Backend selection: which backend runs a context's work. It sits above both backends
//! (`crate::backend` with the CPU, `crate::gpu`), so each of them only implements the batch
//! interface and never reaches back up.

use crate::backend::{cpu_backend, Backend, BackendKind};
use crate::Error;
use std::sync::Arc;

/// Resolves a requested backend. `Auto` honours `PQGPU_BACKEND=cpu|gpu|auto`, then uses the GPU
/// when one is usable and the CPU otherwise (in a forked child of a process that initialised
/// CUDA, the CPU: `crate::gpu::unavailable_reason` says why, and `PQGPU_LOG` prints it); any other value of the variable makes `Auto`
/// `InvalidArgument` (see [`auto_override`]). `Gpu` with no usable GPU is `NoDevice`. A bad GPU
/// setting (`InvalidArgument`) is an error for `Auto` too, not a reason to fall back.
pub fn select(requested: BackendKind) -> Result<Arc<dyn Backend>, Error> {
    let requested = match requested {
        BackendKind::Auto => auto_override()?.unwrap_or(BackendKind::Auto),
        k => k,
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

/// What `PQGPU_BACKEND` makes of `Auto`: `Some(Cpu | Gpu)`, or `None` (unset or `auto`). An
/// unknown value is `InvalidArgument`, said once per process on stderr (the status alone
/// would not name the variable).
pub fn auto_override() -> Result<Option<BackendKind>, Error> {
    use crate::settings::AutoBackend;
    match &crate::settings::get().backend {
        Ok(AutoBackend::Either) => Ok(None),
        Ok(AutoBackend::Cpu) => Ok(Some(BackendKind::Cpu)),
        Ok(AutoBackend::Gpu) => Ok(Some(BackendKind::Gpu)),
        Err(why) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| eprintln!("pqgpu: {why}: PQG_BACKEND_AUTO is refused"));
            Err(Error::InvalidArgument)
        }
    }
}
