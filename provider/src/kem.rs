//! CTRU-Prime as an OpenSSL KEM: `EVP_PKEY_encapsulate` / `EVP_PKEY_decapsulate` (and so
//! `openssl pkeyutl -encap/-decap`). Like OpenSSL's ML-KEM, the context parameter `ikme`
//! (32 bytes) makes one encapsulation reproducible (the coins e; for tests and KATs).

use crate::abi::{self, Dispatch, Param, Table};
use crate::ctru_key::{self, Key};
use crate::engine;
use crate::entry;
use crate::guard::guard;
use crate::params::{status, Params};
use pqgpu::ctru::ParamSet;
use std::ffi::{c_int, c_void};
use std::ptr;
use zeroize::Zeroizing;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    None,
    Encaps,
    Decaps,
}

/// One KEM context. `key` is borrowed: OpenSSL keeps the key alive while a context uses it.
#[derive(Clone)]
struct KemCtx {
    set: ParamSet,
    key: *const Key,
    op: Op,
    /// One-shot coins for the next encapsulation.
    ikme: Option<Zeroizing<[u8; 32]>>,
}

impl KemCtx {
    fn key(&self) -> Option<&Key> {
        // SAFETY: a key OpenSSL handed to init and keeps alive while this context uses it.
        unsafe { self.key.as_ref() }
    }

    fn set_params(&mut self, p: &Params) -> bool {
        match p.octets(c"ikme") {
            Ok(Some(e)) if self.op == Op::Encaps => match <[u8; 32]>::try_from(e) {
                Ok(e) => {
                    self.ikme = Some(Zeroizing::new(e));
                    true
                }
                Err(_) => {
                    self.ikme = None;
                    false
                }
            },
            // Decapsulation is deterministic: coins have no meaning there.
            Ok(_) => true,
            Err(_) => false,
        }
    }
}

/// # Safety
/// `c` must be NULL or a context made by this module.
unsafe fn ctx<'a>(c: *mut c_void) -> Option<&'a mut KemCtx> {
    // SAFETY: the caller's promise; OpenSSL does not share a context between threads.
    unsafe { (c as *mut KemCtx).as_mut() }
}

unsafe extern "C" fn newctx<const S: usize>(_provctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let c = KemCtx {
            set: ctru_key::set_of(S),
            key: ptr::null(),
            op: Op::None,
            ikme: None,
        };
        Box::into_raw(Box::new(c)).cast()
    })
}

unsafe extern "C" fn freectx(c: *mut c_void) {
    guard((), || {
        if !c.is_null() {
            // SAFETY: made by Box::into_raw here; OpenSSL frees each context once.
            drop(unsafe { Box::from_raw(c as *mut KemCtx) });
        }
    })
}

unsafe extern "C" fn dupctx(c: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: a context of ours.
        match unsafe { ctx(c) } {
            Some(c) => Box::into_raw(Box::new(c.clone())).cast(),
            None => ptr::null_mut(),
        }
    })
}

fn init(c: *mut c_void, k: *mut c_void, params: *const Param, op: Op) -> c_int {
    // SAFETY: a context of ours.
    let Some(c) = (unsafe { ctx(c) }) else {
        return 0;
    };
    // SAFETY: OpenSSL passes a key of the matching key management.
    let Some(key) = (unsafe { ctru_key::key(k) }) else {
        return 0;
    };
    let usable = match op {
        Op::Encaps => key.pk.is_some(),
        _ => key.sk.is_some(),
    };
    if key.set != c.set || !usable {
        return 0;
    }
    c.key = key;
    c.op = op;
    c.ikme = None;
    // SAFETY: a terminated parameter array or NULL.
    status(c.set_params(&unsafe { Params::new(params) }))
}

unsafe extern "C" fn encapsulate_init(
    c: *mut c_void,
    k: *mut c_void,
    params: *const Param,
) -> c_int {
    guard(0, || init(c, k, params, Op::Encaps))
}

unsafe extern "C" fn decapsulate_init(
    c: *mut c_void,
    k: *mut c_void,
    params: *const Param,
) -> c_int {
    guard(0, || init(c, k, params, Op::Decaps))
}

/// Writes `v` to `out` when `*len` (the buffer's size) holds it; sets `*len` to its length.
///
/// # Safety
/// `out` must hold `*len` writable bytes and `len` be writable.
unsafe fn put(out: *mut u8, len: *mut usize, v: &[u8]) -> bool {
    // SAFETY: the caller's promise.
    unsafe {
        if *len < v.len() {
            return false;
        }
        ptr::copy_nonoverlapping(v.as_ptr(), out, v.len());
        *len = v.len();
    }
    true
}

