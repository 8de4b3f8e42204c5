//! `pqgpu.so`: an OpenSSL 3 provider that serves OpenSSL 3.5's own ML-DSA-44/65/87 (key
//! management and signatures, property `provider=pqgpu`) from pqgpu. It links no libcrypto:
//! OpenSSL's core reaches it through dispatch tables (`abi`), and OpenSSL's default provider
//! keeps doing the encoding, decoding, OIDs and TLS signature schemes, moving keys here by
//! export/import with the same parameter names.
//!
//! Layout: `abi` (the provider ABI's types and ids), `params` (OSSL_PARAM reading/writing),
//! `guard` (panic boundary), `keymgmt` and `signature` (the algorithms), `engine` (the one
//! door into pqgpu), `caps` (TLS signature schemes), `async_job`, `batch` and `pool` (OpenSSL async jobs, coalescing, helper threads).

pub mod abi;
mod async_job;
mod batch;
mod caps;
pub mod engine;
pub mod guard;
pub mod keymgmt;
pub mod params;
mod pool;
pub mod signature;

use abi::{Algorithm, Dispatch, Param, Table};
use guard::guard;
use params::{status, Params};
use pqgpu::mldsa::ParamSet;
use std::ffi::{c_char, c_int, c_void};
use std::ptr;

/// The parameter set of dispatch-table index `s` (0, 1, 2 = ML-DSA-44, -65, -87).
pub const fn set_of(s: usize) -> ParamSet {
    match s {
        0 => ParamSet::MlDsa44,
        1 => ParamSet::MlDsa65,
        _ => ParamSet::MlDsa87,
    }
}

const PROPS: *const c_char = c"provider=pqgpu".as_ptr();

const fn alg(names: &'static std::ffi::CStr, f: &'static Table<Dispatch, 18>) -> Algorithm {
    Algorithm {
        names: names.as_ptr(),
        properties: PROPS,
        implementation: f.as_ptr(),
        description: ptr::null(),
    }
}

const fn sig(names: &'static std::ffi::CStr, f: &'static Table<Dispatch, 16>) -> Algorithm {
    Algorithm {
        names: names.as_ptr(),
        properties: PROPS,
        implementation: f.as_ptr(),
        description: ptr::null(),
    }
}

const ALG_END: Algorithm = Algorithm {
    names: ptr::null(),
    properties: ptr::null(),
    implementation: ptr::null(),
    description: ptr::null(),
};

// OpenSSL 3.5's names for ML-DSA (providers/implementations/include/prov/names.h).
const N44: &std::ffi::CStr = c"ML-DSA-44:MLDSA44:2.16.840.1.101.3.4.3.17:id-ml-dsa-44";
const N65: &std::ffi::CStr = c"ML-DSA-65:MLDSA65:2.16.840.1.101.3.4.3.18:id-ml-dsa-65";
const N87: &std::ffi::CStr = c"ML-DSA-87:MLDSA87:2.16.840.1.101.3.4.3.19:id-ml-dsa-87";

static KEYMGMT: Table<Algorithm, 4> = Table([
    alg(N44, &keymgmt::MLDSA44),
    alg(N65, &keymgmt::MLDSA65),
    alg(N87, &keymgmt::MLDSA87),
    ALG_END,
]);

static SIGNATURE: Table<Algorithm, 4> = Table([
    sig(N44, &signature::MLDSA44),
    sig(N65, &signature::MLDSA65),
    sig(N87, &signature::MLDSA87),
    ALG_END,
]);

unsafe extern "C" fn query_operation(
    _provctx: *mut c_void,
    op: c_int,
    no_cache: *mut c_int,
) -> *const Algorithm {
    if !no_cache.is_null() {
        // SAFETY: OpenSSL's out-pointer.
        unsafe { *no_cache = 0 };
    }
    match op {
        abi::OP_KEYMGMT => KEYMGMT.as_ptr(),
        abi::OP_SIGNATURE => SIGNATURE.as_ptr(),
        _ => ptr::null(),
    }
}

static PROVIDER_GETTABLE: Table<Param, 5> = Table([
    abi::describe(c"name", abi::PARAM_UTF8_PTR),
    abi::describe(c"version", abi::PARAM_UTF8_PTR),
    abi::describe(c"buildinfo", abi::PARAM_UTF8_PTR),
    abi::describe(c"status", abi::PARAM_INTEGER),
    abi::PARAM_END,
]);

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const Param {
    PROVIDER_GETTABLE.as_ptr()
}

