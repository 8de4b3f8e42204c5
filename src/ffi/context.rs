//! `pqg_context`: a shared, thread-safe handle on one backend.

use super::guard::boundary_or;
use super::{guard::boundary, pqg_status};
use crate::backend::{self, Backend, BackendKind};
use crate::Error;
use std::sync::Arc;

/// Which engine runs the work (`PQG_BACKEND_*`).
///
/// In Rust this is a plain `i32`, so that an out-of-range value from C is an
/// `PQG_ERR_INVALID_ARGUMENT` rather than undefined behaviour; the header shows it as the enum
/// `pqg_backend_values` renamed to `pqg_backend` (see `cbindgen.toml`).
pub type pqg_backend = i32;

/// The engines a context can run on.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pqg_backend_values {
    /// The GPU when one is usable, the CPU otherwise; `PQGPU_BACKEND=cpu|gpu` overrides.
    PQG_BACKEND_AUTO = 0,
    /// The CPU reference implementation, spread over all cores.
    PQG_BACKEND_CPU = 1,
    /// A CUDA GPU; `PQG_ERR_NO_DEVICE` when none is usable.
    PQG_BACKEND_GPU = 2,
}

/// A handle on a backend (CPU or GPU) that runs the work.
///
/// Create with `pqg_context_new`, release with `pqg_context_free`. A context is safe to use
/// from any number of threads at once. Jobs keep what they need alive, so a context may be
/// freed while jobs it started are still running.
pub struct pqg_context {
    pub(crate) backend: Arc<dyn Backend>,
    /// Key-handle calls, coalescing of single items, notification, options (`ffi::serve`).
    pub(crate) serve: crate::serve::Serve,
}

/// Wraps an existing backend in a C handle (for tests that need a custom backend, such as
/// one that panics). Free it with `pqg_context_free`.
#[doc(hidden)]
pub fn context_from_backend(backend: Arc<dyn Backend>) -> *mut pqg_context {
    let serve = crate::serve::Serve::new(backend.clone());
    Box::into_raw(Box::new(pqg_context { backend, serve }))
}

/// The context behind a C pointer: NULL is `NullPointer`.
///
/// # Safety
/// A non-NULL `ctx` must come from `pqg_context_new` and not have been freed.
pub(crate) unsafe fn context<'a>(ctx: *const pqg_context) -> Result<&'a pqg_context, Error> {
    // SAFETY: a live context from pqg_context_new is a valid, immutable Box allocation.
    unsafe { ctx.as_ref() }.ok_or(Error::NullPointer)
}