unsafe extern "C" fn encapsulate(
    c: *mut c_void,
    out: *mut u8,
    outlen: *mut usize,
    secret: *mut u8,
    secretlen: *mut usize,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx(c) }) else {
            return 0;
        };
        if c.op != Op::Encaps {
            return 0;
        }
        let Some(pk) = c.key().and_then(|k| k.pk.clone()) else {
            return 0;
        };
        if out.is_null() {
            if outlen.is_null() && secretlen.is_null() {
                return 0;
            }
            // SAFETY: non-NULL out-pointers from OpenSSL.
            unsafe {
                if !outlen.is_null() {
                    *outlen = c.set.ciphertext_len();
                }
                if !secretlen.is_null() {
                    *secretlen = c.set.shared_secret_len();
                }
            }
            return 1;
        }
        // One-shot coins, as in OpenSSL's ML-KEM: spent by this call, whatever its outcome
        // (a size query above leaves them).
        let ikme = c.ikme.take();
        if secret.is_null() || outlen.is_null() || secretlen.is_null() {
            return 0;
        }
        // SAFETY: reading the sizes OpenSSL passed in.
        if unsafe { *outlen < c.set.ciphertext_len() || *secretlen < c.set.shared_secret_len() } {
            return 0;
        }
        match engine::kem_encaps(c.set, pk, ikme) {
            // SAFETY: out/secret hold *outlen/*secretlen bytes (checked large enough above).
            Ok((ct, ss)) => status(unsafe { put(out, outlen, &ct) && put(secret, secretlen, &ss) }),
            Err(_) => 0,
        }
    })
}

unsafe extern "C" fn decapsulate(
    c: *mut c_void,
    out: *mut u8,
    outlen: *mut usize,
    input: *const u8,
    inlen: usize,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx(c) }) else {
            return 0;
        };
        if c.op != Op::Decaps {
            return 0;
        }
        let Some(sk) = c.key().and_then(|k| k.sk.clone()) else {
            return 0;
        };
        let n = c.set.shared_secret_len();
        if out.is_null() {
            if outlen.is_null() {
                return 0;
            }
            // SAFETY: a non-NULL out-pointer.
            unsafe { *outlen = n };
            return 1;
        }
        if outlen.is_null() || (input.is_null() && inlen != 0) {
            return 0;
        }
        // A ciphertext of the wrong length is refused (no implicit rejection for it).
        if inlen != c.set.ciphertext_len() {
            return 0;
        }
        // SAFETY: input points to inlen readable bytes (OpenSSL's contract).
        let ct = unsafe { std::slice::from_raw_parts(input, inlen) }.to_vec();
        match engine::kem_decaps(c.set, sk, ct) {
            // SAFETY: out holds *outlen bytes.
            Ok(ss) => status(unsafe { put(out, outlen, &ss) }),
            Err(_) => 0,
        }
    })
}

unsafe extern "C" fn set_ctx_params(c: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours and a terminated array.
        unsafe { ctx(c) }.map_or(0, |c| status(c.set_params(&unsafe { Params::new(params) })))
    })
}

static SETTABLE: Table<Param, 2> = Table([
    abi::describe(c"ikme", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn settable_ctx_params(_c: *mut c_void, _provctx: *mut c_void) -> *const Param {
    SETTABLE.as_ptr()
}

const fn functions<const S: usize>() -> [Dispatch; 10] {
    [
        entry!(abi::KEM_NEWCTX, newctx::<S>),
        entry!(abi::KEM_ENCAPSULATE_INIT, encapsulate_init),
        entry!(abi::KEM_ENCAPSULATE, encapsulate),
        entry!(abi::KEM_DECAPSULATE_INIT, decapsulate_init),
        entry!(abi::KEM_DECAPSULATE, decapsulate),
        entry!(abi::KEM_FREECTX, freectx),
        entry!(abi::KEM_DUPCTX, dupctx),
        entry!(abi::KEM_SET_CTX_PARAMS, set_ctx_params),
        entry!(abi::KEM_SETTABLE_CTX_PARAMS, settable_ctx_params),
        abi::DISPATCH_END,
    ]
}

pub static KEM: [Table<Dispatch, 10>; 3] = [
    Table(functions::<0>()),
    Table(functions::<1>()),
    Table(functions::<2>()),
];
