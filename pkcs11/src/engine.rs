//! The module's only door into pqgpu: this process's backend and serving dispatcher, made on
//! the first cryptographic work (never at `C_Initialize`, so that configuring the module and
//! loading a token leave the GPU untouched: a pre-fork server's master that only opens the
//! token leaves the GPU to its workers), then shared by every session. Concurrent `C_Sign`,
//! `C_Verify` and `C_DecapsulateKey` calls from many sessions go through the dispatcher, which
//! merges them into backend batches (keys are pqgpu key handles, expanded once per object).
//! Single key generation (C_GenerateKeyPair, and the seed of an imported key) runs on the CPU
//! backend: one key gains nothing from a GPU launch, and making or loading keys never reaches
//! for the GPU, so a pre-fork server's master may do both.

use crate::ck::*;
use pqgpu::backend::{Backend, BackendKind};
use pqgpu::process::PerProcess;
use pqgpu::serve::{Opt, Serve};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A backend and its serving dispatcher.
#[derive(Clone)]
pub struct Engine {
    pub backend: Arc<dyn Backend>,
    pub serve: Arc<Serve>,
}

/// What the configuration chose, kept from `C_Initialize` until the first work.
struct Choice {
    kind: BackendKind,
    opts: Vec<(Opt, i64)>,
}

static CHOICE: Mutex<Option<Choice>> = Mutex::new(None);
/// This process's engine (a forked child makes its own).
static ENGINE: Mutex<PerProcess<Option<Engine>>> = Mutex::new(PerProcess::new(None));

/// Records the configured backend and serving options; starts nothing.
pub fn configure(kind: BackendKind, opts: Vec<(Opt, i64)>) {
    *CHOICE.lock().unwrap_or_else(|e| e.into_inner()) = Some(Choice { kind, opts });
}

/// Advanced by [`reset`]: a thread's kept engine of an older epoch is not used.
static EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This process's engine as this thread keeps it (no lock per operation): (epoch, engine).
    static KEPT: RefCell<PerProcess<Option<(u64, Engine)>>> =
        const { RefCell::new(PerProcess::new(None)) };
}

/// Forgets the engine (at `C_Finalize`): the next `C_Initialize` may choose another backend.
pub fn reset() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
    ENGINE.lock().unwrap_or_else(|e| e.into_inner()).set(None);
}

/// Calls `f` with this process's engine, as this thread keeps it (made on first use).
pub fn with<R>(f: impl FnOnce(&Engine) -> R) -> Rv<R> {
    let epoch = EPOCH.load(Ordering::Acquire);
    let mut f = Some(f);
    let kept = KEPT.try_with(|k| match k.borrow().get() {
        Some(Some((ep, e))) if *ep == epoch => f.take().map(|f| f(e)),
        _ => None,
    });
    if let Ok(Some(r)) = kept {
        return Ok(r);
    }
    let e = get()?;
    let _ = KEPT.try_with(|k| k.borrow_mut().set(Some((epoch, e.clone()))));
    Ok((f.take().expect("not yet called"))(&e))
}

/// This process's engine, made on first use. A backend that cannot be had (no usable GPU for
/// `backend = gpu`, or a GPU the process may not use, such as in the child of a process that
/// initialised CUDA: pqgpu's backend selection decides and says why) is `CKR_DEVICE_ERROR`,
/// with a log line.
pub fn get() -> Rv<Engine> {
    let mut g = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(Some(e)) = g.get() {
        return Ok(e.clone());
    }
    let (kind, opts) = CHOICE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map_or((BackendKind::Auto, Vec::new()), |c| {
            (c.kind, c.opts.clone())
        });
    let backend = pqgpu::select::select(kind).map_err(|e| {
        let why = pqgpu::gpu::unavailable_reason().unwrap_or_else(|| e.message().to_string());
        crate::log(&format!("backend {kind:?} unavailable: {why}"));
        CKR_DEVICE_ERROR
    })?;
    let serve = Arc::new(Serve::new(backend.clone()));
    for (o, v) in opts {
        serve.config.set(o, v).map_err(|_| CKR_GENERAL_ERROR)?;
    }
    let e = Engine { backend, serve };
    g.set(Some(e.clone()));
    Ok(e)
}