/// Creates a context running on `backend` and stores it in `*out`.
///
/// `PQG_BACKEND_AUTO` picks the GPU when one is usable and the CPU otherwise (the environment
/// variable `PQGPU_BACKEND=cpu|gpu` overrides AUTO). The GPU is initialised here, lazily,
/// never when the library is loaded.
///
/// @param[in]  backend  `PQG_BACKEND_AUTO`, `PQG_BACKEND_CPU` or `PQG_BACKEND_GPU`.
/// @param[out] out      receives the new context, owned by the caller (free it with
///                      `pqg_context_free`); set to NULL on failure.
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER` (out is NULL); `PQG_ERR_INVALID_ARGUMENT`
///         (unknown backend); `PQG_ERR_NO_DEVICE` (GPU demanded, none usable);
///         `PQG_ERR_PANIC`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_context_new(
    backend: pqg_backend,
    out: *mut *mut pqg_context,
) -> pqg_status {
    boundary(|| {
        if out.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: out is non-NULL and points to a writable pointer (caller's promise).
        unsafe { out.write(std::ptr::null_mut()) };
        let kind = match backend {
            0 => BackendKind::Auto,
            1 => BackendKind::Cpu,
            2 => BackendKind::Gpu,
            _ => return Err(Error::InvalidArgument),
        };
        let ctx = context_from_backend(crate::select::select(kind)?);
        // SAFETY: as above.
        unsafe { out.write(ctx) };
        Ok(())
    })
}

/// Releases a context. NULL is a no-op. Running jobs are not affected (they hold their own
/// reference to the backend). Must be called once per context, after all other calls on it
/// have returned.
#[no_mangle]
pub unsafe extern "C" fn pqg_context_free(ctx: *mut pqg_context) {
    if ctx.is_null() {
        return;
    }
    // SAFETY: a non-NULL ctx came from pqg_context_new (Box::into_raw) and is freed once.
    let ctx = unsafe { Box::from_raw(ctx) };
    boundary_or((), move || drop(ctx));
}

/// The backend a context runs on: what `PQG_BACKEND_AUTO` chose (`PQG_BACKEND_CPU` or
/// `PQG_BACKEND_GPU`). NULL gives `PQG_BACKEND_AUTO`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_context_backend(ctx: *const pqg_context) -> pqg_backend {
    boundary_or(pqg_backend_values::PQG_BACKEND_AUTO as pqg_backend, || {
        // SAFETY: ctx is NULL or a live context (caller's promise).
        match unsafe { context(ctx) } {
            Ok(c) => c.backend.kind() as pqg_backend,
            Err(_) => pqg_backend_values::PQG_BACKEND_AUTO as pqg_backend,
        }
    })
}

const _: () = {
    assert!(pqg_backend_values::PQG_BACKEND_AUTO as i32 == BackendKind::Auto as i32);
    assert!(pqg_backend_values::PQG_BACKEND_CPU as i32 == BackendKind::Cpu as i32);
    assert!(pqg_backend_values::PQG_BACKEND_GPU as i32 == BackendKind::Gpu as i32);
};

/// Registers `len` bytes at `ptr` for direct transfers (an extension to the contract, in the
/// spirit of `cudaHostRegister`). On a GPU context the memory is page-locked and mapped into
/// every GPU, and batch buffers that lie inside it (key arrays, public keys, signatures,
/// ciphertexts, shared secrets) move by DMA or zero-copy kernels instead of being copied
/// through staging memory by the host: results are identical, only faster. Register long-lived
/// buffers once (registration itself is slow); keep them allocated until
/// `pqg_host_unregister`. On a CPU context no memory is touched, but the bookkeeping and the
/// statuses are the same.
///
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER` (ctx or ptr NULL); `PQG_ERR_INVALID_ARGUMENT`
///         (len 0 or over `PTRDIFF_MAX`, or overlapping a registered buffer); `PQG_ERR_DEVICE` (the driver refused,
///         e.g. the page-locked memory limit); `PQG_ERR_PANIC`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_host_register(
    ctx: *mut pqg_context,
    ptr: *const u8,
    len: usize,
) -> pqg_status {
    boundary(|| {
        // SAFETY: ctx is NULL or a live context (caller's promise).
        let c = unsafe { context(ctx) }?;
        if ptr.is_null() {
            return Err(Error::NullPointer);
        }
        // Empty, over PTRDIFF_MAX or wrapping the address space: no slice may be built.
        crate::backend::registry::checked_end(ptr as usize, len)?;
        // SAFETY: the caller promises `len` readable bytes at `ptr` that stay allocated until
        // they are unregistered, and `len` <= isize::MAX without wrapping (checked above); the
        // slice is only used for its address and length.
        let buf = unsafe { std::slice::from_raw_parts(ptr, len) };
        c.backend.register_host_memory(buf)
    })
}

/// Undoes `pqg_host_register` for the buffer that starts at `ptr`, waiting for batches that
/// are still running. Call it before freeing the buffer.
///
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (nothing registered
///         at `ptr`, e.g. unregistered twice); `PQG_ERR_DEVICE`; `PQG_ERR_PANIC`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_host_unregister(ctx: *mut pqg_context, ptr: *const u8) -> pqg_status {
    boundary(|| {
        // SAFETY: ctx is NULL or a live context (caller's promise).
        let c = unsafe { context(ctx) }?;
        if ptr.is_null() {
            return Err(Error::NullPointer);
        }
        // Jobs submitted before this call may still read or write the buffer (their output
        // copies too): wait for them, then for the backend's own batches.
        backend::jobs_in_flight().wait_for_earlier();
        c.backend.unregister_host_memory(ptr)
    })
}
