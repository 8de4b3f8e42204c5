//! `pqg_context`: a shared, thread-safe handle on one backend.

use super::guard::boundary_or;
use super::{guard::boundary, pqg_status};
use crate::backend::{self, Backend, BackendKind};
use crate::Error;
use std::ffi::c_char;
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
    /// How the backend was chosen, for `pqg_context_describe`.
    origin: Origin,
}

/// How a context came to its backend.
struct Origin {
    requested: BackendKind,
    /// `PQGPU_BACKEND` decided what AUTO became.
    by_variable: bool,
    /// Why AUTO did not get the GPU (only when it fell back to the CPU).
    gpu_unusable: Option<String>,
}

/// Wraps an existing backend in a C handle (for tests that need a custom backend, such as
/// one that panics). Free it with `pqg_context_free`.
#[doc(hidden)]
pub fn context_from_backend(backend: Arc<dyn Backend>) -> *mut pqg_context {
    let origin = Origin {
        requested: backend.kind(),
        by_variable: false,
        gpu_unusable: None,
    };
    new_context(backend, origin)
}

fn new_context(backend: Arc<dyn Backend>, origin: Origin) -> *mut pqg_context {
    let serve = crate::serve::Serve::new(backend.clone());
    Box::into_raw(Box::new(pqg_context {
        backend,
        serve,
        origin,
    }))
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
/// variable `PQGPU_BACKEND=cpu|gpu|auto` overrides AUTO; any other value of it makes AUTO fail
/// with `PQG_ERR_INVALID_ARGUMENT` and one line on stderr naming the value). The GPU (the CUDA
/// driver) is initialised here, by the first GPU or AUTO context of the process, never when
/// the library is loaded and never by key handles or parameters: a pre-fork server creates
/// its contexts in the workers. In a child forked after its parent initialised CUDA, AUTO
/// chooses the CPU and GPU fails with `PQG_ERR_NO_DEVICE` (the reason on stderr under
/// `PQGPU_LOG=1`). `pqg_context_describe` says what was chosen and why.
///
/// @param[in]  backend  `PQG_BACKEND_AUTO`, `PQG_BACKEND_CPU` or `PQG_BACKEND_GPU`.
/// @param[out] out      receives the new context, owned by the caller (free it with
///                      `pqg_context_free`); set to NULL on failure.
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER` (out is NULL); `PQG_ERR_INVALID_ARGUMENT`
///         (unknown backend, or AUTO with an unknown `PQGPU_BACKEND` value);
///         `PQG_ERR_NO_DEVICE` (GPU demanded, none usable); `PQG_ERR_PANIC`. Thread-safe.
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
        let by_variable = kind == BackendKind::Auto && crate::select::auto_override()?.is_some();
        let chosen = crate::select::select(kind)?;
        // AUTO fell back to the CPU after trying the GPU: keep the reason. (Asked only then:
        // nothing here may touch the GPU state of a process that never tried the GPU.)
        let gpu_unusable =
            (kind == BackendKind::Auto && !by_variable && chosen.kind() == BackendKind::Cpu)
                .then(|| crate::gpu::unavailable_reason().unwrap_or_else(|| "unknown".to_string()));
        let origin = Origin {
            requested: kind,
            by_variable,
            gpu_unusable,
        };
        let ctx = new_context(chosen, origin);
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

/// Describes a context as text: the backend it runs on, what was requested, why AUTO chose
/// as it did, the devices, and why a GPU is unusable when AUTO fell back to the CPU. One
/// `key=value` per line (`\n`), values on one line; keys may be added in later versions,
/// and these are kept:
///
/// - `backend=cpu|gpu`: what the context runs on (as `pqg_context_backend`);
/// - `requested=auto|cpu|gpu`: what `pqg_context_new` was asked for;
/// - `chosen_by=request|PQGPU_BACKEND|gpu usable|no usable gpu`: why this backend;
/// - `gpu_unusable=<reason>`: why AUTO fell back to the CPU (no CUDA driver, no device,
///   the kernels did not compile, or a child forked after its parent initialised CUDA:
///   "CUDA initialised by parent process <pid> before fork(); ..."), or why a GPU context no
///   longer works (a child after `fork()`);
/// - `gpu_devices=<n>` and `gpu=<name, SMs, memory, driver; ...>`: on a GPU context;
/// - `cpu_threads=<n>` and `cpu_simd=avx2|portable`: the CPU backend (CPU contexts run on
///   it; GPU contexts hand it chunks when every GPU has failed);
/// - `version=<pqg_version()>`.
///
/// The text is written only when it fits: call with `buf` NULL and `len` 0 to learn the
/// size, then again with a buffer that large. Describing a context does no work on it and
/// never initialises a GPU.
///
/// @param[in]  ctx      a context.
/// @param[out] buf      receives the text, NUL-terminated; may be NULL when `len` is 0.
/// @param[in]  len      bytes available at `buf`.
/// @param[out] written  if not NULL, receives the text's size in bytes including the
///                      terminating NUL: the bytes written on success, the bytes needed on
///                      `PQG_ERR_BAD_LENGTH`.
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER` (ctx NULL, or buf NULL with `len` > 0);
///         `PQG_ERR_BAD_LENGTH` (`len` is less than the size: nothing is written to `buf`);
///         `PQG_ERR_PANIC`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_context_describe(
    ctx: *const pqg_context,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> pqg_status {
    boundary(|| {
        // SAFETY: ctx is NULL or a live context (caller's promise).
        let c = unsafe { context(ctx) }?;
        if buf.is_null() && len > 0 {
            return Err(Error::NullPointer);
        }
        let text = describe(c);
        let size = text.len() + 1;
        if !written.is_null() {
            // SAFETY: a non-NULL `written` points to a writable size_t (caller's promise).
            unsafe { written.write(size) };
        }
        if len < size {
            return Err(Error::BadLength);
        }
        // SAFETY: buf is non-NULL (len >= size > 0) with `len` writable bytes (caller's
        // promise), and `text` (a fresh String) cannot overlap it.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
            buf.add(text.len()).write(0);
        }
        Ok(())
    })
}

