//! `pqgpu.so`: an OpenSSL 3 provider that serves OpenSSL 3.5's own ML-DSA-44/65/87 and
//! SLH-DSA (key management and signatures, property `provider=pqgpu`) from pqgpu. It links
//! no libcrypto: OpenSSL's core reaches it through dispatch tables (`abi`), and OpenSSL's
//! default provider keeps doing the encoding, decoding, OIDs and TLS signature schemes, moving
//! keys here by export/import with the same parameter names.
//!
//! Layout: `abi` (the provider ABI's types and ids), `params` (OSSL_PARAM reading/writing),
//! `guard` (panic boundary), `key_family` (the key-management skeleton every family's keys
//! plug into), `mldsa_key` (ML-DSA keys), `signature` (the signature operation over `sig_key`),
//! `engine` (the one door into pqgpu), `caps` (TLS signature schemes), `async_job` and `pool`
//! (OpenSSL async jobs, helper threads).
//!
//! SLH-DSA (all twelve FIPS 205 sets) is served under OpenSSL 3.5's names like ML-DSA
//! (`slhdsa_key`; the default provider encodes and decodes the keys).
//!
//! CTRU-Prime-653/761/1277, which OpenSSL does not know, are served whole under a private OID
//! arc: key management (`ctru_key`), the KEM (`kem`), and encoders/decoders (`codec` over
//! `der`) so keys can be written to files and read back; `core` holds the core's functions.
//!
//! ML-KEM-512/768/1024 are served under OpenSSL 3.5's own names like ML-DSA (`mlkem_key`, the
//! KEM in `kem`; OpenSSL's default provider encodes and decodes the keys), with the hybrid
//! X25519MLKEM768 (`hybrid_key`) and the TLS groups of all four (`tls_group`).

pub mod abi;
mod async_job;
mod caps;
mod codec;
mod core;
pub mod ctru_key;
mod der;
pub mod engine;
pub mod guard;
pub mod hybrid_key;
mod kem;
mod kem_key;
pub mod key_family;
pub mod mldsa_key;
pub mod mlkem_key;
pub mod params;
mod pool;
mod sig_key;
pub mod signature;
pub mod slhdsa_key;
mod static_param;
mod tls_group;

