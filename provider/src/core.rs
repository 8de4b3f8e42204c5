//! The functions this provider takes from the core's `in` dispatch table: configuration
//! parameters, OID registration, the OpenSSL error queue, and the core BIO calls that encoders
//! and decoders read and write through. Captured once at load (the core's table is the same
//! for every load in one process).

use crate::abi::{
    self, BioReadEx, BioWriteEx, CoreGetParams, CoreNewError, CoreObjCreate, CoreSetErrorDebug,
    CoreVsetError, Dispatch,
};
use once_cell::sync::OnceCell;
use std::ffi::{c_void, CStr, CString};
use std::sync::atomic::{AtomicPtr, Ordering};

#[derive(Clone, Copy, Default)]
pub struct Core {
    pub get_params: Option<CoreGetParams>,
    pub obj_create: Option<CoreObjCreate>,
    pub bio_read_ex: Option<BioReadEx>,
    pub bio_write_ex: Option<BioWriteEx>,
    pub new_error: Option<CoreNewError>,
    pub set_error_debug: Option<CoreSetErrorDebug>,
    pub vset_error: Option<CoreVsetError>,
}

static CORE: OnceCell<Core> = OnceCell::new();

/// Reads the functions this provider uses out of the core's table.
///
/// # Safety
/// `in_` must be NULL or the core's dispatch table, terminated by id 0.
pub unsafe fn capture(in_: *const Dispatch) -> Core {
    let mut c = Core::default();
    let mut d = in_;
    // SAFETY: the core's table is terminated by id 0; each entry's function has the C type
    // its id names in core_dispatch.h, which the transmutes below restore.
    unsafe {
        while !d.is_null() && (*d).id != 0 {
            if let Some(f) = (*d).function {
                match (*d).id {
                    abi::CORE_GET_PARAMS => {
                        c.get_params =
                            Some(std::mem::transmute::<unsafe extern "C" fn(), CoreGetParams>(f))
                    }
                    abi::CORE_OBJ_CREATE => {
                        c.obj_create =
                            Some(std::mem::transmute::<unsafe extern "C" fn(), CoreObjCreate>(f))
                    }
                    abi::BIO_READ_EX => {
                        c.bio_read_ex =
                            Some(std::mem::transmute::<unsafe extern "C" fn(), BioReadEx>(f))
                    }
                    abi::CORE_NEW_ERROR => {
                        c.new_error = Some(std::mem::transmute::<
                            unsafe extern "C" fn(),
                            CoreNewError,
                        >(f))
                    }
                    abi::CORE_SET_ERROR_DEBUG => {
                        c.set_error_debug = Some(std::mem::transmute::<
                            unsafe extern "C" fn(),
                            CoreSetErrorDebug,
                        >(f))
                    }
                    abi::CORE_VSET_ERROR => {
                        c.vset_error =
                            Some(std::mem::transmute::<unsafe extern "C" fn(), CoreVsetError>(f))
                    }
                    abi::BIO_WRITE_EX => {
                        c.bio_write_ex =
                            Some(std::mem::transmute::<unsafe extern "C" fn(), BioWriteEx>(f))
                    }
                    _ => {}
                }
            }
            d = d.add(1);
        }
    }
    let _ = CORE.set(c);
    c
}

/// The core's handle for this provider (what the error functions take).
static HANDLE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Keeps the core's handle (from `OSSL_provider_init`).
pub fn set_handle(handle: *const c_void) {
    HANDLE.store(handle.cast_mut(), Ordering::Release);
}

/// This provider's reason codes on the OpenSSL error queue (`get_reason_strings`).
pub const REASON_GPU_UNUSABLE: u32 = 1;

/// Puts an error on the calling thread's OpenSSL error queue, as `ERR_raise_data` does:
/// `reason` (one of this provider's codes) with `text` as its data, and where it was raised.
pub fn raise(reason: u32, text: &str, file: &'static CStr, line: u32, func: &'static CStr) {
    let c = core();
    let (Some(new), Some(vset)) = (c.new_error, c.vset_error) else {
        return;
    };
    let handle = HANDLE.load(Ordering::Acquire).cast_const();
    // The text is the format: '%' doubled and NULs dropped, it has no conversions, so the
    // argument list is never read (see `abi::CoreVsetError`); an empty one is passed.
    let fmt = CString::new(text.replace('%', "%%").replace('\0', "")).unwrap_or_default();
    let mut no_args = [0u64; 4];
    // SAFETY: the core's error functions with its handle, NUL-terminated strings that outlive
    // the calls, and an argument list that a format without conversions never reads.
    unsafe {
        new(handle);
        if let Some(debug) = c.set_error_debug {
            debug(handle, file.as_ptr(), line as i32, func.as_ptr());
        }
        vset(handle, reason, fmt.as_ptr(), no_args.as_mut_ptr().cast());
    }
}

fn core() -> Core {
    CORE.get().copied().unwrap_or_default()
}

/// Registers an OID with libcrypto's object table (`OBJ_create` through the core), so
/// OpenSSL's own PKCS#8 and SPKI decoders name our keys by their algorithm name. Failure is
/// harmless: the algorithms are also registered under their dotted OIDs.
pub fn register_oid(handle: *const c_void, oid: &CStr, name: &CStr) {
    if let Some(f) = core().obj_create {
        // SAFETY: the core's function with its handle and NUL-terminated strings.
        unsafe { f(handle, oid.as_ptr(), name.as_ptr(), name.as_ptr()) };
    }
}

/// Everything a core BIO yields, up to `limit` bytes (`None` beyond it, or on a read error).
pub fn read_all(bio: *mut c_void, limit: usize) -> Option<Vec<u8>> {
    let read = core().bio_read_ex?;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let mut n = 0usize;
        // SAFETY: the core's BIO function on the BIO OpenSSL handed us, into a local buffer.
        let ok = unsafe { read(bio, buf.as_mut_ptr().cast(), buf.len(), &mut n) };
        if ok == 0 || n == 0 {
            // BIO_read_ex reports end of data as failure with nothing read.
            return Some(out);
        }
        out.extend_from_slice(&buf[..n.min(buf.len())]);
        if out.len() > limit {
            return None;
        }
    }
}

/// Writes all of `data` to a core BIO.
pub fn write_all(bio: *mut c_void, data: &[u8]) -> bool {
    let Some(write) = core().bio_write_ex else {
        return false;
    };
    let mut off = 0;
    while off < data.len() {
        let mut n = 0usize;
        // SAFETY: the core's BIO function on the BIO OpenSSL handed us; `data[off..]` is live.
        let ok = unsafe { write(bio, data[off..].as_ptr().cast(), data.len() - off, &mut n) };
        if ok == 0 || n == 0 {
            return false;
        }
        off += n;
    }
    true
}
