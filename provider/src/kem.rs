//! The KEM operation (`EVP_PKEY_encapsulate` / `EVP_PKEY_decapsulate`, and so `openssl pkeyutl
//! -encap/-decap` and TLS key exchange) for every KEM key family this provider serves:
//! CTRU-Prime, ML-KEM and the hybrid X25519MLKEM768. Each family's key says how it
//! encapsulates (`KemKey`); the context here handles OpenSSL's calling conventions. As in
//! OpenSSL's ML-KEM, the context parameter `ikme` (32 bytes) makes one encapsulation
//! reproducible (the coins; for tests and KATs) where the family takes coins.

use crate::abi::{self, Dispatch, Param, Table};
use crate::entry;
use crate::guard::guard;
use crate::kem_key::KemKey;
use crate::params::{status, Params};
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
struct KemCtx<K> {
    index: usize,
    key: *const K,
    op: Op,
    /// One-shot coins for the next encapsulation.
    ikme: Option<Zeroizing<[u8; 32]>>,
}

impl<K> Clone for KemCtx<K> {
    fn clone(&self) -> Self {
        KemCtx {
            index: self.index,
            key: self.key,
            op: self.op,
            ikme: self.ikme.clone(),
        }
    }
}

impl<K: KemKey> KemCtx<K> {
    fn key(&self) -> Option<&K> {
        // SAFETY: a key OpenSSL handed to init and keeps alive while this context uses it.
        unsafe { self.key.as_ref() }
    }

    fn set_params(&mut self, p: &Params) -> bool {
        match p.octets(c"ikme") {
            Ok(Some(e)) if self.op == Op::Encaps && K::TAKES_IKME => {
                match <[u8; 32]>::try_from(e) {
                    Ok(e) => {
                        self.ikme = Some(Zeroizing::new(e));
                        true
                    }
                    Err(_) => {
                        self.ikme = None;
                        false
                    }
                }
            }
            // Decapsulation is deterministic: coins have no meaning there (nor for a family
            // that takes none: as OpenSSL's hybrids, it ignores them).
            Ok(_) => true,
            Err(_) => false,
        }
    }
}

/// # Safety
/// `c` must be NULL or a context made by this module.
unsafe fn ctx<'a, K>(c: *mut c_void) -> Option<&'a mut KemCtx<K>> {
    // SAFETY: the caller's promise; OpenSSL does not share a context between threads.
    unsafe { (c as *mut KemCtx<K>).as_mut() }
}

unsafe extern "C" fn newctx<K: KemKey, const S: usize>(_provctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let c = KemCtx::<K> {
            index: S,
            key: ptr::null(),
            op: Op::None,
            ikme: None,
        };
        Box::into_raw(Box::new(c)).cast()
    })
}

unsafe extern "C" fn freectx<K: KemKey>(c: *mut c_void) {
    guard((), || {
        if !c.is_null() {
            // SAFETY: made by Box::into_raw here; OpenSSL frees each context once.
            drop(unsafe { Box::from_raw(c as *mut KemCtx<K>) });
        }
    })
}

unsafe extern "C" fn dupctx<K: KemKey>(c: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: a context of ours.
        match unsafe { ctx::<K>(c) } {
            Some(c) => Box::into_raw(Box::new(c.clone())).cast(),
            None => ptr::null_mut(),
        }
    })
}

fn init<K: KemKey>(c: *mut c_void, k: *mut c_void, params: *const Param, op: Op) -> c_int {
    // SAFETY: a context of ours.
    let Some(c) = (unsafe { ctx::<K>(c) }) else {
        return 0;
    };
    // SAFETY: OpenSSL passes a key of the matching key management (same names).
    let Some(key) = (unsafe { (k as *const K).as_ref() }) else {
        return 0;
    };
    let usable = match op {
        Op::Encaps => key.can_encaps(),
        _ => key.can_decaps(),
    };
    if key.index() != c.index || !usable {
        return 0;
    }
    c.key = key;
    c.op = op;
    c.ikme = None;
    // SAFETY: a terminated parameter array or NULL.
    status(c.set_params(&unsafe { Params::new(params) }))
}

unsafe extern "C" fn encapsulate_init<K: KemKey>(
    c: *mut c_void,
    k: *mut c_void,
    params: *const Param,
) -> c_int {
    guard(0, || init::<K>(c, k, params, Op::Encaps))
}