use abi::{Algorithm, Dispatch, Param, Table};
use guard::guard;
use params::{status, Params};
use pqgpu::mldsa::ParamSet;
use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether ML-KEM, X25519MLKEM768 and their TLS groups are served (configuration `ml_kem`;
/// switched off, OpenSSL's default provider does the key exchange and pqgpu only signs).
static ML_KEM: AtomicBool = AtomicBool::new(true);

pub(crate) fn ml_kem_enabled() -> bool {
    ML_KEM.load(Ordering::Relaxed)
}

/// The parameter set of dispatch-table index `s` (0, 1, 2 = ML-DSA-44, -65, -87).
pub const fn set_of(s: usize) -> ParamSet {
    match s {
        0 => ParamSet::MlDsa44,
        1 => ParamSet::MlDsa65,
        _ => ParamSet::MlDsa87,
    }
}

const PROPS: *const c_char = c"provider=pqgpu".as_ptr();

const fn alg<const N: usize>(
    names: &'static std::ffi::CStr,
    f: &'static Table<Dispatch, N>,
) -> Algorithm {
    with_props(names, PROPS, f)
}

const fn with_props<const N: usize>(
    names: &'static std::ffi::CStr,
    props: *const c_char,
    f: &'static Table<Dispatch, N>,
) -> Algorithm {
    Algorithm {
        names: names.as_ptr(),
        properties: props,
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
const ML_DSA: [&std::ffi::CStr; 3] = [
    c"ML-DSA-44:MLDSA44:2.16.840.1.101.3.4.3.17:id-ml-dsa-44",
    c"ML-DSA-65:MLDSA65:2.16.840.1.101.3.4.3.18:id-ml-dsa-65",
    c"ML-DSA-87:MLDSA87:2.16.840.1.101.3.4.3.19:id-ml-dsa-87",
];

const C: [&std::ffi::CStr; 3] = ctru_key::NAMES;

const K: [&std::ffi::CStr; 3] = mlkem_key::NAMES;

/// A family's entries in an operation's list: each set's names with its table.
const fn row<const N: usize, const R: usize>(
    names: [&'static std::ffi::CStr; R],
    f: &'static [Table<Dispatch, N>; R],
) -> [Algorithm; R] {
    let mut a = [ALG_END; R];
    let mut i = 0;
    while i < R {
        a[i] = alg(names[i], &f[i]);
        i += 1;
    }
    a
}

/// The entries of `parts` in order, then the end (`M` must be their number plus one).
const fn list<const M: usize>(parts: &[&[Algorithm]]) -> [Algorithm; M] {
    let mut a = [ALG_END; M];
    let (mut i, mut at) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            a[at] = parts[i][j];
            (j, at) = (j + 1, at + 1);
        }
        i += 1;
    }
    assert!(at + 1 == M, "the list's length");
    a
}

/// The first `M - 1` entries of `list`, then the end.
const fn prefix<const N: usize, const M: usize>(list: &[Algorithm; N]) -> [Algorithm; M] {
    let mut a = [ALG_END; M];
    let mut i = 0;
    while i + 1 < M {
        a[i] = list[i];
        i += 1;
    }
    a
}

/// ML-DSA, SLH-DSA and CTRU-Prime first, then ML-KEM and X25519MLKEM768 (the query answers
/// the first eighteen alone when ML-KEM is switched off).
static KEYMGMT: Table<Algorithm, 23> = Table(list(&[
    &row(ML_DSA, &mldsa_key::KEYMGMT),
    &row(slhdsa_key::NAMES, &slhdsa_key::KEYMGMT),
    &row(C, &ctru_key::KEYMGMT),
    &row(K, &mlkem_key::KEYMGMT),
    &[alg(hybrid_key::NAME, &hybrid_key::KEYMGMT)],
]));

static KEYMGMT_NO_ML_KEM: Table<Algorithm, 19> = Table(prefix(&KEYMGMT.0));

static SIGNATURE: Table<Algorithm, 16> = Table(list(&[
    &row(ML_DSA, &signature::ML_DSA),
    &row(slhdsa_key::NAMES, &signature::SLH_DSA),
]));

static KEM: Table<Algorithm, 8> = Table(list(&[
    &row(C, &kem::CTRU),
    &row(K, &kem::ML_KEM),
    &[alg(hybrid_key::NAME, &kem::X25519_ML_KEM_768)],
]));

static KEM_NO_ML_KEM: Table<Algorithm, 4> = Table(prefix(&KEM.0));

macro_rules! encoders {
    ($s:literal) => {
        [
            with_props(C[$s], codec::ENC_PROPS[0].as_ptr(), &codec::ENCODERS[$s][0]),
            with_props(C[$s], codec::ENC_PROPS[1].as_ptr(), &codec::ENCODERS[$s][1]),
            with_props(C[$s], codec::ENC_PROPS[2].as_ptr(), &codec::ENCODERS[$s][2]),
            with_props(C[$s], codec::ENC_PROPS[3].as_ptr(), &codec::ENCODERS[$s][3]),
        ]
    };
}

static ENCODER: Table<Algorithm, 13> = {
    let [a, b, c] = [encoders!(0), encoders!(1), encoders!(2)];
    Table([
        a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], c[0], c[1], c[2], c[3], ALG_END,
    ])
};

static DECODER: Table<Algorithm, 7> = Table([
    with_props(C[0], codec::DEC_PROPS[0].as_ptr(), &codec::DECODERS[0][0]),
    with_props(C[0], codec::DEC_PROPS[1].as_ptr(), &codec::DECODERS[0][1]),
    with_props(C[1], codec::DEC_PROPS[0].as_ptr(), &codec::DECODERS[1][0]),
    with_props(C[1], codec::DEC_PROPS[1].as_ptr(), &codec::DECODERS[1][1]),
    with_props(C[2], codec::DEC_PROPS[0].as_ptr(), &codec::DECODERS[2][0]),
    with_props(C[2], codec::DEC_PROPS[1].as_ptr(), &codec::DECODERS[2][1]),
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
    let ml_kem = ml_kem_enabled();
    match op {
        abi::OP_KEYMGMT if ml_kem => KEYMGMT.as_ptr(),
        abi::OP_KEYMGMT => KEYMGMT_NO_ML_KEM.as_ptr(),
        abi::OP_SIGNATURE => SIGNATURE.as_ptr(),
        abi::OP_KEM if ml_kem => KEM.as_ptr(),
        abi::OP_KEM => KEM_NO_ML_KEM.as_ptr(),
        abi::OP_ENCODER => ENCODER.as_ptr(),
        abi::OP_DECODER => DECODER.as_ptr(),
        _ => ptr::null(),
    }
}

static PROVIDER_GETTABLE: Table<Param, 8> = Table([
    abi::describe(c"name", abi::PARAM_UTF8_PTR),
    abi::describe(c"version", abi::PARAM_UTF8_PTR),
    abi::describe(c"buildinfo", abi::PARAM_UTF8_PTR),
    abi::describe(c"status", abi::PARAM_INTEGER),
    abi::describe(c"pqgpu-backend", abi::PARAM_UTF8_PTR),
    abi::describe(c"pqgpu-gpu-unusable", abi::PARAM_UTF8_STRING),
    abi::describe(c"pqgpu-cuda-pid", abi::PARAM_INTEGER),
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

/// The provider's parameters: OpenSSL's four, and what this process runs on (none of which
/// touches the GPU): `pqgpu-backend` (`none` until the first operation, then `cpu` or
/// `gpu`), `pqgpu-gpu-unusable` (why not the GPU, empty when nothing says so) and
/// `pqgpu-cuda-pid` (the process that initialised the CUDA driver, this one or one it was
/// forked from; 0: none).
unsafe extern "C" fn get_params(_provctx: *mut c_void, params: *mut Param) -> c_int {
    guard(0, || {
        // SAFETY: a terminated, writable array from OpenSSL.
        let p = unsafe { Params::new(params) };
        let cuda_pid = pqgpu::gpu::cuda_initialised_by().unwrap_or(0);
        let unusable = pqgpu::gpu::unavailable_reason().unwrap_or_default();
        status(
            p.set_utf8(
                c"name",
                c"pqgpu: ML-DSA, SLH-DSA, ML-KEM and CTRU-Prime on NVIDIA GPUs and CPUs",
            )
            .is_ok()
                && p.set_utf8(c"version", VERSION).is_ok()
                && p.set_utf8(c"buildinfo", VERSION).is_ok()
                && p.set_int(c"status", 1).is_ok()
                && p.set_utf8(c"pqgpu-backend", engine::running_on()).is_ok()
                && p.set_utf8_copy(c"pqgpu-gpu-unusable", &unusable).is_ok()
                && p.set_int(c"pqgpu-cuda-pid", cuda_pid as i32).is_ok(),
        )
    })
}

/// This provider's reason codes, named on the error queue ("pqgpu" is the library).
static REASONS: Table<abi::Item, 2> = Table([
    abi::Item {
        id: core::REASON_GPU_UNUSABLE,
        ptr: c"GPU unusable".as_ptr().cast(),
    },
    abi::Item {
        id: 0,
        ptr: ptr::null(),
    },
]);

unsafe extern "C" fn get_reason_strings(_provctx: *mut c_void) -> *const abi::Item {
    REASONS.as_ptr()
}

unsafe extern "C" fn teardown(_provctx: *mut c_void) {}

static OUT: Table<Dispatch, 7> = Table([
    entry!(abi::PROVIDER_GET_REASON_STRINGS, get_reason_strings),
    entry!(abi::PROVIDER_GET_CAPABILITIES, caps::get_capabilities),
    entry!(abi::PROVIDER_TEARDOWN, teardown),
    entry!(abi::PROVIDER_GETTABLE_PARAMS, gettable_params),
    entry!(abi::PROVIDER_GET_PARAMS, get_params),
    entry!(abi::PROVIDER_QUERY_OPERATION, query_operation),
    abi::DISPATCH_END,
]);

/// This provider's settings from its configuration section.
#[derive(Default)]
struct Settings {
    backend: Option<String>,
    trace: Option<String>,
    ml_kem: Option<String>,
    serve: Vec<(pqgpu::serve::Opt, String)>,
}

/// Reads the settings (`backend`, `trace`, `ml_kem`, the serving options of `engine::SERVE_KEYS`)
/// through the core's get_params.
///
/// # Safety
/// `handle` must be the core's handle.
unsafe fn config(handle: *const c_void, get: Option<abi::CoreGetParams>) -> Settings {
    let Some(get) = get else {
        return Settings::default();
    };
    let keys: Vec<&'static std::ffi::CStr> = [c"backend", c"trace", c"ml_kem"]
        .into_iter()
        .chain(engine::SERVE_KEYS.iter().map(|(k, _)| *k))
        .collect();
    let mut values: Vec<*const c_char> = vec![ptr::null(); keys.len()];
    let mut arr: Vec<Param> = keys
        .iter()
        .zip(values.iter_mut())
        .map(|(k, slot)| Param {
            key: k.as_ptr(),
            data_type: abi::PARAM_UTF8_PTR,
            data: (slot as *mut *const c_char).cast(),
            data_size: 0,
            return_size: abi::PARAM_UNMODIFIED,
        })
        .collect();
    arr.push(abi::PARAM_END);
    // SAFETY: the core's get_params with our handle and a terminated array of UTF8_PTRs.
    if unsafe { get(handle, arr.as_mut_ptr()) } == 0 {
        return Settings::default();
    }
    drop(arr);
    // SAFETY: the core set each pointer to a NUL-terminated config value, or left it NULL.
    let read = |p: *const c_char| {
        (!p.is_null()).then(|| {
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        })
    };
    Settings {
        backend: read(values[0]),
        trace: read(values[1]),
        ml_kem: read(values[2]),
        serve: engine::SERVE_KEYS
            .iter()
            .zip(&values[3..])
            .filter_map(|((_, o), v)| read(*v).map(|v| (*o, v)))
            .collect(),
    }
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
        let core = unsafe { core::capture(in_) };
        core::set_handle(handle);
        // SAFETY: as above.
        let cfg = unsafe { config(handle, core.get_params) };
        if engine::configure(cfg.backend.as_deref(), cfg.trace.as_deref(), &cfg.serve).is_err() {
            return 0;
        }
        match cfg.ml_kem.as_deref().map(str::trim) {
            None | Some("yes" | "on" | "1") => ML_KEM.store(true, Ordering::Relaxed),
            Some("no" | "off" | "0") => ML_KEM.store(false, Ordering::Relaxed),
            Some(_) => return 0,
        }
        async_job::init();
        for (oid, name) in ctru_key::OIDS.iter().zip(ctru_key::SHORT) {
            core::register_oid(handle, oid, name);
        }
        // SAFETY: OpenSSL's out-pointers.
        unsafe {
            *out = OUT.as_ptr();
            // The provider keeps no per-instance state: a non-NULL marker as the context.
            *provctx = handle as *mut c_void;
        }
        1
    })
}
