//! The stable OpenSSL provider ABI, declared by hand: only the types and ids this provider uses.
//! Values are those of OpenSSL's `core.h` / `core_dispatch.h` (stable since 3.0). No libcrypto
//! is linked: everything of the core arrives through the `in` dispatch table.

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `OSSL_DISPATCH`: a function id and an untyped function pointer.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Dispatch {
    pub id: c_int,
    pub function: Option<unsafe extern "C" fn()>,
}

/// `OSSL_PARAM`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Param {
    pub key: *const c_char,
    pub data_type: c_uint,
    pub data: *mut c_void,
    pub data_size: usize,
    pub return_size: usize,
}

/// `OSSL_ITEM`: a number and a pointer (the provider's reason strings).
#[repr(C)]
pub struct Item {
    pub id: c_uint,
    pub ptr: *const c_void,
}

/// `OSSL_ALGORITHM`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Algorithm {
    pub names: *const c_char,
    pub properties: *const c_char,
    pub implementation: *const Dispatch,
    pub description: *const c_char,
}

/// Static tables hold raw pointers to static data only, never mutated: safe to share.
#[repr(transparent)]
pub struct Table<T, const N: usize>(pub [T; N]);
// SAFETY: the tables are immutable statics whose pointers point to other immutable statics.
unsafe impl<T, const N: usize> Sync for Table<T, N> {}

impl<T, const N: usize> Table<T, N> {
    pub const fn as_ptr(&'static self) -> *const T {
        self.0.as_ptr()
    }
}

/// `OSSL_PARAM_UNMODIFIED`: `return_size` of a parameter nobody has set.
pub const PARAM_UNMODIFIED: usize = usize::MAX;

// OSSL_PARAM data types.
pub const PARAM_INTEGER: c_uint = 1;
pub const PARAM_UNSIGNED_INTEGER: c_uint = 2;
pub const PARAM_UTF8_STRING: c_uint = 4;
pub const PARAM_OCTET_STRING: c_uint = 5;
pub const PARAM_UTF8_PTR: c_uint = 6;
pub const PARAM_OCTET_PTR: c_uint = 7;

// Operation ids.
pub const OP_KEYMGMT: c_int = 10;
pub const OP_SIGNATURE: c_int = 12;
pub const OP_KEM: c_int = 14;
pub const OP_ENCODER: c_int = 20;
pub const OP_DECODER: c_int = 21;

// Key selection bits.
pub const SELECT_PRIVATE_KEY: c_int = 0x01;
pub const SELECT_PUBLIC_KEY: c_int = 0x02;
pub const SELECT_KEYPAIR: c_int = SELECT_PRIVATE_KEY | SELECT_PUBLIC_KEY;
/// Domain and other parameters (`OSSL_KEYMGMT_SELECT_ALL_PARAMETERS`).
pub const SELECT_ALL_PARAMETERS: c_int = 0x04 | 0x80;

// Core functions (the `in` table).
pub const CORE_GETTABLE_PARAMS: c_int = 1;
pub const CORE_GET_PARAMS: c_int = 2;
pub const CORE_NEW_ERROR: c_int = 5;
pub const CORE_SET_ERROR_DEBUG: c_int = 6;
pub const CORE_VSET_ERROR: c_int = 7;
pub const CORE_OBJ_CREATE: c_int = 12;
pub const BIO_READ_EX: c_int = 42;
pub const BIO_WRITE_EX: c_int = 43;

// Provider functions (the `out` table).
pub const PROVIDER_TEARDOWN: c_int = 1024;
pub const PROVIDER_GETTABLE_PARAMS: c_int = 1025;
pub const PROVIDER_GET_PARAMS: c_int = 1026;
pub const PROVIDER_QUERY_OPERATION: c_int = 1027;
pub const PROVIDER_GET_REASON_STRINGS: c_int = 1029;
pub const PROVIDER_GET_CAPABILITIES: c_int = 1030;

// Key management.
pub const KEYMGMT_NEW: c_int = 1;
pub const KEYMGMT_GEN_INIT: c_int = 2;
pub const KEYMGMT_GEN_SET_PARAMS: c_int = 4;
pub const KEYMGMT_GEN_SETTABLE_PARAMS: c_int = 5;
pub const KEYMGMT_GEN: c_int = 6;
pub const KEYMGMT_GEN_CLEANUP: c_int = 7;
pub const KEYMGMT_LOAD: c_int = 8;
pub const KEYMGMT_FREE: c_int = 10;
pub const KEYMGMT_GET_PARAMS: c_int = 11;
pub const KEYMGMT_GETTABLE_PARAMS: c_int = 12;
pub const KEYMGMT_SET_PARAMS: c_int = 13;
pub const KEYMGMT_SETTABLE_PARAMS: c_int = 14;
pub const KEYMGMT_HAS: c_int = 21;
pub const KEYMGMT_VALIDATE: c_int = 22;
pub const KEYMGMT_MATCH: c_int = 23;
pub const KEYMGMT_IMPORT: c_int = 40;
pub const KEYMGMT_IMPORT_TYPES: c_int = 41;
pub const KEYMGMT_EXPORT: c_int = 42;
pub const KEYMGMT_EXPORT_TYPES: c_int = 43;
pub const KEYMGMT_DUP: c_int = 44;