fn kind_name(k: BackendKind) -> &'static str {
    match k {
        BackendKind::Auto => "auto",
        BackendKind::Cpu => "cpu",
        BackendKind::Gpu => "gpu",
    }
}

/// The text of `pqg_context_describe`.
fn describe(c: &pqg_context) -> String {
    // One line per value, whatever a driver or compiler message holds.
    let line = |v: &str| v.replace(['\n', '\r', '\0'], " ");
    let o = &c.origin;
    let kind = c.backend.kind();
    let chosen_by = match (o.requested, kind) {
        (BackendKind::Auto, _) if o.by_variable => "PQGPU_BACKEND",
        (BackendKind::Auto, BackendKind::Gpu) => "gpu usable",
        (BackendKind::Auto, _) => "no usable gpu",
        _ => "request",
    };
    let mut lines = vec![
        format!("backend={}", kind_name(kind)),
        format!("requested={}", kind_name(o.requested)),
        format!("chosen_by={chosen_by}"),
    ];
    if let Some(why) = &o.gpu_unusable {
        lines.push(format!("gpu_unusable={}", line(why)));
    }
    if kind == BackendKind::Gpu {
        // This process opened the GPU for this context, so these only read its state.
        match crate::gpu::device_description() {
            Some(d) => {
                lines.push(format!("gpu_devices={}", crate::gpu::device_count()));
                lines.push(format!("gpu={}", line(&d)));
            }
            None => {
                let why = crate::gpu::unavailable_reason().unwrap_or_else(|| "unknown".into());
                lines.push("gpu_devices=0".into());
                lines.push(format!("gpu_unusable={}", line(&why)));
            }
        }
    }
    let threads = backend::in_pool(rayon::current_num_threads);
    lines.push(format!("cpu_threads={threads}"));
    lines.push(format!("cpu_simd={}", crate::simd::active()));
    lines.push(format!("version={}", env!("CARGO_PKG_VERSION")));
    lines.join("\n") + "\n"
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
