//! Owned C contexts for the tests that call the C ABI as C does.

use pqgpu::ffi::pqg_backend_values::{PQG_BACKEND_CPU, PQG_BACKEND_GPU};
use pqgpu::ffi::*;
use std::ffi::CStr;
use std::ptr::{null_mut, NonNull};

/// A context from `pqg_context_new`, freed when dropped.
pub struct Ctx(pub *mut pqg_context);
// SAFETY: a pqg_context may be used from any thread at once (the C contract).
unsafe impl Send for Ctx {}
// SAFETY: as above.
unsafe impl Sync for Ctx {}

impl Ctx {
    /// A context on `backend` (a `PQG_BACKEND_*` value), or the status `pqg_context_new` gave.
    pub fn new(backend: pqg_backend) -> Result<Ctx, pqg_status> {
        let mut c = null_mut();
        // SAFETY: a valid out-pointer.
        match unsafe { pqg_context_new(backend, &mut c) } {
            PQG_OK => Ok(Ctx(NonNull::new(c)
                .expect("PQG_OK with a NULL context")
                .as_ptr())),
            st => {
                assert!(c.is_null(), "a failed pqg_context_new left a context");
                Err(st)
            }
        }
    }

    /// A CPU context (always available).
    pub fn cpu() -> Ctx {
        Ctx::new(PQG_BACKEND_CPU as pqg_backend).expect("CPU context")
    }

    /// A GPU context, or `None` after printing why the calling test skips (no GPU, as on CI).
    pub fn gpu_or_skip() -> Option<Ctx> {
        match Ctx::new(PQG_BACKEND_GPU as pqg_backend) {
            Ok(c) => Some(c),
            Err(st) => {
                print_gpu_skip(st);
                None
            }
        }
    }

    /// The context's `pqg_context_describe` text.
    pub fn describe(&self) -> String {
        describe(self.0)
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: from pqg_context_new, freed once.
        unsafe { pqg_context_free(self.0) }
    }
}

/// Prints `SKIPPED: no usable GPU (<reason>; pqg_context_new: <status>)` for a GPU context
/// that `pqg_context_new` refused with `st`.
pub fn print_gpu_skip(st: pqg_status) {
    // SAFETY: pqg_status_str returns a static NUL-terminated string.
    let name = unsafe { CStr::from_ptr(pqg_status_str(st)) }.to_string_lossy();
    super::skip(&format!(
        "no usable GPU ({}; pqg_context_new: {name})",
        super::no_gpu_reason("no reason given")
    ));
}

/// `pqg_context_describe` of a live context, through the size query the header documents.
pub fn describe(ctx: *const pqg_context) -> String {
    let mut size = 0usize;
    // SAFETY: a live context; NULL buffer with length 0 asks for the size.
    let st = unsafe { pqg_context_describe(ctx, std::ptr::null_mut(), 0, &mut size) };
    assert_eq!(st, PQG_ERR_BAD_LENGTH, "size query");
    let mut buf = vec![0u8; size];
    let mut written = 0usize;
    // SAFETY: `size` writable bytes.
    let st = unsafe { pqg_context_describe(ctx, buf.as_mut_ptr().cast(), size, &mut written) };
    assert_eq!((st, written), (PQG_OK, size));
    CStr::from_bytes_with_nul(&buf)
        .expect("one NUL, at the end")
        .to_str()
        .expect("UTF-8")
        .to_string()
}

/// The value of `key` in a description (`key=value` lines), if present.
pub fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
}