unsafe extern "C" fn decapsulate_init<K: KemKey>(
    c: *mut c_void,
    k: *mut c_void,
    params: *const Param,
) -> c_int {
    guard(0, || init::<K>(c, k, params, Op::Decaps))
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

unsafe extern "C" fn encapsulate<K: KemKey>(
    c: *mut c_void,
    out: *mut u8,
    outlen: *mut usize,
    secret: *mut u8,
    secretlen: *mut usize,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx::<K>(c) }) else {
            return 0;
        };
        if c.op != Op::Encaps {
            return 0;
        }
        let Some(key) = c.key().filter(|k| k.can_encaps()).cloned() else {
            return 0;
        };
        let (ct_len, ss_len) = (key.ciphertext_len(), key.shared_secret_len());
        if out.is_null() {
            if outlen.is_null() && secretlen.is_null() {
                return 0;
            }
            // SAFETY: non-NULL out-pointers from OpenSSL.
            unsafe {
                if !outlen.is_null() {
                    *outlen = ct_len;
                }
                if !secretlen.is_null() {
                    *secretlen = ss_len;
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
        if unsafe { *outlen < ct_len || *secretlen < ss_len } {
            return 0;
        }
        match key.encaps(ikme) {
            // SAFETY: out/secret hold *outlen/*secretlen bytes (checked large enough above).
            Ok((ct, ss)) => status(unsafe { put(out, outlen, &ct) && put(secret, secretlen, &ss) }),
            Err(_) => 0,
        }
    })
}

unsafe extern "C" fn decapsulate<K: KemKey>(
    c: *mut c_void,
    out: *mut u8,
    outlen: *mut usize,
    input: *const u8,
    inlen: usize,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx::<K>(c) }) else {
            return 0;
        };
        if c.op != Op::Decaps {
            return 0;
        }
        let Some(key) = c.key().filter(|k| k.can_decaps()) else {
            return 0;
        };
        let n = key.shared_secret_len();
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
        if inlen != key.ciphertext_len() {
            return 0;
        }
        // SAFETY: input points to inlen readable bytes (OpenSSL's contract).
        let ct = unsafe { std::slice::from_raw_parts(input, inlen) };
        match key.decaps(ct) {
            // SAFETY: out holds *outlen bytes.
            Ok(ss) => status(unsafe { put(out, outlen, &ss) }),
            Err(_) => 0,
        }
    })
}

unsafe extern "C" fn set_ctx_params<K: KemKey>(c: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours and a terminated array.
        unsafe { ctx::<K>(c) }.map_or(0, |c| status(c.set_params(&unsafe { Params::new(params) })))
    })
}

static SETTABLE: Table<Param, 2> = Table([
    abi::describe(c"ikme", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

static SETTABLE_NONE: Table<Param, 1> = Table([abi::PARAM_END]);

unsafe extern "C" fn settable_ctx_params<K: KemKey>(
    _c: *mut c_void,
    _provctx: *mut c_void,
) -> *const Param {
    if K::TAKES_IKME {
        SETTABLE.as_ptr()
    } else {
        SETTABLE_NONE.as_ptr()
    }
}

/// The KEM dispatch table for keys of type `K`, parameter set `S` of its key management.
pub const fn functions<K: KemKey, const S: usize>() -> [Dispatch; 10] {
    [
        entry!(abi::KEM_NEWCTX, newctx::<K, S>),
        entry!(abi::KEM_ENCAPSULATE_INIT, encapsulate_init::<K>),
        entry!(abi::KEM_ENCAPSULATE, encapsulate::<K>),
        entry!(abi::KEM_DECAPSULATE_INIT, decapsulate_init::<K>),
        entry!(abi::KEM_DECAPSULATE, decapsulate::<K>),
        entry!(abi::KEM_FREECTX, freectx::<K>),
        entry!(abi::KEM_DUPCTX, dupctx::<K>),
        entry!(abi::KEM_SET_CTX_PARAMS, set_ctx_params::<K>),
        entry!(abi::KEM_SETTABLE_CTX_PARAMS, settable_ctx_params::<K>),
        abi::DISPATCH_END,
    ]
}

/// CTRU-Prime-653/761/1277.
pub static CTRU: [Table<Dispatch, 10>; 3] = [
    Table(functions::<crate::ctru_key::Key, 0>()),
    Table(functions::<crate::ctru_key::Key, 1>()),
    Table(functions::<crate::ctru_key::Key, 2>()),
];

/// ML-KEM-512/768/1024.
pub static ML_KEM: [Table<Dispatch, 10>; 3] = [
    Table(functions::<crate::mlkem_key::Key, 0>()),
    Table(functions::<crate::mlkem_key::Key, 1>()),
    Table(functions::<crate::mlkem_key::Key, 2>()),
];

/// X25519MLKEM768.
pub static X25519_ML_KEM_768: Table<Dispatch, 10> = Table(functions::<crate::hybrid_key::Key, 0>());