// Signature.
pub const SIGNATURE_NEWCTX: c_int = 1;
pub const SIGNATURE_SIGN: c_int = 3;
pub const SIGNATURE_VERIFY: c_int = 5;
pub const SIGNATURE_DIGEST_SIGN_INIT: c_int = 8;
pub const SIGNATURE_DIGEST_SIGN: c_int = 11;
pub const SIGNATURE_DIGEST_VERIFY_INIT: c_int = 12;
pub const SIGNATURE_DIGEST_VERIFY: c_int = 15;
pub const SIGNATURE_FREECTX: c_int = 16;
pub const SIGNATURE_DUPCTX: c_int = 17;
pub const SIGNATURE_GET_CTX_PARAMS: c_int = 18;
pub const SIGNATURE_GETTABLE_CTX_PARAMS: c_int = 19;
pub const SIGNATURE_SET_CTX_PARAMS: c_int = 20;
pub const SIGNATURE_SETTABLE_CTX_PARAMS: c_int = 21;
pub const SIGNATURE_SIGN_MESSAGE_INIT: c_int = 27;
pub const SIGNATURE_VERIFY_MESSAGE_INIT: c_int = 30;

// KEM.
pub const KEM_NEWCTX: c_int = 1;
pub const KEM_ENCAPSULATE_INIT: c_int = 2;
pub const KEM_ENCAPSULATE: c_int = 3;
pub const KEM_DECAPSULATE_INIT: c_int = 4;
pub const KEM_DECAPSULATE: c_int = 5;
pub const KEM_FREECTX: c_int = 6;
pub const KEM_DUPCTX: c_int = 7;
pub const KEM_SET_CTX_PARAMS: c_int = 10;
pub const KEM_SETTABLE_CTX_PARAMS: c_int = 11;

// Encoders and decoders.
pub const CODEC_NEWCTX: c_int = 1;
pub const CODEC_FREECTX: c_int = 2;
pub const CODEC_SET_CTX_PARAMS: c_int = 5;
pub const CODEC_SETTABLE_CTX_PARAMS: c_int = 6;
pub const CODEC_DOES_SELECTION: c_int = 10;
pub const ENCODER_ENCODE: c_int = 11;
pub const ENCODER_IMPORT_OBJECT: c_int = 20;
pub const ENCODER_FREE_OBJECT: c_int = 21;
pub const DECODER_DECODE: c_int = 11;
pub const DECODER_EXPORT_OBJECT: c_int = 20;

/// `OSSL_OBJECT_PKEY`: the object type a decoder reports for a key.
pub const OBJECT_PKEY: c_int = 2;

/// `OSSL_CALLBACK`: receives exported key parameters.
pub type Callback = unsafe extern "C" fn(params: *const Param, arg: *mut c_void) -> c_int;
/// `OSSL_FUNC_core_get_params`.
pub type CoreGetParams = unsafe extern "C" fn(handle: *const c_void, params: *mut Param) -> c_int;
/// `OSSL_FUNC_core_new_error`.
pub type CoreNewError = unsafe extern "C" fn(handle: *const c_void);
/// `OSSL_FUNC_core_set_error_debug`.
pub type CoreSetErrorDebug = unsafe extern "C" fn(
    handle: *const c_void,
    file: *const c_char,
    line: c_int,
    func: *const c_char,
);
/// `OSSL_FUNC_core_vset_error`; its `va_list` argument is passed as a pointer on x86-64 and
/// aarch64 Linux, and a format without conversions never reads it.
pub type CoreVsetError =
    unsafe extern "C" fn(handle: *const c_void, reason: u32, fmt: *const c_char, args: *mut c_void);

/// `OSSL_FUNC_core_obj_create`.
pub type CoreObjCreate = unsafe extern "C" fn(
    handle: *const c_void,
    oid: *const c_char,
    sn: *const c_char,
    ln: *const c_char,
) -> c_int;
/// `OSSL_FUNC_BIO_read_ex` (on an `OSSL_CORE_BIO`).
pub type BioReadEx = unsafe extern "C" fn(
    bio: *mut c_void,
    data: *mut c_void,
    len: usize,
    read: *mut usize,
) -> c_int;
/// `OSSL_FUNC_BIO_write_ex`.
pub type BioWriteEx = unsafe extern "C" fn(
    bio: *mut c_void,
    data: *const c_void,
    len: usize,
    written: *mut usize,
) -> c_int;

/// One dispatch entry from a typed function pointer.
#[macro_export]
macro_rules! entry {
    ($id:expr, $f:expr) => {{
        let f = $f as *const ();
        $crate::abi::Dispatch {
            id: $id,
            // SAFETY: OpenSSL calls the entry through the type its id names, which is the
            // type of `$f`; an untyped `fn()` is how OSSL_DISPATCH stores every function.
            function: Some(unsafe { std::mem::transmute::<*const (), unsafe extern "C" fn()>(f) }),
        }
    }};
}

/// The end of a dispatch table.
pub const DISPATCH_END: Dispatch = Dispatch {
    id: 0,
    function: None,
};

/// The end of a parameter array.
pub const PARAM_END: Param = Param {
    key: std::ptr::null(),
    data_type: 0,
    data: std::ptr::null_mut(),
    data_size: 0,
    return_size: 0,
};

/// A descriptor for gettable/settable tables: a name, a type and, for integers, the size of a
/// C int (OpenSSL sizes the buffers it builds from text, e.g. `-pkeyopt deterministic:1`, by it).
pub const fn describe(key: &'static std::ffi::CStr, data_type: c_uint) -> Param {
    let int = data_type == PARAM_INTEGER || data_type == PARAM_UNSIGNED_INTEGER;
    Param {
        key: key.as_ptr(),
        data_type,
        data: std::ptr::null_mut(),
        data_size: if int { size_of::<std::ffi::c_int>() } else { 0 },
        return_size: 0,
    }
}