const VERSION: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
) {
    Ok(v) => v,
    Err(_) => panic!("version without NUL"),
};

unsafe extern "C" fn get_params(_provctx: *mut c_void, params: *mut Param) -> c_int {
    guard(0, || {
        // SAFETY: a terminated, writable array from OpenSSL.
        let p = unsafe { Params::new(params) };
        status(
            p.set_utf8(c"name", c"pqgpu: ML-DSA on NVIDIA GPUs and CPUs")
                .is_ok()
                && p.set_utf8(c"version", VERSION).is_ok()
                && p.set_utf8(c"buildinfo", VERSION).is_ok()
                && p.set_int(c"status", 1).is_ok(),
        )
    })
}

unsafe extern "C" fn teardown(_provctx: *mut c_void) {}

static OUT: Table<Dispatch, 6> = Table([
    entry!(abi::PROVIDER_GET_CAPABILITIES, caps::get_capabilities),
    entry!(abi::PROVIDER_TEARDOWN, teardown),
    entry!(abi::PROVIDER_GETTABLE_PARAMS, gettable_params),
    entry!(abi::PROVIDER_GET_PARAMS, get_params),
    entry!(abi::PROVIDER_QUERY_OPERATION, query_operation),
    abi::DISPATCH_END,
]);

/// Reads this provider's settings from its configuration section (`backend`, `trace`) through
/// the core's get_params.
///
/// # Safety
/// `in_` must be the core's terminated dispatch table and `handle` its handle.
unsafe fn config(handle: *const c_void, in_: *const Dispatch) -> (Option<String>, Option<String>) {
    let mut get: Option<abi::CoreGetParams> = None;
    let mut d = in_;
    // SAFETY: the core's table is terminated by id 0.
    unsafe {
        while !d.is_null() && (*d).id != 0 {
            if (*d).id == abi::CORE_GET_PARAMS {
                get = (*d)
                    .function
                    .map(|f| std::mem::transmute::<unsafe extern "C" fn(), abi::CoreGetParams>(f));
            }
            d = d.add(1);
        }
    }
    let Some(get) = get else { return (None, None) };
    let mut backend: *const c_char = ptr::null();
    let mut trace: *const c_char = ptr::null();
    let ptr_param = |key: &'static std::ffi::CStr, slot: *mut *const c_char| Param {
        key: key.as_ptr(),
        data_type: abi::PARAM_UTF8_PTR,
        data: slot.cast(),
        data_size: 0,
        return_size: abi::PARAM_UNMODIFIED,
    };
    let mut arr = [
        ptr_param(c"backend", &mut backend),
        ptr_param(c"trace", &mut trace),
        abi::PARAM_END,
    ];
    // SAFETY: the core's get_params with our handle and a terminated array of UTF8_PTRs.
    if unsafe { get(handle, arr.as_mut_ptr()) } == 0 {
        return (None, None);
    }
    // SAFETY: the core set each pointer to a NUL-terminated config value, or left it NULL.
    let read = |p: *const c_char| {
        (!p.is_null()).then(|| {
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        })
    };
    (read(backend), read(trace))
}

/// The module's entry point, called by OpenSSL when it loads `pqgpu.so`.
///
/// # Safety
/// Called by OpenSSL's core with its handle, its dispatch table and two out-pointers.
#[no_mangle]
pub unsafe extern "C" fn OSSL_provider_init(
    handle: *const c_void,
    in_: *const Dispatch,
    out: *mut *const Dispatch,
    provctx: *mut *mut c_void,
) -> c_int {
    guard(0, || {
        if out.is_null() || provctx.is_null() {
            return 0;
        }
        // SAFETY: forwarded from OpenSSL.
        let (backend, trace) = unsafe { config(handle, in_) };
        if engine::configure(backend.as_deref(), trace.as_deref()).is_err() {
            return 0;
        }
        async_job::init();
        // SAFETY: OpenSSL's out-pointers.
        unsafe {
            *out = OUT.as_ptr();
            // The provider keeps no per-instance state: a non-NULL marker as the context.
            *provctx = handle as *mut c_void;
        }
        1
    })
}
